"""The commit a local checkout is at, read from its ``.git`` files without running git.

A directory the user points at is untrusted, and so is the ``.git`` inside it (or above it: git
searches parent directories). Running any git command there lets that repository's configuration
run commands: a partial-clone ("promisor") remote whose ``uploadpack`` is a shell command is
contacted as soon as git looks up a missing object, and ``core.fsmonitor``, hooks, ``diff`` and
``filter`` drivers and ``includeIf`` are the same family. So archdiff never runs git in an analysed
tree: it reads ``HEAD``, the loose refs and ``packed-refs`` as plain files (the formats are
documented in gitrepository-layout(5)) and records the commit id they name. It does not check that
the object exists; a ``HEAD`` that names nothing readable records no commit.
"""

from __future__ import annotations

import re
from pathlib import Path

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")  # SHA-1, or SHA-256 repositories
_MAX_REF_BYTES = 4096
_MAX_PACKED_REFS_BYTES = 64 * 1024**2
_MAX_SYMREF_HOPS = 8


def work_tree_commit(path: Path) -> str:
    """The commit checked out in the git work tree holding ``path``; "" when there is none."""
    git_dir = _find_git_dir(path)
    if git_dir is None:
        return ""
    common = _common_dir(git_dir)
    ref = "HEAD"
    for _ in range(_MAX_SYMREF_HOPS):
        # HEAD and per-worktree refs live in the worktree's own git dir, the rest in the common one
        value = _read_small(git_dir / ref) if ref == "HEAD" else None
        if value is None:
            value = _read_small(common / ref) if _safe_ref_name(ref) else None
        if value is None:
            value = _packed_ref(common, ref)
        if value is None:
            return ""
        if value.startswith("ref:"):
            ref = value[4:].strip()
            continue
        return value if _SHA.match(value) else ""
    return ""  # a symbolic-ref loop


def _find_git_dir(path: Path) -> Path | None:
    here = path.resolve()
    for candidate in (here, *here.parents):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            # a linked worktree or a submodule: ".git" is a file naming the real git dir
            text = _read_small(dot_git)
            if text and text.startswith("gitdir:"):
                target = Path(text[7:].strip())
                target = target if target.is_absolute() else candidate / target
                return target if target.is_dir() else None
            return None
    return None


def _common_dir(git_dir: Path) -> Path:
    text = _read_small(git_dir / "commondir")
    if not text:
        return git_dir
    common = Path(text)
    common = common if common.is_absolute() else git_dir / common
    return common if common.is_dir() else git_dir


def _safe_ref_name(ref: str) -> bool:
    """Only names under refs/ (or HEAD): a symbolic ref must not read arbitrary files."""
    parts = ref.split("/")
    return ref == "HEAD" or (parts[0] == "refs" and all(p and p not in (".", "..") for p in parts))


def _packed_ref(common: Path, ref: str) -> str | None:
    packed = common / "packed-refs"
    try:
        if not packed.is_file() or packed.stat().st_size > _MAX_PACKED_REFS_BYTES:
            return None
        with packed.open("r", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                sha, _, name = line.strip().partition(" ")
                if name == ref and _SHA.match(sha):
                    return sha
    except OSError:
        return None
    return None


def _read_small(path: Path) -> str | None:
    """The first line of a small regular file; None for anything else (FIFOs, devices, big files)."""
    try:
        if not path.is_file() or path.stat().st_size > _MAX_REF_BYTES:
            return None
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            return fh.readline(_MAX_REF_BYTES).strip()
    except OSError:
        return None
