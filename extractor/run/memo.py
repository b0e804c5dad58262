"""The bundle memo: a finished run's evidence, served again when every input is unchanged.

Its key covers every input: the system's name and version, each file's path, content and language,
the diagnostics met before any file is parsed, the manifests, the binaries and user data files,
the options, archdiff's own code, and, for struct probes, the toolchain (:func:`toolchain_stamp`).

The fact store holds the memo (compressed, beside the per-file facts; a Ray run's tasks put theirs
in the driver's store) and says whether one is served at all: a workplace whose store keeps no memo
is never served one. The last :data:`KEEP` bundles served or made here are also kept whole as
plain files under ``CACHE/memo/``, so that a warm run links or copies ``evidence.json`` from there
instead of inflating the store's copy (0.1 s of zlib) and writing it out again. Those files only
ever save time: one that cannot be read is not served, one that cannot be written is not kept.

A memo file and an ``evidence.json`` written from it, or it from one, are one file where the file
system allows (a hard link: vLLM's 52 MB written once, not twice; the second write cost a cold run
0.2-0.4 CPU s of copying into the page cache). Someone may then change the memo by changing their
``evidence.json`` in place, so a linked memo file has a stamp beside it (``KEY.stamp``: the
file's inode, size and modification time, written before the link exists) and is served only
while its file still has them; the stamp's own time says when it was last served, so serving it
never touches the shared file's times. A memo file without a stamp was written by archdiff alone.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from extractor.context import ExtractOptions, SourceTree
from extractor.errors import StorageError
from extractor.model import Diagnostic, Step
from extractor.native.manifests import manifests_digest
from extractor.run.cache import code_fingerprint, package_digest
from extractor.run.extraction import Extraction, MemoFile, parse_bundle, summarize_bundle
from extractor.run.workplace import FactStore
from extractor.support.storage import link_atomic, write_atomic

_WRITERS: list[threading.Thread] = []  # memo files still being written
KEEP = 4  # whole bundles kept as files (vLLM's: 52 MB each), the least recently served removed first
# Where headers live on this machine whatever the compiler: a -dev package installed or removed
# changes these folders or their subfolders' times.
SYSTEM_INCLUDE_DIRS = ("/usr/include", "/usr/local/include")
CUDA_BIN = "/usr/local/cuda/bin"
COMPILERS = frozenset({"gcc", "g++", "nvcc", "protoc"})
CROSS_COMPILER_SUFFIXES = ("-gcc", "-g++")  # aarch64-linux-gnu-g++, ... (extractor/structs/targets.yaml)


def memo_key(name: str, version: str, sources: Sequence[SourceTree], files: Iterable[tuple[str, str]],
             diagnostics: Iterable[Diagnostic], options: ExtractOptions, code: str) -> str:
    """The key of the bundle made from these inputs. ``files``: each file's evidence path and its
    ``sha256:language``, in path order; ``code``: the scanners' and steps' fingerprint."""
    h = hashlib.sha256()
    h.update(json.dumps([name, version, [s.record() for s in sources], code], sort_keys=True).encode())
    for path, content in files:
        h.update(f"{path}\0{content}\n".encode())
    for d in sorted(diagnostics):
        h.update(d.render().encode())
    h.update(manifests_digest((s.label, s.root) for s in sources).encode())
    for binary in options.binaries:
        try:
            h.update(hashlib.sha256(Path(binary).read_bytes()).digest())
        except OSError:
            h.update(f"unreadable:{binary}".encode())
    # A user's taxonomy or detector file is an input by its content, not its name.
    for key, value in sorted(options.extra.items()):
        if isinstance(value, str) and Path(value).is_file():
            h.update(f"{key}:".encode() + hashlib.sha256(Path(value).read_bytes()).digest())
    h.update(json.dumps([options.probe_structs, dict(options.extra), options.build.fingerprint],
                        sort_keys=True, default=str).encode())
    if options.probe_structs:
        h.update(toolchain_stamp().encode())
    return "bundle:" + h.hexdigest()


def code_identity(steps: Sequence[Step] | None) -> str:
    """What the key names of the code: archdiff's own source for the built-in kinds (``None``: their
    versions are in that source), the given steps' fingerprint otherwise."""
    return package_digest() if steps is None else code_fingerprint(steps)


def toolchain_stamp() -> str:
    """Which compilers and system headers struct probes would meet here, cheaply: each compiler on
    the search path (g++, gcc, nvcc, protoc and every ``*-g++``/``*-gcc`` cross compiler, as
    ``which`` finds them, and CUDA's own nvcc) by the size, time and inode of the file it resolves
    to (installing, upgrading or removing one changes them), and the times of the system include
    folders and their subfolders (a -dev package added or removed). A probe's own cache key names
    each compiler's ``--version`` (extractor.structs.compilers.toolchain_fingerprint, a process per
    compiler); the memo above it only needs to know that nothing changed, and a change means the
    steps run again from the cached facts and probe results. The search path's spelling is not part
    of it: two environments that find the same compilers get the same key."""
    found: dict[str, str] = {}
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        try:
            entries = list(os.scandir(directory or "."))
        except OSError:
            continue
        for entry in entries:
            if entry.name in COMPILERS or entry.name.endswith(CROSS_COMPILER_SUFFIXES):
                found.setdefault(entry.name, entry.path)  # the first on the path, as which finds it
    found[f"{CUDA_BIN}/nvcc"] = f"{CUDA_BIN}/nvcc"
    lines = [f"{name}:{_identity(path)}" for name, path in sorted(found.items())]
    for directory in SYSTEM_INCLUDE_DIRS:
        try:
            # folders only: a file added, replaced (package managers rename over) or removed
            # changes its folder's time, so the folder and its subfolders' times say it all
            folders = sorted(e.path for e in os.scandir(directory) if e.is_dir(follow_symlinks=False))
        except OSError:
            lines.append(f"{directory}: none")
            continue
        lines.extend(f"{folder}:{_mtime(folder)}" for folder in (directory, *folders))
    return "\n".join(lines)


def _identity(path: str) -> str:
    """The file ``path`` resolves to, by path, size, time and inode ("none" if there is none)."""
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError:
        return "none"
    return f"{real}:{info.st_size}:{info.st_mtime_ns}:{info.st_ino}"


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def serve(cache_dir: Path, key: str, store: FactStore, sources: Sequence[SourceTree], files: int
          ) -> Extraction | None:
    """The extraction the memo holds under ``key`` (made from ``files`` files), or None: its counts
    from the store, its bytes from the memo file when one is kept, else from the store (and kept as
    a file from then on)."""
    summary = store.get_json(key + ":summary")
    evidence: bytes | MemoFile | None = _load(cache_dir, key) if summary is not None else None
    if evidence is None:
        evidence = store.get_bytes(key)
        if evidence is None:
            return None
        _keep(cache_dir, key, evidence)
        if summary is None:  # a memo stored without its summary: counted once from the bundle
            summary = summarize_bundle(parse_bundle(evidence))
    if "groups" not in summary:  # stored by an older archdiff, or counted just now
        summary = {**summary, "groups": groups(summary["diagnostics"], sources)}
    return Extraction(evidence, summary, {}, {"hits": files, "misses": 0, "memo": 1})


def remember(cache_dir: Path, key: str, store: FactStore, data: bytes, compressed: bytes,
             summary: dict[str, Any]) -> Callable[[Path, os.stat_result], None]:
    """Keep a bundle just made, and its summary (with ``groups``), under ``key``: in the store now;
    as a memo file once the caller has written ``evidence.json`` from it (the function returned,
    :meth:`Extraction.write`), which the memo file then shares by a link. A bundle nobody writes
    out is kept on a thread of its own (52 MB: 0.05-0.4 s on this machine's disk, which the
    driver need not wait for) when the next one is made, at :func:`settle`, or when the process
    ends."""
    store.put_compressed(key, compressed)
    store.put_json(key + ":summary", summary)
    keep_unwritten()
    waiting = _Waiting(cache_dir, key, data)
    _WAITING.append(waiting)
    return waiting.written


class _Waiting:
    """A bundle just made, waiting for its ``evidence.json`` to be written so that the memo file
    can be that file."""

    def __init__(self, cache_dir: Path, key: str, data: bytes) -> None:
        self.cache_dir, self.key, self.data = cache_dir, key, data

    def written(self, target: Path, info: os.stat_result) -> None:
        """``evidence.json`` was written from this bundle to ``target`` as the file ``info``
        describes: the memo file is linked to it, or written from the bytes on a thread where the
        file system gives no link."""
        if self in _WAITING:
            _WAITING.remove(self)
            if not _link_kept(self.cache_dir, self.key, target, info):
                self.on_thread()

    def on_thread(self) -> None:
        writer = threading.Thread(target=_keep, args=(self.cache_dir, self.key, self.data), name="archdiff-memo-file")
        writer.start()
        _WRITERS.append(writer)


_WAITING: list[_Waiting] = []  # bundles made here whose evidence.json has not been written yet


def keep_unwritten() -> None:
    """The bundles made here that no one wrote out as ``evidence.json`` (yet): kept as memo files
    on threads of their own now."""
    while _WAITING:
        _WAITING.pop().on_thread()


def settle() -> None:
    """Keep the bundles still waiting and wait for the memo files being written (a caller that
    looks at ``CACHE/memo/`` next)."""
    keep_unwritten()
    while _WRITERS:
        _WRITERS.pop().join()


@atexit.register
def _at_exit() -> None:
    # threads may no longer start once the interpreter is shutting down: the last ones kept here
    while _WAITING:
        waiting = _WAITING.pop()
        _keep(waiting.cache_dir, waiting.key, waiting.data)


def groups(diagnostics: list[dict[str, Any]], sources: Sequence[SourceTree], given: Sequence[str] = ()
           ) -> list[dict[str, Any]]:
    """The diagnostics grouped for the reader (extractor.run.diagnosis), with the versions the
    sources pin for the fixes (from their pyproject.toml: a manifest, part of the memo's key) and
    the run's ``--headers-from`` specs (``given``: part of the options in the key)."""
    from extractor.run.diagnosis import group_diagnostics  # the structs' reasons: a miss's import
    from extractor.structs.reasons import pinned_versions

    pins = pinned_versions(s.root for s in sources)
    return [dataclasses.asdict(g) for g in group_diagnostics(diagnostics, pins, given)]


def _path(cache_dir: Path, key: str) -> Path:
    return cache_dir / "memo" / f"{key.removeprefix('bundle:')}.json"


def _stamp(path: Path) -> Path:
    return path.with_suffix(".stamp")


def _stamp_text(info: os.stat_result) -> str:
    return f"{info.st_ino} {info.st_size} {info.st_mtime_ns}\n"


def _load(cache_dir: Path, key: str) -> MemoFile | None:
    """The bundle kept as a file under ``key``, held open, and marked recently served; or None,
    also when the file is linked and no longer the one its stamp describes (someone changed the
    ``evidence.json`` it is)."""
    path = _path(cache_dir, key)
    try:
        handle = open(path, "rb")  # noqa: SIM115  held by the MemoFile
    except OSError:
        return None
    try:
        stamped: str | None = _stamp(path).read_text(encoding="ascii")
    except FileNotFoundError:
        stamped = None
    except (OSError, ValueError):
        stamped = ""
    if stamped is not None and stamped != _stamp_text(os.fstat(handle.fileno())):
        handle.close()
        return None
    with contextlib.suppress(OSError):
        os.utime(_stamp(path) if stamped else path)  # never the shared file's own times
    return MemoFile(handle, functools.partial(_link_served, path, stamped is not None))


def _link_served(path: Path, stamped: bool, handle: BinaryIO, target: Path) -> bool:
    """``target`` made the served memo file ``path`` (open as ``handle``) by a link, its stamp
    written first if it had none; False where the file system gives no link."""
    return _stamped_link(path, os.fstat(handle.fileno()), target, path, stamp=not stamped)


def _link_kept(cache_dir: Path, key: str, written: Path, info: os.stat_result) -> bool:
    """The memo file under ``key`` made ``written`` (the file ``info`` describes) by a link, its
    stamp written before; False where the file system gives no link."""
    path = _path(cache_dir, key)
    if not _stamped_link(path, info, path, written, stamp=True):
        return False
    _evict(path.parent)
    return True


def _stamped_link(memo_file: Path, info: os.stat_result, target: Path, source: Path, *, stamp: bool) -> bool:
    """``target`` linked to ``source`` (the file ``info`` describes), the memo file's stamp written
    first when ``stamp``: never a linked memo file without one. False where there is no link."""
    try:
        if stamp:
            write_atomic(_stamp(memo_file), _stamp_text(info))
        link_atomic(target, source, info.st_ino)
    except (OSError, StorageError):
        return False
    return True


def _keep(cache_dir: Path, key: str, data: bytes) -> None:
    """Keep ``data`` as a file under ``key``, then remove all but the :data:`KEEP` most recently served.

    Not when the cache itself is gone: a program that ran an extraction in a temporary cache and
    removed it before this write (on a thread, or at exit) would otherwise get it back, holding
    only this file."""
    if not cache_dir.is_dir():
        return
    path = _path(cache_dir, key)
    try:
        write_atomic(path, data)
        # a stamp left by a linked file this one replaces (removed after: never an unstamped link)
        _stamp(path).unlink(missing_ok=True)
    except (OSError, StorageError):
        return
    _evict(path.parent)


def _evict(memo_dir: Path) -> None:
    """All but the :data:`KEEP` most recently served memo files removed, with their stamps."""
    try:
        kept = sorted(memo_dir.glob("*.json"), key=_served, reverse=True)
    except OSError:
        return
    for old in kept[KEEP:]:
        for path in (old, _stamp(old)):
            with contextlib.suppress(OSError):
                path.unlink()


def _served(path: Path) -> int:
    """When the memo file ``path`` was last made or served: its stamp's time if it is linked."""
    return _mtime(str(_stamp(path))) or _mtime(str(path))
