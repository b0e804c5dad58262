"""Graph statistics: symbols and edges by kind, the most depended-upon symbols, and the
layer-to-layer dependency matrix with its cycles.

The matrix and each cell's example edge are the layers step's (``Layer.depends_on``), read, never
counted again.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping

import networkx as nx

from comparator.kind import Counts, EvidenceKind, Labels, Takeaway, apart_paths, plural
from comparator.kinds.graph import render
from comparator.kinds.graph.records import (CentralSymbol, DependencyExample, GraphStats, LayerCycle, LayerLink,
                                            MutualPair)
from comparator.records import Sides
from extractor.evidence.read import Evidence
from extractor.layers.records import LAYERS
from extractor.model import EdgeKind, NodeKind

CENTRALITY_EDGES = frozenset({EdgeKind.CALLS, EdgeKind.INHERITS, EdgeKind.IMPORTS})
TOP_CENTRAL = 10
# Roles in the matrix: a taxonomy has about twenty; evidence with thousands of layers (tampered or
# generated) keeps the most connected ones, so the matrix stays a table a page can show.
MAX_MATRIX_ROLES = 60


class GraphKind(EvidenceKind[GraphStats, Sides[GraphStats], None]):
    key = "graph"
    title = "Graph statistics"

    def summarize(self, evidence: Evidence) -> GraphStats:
        return graph_statistics(evidence)

    def compare(self, a: GraphStats, b: GraphStats) -> Sides[GraphStats]:
        return Sides(a, b)

    def count(self, section: Sides[GraphStats], release: None) -> Counts:
        # (a release's symbols are counted one by one by the symbols kind: this kind has no release part)
        ga, gb = section
        return Counts(int(ga.nodes_by_kind != gb.nodes_by_kind or ga.edges_by_kind != gb.edges_by_kind))

    def takeaways(self, section: Sides[GraphStats], release: None, labels: Labels) -> list[Takeaway]:
        la, lb = labels
        ga, gb = section

        def graph(g: GraphStats) -> str:
            kinds = g.nodes_by_kind  # keyed by the graph's node kinds: a kind the system lacks counts 0
            return (f"{g.nodes:,} symbols ({kinds.get('class', 0):,} classes, {kinds.get('function', 0):,} "
                    f"functions, {kinds.get('method', 0):,} methods) across {g.edges:,} edges")

        out = [Takeaway(f"Symbol graph: {la} maps {graph(ga)}, compared with {graph(gb)} in {lb}.", "graph")]
        for (side, g), label in zip(section.items(), labels):
            if g.central:
                top = g.central[0]
                out.append(Takeaway(f"Most depended-upon symbol in {label}: {top.name} ({top.kind}, "
                                    f"{plural(top.dependents, 'dependent')}).", f"graph-{side}"))
            if g.layer_cycles:
                biggest = max(g.layer_cycles, key=lambda c: len(c.layers))
                text = (f"{label} has {plural(len(g.layer_cycles), 'cycle')} between layers; the largest joins "
                        f"{len(biggest.layers)} layers ({', '.join(biggest.layers)})")
                if biggest.mutual:
                    pair = biggest.mutual[0]
                    text += (f"; {plural(len(biggest.mutual), 'pair')} of layers depend on each other directly, "
                             f"most of all {pair.a} and {pair.b} ({plural(pair.a_to_b, 'edge')} one way, "
                             f"{pair.b_to_a:,} the other)")
                out.append(Takeaway(text + ".", f"graph-{side}"))
            if g.binds:
                out.append(Takeaway(f"{label} binds Python to native code across "
                                    f"{plural(g.binds, 'cross-language edge')}.", f"graph-{side}"))
        return out

    def markdown(self, section: Sides[GraphStats], la: str, lb: str) -> list[str]:
        return render.markdown(section, la, lb)

    def html(self, section: Sides[GraphStats], la: str, lb: str) -> str:
        return render.html(section, la, lb)


def graph_statistics(evidence: Evidence) -> GraphStats:
    """Counts, density, the most depended-upon symbols, and the layer-to-layer dependency matrix."""
    nodes, edges = evidence.graph.nodes, evidence.graph.edges
    by_id = evidence.graph.by_id()
    n, e = len(nodes), len(edges)
    # The system's own dependencies, as the layers count them: a symbol of a test, an example or
    # vendored code is not a candidate, and a test's use of a symbol is not a dependent.
    apart = apart_paths(evidence)
    dependents: dict[str, set[str]] = collections.defaultdict(set)
    for edge in edges:
        if edge.kind in CENTRALITY_EDGES and edge.source != edge.target:
            dependents[edge.target].add(edge.source)
    counted = ((sum(1 for s in srcs if s not in by_id or by_id[s].path not in apart), t)
               for t, srcs in dependents.items()
               if t in by_id and by_id[t].kind is not NodeKind.EXTERNAL and by_id[t].path not in apart)
    central = sorted(((count, t) for count, t in counted if count), key=lambda x: (-x[0], x[1]))
    matrix, examples = layer_matrix(evidence)
    return GraphStats(
        nodes=n,
        edges=e,
        density=round(e / (n * (n - 1)), 8) if n > 1 else 0.0,
        nodes_by_kind=dict(sorted(collections.Counter(x.kind.value for x in nodes).items())),
        nodes_by_language=dict(sorted(collections.Counter(x.language or "none" for x in nodes).items())),
        edges_by_kind=dict(sorted(collections.Counter(x.kind.value for x in edges).items())),
        binds=sum(1 for x in edges if x.kind is EdgeKind.BINDS),
        central=tuple(CentralSymbol(t, by_id[t].name, by_id[t].kind.value, d, by_id[t].path, by_id[t].line)
                      for d, t in central[:TOP_CENTRAL]),
        layer_matrix=matrix,
        layer_cycles=layer_cycles(matrix, examples),
        empty_reason="" if n else "no symbol graph in this evidence",
    )


def layer_matrix(evidence: Evidence) -> tuple[dict[str, dict[str, int]], dict[tuple[str, str], DependencyExample]]:
    """The layers step's dependency counts between layers, and each pair's example edge."""
    weight: collections.Counter[str] = collections.Counter()
    for layer in evidence.of(LAYERS):
        for dep in layer.depends_on:
            weight[layer.role] += dep.count
            weight[dep.role] += dep.count
    shown = {role for role, _n in sorted(weight.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_MATRIX_ROLES]}
    matrix: dict[str, dict[str, int]] = {}
    examples: dict[tuple[str, str], DependencyExample] = {}
    for layer in sorted(evidence.of(LAYERS), key=lambda x: x.role):
        if layer.role not in shown:
            continue
        for dep in sorted(layer.depends_on, key=lambda d: d.role):
            if dep.role not in shown:
                continue
            matrix.setdefault(layer.role, {})[dep.role] = dep.count
            examples[(layer.role, dep.role)] = DependencyExample(dep.path, dep.line, dep.source, dep.target, dep.kind)
    return matrix, examples


def layer_cycles(matrix: Mapping[str, Mapping[str, int]],
                 examples: Mapping[tuple[str, str], DependencyExample]) -> tuple[LayerCycle, ...]:
    """Groups of layers that depend on each other in a cycle (strongly connected, self-loops aside)."""
    graph = nx.DiGraph()
    for ra, row in matrix.items():
        for rb, count in row.items():
            if ra != rb and count:
                graph.add_edge(ra, rb)

    def weight(ra: str, rb: str) -> int:
        """Edges from role ``ra`` to role ``rb`` (0: none; the matrix holds only the pairs it has)."""
        return matrix[ra][rb] if ra in matrix and rb in matrix[ra] else 0

    cycles = []
    for component in nx.strongly_connected_components(graph):
        if len(component) < 2:
            continue
        members = sorted(component)
        # every link of a cycle is a cell of the matrix, and the matrix has an example for each cell
        links = tuple(LayerLink(ra, rb, matrix[ra][rb], examples[(ra, rb)])
                      for ra in members for rb in members if ra != rb and weight(ra, rb))
        # Pairs that depend on each other directly, strongest both-ways coupling first: the
        # places to look when untangling a cycle.
        mutual = sorted((MutualPair(ra, rb, matrix[ra][rb], matrix[rb][ra])
                         for i, ra in enumerate(members) for rb in members[i + 1:]
                         if weight(ra, rb) and weight(rb, ra)),
                        key=lambda m: (-min(m.a_to_b, m.b_to_a), m.a, m.b))
        cycles.append(LayerCycle(tuple(members), links, tuple(mutual)))
    return tuple(sorted(cycles, key=lambda c: c.layers))


KIND = GraphKind()
__all__ = ["KIND", "GraphKind", "graph_statistics", "layer_cycles", "layer_matrix"]
