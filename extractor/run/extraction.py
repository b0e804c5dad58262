"""What an extraction returns: ``evidence.json``'s bytes (or the memo file that holds them) and the
counts a run reports without parsing them. Free of the scanners' and steps' imports, so that a warm
run, which serves the bundle from the memo, never pays for them."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from extractor.support.storage import copy_atomic, written_atomic


class MemoFile:
    """``evidence.json``'s bytes in a memo file (extractor.run.memo), held open: a run that evicts
    the file while this one still needs its bytes takes the name away, not the bytes. ``link``
    makes a target path this very file (a hard link), or says False where it cannot."""

    def __init__(self, handle: BinaryIO, link: Callable[[BinaryIO, Path], bool] | None = None) -> None:
        self._handle = handle
        self._link = link

    def __len__(self) -> int:
        return os.fstat(self._handle.fileno()).st_size

    def read(self) -> bytes:
        return os.pread(self._handle.fileno(), len(self), 0)

    def copy_to(self, target: Path) -> Path:
        """Write the bytes to ``target`` whole or not at all: the memo file itself where the file
        system gives a link (nothing copied), else copied by the kernel (vLLM's 52 MB: 0.03 s,
        where writing them from memory after reading them costs twice that)."""
        if self._link is not None and self._link(self._handle, target):
            return target
        return copy_atomic(target, self._handle.fileno(), len(self))


@dataclasses.dataclass(frozen=True, slots=True)
class Extraction:
    """One system's evidence, as ``evidence.json``'s bytes: a warm run (every input unchanged, the
    bundle served from the memo) writes them as they are and reports counts from ``summary``; the
    bundle is parsed only for a caller that reads it (vLLM's is 52 MB: about a second of
    ``json.loads``, more than the rest of the warm run)."""

    evidence: bytes | MemoFile  # evidence.json, UTF-8, byte for byte: see :attr:`data`
    summary: dict[str, Any]  # counts and diagnostics, see :func:`summarize_bundle`
    timings: dict[str, float]  # seconds per phase: for the run log, never for the bundle
    cache: dict[str, int]  # hits and misses; "memo" is 1 when the whole bundle came from the cache
    _parsed: list[dict[str, Any]] = dataclasses.field(default_factory=list, repr=False, compare=False)
    # the run log (extractor.run.runlog: wall and CPU seconds per phase, serial seconds, bytes
    # from workers); empty for an extraction that did not run here
    log: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)
    # told where evidence.json was written from these bytes, and which file that is (the memo
    # keeps a bundle just made by a link to it: extractor.run.memo.remember)
    written: Callable[[Path, os.stat_result], object] | None = dataclasses.field(default=None, repr=False,
                                                                               compare=False)

    @property
    def data(self) -> bytes:
        """``evidence.json``'s bytes (read from the memo file on each use: a warm run that only
        writes them out never holds them)."""
        return self.evidence.read() if isinstance(self.evidence, MemoFile) else self.evidence

    @property
    def bundle(self) -> dict[str, Any]:
        """The bundle as JSON values, parsed on first use."""
        if not self._parsed:
            self._parsed.append(parse_bundle(self.data))
        return self._parsed[0]

    @property
    def text(self) -> str:
        return self.data.decode("utf-8")

    def write(self, out_dir: Path) -> Path:
        """``out_dir/evidence.json``, written whole."""
        target = out_dir / "evidence.json"
        if isinstance(self.evidence, MemoFile):
            return self.evidence.copy_to(target)
        info = written_atomic(target, self.evidence)
        if self.written is not None:
            self.written(target, info)
        return target


def parse_bundle(data: bytes) -> dict[str, Any]:
    """``json.loads(data)``, faster: the cyclic garbage collector has nothing to find among the
    million fresh dicts and lists of a large bundle, and walking them every few thousand
    allocations doubles the time."""
    with without_cyclic_gc():
        return json.loads(data)


@contextlib.contextmanager
def without_cyclic_gc() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block (reference counting still frees
    everything that is not a cycle). The driver builds millions of small acyclic objects (facts,
    nodes, edges, records) and keeps them to the end of the run: every full collection walks all
    of them, and on vLLM those collections cost about a third of the driver's CPU (5 s of 16).

    Turned back on, the collector would walk every object the block made at its first collection
    (all of them are still in the youngest generation): a second and a half after the run. So what
    survives the block is frozen first (``gc.freeze``: left to reference counting, never walked);
    cycles among those objects, if any, are not reclaimed. Worker processes turn the collector on
    again (extractor.run.workerpool)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()
            gc.enable()


def summarize_bundle(bundle: dict[str, Any]) -> dict[str, Any]:
    """What a run reports without the bundle: node, edge and file counts, and the diagnostics
    (and ``groups``: the warnings and errors grouped, extractor.run.diagnosis)."""
    return {"nodes": len(bundle["graph"]["nodes"]), "edges": len(bundle["graph"]["edges"]),
            "files": sum(bundle["stats"]["files"].values()), "diagnostics": bundle["diagnostics"]}
