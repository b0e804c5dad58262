"""The compact symbol-graph tables the HTML report embeds for its graph view.

vLLM's graph has ~27k nodes and ~72k edges; drawn whole it is unreadable and slow, and stored
naively it is ~10 MB. So the page gets tables, not a drawing: each node stores only its index-coded
kind, language, path, line and layer, and its id as a suffix of its container's id when it has one
(``py:a.b.C.m`` is ``C`` + ``.m``); containment edges that this parent link already states are not
repeated. The page rebuilds ids and draws only search results and one node's neighbourhood.

A graph beyond :data:`MAX_NODES` nodes or :data:`MAX_EDGES` edges (several times vLLM's) is
sampled: the most connected nodes are kept, and the view says how many of how many it shows, so
that a page stays a few megabytes whatever the evidence holds.

A path can be highlighted (``archdiff compare A B --highlight FROM TO``): on each side where both
ends resolve (:func:`extractor.evidence.query.resolve`: id, qualname or unique suffix), one
shortest chain along :data:`HIGHLIGHT_EDGES`, computed here, goes into the view as its nodes'
positions (-1 for a node the sample left out) with each edge's kind and evidence; the page lists
it and draws it marked. A side where an end does not resolve says why instead.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

from comparator.kind import SIDES
from extractor.errors import UserInputError
from extractor.evidence.index import index_of
from extractor.evidence.query import shortest_paths
from extractor.evidence.read import Evidence
from extractor.layers.records import role_by_path
from extractor.model import Edge, EdgeKind, Node
from extractor.layers.records import LAYERS


# What a highlighted path follows: calls, bindings across languages, kernel launches and the
# structs a C++ signature names (so a path can end at a struct).
HIGHLIGHT_EDGES = ("binds", "calls", "launches", "uses")


def build_graph_view(a: Evidence, b: Evidence | None = None, labels: tuple[str, str] = ("A", "B"),
                     highlight: tuple[str, str] | None = None) -> dict[str, Any]:
    """Compact graph tables for one or two bundles (``b`` None: one system only), with the
    ``highlight`` path (FROM, TO) on each side. UserInputError when no side has both ends."""
    systems = []
    for side, evidence, label in zip(SIDES, (a, b), labels):
        if evidence is not None:
            systems.append(dict(compact_graph(evidence, highlight), side=side, label=label))
    if highlight is not None and all("missing" in s["highlight"] and not s["highlight"]["resolved"]
                                     for s in systems):
        raise UserInputError(f"--highlight {highlight[0]} {highlight[1]}: "
                             + "; ".join(f'{s["label"]}: {s["highlight"]["missing"]}' for s in systems))
    return {"version": 1, "systems": systems}


def highlight_path(evidence: Evidence, start: str, end: str, position: dict[str, int]) -> dict[str, Any]:
    """One shortest chain from ``start`` to ``end`` over :data:`HIGHLIGHT_EDGES`: ``chain`` rows
    [view position or -1, node id, edge kind ("" first), evidence path, line]; ``missing`` says why
    there is none (``resolved``: both ends are nodes of this graph)."""
    index = index_of(evidence)
    try:
        answer = shortest_paths(index, start, end, HIGHLIGHT_EDGES, max_paths=1)
    except UserInputError as err:
        return {"from": start, "to": end, "resolved": False, "chain": [], "missing": str(err)}
    found = {"from": answer.source.id, "to": answer.target.id, "resolved": True, "edges": list(answer.edges)}
    if not answer.paths:
        return dict(found, chain=[], missing=f"no path from {answer.source.id} to {answer.target.id} over "
                                             f"{', '.join(answer.edges)} edges")
    chain = [[position.get(step.node.id, -1), step.node.id, step.edge.kind if step.edge else "",
              step.edge.path if step.edge else step.node.path, step.edge.line if step.edge else step.node.line]
             for step in answer.paths[0]]
    return dict(found, chain=chain)


MAX_NODES = 40_000
MAX_EDGES = 120_000


def sample(evidence: Evidence, max_nodes: int | None = None,
           max_edges: int | None = None) -> tuple[Sequence[Node], Sequence[Edge]]:
    """The nodes and edges the view shows: all of them, or the best connected ``max_nodes`` nodes
    (by edges, then id: deterministic) and the first ``max_edges`` edges among them."""
    max_nodes = MAX_NODES if max_nodes is None else max_nodes
    max_edges = MAX_EDGES if max_edges is None else max_edges
    nodes, edges = evidence.graph.nodes, evidence.graph.edges
    if len(nodes) <= max_nodes and len(edges) <= max_edges:
        return nodes, edges
    degree: collections.Counter[str] = collections.Counter()
    for edge in edges:
        degree[edge.source] += 1
        degree[edge.target] += 1
    kept = sorted(nodes, key=lambda n: (-degree[n.id], n.id))[:max_nodes]
    ids = {n.id for n in kept}
    return kept, [e for e in edges if e.source in ids and e.target in ids][:max_edges]


def compact_graph(evidence: Evidence, highlight: tuple[str, str] | None = None) -> dict[str, Any]:
    shown, edges = sample(evidence)
    nodes = sorted(shown, key=lambda n: n.id)
    index = {n.id: i for i, n in enumerate(nodes)}
    roles = role_by_path(evidence.of(LAYERS))
    tables: dict[str, list[str]] = {"kinds": [], "langs": [], "paths": [], "roles": [], "ekinds": []}
    codes: dict[str, dict[str, int]] = {k: {} for k in tables}

    def code(table: str, value: str) -> int:
        found = codes[table].get(value)
        if found is None:
            found = codes[table][value] = len(tables[table])
            tables[table].append(value)
        return found

    parent: dict[int, int] = {}
    for edge in edges:
        if edge.kind is not EdgeKind.CONTAINS:
            continue
        s, t = index.get(edge.source), index.get(edge.target)
        if s is None or t is None or t in parent:
            continue
        sid, tid = nodes[s].id, nodes[t].id
        if tid.startswith(sid) and tid[len(sid):len(sid) + 1] in (".", ":") and len(tid) > len(sid) + 1:
            parent[t] = s
    # A parent link must not form a loop, or the page could not rebuild the ids.
    for t in list(parent):
        seen, cursor = {t}, parent.get(t)
        while cursor is not None:
            if cursor in seen:
                del parent[t]
                break
            seen.add(cursor)
            cursor = parent.get(cursor)
    rows = []
    for i, n in enumerate(nodes):
        p = parent.get(i, -1)
        text = n.id[len(nodes[p].id):] if p >= 0 else n.id
        rows.append([p, text, code("kinds", n.kind.value), code("langs", n.language),
                     code("paths", n.path), n.line, code("roles", roles.get(n.path, ""))])
    flat: list[int] = []
    seen_edges: set[tuple[int, int, int]] = set()
    for edge in edges:
        s, t = index.get(edge.source), index.get(edge.target)
        if s is None or t is None:
            continue
        k = code("ekinds", edge.kind.value)
        if edge.kind is EdgeKind.CONTAINS and parent.get(t) == s:
            continue  # stated by the parent link
        if (s, t, k) in seen_edges:
            continue  # the view shows that two symbols are linked, not at how many lines
        seen_edges.add((s, t, k))
        flat.extend((s, t, k))
    code("ekinds", "contains")
    out = {**tables, "nodes": rows, "edges": flat}
    if highlight is not None:
        out["highlight"] = highlight_path(evidence, highlight[0], highlight[1], index)
    if len(nodes) < len(evidence.graph.nodes) or len(edges) < len(evidence.graph.edges):
        out["sampled"] = {"nodes": [len(nodes), len(evidence.graph.nodes)],
                          "edges": [len(edges), len(evidence.graph.edges)]}
    return out
