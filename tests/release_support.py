"""A git repository with several release tags, built at test time from the handwritten fixtures,
with the shapes release tracking must show: a struct whose layout changes, a metric that is
removed, cross-language bindings that appear, a pre-release tag and a tag that is no version."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from extractor.model import Contribution, Language, Step
from tests.conftest import FIXTURES
from tests.helpers import git

CUSTOM_OPS = '''"""Python side of the kernels: calls into the registered torch ops."""
import torch


def rms_norm(out, x, weight, eps: float) -> None:
    torch.ops._C.rms_norm(out, x, weight, eps)


def swap_blocks(src, dst, mapping) -> None:
    torch.ops._C_cache_ops.swap_blocks(src, dst, mapping)
'''

HISTOGRAM = '''
        self.histogram_e2e = prometheus_client.Histogram(
            name="mini:e2e_request_latency_seconds", documentation="End to end latency.",
            buckets=[0.1, 1.0, 10.0])
'''


def _commit(repo: Path, message: str, *tags: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    for tag in tags:
        git(repo, "tag", "-a", tag, "-m", tag) if "rc" in tag else git(repo, "tag", tag)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def build_release_repo(path: Path) -> Path:
    """Tags: v0.1.0, v0.2.0 (+ bindings, + a histogram), v0.3.0rc1 (a pre-release), v0.3.0 (a
    struct member widened, a metric removed) and ``latest`` (no version)."""
    shutil.copytree(FIXTURES / "mini_vllm", path)
    shutil.copy(FIXTURES / "structs" / "src" / "ring.h", path / "csrc" / "ring.h")
    git(path, "init", "-q", "-b", "main")
    _commit(path, "first release", "v0.1.0")

    shutil.copytree(FIXTURES / "torch_ops_like" / "csrc", path / "csrc" / "ops")
    (path / "mini_vllm" / "_custom_ops.py").write_text(CUSTOM_OPS)
    loggers = path / "mini_vllm" / "metrics" / "loggers.py"
    _edit(loggers, '            name="mini:generation_tokens", documentation="Generated tokens.")\n',
          '            name="mini:generation_tokens", documentation="Generated tokens.")' + HISTOGRAM)
    _commit(path, "kernels bound from Python, a latency histogram", "v0.2.0")

    (path / "mini_vllm" / "preview.py").write_text("def preview() -> int:\n    return 1\n")
    _commit(path, "preview", "v0.3.0rc1")

    _edit(path / "csrc" / "ring.h", "    uint16_t len;       /* 6 bytes tail padding */",
          "    uint32_t len;       /* 4 bytes tail padding */")
    _edit(loggers, '''        self.counter_tokens = prometheus_client.Counter(
            name="mini:generation_tokens", documentation="Generated tokens.")
''', "")
    _edit(loggers, "        self.counter_tokens.inc(batch_size)\n", "")
    _commit(path, "wider slots; the token counter goes", "v0.3.0", "latest")
    return path


def add_release_removing_a_public_class(repo: Path, tag: str = "v0.4.0") -> None:
    """The next release: ``KVCacheBlock`` leaves the public API (a breaking change)."""
    pool = repo / "mini_vllm" / "core" / "block_pool.py"
    _edit(pool, "class KVCacheBlock:", "class _KVCacheBlock:")
    text = pool.read_text().replace("[KVCacheBlock(i)", "[_KVCacheBlock(i)").replace("KVCacheBlock]", "_KVCacheBlock]")
    pool.write_text(text)
    _commit(repo, "KVCacheBlock is private now", tag)


def crash_on_marker(parsed) -> dict | None:
    """A scanner with a native crash on one input (what a hostile file can do to a C parser)."""
    if b"CRASH_HERE" in parsed.data:
        os._exit(3)
    return {"size": len(parsed.data)}


def _nothing(ctx) -> Contribution:
    return Contribution()


CRASHY = Step(name="crashy", extract=_nothing, scanners={Language.PYTHON: crash_on_marker})
