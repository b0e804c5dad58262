#!/usr/bin/env python3
"""Benchmark archdiff's extraction against baselines run on the same files in the same run.

    python3 -m bench.extract_vs_baselines [SPEC] [--runs 3] [--jobs 2]

SPEC defaults to pypi:vllm==0.10.2. Prints medians and ratios, never asserts: this machine is
shared and noisy, so only ratios measured side by side mean anything.

  cold     full extraction with an empty fact cache
  warm     the same again: nothing changed, so the whole bundle comes from the cache (what
           `archdiff extract` does: extract, then write evidence.json); with --warm-only, only this,
           and where its time goes (medians per phase)
  warm, bundle redone  every file's facts from the cache, every evidence kind recomputed
  ast-1    Python's own ast.parse over the same .py files, one process
  ast-N    the same in N processes
  ctags    universal-ctags over the same C/C++/CUDA and Python files
  --api-diff OLD_TREE   griffe's load-and-diff of OLD_TREE -> SPEC beside archdiff's release diff of
           the two cached extractions (bench/api_vs_griffe.py)
  --profile  where a cold run's time goes, and nothing else (docs/performance.md): per phase the
           wall seconds, the driver's CPU and the workers' CPU, medians of --runs cold runs with
           -j1 and -j{--jobs} and --no-probes (sources downloaded but not unpacked, no facts); bytes
           to and from workers; the serial part (the driver's CPU outside the scan pool and outside
           the work fork_map hands to forked children, which -j1 does in the driver) and Amdahl's
           projection for 16 cores from each run's CPU seconds; the warm run and ast.parse over the sdist's package against the targets; then
           one -j1 run under cProfile (the driver), its top functions, the stats saved
           (--profile-out). Works on any archdiff since the per-file facts became msgpack bytes:
           ``--code DIR`` measures the code in DIR (for a before/after table).

Then, for each source root with C/C++/CUDA files: the recall of universal-ctags'
class/struct/union/function definitions (by file and name) among the definition sites that
evidence.json itself carries (each node's location and its ``sites``); and, for those roots and
each --cpp-tree DIR, archdiff's C++ parse+scan+graph time against a raw tree-sitter parse of the
same files (bench/cpp_vs_ctags.py). When the system has Rust or Go files: the same for them, read
from the evidence.json the run produced (bench/native_vs_ctags.py).

Last, layer roles against the hand-made labels of tests/layers_benchmark (bench/layers_vs_labels.py):
agreement per system and overall, the confusions, and whether generated code holds an architectural
role (--no-layers skips it; systems whose mirrors are absent are skipped with a line saying so).
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any
import sys

if "--code" in sys.argv:  # measure another checkout's code (the benchmark itself stays this one)
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--code") + 1]).resolve()))
sys.path.insert(1 if "--code" in sys.argv else 0, str(Path(__file__).resolve().parent.parent))

from extractor.evidence.write import write_bundle
from extractor.context import ExtractOptions
from extractor.acquire.inventory import list_files
from extractor.model import Language
from extractor.run.pipeline import acquire_sources, extract_system
from extractor.acquire.sources import default_cache_dir


def _write(result, out_dir: Path) -> Path:
    """evidence.json as ``archdiff extract`` writes it (a checkout before Extraction.write: from the bytes)."""
    if hasattr(result, "write"):
        return result.write(out_dir)
    return write_bundle(None, out_dir, result.data)


def parse_file(path: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(Path(path).read_bytes())
        except (SyntaxError, ValueError):
            pass


def _time(fn, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spec", nargs="*", default=["pypi:vllm==0.10.2"])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--after", default=None, metavar="SPEC",
                        help="the release before SPEC (default for the default SPEC: pypi:vllm==0.10.1): time SPEC "
                             "with that release's facts cached, against cold ('none' to skip)")
    parser.add_argument("--cpp-tree", action="append", default=[], metavar="DIR",
                        help="another C/C++ tree to measure ctags recall on (repeatable)")
    parser.add_argument("--api-diff", metavar="OLD_TREE",
                        help="also time the release API diff of OLD_TREE -> SPEC (a directory) against griffe")
    parser.add_argument("--package", default="vllm", help="the package --api-diff loads with griffe")
    parser.add_argument("--warm-only", action="store_true",
                        help="time the warm run only (the cache primed once), phase by phase")
    parser.add_argument("--no-layers", action="store_true", help="skip the labelled layer benchmark")
    parser.add_argument("--profile", action="store_true", help="where a cold run's time goes (see above)")
    parser.add_argument("--profile-out", type=Path, default=Path("archdiff-profile.prof"),
                        help="where --profile saves the cProfile stats of its -j1 run")
    parser.add_argument("--code", type=Path, default=None, help="with --profile: the archdiff checkout to measure")
    args = parser.parse_args()
    if args.profile:
        profile(args)
        return

    sources = acquire_sources(args.spec, default_cache_dir())
    py_files, native_files = [], []
    for source in sources:
        entries, _ = list_files(source)
        for e in entries:
            full = str(source.root / e.rel)
            if e.language is Language.PYTHON:
                py_files.append(full)
            elif e.language in (Language.CPP, Language.CUDA):
                native_files.append(full)
    print(f"input: {' '.join(args.spec)}: {len(py_files)} Python files, {len(native_files)} C/C++/CUDA files")

    warm_cache = Path(tempfile.mkdtemp(prefix="archdiff-bench-warm-"))

    last: list = []  # the last warm run's Extraction: its bundle is parsed after the timing
    phases: list[dict[str, float]] = []  # per warm run: seconds per phase
    out_dir = Path(tempfile.mkdtemp(prefix="archdiff-bench-out-"))

    def warm() -> None:
        start = time.perf_counter()
        result = extract_system(args.spec, options=ExtractOptions(jobs=args.jobs, cache_dir=warm_cache))
        extracted = time.perf_counter()
        _write(result, out_dir)  # what `archdiff extract` writes
        done = time.perf_counter()
        run = dict(result.timings)
        run["rest of extract_system"] = extracted - start - sum(result.timings.values())
        run["write evidence.json"] = done - extracted
        phases.append(run)
        last[:] = [result]

    # The cold runs must not pay for the download: prime the source cache first.
    for source_spec in args.spec:
        if source_spec.startswith("pypi:") or "://" in source_spec:
            shutil.copytree(default_cache_dir(), warm_cache, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("facts.sqlite*"))
            break

    def cold_with_sources() -> None:
        cache = Path(tempfile.mkdtemp(prefix="archdiff-bench-"))
        try:
            shutil.copytree(warm_cache, cache, dirs_exist_ok=True, ignore=shutil.ignore_patterns("facts.sqlite*"))
            start = time.perf_counter()
            result = extract_system(args.spec, options=ExtractOptions(jobs=args.jobs, cache_dir=cache))
            _write(result, out_dir)
            cold_with_sources.elapsed.append(time.perf_counter() - start)
        finally:
            shutil.rmtree(cache, ignore_errors=True)

    if args.warm_only:
        warm()  # fill the cache
        phases.clear()
        t_warm = _time(warm, args.runs)
        print(f"archdiff warm, median of {args.runs} runs, {args.jobs} jobs: {t_warm:.2f} s")
        for phase in phases[0]:
            print(f"  {phase:<48} {statistics.median(run.get(phase, 0.0) for run in phases):6.3f} s")
        shutil.rmtree(warm_cache, ignore_errors=True)
        shutil.rmtree(out_dir, ignore_errors=True)
        return

    cold_with_sources.elapsed = []
    for _ in range(args.runs):
        cold_with_sources()
    t_cold = statistics.median(cold_with_sources.elapsed)
    warm()  # fill the cache
    t_warm = _time(warm, args.runs)

    def recompute() -> None:
        # Every file's facts from the cache, but the bundle memo dropped: what a one-file change
        # (the next release) costs beyond re-scanning that file.
        db = sqlite3.connect(warm_cache / "facts.sqlite")
        with db:
            db.execute("DELETE FROM facts WHERE key LIKE 'bundle:%'")
        db.close()
        warm()

    t_recompute = _time(recompute, args.runs)
    after = args.after or ("pypi:vllm==0.10.1" if args.spec == ["pypi:vllm==0.10.2"] else "none")
    next_release = None
    if after != "none":
        from bench.releases_ray_vs_pool import next_release_row, prime_sources

        primed = Path(tempfile.mkdtemp(prefix="archdiff-bench-next-"))
        prime_sources([[after], args.spec], primed)
        next_release = next_release_row([after], args.spec, primed, args.jobs, args.runs)
        shutil.rmtree(primed, ignore_errors=True)
    t_ast1 = _time(lambda: [parse_file(p) for p in py_files], args.runs)

    def ast_n() -> None:
        with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
            list(pool.map(parse_file, py_files, chunksize=32))

    t_astn = _time(ast_n, args.runs)
    ctags = shutil.which("ctags")
    t_ctags = None
    if ctags:
        listing = Path(tempfile.mkstemp(prefix="archdiff-bench-files-")[1])
        listing.write_text("\n".join(py_files + native_files) + "\n")
        t_ctags = _time(lambda: subprocess.run([ctags, "--langmap=C++:+.cu.cuh", "-f", "/dev/null", "-L", str(listing)],
                                               check=False, capture_output=True), args.runs)
    shutil.rmtree(warm_cache, ignore_errors=True)
    shutil.rmtree(out_dir, ignore_errors=True)
    rows = [("archdiff cold", t_cold), ("archdiff warm", t_warm), ("archdiff warm, bundle redone", t_recompute),
            ("ast.parse, 1 process", t_ast1),
            (f"ast.parse, {args.jobs} processes", t_astn)]
    if t_ctags is not None:
        rows.append(("universal-ctags", t_ctags))
    if next_release:
        rows.append((f"archdiff after {after} cached", next_release["after"]))
    print(f"medians of {args.runs} runs, {args.jobs} jobs:")
    for label, seconds in rows:
        print(f"  {label:<28} {seconds:7.2f} s")
    print("ratios:")
    print(f"  cold / ast.parse({args.jobs} procs)   {t_cold / t_astn:6.1f}x")
    print(f"  cold / ast.parse(1 proc)      {t_cold / t_ast1:6.1f}x")
    print(f"  warm / ast.parse({args.jobs} procs)   {t_warm / t_astn:6.1f}x")
    print(f"  warm / cold                   {t_warm / t_cold:6.2f}x")
    print(f"  warm, bundle redone / cold    {t_recompute / t_cold:6.2f}x")
    if t_ctags:
        print(f"  cold / ctags                  {t_cold / t_ctags:6.1f}x")
    if next_release:
        print(f"  after previous release / cold {next_release['after'] / next_release['cold']:6.2f}x "
              f"({next_release['parsed']:,} files parsed, {next_release['cached']:,} cached; cold measured beside it: "
              f"{next_release['cold']:.2f} s)")
    print(f"targets (issue 2): cold < 30 s: {'yes' if t_cold < 30 else 'NO'}; warm < 3 s: {'yes' if t_warm < 3 else 'NO'}")

    if args.api_diff:
        from bench.api_vs_griffe import compare, report

        api_cache = Path(tempfile.mkdtemp(prefix="archdiff-bench-api-"))
        # Both releases extracted in full first, so the diff reads cached evidence, as a user's would.
        report(compare(Path(args.api_diff), Path(args.spec[0]), args.package, api_cache))
        shutil.rmtree(api_cache, ignore_errors=True)

    from bench.cpp_vs_ctags import evidence_recall, measure_recall

    with_cpp = [s for s in sources if native_files and any(f.startswith(str(s.root)) for f in native_files)]
    if with_cpp:
        print("C/C++/CUDA definitions of universal-ctags found in evidence.json, by file and name "
              "(target: >= 99%):")
    for source in with_cpp:
        r = evidence_recall(last[0].bundle, source.root, f"{source.label}/" if source.label else "")
        print(f"  {source.label or source.root.name}: recall {r['recall']:.2%} ({r['found']}/{r['ctags_definitions']})")
    trees = [s.root for s in with_cpp] + [Path(t) for t in args.cpp_tree]
    if trees:
        print("C/C++/CUDA parse+scan+graph against a raw tree-sitter parse (target: within 3x):")
    for tree in trees:
        r = measure_recall(tree)
        print(f"  {tree.name}: {r['files']} files, archdiff {r['archdiff_seconds']:.2f} s vs raw parse "
              f"{r['raw_parse_seconds']:.2f} s = {r['time_ratio']:.2f}x")

    from bench.native_vs_ctags import measure_bundle

    for r in measure_bundle(last[0].bundle, [(s.label, s.root) for s in sources], args.runs):
        print(f"{r['language']} definitions against universal-ctags, from evidence.json (targets: >= 98%; time within "
              f"3x of a raw parse): recall {r['recall']:.2%} ({r['found']}/{r['ctags_definitions']}), {r['files']} files, "
              f"archdiff parse+scan+graph {r['archdiff_seconds']:.2f} s vs raw parse {r['raw_parse_seconds']:.2f} s "
              f"= {r['time_ratio']:.2f}x (medians of {args.runs})")

    if not args.no_layers:
        from bench.layers_vs_labels import load_labels, measure, render

        print(render(measure(load_labels(), cache_dir=default_cache_dir(), jobs=args.jobs)))


# -- --profile ----------------------------------------------------------------------------------

def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class _PhaseClock:
    """A progress display that draws nothing and clocks each phase: wall, this process's CPU and
    its children's (workers end inside the scan phase, so their CPU lands there). It reads only the
    pipeline's progress calls, so it measures an archdiff that has no run log too."""

    def __init__(self) -> None:
        self.rows: dict[str, list[float]] = {}
        self._open: tuple[str, float, float, float] | None = None

    def section(self, label: str) -> None:
        pass

    def plan(self, phases) -> None:
        pass

    def phase(self, name: str, total: int | None = None) -> None:
        self.close()
        self._open = (name, time.perf_counter(), time.process_time(), _children_cpu())

    @property
    def current(self) -> str:
        return self._open[0] if self._open is not None else "?"

    def advance(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        if self._open is None:
            return
        name, wall, cpu, children = self._open
        row = self.rows.setdefault(name, [0.0, 0.0, 0.0])
        row[0] += time.perf_counter() - wall
        row[1] += time.process_time() - cpu
        row[2] += _children_cpu() - children
        self._open = None


class _PoolMeter:
    """Wraps the local executor's scan: the pool's working window, the driver's CPU inside it and
    the bytes that cross the process boundary."""

    def __init__(self) -> None:
        self.window = self.driver_cpu = 0.0
        self.sent = self.received = 0

    def install(self):
        try:  # the pool the pipeline uses by default (extractor.run.workplace.HERE)
            from extractor.run.workplace import LocalWorkplace as pool
        except ImportError:  # --code of a tree from before the workplace
            from extractor.run.executor import LocalExecutor as pool

        self.pool = pool
        original = pool.scan_files
        meter = self

        def scan_files(self, items, steps, jobs, progress=None):
            meter.sent += sum(len(data) for _language, data in items)
            wall, cpu = time.perf_counter(), time.process_time()
            window, driver_cpu = meter.window, meter.driver_cpu
            for result in original(self, items, steps, jobs, progress):
                meter.received += len(result)
                # the caller stops at the last item without exhausting this generator: measure here
                meter.window = window + time.perf_counter() - wall
                meter.driver_cpu = driver_cpu + time.process_time() - cpu
                yield result

        pool.scan_files = scan_files
        return original


class _ForkMeter:
    """Wraps fork_map's in-process runner (extractor/support/forkmap.py): the driver's CPU in work
    that fork_map would give to children with more jobs (all of it at -j1), by the phase it is done
    in and by kind: ``map`` (fork_map's tasks, split over up to MAX_CHILDREN children) or ``ahead``
    (a ``forkable`` step's whole extract, one child of its own: fork_ahead). A forked child runs the
    wrapper too, but its counts stay in the child: its CPU reaches the driver as children's CPU.
    Inactive for --code of a tree without fork_map."""

    def __init__(self, clock: _PhaseClock | None = None) -> None:
        self.cpu = 0.0
        self.by_phase: dict[str, dict[str, float]] = {}
        # per phase, each fork_map round with driver work beside it: (the round's CPU, the driver's)
        self.overlaps: dict[str, list[tuple[float, float]]] = {}
        self.last_map = 0.0
        self.depth = 0  # run_here inside run_here (fork_map in a forked step, at -j1): counted once
        self.module = None
        self.clock = clock

    def install(self) -> None:
        try:
            from extractor.support import forkmap
        except ImportError:
            return
        self.module, self.original = forkmap, forkmap.run_here
        meter = self
        ahead = getattr(forkmap, "_pickled", None)  # what fork_ahead's call runs through

        def run_here(work, tasks):
            cpu = time.process_time()
            meter.depth += 1
            try:
                return meter.original(work, tasks)
            finally:
                meter.depth -= 1
                if not meter.depth:
                    used = time.process_time() - cpu
                    meter.cpu += used
                    meter.last_map = used
                    kinds = meter.by_phase.setdefault(meter.phase(), {"map": 0.0, "ahead": 0.0})
                    kinds["ahead" if work is ahead and ahead is not None else "map"] += used

        forkmap.run_here = run_here
        if hasattr(forkmap, "run_meanwhile"):
            self.original_meanwhile = forkmap.run_meanwhile

            def run_meanwhile(meanwhile):
                # at -j1 fork_map calls it right after its tasks: the round it overlaps is the last
                cpu = time.process_time()
                try:
                    return meter.original_meanwhile(meanwhile)
                finally:
                    if not meter.depth:
                        meter.overlaps.setdefault(meter.phase(), []).append(
                            (meter.last_map, time.process_time() - cpu))

            forkmap.run_meanwhile = run_meanwhile

    def phase(self) -> str:
        return self.clock.current if self.clock is not None else "?"

    def remove(self) -> None:
        if self.module is not None:
            self.module.run_here = self.original
            if hasattr(self, "original_meanwhile"):
                self.module.run_meanwhile = self.original_meanwhile


def cold_run(specs: list[str], primed: Path, jobs: int, profiler=None) -> dict:
    """One cold extraction (no facts, sources not unpacked) in a fresh copy of ``primed``. The run's
    objects are kept as the console script keeps them (it ends without freeing them) and freed
    after the clocks stop, that CPU apart (``free_cpu``: what releases, compare and Ray tasks pay
    per extraction); a tree from before ``keep`` frees them inside the run."""
    import inspect

    from extractor.run import pipeline

    cache = Path(tempfile.mkdtemp(prefix="archdiff-profile-"))
    try:
        shutil.copytree(primed, cache, dirs_exist_ok=True, ignore=shutil.ignore_patterns("facts.sqlite*", "trees"))
        clock, meter = _PhaseClock(), _PoolMeter()
        forks = _ForkMeter(clock)
        original = meter.install()
        forks.install()
        old_build = getattr(pipeline, "build_bundle", None)
        if old_build is not None:  # before encode_bundle the bundle phase told no progress
            def build_bundle(*a, **k):
                clock.phase("bundle")
                return old_build(*a, **k)
            pipeline.build_bundle = build_bundle
        kept: list[object] = []
        keep = {"keep": kept} if "keep" in inspect.signature(pipeline.extract_system).parameters else {}
        wall, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
        try:
            if profiler is not None:
                profiler.enable()
            result = pipeline.extract_system(specs, progress=clock, options=ExtractOptions(
                jobs=jobs, cache_dir=cache, probe_structs=False), **keep)
            if profiler is not None:
                profiler.disable()
            clock.close()
        finally:
            meter.pool.scan_files = original
            forks.remove()
            if old_build is not None:
                pipeline.build_bundle = old_build
        total = time.perf_counter() - wall
        driver_cpu = time.process_time() - cpu
        free_cpu = time.process_time()
        kept.clear()
        free_cpu = time.process_time() - free_cpu
        return {"wall": total, "driver_cpu": driver_cpu, "workers_cpu": _children_cpu() - children,
                "phases": clock.rows, "window": meter.window, "window_driver_cpu": meter.driver_cpu,
                "serial_wall": total - meter.window, "fork_map_cpu": forks.cpu, "forks_by_phase": forks.by_phase,
                "overlaps": forks.overlaps,
                # the driver outside the scan pool, less fork_map's work done here: what more cores cannot take
                "serial_cpu": driver_cpu - meter.driver_cpu - forks.cpu,
                # a first-run archive's tree writer (its own child): neither serial nor the scan's
                "unpack_cpu": getattr(result, "log", {}).get("steps", {}).get("unpack", {}).get("workers_cpu_s", 0.0),
                "sent": meter.sent, "received": meter.received, "bytes": len(result.data),
                "log": getattr(result, "log", {}), "free_cpu": free_cpu}
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def _median_runs(runs: list[dict]) -> dict:
    med = statistics.median
    phases: dict[str, list[float]] = {}
    for name in runs[0]["phases"]:
        phases[name] = [med(r["phases"].get(name, [0.0, 0.0, 0.0])[i] for r in runs) for i in range(3)]
    out = {key: med(r[key] for r in runs) for key in runs[0]
           if key not in ("phases", "log", "forks_by_phase", "overlaps")}
    out["phases"] = phases
    out["overlaps"] = {name: [(med(r["overlaps"][name][i][0] for r in runs), med(r["overlaps"][name][i][1] for r in runs))
                              for i in range(min(len(r["overlaps"][name]) for r in runs))]
                       for name in runs[0].get("overlaps", {}) if all(name in r.get("overlaps", {}) for r in runs)}
    out["forks_by_phase"] = {name: {kind: med(r["forks_by_phase"].get(name, {}).get(kind, 0.0) for r in runs)
                                    for kind in ("map", "ahead")}
                             for name in {n for r in runs for n in r.get("forks_by_phase", {})}}
    return out


_WHERE = {"scan": "workers (driver: hand out, receive, decode, cache)", "structs": "driver (+ compilers)"}


def amdahl(run: dict, cores: int = 16, steps: Sequence[Any] | None = None,
           children: int | None = None) -> tuple[float, dict[str, float]]:
    """The projection for ``cores`` from one -j1 run's CPU seconds, and its parts.

    T(1) = S + P_scan + P_fork: the driver's own CPU outside the scan pool (S), the scan workers'
    (P_scan) and what fork_map and fork_ahead would give to children with more jobs (P_fork). The
    tree writer of a first-run archive (a child of its own, the run log's ``unpack`` workers' CPU)
    is in neither: its kernel time swings 0.2-3 s with the file system's state, and it runs on a
    core of its own.

    T(cores) is the run's critical path with that many cores:
    - the pool's window lasts max(P_scan / cores, W): the driver's CPU inside it (W: handing files
      out, reading, decoding and caching each result) is serial once it outlasts the workers' share;
    - fork_map's work in a phase is split over min(cores, MAX_CHILDREN) children, not ``cores``:
      fork_map forks at most that many (``children``: the measured code's ``MAX_CHILDREN``);
    - a ``forkable`` step is one child of its own (fork_ahead): it starts once the steps it
      requires are done and the driver waits for it before the next step of its own after it
      (extractor/run/compute.py), so the steps are replayed in order (``steps``: the measured
      code's ``extractor.steps.STEPS``), each forkable step's CPU as its child's duration;
    - the driver's own work beside a round (fork_map's ``meanwhile``, the run's ``overlaps``)
      hides as much of the round's share per child as it lasts;
    - a call a phase outside the steps starts ahead (fork_ahead: the held facts' write after a
      first run's scan, joined at the run's end) is off the path: the driver meets it again only
      after every step.
    The driver's forks themselves (about 10 ms each with a vLLM-sized heap) are not in a -j1 run,
    so the projection leaves them out; it is an upper bound in that respect."""
    unpack = run.get("unpack_cpu", 0.0)
    serial, window = run["serial_cpu"], run["window_driver_cpu"]
    scan, fork = max(run["workers_cpu"] - unpack, 0.0), run["fork_map_cpu"]
    if children is None:
        children = _max_children()
    spread = max(1, min(cores, children))
    forks = run.get("forks_by_phase")
    if forks is None:  # one phase, every fork fork_map's
        many = serial + max(scan / cores, window) + fork / spread
    else:
        many = max(scan / cores, window) + _path_after_scan(run, forks, spread, steps)
    return (serial + scan + fork) / many, {"serial": serial, "window": window, "scan": scan, "fork": fork}


def _max_children() -> int:
    try:
        from extractor.support.forkmap import MAX_CHILDREN
    except ImportError:
        return 1
    return MAX_CHILDREN


def _path_after_scan(run: dict, forks: dict[str, dict[str, float]], spread: int, steps: Sequence[Any] | None) -> float:
    """The driver's serial CPU and the critical path through the steps, the scan's window left out
    (see :func:`amdahl`)."""
    if steps is None:
        from extractor.steps import STEPS as steps
    own = {}  # each phase's driver CPU, less the work it did for children and the scan's window
    for name, (_wall, cpu, _children) in run["phases"].items():
        done_here = forks.get(name, {})
        own[name] = max(cpu - done_here.get("map", 0.0) - done_here.get("ahead", 0.0)
                        - (run["window_driver_cpu"] if name == "scan" else 0.0), 0.0)
    # the driver's work beside a round overlaps the round's share per child: counted once
    hidden = {name: sum(min(beside, round_cpu / spread) for round_cpu, beside in rounds)
              for name, rounds in run.get("overlaps", {}).items()}

    def on_path(name: str) -> float:
        """A phase's time on the driver's path: its own CPU and its rounds' share per child."""
        return own.get(name, 0.0) + forks.get(name, {}).get("map", 0.0) / spread - hidden.get(name, 0.0)

    # the driver's CPU outside every phase (before the first, between): serial wherever it falls
    t = max(run["serial_cpu"] - sum(own.values()), 0.0)
    named = {step.name for step in steps}
    t += sum(on_path(name) for name in own if name not in named)  # acquire, inventory, read, bundle ...
    done: dict[str, float] = {}
    started: dict[str, float] = {}  # forkable step -> when its child would start

    def start_ready(now: float) -> None:
        for step in steps:
            if step.forkable and step.name not in started and all(r.name in done for r in step.requires):
                started[step.name] = now

    def read_back(names: list[str]) -> None:
        nonlocal t
        for name in names:
            if name in started and name not in done:
                t = max(t, started[name] + forks.get(name, {}).get("ahead", 0.0)) + own.get(name, 0.0)
                done[name] = t

    for index, step in enumerate(steps):
        start_ready(t)
        earlier = [s.name for s in steps[:index] if s.forkable]
        if step.forkable:
            if step.name not in started:  # what it requires is still in children
                read_back(earlier)
                start_ready(t)
            continue
        read_back(earlier)
        t += on_path(step.name)
        done[step.name] = t
    read_back([step.name for step in steps])
    return t


def _amdahl(run: dict) -> str:
    speedup, parts = amdahl(run)
    return (f"{speedup:.1f}x (serial {parts['serial']:.2f} s, driver in the pool's window {parts['window']:.2f} s, "
            f"parallel {parts['scan'] + parts['fork']:.1f} s)")


def profile(args) -> None:
    """See ``--profile`` in the module's docstring."""
    import cProfile
    import pstats

    primed = Path(tempfile.mkdtemp(prefix="archdiff-profile-primed-"))
    sources = acquire_sources(args.spec, primed)
    print(f"input: {' '.join(args.spec)}; code: {args.code or Path(__file__).resolve().parent.parent}")
    results = {}
    for jobs in sorted({1, args.jobs}):
        results[jobs] = _median_runs([cold_run(args.spec, primed, jobs) for _ in range(args.runs)])
    many = results[args.jobs]
    print(f"\ncold, --no-probes, medians of {args.runs} runs (seconds; CPU is what the phase costs on an idle "
          "machine, wall is what it took on this one):")
    n = args.jobs
    print(f"  {'phase':<12} {'runs in':<52} {'wall -j1':>9} {'driver CPU':>10} {'workers CPU':>11}"
          f" {f'wall -j{n}':>9} {f'driver -j{n}':>10} {f'workers -j{n}':>11}")
    one = results[1]
    for name, (wall, cpu, children) in one["phases"].items():
        where = _WHERE.get(name, "driver")
        wall_n, cpu_n, children_n = many["phases"].get(name, [0.0, 0.0, 0.0])
        print(f"  {name:<12} {where:<52} {wall:9.2f} {cpu:10.2f} {children:11.2f} {wall_n:9.2f} {cpu_n:10.2f} "
              f"{children_n:11.2f}")
    print(f"  {'total':<12} {'':<52} {one['wall']:9.2f} {one['driver_cpu']:10.2f} {one['workers_cpu']:11.2f} "
          f"{many['wall']:9.2f} {many['driver_cpu']:10.2f} {many['workers_cpu']:11.2f}")
    print(f"  pool window (-j1): {one['window']:.2f} s wall, driver CPU in it {one['window_driver_cpu']:.2f} s")
    print(f"  fork_map's work (extractor/support/forkmap.py) done in the driver: {one['fork_map_cpu']:.2f} s CPU at "
          f"-j1, {many['fork_map_cpu']:.2f} s at -j{n} (the rest went to forked children, in workers CPU)")
    print(f"  file bytes handed to workers {one['sent']:,} (a forked worker inherits them: only indexes cross its "
          f"pipe), result bytes from workers {one['received']:,}; evidence.json {one['bytes']:,}")
    print(f"serial part (driver, outside the pool and fork_map's work): -j1 {one['serial_wall']:.2f} s wall, "
          f"{one['serial_cpu']:.2f} s CPU; -j{n} {many['serial_cpu']:.2f} s CPU, forking and reading results "
          "back included (target: <= 3 s)")
    print(f"  the run's objects freed after it: {one['free_cpu']:.2f} s CPU at -j1, {many['free_cpu']:.2f} s at -j{n} "
          "(not in the serial part when the run kept them: `archdiff extract` leaves them to the exit; "
          "releases, compare and Ray tasks pay it per extraction)")
    t1, tn = one["wall"], many["wall"]
    fit = ""
    if n > 1 and t1 > tn:
        parallel = (t1 - tn) * n / (n - 1)
        serial = max(t1 - parallel, 0.0)
        fit = f"{t1 / (serial + parallel / 16):.1f}x from the -j1/-j{n} walls (S={serial:.1f} s, P={parallel:.1f} s); "
    print(f"Amdahl, 16 cores over -j1: {fit}{_amdahl(one)} from -j1's CPU seconds; {_amdahl(many)} from -j{n}'s "
          "(target: >= 6x)")

    package = next((s.root / s.root.name.rsplit("-", 1)[0] for s in sources
                    if (s.root / s.root.name.rsplit("-", 1)[0]).is_dir()), sources[0].root)
    py_files = [str(p) for p in sorted(package.rglob("*.py"))]

    def ast_n() -> None:
        with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
            list(pool.map(parse_file, py_files, chunksize=32))

    t_ast = _time(ast_n, args.runs)
    warm_cache = Path(tempfile.mkdtemp(prefix="archdiff-profile-warm-"))
    shutil.copytree(primed, warm_cache, dirs_exist_ok=True)
    options = ExtractOptions(jobs=args.jobs, cache_dir=warm_cache, probe_structs=False)
    extract_system(args.spec, options=options)
    t_warm = _time(lambda: extract_system(args.spec, options=options), args.runs)
    print(f"ast.parse of {package.name}/ ({len(py_files)} files), {args.jobs} processes: {t_ast:.2f} s")
    print(f"  cold -j{args.jobs} / ast  {tn / t_ast:6.1f}x (target: <= 4x)")
    print(f"  warm -j{args.jobs} / ast  {t_warm / t_ast:6.2f}x (target: <= 0.3x; warm {t_warm:.2f} s)")

    profiler = cProfile.Profile()
    cold_run(args.spec, primed, 1, profiler)
    profiler.dump_stats(str(args.profile_out))
    print(f"\ncProfile of one cold -j1 run's driver (saved: {args.profile_out}; cProfile slows Python code "
          "2-3x, so read it for proportions):")
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("tottime").print_stats(25)
    print("the graph steps (extractor/python/graph.py, extractor/cpp/graph.py), by cumulative time:")
    stats.sort_stats("cumulative").print_stats(r"extractor/(python|cpp)/graph\.py", 15)
    shutil.rmtree(primed, ignore_errors=True)
    shutil.rmtree(warm_cache, ignore_errors=True)


if __name__ == "__main__":
    main()
