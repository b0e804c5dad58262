#!/usr/bin/env python3
"""How long the driver waits for a first-run archive's tree when its own thread has been busy.

    python3 -m bench.unpack_beside_busy_driver [ARCHIVE] [--busy 2.0] [--runs 5] [--code DIR]

ARCHIVE defaults to vLLM 0.10.2's sdist in the benchmark's download cache. Each run unpacks it as
a first run does (``extract_tar(..., background=True)``: the files served from memory, the tree
written meanwhile into a fresh folder beside the cache), keeps the driver's thread busy with
Python work for ``--busy`` seconds, as decoding the scan's results keeps it on many cores, then
waits for the tree. Prints, per run, that wait and the CPU of the writer when it is a child
process (the children's CPU), and their medians; never asserts. ``--code DIR`` measures another
checkout (a thread writer before December 4, night: its CPU is the driver's own, not a child's).

A thread writer gives the interpreter's lock up at each of its system calls and waits for it
after each one while the driver's thread works, so most of its tree is left for the wait.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

if "--code" in sys.argv:
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--code") + 1]).resolve()))

from extractor.acquire.archives import extract_tar  # noqa: E402

DEFAULT = Path.home() / ".cache" / "archdiff-benchmark" / "sources" / "sdists" / "vllm-0.10.2.tar.gz"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(archive: Path, busy: float) -> tuple[float, float]:
    """(seconds waited for the tree after ``busy`` seconds of work, the children's CPU meanwhile)."""
    scratch = Path(tempfile.mkdtemp(prefix="archdiff-unpack-bench-", dir=archive.parent))
    children = _children_cpu()
    try:
        with archive.open("rb") as fh:
            unpacking = extract_tar(fh, scratch / "tree", name=archive.name, background=True)
        if unpacking is None:
            raise SystemExit(f"{archive.name}: not unpacked in the background (links, duplicates, too large)")
        until, total = time.perf_counter() + busy, 0
        while time.perf_counter() < until:  # the driver's thread at work
            total += sum(range(1000))
        waited = time.perf_counter()
        unpacking.wait()
        return time.perf_counter() - waited, _children_cpu() - children
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--busy", type=float, default=2.0, help="seconds the driver's thread works first")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--code", type=Path, default=None, help="the archdiff checkout to measure")
    args = parser.parse_args()
    runs = []
    for i in range(args.runs):
        waited, cpu = one_run(args.archive, args.busy)
        runs.append((waited, cpu))
        print(f"  run {i + 1}: waited {waited:.2f} s for the tree after {args.busy:g} s busy; "
              f"writer child CPU {cpu:.2f} s")
    print(f"median: waited {statistics.median(w for w, _c in runs):.2f} s, "
          f"writer child CPU {statistics.median(c for _w, c in runs):.2f} s")


if __name__ == "__main__":
    main()
