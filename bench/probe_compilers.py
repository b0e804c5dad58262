#!/usr/bin/env python3
"""Where the struct probes' compilers spend their CPU: every compiler process of one extraction.

    python3 -m bench.probe_compilers [SPEC] [--headers-from SPEC ...] [--jobs 2] [--top 15]
        [--code DIR] [--json OUT] [--evidence OUT] [--name NAME --version VERSION] [--max-headers N]
        [--timeline]

SPEC defaults to the unpacked vLLM 0.10.2 sdist the real-input tests use. One cold extraction
(a fresh cache directory; ``--headers-from`` wheels already unpacked in the shared test cache are
copied into it, so nothing is downloaded or unpacked while it is timed) with default probes, in
this process; each compiler process the probes start is run under ``/usr/bin/time``, which gives
its CPU seconds, its children's included (nvcc's preprocessor, cudafe++, cicc, host compiler).
Prints processes and CPU seconds per compiler and outcome (compile that succeeded, compile that
failed, preprocess-only pass), then the costliest processes with the headers they compiled.
The run log's ``steps.structs.workers_cpu_s`` is the same CPU in one figure; this says which
compiles it is made of, what a change to the probes' attempts has to be measured against.
``--code DIR`` measures another checkout (a before/after table); ``--max-headers N`` probes the
best N headers only (``structs_max_headers``: 30 of the torch tree's 160 in a few minutes).
After the table, how many compilers ran at once and for how long (``jobs`` of them: the step is
compile-bound), and each stretch of a second or more with fewer. ``--timeline`` also lists every
process in the order it started, with its start and end (seconds from the extraction's start) and
the thread that ran it: where the probe threads waited. Never asserts.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if "--code" in sys.argv:  # measure another checkout's code (the benchmark itself stays this one)
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--code") + 1]).resolve()))
sys.path.insert(1 if "--code" in sys.argv else 0, str(Path(__file__).resolve().parent.parent))


DEFAULT_TREE = Path.home() / ".cache" / "archdiff-tests" / "vllm-0.10.2"
WHEELS = Path.home() / ".cache" / "archdiff-tests" / "wheels"
_SOURCES = ("probe.cu", "probe.cpp", "probe.c")


def timed_processes(log: list[dict[str, Any]], origin: float | None = None) -> Callable[..., Any]:
    """A ``run_bounded`` that runs each command under ``/usr/bin/time`` and appends what it cost,
    and when it ran (``time.perf_counter`` seconds after ``origin``)."""
    from extractor.support.safeproc import run_bounded as real

    lock = threading.Lock()
    origin = time.perf_counter() if origin is None else origin

    def run(argv, **kw):
        start = time.perf_counter() - origin
        fd, times = tempfile.mkstemp(prefix="archdiff-time-")
        os.close(fd)
        try:
            done = real(["/usr/bin/time", "-o", times, "-f", "%U %S", *argv], **kw)
            user, system = map(float, Path(times).read_text().split()[-2:])
        finally:
            os.unlink(times)
        source = next((a for a in argv if a.endswith(_SOURCES)), "")
        with lock:
            log.append({"compiler": Path(argv[0]).name,
                        "kind": "dry run" if "--dryrun" in argv else "preprocess" if "-MG" in argv or "-E" in argv
                        else ("ok" if done.returncode == 0 else "failed"),
                        "cpu_s": round(user + system, 2), "headers": _headers_of(source),
                        "start_s": round(start, 2), "end_s": round(time.perf_counter() - origin, 2),
                        "thread": threading.current_thread().name})
        return done

    return run


def _headers_of(source: str) -> list[str]:
    """The quoted includes of a probe source: its preamble's, then the headers it compiles."""
    try:
        text = Path(source).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line.split('"')[1] for line in text.splitlines() if line.startswith('#include "')]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", nargs="?", default=str(DEFAULT_TREE))
    parser.add_argument("--headers-from", action="append", default=[])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--code", help="another checkout to measure")
    parser.add_argument("--json", help="write every process's record there")
    parser.add_argument("--evidence", help="write the run's evidence.json there (to compare records)")
    parser.add_argument("--name", default="")
    parser.add_argument("--version", default="")
    parser.add_argument("--max-headers", type=int, help="probe only the best N headers")
    parser.add_argument("--timeline", action="store_true", help="also every process in the order it started")
    args = parser.parse_args(argv)
    log: list[dict[str, Any]] = []
    run = timed_processes(log)
    # the modules that bound run_bounded by name when imported (compilers: every probe compile,
    # through run_compiler; probe: objcopy)
    import extractor.structs.compilers as compilers
    import extractor.structs.probe as probe

    for module in (compilers, probe):
        module.run_bounded = run
    from extractor.buildsettings import BuildSettings
    from extractor.context import ExtractOptions
    from extractor.run.pipeline import extract_system

    with tempfile.TemporaryDirectory(prefix="archdiff-bench-probes-") as tmp:
        cache = Path(tmp) / "cache"
        if args.headers_from and WHEELS.is_dir():
            shutil.copytree(WHEELS, cache / "wheels")
        extra = {} if args.max_headers is None else {"structs_max_headers": args.max_headers}
        options = ExtractOptions(jobs=args.jobs, cache_dir=cache, extra=extra,
                                 build=BuildSettings(headers_from=tuple(args.headers_from)))
        extraction = extract_system([args.spec], name=args.name, version=args.version, options=options)
    if args.evidence:
        Path(args.evidence).write_bytes(extraction.data)
    if args.json:
        Path(args.json).write_text(json.dumps(log, indent=1), encoding="utf-8")
    print_table(log, args.top)
    print_occupancy(log, args.jobs)
    if args.timeline:
        print_timeline(log)
    return 0


def print_table(log: list[dict[str, Any]], top: int) -> None:
    groups: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
    for x in log:
        groups[x["compiler"], x["kind"]].append(x["cpu_s"])
    print(f"{len(log)} compiler processes, {sum(x['cpu_s'] for x in log):.1f} CPU s")
    print(f"{'compiler':28} {'kind':10} {'processes':>9} {'CPU s':>8}")
    for (compiler, kind), cpu in sorted(groups.items(), key=lambda kv: -sum(kv[1])):
        print(f"{compiler:28} {kind:10} {len(cpu):9d} {sum(cpu):8.2f}")
    print(f"\nthe {top} costliest:")
    for x in sorted(log, key=lambda x: -x["cpu_s"])[:top]:
        print(f"{x['cpu_s']:7.2f}  {x['compiler']:24} {x['kind']:10} {_names(x)[:90]}")


def occupancy(log: list[dict[str, Any]], jobs: int, gap: float = 1.0
              ) -> tuple[dict[int, float], list[tuple[float, float, int]]]:
    """Seconds with 0, 1, ..., ``jobs`` (or more) compilers running at once, from the first
    process's start to the last one's end; and the stretches of at least ``gap`` seconds with
    fewer than ``jobs`` running, as (start, end, running)."""
    events = sorted([(x["start_s"], 1) for x in log] + [(x["end_s"], -1) for x in log])
    seconds = dict.fromkeys(range(jobs + 1), 0.0)
    stretches: list[tuple[float, float, int]] = []
    running, last = 0, events[0][0] if events else 0.0
    for at, change in events:
        if at > last:
            seconds[min(running, jobs)] += at - last
            if running < jobs and at - last >= gap:
                stretches.append((last, at, running))
        running += change
        last = at
    return seconds, stretches


def print_occupancy(log: list[dict[str, Any]], jobs: int) -> None:
    """How busy the probe threads kept the compilers: what a compile-bound step can gain from
    scheduling (the stretches with fewer compilers than jobs) and what only cheaper compiles can."""
    seconds, stretches = occupancy(log, jobs)
    total = sum(seconds.values())
    counts = ", ".join(f"{n}{'+' if n == jobs else ''}: {s:.1f} s" for n, s in sorted(seconds.items(), reverse=True))
    print(f"\ncompilers running at once, over {total:.1f} s from the first start to the last end: {counts}")
    for start, end, running in stretches:
        print(f"  {start:8.2f} {end:8.2f}  {running} running for {end - start:.1f} s")


def print_timeline(log: list[dict[str, Any]]) -> None:
    print(f"\n{'start':>8} {'end':>8}  {'thread':24} {'compiler':24} {'kind':10} headers")
    for x in sorted(log, key=lambda x: (x["start_s"], x["thread"])):
        print(f"{x['start_s']:8.2f} {x['end_s']:8.2f}  {x['thread'][-24:]:24} {x['compiler']:24} {x['kind']:10} "
              f"{_names(x)[:70]}")


def _names(process: dict[str, Any]) -> str:
    """The file names of the headers a process compiled."""
    return ", ".join(Path(h).name for h in process["headers"])


if __name__ == "__main__":
    sys.exit(main())
