"""The Python graph's edges, one per (source, target, kind) at its first site, come out in the same
order whether one process chooses them or forked children choose them by ranges of sources
(extractor.python.graph._first_sites), a source holding NUL (the plain sort) included."""

from __future__ import annotations

import pytest

from extractor.model import Edge, EdgeKind, Node, NodeKind, edge_key
from extractor.python.graph import _first_sites

IDS = ["py:a", "py:a.b", "py:a.b.c", "py:a\0x", "py:b", "py:b.f", "py:c", "py:c.g", "py:d"]
EVERY = {nid: Node(nid, NodeKind.FUNCTION, nid[3:], nid[3:], "python") for nid in IDS}
EDGES = [
    Edge(source, target, kind, path, line)
    for i, (source, target) in enumerate(zip(IDS * 3, IDS[3:] + IDS[:3] + IDS[::-1] + IDS))
    for kind, path, line in ((EdgeKind.CALLS, "b.py", 9 - i % 4), (EdgeKind.CALLS, "a.py", 20 + i),
                             (EdgeKind.CONTAINS, "a.py", i))
] + [Edge("py:gone", "py:a", EdgeKind.CALLS, "a.py", 1), Edge("py:a", "py:gone", EdgeKind.CALLS, "a.py", 1)]


def _reference(edges: list[Edge]) -> list[Edge]:
    first: dict[tuple[str, str, EdgeKind], Edge] = {}
    for edge in edges:
        if edge.source in EVERY and edge.target in EVERY:
            key = (edge.source, edge.target, edge.kind)
            if key not in first or (edge.path, edge.line) < (first[key].path, first[key].line):
                first[key] = edge
    return sorted(first.values(), key=edge_key)


@pytest.mark.parametrize("jobs", [1, 2, 3, 4])
def test_first_sites_are_the_same_in_one_process_and_by_ranges_of_sources(jobs):
    kept = [EDGES[i] for i in _first_sites(EDGES, EVERY, jobs)]
    assert kept == _reference(EDGES)
    assert len(kept) < len(EDGES) - 2  # repeats and edges to a node that is gone were dropped

