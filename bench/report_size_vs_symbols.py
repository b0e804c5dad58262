#!/usr/bin/env python3
"""Report size and memory of ``archdiff compare`` on generated evidence of N symbols per side.

Generates two releases of one system (every class renamed between them: N removed, N added, and
N/20 metrics each way), runs the real CLI on them under /usr/bin/time -v, and prints the wall
time, peak RSS and the size of each report. The caps (comparator.compare.LIST_CAP, the graph view's
MAX_NODES/MAX_EDGES, the crosswalk's and the rename search's bounds) keep the reports megabytes.

    python3 -m bench.report_size_vs_symbols [N]      # default 100000
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def bundle(n: int, prefix: str, version: str) -> str:
    from extractor.evidence.write import dumps_bundle
    from extractor.evidence.read import Evidence, Graph, SystemName, evidence_json
    from extractor.model import Edge, EdgeKind, Node, NodeKind
    from extractor.telemetry.records import MetricDefinition, MetricType

    nodes, edges = [], []
    for i in range(n):
        module, path = f"py:pkg.m{i // 50}", f"pkg/m{i // 50}.py"
        if i % 50 == 0:
            nodes.append(Node(module, NodeKind.MODULE, f"m{i // 50}", module[3:], "python", path, 0))
        cls = f"{module}.{prefix}{i}"
        nodes.append(Node(cls, NodeKind.CLASS, f"{prefix}{i}", cls[3:], "python", path, i % 50 + 1,
                          doc="A generated class " * 4, signature="(self, a, b)"))
        edges.append(Edge(module, cls, EdgeKind.CONTAINS, path, i % 50 + 1))
        edges.append(Edge(cls, module, EdgeKind.CALLS, path, i % 50 + 1))
    metrics = tuple(MetricDefinition("m.py", i + 1, f"{prefix.lower()}_requests_{i}_total", MetricType.COUNTER, "help",
                                     (), (), "", "python", False, (f"{prefix.lower()}_requests_{i}_total",))
                    for i in range(n // 20))
    records = {"layers": (), "structs": (), "metrics": metrics, "thresholds": (), "concepts": ()}
    ev = Evidence(SystemName("generated", version), (), Graph(tuple(sorted(nodes, key=lambda x: x.id)), tuple(edges)),
                  records, (), {"files": {"python": n // 50}})
    return dumps_bundle(evidence_json(ev))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n", nargs="?", type=int, default=100_000, help="symbols per side (default 100000)")
    n = parser.parse_args().n
    with tempfile.TemporaryDirectory() as tmp:
        old, new, out = Path(tmp) / "old.json", Path(tmp) / "new.json", Path(tmp) / "out"
        old.write_text(bundle(n, "C", "1"), encoding="utf-8")
        new.write_text(bundle(n, "D", "2"), encoding="utf-8")
        done = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "archdiff.cli", "compare", str(old),
                               str(new), "-o", str(out)], capture_output=True, text=True, cwd=ROOT)
        wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", done.stderr)
        hours, minutes, seconds = (float(g) if g else 0.0 for g in wall.groups())
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1)) / 1024
        print(f"evidence : {n:,} symbols per side, {old.stat().st_size / 1e6:.1f} MB each")
        print(f"compare  : exit {done.returncode}, {hours * 3600 + minutes * 60 + seconds:.1f} s, peak RSS {rss:.0f} MB")
        for report in sorted(out.glob("report.*")):
            print(f"{report.name:12s}: {report.stat().st_size / 1e6:.2f} MB")
        return done.returncode


if __name__ == "__main__":
    sys.exit(main())
