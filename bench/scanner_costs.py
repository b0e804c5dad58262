#!/usr/bin/env python3
"""Where the workers' CPU goes: the parse and each step's scanner, per language, in one process.

    python3 -m bench.scanner_costs [DIR] [--runs 3] [--code DIR] [--collector on]

DIR defaults to the unpacked vLLM 0.10.2 sdist the real-input tests use. Every file of the tree
is read once; then, per run, each file is parsed once and every step's scanner runs on it, in
the order and on the tree a worker gives them (``extractor/run/scan.py``), with the collector
paused during the file as a worker has it (``--collector on``: left on, as workers had it before
December 4, to see which parts its collections fell on). Each part's CPU seconds are summed per language:
``parse`` (ast, libcst for newer syntax, tree-sitter), ``index`` (the shared walk of a Python
module, :mod:`extractor.python.index`, which the first Python scanner would otherwise pay),
each step's scanner, and ``encode`` (the facts to msgpack and zlib, what a worker sends back).
Prints the medians of ``--runs`` and each part's share; never asserts. ``--code DIR`` measures
another checkout's scanners (a before/after table) with this benchmark.

A cold extraction's workers cost more than this sum: they receive the files and send the facts
through pipes, and on a two-core machine two workers slow each other down (shared caches); the
run log's ``workers_cpu_s`` is that figure.
"""

from __future__ import annotations

import argparse
import ast
import collections
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if "--code" in sys.argv:  # measure another checkout's code (the benchmark itself stays this one)
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--code") + 1]).resolve()))
sys.path.insert(1 if "--code" in sys.argv else 0, str(Path(__file__).resolve().parent.parent))

from extractor.acquire.inventory import list_files  # noqa: E402
from extractor.context import SourceTree  # noqa: E402
from extractor.model import Language, ParsedFile  # noqa: E402
from extractor.python.index import module_index  # noqa: E402
from extractor.run.facts import encode_result, pack_result  # noqa: E402
from extractor.run.scan import parse_python  # noqa: E402
from extractor.steps import STEPS  # noqa: E402

try:
    from extractor.cpp.parse import grammar_language
except ImportError:  # --code of a checkout from before C++ files that launch kernels were read as CUDA
    def grammar_language(data: bytes, language: Language) -> Language:
        return language

DEFAULT_TREE = Path.home() / ".cache" / "archdiff-tests" / "vllm-0.10.2"
Costs = collections.Counter  # (part, language) -> CPU seconds


def _native_parser(language: Language) -> Callable[[bytes], Any] | None:
    """The tree-sitter parse a worker runs for a C/C++/CUDA, Rust or Go file (None for the others)."""
    if language in (Language.CPP, Language.CUDA):
        from extractor.cpp.parse import parse_source

        return lambda data: parse_source(data, language)
    if language is Language.RUST:
        from extractor.rust.parse import parse_source as parse_rust

        return parse_rust
    if language is Language.GO:
        from extractor.go.parse import parse_source as parse_go

        return parse_go
    return None


def _scan_one(language: Language, data: bytes, costs: Costs) -> None:
    """Parse one file and run every scanner of its language on it, adding each part's CPU to ``costs``."""
    clock = time.process_time
    lang = language.value
    if language is Language.CPP:  # a C++ file that launches kernels is read as a worker reads it
        language = grammar_language(data, language)
    start = clock()
    tree = fallback = None
    if language is Language.PYTHON:
        tree, fallback, _diagnostics = parse_python(data)
    elif (parse := _native_parser(language)) is not None:
        tree = parse(data)
    costs["parse", lang] += clock() - start
    if isinstance(tree, ast.Module):
        start = clock()
        module_index(tree)
        costs["index", lang] += clock() - start
    facts: dict[str, Any] = {}
    for step in STEPS:
        scanner = step.scanners.get(language)
        if scanner is None or (language is Language.PYTHON and tree is None
                               and not (fallback is not None and step.python_fallback)):
            continue
        start = clock()
        try:
            value = scanner(ParsedFile(language, data, tree if tree is not None else fallback))
        except Exception:  # noqa: BLE001 (a worker reports it as a diagnostic; here it only costs time)
            value = None
        costs[step.name, lang] += clock() - start
        if value is not None:
            facts[step.name] = value
    start = clock()
    pack_result(encode_result(data.count(b"\n"), [], facts))
    costs["encode", lang] += clock() - start


def measure(files: list[tuple[Language, bytes]], pause_collector: bool = True) -> Costs:
    """One pass over ``files``: CPU seconds per (part, language)."""
    costs: Costs = collections.Counter()
    for language, data in files:
        if pause_collector:  # as in a worker (extractor/run/workerpool.py): paused during the file
            gc.disable()
        try:
            _scan_one(language, data, costs)
        finally:
            gc.enable()
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", nargs="?", type=Path, default=DEFAULT_TREE)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--code", help="measure the extractor of this checkout")
    parser.add_argument("--collector", choices=("paused", "on"), default="paused",
                        help="the cyclic collector during each file (workers pause it)")
    args = parser.parse_args()
    root = args.tree.resolve()
    entries, _ = list_files(SourceTree("", str(root), "dir", root))
    files = [(e.language, (root / e.rel).read_bytes()) for e in entries]
    by_language = collections.Counter(language.value for language, _ in files)
    print(f"{root}: {len(files)} files ({', '.join(f'{n} {k}' for k, n in sorted(by_language.items()))}); "
          f"code: {Path(sys.modules['extractor'].__file__).parent.parent}; collector {args.collector}")
    runs = [measure(files, args.collector == "paused") for _ in range(args.runs)]
    parts = sorted({key for run in runs for key in run}, key=lambda key: -statistics.median(r[key] for r in runs))
    medians = {key: statistics.median(run[key] for run in runs) for key in parts}
    total = statistics.median(sum(run.values()) for run in runs)
    print(f"\nCPU seconds, median of {args.runs} runs in one process; total {total:.2f}")
    print(f"{'part':<12} {'language':<8} {'CPU s':>7} {'share':>6}")
    for (part, language), seconds in medians.items():
        if seconds >= 0.005:
            print(f"{part:<12} {language:<8} {seconds:7.2f} {seconds / total:6.1%}")


if __name__ == "__main__":
    main()
