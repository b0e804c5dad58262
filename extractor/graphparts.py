"""The bundle's graph, merged from the steps' contributions once per run.

Nodes: the first step (in step order) that names a node describes it; a later one (an external
placeholder for something another language defines) does not overwrite it. Edges: each once,
sorted by :func:`extractor.model.edge_key`. The layers step reads the graph of the steps before it
and the bundle writer the whole graph; when no step in between added nodes or edges (the layers
step adds none) they are the same merge, and it is done once: on vLLM, hashing 110,000 edges
into a set and sorting them costs about a second of the driver's serial time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from extractor.context import Context
from extractor.model import Contribution, Edge, Node


@dataclasses.dataclass(frozen=True, slots=True)
class GraphParts:
    nodes: dict[str, Node]  # by id, each described by the first step that names it
    edges: list[Edge]  # each once, sorted by edge_key


def merge_graph(results: Iterable[Contribution]) -> GraphParts:
    results = list(results)
    nodes: dict[str, Node] = {}
    for result in results:
        for node in result.nodes:
            nodes.setdefault(node.id, node)
    return GraphParts(nodes, unique_sorted_edges(result.edges for result in results))


def unique_sorted_edges(groups: Iterable[Iterable[Edge]]) -> list[Edge]:
    """Every edge once, sorted by :func:`edge_key`.

    Each edge is keyed by the tuple :func:`extractor.model.edge_key` makes, built inline with the kind's ``_value_`` (a
    plain attribute; ``.value`` is a Python property): two edges have the same key exactly when
    they are equal, and the keys sort as edge_key sorts. An Edge hashes through a Python-level
    ``__hash__``; a tuple of strings hashes and compares in C: on vLLM's 110,000 edges this is
    0.16 s where keying by Edge took 0.6 s and by one joined string 0.25 s."""
    keyed = {(e.source, e.target, e.kind._value_, e.path, e.line): e for group in groups for e in group}
    return [keyed[key] for key in sorted(keyed)]


def _memo(_ctx: Context) -> dict[tuple[tuple[str, int], ...], GraphParts]:
    return {}


def graph_parts(ctx: Context, step_names: Iterable[str]) -> GraphParts:
    """The merged graph of the named steps' results (in the order given), computed once per run
    for the same contributions: don't mutate what it returns."""
    parts = [(name, ctx.results[name]) for name in step_names]
    parts = [(name, result) for name, result in parts if result.nodes or result.edges]
    key = tuple((name, id(result)) for name, result in parts)
    memo = ctx.once(_memo)
    if key not in memo:
        memo[key] = merge_graph(result for _name, result in parts)
    return memo[key]
