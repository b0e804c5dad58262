"""The Go part of the symbol graph, built from every file's scanner facts and the go.mod files.

Ids follow Go's own naming: a package is ``go:<import path>`` (the module path of the nearest
go.mod above its directory, joined with the directory below it; an external test package
``foo_test`` is ``<import path>_test``, as ``go list`` names it), its members
``go:<import path>.<Name>`` and methods ``go:<import path>.<Type>.<Method>`` (an interface's
methods are declarations under it); a struct's fields are attribute nodes
``go:<import path>.<Type>.<field>`` tagged ``field`` (``embedded`` for an embedded type, named
after it), exported when capitalised, their type as ``annotation``. A Go file outside
any module is named after its directory. Several files declaring one id (``init``, build-tagged
variants) make one node with the other places in ``sites``. A package node stands at the file
with the package's doc comment (else the file named like the package, else the first file).

Edges: ``contains``; ``imports`` package to package (to an ``external`` node outside the
system), across all repositories of the system; ``implements`` from a type to an interface it is
checked against (``var _ I = (*T)(nil)``, ``var _ I = T{}``); ``inherits`` for embedding (a
struct's or interface's embedded types); ``calls`` where the callee is a function of the
package, a function of an imported package of the system, or a method of a value whose type is
written: the method's own receiver, a parameter of the caller (``func f(s *Store) { s.Get() }``), or
a field of either (``s.store.Get()``), the field's type as its struct writes it, or a local whose
type the body states (``km := &KafkaManager{...}``, ``var s Server``, ``x := new(T)``, ``st, err :=
store.NewStore()``: the system function's first result; a local named as an imported package is
not read, as the package's name holds until it is declared). The method is the type's own or one
its embedded types promote; on an interface, the interface's declaration of it. A value of a type
outside the system makes an external call; other selector calls stay unresolved (counted).
"""

from __future__ import annotations

import collections
import dataclasses
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from extractor.go.facts import GoDefinition, GoFacts
from extractor.native.manifests import Manifests
from extractor.native.calls import each_call
from extractor.native.graph import extract_with_manifests, finish_graph, parse_error_diagnostic
from extractor.model import (Contribution, Diagnostic, Edge, EdgeKind, Language, Location, Node, NodeKind,
                             Parameter, ParamKind)

_KINDS = {"function": NodeKind.FUNCTION, "method": NodeKind.METHOD, "struct": NodeKind.STRUCT,
          "interface": NodeKind.INTERFACE, "type": NodeKind.CLASS, "alias": NodeKind.ATTRIBUTE,
          "field": NodeKind.ATTRIBUTE}
_CALLABLE = frozenset({NodeKind.FUNCTION, NodeKind.METHOD})
_BUILTINS = frozenset({"append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make", "max",
                       "min", "new", "panic", "print", "println", "real", "recover"})


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class CgoUse:
    """A Go function's call into C through cgo (`C.name(...)`), for the FFI step."""

    path: str
    line: int
    caller: str  # Go node id
    name: str  # the C name
    preamble: bool  # defined in the file's own cgo preamble (then no C/C++ file defines it)


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class GoExport:
    """`//export Name`: a Go function callable from C."""

    path: str
    line: int
    node: str
    name: str


def import_path(path: str, package: str, manifests: Manifests) -> str:
    """The import path of the package the file at ``path`` (label-prefixed) declares (``package``)."""
    directory = posixpath.dirname(path)
    module = manifests.go_module_of(path)
    if module is None:
        base = directory or "."
    else:
        rel = directory[len(module.dir) + 1:] if module.dir else directory
        if module.dir and directory == module.dir:
            rel = ""
        base = f"{module.path}/{rel}" if rel else module.path
    if package.endswith("_test") and path.endswith("_test.go"):
        return base + "_test"  # an external test package
    return base


@dataclasses.dataclass(frozen=True, slots=True)
class GoShared:
    """What the Go graph step shares with later steps (the FFI step binds cgo calls)."""

    cgo_calls: tuple[CgoUse, ...]
    exports: tuple[GoExport, ...]
    definition_sites: tuple[Location, ...]


def extract_go_graph(ctx: Any) -> Contribution[GoShared]:
    """The pipeline entry: ``ctx.facts("go")`` and the system's go.mod files in, graph parts out."""
    return extract_with_manifests(ctx, "go", Language.GO, build_go_graph, "go.mod")


def build_go_graph(files: Iterable[tuple[str, GoFacts]], manifests: Manifests) -> Contribution[GoShared]:
    entries = sorted(files, key=lambda e: e[0])
    stats: collections.Counter[str] = collections.Counter()
    diagnostics: list[Diagnostic] = []
    package_of = {path: import_path(path, facts.package, manifests) for path, facts in entries}
    package_files: dict[str, list[tuple[str, GoFacts]]] = collections.defaultdict(list)
    for path, facts in entries:
        if not facts.package:
            stats["files_without_package"] += 1
            continue
        package_files[package_of[path]].append((path, facts))
    nodes: dict[str, Node] = {}
    groups: dict[str, list[tuple[str, GoDefinition]]] = collections.defaultdict(list)
    names: dict[str, str] = {}  # import path -> package name
    for pkg, members in sorted(package_files.items()):
        names[pkg] = members[0][1].package
        rep_path, rep_facts = _representative(members)
        nodes["go:" + pkg] = Node("go:" + pkg, NodeKind.MODULE, names[pkg], pkg, "go", rep_path,
                                  rep_facts.package_line, rep_facts.doc)
        for path, facts in members:
            for record in facts.defs:
                groups[f"go:{pkg}.{record.qual}"].append((path, record))
                for method, line in record.methods:
                    # an interface's method: declared there, defined by the types that satisfy it
                    spec = GoDefinition("method", f"{record.qual}.{method}", line, line, line, tags=("declaration",))
                    groups[f"go:{pkg}.{spec.qual}"].append((path, spec))
                for field, line, written, is_embedded in record.fields:
                    # a struct's field: an attribute contained in the struct, its type as annotation
                    member = GoDefinition("field", f"{record.qual}.{field}", line, line, line,
                                          tags=("embedded", "field") if is_embedded else ("field",), target=written)
                    groups[f"go:{pkg}.{member.qual}"].append((path, member))
            problem = parse_error_diagnostic(path, facts.errors, facts.error_lines)
            if problem is not None:
                stats["files_with_parse_errors"] += 1
                diagnostics.append(problem)
    sites: list[Location] = []
    for nid, group in sorted(groups.items()):
        group.sort(key=lambda g: ("declaration" in g[1].tags, g[0], g[1].line))
        nodes[nid] = _node(nid, group)
        sites.extend(Location(p, r.line) for p, r in group)
    edges: list[Edge] = []
    external: dict[str, Node] = {}
    aliases_of = {path: _aliases(facts, names, package_files) for members in package_files.values()
                  for path, facts in members}
    types = _Types(nodes)
    for pkg, members in package_files.items():
        for path, facts in members:
            for record in facts.defs:
                if record.fields or record.embeds:
                    types.add(f"go:{pkg}.{record.qual}", pkg, record, aliases_of[path])

    def ext(name: str) -> str:
        nid = "go:" + name
        if nid not in nodes and nid not in external:
            external[nid] = Node(nid, NodeKind.EXTERNAL, name.rsplit("/", 1)[-1], name, "go")
        return nid

    for nid, group in sorted(groups.items()):
        pkg_id = "go:" + _package_part(nid, package_files)
        path, record = group[0]
        qual = record.qual
        parent = f"{pkg_id}.{qual.rsplit('.', 1)[0]}" if "." in qual else pkg_id
        if parent not in nodes:
            parent = pkg_id  # a method on a type declared nowhere in the tree (generated code)
        edges.append(Edge(parent, nid, EdgeKind.CONTAINS, path, record.line))
    cgo: list[CgoUse] = []
    exports: list[GoExport] = []
    for pkg, members in sorted(package_files.items()):
        pkg_id = "go:" + pkg
        for path, facts in members:
            aliases = aliases_of[path]
            for target, alias, line in facts.imports:
                if target == "C":
                    continue
                if target in package_files:
                    stats["imports_internal"] += 1
                    if target != pkg:
                        edges.append(Edge(pkg_id, "go:" + target, EdgeKind.IMPORTS, path, line))
                else:
                    stats["imports_external"] += 1
                    edges.append(Edge(pkg_id, ext(target), EdgeKind.IMPORTS, path, line))
            for iface, concrete, line in facts.checks:
                src = _resolve_type(pkg, concrete, aliases, nodes)
                dst = _resolve_type(pkg, iface, aliases, nodes) or ext(_external_type(iface, aliases))
                if src:
                    stats["interface_checks"] += 1
                    edges.append(Edge(src, dst, EdgeKind.IMPLEMENTS, path, line))
            for record in facts.defs:
                for embedded in record.embeds:
                    dst = _resolve_type(pkg, embedded, aliases, nodes) or ext(_external_type(embedded, aliases))
                    edges.append(Edge(f"{pkg_id}.{record.qual}", dst, EdgeKind.INHERITS, path, record.line))
            preamble = {name for name, _ in facts.cgo.functions} if facts.cgo is not None else set()
            receivers = {r.qual: r.qual.split(".")[0] for r in facts.defs if r.kind == "method"}
            params = {r.qual: dict(r.params) for r in facts.defs if r.params}
            owners = {r.qual: _local_owners(pkg, r.locals, aliases, nodes) for r in facts.defs if r.locals}
            for caller_qual, callee, line in each_call(facts.calls):
                caller = f"{pkg_id}.{caller_qual}"
                if callee.startswith("C.") and facts.cgo is not None:
                    stats["cgo_calls"] += 1
                    cgo.append(CgoUse(path, line, caller, callee[2:], callee[2:] in preamble))
                    continue
                target, how = _resolve_call(pkg, callee, receivers.get(caller_qual, ""), aliases, nodes,
                                            params.get(caller_qual, {}), types, owners.get(caller_qual, {}))
                stats[f"calls_{how}"] += 1
                if target:
                    edges.append(Edge(caller, target, EdgeKind.CALLS, path, line))
            for name, line in facts.exports:
                if f"{pkg_id}.{name}" in nodes:
                    exports.append(GoExport(path, line, f"{pkg_id}.{name}", name))
    all_nodes, all_edges = finish_graph(nodes.values(), external.values(), edges, stats, len(entries))
    stats["packages"] = len(package_files)
    return Contribution(nodes=all_nodes, edges=all_edges, diagnostics=tuple(sorted(diagnostics)),
                        stats=dict(sorted(stats.items())),
                        shared=GoShared(tuple(sorted(cgo)), tuple(sorted(exports)), tuple(sorted(sites))))


def _representative(members: list[tuple[str, GoFacts]]) -> tuple[str, GoFacts]:
    ordered = sorted(members, key=lambda m: (m[0].endswith("_test.go"), m[0]))
    for path, facts in ordered:
        if facts.doc.startswith("Package "):
            return path, facts
    for path, facts in ordered:
        if posixpath.basename(path) == facts.package + ".go":
            return path, facts
    return ordered[0]


def _package_part(nid: str, packages: Mapping[str, Any]) -> str:
    """`go:a/b.T.M` -> `a/b`: the longest package id that prefixes the node id."""
    body = nid[len("go:"):]
    cut = body.rfind("/")
    head, tail = body[:cut + 1], body[cut + 1:]
    parts = tail.split(".")
    for k in range(len(parts) - 1, 0, -1):
        candidate = head + ".".join(parts[:k])
        if candidate in packages:
            return candidate
    return head + parts[0]


def _node(nid: str, group: list[tuple[str, GoDefinition]]) -> Node:
    path, r = group[0]
    kind = _KINDS[r.kind]
    tags = set(r.tags)
    if len(group) > 1 and any("declaration" not in g[1].tags for g in group):
        tags.discard("declaration")
    if r.kind == "type":
        tags.add("defined-type")
        if r.underlying:
            tags.add(f"underlying:{r.underlying}")
    if r.receiver.startswith("*"):
        tags.add("pointer-receiver")
    params = tuple(Parameter(n or f"_{i}", ParamKind.POSITIONAL_ONLY, t) for i, (n, t) in enumerate(r.params or ()))
    signature = ""
    if kind in _CALLABLE and r.params is not None:
        signature = "(" + ", ".join(f"{n} {t}".strip() for n, t in r.params) + ")"
        signature += f" {r.returns}" if r.returns else ""
    qual = nid[len("go:"):]
    name = r.qual.rsplit(".", 1)[-1]
    first = name[:1]
    api = "public: exported" if first.isupper() else "private: unexported"
    return Node(nid, kind, name, qual, "go", path, r.line, r.doc, signature[:300], tuple(sorted(tags)),
                params=params, returns=r.returns, api=api,
                value_kind="alias" if r.kind == "alias" else "", annotation=r.target,
                sites=tuple(sorted({Location(p, g.line) for p, g in group[1:]})))


def _aliases(facts: GoFacts, names: Mapping[str, str], packages: Mapping[str, Any]) -> dict[str, str]:
    """Local name -> import path for the file's imports (the package's own name when internal)."""
    out = {}
    for target, alias, _line in facts.imports:
        if alias in ("_", "."):
            continue
        local = alias or names.get(target) or _default_name(target)
        out[local] = target
    return out


def _default_name(target: str) -> str:
    """The package name Go code most likely uses for an external import path (`gopkg.in/yaml.v3` -> yaml)."""
    last = target.rstrip("/").rsplit("/", 1)[-1]
    if last.startswith("v") and last[1:].isdigit() and "/" in target:
        last = target.rsplit("/", 2)[-2]
    last = last.split(".", 1)[0]
    return last.removeprefix("go-").replace("-", "_")


def _resolve_type(pkg: str, written: str, aliases: Mapping[str, str], nodes: Mapping[str, Node]) -> str:
    head, _, name = written.rpartition(".")
    target = f"go:{aliases[head]}.{name}" if head and head in aliases else f"go:{pkg}.{written}" if not head else ""
    return target if target in nodes else ""


def _external_type(written: str, aliases: Mapping[str, str]) -> str:
    head, _, name = written.rpartition(".")
    return f"{aliases[head]}.{name}" if head in aliases else written


_EXTERNAL = "external"  # a type outside the system (`*http.Request`, `context.Context`)


class _Types:
    """The fields' types and the embedded types of the system's structs and interfaces, each read
    with the imports of the file that declares it: node id, ``_EXTERNAL``, or "" when not known."""

    def __init__(self, nodes: Mapping[str, Node]) -> None:
        self.nodes = nodes
        self.fields: dict[str, str] = {}  # field node id -> its type
        self.embeds: dict[str, list[str]] = {}  # type id -> the system's types it embeds

    def add(self, type_id: str, pkg: str, record: GoDefinition, aliases: Mapping[str, str]) -> None:
        for field, _line, written, _embedded in record.fields:
            self.fields[f"{type_id}.{field}"] = type_of(pkg, written, aliases, self.nodes)
        embedded = [type_of(pkg, written, aliases, self.nodes) for written in record.embeds]
        self.embeds[type_id] = [t for t in embedded if t and t != _EXTERNAL]

    def method(self, type_id: str, name: str) -> str:
        """The method ``name`` of the type: its own, else one an embedded type promotes."""
        def own(type_id: str) -> str | None:
            node = self.nodes.get(f"{type_id}.{name}")
            return f"{type_id}.{name}" if node is not None and node.kind in _CALLABLE else None
        return self._promoted(type_id, own) or ""

    def field(self, type_id: str, name: str) -> str:
        """The type of field ``name`` of the type (a promoted one too)."""
        return self._promoted(type_id, lambda type_id: self.fields.get(f"{type_id}.{name}")) or ""

    def _promoted(self, type_id: str, own: Callable[[str], str | None], depth: int = 0) -> str | None:
        """``own(type_id)`` when it has one (not None), else the first the types it embeds have (four
        levels down at most), else None."""
        found = own(type_id)
        if found is not None:
            return found
        for inner in self.embeds.get(type_id, ()) if depth < 4 else ():
            found = self._promoted(inner, own, depth + 1)
            if found:
                return found
        return None


def type_of(pkg: str, written: str, aliases: Mapping[str, str], nodes: Mapping[str, Node]) -> str:
    """The type a value of type ``written`` has methods of: ``*T``, ``T[X]``, ``pkg.T`` -> its node id,
    ``_EXTERNAL`` for another module's, "" for a slice, map, channel, function or unknown name."""
    base = written.strip().lstrip("*").removeprefix("...").lstrip("*")
    base = base.split("[", 1)[0] if not base.startswith("[") else ""
    if not base or not re.fullmatch(r"\w+(\.\w+)?", base):
        return ""
    found = _resolve_type(pkg, base, aliases, nodes)
    if found:
        return found
    head = base.partition(".")[0] if "." in base else ""
    return _EXTERNAL if head in aliases and f"go:{aliases[head]}" not in nodes else ""


def _local_owners(pkg: str, locals_: Iterable[tuple[str, str]], aliases: Mapping[str, str],
                  nodes: Mapping[str, Node]) -> dict[str, str]:
    """The type (node id, or ``_EXTERNAL``) of each local a body states the type of (GoDefinition.locals):
    a written type read as a parameter's is; ``call:F`` as the first result of the system's function F."""
    out = {}
    for name, written in locals_:
        if name in aliases:  # `receiver := receiver.New(...)`: before it, and on its right, the package
            continue
        if written.startswith("call:"):
            head, _, fn = written[5:].rpartition(".")
            where = aliases.get(head, "") if head else pkg
            node = nodes.get(f"go:{where}.{fn}") if where else None
            first = _first_result(node.returns) if node is not None and node.kind is NodeKind.FUNCTION else ""
            owner = type_of(where, first, {}, nodes) if first and "." not in first else ""
        else:
            owner = type_of(pkg, written, aliases, nodes)
        if owner:
            out[name] = owner
    return out


def _first_result(returns: str) -> str:
    """`*Server`, `(*Server, error)`, `(s *Server, err error)` -> the first result's type."""
    text = returns.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    first = text.split(",", 1)[0].strip()
    return first.split()[-1] if " " in first else first


def _resolve_call(pkg: str, callee: str, receiver: str, aliases: Mapping[str, str],
                  nodes: Mapping[str, Node], params: Mapping[str, str], types: _Types,
                  owners: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(target id, how): how is resolved, unresolved, external, builtin or conversion. ``owners``: the
    types of the caller's locals that its body states (:func:`_local_owners`)."""
    if "." not in callee:
        target = f"go:{pkg}.{callee}"
        node = nodes.get(target)
        if node is not None:
            return (target, "resolved") if node.kind in _CALLABLE else ("", "conversion")
        return ("", "builtin") if callee in _BUILTINS else ("", "unresolved")
    head, _, name = callee.partition(".")
    owner = ""
    if head == "self":
        owner = f"go:{pkg}.{receiver}"
    elif head in params and head != "_":  # a parameter hides a package of the same name
        owner = type_of(pkg, params[head], aliases, nodes)
    elif owners and head in owners:  # so does a local
        owner = owners[head]
    if head == "self" or (head in params and head != "_") or (owners and head in owners):
        if "." in name:  # a field's method: x.f.m()
            field, _, name = name.partition(".")
            owner = types.field(owner, field) if owner and owner != _EXTERNAL else owner
        if owner == _EXTERNAL:
            return "", "external"
        # a call through a func-typed field (`s.fn()`) calls whatever the field holds: not known
        target = types.method(owner, name) if owner else ""
        return (target, "resolved") if target else ("", "unresolved")
    if head in aliases:
        target = f"go:{aliases[head]}.{name}"
        node = nodes.get(target)
        if node is not None:
            return (target, "resolved") if node.kind in _CALLABLE else ("", "conversion")
        return ("", "external") if f"go:{aliases[head]}" not in nodes else ("", "unresolved")
    return "", "unresolved"
