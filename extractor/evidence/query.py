"""Questions to the symbol graph: the paths between two nodes, who calls a node and what it calls,
which nodes of a kind a node reaches, and nodes by name.

Every answer is a typed record built from a :class:`~extractor.evidence.index.GraphIndex`; printing
it is the caller's job (``archdiff graph`` prints text, JSON or DOT). Walks are breadth-first over
the neighbours in index order (by node id, then edge kind and line), so the path shown for a node
(its *witness*) is a shortest one, and the same on every run.

A node argument is the node id (``py:vllm.entrypoints.llm.LLM.generate``), its qualname, or a
suffix of either that one node alone ends with at a name boundary (``LLM.generate``); anything
else is a :class:`~extractor.errors.UserInputError` naming the nearest names.
"""

from __future__ import annotations

import collections
import dataclasses
import difflib
import fnmatch
import re
from collections.abc import Iterable, Iterator, Sequence

from extractor.errors import UserInputError
from extractor.evidence.index import GraphIndex
from extractor.model import EdgeKind, NodeKind

# What a call chain follows unless told otherwise: calls within a language, bindings across two
# (torch ops, pybind11, nanobind, PyO3, cgo, FFI) and CUDA kernel launches.
DEFAULT_EDGES: tuple[str, ...] = ("calls", "binds", "launches")
EDGE_KINDS: tuple[str, ...] = tuple(k.value for k in EdgeKind)
NODE_KINDS: tuple[str, ...] = tuple(k.value for k in NodeKind)


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class NodeRef:
    """A node as the answers show it: where it is defined, and what the evidence says of it."""

    id: str
    kind: str
    qualname: str
    language: str
    path: str
    line: int
    api: str  # "public: ...", "private: ...", "" when the evidence does not say
    layer: str  # the architectural role of its file, "" when none was given


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class EdgeRef:
    kind: str
    path: str  # where the evidence for the edge is (the call site, the binding, the launch)
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class Step:
    """One node of a chain and the edge that led to it (None for the chain's first node)."""

    node: NodeRef
    edge: EdgeRef | None


@dataclasses.dataclass(frozen=True, slots=True)
class Hit:
    """A node a walk found, its distance from the start and one shortest chain to it (``chain``
    starts at the start node; for callers it runs from the caller to the start node)."""

    node: NodeRef
    depth: int
    chain: tuple[Step, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class PathsAnswer:
    query: str  # "path"
    system: str
    edges: tuple[str, ...]
    source: NodeRef
    target: NodeRef
    paths: tuple[tuple[Step, ...], ...]  # the shortest chains, at most ``--max``; empty: none


@dataclasses.dataclass(frozen=True, slots=True)
class HitsAnswer:
    query: str  # "callers", "callees", "reach"
    system: str
    edges: tuple[str, ...]
    start: NodeRef
    hits: tuple[Hit, ...]  # by depth, then node id


@dataclasses.dataclass(frozen=True, slots=True)
class FindAnswer:
    query: str  # "find"
    system: str
    pattern: str
    nodes: tuple[NodeRef, ...]  # by id


# ------------------------------------------------------------------------------------ arguments


def node_ref(index: GraphIndex, i: int) -> NodeRef:
    text = index.texts
    return NodeRef(index.ids[i], text[index.node_kind[i]], index.qualnames[i], text[index.node_language[i]],
                   text[index.node_path[i]], index.lines[i], text[index.node_api[i]], text[index.node_layer[i]])


def edge_ref(index: GraphIndex, e: int) -> EdgeRef:
    return EdgeRef(index.texts[index.edge_kind[e]], index.texts[index.edge_path[e]], index.edge_line[e])


def _codes(index: GraphIndex, values: Iterable[str]) -> frozenset[int]:
    """The positions in ``index.texts`` of ``values`` (a value the graph never uses matches nothing)."""
    wanted = set(values)
    return frozenset(i for i, text in enumerate(index.texts) if text in wanted)


def edge_kinds(text: str | Iterable[str]) -> tuple[str, ...]:
    """``"calls,binds"`` (or the names as a list) checked against the edge kinds, sorted."""
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    unknown = sorted(set(names) - set(EDGE_KINDS))
    if unknown or not names:
        raise UserInputError(f"unknown edge kind {', '.join(unknown) or '(none given)'}: use a comma-separated "
                             f"list of {', '.join(EDGE_KINDS)}")
    return tuple(sorted(set(names)))


def resolve(index: GraphIndex, text: str) -> int:
    """The position of the node ``text`` names: an id, a qualname, or a unique suffix of either."""
    wanted = text.strip()
    for column in (index.ids, index.qualnames):
        found = [i for i, value in enumerate(column) if value == wanted]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise _ambiguous(index, wanted, found, "have the qualname")
    found = [i for i in range(len(index.ids)) if _ends_with(index.ids[i], wanted)
             or _ends_with(index.qualnames[i], wanted)]
    if len(found) == 1:
        return found[0]
    if found:
        raise _ambiguous(index, wanted, found, "end with")
    raise UserInputError(f"no node {wanted!r} in the graph of {index.system}{_nearest(index, wanted)}")


def _ends_with(name: str, suffix: str) -> bool:
    if not name.endswith(suffix) or len(name) == len(suffix):
        return False
    before = name[:len(name) - len(suffix)]
    return before.endswith((".", "::", ":", "/")) or suffix.startswith((".", ":"))


def _ambiguous(index: GraphIndex, text: str, found: list[int], how: str) -> UserInputError:
    shown = ", ".join(index.ids[i] for i in found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    return UserInputError(f"{len(found)} nodes {how} {text!r}: {shown}{more}; give the node id")


def _nearest(index: GraphIndex, text: str) -> str:
    """'; nearest: a, b, c': the nodes whose names, cut to as many parts as ``text`` has, are
    closest to it (``SiluAndMull.forward`` finds ``SiluAndMul.forward_cuda``)."""
    parts = len(re.split(r"\.|::", text))
    by_tail: dict[str, list[int]] = collections.defaultdict(list)
    for i, qualname in enumerate(index.qualnames):
        tail = re.split(r"(\.|::)", qualname)[-(2 * parts - 1):]
        by_tail["".join(tail)].append(i)
    close = difflib.get_close_matches(text, list(by_tail), n=3, cutoff=0.6)
    ids = [index.ids[i] for name in close for i in by_tail[name][:2]][:5]
    return f"; nearest: {', '.join(ids)}" if ids else ""


# ---------------------------------------------------------------------------------------- walks


def shortest_paths(index: GraphIndex, source: str, target: str, edges: Iterable[str] = DEFAULT_EDGES,
                   max_paths: int = 3) -> PathsAnswer:
    """Up to ``max_paths`` shortest chains from ``source`` to ``target`` along ``edges``."""
    kinds = edge_kinds(edges)
    start, goal = resolve(index, source), resolve(index, target)
    allowed = _codes(index, kinds)
    preds: dict[int, list[int]] = {start: []}  # node -> the edges that reach it on a shortest chain
    frontier = [start]
    while frontier and goal not in preds:
        reached: dict[int, list[int]] = {}
        for u in frontier:
            for e in index.outgoing(u):
                v = index.edge_target[e]
                if index.edge_kind[e] in allowed and v not in preds:
                    reached.setdefault(v, []).append(e)
        preds.update(reached)
        frontier = sorted(reached)
    paths = tuple(_chain(index, start, chain) for chain in _unwind(index, preds, goal, max_paths)) \
        if goal in preds and goal != start else ()
    return PathsAnswer("path", index.system, kinds, node_ref(index, start), node_ref(index, goal), paths)


def _unwind(index: GraphIndex, preds: dict[int, list[int]], goal: int, limit: int) -> Iterator[list[int]]:
    """Edge lists start -> goal along ``preds``, in index order; one edge per pair of nodes."""
    count = 0

    def back(node: int, suffix: list[int]) -> Iterator[list[int]]:
        nonlocal count
        if not preds[node]:
            count += 1
            yield suffix
            return
        seen: set[int] = set()
        for e in preds[node]:
            u = index.edge_source[e]
            if u in seen:
                continue  # a second edge between the same two nodes: the same chain of nodes
            seen.add(u)
            yield from back(u, [e, *suffix])
            if count >= limit:
                return

    yield from back(goal, [])


def _chain(index: GraphIndex, start: int, edge_list: list[int]) -> tuple[Step, ...]:
    steps = [Step(node_ref(index, start), None)]
    for e in edge_list:
        steps.append(Step(node_ref(index, index.edge_target[e]), edge_ref(index, e)))
    return tuple(steps)


def walk(index: GraphIndex, start_text: str, *, backwards: bool = False, edges: Iterable[str] = DEFAULT_EDGES,
         depth: int | None = 1, kinds: Iterable[str] = (), languages: Iterable[str] = (),
         query: str = "") -> HitsAnswer:
    """Every node within ``depth`` steps (None: any) of the start, along ``edges`` forwards
    (callees) or ``backwards`` (callers), kept when its kind and language are among those given
    (empty: any); each with one shortest chain."""
    named_edges = edge_kinds(edges)
    allowed = _codes(index, named_edges)
    unknown = sorted(set(kinds) - set(NODE_KINDS))
    if unknown:
        raise UserInputError(f"unknown node kind {', '.join(unknown)}: use one of {', '.join(NODE_KINDS)}")
    kind_filter, language_filter = _codes(index, kinds), _codes(index, languages)
    start = resolve(index, start_text)
    via: dict[int, int] = {}  # node -> the edge it was first reached by
    level = {start: 0}
    frontier = [start]
    while frontier and (depth is None or level[frontier[0]] < depth):
        following = []
        for u in frontier:
            for e in (index.incoming(u) if backwards else index.outgoing(u)):
                v = index.edge_source[e] if backwards else index.edge_target[e]
                if index.edge_kind[e] in allowed and v not in level:
                    level[v] = level[u] + 1
                    via[v] = e
                    following.append(v)
        frontier = following
    hits = []
    for node in sorted(via, key=lambda n: (level[n], index.ids[n])):
        if (kinds and index.node_kind[node] not in kind_filter) or \
                (languages and index.node_language[node] not in language_filter):
            continue
        hits.append(Hit(node_ref(index, node), level[node], _witness(index, start, node, via, backwards)))
    name = query or ("callers" if backwards else "callees")
    return HitsAnswer(name, index.system, named_edges, node_ref(index, start), tuple(hits))


def _witness(index: GraphIndex, start: int, node: int, via: dict[int, int], backwards: bool) -> tuple[Step, ...]:
    edge_list = []
    cursor = node
    while cursor != start:
        e = via[cursor]
        edge_list.append(e)
        cursor = index.edge_target[e] if backwards else index.edge_source[e]
    if backwards:  # the chain reads in the edges' direction: from the caller to the start
        steps = [Step(node_ref(index, node), None)]
        for e in edge_list:
            steps.append(Step(node_ref(index, index.edge_target[e]), edge_ref(index, e)))
        return tuple(steps)
    return _chain(index, start, edge_list[::-1])


def callers(index: GraphIndex, node: str, **options) -> HitsAnswer:
    return walk(index, node, backwards=True, query="callers", **options)


def callees(index: GraphIndex, node: str, **options) -> HitsAnswer:
    return walk(index, node, query="callees", **options)


def reach(index: GraphIndex, node: str, to_kind: str, *, edges: Iterable[str] = DEFAULT_EDGES,
          languages: Iterable[str] = ()) -> HitsAnswer:
    """Every node of kind ``to_kind`` reachable from ``node`` at any depth, with one chain each."""
    return walk(index, node, edges=edges, depth=None, kinds=(to_kind,), languages=languages, query="reach")


# ----------------------------------------------------------------------------------------- find


def find(index: GraphIndex, pattern: str, *, regex: bool = False, kinds: Iterable[str] = (),
         languages: Iterable[str] = (), layers: Iterable[str] = (), api: str = "") -> FindAnswer:
    """Nodes whose qualname or id matches ``pattern`` (a glob, or with ``regex`` a regular
    expression searched anywhere), of the kinds, languages and layers given (empty: any); with
    ``api`` "public" those whose ``api`` reason says public, with "private" those whose reason
    says anything else (``private: ...``, ``internal: ...``); a node without a reason is neither."""
    if api not in ("", "public", "private"):
        raise UserInputError(f"unknown api filter {api!r}: use public or private")
    try:
        matcher = re.compile(pattern if regex else fnmatch.translate(pattern))
    except re.error as err:
        raise UserInputError(f"bad pattern {pattern!r}: {err}") from None
    test = matcher.search if regex else matcher.match
    kinds, languages, layers = tuple(kinds), tuple(languages), tuple(layers)
    kind_filter, language_filter, layer_filter = _codes(index, kinds), _codes(index, languages), _codes(index, layers)
    # "private" is everything the evidence says is not public: private Python, internal C++
    api_filter = frozenset(i for i, text in enumerate(index.texts)
                           if text and text.startswith("public:") == (api == "public"))
    found = []
    for i, nid in enumerate(index.ids):
        if kinds and index.node_kind[i] not in kind_filter:
            continue
        if languages and index.node_language[i] not in language_filter:
            continue
        if layers and index.node_layer[i] not in layer_filter:
            continue
        if api and index.node_api[i] not in api_filter:
            continue
        if test(index.qualnames[i]) or test(nid):
            found.append(node_ref(index, i))
    return FindAnswer("find", index.system, pattern, tuple(found))


# -------------------------------------------------------------------------------- reached from


# What a change in C++ reaches Python through, read backwards: calls, bindings across languages,
# kernel launches and the struct types a signature names.
IMPACT_EDGES: tuple[str, ...] = ("binds", "calls", "launches", "uses")


@dataclasses.dataclass(frozen=True, slots=True)
class Reached:
    """The nodes that reach one target: the nearest ones (or the farthest; up to the limit asked,
    by depth, then id), each with one shortest chain from it to one of the target's seeds, and
    how many reach it at any depth."""

    target: NodeRef
    hits: tuple[Hit, ...]
    total: int


def python_nodes(index: GraphIndex, public: bool) -> frozenset[int]:
    """The Python nodes whose ``api`` reason says public (``public``), or all the others."""
    python = _codes(index, ("python",))
    said_public = frozenset(i for i, text in enumerate(index.texts) if text.startswith("public:"))
    return frozenset(i for i in range(len(index.ids))
                     if index.node_language[i] in python and (index.node_api[i] in said_public) == public)


def public_python(index: GraphIndex) -> frozenset[int]:
    """The nodes of the public Python API."""
    return python_nodes(index, public=True)


def reached_by(index: GraphIndex, targets: Sequence[tuple[int, Sequence[int]]], keep: frozenset[int], *,
               edges: Iterable[str] = IMPACT_EDGES, limit: int = 5, farthest: bool = False) -> tuple[Reached, ...]:
    """For each target (its node and the seed nodes a walk starts from: the node itself, a
    struct's methods ...), the nodes of ``keep`` that reach a seed along ``edges``: the nearest
    ``limit`` of them, or with ``farthest`` those farthest up (where the graph's chains stop).

    One breadth-first walk backwards for all targets at once: a node carries the set of targets
    whose walks reached it (a bit each), and a level passes on only the bits a node gains, so
    every (node, target) pair is visited once and at its shortest depth; the witness chains are
    those of one walk per target, without walking the shared part of the graph once per target."""
    allowed = _codes(index, edge_kinds(edges))
    seen: dict[int, int] = {}  # node -> the targets (bits) whose walk has reached it
    via: dict[tuple[int, int], int] = {}  # (node, target) -> the edge that walk first reached it by
    frontier: dict[int, int] = {}
    for k, (_, seeds) in enumerate(targets):
        for seed in seeds:
            frontier[seed] = frontier.get(seed, 0) | 1 << k
    seen.update(frontier)
    found: list[list[tuple[int, int]]] = [[] for _ in targets]  # per target: (depth, node)
    level = 0
    while frontier:
        level += 1
        following: dict[int, int] = {}
        for u in sorted(frontier):
            bits = frontier[u]
            for e in index.incoming(u):
                if index.edge_kind[e] not in allowed:
                    continue
                v = index.edge_source[e]
                new = bits & ~(seen.get(v, 0) | following.get(v, 0))
                if new:
                    following[v] = following.get(v, 0) | new
                    for k in _bits(new):
                        via[v, k] = e
        for v, new in following.items():
            seen[v] = seen.get(v, 0) | new
            if v in keep:
                for k in _bits(new):
                    found[k].append((level, v))
        frontier = following
    out = []
    for k, (target, _) in enumerate(targets):
        nearest = sorted(found[k], key=lambda hit: (-hit[0] if farthest else hit[0], index.ids[hit[1]]))[:limit]
        hits = tuple(Hit(node_ref(index, v), depth, _chain_to(index, v, k, via)) for depth, v in nearest)
        out.append(Reached(node_ref(index, target), hits, len(found[k])))
    return tuple(out)


def _bits(mask: int) -> Iterator[int]:
    k = 0
    while mask:
        if mask & 1:
            yield k
        mask >>= 1
        k += 1


def _chain_to(index: GraphIndex, node: int, target: int, via: dict[tuple[int, int], int]) -> tuple[Step, ...]:
    """The chain from ``node`` along the edges target's walk reached it by, to a seed."""
    steps = [Step(node_ref(index, node), None)]
    cursor = node
    while (cursor, target) in via:
        e = via[cursor, target]
        cursor = index.edge_target[e]
        steps.append(Step(node_ref(index, cursor), edge_ref(index, e)))
    return tuple(steps)


def impact_seeds(index: GraphIndex, node: int) -> tuple[int, ...]:
    """Where a walk back from a changed entity starts: the node itself, the callables it contains
    (a struct's methods: calling one depends on the layout) and the functions that implement it
    (the C++ function registered for a torch operator, which Python's ``binds`` edges reach)."""
    contains, implements = _codes(index, ("contains",)), _codes(index, ("implements",))
    callables = _codes(index, ("function", "method", "kernel"))
    seeds = {node}
    for e in index.outgoing(node):
        if index.edge_kind[e] in contains and index.node_kind[index.edge_target[e]] in callables:
            seeds.add(index.edge_target[e])
    for e in index.incoming(node):
        if index.edge_kind[e] in implements:
            seeds.add(index.edge_source[e])
    return tuple(sorted(seeds))
