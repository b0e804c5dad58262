#!/usr/bin/env python3
"""How fast ``archdiff graph`` answers: the cold index build, then warm queries.

Builds the index of EVIDENCE into a fresh cache (timed in-process: read and validate the bundle,
build, store), then runs each query through the real CLI (a new Python process each time, as a user
runs it; the median of --repeat runs) and in-process (index read from the cache + the query). The
default queries are the vLLM 0.10.2 ones of docs/graph-queries.md. Last, the release report's walk
(:func:`extractor.evidence.query.reached_by`): the public Python API that reaches every struct a C++
signature names (``uses`` targets) and every ``binds`` target, in one walk and in one walk per target.

    python3 -m bench.graph_queries EVIDENCE [--repeat 5] [--query 'reach NODE --to-kind kernel' ...]
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VLLM_QUERIES = (
    "reach py:vllm._custom_ops.paged_attention_v1 --to-kind kernel",
    "path SiluAndMul.forward_cuda vllm::act_and_mul_kernel",
    "callers cpp:paged_attention_v1 --depth 3 --language python",
    "callees py:vllm.entrypoints.llm.LLM.generate --depth 2",
    "find *.LLM.* --kind method --api public",
)


def in_process(index, words: list[str]):
    from extractor.evidence import query

    command, node, rest = words[0], words[1], words[2:]
    options = dict(zip([w.lstrip("-").replace("-", "_") for w in rest[::2]], rest[1::2]))
    if command == "reach":
        return query.reach(index, node, options["to_kind"], languages=[options["language"]] if "language" in options else ())
    if command == "path":
        return query.shortest_paths(index, node, rest[0])
    if command in ("callers", "callees"):
        return query.walk(index, node, backwards=command == "callers", depth=int(options.get("depth", 1)),
                          languages=[options["language"]] if "language" in options else ())
    return query.find(index, node, kinds=[options["kind"]] if "kind" in options else (), api=options.get("api", ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("evidence", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--query", action="append", help="a query as typed after `archdiff graph` without EVIDENCE")
    args = parser.parse_args()
    from extractor.evidence.index import load_index

    queries = args.query or list(VLLM_QUERIES)
    with tempfile.TemporaryDirectory(prefix="archdiff-graphq-") as tmp:
        cache = Path(tmp)
        started, cpu = time.perf_counter(), time.process_time()
        load_index(args.evidence, cache)
        cold, cold_cpu = time.perf_counter() - started, time.process_time() - cpu
        index_bytes = sum(p.stat().st_size for p in (cache / "graph-index").iterdir())
        started = time.perf_counter()
        index = load_index(args.evidence, cache)
        warm_read = time.perf_counter() - started
        print(f"{args.evidence}: {len(index.ids)} nodes, {len(index.edge_source)} edges; index {index_bytes / 1e6:.1f} MB")
        print(f"cold index build (read + validate + build + store): {cold:.2f} s wall, {cold_cpu:.2f} s CPU; "
              f"warm index read: {warm_read:.3f} s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print(f"{'query':<70} {'answers':>7} {'in-process s':>12} {'CLI wall s':>10} {'CLI cpu s':>9}")
        for text in queries:
            words = shlex.split(text)
            started = time.perf_counter()
            answer = in_process(load_index(args.evidence, cache), words)
            inside = time.perf_counter() - started
            count = len(getattr(answer, "hits", getattr(answer, "paths", getattr(answer, "nodes", ()))))
            walls, cpus = [], []
            for _ in range(args.repeat):
                command = [sys.executable, "-m", "archdiff.cli", "graph", words[0], str(args.evidence), *words[1:],
                           "--cache-dir", str(cache)]
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                proc = subprocess.run(command, capture_output=True, text=True)
                walls.append(time.perf_counter() - started)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
                if proc.returncode != 0:
                    print(f"{text}: exit {proc.returncode}: {proc.stderr.strip()}", file=sys.stderr)
                    return 1
            print(f"{text:<70} {count:>7} {inside:>12.3f} {statistics.median(walls):>10.3f} "
                  f"{statistics.median(cpus):>9.3f}")
        print_reach(load_index(args.evidence, cache), args.repeat)
    return 0


def print_reach(index, repeat: int) -> None:
    """CPU seconds (median of ``repeat``) of the report's walk to the public Python API, all targets
    of a kind at once and one target at a time."""
    from extractor.evidence.query import impact_seeds, public_python, reached_by

    public = public_python(index)
    for kind in ("uses", "binds"):
        code = index.texts.index(kind) if kind in index.texts else -1
        nodes = sorted({index.edge_target[e] for e in range(len(index.edge_kind)) if index.edge_kind[e] == code})
        targets = [(n, impact_seeds(index, n)) for n in nodes]
        times = {}
        for how, run in (("one walk", lambda: [reached_by(index, targets, public)]),
                         ("a walk per target", lambda: [reached_by(index, [t], public) for t in targets])):
            cpus = []
            for _ in range(repeat):
                started = time.process_time()
                answers = [r for batch in run() for r in batch]
                cpus.append(time.process_time() - started)
            times[how] = statistics.median(cpus)
        named = sum(1 for r in answers if r.hits)
        print(f"reached_by: {len(nodes)} {kind} targets, {named} reached from the public Python API: "
              f"{times['one walk']:.3f} s CPU in one walk, {times['a walk per target']:.3f} s in one per target")


if __name__ == "__main__":
    sys.exit(main())
