"""The C/C++/CUDA half of the symbol graph, built from every file's scanner facts.

Names are resolved here, across files and repositories: out-of-line `A::B::f` definitions are
attached to the class `A::B` the way C++ lookup would find it from the enclosing namespaces;
overloads and a header declaration plus its definition become one node (the definition's location
wins); `#include "x/y.h"` is resolved against the including file's directory first and then against a
suffix index of every file of the system, so core's `"triton/common/logging.h"` reaches the common
repository's `include/triton/common/logging.h`.

Macros defined in a file's includes are invisible to the per-file scanner. The scanner records the
attribute-like macros each file defines (``defines``); once includes are resolved, a file that uses
such a macro from its (transitive) includes is parsed and scanned again here with that macro
blanked. Only those few files pay for a second parse.
"""

from __future__ import annotations

import collections
import dataclasses
import posixpath
from collections.abc import Iterable, Mapping
from typing import Any

from extractor.cpp.parse import macro_config, parse_source, used_outside_directives
from extractor.cpp.scan import scan_cpp
from extractor.model import (Contribution, Diagnostic, Edge, EdgeKind, Language, Node, NodeKind,
                             ParsedFile, Severity, edge_key)
from extractor.naming import cpp_id, file_id, id_name

CPP_LANGUAGES = (Language.CPP, Language.CUDA)
_TYPE_KINDS = {"class": NodeKind.CLASS, "struct": NodeKind.STRUCT, "union": NodeKind.UNION,
               "enum": NodeKind.ENUM, "namespace": NodeKind.NAMESPACE}
_AGGREGATES = frozenset({NodeKind.CLASS, NodeKind.STRUCT, NodeKind.UNION})
_CALLABLE = frozenset({NodeKind.FUNCTION, NodeKind.METHOD, NodeKind.KERNEL})
# When one id is claimed by records of different kinds, the earlier kind wins.
_KIND_ORDER = (NodeKind.CLASS, NodeKind.STRUCT, NodeKind.UNION, NodeKind.ENUM, NodeKind.KERNEL,
               NodeKind.METHOD, NodeKind.FUNCTION, NodeKind.NAMESPACE)


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class DefinitionSite:
    """One place a node is defined or declared (a node merges overloads and declarations)."""

    node: str
    path: str
    line: int  # line of the name
    start: int  # first line of the whole definition (template header included)
    end: int
    is_definition: bool


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class OpRegistration:
    """A torch operator registered in C++: `ops.def("name(...) -> ...")`, `ops.impl("name", &fn)`."""

    path: str
    line: int
    kind: str  # "def" or "impl"
    op: str
    namespace: str  # "" when it is a build-time macro such as TORCH_EXTENSION_NAME
    namespace_macro: str  # "TORCH_EXTENSION_NAME" or ""
    namespace_suffix: str  # "_cache_ops" for CONCAT(TORCH_EXTENSION_NAME, _cache_ops)
    overload: str = ""
    dispatch: str = ""
    function: str = ""  # the C++ function as written (`paged_attention_v1`), "" for schema-only
    target: str = ""  # its node id when resolved


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class PyBinding:
    """A pybind11 binding: `m.def("name", &fn)`, `py::class_<T>(m, "Name")` and its methods."""

    path: str
    line: int
    kind: str  # "def", "class" or "method"
    module: str
    name: str  # the Python name
    owner: str = ""  # Python class name for methods
    function: str = ""  # C++ name as written
    target: str = ""  # node id when resolved


@dataclasses.dataclass
class _Def:
    path: str
    language: Language
    record: dict[str, Any]
    id: str = ""
    parent: str = ""
    kind: NodeKind = NodeKind.FUNCTION


def extract_cpp_graph(ctx: Any) -> Contribution:
    """The pipeline entry: ``ctx.facts("cpp", CPP, CUDA)`` in, graph parts out."""
    files = [(f.path, f.language, facts, ctx.abs_path(f)) for f, facts in ctx.facts("cpp", *CPP_LANGUAGES)]
    return build_cpp_graph(files)


def build_cpp_graph(files: Iterable[tuple[str, Language, Mapping[str, Any], Any]]) -> Contribution:
    """Graph parts from (path, language, scanner facts, file on disk or None) of each file."""
    entries = sorted(files, key=lambda e: e[0])
    facts = {path: dict(f) for path, _, f, _ in entries}
    languages = {path: lang for path, lang, _, _ in entries}
    disk = {path: where for path, _, _, where in entries}
    stats: collections.Counter[str] = collections.Counter()
    diagnostics: list[Diagnostic] = []

    resolver = _IncludeResolver(sorted(facts))
    include_edges: list[Edge] = []
    resolved_includes: dict[str, list[str]] = {}
    for path in sorted(facts):
        targets = []
        for target, angle, line in facts[path].get("includes", ()):
            hit = resolver.resolve(path, target)
            if hit:
                stats["includes_resolved"] += 1
                targets.append(hit)
                include_edges.append(Edge(file_id(path), file_id(hit), EdgeKind.INCLUDES, path, line))
            else:
                stats["includes_unresolved_angle" if angle else "includes_unresolved_quoted"] += 1
        resolved_includes[path] = targets

    _rescan_with_included_macros(facts, languages, disk, resolved_includes, stats)

    defs: list[_Def] = []
    for path in sorted(facts):
        for record in facts[path].get("defs", ()):
            defs.append(_Def(path, languages[path], record))
        errors = facts[path].get("errors", 0)
        if errors:
            stats["files_with_parse_errors"] += 1
            stats["error_nodes"] += errors
            lines = facts[path].get("error_lines", [])
            diagnostics.append(Diagnostic(
                path, lines[0] if lines else 0, "parse-errors",
                f"{errors} ERROR node(s) in the syntax tree (lines {', '.join(map(str, lines[:8]))}"
                f"{' ...' if len(lines) > 8 else ''}); definitions there may be missing",
                Severity.INFO if errors <= 3 else Severity.WARNING))
        if facts[path].get("truncated"):
            diagnostics.append(Diagnostic(path, 0, "scan-truncated",
                                          "declarations nested too deeply to walk; the rest of the file "
                                          "is not indexed", Severity.WARNING))
        for name, line in facts[path].get("macro_blocks", ()):
            diagnostics.append(Diagnostic(
                path, line, "macro-definitions",
                f"macro {name} expands to definitions that are not indexed (no preprocessor is run)",
                Severity.INFO))

    graph = _SymbolTable(defs)
    nodes = graph.nodes()
    node_kinds = {n.id: n.kind for n in nodes}
    edges: list[Edge] = list(include_edges)
    for path in sorted(facts):
        edges.extend(graph.contains_edges(path))
    edges.extend(graph.inherits_edges())
    external: dict[str, Node] = {}
    for edge in list(edges):
        if edge.kind is EdgeKind.INHERITS and edge.target not in node_kinds:
            name = id_name(edge.target)
            external[edge.target] = Node(edge.target, NodeKind.EXTERNAL, name.rsplit("::", 1)[-1],
                                         name, "cpp")
    for path in sorted(facts):
        f = facts[path]
        for caller, callee, line in f.get("calls", ()):
            source = graph.id_of(path, caller)
            target = graph.resolve_callee(source, callee)
            if source and target:
                stats["calls_resolved"] += 1
                edges.append(Edge(source, target, EdgeKind.CALLS, path, line))
            else:
                stats["calls_unresolved"] += 1
        for caller, kernel, line in f.get("launches", ()):
            source = graph.id_of(path, caller)
            target = graph.resolve_callee(source, kernel, kernel_only=True)
            if source and target:
                stats["launches_resolved"] += 1
                edges.append(Edge(source, target, EdgeKind.LAUNCHES, path, line))
            else:
                stats["launches_unresolved"] += 1

    file_nodes = [Node(file_id(p), NodeKind.FILE, posixpath.basename(p), p, languages[p].value, p, 0)
                  for p in sorted(facts)]
    all_nodes = tuple(sorted([*file_nodes, *nodes, *external.values()]))
    all_edges = tuple(sorted(set(edges), key=edge_key))

    ops, bindings = _registrations(facts, graph)
    stats["files"] = len(facts)
    stats["op_registrations"] = len(ops)
    stats["pybind_bindings"] = len(bindings)
    for n in all_nodes:
        stats[f"nodes_{n.kind.value}"] += 1
    for e in all_edges:
        stats[f"edges_{e.kind.value}"] += 1
    return Contribution(
        nodes=all_nodes, edges=all_edges, diagnostics=tuple(sorted(diagnostics)),
        stats=dict(sorted(stats.items())),
        extra={"definition_sites": tuple(sorted(graph.sites)), "op_registrations": tuple(ops),
               "pybind_bindings": tuple(bindings)})


# -- includes ----------------------------------------------------------------------------------

class _IncludeResolver:
    """`#include` targets to files of the system: next to the includer first, then by suffix."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = set(paths)
        self.by_suffix: dict[str, list[str]] = collections.defaultdict(list)
        for p in paths:
            parts = p.split("/")
            for i in range(len(parts)):
                self.by_suffix["/".join(parts[i:])].append(p)

    def resolve(self, includer: str, target: str) -> str:
        target = target.replace("\\", "/")
        local = posixpath.normpath(posixpath.join(posixpath.dirname(includer), target))
        if local in self.paths:
            return local
        norm = posixpath.normpath(target)
        while norm.startswith("../"):
            norm = norm[3:]
        candidates = self.by_suffix.get(norm, [])
        if not candidates:
            return ""
        # Prefer the includer's own repository (label prefix), then the nearest, then the shortest.
        source = includer.split("/", 1)[0]
        return min(candidates, key=lambda c: (c.split("/", 1)[0] != source,
                                              -len(posixpath.commonpath([c, includer]) or ""),
                                              len(c), c))


def _rescan_with_included_macros(facts: dict[str, dict[str, Any]], languages: Mapping[str, Language],
                                 disk: Mapping[str, Any], includes: Mapping[str, list[str]],
                                 stats: collections.Counter[str]) -> None:
    cfg = macro_config()
    builtin = set(cfg["blank"]) | set(cfg["blank_cpp_only"])
    defined = {p: set(f.get("defines", ())) - builtin for p, f in facts.items()}
    if not any(defined.values()):
        return
    for path in sorted(facts):
        seen, stack, inherited = {path}, list(includes.get(path, ())), set()
        while stack:
            inc = stack.pop()
            if inc in seen:
                continue
            seen.add(inc)
            inherited |= defined.get(inc, set())
            stack.extend(includes.get(inc, ()))
        inherited -= defined[path]
        if not inherited or disk.get(path) is None:
            continue
        try:
            data = disk[path].read_bytes()
        except OSError:
            continue
        used = used_outside_directives(data, inherited)
        if not used:
            continue
        lang = languages[path]
        facts[path] = scan_cpp(ParsedFile(lang, data, parse_source(data, lang, blank=used)))
        stats["files_rescanned_for_macros"] += 1


# -- symbols -----------------------------------------------------------------------------------

class _SymbolTable:
    def __init__(self, defs: list[_Def]) -> None:
        self.defs = defs
        aggregates = {d.record["qual"] for d in defs if d.record["kind"] in ("class", "struct", "union")}
        namespaces = {d.record["qual"] for d in defs if d.record["kind"] == "namespace"}
        self.scopes = aggregates | namespaces
        self.aggregates = aggregates
        self.types = aggregates | {d.record["qual"] for d in defs if d.record["kind"] == "enum"}
        # typedef names of named types (`typedef enum X_enum {...} X;`), in their scope
        self.aliases: dict[str, str] = {}
        for d in defs:
            for alias in d.record.get("aliases", ()):
                scope = d.record["qual"].rsplit("::", 1)[0] if "::" in d.record["qual"] else ""
                self.aliases.setdefault(f"{scope}::{alias}" if scope else alias, d.record["qual"])
        self.by_file_qual: dict[tuple[str, str], str] = {}
        for d in defs:
            self._resolve(d)
            self.by_file_qual.setdefault((d.path, d.record["qual"]), d.id)
        self.defs_by_path: dict[str, list[_Def]] = collections.defaultdict(list)
        for d in defs:
            self.defs_by_path[d.path].append(d)
        self.groups: dict[str, list[_Def]] = collections.defaultdict(list)
        for d in defs:
            self.groups[d.id].append(d)
        self.node_by_id: dict[str, Node] = {}
        self.sites: list[DefinitionSite] = []
        for node_id, group in sorted(self.groups.items()):
            self.node_by_id[node_id] = self._merge(node_id, group)
        self._resolved: dict[tuple[str, str, bool], str] = {}
        self.short_kernels: dict[str, list[str]] = collections.defaultdict(list)
        for n in self.node_by_id.values():
            if n.kind is NodeKind.KERNEL:
                self.short_kernels[n.name].append(n.id)

    def _resolve(self, d: _Def) -> None:
        r = d.record
        kind = r["kind"]
        scope = [(n, k) for n, k in r.get("scope", ())]
        name = r["qual"].rsplit("::", 1)[-1] if "::" in r["qual"] else r["qual"]
        enclosing = [n for n, k in scope if k]
        written = [n for n, k in scope if not k]
        if kind in _TYPE_KINDS:
            d.kind = _TYPE_KINDS[kind]
            d.id = cpp_id(r["qual"])
            d.parent = "::".join(enclosing)
            return
        parent = "::".join(enclosing)
        if written:
            if written and written[0] == "":
                written = written[1:]
                enclosing = []
            wanted = "::".join(written)
            parent = "::".join(enclosing + written)
            for k in range(len(enclosing), -1, -1):
                candidate = "::".join(enclosing[:k] + written)
                if candidate in self.scopes:
                    parent = candidate
                    break
        d.parent = parent
        d.id = cpp_id(f"{parent}::{name}" if parent else name)
        if kind == "kernel":
            d.kind = NodeKind.KERNEL
        elif parent in self.aggregates or "member" in r.get("tags", ()):
            d.kind = NodeKind.METHOD
        else:
            d.kind = NodeKind.FUNCTION

    def _merge(self, node_id: str, group: list[_Def]) -> Node:
        kinds = {d.kind for d in group}
        kind = min(kinds, key=_KIND_ORDER.index)
        same = [d for d in group if d.kind is kind]
        # the definition's location wins over a declaration's; then a stable order
        rep = min(same, key=lambda d: ("declaration" in d.record.get("tags", ()), d.path, d.record["line"]))
        tags: set[str] = set()
        is_defined = any("declaration" not in d.record.get("tags", ()) for d in same)
        for d in group:
            tags.update(d.record.get("tags", ()))
            self.sites.append(DefinitionSite(node_id, d.path, d.record["line"], d.record["start"],
                                             d.record["end"], "declaration" not in d.record.get("tags", ())))
        if is_defined:
            tags.discard("declaration")
        tags.discard("member")
        signatures = {d.record.get("signature", "") for d in same if "declaration" not in d.record.get("tags", ())}
        if len(signatures) > 1:
            tags.add("overloaded")
        if kind is NodeKind.KERNEL:
            tags.add("kernel")
        qual = id_name(node_id)
        doc = rep.record.get("doc", "") or next((d.record["doc"] for d in same if d.record.get("doc")), "")
        return Node(node_id, kind, qual.rsplit("::", 1)[-1], qual, rep.language.value, rep.path,
                    rep.record["line"], doc, rep.record.get("signature", ""), tuple(sorted(tags)))

    def nodes(self) -> list[Node]:
        return list(self.node_by_id.values())

    def id_of(self, path: str, qual: str) -> str:
        return self.by_file_qual.get((path, qual), "")

    def contains_edges(self, path: str) -> list[Edge]:
        edges = []
        for d in self.defs_by_path.get(path, ()):
            node = self.node_by_id[d.id]
            parent_id = cpp_id(d.parent) if d.parent else ""
            if parent_id in self.node_by_id and parent_id != d.id:
                edges.append(Edge(parent_id, d.id, EdgeKind.CONTAINS, node.path, node.line))
            if node.path == path and node.line == d.record["line"] and (
                    not d.parent or self.node_by_id.get(parent_id, node).kind is NodeKind.NAMESPACE):
                edges.append(Edge(file_id(path), d.id, EdgeKind.CONTAINS, path, node.line))
        return edges

    def inherits_edges(self) -> list[Edge]:
        edges = []
        for d in self.defs:
            for base in d.record.get("bases", ()):
                target = self.resolve_type(d.parent, base)
                edges.append(Edge(d.id, target, EdgeKind.INHERITS, d.path, d.record["line"]))
        return edges

    def resolve_type(self, scope: str, written: str) -> str:
        name = _strip_template_args(written.replace("virtual", "").strip()).lstrip(":")
        for prefix in _outward(scope):
            candidate = f"{prefix}::{name}" if prefix else name
            if candidate in self.types:
                return cpp_id(candidate)
            if candidate in self.aliases:
                return cpp_id(self.aliases[candidate])
        return cpp_id(name)

    def resolve_reference(self, scope: str, name: str) -> str:
        """A function named in code (`&fn`, `&ns::Class::method`) as seen from ``scope``."""
        if not name or name == "<lambda>":
            return ""
        return self.resolve_callee(cpp_id((f"{scope}::" if scope else "") + "<ref>"), name)

    def resolve_lambda(self, path: str, scope: str, callees: Iterable[str]) -> tuple[str, str]:
        """(`<lambda> -> f`, node of f) for a binding given as a lambda: the first function it
        calls that is defined outside the binding's own file (its helpers, such as an error
        check wrapping the call, live beside it), else the first it calls at all."""
        resolved = [(c, self.resolve_reference(scope, c)) for c in callees]
        resolved = [(c, t) for c, t in resolved if t]
        outside = [(c, t) for c, t in resolved if self.node_by_id[t].path != path]
        for c, t in outside or resolved:
            return f"<lambda> -> {c}", t
        return "<lambda>", ""

    def resolve_callee(self, caller: str, callee: str, kernel_only: bool = False) -> str:
        if not caller:
            return ""
        key = (caller, callee, kernel_only)
        hit = self._resolved.get(key)
        if hit is None:
            hit = self._resolved[key] = self._resolve_callee(caller, callee, kernel_only)
        return hit

    def _resolve_callee(self, caller: str, callee: str, kernel_only: bool) -> str:
        name = _strip_template_args(callee)
        if name.startswith("this->"):
            name = name[len("this->"):]
        elif "." in name or "->" in name:
            return ""  # a call through an object whose type we do not know
        name = name.lstrip(":")
        caller_qual = id_name(caller)
        scope = caller_qual.rsplit("::", 1)[0] if "::" in caller_qual else ""
        for prefix in _outward(scope):
            candidate = cpp_id(f"{prefix}::{name}" if prefix else name)
            node = self.node_by_id.get(candidate)
            if node is not None and node.kind in _CALLABLE and (not kernel_only or node.kind is NodeKind.KERNEL):
                return candidate
        if kernel_only:
            # a kernel launch names a kernel, so a unique kernel of that name is the one
            hits = self.short_kernels.get(name.rsplit("::", 1)[-1], [])
            if len(hits) == 1:
                return hits[0]
        return ""


def _outward(scope: str) -> list[str]:
    parts = scope.split("::") if scope else []
    return ["::".join(parts[:k]) for k in range(len(parts), -1, -1)]


def _strip_template_args(text: str) -> str:
    if "<" not in text:
        return text.replace(" ", "")
    out, depth = [], 0
    for c in text:
        if c == "<":
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out).replace(" ", "")


def _registrations(facts: Mapping[str, Mapping[str, Any]], table: _SymbolTable
                   ) -> tuple[list[OpRegistration], list[PyBinding]]:
    ops, bindings = [], []
    for path in sorted(facts):
        for e in facts[path].get("torch_ops", ()):
            target = table.resolve_reference(e.get("scope", ""), e["fn"])
            ops.append(OpRegistration(path, e["line"], e["kind"], e["op"], e["ns"], e["ns_macro"],
                                      e["ns_suffix"], e["overload"], e["dispatch"], e["fn"], target))
        for e in facts[path].get("pybind", ()):
            fn = e.get("target", "")
            if e["kind"] == "class":
                target = table.resolve_type(e.get("scope", ""), fn)
                target = target if id_name(target) in table.types else ""
            elif fn == "<lambda>":
                fn, target = table.resolve_lambda(path, e.get("scope", ""), e.get("lambda_calls", ()))
            else:
                target = table.resolve_reference(e.get("scope", ""), fn)
            bindings.append(PyBinding(path, e["line"], e["kind"], e["module"], e["name"],
                                      e.get("class", ""), fn, target))
    return sorted(ops), sorted(bindings)
