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
from extractor.model import Contribution, Edge, Node, edge_key


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


_LINE_LIMIT = 10**20  # lines are written with 20 digits in a sort key


def unique_sorted_edges(groups: Iterable[Iterable[Edge]]) -> list[Edge]:
    """Every edge once, sorted by :func:`edge_key`.

    Each edge is keyed by one string, ``source NUL target NUL kind NUL path NUL line`` (the line
    zero-padded to 20 digits): two edges have the same key exactly when they are equal, and keys
    sort as edge_key's tuples do, NUL being below every other character. Strings hash and compare
    in C; an Edge hashes through a Python-level ``__hash__`` and its key tuple compares field by
    field: on vLLM's 110,000 edges this is 2.5x faster. A text holding NUL itself, or a line that
    is not an int in range, would break that equivalence: then the edges are merged the plain way."""
    groups = [tuple(group) for group in groups]
    keyed: dict[str, Edge] = {}
    try:
        for group in groups:
            for e in group:
                line = e.line
                if not 0 <= line < _LINE_LIMIT:
                    raise ValueError(line)
                key = f"{e.source}\0{e.target}\0{e.kind._value_}\0{e.path}\0{line:020d}"
                if key.count("\0") != 4:
                    raise ValueError(key)
                keyed[key] = e
    except (TypeError, ValueError):
        return sorted({e for group in groups for e in group}, key=edge_key)
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
