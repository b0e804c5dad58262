"""Small helpers shared by tests (not fixtures: plain functions)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(cwd: Path, *args: str, env: dict | None = None) -> str:
    full_env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@example.invalid", "HOME": str(cwd), "PATH": "/usr/bin:/bin:/usr/local/bin",
                "GIT_CONFIG_NOSYSTEM": "1", **(env or {})}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=full_env).stdout.strip()


def make_git_repo(path: Path, files: dict[str, str]) -> Path:
    """A git repository with one commit of ``files``, tagged v1 on branch main."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for rel, text in files.items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first")
    git(path, "tag", "v1")
    return path


def nodes_by_id(bundle: dict) -> dict[str, dict]:
    return {n["id"]: n for n in bundle["graph"]["nodes"]}


def edge_set(bundle: dict, kind: str) -> set[tuple[str, str]]:
    return {(e["source"], e["target"]) for e in bundle["graph"]["edges"] if e["kind"] == kind}
