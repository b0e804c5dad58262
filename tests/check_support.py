"""A small project's git repository, built at test time for ``archdiff check``: release ``v1.0.0``
tagged, and a working tree that breaks four promises (a public function removed, a parameter made
keyword-only, a metric an alert reads renamed, a header struct grown) plus one name that is public
by archdiff's rule but not exported by ``__all__``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

PYPROJECT = """[project]
name = "servekit"
version = "{version}"
{policy}"""

CORE_V1 = '''"""The engine."""

__all__ = ["Engine", "build", "helper"]


class Engine:
    def run(self, prompt, timeout=10):
        return prompt


def build(kind):
    return Engine()


def helper(x):
    return x
'''
CORE_V2 = CORE_V1.replace("def run(self, prompt, timeout=10):", "def run(self, prompt, *, timeout=10):").replace(
    '__all__ = ["Engine", "build", "helper"]', '__all__ = ["Engine", "build"]').replace(
    "\n\ndef helper(x):\n    return x\n", "\n")

TOOLS_V1 = '''"""Helpers without __all__: public by name, not exported by the package."""


def tidy(text, width):
    return text[:width]
'''
TOOLS_V2 = TOOLS_V1.replace("def tidy(text, width):\n    return text[:width]", "def tidy(text):\n    return text")

INIT = '''from servekit.core import Engine, build, helper

__all__ = ["Engine", "build", "helper"]
'''
INIT_V2 = INIT.replace(", helper", "").replace(', "helper"', "")

METRICS_V1 = '''import prometheus_client

REQUESTS = prometheus_client.Counter("servekit_requests_total", "Requests served.")
'''
METRICS_V2 = METRICS_V1.replace("servekit_requests_total", "servekit_requests_served_total")

ALERTS = """groups:
  - name: servekit.alerts
    rules:
      - alert: ServekitIdle
        expr: sum(rate(servekit_requests_total[5m])) == 0
        for: 10m
"""

HEADER_V1 = """#pragma once
#include <stdint.h>

struct KVHeader {
    int32_t length;
    int32_t flags;
};
"""
HEADER_V2 = HEADER_V1.replace("    int32_t flags;\n", "    int32_t flags;\n    int64_t sequence;\n")


# the service's wire format, in a protobuf package that is no Python package (``--proto``)
PROTO_V1 = """syntax = "proto3";

package serve.wire;

message Request {
  string prompt = 1;
  int32 max_tokens = 2;
}
"""
PROTO_V2 = PROTO_V1.replace("int32 max_tokens = 2;", "int32 max_tokens = 3;")


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


def write_tree(root: Path, *, v2: bool, version: str, policy: str = "", proto: bool = False) -> None:
    files = {
        "pyproject.toml": PYPROJECT.format(version=version, policy=policy),
        "servekit/__init__.py": INIT_V2 if v2 else INIT,
        "servekit/core.py": CORE_V2 if v2 else CORE_V1,
        "servekit/tools.py": TOOLS_V2 if v2 else TOOLS_V1,
        "servekit/metrics.py": METRICS_V2 if v2 else METRICS_V1,
        "deploy/alerts.rules.yaml": ALERTS,
        "include/servekit/kv.h": HEADER_V2 if v2 else HEADER_V1,
    }
    if proto:
        files["proto/serve.proto"] = PROTO_V2 if v2 else PROTO_V1
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def make_repo(root: Path, *, tree_version: str = "1.0.1", policy: str = "", proto: bool = False) -> Path:
    """Tags v0.9.0 and v1.0.0 (tagged before 0.9.0, so that only version order picks 1.0.0), a
    v1.1.0rc1 pre-release, v1.5.0 on a branch HEAD does not contain, and the working tree of the
    next release, uncommitted. ``proto``: a .proto too, whose field the next release renumbers."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    write_tree(root, v2=False, version="1.0.0", proto=proto)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "1.0.0")
    git(root, "tag", "v1.0.0")
    (root / "servekit" / "core.py").write_text(CORE_V1.replace("return prompt", "return prompt  # 0.9"))
    git(root, "commit", "-q", "-am", "an older line, tagged after")
    git(root, "tag", "v0.9.0")
    git(root, "tag", "v1.1.0rc1")
    git(root, "checkout", "-q", "-b", "side")
    (root / "servekit" / "tools.py").write_text(TOOLS_V1 + "\n\ndef side():\n    pass\n")
    git(root, "commit", "-q", "-am", "a release made on another branch")
    git(root, "tag", "v1.5.0")
    git(root, "checkout", "-q", "main")
    (root / "servekit" / "core.py").write_text(CORE_V1)
    git(root, "commit", "-q", "-am", "back to 1.0.0's code")
    write_tree(root, v2=True, version=tree_version, policy=policy, proto=proto)
    return root
