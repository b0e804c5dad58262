"""Each file's content hash remembered by its status, as git's index remembers it: a warm run
decides whether every input is unchanged without reading the tree (vLLM: 2,600 files, 25 MB).

A file's stamp is its size, modification and change times (nanoseconds) and inode number, taken
by the inventory's ``lstat``. Writing a file changes its modification and change times, and the
change time cannot be set back (``touch -d`` sets it to now), so an unchanged stamp means unchanged
bytes, with one exception git calls "racy": a write in the same clock tick as the stamp that
recorded it (file times advance in ticks of a few milliseconds). A stamp is therefore remembered
only for a file whose times are :data:`SETTLED_NS` older than the moment its bytes were read; a
file written since then has later times, so a different stamp, and is read again.

The stamps of a tree live in one small JSON file per tree root under ``CACHE/stamps/``. They only
ever save reading: a missing, unreadable or corrupt file means every file is read, and a cache
that cannot be written is simply not updated.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path

from extractor.errors import StorageError
from extractor.support.storage import write_atomic

SETTLED_NS = 2_000_000_000  # a file's times this much older than its read: no write can share its tick
# File times come from the kernel's coarse clock, which may lag the clock a process reads by a tick.
COARSE_TICK_NS = 20_000_000
Stamp = tuple[int, ...]  # st_size, st_mtime_ns, st_ctime_ns, st_ino; () when none was taken


def stamp_of(info: os.stat_result) -> Stamp:
    """The part of a file's status that any write to it changes."""
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


class TreeStamps:
    """The content digests of one tree's files by their stamps: :meth:`digest` answers from what an
    earlier run recorded, :meth:`record` notes what this run read, :meth:`save` keeps it."""

    def __init__(self, path: Path | None, known: dict[str, list]) -> None:
        self._path = path
        self._known = known
        self._fresh: dict[str, list] = {}
        self._read_at = time.time_ns()  # before the stamps this run records are taken

    @classmethod
    def load(cls, cache_dir: Path | None, root: Path) -> TreeStamps:
        """The stamps recorded for the tree at ``root`` (by its real path) in ``cache_dir``."""
        if cache_dir is None:
            return cls(None, {})
        name = hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:32]
        path = cache_dir / "stamps" / f"{name}.json"
        try:
            known = json.loads(path.read_bytes())
        except (OSError, ValueError):
            known = {}
        return cls(path, known if isinstance(known, dict) else {})

    def digest(self, rel: str, stamp: Stamp) -> str | None:
        """The sha256 (hex) of ``rel``'s bytes if its stamp is the one recorded with them, else None."""
        seen = self._known.get(rel)
        if not stamp or not isinstance(seen, list) or len(seen) != 5 or tuple(seen[:4]) != stamp:
            return None
        return seen[4] if isinstance(seen[4], str) else None

    def record(self, rel: str, stamp: Stamp, digest: str) -> None:
        """``rel``, whose stamp the inventory took before its bytes (of sha256 ``digest``) were read.
        Not remembered while its times are too recent to tell a later write apart."""
        if stamp and self._read_at - max(stamp[1], stamp[2]) > SETTLED_NS:
            self._fresh[rel] = [*stamp, digest]

    def record_written(self, rel: str, stamp: Stamp, digest: str, finished_ns: int) -> None:
        """``rel`` as this run wrote it (a downloaded archive unpacked into the cache: ``digest`` is
        of the bytes written, and ``stamp`` was taken after ``finished_ns``, when the writer had
        finished). Remembered only if nothing has written it since (its times are before
        ``finished_ns``) and its times have settled by now (the end of the run)."""
        latest = max(stamp[1], stamp[2]) if stamp else finished_ns
        if latest < finished_ns - COARSE_TICK_NS and time.time_ns() - latest > SETTLED_NS:
            self._fresh[rel] = [*stamp, digest]

    def save(self) -> None:
        """Keep what this run recorded (in place of the earlier record) if it differs."""
        if self._path is None or self._fresh == self._known:
            return
        with contextlib.suppress(OSError, StorageError):  # only ever saves reading: a cache it cannot write stays as it was
            write_atomic(self._path, json.dumps(self._fresh, sort_keys=True, separators=(",", ":")))
