"""Graph statistics: symbols and edges by kind, the most depended-upon symbols, and the
layer-to-layer dependency matrix with its cycles.

The matrix and each cell's example edge are the layers step's (``Layer.depends_on``), read, never
counted again.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx

from comparator.kind import Counts, EvidenceKind, Takeaway, loc, plural
from comparator.kinds.graph import render
from extractor.evidence.read import Evidence
from extractor.model import EdgeKind, NodeKind
from extractor.layers.records import LAYERS

CENTRALITY_EDGES = frozenset({EdgeKind.CALLS, EdgeKind.INHERITS, EdgeKind.IMPORTS})
TOP_CENTRAL = 10
# Roles in the matrix: a taxonomy has about twenty; evidence with thousands of layers (tampered or
# generated) keeps the most connected ones, so the matrix stays a table a page can show.
MAX_MATRIX_ROLES = 60


class GraphKind(EvidenceKind):
    key = "graph"
    title = "Graph statistics"

    def summarize(self, evidence: Evidence) -> dict[str, Any]:
        return graph_statistics(evidence)

    def compare(self, a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
        return {"a": a, "b": b}

    def count(self, section: Mapping[str, Any], release: Mapping[str, Any] | None) -> Counts:
        if release:
            return Counts()  # a release's symbols are counted one by one by the symbols kind
        ga, gb = section["a"], section["b"]
        return Counts(int(ga["nodes_by_kind"] != gb["nodes_by_kind"] or ga["edges_by_kind"] != gb["edges_by_kind"]))

    def takeaways(self, section: Mapping[str, Any], release: Mapping[str, Any] | None,
                  labels: Sequence[str]) -> list[Takeaway]:
        la, lb = labels
        ga, gb = section["a"], section["b"]

        def graph(g: Mapping[str, Any]) -> str:
            kinds = g["nodes_by_kind"]
            return (f"{g['nodes']:,} symbols ({kinds.get('class', 0):,} classes, {kinds.get('function', 0):,} "
                    f"functions, {kinds.get('method', 0):,} methods) across {g['edges']:,} edges")

        out = [Takeaway(f"Symbol graph: {la} maps {graph(ga)}, compared with {graph(gb)} in {lb}.", "graph")]
        for side, label, g in (("a", la, ga), ("b", lb, gb)):
            if g["central"]:
                top = g["central"][0]
                out.append(Takeaway(f"Most depended-upon symbol in {label}: {top['name']} ({top['kind']}, "
                                    f"{plural(top['dependents'], 'dependent')}).", f"graph-{side}"))
            if g["layer_cycles"]:
                biggest = max(g["layer_cycles"], key=lambda c: len(c["layers"]))
                text = (f"{label} has {plural(len(g['layer_cycles']), 'cycle')} between layers; the largest joins "
                        f"{len(biggest['layers'])} layers ({', '.join(biggest['layers'])})")
                if biggest["mutual"]:
                    top = biggest["mutual"][0]
                    text += (f"; {plural(len(biggest['mutual']), 'pair')} of layers depend on each other directly, "
                             f"most of all {top['a']} and {top['b']} ({plural(top['a_to_b'], 'edge')} one way, "
                             f"{top['b_to_a']:,} the other)")
                out.append(Takeaway(text + ".", f"graph-{side}"))
            if g["binds"]:
                out.append(Takeaway(f"{label} binds Python to native code across "
                                    f"{plural(g['binds'], 'cross-language edge')}.", f"graph-{side}"))
        return out

    markdown = staticmethod(render.markdown)
    html = staticmethod(render.html)


def graph_statistics(evidence: Evidence) -> dict[str, Any]:
    """Counts, density, the most depended-upon symbols, and the layer-to-layer dependency matrix."""
    nodes, edges = evidence.graph.nodes, evidence.graph.edges
    by_id = evidence.graph.by_id()
    n, e = len(nodes), len(edges)
    dependents: dict[str, set[str]] = collections.defaultdict(set)
    for edge in edges:
        if edge.kind in CENTRALITY_EDGES and edge.source != edge.target:
            dependents[edge.target].add(edge.source)
    central = sorted(((len(srcs), t) for t, srcs in dependents.items()
                      if t in by_id and by_id[t].kind is not NodeKind.EXTERNAL), key=lambda x: (-x[0], x[1]))
    matrix, examples = layer_matrix(evidence)
    return {
        "nodes": n,
        "edges": e,
        "density": round(e / (n * (n - 1)), 8) if n > 1 else 0.0,
        "nodes_by_kind": dict(sorted(collections.Counter(x.kind.value for x in nodes).items())),
        "nodes_by_language": dict(sorted(collections.Counter(x.language or "none" for x in nodes).items())),
        "edges_by_kind": dict(sorted(collections.Counter(x.kind.value for x in edges).items())),
        "binds": sum(1 for x in edges if x.kind is EdgeKind.BINDS),
        "central": [{"id": t, "name": by_id[t].name, "kind": by_id[t].kind.value, "dependents": d, **loc(by_id[t])}
                    for d, t in central[:TOP_CENTRAL]],
        "layer_matrix": matrix,
        "layer_cycles": layer_cycles(matrix, examples),
        "empty_reason": "" if n else "no symbol graph in this evidence",
    }


def layer_matrix(evidence: Evidence) -> tuple[dict[str, dict[str, int]], dict[tuple[str, str], dict[str, Any]]]:
    """The layers step's dependency counts between layers, and each pair's example edge."""
    weight: collections.Counter[str] = collections.Counter()
    for layer in evidence.of(LAYERS):
        for dep in layer.depends_on:
            weight[layer.role] += dep.count
            weight[dep.role] += dep.count
    shown = {role for role, _n in sorted(weight.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_MATRIX_ROLES]}
    matrix: dict[str, dict[str, int]] = {}
    examples: dict[tuple[str, str], dict[str, Any]] = {}
    for layer in sorted(evidence.of(LAYERS), key=lambda x: x.role):
        if layer.role not in shown:
            continue
        for dep in sorted(layer.depends_on, key=lambda d: d.role):
            if dep.role not in shown:
                continue
            matrix.setdefault(layer.role, {})[dep.role] = dep.count
            examples[(layer.role, dep.role)] = {"path": dep.path, "line": dep.line, "source": dep.source,
                                                "target": dep.target, "kind": dep.kind}
    return matrix, examples


def layer_cycles(matrix: Mapping[str, Mapping[str, int]], examples: Mapping[tuple[str, str], Mapping[str, Any]]
                 ) -> list[dict[str, Any]]:
    """Groups of layers that depend on each other in a cycle (strongly connected, self-loops aside)."""
    graph = nx.DiGraph()
    for ra, row in matrix.items():
        for rb, count in row.items():
            if ra != rb and count:
                graph.add_edge(ra, rb)
    cycles = []
    for component in nx.strongly_connected_components(graph):
        if len(component) < 2:
            continue
        members = sorted(component)
        links = [{"from": ra, "to": rb, "count": matrix[ra][rb], "example": dict(examples.get((ra, rb), {}))}
                 for ra in members for rb in members if ra != rb and matrix.get(ra, {}).get(rb)]
        # Pairs that depend on each other directly, strongest both-ways coupling first: the
        # places to look when untangling a cycle.
        mutual = [{"a": ra, "b": rb, "a_to_b": matrix[ra][rb], "b_to_a": matrix[rb][ra]}
                  for i, ra in enumerate(members) for rb in members[i + 1:]
                  if matrix.get(ra, {}).get(rb) and matrix.get(rb, {}).get(ra)]
        mutual.sort(key=lambda m: (-min(m["a_to_b"], m["b_to_a"]), m["a"], m["b"]))
        cycles.append({"layers": members, "edges": links, "mutual": mutual})
    return sorted(cycles, key=lambda c: c["layers"])


KIND = GraphKind()
__all__ = ["KIND", "GraphKind", "graph_statistics", "layer_cycles", "layer_matrix"]
