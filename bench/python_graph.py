#!/usr/bin/env python3
"""A graph step alone, timed over a tree's facts: the Python graph
(:func:`extractor.python.graph.extract_python_graph`), or the C/C++ graph with ``--step cpp``
(:func:`extractor.cpp.graph.extract_cpp_graph`), or the struct probes with ``--step structs``
(:func:`extractor.structs.extract_structs`: planning in this process, the compilers its children;
each run with a probe cache of its own, so every run plans and compiles).

Scans SOURCE with that step's scanner only (facts cached in --cache-dir: a second call only reads
them), then runs the step --runs times in this process with the cyclic collector off, as the
pipeline runs its steps, and prints each run's CPU seconds (this process: the driver, or the
step's own child when the pipeline forks the step), their median, the median CPU of the children
the step forks (``--jobs`` above 1), and a digest of what the step returns (nodes, edges,
diagnostics, stats, what it shares). Equal digests from two code trees: the same evidence from
this step. On a shared machine, alternate the trees (PYTHONPATH) and compare medians of CPU
seconds, not wall times.

    PYTHONPATH=TREE python3 -m bench.python_graph SOURCE [--step cpp|structs] [--cache-dir DIR] [--runs 3] [--jobs 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import hashlib
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

from extractor import cpp, python, structs
from extractor.context import Context, ExtractOptions
from extractor.model import Contribution, Step
from extractor.run.pipeline import extract_system
from extractor.run.workplace import LocalWorkplace
from extractor.structs.header import ProbeTimings


class _FactsWithoutMemo:
    """The fact store, less the whole-bundle memo (its bytes and JSON entries): a second call
    would otherwise take the bundle from it and run no step."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def get_bytes(self, key: str) -> None:
        return None

    def put_compressed(self, key: str, compressed: bytes) -> None:
        pass

    def get_json(self, key: str) -> None:
        return None

    def put_json(self, key: str, value: Any) -> None:
        pass


class _EveryRun(LocalWorkplace):
    """This machine's pool and fact cache, every step run each time."""

    def open_store(self, cache_dir: Path) -> Any:
        return _FactsWithoutMemo(super().open_store(cache_dir))


STEPS = {"python": python.STEP, "cpp": cpp.STEP, "structs": None}  # structs: its STEP is built on first use


def step_context(source: str, cache_dir: Path, jobs: int, step: Step = python.STEP) -> Context:
    """The pipeline's context once ``step``'s scanner has run over ``source`` (no other step)."""
    captured: list[Context] = []

    def capture(ctx: Context) -> Contribution:
        captured.append(ctx)
        return step.extract(ctx)

    options = ExtractOptions(jobs=jobs, cache_dir=cache_dir, probe_structs=False)
    # in this process (a forkable step would run, and capture, in a child of its own; a background
    # one in a thread)
    only = dataclasses.replace(step, extract=capture, forkable=False, background=False)
    extract_system([source], options=options, steps=[*step.requires, only], executor=_EveryRun())
    return captured[0]


def digest(contribution: Contribution) -> str:
    """A digest of everything the step hands on, in its order; a set's members sorted (their order is the
    hash seed's, so a repr of one differed from one process to the next and no two trees compared)."""
    h = hashlib.sha256()
    # the struct probes share their timings, which change from run to run: their records instead
    shared = contribution.records if isinstance(contribution.shared, ProbeTimings) else contribution.shared
    for part in (contribution.nodes, contribution.edges, contribution.diagnostics,
                 sorted(contribution.stats.items()), shared):
        h.update(msgspec.json.encode(msgspec.to_builtins(part, order="sorted", enc_hook=repr)))
    return h.hexdigest()[:16]


def _children_cpu() -> float:
    """CPU seconds of this process's children that have ended: the step's fork_map children
    (extractor.support.forkmap reaps them before it returns)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source")
    parser.add_argument("--step", choices=sorted(STEPS), default="python")
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/archdiff-bench-python-graph"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    step = STEPS[args.step] or structs.STEP
    ctx = step_context(args.source, args.cache_dir, args.jobs, step)
    seconds, children, digests = [], [], set()
    gc.disable()
    for _ in range(args.runs):
        if step.name == structs.STEP.name:  # probes on, their results cached nowhere a run reads
            fresh = Path(tempfile.mkdtemp(prefix="bench-structs-", dir=args.cache_dir))
            ctx = dataclasses.replace(ctx, options=dataclasses.replace(ctx.options, probe_structs=True,
                                                                       cache_dir=fresh))
        start, forked = time.process_time(), _children_cpu()
        contribution = step.extract(ctx)
        seconds.append(time.process_time() - start)
        children.append(_children_cpu() - forked)
        digests.add(digest(contribution))
        del contribution
    gc.enable()
    print(f"{args.step} graph: CPU s {' '.join(f'{s:.3f}' for s in seconds)}, median {statistics.median(seconds):.3f};"
          f" forked children's CPU s, median {statistics.median(children):.3f}; digest {' '.join(sorted(digests))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
