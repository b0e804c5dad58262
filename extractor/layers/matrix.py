"""The layer-to-layer dependency matrix, and the edges that run upward against the stack."""

from __future__ import annotations

import collections
from collections.abc import Iterable, Mapping
from typing import Any

from extractor.layers.records import UNASSIGNED
from extractor.layers.taxonomy import Taxonomy
from extractor.model import Edge, EdgeKind, Node

# Edges that say "this module depends on that one"; `contains` only says where a symbol lives.
DEPENDENCY_EDGES = frozenset({EdgeKind.IMPORTS, EdgeKind.INCLUDES, EdgeKind.CALLS, EdgeKind.INHERITS,
                              EdgeKind.BINDS, EdgeKind.LAUNCHES})
UPWARD_EXAMPLES = 5


def dependency_matrix(taxonomy: Taxonomy, nodes: Mapping[str, Node], edges: Iterable[Edge],
                      role_of: Mapping[str, str]) -> tuple[dict[str, dict[str, int]], list[dict[str, Any]]]:
    """Counts of dependency edges from each layer to each other (apart and unassigned modules left
    out), and the edges that run upward against the taxonomy's stack order."""
    apart = {r.id for r in taxonomy.roles if r.apart}
    rank = {role: i for i, level in enumerate(taxonomy.stack) for role in level}
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    examples: dict[tuple[str, str], list[tuple[str, int]]] = collections.defaultdict(list)
    seen: set[tuple[str, str, str, int]] = set()
    for edge in edges:
        if edge.kind not in DEPENDENCY_EDGES:
            continue
        src, dst = nodes.get(edge.source), nodes.get(edge.target)
        if src is None or dst is None or not src.path or not dst.path:
            continue
        a, b = role_of.get(src.path), role_of.get(dst.path)
        if a is None or b is None or a in apart or b in apart or UNASSIGNED in (a, b):
            continue
        # One statement is one dependency: "from m import C" may be in the graph both as an edge
        # to module m and as an edge to class C.
        key = (src.path, dst.path, edge.path, edge.line)
        if edge.line and key in seen:
            continue
        seen.add(key)
        counts[(a, b)] += 1
        if a in rank and b in rank and rank[a] > rank[b]:
            examples[(a, b)].append((edge.path or src.path, edge.line))
    matrix: dict[str, dict[str, int]] = {}
    for (a, b), n in sorted(counts.items()):
        matrix.setdefault(a, {})[b] = n
    upward = [{"from": a, "to": b, "count": counts[(a, b)],
               "examples": [f"{p}:{ln}" if ln else p for p, ln in sorted(set(ex))[:UPWARD_EXAMPLES]]}
              for (a, b), ex in sorted(examples.items(), key=lambda kv: (-counts[kv[0]], kv[0]))]
    return matrix, upward
