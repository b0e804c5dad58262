#!/usr/bin/env python3
"""Cost of the guarded worker pool: a cold extraction of a real tree, this checkout against a
baseline checkout whose parsing runs in a plain ``ProcessPoolExecutor`` (main before the pool).

Each round runs every (checkout, jobs) pair once, interleaved so that a busy machine slows both
alike, each with a fresh cache (cold: nothing parsed, nothing cached) and ``--no-probes`` (the
compiler probes are the same code in both and would only add noise). Prints each wall time, the
median per pair and the ratio this/baseline per job count.

    python3 -m bench.guarded_pool_vs_baseline TREE --baseline CHECKOUT [--rounds 3] [--jobs 1 2]

TREE is a source directory, e.g. the extracted vLLM 0.10.2 sdist.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_once(checkout: Path, tree: Path, jobs: int, scratch: Path) -> float:
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        env = {**os.environ, "PYTHONPATH": str(checkout), "ARCHDIFF_CACHE": str(Path(tmp) / "cache")}
        argv = [sys.executable, "-m", "archdiff.cli", "extract", str(tree), "-o", str(Path(tmp) / "out"),
                "--cache-dir", str(Path(tmp) / "cache"), "-j", str(jobs), "--no-probes"]
        start = time.perf_counter()
        proc = subprocess.run(argv, env=env, cwd=tmp, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"{checkout} -j{jobs} failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return elapsed


def git_head(checkout: Path) -> str:
    proc = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True)
    return proc.stdout.strip() or "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", type=Path)
    parser.add_argument("--baseline", type=Path, required=True,
                        help="a checkout of archdiff to compare with (e.g. a git worktree of the commit before)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--scratch", type=Path, default=None, help="where the fresh caches go (default: TMPDIR)")
    args = parser.parse_args()
    checkouts = {"guarded": ROOT, "baseline": args.baseline.resolve()}
    print(f"tree {args.tree}; guarded {ROOT} @ {git_head(ROOT)}; baseline {checkouts['baseline']} "
          f"@ {git_head(checkouts['baseline'])}; load average {os.getloadavg()[0]:.1f}", flush=True)
    times: dict[tuple[str, int], list[float]] = {(name, j): [] for name in checkouts for j in args.jobs}
    for round_no in range(args.rounds):
        order = list(checkouts.items())
        if round_no % 2:
            order.reverse()  # neither side always runs first
        for jobs in args.jobs:
            for name, checkout in order:
                elapsed = run_once(checkout, args.tree, jobs, args.scratch)
                times[(name, jobs)].append(elapsed)
                print(f"round {round_no + 1} -j{jobs} {name:8s} {elapsed:7.1f} s "
                      f"(load {os.getloadavg()[0]:.1f})", flush=True)
    print()
    for jobs in args.jobs:
        guarded = statistics.median(times[("guarded", jobs)])
        baseline = statistics.median(times[("baseline", jobs)])
        print(f"-j{jobs}: guarded median {guarded:.1f} s, baseline median {baseline:.1f} s, "
              f"ratio guarded/baseline {guarded / baseline:.3f}")


if __name__ == "__main__":
    main()
