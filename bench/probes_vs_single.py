#!/usr/bin/env python3
"""Struct probes in batches against one probe per header, on the same tree in the same run.

Each run extracts SOURCE... cold (a fresh copy of TEMPLATE, the cache holding only downloads:
sdists, clones, wheels' include directories; probe results are never cached by the CLI) once with
``structs_batch_size`` 1 (every header alone, as before batches) and once with the default, RUNS
times alternating, and prints the medians of the structs step and of the whole run, their ratio,
the load average, and whether the two evidence files are byte-identical.

    python3 -m bench.probes_vs_single --template DIR [--runs 3] [--headers-from pypi:torch==2.8.0 ...] SOURCE...
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from extractor.buildsettings import BuildSettings
from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system


def run_once(sources: list[str], template: Path, batch_size: int | None, headers_from: tuple[str, ...],
             name: str, version: str) -> tuple[float, float, bytes]:
    """(structs seconds, total seconds, evidence bytes) of one cold extraction."""
    with tempfile.TemporaryDirectory(prefix="bench-probes-") as tmp:
        cache = Path(tmp) / "cache"
        shutil.copytree(template, cache, symlinks=True)
        os.environ["ARCHDIFF_CACHE"] = str(cache)
        extra = {} if batch_size is None else {"structs_batch_size": batch_size}
        options = ExtractOptions(jobs=2, extra=extra, build=BuildSettings(headers_from=headers_from))
        started = time.perf_counter()
        done = extract_system(sources, options=options, name=name, version=version)
        return done.timings.get("structs", 0.0), time.perf_counter() - started, done.data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--template", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--headers-from", action="append", default=[])
    parser.add_argument("--name", default="")
    parser.add_argument("--version", default="")
    args = parser.parse_args()
    rows: dict[str, list[tuple[float, float]]] = {"alone": [], "batches": []}
    outputs: dict[str, bytes] = {}
    for _ in range(args.runs):
        for label, size in (("alone", 1), ("batches", None)):
            structs, total, data = run_once(args.sources, args.template, size, tuple(args.headers_from),
                                            args.name, args.version)
            rows[label].append((structs, total))
            outputs.setdefault(label, data)
            print(f"  {label:8s} structs {structs:7.1f} s  total {total:7.1f} s  load {os.getloadavg()[0]:.1f}",
                  flush=True)
    med = {k: (statistics.median(s for s, _ in v), statistics.median(t for _, t in v)) for k, v in rows.items()}
    print(f"structs step, one probe per header: {med['alone'][0]:7.1f} s (run {med['alone'][1]:.1f} s), "
          f"median of {args.runs}")
    print(f"structs step, batches             : {med['batches'][0]:7.1f} s (run {med['batches'][1]:.1f} s)")
    print(f"ratio                             : {med['alone'][0] / max(med['batches'][0], 1e-9):.2f}x faster; "
          f"evidence {'byte-identical' if outputs['alone'] == outputs['batches'] else 'DIFFERENT'}")
    return 0 if outputs["alone"] == outputs["batches"] else 1


if __name__ == "__main__":
    sys.exit(main())
