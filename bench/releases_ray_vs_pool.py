#!/usr/bin/env python3
"""Release tracking measured on real releases: what the fact cache saves from one release to the
next, and the local process pool against Ray on the same releases, with their outputs compared.

    python3 -m bench.releases_ray_vs_pool [SPEC] [--from V] [--to V] [--jobs 2] [--ray-cpus 1,2] [--runs 3]

SPEC defaults to pypi:vllm, from 0.10.0 to 0.10.2 (four releases). Every timed run starts from a
fact cache with no facts and no bundles, but with the sources already downloaded and unpacked, so
network time is not measured. Prints times and ratios, never asserts: this machine is shared.

  next release   extract the second-newest release (untimed), then time the newest: only the files
                 that changed are parsed (bench/extract_vs_baselines.py prints this row too)
  local          `archdiff releases` with the local process pool (-j JOBS)
  ray (N cpus)   the same with --executor ray on a local Ray runtime of N CPUs; its evidence and
                 reports are compared byte for byte with the local run's
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path


from extractor.context import ExtractOptions
from extractor.run.executor import LOCAL
from extractor.run.pipeline import acquire_sources, extract_system
from extractor.acquire.sources import default_cache_dir


def prime_sources(specs: list[list[str]], into: Path) -> None:
    """Download and unpack every release once (into the user's cache), then copy the sources
    without any facts into ``into``."""
    for release in specs:
        acquire_sources(release, default_cache_dir())
    shutil.copytree(default_cache_dir(), into, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("facts.sqlite*", "structs-probe"))


def fresh_cache(primed: Path) -> Path:
    cache = Path(tempfile.mkdtemp(prefix="archdiff-bench-releases-"))
    shutil.copytree(primed, cache, dirs_exist_ok=True)
    return cache


def next_release_row(previous: list[str], newest: list[str], primed: Path, jobs: int, runs: int) -> dict:
    """Median seconds to extract ``newest`` cold and with ``previous``'s facts cached."""
    filled = fresh_cache(primed)
    extract_system(previous, options=ExtractOptions(jobs=jobs, cache_dir=filled))
    cold, after, counts = [], [], {}
    scan: dict[str, list[float]] = {"cold": [], "after": []}
    for _ in range(runs):
        for samples, base, name in ((cold, primed, "cold"), (after, filled, "after")):
            cache = fresh_cache(base)
            start = time.perf_counter()
            result = extract_system(newest, options=ExtractOptions(jobs=jobs, cache_dir=cache))
            samples.append(time.perf_counter() - start)
            scan[name].append(result.timings.get("scan", 0.0))
            if base is filled:
                counts = result.cache
            shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(filled, ignore_errors=True)
    return {"cold": statistics.median(cold), "after": statistics.median(after), "parsed": counts.get("misses", 0),
            "cached": counts.get("hits", 0), "scan_cold": statistics.median(scan["cold"]),
            "scan_after": statistics.median(scan["after"])}


def track(spec: str, since: str, until: str, out: Path, primed: Path, executor, jobs: int) -> float:
    """Seconds of one `archdiff releases` run from a copy of ``primed`` (sources, no facts)."""
    from tracking.run import Selection, track_releases

    cache = fresh_cache(primed)
    try:
        start = time.perf_counter()
        track_releases(spec, out, Selection(since, until), options=ExtractOptions(jobs=jobs, cache_dir=cache),
                       executor=executor)
        return time.perf_counter() - start
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def same_outputs(a: Path, b: Path) -> tuple[int, list[str]]:
    """(files compared, files that differ) among the evidence and reports of two OUT directories."""
    def files(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
                if p.is_file() and p.parent != root}  # evidence and reports, not index/state
    fa, fb = files(a), files(b)
    return len(fa), sorted(k for k in set(fa) | set(fb) if fa.get(k) != fb.get(k))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spec", nargs="?", default="pypi:vllm")
    parser.add_argument("--from", dest="since", default="0.10.0")
    parser.add_argument("--to", dest="until", default="0.10.2")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--ray-cpus", default="2", help="comma-separated CPU counts of the local Ray runtime")
    parser.add_argument("--runs", type=int, default=1, help="runs of every row (medians)")
    parser.add_argument("--skip-ray", action="store_true")
    args = parser.parse_args()

    from tracking.listing import list_releases
    from tracking.versions import select

    releases = select(list_releases(args.spec).releases, since=args.since, until=args.until)
    print(f"input: {args.spec} {', '.join(r.name for r in releases)}")
    work = Path(tempfile.mkdtemp(prefix="archdiff-bench-releases-work-"))
    primed = work / "primed"
    prime_sources([list(r.specs) for r in releases], primed)

    if len(releases) >= 2:
        row = next_release_row(list(releases[-2].specs), list(releases[-1].specs), primed, args.jobs, args.runs)
        print(f"next release, {args.jobs} jobs (medians of {args.runs}):")
        print(f"  {releases[-1].name} cold                         {row['cold']:7.2f} s")
        print(f"  {releases[-1].name} after {releases[-2].name} is cached      {row['after']:7.2f} s   "
              f"({row['parsed']:,} files parsed, {row['cached']:,} from the cache)")
        print(f"  after / cold                           {row['after'] / row['cold']:7.2f}x   (reading and parsing "
              f"files: {row['scan_after']:.1f} s against {row['scan_cold']:.1f} s; the rest is every evidence kind "
              "built over the whole release, which no cache spares)")

    # Local and Ray runs alternate, each from an empty fact cache, so a change in the machine's load
    # falls on both sides; the medians are compared.
    ray_cpus = [] if args.skip_ray else [int(c) for c in args.ray_cpus.split(",") if c.strip()]
    times: dict[str, list[float]] = {"local": [], **{f"ray{c}": [] for c in ray_cpus}}
    starts: dict[int, list[float]] = {c: [] for c in ray_cpus}
    differs: dict[int, set[str]] = {c: set() for c in ray_cpus}
    compared = 0
    for run in range(args.runs):
        local_out = work / f"out-local-{run}"
        times["local"].append(track(args.spec, args.since, args.until, local_out, primed, LOCAL, args.jobs))
        for cpus in ray_cpus:
            import ray

            from extractor.run.raytasks import RayExecutor

            start = time.perf_counter()
            ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
            starts[cpus].append(time.perf_counter() - start)
            out = work / f"out-ray-{cpus}-{run}"
            times[f"ray{cpus}"].append(track(args.spec, args.since, args.until, out, primed,
                                             RayExecutor(), args.jobs))
            ray.shutdown()
            compared, differ = same_outputs(local_out, out)
            differs[cpus].update(differ)
    t_local = statistics.median(times["local"])
    print(f"archdiff releases, {len(releases)} releases from an empty fact cache (medians of {args.runs}):")
    print(f"  local process pool, {args.jobs} jobs          {t_local:7.2f} s   "
          f"(runs: {', '.join(f'{t:.1f}' for t in times['local'])})")
    for cpus in ray_cpus:
        t_ray = statistics.median(times[f"ray{cpus}"])
        print(f"  ray, local runtime of {cpus} CPUs          {t_ray:7.2f} s   (ray / local {t_ray / t_local:.2f}x; "
              f"runs: {', '.join(f'{t:.1f}' for t in times[f'ray{cpus}'])}; "
              f"{statistics.median(starts[cpus]):.1f} s more to start Ray)")
        differ = sorted(differs[cpus])
        print(f"    evidence and reports: {compared} files in each run, "
              + ("byte-identical to the local run" if not differ else f"{len(differ)} DIFFER: {', '.join(differ[:5])}"))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
