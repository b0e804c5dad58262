"""Reports stay bounded whatever the evidence holds: lists in the findings are cut (and say so),
the graph view is sampled (and says so), the layer matrix keeps its most connected roles.

The caps are lowered here so that a generated bundle of a few thousand symbols crosses them;
bench/report_size_vs_symbols.py measures the same on 100,000 symbols with the shipped caps.
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from archdiff.cli import cli
from comparator import compare, graphview
from comparator.kinds import graph as graph_kind
from extractor.evidence.write import dumps_bundle
from extractor.evidence.read import evidence_json, load_evidence
from extractor.layers.records import LayerDependency
from extractor.model import Edge, EdgeKind, Node, NodeKind
from tests.compare_support import evidence, layer, metric

SYMBOLS = 3_000


def generated(version: str, prefix: str):
    """A module per 50 classes, each class calling the next; a hundred layers all depending on each other."""
    nodes, edges = [], []
    for i in range(SYMBOLS):
        module = f"py:pkg.m{i // 50}"
        if i % 50 == 0:
            nodes.append(Node(module, NodeKind.MODULE, f"m{i // 50}", module[3:], "python", f"pkg/m{i // 50}.py", 0))
        cls = f"{module}.{prefix}{i}"
        nodes.append(Node(cls, NodeKind.CLASS, f"{prefix}{i}", cls[3:], "python", f"pkg/m{i // 50}.py", i % 50 + 1))
        edges.append(Edge(module, cls, EdgeKind.CONTAINS, f"pkg/m{i // 50}.py", i % 50 + 1))
        edges.append(Edge(cls, module, EdgeKind.CALLS, f"pkg/m{i // 50}.py", i % 50 + 1))
    roles = [f"role{r}" for r in range(100)]
    layers = [layer(role, [f"pkg/m{r}.py"]) for r, role in enumerate(roles)]
    layers = [l.__class__(**{**{f: getattr(l, f) for f in l.__dataclass_fields__},
                             "depends_on": tuple(LayerDependency(other, 1 + r, "pkg/x.py", 1, "py:a", "py:b", "calls")
                                                 for r, other in enumerate(roles) if other != l.role)})
              for l in layers]
    metrics = [metric(f"{prefix.lower()}_metric_{i}_total") for i in range(1_200)]
    return evidence("gen", version, nodes=sorted(nodes, key=lambda n: n.id), edges=edges, layers=layers,
                    metrics=metrics)


def test_a_big_release_comparison_is_cut_to_size_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(compare, "LIST_CAP", 500)
    monkeypatch.setattr(graphview, "MAX_NODES", 1_000)
    monkeypatch.setattr(graphview, "MAX_EDGES", 2_000)
    monkeypatch.setattr(graph_kind, "MAX_MATRIX_ROLES", 20)
    paths = []
    for version, prefix in (("1", "C"), ("2", "D")):  # every class renamed: 3,000 removed and 3,000 added
        path = tmp_path / f"v{version}.json"
        path.write_text(dumps_bundle(evidence_json(generated(version, prefix))), encoding="utf-8")
        assert load_evidence(path).graph.nodes  # a valid bundle
        paths.append(path)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["compare", *map(str, paths), "-o", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    symbols = report["release"]["symbols"]
    assert len(symbols["removed"]) == len(symbols["added"]) == 500
    assert report["capped"]["limit"] == 500
    assert report["capped"]["lists"]["release.symbols.removed"] == SYMBOLS
    assert report["capped"]["lists"]["telemetry.a.metrics"] == 1_200
    # the differences and the takeaways count everything, not the rows kept
    assert report["differences"]["any"] >= 2 * SYMBOLS
    assert any(f"{SYMBOLS:,} symbols added" in t["text"] for t in report["takeaways"])
    # the matrix keeps the most connected roles
    assert len(report["graph"]["a"]["layer_matrix"]) == 20
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Cut to size" in page and "the graph is too large to embed whole" in page
    assert f"1,000 best connected of {SYMBOLS + SYMBOLS // 50:,} symbols" in page
    assert "**Cut to size:**" in (out / "report.md").read_text(encoding="utf-8")
    # bounded: megabytes at most, whatever the evidence's size
    assert (out / "report.json").stat().st_size < 3_000_000 and len(page) < 3_000_000


def test_sampling_keeps_the_best_connected_nodes_and_their_edges():
    ev = generated("1", "C")
    nodes, edges = graphview.sample(ev, max_nodes=10, max_edges=1_000)
    ids = {n.id for n in nodes}
    assert len(nodes) == 10 and all(n.kind is NodeKind.MODULE for n in nodes)  # 51 edges each
    assert all(e.source in ids and e.target in ids for e in edges)
    view = graphview.compact_graph(ev)
    assert "sampled" not in view  # 3,060 nodes: within the shipped cap, shown whole
