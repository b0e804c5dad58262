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


class PathDependency(NamedTuple):
    """The dependency edges from one file into another: what the matrix needs of them, whatever
    the files' roles (so it is worked out while the roles are, extractor.layers.extract_layers)."""

    source_path: str
    target_path: str
    edges: int  # counted once per statement
    first: tuple[str, int, str, str, str]  # the smallest example: (path, line, source, target, kind)
    sites: tuple[tuple[str, int], ...]  # the first UPWARD_EXAMPLES distinct (path, line), sorted


def path_dependencies(nodes: Mapping[str, Node], edges: Iterable[Edge]) -> list[PathDependency]:
    """The dependency edges between files, by (source file, target file), sorted.

    ``edges`` come sorted by edge_key: among examples that tie on (path, line, source) the first
    edge has the smallest target and kind, so the smallest whole example is the first one."""
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    sites: dict[tuple[str, str], set[tuple[str, int]]] = collections.defaultdict(set)
    first: dict[tuple[str, str], tuple[str, int, str, str, str]] = {}
    seen: set[tuple[str, str, str, int]] = set()
    for edge in edges:
        if edge.kind not in DEPENDENCY_KINDS:
            continue
        src, dst = nodes.get(edge.source), nodes.get(edge.target)
        if src is None or dst is None or not src.path or not dst.path:
            continue
        # One statement is one dependency: "from m import C" may be in the graph both as an edge
        # to module m and as an edge to class C.
        key = (src.path, dst.path, edge.path, edge.line)
        if edge.line and key in seen:
            continue
        seen.add(key)
        pair = (src.path, dst.path)
        counts[pair] += 1
        example = (edge.path or src.path, edge.line, edge.source, edge.target, edge.kind.value)
        if pair not in first or example < first[pair]:
            first[pair] = example
        sites[pair].add((edge.path or src.path, edge.line))
    return [PathDependency(*pair, n, first[pair], tuple(sorted(sites[pair])[:UPWARD_EXAMPLES]))
            for pair, n in sorted(counts.items())]


def dependency_matrix(taxonomy: Taxonomy, dependencies: Iterable[PathDependency],
                      role_of: Mapping[str, str]) -> LayerMatrix:
    """Counts of dependency edges from each layer to each other (apart and unassigned modules left
    out), each with its first edge as an example, and the edges that run upward against the
    taxonomy's stack order."""
    apart = {r.id for r in taxonomy.roles if r.apart}
    rank = {role: i for i, level in enumerate(taxonomy.stack) for role in level}
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    examples: dict[tuple[str, str], list[tuple[str, int]]] = collections.defaultdict(list)
    first: dict[tuple[str, str], tuple[str, int, str, str, str]] = {}
    for dependency in dependencies:
        a, b = role_of.get(dependency.source_path), role_of.get(dependency.target_path)
        if a is None or b is None or a in apart or b in apart or UNASSIGNED in (a, b):
            continue
        counts[(a, b)] += dependency.edges
        if (a, b) not in first or dependency.first < first[(a, b)]:
            first[(a, b)] = dependency.first
        if a in rank and b in rank and rank[a] > rank[b]:
            examples[(a, b)].extend(dependency.sites)
    depends_on: dict[str, list[LayerDependency]] = collections.defaultdict(list)
    for (a, b), n in sorted(counts.items()):
        depends_on[a].append(LayerDependency(b, n, *first[(a, b)]))
    upward = tuple(UpwardDependency(a, b, counts[(a, b)],
                                    tuple(f"{p}:{ln}" if ln else p for p, ln in sorted(set(ex))[:UPWARD_EXAMPLES]))
                   for (a, b), ex in sorted(examples.items(), key=lambda kv: (-counts[kv[0]], kv[0])))
    return LayerMatrix({a: tuple(deps) for a, deps in depends_on.items()}, upward)
