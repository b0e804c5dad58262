"""The layer matrix summed from the dependencies between files (worked out in fork_map's children
while the roles are scored) is the matrix counted edge by edge once the roles are known: checked
against that count, written here as the step wrote it, on generated graphs full of ties."""

from __future__ import annotations

import collections

from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.graphparts import unique_sorted_edges
from extractor.layers.matrix import DEPENDENCY_KINDS, UPWARD_EXAMPLES, dependency_matrix, path_dependencies
from extractor.layers.records import UNASSIGNED, LayerDependency
from extractor.layers.taxonomy import Role, Taxonomy
from extractor.model import Edge, EdgeKind, Node, NodeKind

_PATHS = ["a.py", "b.py", "c.py", "d.cc", ""]  # "" : a node without a file
_ROLES = ("top", "mid", "low", "aside", UNASSIGNED)
TAXONOMY = Taxonomy(roles=(Role("top", "Top", False, ()), Role("mid", "Mid", False, ()), Role("low", "Low", False, ()),
                           Role("aside", "Aside", True, ())),
                    threshold=1.0, stack=(("top",), ("mid",), ("low",)))

_nodes = st.lists(st.sampled_from(_PATHS), min_size=6, max_size=6).map(
    lambda paths: {f"n{i}": Node(f"n{i}", NodeKind.FUNCTION, f"n{i}", f"n{i}", "python", p, i)
                   for i, p in enumerate(paths)})
# few distinct values, so that statements repeat and examples tie on (path, line, source)
_ids = st.sampled_from([f"n{i}" for i in range(7)])  # n6: an edge end the graph does not hold
_edges = st.lists(st.builds(Edge, _ids, _ids,
                            st.sampled_from([EdgeKind.CALLS, EdgeKind.IMPORTS, EdgeKind.CONTAINS, EdgeKind.INHERITS]),
                            st.sampled_from(["a.py", "b.py", ""]), st.integers(0, 3)), max_size=40)
_role_of = st.fixed_dictionaries({p: st.sampled_from(_ROLES) for p in _PATHS[:4]})


def _matrix_edge_by_edge(nodes, edges, role_of):
    """The count as the layers step made it before the split (edges in edge_key order)."""
    apart = {"aside"}
    rank = {role: i for i, level in enumerate(TAXONOMY.stack) for role in level}
    counts = collections.Counter()
    examples = collections.defaultdict(list)
    first = {}
    seen = set()
    for edge in edges:
        if edge.kind not in DEPENDENCY_KINDS:
            continue
        src, dst = nodes.get(edge.source), nodes.get(edge.target)
        if src is None or dst is None or not src.path or not dst.path:
            continue
        a, b = role_of.get(src.path), role_of.get(dst.path)
        if a is None or b is None or a in apart or b in apart or UNASSIGNED in (a, b):
            continue
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
    depends_on = collections.defaultdict(list)
    for (a, b), n in sorted(counts.items()):
        depends_on[a].append(LayerDependency(b, n, *first[(a, b)]))
    upward = [(a, b, counts[(a, b)], tuple(f"{p}:{ln}" if ln else p for p, ln in sorted(set(ex))[:UPWARD_EXAMPLES]))
              for (a, b), ex in sorted(examples.items(), key=lambda kv: (-counts[kv[0]], kv[0]))]
    return {a: tuple(deps) for a, deps in depends_on.items()}, upward


@settings(max_examples=300, deadline=None)
@given(_nodes, _edges, _role_of)
def test_the_matrix_from_file_dependencies_is_the_edge_by_edge_matrix(nodes, edges, role_of):
    edges = unique_sorted_edges([edges])
    matrix = dependency_matrix(TAXONOMY, path_dependencies(nodes, edges), role_of)
    depends_on, upward = _matrix_edge_by_edge(nodes, edges, role_of)
    assert matrix.depends_on == depends_on
    assert [tuple(u) for u in matrix.upward] == upward


def test_an_upward_pair_keeps_the_first_examples_of_all_its_files():
    """Two file pairs of one role pair: the examples are the smallest of both, not of either alone."""
    nodes = {n: Node(n, NodeKind.MODULE, n, n, "python", f"{n}.py") for n in ("low1", "low2", "top")}
    edges = unique_sorted_edges([[Edge("low1", "top", EdgeKind.IMPORTS, "low1.py", line) for line in (7, 8, 9)],
                                 [Edge("low2", "top", EdgeKind.IMPORTS, "low2.py", line) for line in (1, 2, 3, 4)]])
    role_of = {"low1.py": "low", "low2.py": "low", "top.py": "top"}
    [upward] = dependency_matrix(TAXONOMY, path_dependencies(nodes, edges), role_of).upward
    assert (upward.edges, upward.examples) == (7, ("low1.py:7", "low1.py:8", "low1.py:9", "low2.py:1", "low2.py:2"))
