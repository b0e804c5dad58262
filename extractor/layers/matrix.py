"""The layer-to-layer dependency matrix, and the edges that run upward against the stack."""

from __future__ import annotations

import collections
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from extractor.layers.records import UNASSIGNED, LayerDependency
from extractor.layers.taxonomy import Taxonomy
from extractor.model import Edge, EdgeKind, Node

# Edges that say "this module depends on that one"; `contains` only says where a symbol lives.
DEPENDENCY_EDGES = frozenset({EdgeKind.IMPORTS, EdgeKind.INCLUDES, EdgeKind.CALLS, EdgeKind.INHERITS,
                              EdgeKind.BINDS, EdgeKind.LAUNCHES})
# The same kinds for `in` in a loop over every edge: a tuple compares enum members by identity, a
# frozenset hashes each one through Enum.__hash__, a Python call.
DEPENDENCY_KINDS = tuple(sorted(DEPENDENCY_EDGES, key=lambda kind: kind.value))
UPWARD_EXAMPLES = 5


class UpwardDependency(NamedTuple):
    """Edges from a layer to one above it in the taxonomy's stack (a lower layer reaching up)."""

    from_role: str
    to_role: str
    edges: int  # how many (``count`` would hide tuple.count)
    examples: tuple[str, ...]  # "path:line" of the first few


class LayerMatrix(NamedTuple):
    depends_on: dict[str, tuple[LayerDependency, ...]]  # role -> what it depends on, by role
    upward: tuple[UpwardDependency, ...]


def dependency_matrix(taxonomy: Taxonomy, nodes: Mapping[str, Node], edges: Iterable[Edge],
                      role_of: Mapping[str, str]) -> LayerMatrix:
    """Counts of dependency edges from each layer to each other (apart and unassigned modules left
    out), each with its first edge as an example, and the edges that run upward against the
    taxonomy's stack order."""
    apart = {r.id for r in taxonomy.roles if r.apart}
    rank = {role: i for i, level in enumerate(taxonomy.stack) for role in level}
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    examples: dict[tuple[str, str], list[tuple[str, int]]] = collections.defaultdict(list)
    first: dict[tuple[str, str], tuple[str, int, str, str, str]] = {}
    seen: set[tuple[str, str, str, int]] = set()
    for edge in edges:
        if edge.kind not in DEPENDENCY_KINDS:
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
        example = (edge.path or src.path, edge.line, edge.source, edge.target, edge.kind.value)
        if (a, b) not in first or example[:3] < first[(a, b)][:3]:
            first[(a, b)] = example
        if a in rank and b in rank and rank[a] > rank[b]:
            examples[(a, b)].append((edge.path or src.path, edge.line))
    depends_on: dict[str, list[LayerDependency]] = collections.defaultdict(list)
    for (a, b), n in sorted(counts.items()):
        depends_on[a].append(LayerDependency(b, n, *first[(a, b)]))
    upward = tuple(UpwardDependency(a, b, counts[(a, b)],
                                    tuple(f"{p}:{ln}" if ln else p for p, ln in sorted(set(ex))[:UPWARD_EXAMPLES]))
                   for (a, b), ex in sorted(examples.items(), key=lambda kv: (-counts[kv[0]], kv[0])))
    return LayerMatrix({a: tuple(deps) for a, deps in depends_on.items()}, upward)
