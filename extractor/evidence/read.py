"""The evidence bundle read back into the extractor's own record types, validated once.

``evidence.json`` is what the extractor wrote with :func:`extractor.evidence.write.build_bundle`: nodes
and edges (:mod:`extractor.model`), and one list of records per evidence kind (each kind's
``records`` module). :func:`load_evidence` turns such a file back into those frozen records, and
:func:`evidence_json` turns them into the same JSON again, byte for byte once dumped with
:func:`extractor.evidence.write.dumps_bundle`. Readers (the comparator, the graph export) work on the
records, so a key the evidence cannot contain cannot be read.

Validation happens here and only here. Every problem is one :class:`EvidenceFormatError` line
naming the file and the field (``evidence.json: structs[3].members[0].offset: expected an
integer, got 'x'``): a wrong type, a missing or unknown key, a value outside its enum, an edge to
a node that does not exist, a number JSON cannot carry exactly, nesting deeper than the JSON reader goes.

The record lists the loader reads are the record kinds of the steps
(:data:`extractor.evidence.schema.RECORD_KINDS`); a caller with steps of its own passes their kinds.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import math
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from extractor.errors import EvidenceFormatError
from extractor.evidence.schema import GRAPH_KEYS, RECORD_KINDS, SCHEMA_VERSION, TAIL_KEYS
from extractor.model import (Binding, Diagnostic, Edge, EdgeKind, Location, Node, NodeKind, Parameter, RecordKind,
                             Signature, edge_json, node_json, to_jsonable)

R = TypeVar("R")
# Integers beyond 2**53 do not survive a round trip through most JSON readers; no count, line or
# offset in real evidence comes near.
MAX_INT = 2 ** 53


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class SystemName:
    name: str
    version: str


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class SourceRecord:
    """One acquired source as recorded: what the user wrote, and what it resolved to."""

    label: str
    spec: str
    kind: str  # "git", "dir", "pypi", "archive"
    ref: str
    commit: str


@dataclasses.dataclass(frozen=True, slots=True)
class Graph:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]

    def by_id(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}


@dataclasses.dataclass(frozen=True, slots=True)
class Evidence:
    """One system's evidence bundle as records: the graph, one tuple of records per record kind
    (``evidence.of(STRUCTS)``), the diagnostics and the stats."""

    system: SystemName
    sources: tuple[SourceRecord, ...]
    graph: Graph
    records: Mapping[str, tuple[Any, ...]]  # bundle key -> its records, in the order of the kinds read
    diagnostics: tuple[Diagnostic, ...]
    # Counts per step and language, as each step chose them: free-form except ``files`` (language ->
    # files), which the loader checks because the report reads it.
    stats: Mapping[str, Any]
    schema_version: int = SCHEMA_VERSION

    def of(self, kind: RecordKind[R]) -> tuple[R, ...]:
        """The records of ``kind`` (``evidence.of(STRUCTS)``: a tuple of ``StructLayout``)."""
        try:
            return self.records[kind.key]
        except KeyError:
            raise KeyError(f"this evidence was read without the record kind {kind.key!r}") from None


def top_keys(kinds: Sequence[RecordKind]) -> tuple[str, ...]:
    return (*GRAPH_KEYS, *(kind.key for kind in kinds), *TAIL_KEYS)


# ---------------------------------------------------------------------------------------- reading


def load_evidence(path: Path | str, kinds: Sequence[RecordKind] = RECORD_KINDS) -> Evidence:
    """Read and validate an evidence file; any problem is one :class:`EvidenceFormatError` line.
    ``kinds``: the record lists it holds (the shipped steps' by default)."""
    return evidence_from_json(read_json(path), str(path), kinds)


def load_bundle(path: Path, kinds: Sequence[RecordKind] = RECORD_KINDS) -> dict[str, Any]:
    """Read and validate an evidence file, and keep it as JSON values (for a caller that only
    passes the bundle on, such as the graph export)."""
    data = read_json(path)
    evidence_from_json(data, str(path), kinds)
    return data


def read_json(path: Path | str) -> Any:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EvidenceFormatError(f"{path}: no such evidence file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise EvidenceFormatError(f"{path}: cannot read evidence file: {err}") from None
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as err:
        raise EvidenceFormatError(f"{path}:{err.lineno}:{err.colno}: not valid JSON ({err.msg}); "
                                  "re-run `archdiff extract` to rebuild it") from None
    except ValueError as err:  # NaN/Infinity, or an integer literal too long to convert
        raise EvidenceFormatError(f"{path}: not valid evidence JSON ({err})") from None
    except RecursionError:  # Python's JSON reader recurses once per level of nesting
        raise EvidenceFormatError(f"{path}: nested too deeply to be archdiff evidence") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def evidence_from_json(data: Any, where: str = "evidence", kinds: Sequence[RecordKind] = RECORD_KINDS) -> Evidence:
    """The records of an already parsed bundle (``where`` names it in errors)."""
    if not isinstance(data, dict) or "schema_version" not in data:
        raise EvidenceFormatError(f"{where}: not an archdiff evidence file (no schema_version)")
    if data["schema_version"] != SCHEMA_VERSION:
        raise EvidenceFormatError(f"{where}: evidence schema version {data['schema_version']!r:.40}; this archdiff "
                                  f"reads version {SCHEMA_VERSION}: re-run `archdiff extract`")
    _keys(data, top_keys(kinds), (), where, "")
    graph = data["graph"]
    _keys(graph, ("directed", "multigraph", "graph", "nodes", "edges"), (), where, "graph")
    for key in ("directed", "multigraph"):
        if graph[key] is not True:
            _fail(where, f"graph.{key}", "true", graph[key])
    if graph["graph"] != {}:
        _fail(where, "graph.graph", "an empty mapping", graph["graph"])
    nodes = tuple(_node(n, where, f"graph.nodes[{i}]") for i, n in enumerate(_list(graph["nodes"], where, "graph.nodes")))
    ids = {n.id for n in nodes}
    if len(ids) != len(nodes):
        seen: set[str] = set()
        twice = ""
        for n in nodes:
            if n.id in seen:
                twice = n.id
                break
            seen.add(n.id)
        raise EvidenceFormatError(f"{where}: graph.nodes: node id {twice!r:.80} is listed twice")
    edges = []
    for i, e in enumerate(_list(graph["edges"], where, "graph.edges")):
        edge = _edge(e, where, f"graph.edges[{i}]")
        for end in ("source", "target"):
            if getattr(edge, end) not in ids:
                raise EvidenceFormatError(f"{where}: graph.edges[{i}].{end}: {getattr(edge, end)!r:.80} is not a node "
                                          "of this graph")
        edges.append(edge)
    records = {kind.key: tuple(decode(kind.record, r, where, f"{kind.key}[{i}]")
                               for i, r in enumerate(_list(data[kind.key], where, kind.key)))
               for kind in kinds}
    stats = data["stats"]
    if not isinstance(stats, dict):
        _fail(where, "stats", "a mapping", stats)
    # The one part of the stats readers use: files per language (build_bundle always writes it).
    if "files" not in stats:
        raise EvidenceFormatError(f"{where}: stats.files: required key is missing")
    _file_counts(stats["files"], where, "stats.files")
    return Evidence(
        system=decode(SystemName, data["system"], where, "system"),
        sources=tuple(decode(SourceRecord, s, where, f"sources[{i}]")
                      for i, s in enumerate(_list(data["sources"], where, "sources"))),
        graph=Graph(nodes, tuple(edges)),
        diagnostics=tuple(decode(Diagnostic, d, where, f"diagnostics[{i}]")
                          for i, d in enumerate(_list(data["diagnostics"], where, "diagnostics"))),
        records=records,
        stats=stats,
    )


# ---------------------------------------------------------------------------------------- writing


def evidence_json(evidence: Evidence) -> dict[str, Any]:
    """The bundle as :func:`extractor.evidence.write.build_bundle` writes it."""
    return {
        "schema_version": evidence.schema_version,
        "system": to_jsonable(evidence.system),
        "sources": [to_jsonable(s) for s in evidence.sources],
        "graph": {"directed": True, "multigraph": True, "graph": {},
                  "nodes": [node_json(n) for n in evidence.graph.nodes],
                  "edges": [edge_json(e) for e in evidence.graph.edges]},
        **{key: [to_jsonable(r) for r in records] for key, records in evidence.records.items()},
        "diagnostics": [to_jsonable(d) for d in evidence.diagnostics],
        "stats": evidence.stats,
    }


# ---------------------------------------------------------------------------------------- decoding


def decode(cls: Any, value: Any, where: str, field: str) -> Any:
    """``value`` (parsed JSON) as an instance of ``cls``: a record dataclass, an enum, a scalar,
    ``X | None`` or ``tuple[X, ...]``."""
    return _decoder(cls)(value, where, field)


@functools.cache
def _decoder(tp: Any) -> Callable[[Any, str, str], Any]:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(tp)
        inner = [o for o in options if o is not type(None)]
        if len(inner) != 1:
            raise TypeError(f"unsupported union {tp!r}")  # a bug in archdiff, not in the evidence
        decode_inner = _decoder(inner[0])
        return lambda v, w, f: None if v is None else decode_inner(v, w, f)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) != 2 or args[1] is not Ellipsis:
            raise TypeError(f"unsupported tuple {tp!r}")
        item = _decoder(args[0])
        return lambda v, w, f: tuple(item(x, w, f"{f}[{i}]") for i, x in enumerate(_list(v, w, f)))
    if tp is Node:
        return _node
    if tp is Edge:
        return _edge
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _record_decoder(tp)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        values = {m.value: m for m in tp}
        expected = "one of " + ", ".join(sorted(values))

        def enum_value(v: Any, w: str, f: str) -> Any:
            member = values.get(v) if isinstance(v, str) else None
            if member is None:
                _fail(w, f, expected, v)
            return member
        return enum_value
    if tp is str:
        return _str
    if tp is bool:
        return _bool
    if tp is int:
        return _int
    if tp is float:
        return _float
    raise TypeError(f"no decoder for {tp!r}")


def _record_decoder(cls: type) -> Callable[[Any, str, str], Any]:
    hints = typing.get_type_hints(cls)
    # A trailing underscore only dodges a Python keyword (``for_``): JSON has the plain word.
    fields = [(f.name, f.name.removesuffix("_"), _decoder(hints[f.name])) for f in dataclasses.fields(cls)]
    keys = tuple(key for _name, key, _d in fields)

    def record(v: Any, w: str, f: str) -> Any:
        _keys(v, keys, (), w, f)
        return cls(**{name: dec(v[key], w, f"{f}.{key}") for name, key, dec in fields})
    return record


def _str(v: Any, w: str, f: str) -> str:
    if not isinstance(v, str):
        _fail(w, f, "a string", v)
    return v


def _bool(v: Any, w: str, f: str) -> bool:
    if not isinstance(v, bool):
        _fail(w, f, "true or false", v)
    return v


def _int(v: Any, w: str, f: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or not -MAX_INT < v < MAX_INT:
        _fail(w, f, "an integer" if not isinstance(v, int) or isinstance(v, bool) else
              "an integer of magnitude below 2**53", v)
    return v


def _float(v: Any, w: str, f: str) -> float:
    # An integral float may have been written as an integer: kept as read, so it is written back alike.
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not -MAX_INT < v < MAX_INT:
        _fail(w, f, "a finite number", v)
    return v


def _list(v: Any, w: str, f: str) -> list[Any]:
    if not isinstance(v, list):
        _fail(w, f, "a list", v)
    return v


_NODE_REQUIRED = ("id", "kind", "name", "qualname", "language", "path", "line", "doc", "signature", "tags")
_NODE_OPTIONAL = ("params", "returns", "decorators", "overloads", "sites", "annotation", "value_kind", "api", "bound")


def _node(v: Any, w: str, f: str) -> Node:
    # Graphs have tens of thousands of nodes: a node of the usual shape is checked in one pass,
    # anything else goes through the field-by-field check that names what is wrong.
    # Most nodes carry optional keys too (``api``, ``params``): those go through their decoders.
    if type(v) is dict and len(v) >= len(_NODE_REQUIRED):
        try:
            nid, kind, name, qual, lang, path, line, doc, sig, tags = (v[k] for k in _NODE_REQUIRED)
        except KeyError:
            return _node_checked(v, w, f)
        kind = _NODE_KINDS.get(kind) if type(kind) is str else None
        if (kind is not None and type(nid) is str and type(name) is str and type(qual) is str and type(lang) is str
                and type(path) is str and type(line) is int and -MAX_INT < line < MAX_INT and type(doc) is str
                and type(sig) is str and type(tags) is list and all(type(x) is str for x in tags)):
            if len(v) == len(_NODE_REQUIRED):
                return Node(nid, kind, name, qual, lang, path, line, doc, sig, tuple(tags))
            if all(key in _NODE_KEYS for key in v):
                return Node(nid, kind, name, qual, lang, path, line, doc, sig, tuple(tags), **_node_extra(v, w, f))
    return _node_checked(v, w, f)


def _node_checked(v: Any, w: str, f: str) -> Node:
    _keys(v, _NODE_REQUIRED, _NODE_OPTIONAL, w, f)
    extra = _node_extra(v, w, f) if len(v) > len(_NODE_REQUIRED) else {}
    return Node(_str(v["id"], w, _join(f, "id")), _NODE_KIND(v["kind"], w, _join(f, "kind")),
                _str(v["name"], w, _join(f, "name")), _str(v["qualname"], w, _join(f, "qualname")),
                _str(v["language"], w, _join(f, "language")), _str(v["path"], w, _join(f, "path")),
                _int(v["line"], w, _join(f, "line")), _str(v["doc"], w, _join(f, "doc")),
                _str(v["signature"], w, _join(f, "signature")), _STRINGS(v["tags"], w, _join(f, "tags")), **extra)


def _node_extra(v: dict[str, Any], w: str, f: str) -> dict[str, Any]:
    """The optional fields of a node whose keys are all known."""
    extra = {}
    for key in _NODE_OPTIONAL:
        if key in v:
            value = _NODE_DECODERS[key](v[key], w, _join(f, key))
            # node_json writes these only when set: a default written out would not round-trip
            if value == _NODE_DEFAULTS[key]:
                _fail(w, _join(f, key), "a value other than the default (omit the key instead)", v[key])
            extra[key] = value
    return extra


def _edge(v: Any, w: str, f: str) -> Edge:
    if type(v) is dict and len(v) == 5:
        try:
            source, target, kind, path, line = v["source"], v["target"], v["kind"], v["path"], v["line"]
        except KeyError:
            return _edge_checked(v, w, f)
        kind = _EDGE_KINDS.get(kind) if type(kind) is str else None
        if (kind is not None and type(source) is str and type(target) is str and type(path) is str
                and type(line) is int and -MAX_INT < line < MAX_INT):
            return Edge(source, target, kind, path, line)
    return _edge_checked(v, w, f)


def _edge_checked(v: Any, w: str, f: str) -> Edge:
    _keys(v, ("source", "target", "kind", "path", "line"), (), w, f)
    return Edge(_str(v["source"], w, _join(f, "source")), _str(v["target"], w, _join(f, "target")),
                _EDGE_KIND(v["kind"], w, _join(f, "kind")), _str(v["path"], w, _join(f, "path")),
                _int(v["line"], w, _join(f, "line")))


_NODE_TYPES = {"params": tuple[Parameter, ...], "returns": str, "decorators": tuple[str, ...],
               "overloads": tuple[Signature, ...], "sites": tuple[Location, ...], "annotation": str,
               "value_kind": str, "api": str, "bound": tuple[Binding, ...]}
_NODE_DEFAULTS = {f.name: f.default for f in msgspec.structs.fields(Node) if f.name in _NODE_TYPES}
_NODE_DECODERS = {key: _decoder(tp) for key, tp in _NODE_TYPES.items()}
_NODE_KEYS = frozenset((*_NODE_REQUIRED, *_NODE_OPTIONAL))
_NODE_KIND = _decoder(NodeKind)
_EDGE_KIND = _decoder(EdgeKind)
_NODE_KINDS = {k.value: k for k in NodeKind}
_EDGE_KINDS = {k.value: k for k in EdgeKind}
_STRINGS = _decoder(tuple[str, ...])


def _file_counts(v: Any, w: str, f: str) -> None:
    if not isinstance(v, dict):
        _fail(w, f, "a mapping", v)
    for language, count in v.items():
        _int(count, w, _join(f, str(language)[:40]))



def _keys(v: Any, required: tuple[str, ...], optional: tuple[str, ...], w: str, f: str) -> None:
    if not isinstance(v, dict):
        _fail(w, f or "(top level)", "a mapping", v)
    for key in required:
        if key not in v:
            raise EvidenceFormatError(f"{w}: {_join(f, key)}: required key is missing")
    if len(v) > len(required):
        for key in v:
            if key not in required and key not in optional:
                raise EvidenceFormatError(f"{w}: {_join(f, str(key)[:80])}: unknown key")


def _join(f: str, key: str) -> str:
    return f"{f}.{key}" if f else key


def _fail(w: str, f: str, expected: str, got: Any) -> typing.NoReturn:
    shown = repr(got) if not isinstance(got, (dict, list)) else type(got).__name__
    if len(shown) > 40:
        shown = shown[:37] + "..."
    raise EvidenceFormatError(f"{w}: {f}: expected {expected}, got {shown}")
