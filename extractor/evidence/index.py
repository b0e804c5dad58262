"""The symbol graph of one evidence file as a compact index for queries, built once per file.

Reading and validating vLLM's ``evidence.json`` (48k nodes, 110k edges, 48 MB) takes seconds; a
query (``archdiff graph callers ...``) must answer in well under one. So a query reads the graph
through this index instead: node columns and the edges in both directions as offset tables (CSR),
stored as msgpack under the cache directory (``graph-index/<sha256 of the file>.msgpack``). A warm
query hashes the file, reads the index and walks integers; an evidence file that changed has
another hash, so a stale index is never read. The index is built from the typed evidence
(:func:`extractor.evidence.read.load_evidence`): there is no second reader of the bundle.

Neighbours are ordered by node id and edge kind, line and path, so every walk over the index
visits them in the same order and queries answer the same bytes on every run.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from extractor.errors import StorageError
from extractor.support.storage import default_cache_dir, write_atomic

if TYPE_CHECKING:  # the warm path never reads the bundle, so it does not import its 0.8 s of readers
    from extractor.evidence.read import Evidence

INDEX_VERSION = 1  # raise when the stored shape changes: an older index is then rebuilt


class GraphIndex(msgspec.Struct, frozen=True):
    """Node columns (node ``i`` is ``ids[i]``, of kind ``texts[kind[i]]`` ...) and edge columns;
    ``out_start[i]`` to ``out_start[i + 1]`` are the positions in ``out_edges`` of node ``i``'s
    outgoing edges (``in_start``/``in_edges`` its incoming ones). Repeated strings (kinds,
    languages, paths, api reasons, layers) are stored once in ``texts`` and named by position:
    vLLM's index is 9.5 MB instead of 18 and reads in half the time."""

    version: int
    system: str
    system_version: str
    texts: list[str]
    ids: list[str]
    qualnames: list[str]
    node_kind: list[int]
    node_language: list[int]
    node_path: list[int]
    lines: list[int]
    node_api: list[int]  # the node's ``api`` reason ("public: ...", "private: ...", "" when not stated)
    node_layer: list[int]  # the role of the node's file, "" when the layers step gave it none
    edge_source: list[int]
    edge_target: list[int]
    edge_kind: list[int]
    edge_path: list[int]
    edge_line: list[int]
    out_start: list[int]
    out_edges: list[int]
    in_start: list[int]
    in_edges: list[int]

    def outgoing(self, node: int) -> list[int]:
        return self.out_edges[self.out_start[node]:self.out_start[node + 1]]

    def incoming(self, node: int) -> list[int]:
        return self.in_edges[self.in_start[node]:self.in_start[node + 1]]


_RECENT: list[tuple[Evidence, GraphIndex]] = []  # the last two evidences indexed by index_of


def index_of(evidence: Evidence) -> GraphIndex:
    """:func:`build_index`, once per evidence for the last two asked about: a release diff asks for
    both sides from each kind that names the API reaching a change (api, structs), and ``releases``
    asks for each release as the new side, then as the old one."""
    for seen, index in _RECENT:
        if seen is evidence:
            return index
    index = build_index(evidence)
    _RECENT[:] = [*_RECENT[-1:], (evidence, index)]
    return index


def build_index(evidence: Evidence) -> GraphIndex:
    from extractor.layers.records import LAYERS, role_by_path

    nodes = sorted(evidence.graph.nodes, key=lambda n: n.id)
    position = {n.id: i for i, n in enumerate(nodes)}
    roles = role_by_path(evidence.of(LAYERS)) if LAYERS.key in evidence.records else {}
    edges = sorted(evidence.graph.edges, key=lambda e: (e.source, e.target, e.kind.value, e.line, e.path))
    texts: dict[str, int] = {}

    def code(text: str) -> int:
        return texts.setdefault(text, len(texts))

    source = [position[e.source] for e in edges]
    target = [position[e.target] for e in edges]
    out_start, out_edges = _offsets(len(nodes), source, target)
    in_start, in_edges = _offsets(len(nodes), target, source)
    return GraphIndex(
        version=INDEX_VERSION, system=evidence.system.name, system_version=evidence.system.version,
        ids=[n.id for n in nodes], qualnames=[n.qualname for n in nodes],
        node_kind=[code(n.kind.value) for n in nodes], node_language=[code(n.language) for n in nodes],
        node_path=[code(n.path) for n in nodes], lines=[n.line for n in nodes],
        node_api=[code(n.api) for n in nodes], node_layer=[code(roles.get(n.path, "")) for n in nodes],
        edge_source=source, edge_target=target, edge_kind=[code(e.kind.value) for e in edges],
        edge_path=[code(e.path) for e in edges], edge_line=[e.line for e in edges],
        out_start=out_start, out_edges=out_edges, in_start=in_start, in_edges=in_edges,
        texts=list(texts))


def _offsets(count: int, ends: list[int], others: list[int]) -> tuple[list[int], list[int]]:
    """CSR offsets of the edges grouped by ``ends``, each group ordered by the other end (node
    positions follow node ids) and then by the edge's own order."""
    order = sorted(range(len(ends)), key=lambda e: (ends[e], others[e], e))
    start = [0] * (count + 1)
    for e in ends:
        start[e + 1] += 1
    for i in range(count):
        start[i + 1] += start[i]
    return start, order


def index_path(evidence_file: Path, cache_dir: Path | None = None) -> Path:
    digest = hashlib.sha256()
    with open(evidence_file, "rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return (cache_dir or default_cache_dir()) / "graph-index" / f"v{INDEX_VERSION}-{digest.hexdigest()}.msgpack"


_DECODER = msgspec.msgpack.Decoder(GraphIndex)


def load_index(evidence_file: Path | str, cache_dir: Path | None = None) -> GraphIndex:
    """The index of ``evidence_file``: read from the cache when this very file (by content) was
    indexed before, else built from the validated evidence and stored."""
    path = Path(evidence_file)
    if path.is_file():
        stored = index_path(path, cache_dir)
        try:
            index = _DECODER.decode(stored.read_bytes())
            if index.version == INDEX_VERSION:
                return index
        except (OSError, msgspec.DecodeError):
            pass  # no index yet, or one damaged on disk: build it again
    # Imported only here: reading the bundle pulls in every step's records (0.8 s of imports).
    from extractor.evidence.read import load_evidence

    evidence = load_evidence(path)  # a missing or unreadable file is the loader's one-line error
    index = build_index(evidence)
    stored = index_path(path, cache_dir)
    try:
        write_atomic(stored, msgspec.msgpack.encode(index))
    except (OSError, StorageError):
        pass  # a read-only cache costs the next query the build, not this one its answer
    return index
