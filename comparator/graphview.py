"""The compact symbol-graph tables the HTML report embeds for its graph view.

vLLM's graph has ~27k nodes and ~72k edges; drawn whole it is unreadable and slow, and stored
naively it is ~10 MB. So the page gets tables, not a drawing: each node stores only its index-coded
kind, language, path, line and layer, and its id as a suffix of its container's id when it has one
(``py:a.b.C.m`` is ``C`` + ``.m``); containment edges that this parent link already states are not
repeated. The page rebuilds ids and draws only search results and one node's neighbourhood.
"""

from __future__ import annotations

from typing import Any

from comparator.kind import SIDES
from extractor.evidence import Evidence
from extractor.layers.records import role_by_path
from extractor.model import EdgeKind


def build_graph_view(a: Evidence, b: Evidence | None = None,
                     labels: tuple[str, str] = ("A", "B")) -> dict[str, Any]:
    """Compact graph tables for one or two bundles (``b`` None: one system only)."""
    systems = []
    for side, evidence, label in zip(SIDES, (a, b), labels):
        if evidence is not None:
            systems.append(dict(compact_graph(evidence), side=side, label=label))
    return {"version": 1, "systems": systems}


def compact_graph(evidence: Evidence) -> dict[str, Any]:
    nodes = sorted(evidence.graph.nodes, key=lambda n: n.id)
    edges = evidence.graph.edges
    index = {n.id: i for i, n in enumerate(nodes)}
    roles = role_by_path(evidence.layers)
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
    return {**tables, "nodes": rows, "edges": flat}
