"""The Protocol Buffers part of the symbol graph, built from every .proto file's facts.

Ids are protobuf's full names behind ``proto:``: a package is ``proto:<package>``
(``proto:inference``, ``proto:grpc.health.v1``), a message or enum ``proto:<package>.<Name>``, a
nested one ``proto:<package>.<Outer>.<Inner>``, a field ``proto:<package>.<Message>.<field>``, a
service ``proto:<package>.<Service>`` and its rpcs ``proto:<package>.<Service>.<Rpc>``; a file
without a package puts its names at the root (``proto:Name``). An enum value is named under its
enum, ``proto:<package>.<Enum>.<VALUE>`` (protobuf's own full name for it is the enum's sibling,
``<package>.<VALUE>``, C++'s scoping: the id keeps the enum so that the value reads as its
member). A .proto file is ``file:<path>``, as every file of the graph is; an imported file that is
not in the system is an ``external`` node ``proto:<import path>`` (``proto:google/protobuf/any.proto``),
and a ``google.protobuf.*`` type such a file defines is ``proto:google.protobuf.<Name>``, external.

Kinds: a message is a ``struct`` (data only: typed, numbered fields, no behaviour, no inheritance;
what C, Go and Rust records are here), an enum an ``enum``, a service an ``interface`` (operations
without implementation), an rpc a ``method``, a package a ``namespace``, fields and enum values
``attribute``s. The field number is the wire contract: a field carries it in its tags
(``number:5``) and its signature (``repeated InferInputTensor inputs = 5``), its type as written in
``annotation``; tags say ``field``, the label (``repeated``, ``optional``, ``required``), ``map``,
``oneof:<name>``, ``group``, ``extension`` and ``extends:<type>`` (an ``extend`` block's field,
named in the scope the block is written in), ``deprecated``. A message or enum keeps what it
``reserved`` in its tags, one tag per entry: ``reserved:8``, ``reserved:10..12``,
``reserved:40..max``, ``reserved:"old_field"`` (a deleted field's number and name, which a release
diff reads: a field removed with its number reserved cannot be reused by mistake). An rpc's signature is
``(stream Req) returns (stream Resp)``, its request the one parameter, its response ``returns``,
and tags ``client-streaming``/``server-streaming``. Everything in a .proto is public API.

Edges: ``contains`` (package and file -> top-level definitions, message -> nested definitions and
fields, enum -> values, service -> rpcs); ``imports`` file -> file, resolved against the system's
.proto files by path suffix (protoc resolves against include roots, which only the build knows),
preferring the importer's own repository, then the nearest; ``uses`` from an rpc to its request
and response and from a message to the messages and enums its fields name. Types are resolved as
protoc resolves them: from the innermost scope outwards (the first scope that has the name's first
part decides), then the root, among the symbols of the file itself, the files it imports and what
those import publicly; a leading dot is a full name. A name that resolves to nothing is counted
(``type_refs_unresolved``), never guessed; the extendee of an ``extend`` block is not an edge.
"""

from __future__ import annotations

import collections
import posixpath
from collections.abc import Iterable, Mapping
from typing import Any

from extractor.model import (Contribution, Diagnostic, Edge, EdgeKind, Language, Location, Node, NodeKind,
                             ParamKind, Parameter, Severity, amend, edge_key, node_key)
from extractor.naming import file_id
from extractor.proto.facts import ProtoFacts, ProtoField
from extractor.support.pathsuffix import by_suffix

PREFIX = "proto:"
API = "public: protobuf"
SCALARS = frozenset({"double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32",
                     "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes"})
_TYPES = frozenset({"message", "enum"})
_AGGREGATES = frozenset({"message", "enum", "service", "package"})


def proto_id(full_name: str) -> str:
    return PREFIX + full_name


def extract_proto_graph(ctx: Any) -> Contribution[None]:
    """The pipeline entry: ``ctx.facts("proto")`` in, graph parts out."""
    files = [(f.path, facts) for f, facts in ctx.facts("proto", Language.PROTO)]
    return build_proto_graph(files) if files else Contribution()


def build_proto_graph(files: Iterable[tuple[str, ProtoFacts]]) -> Contribution[None]:
    entries = sorted(files, key=lambda e: e[0])
    facts_of = dict(entries)
    stats: collections.Counter[str] = collections.Counter()
    graph = _Graph()
    diagnostics = []
    symbols: dict[str, dict[str, str]] = collections.defaultdict(dict)  # full name -> {path: kind}
    for path, facts in entries:
        tags = (f"edition:{facts.edition}",) if facts.edition else (facts.syntax,) if facts.syntax else ()
        graph.add(Node(file_id(path), NodeKind.FILE, posixpath.basename(path), path, "proto", path, 0, tags=tags))
        if facts.error is not None:
            stats["files_with_syntax_errors"] += 1
            line, message = facts.error
            diagnostics.append(Diagnostic(path, line, "syntax-error", f"not read: {message}", Severity.ERROR))
            continue
        _declare(path, facts, graph, symbols, stats)
    resolver = _ImportResolver(list(facts_of))
    imported: dict[str, list[tuple[str, str]]] = {}  # path -> (resolved path or "", modifier)
    for path, facts in entries:
        imported[path] = []
        for target, modifier, line in facts.imports:
            hit = resolver.resolve(path, target)
            if hit:
                stats["imports_resolved"] += 1
                graph.edge(file_id(path), file_id(hit), EdgeKind.IMPORTS, path, line)
            else:
                stats["imports_external"] += 1
                graph.external(proto_id(target), posixpath.basename(target), target)
                graph.edge(file_id(path), proto_id(target), EdgeKind.IMPORTS, path, line)
            imported[path].append((hit, modifier))
    for path, facts in entries:
        if facts.error is None:
            lookup = _Lookup(symbols, _visible(path, imported), facts.imports)
            _uses(path, facts, lookup, graph, stats)
    nodes, edges = graph.finish(stats)
    stats["files"] = len(entries)
    return Contribution(nodes=nodes, edges=edges, diagnostics=tuple(sorted(diagnostics)),
                        stats=dict(sorted(stats.items())))


class _Graph:
    """Nodes by id (a second definition of an id is one of its ``sites``), edges, external nodes."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.sites: dict[str, set[Location]] = collections.defaultdict(set)
        self.edges: list[Edge] = []
        self.externals: dict[str, Node] = {}

    def add(self, node: Node) -> None:
        first = self.nodes.setdefault(node.id, node)
        if first is not node:
            self.sites[node.id].add(Location(node.path, node.line))

    def edge(self, source: str, target: str, kind: EdgeKind, path: str, line: int) -> None:
        self.edges.append(Edge(source, target, kind, path, line))

    def external(self, nid: str, name: str, qualname: str) -> None:
        if nid not in self.nodes and nid not in self.externals:
            self.externals[nid] = Node(nid, NodeKind.EXTERNAL, name, qualname, "proto")

    def finish(self, stats: collections.Counter[str]) -> tuple[tuple[Node, ...], tuple[Edge, ...]]:
        for nid, where in self.sites.items():  # built here and not handed out yet
            node = self.nodes[nid]
            amend(node, "sites", tuple(sorted(where - {Location(node.path, node.line)})))
        for node in self.nodes.values():
            stats[f"nodes_{node.kind.value}"] += 1
        edges = tuple(sorted(set(self.edges), key=edge_key))
        for edge in edges:
            stats[f"edges_{edge.kind.value}"] += 1
        return tuple(sorted([*self.nodes.values(), *self.externals.values()], key=node_key)), edges


def _declare(path: str, facts: ProtoFacts, graph: _Graph, symbols: dict[str, dict[str, str]],
             stats: collections.Counter[str]) -> None:
    """The file's package, messages, enums, fields, values, services and rpcs: nodes, ``contains``
    edges and the symbols that type references resolve against."""
    package = facts.package
    file = file_id(path)

    def full(qual: str) -> str:
        return f"{package}.{qual}" if package else qual

    def parent_of(qual: str, line: int) -> str:
        """The container of a definition: its message, else the package (the file contains it too)."""
        outer = qual.rpartition(".")[0]
        if outer:
            return proto_id(full(outer))
        graph.edge(file, proto_id(full(qual)), EdgeKind.CONTAINS, path, line)
        return proto_id(package) if package else ""

    def put(node: Node, parent: str, kind: str) -> None:
        graph.add(node)
        symbols[node.qualname][path] = kind
        if parent:
            graph.edge(parent, node.id, EdgeKind.CONTAINS, path, node.line)

    if package:
        parts = package.split(".")
        for k in range(1, len(parts) + 1):  # `a.b.c` declares the packages `a` and `a.b` as well
            symbols[".".join(parts[:k])][path] = "package"
        graph.add(Node(proto_id(package), NodeKind.NAMESPACE, package, package, "proto", path, facts.package_line,
                       api=API))
    for d in facts.definitions:
        name = d.qual.rpartition(".")[2]
        tags = _tags("deprecated" * d.deprecated, *(f"reserved:{r}" for r in d.reserved))
        stats[f"{d.kind}s"] += 1
        kind = NodeKind.STRUCT if d.kind == "message" else NodeKind.ENUM
        node = Node(proto_id(full(d.qual)), kind, name, full(d.qual), "proto", path, d.line, d.doc,
                    f"{d.kind} {name}", tags, api=API)
        put(node, parent_of(d.qual, d.line), d.kind)
        for f in d.fields:
            stats["fields"] += 1
            put(_field_node(f"{full(d.qual)}.{f.name}", f, path), node.id, "field")
        for v in d.values:
            stats["enum_values"] += 1
            value = Node(f"{node.id}.{v.name}", NodeKind.ATTRIBUTE, v.name, f"{full(d.qual)}.{v.name}", "proto",
                         path, v.line, v.doc, f"{v.name} = {v.number}",
                         _tags(f"number:{v.number}", "deprecated" * v.deprecated),
                         value_kind="enum-member", api=API)
            graph.add(value)
            graph.edge(node.id, value.id, EdgeKind.CONTAINS, path, v.line)
            # protobuf scopes an enum value beside its enum (C++ rules): a symbol, not a type
            symbols[full(f"{d.qual.rpartition('.')[0]}.{v.name}".lstrip("."))][path] = "value"
    for e in facts.extensions:
        for f in e.fields:
            stats["extension_fields"] += 1
            qual = f"{e.scope}.{f.name}" if e.scope else f.name
            extra = ("extension", f"extends:{e.extendee}")
            put(_field_node(full(qual), f, path, extra), parent_of(qual, f.line), "field")
    for s in facts.services:
        stats["services"] += 1
        service = Node(proto_id(full(s.name)), NodeKind.INTERFACE, s.name, full(s.name), "proto", path, s.line,
                       s.doc, f"service {s.name}", ("deprecated",) if s.deprecated else (), api=API)
        put(service, parent_of(s.name, s.line), "service")
        for r in s.rpcs:
            stats["rpcs"] += 1
            stats["rpcs_client_streaming"] += r.client_streaming
            stats["rpcs_server_streaming"] += r.server_streaming
            signature = f"({'stream ' * r.client_streaming}{r.request}) returns " \
                        f"({'stream ' * r.server_streaming}{r.response})"
            rpc = Node(f"{service.id}.{r.name}", NodeKind.METHOD, r.name, f"{service.qualname}.{r.name}", "proto",
                       path, r.line, r.doc, signature,
                       _tags("client-streaming" * r.client_streaming, "server-streaming" * r.server_streaming,
                             "deprecated" * r.deprecated),
                       params=(Parameter("request", ParamKind.POSITIONAL_ONLY, r.request),), returns=r.response,
                       api=API)
            put(rpc, service.id, "rpc")


def _field_node(full: str, f: ProtoField, path: str, extra: tuple[str, ...] = ()) -> Node:
    written = f"map<{f.key}, {f.type}>" if f.key else f"group {f.type}" if f.group else f.type
    label = f"{f.label} " if f.label else ""
    tags = _tags("field", f"number:{f.number}", *extra, f.label, "map" * bool(f.key),
                 f"oneof:{f.oneof}" * bool(f.oneof), "group" * f.group, "deprecated" * f.deprecated)
    return Node(proto_id(full), NodeKind.ATTRIBUTE, f.name, full, "proto", path, f.line, f.doc,
                f"{label}{written} {f.name} = {f.number}", tags, annotation=written, api=API)


def _tags(*names: str) -> tuple[str, ...]:
    """The non-empty ``names``, sorted (``"deprecated" * flag`` is the tag when the flag is set)."""
    return tuple(sorted({n for n in names if n}))


def _uses(path: str, facts: ProtoFacts, lookup: _Lookup, graph: _Graph, stats: collections.Counter[str]) -> None:
    """``uses`` edges: message -> the types of its fields, rpc -> its request and response."""
    package = facts.package

    def full(qual: str) -> str:
        return f"{package}.{qual}" if package else qual

    def use(source: str, written: str, relative_to: str, line: int) -> None:
        if written in SCALARS:
            return
        target, how = lookup.type_of(written, relative_to)
        stats[f"type_refs_{how}"] += 1
        if target:
            if how == "external":
                graph.external(proto_id(target), target.rpartition(".")[2], target)
            graph.edge(source, proto_id(target), EdgeKind.USES, path, line)

    for d in facts.definitions:
        for f in d.fields:
            use(proto_id(full(d.qual)), f.type, full(f"{d.qual}.{f.name}"), f.line)
    for e in facts.extensions:
        for f in e.fields:
            qual = full(f"{e.scope}.{f.name}" if e.scope else f.name)
            use(proto_id(full(e.scope)) if e.scope else proto_id(qual), f.type, qual, f.line)
    for s in facts.services:
        for r in s.rpcs:
            rpc = proto_id(full(f"{s.name}.{r.name}"))
            use(rpc, r.request, full(f"{s.name}.{r.name}"), r.line)
            use(rpc, r.response, full(f"{s.name}.{r.name}"), r.line)


class _Lookup:
    """protoc's name lookup (``DescriptorBuilder::LookupSymbol``) among the symbols one file sees."""

    def __init__(self, symbols: Mapping[str, Mapping[str, str]], visible: frozenset[str],
                 imports: tuple[tuple[str, str, int], ...]) -> None:
        self.symbols, self.visible = symbols, visible
        # a file that imports one of protobuf's own files (not in the system) sees its google.protobuf types
        self.well_known = any(target.startswith("google/protobuf/") for target, _m, _l in imports)

    def kind(self, name: str) -> str:
        for path, kind in self.symbols.get(name, {}).items():
            if path in self.visible:
                return kind
        return ""

    def type_of(self, written: str, relative_to: str) -> tuple[str, str]:
        """(full name, how): how is "resolved", "external" (a google.protobuf type of an imported
        well-known file outside the system) or "unresolved" (full name "")."""
        found = self._find(written, relative_to)
        if found and self.kind(found) in _TYPES:
            return found, "resolved"
        name = written.lstrip(".")
        if not found and self.well_known and name.startswith("google.protobuf.") and name.count(".") == 2:
            return name, "external"
        return "", "unresolved"

    def _find(self, written: str, relative_to: str) -> str:
        if written.startswith("."):
            return written[1:] if self.kind(written[1:]) else ""
        first, _, rest = written.partition(".")
        scope = relative_to
        while "." in scope:
            scope = scope.rpartition(".")[0]
            candidate = f"{scope}.{first}"
            kind = self.kind(candidate)
            if not kind:
                continue
            if rest:
                if kind in _AGGREGATES:  # the first part decides the scope: the rest must be in it
                    return f"{candidate}.{rest}" if self.kind(f"{candidate}.{rest}") else ""
            elif kind in _TYPES:
                return candidate
        return written if self.kind(written) else ""


def _visible(path: str, imported: Mapping[str, list[tuple[str, str]]]) -> frozenset[str]:
    """The file, the files it imports, and (transitively) what those import publicly."""
    seen = {path}
    todo = [hit for hit, _modifier in imported.get(path, ()) if hit]
    while todo:
        hit = todo.pop()
        if hit in seen:
            continue
        seen.add(hit)
        todo.extend(h for h, modifier in imported.get(hit, ()) if h and modifier == "public")
    return frozenset(seen)


class _ImportResolver:
    """`import "x/y.proto"` to a .proto file of the system whose path ends with it."""

    def __init__(self, paths: list[str]) -> None:
        self.by_suffix = by_suffix(paths)

    def resolve(self, importer: str, target: str) -> str:
        norm = posixpath.normpath(target.replace("\\", "/"))
        while norm.startswith("../"):
            norm = norm[3:]
        candidates = self.by_suffix.get(norm, [])
        if not candidates:
            return ""
        # the importer's own repository (label) first, then the nearest, then the shortest path
        source = importer.split("/", 1)[0]
        return min(candidates, key=lambda c: (c.split("/", 1)[0] != source,
                                              -len(posixpath.commonpath([c, importer])), len(c), c))
