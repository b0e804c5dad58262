"""The Rust part of the symbol graph, built from every file's scanner facts and the Cargo.toml files.

Ids are paths as Rust writes them, prefixed ``rs:``: ``rs:<crate>::<module>::<Item>`` and
``rs:<crate>::<module>::<Type>::<method>``. The crate is the package name of the nearest
Cargo.toml above the file (``-`` written ``_``); the module path is the file's path under the crate
(``src/`` dropped, ``lib.rs``/``main.rs``/``mod.rs`` naming their directory; with both ``lib.rs``
and ``main.rs``, the binary root is module ``main``). A Rust file outside any crate is named after
its directories. Methods hang under the type their ``impl`` names, resolved through the module's
``use`` declarations, so ``impl crate::a::Foo`` in module ``b`` puts its methods under
``rs:<crate>::a::Foo``. One id defined several times (``#[cfg]`` alternatives, ``From<A>`` and
``From<B>`` impls) is one node with the other places in ``sites``; a type's ``sites`` also hold
every ``impl`` block (inherent or of a trait) written for it, in whatever file. A struct's or
union's named fields and an enum's variants are attribute nodes contained in their type
(``rs:<crate>::<module>::<Type>::<field>``, tagged ``field`` or ``variant``, the field's type as
``annotation``; a variant is as public as its enum). Members have a namespace of their own: when a
method has the same path (a getter named like its field), the member's id ends ``#field``.

Paths are resolved the way rustc reads them, as far as declarations tell: ``crate::``, ``self::``,
``super::``, ``Self::``, ``use`` aliases (``pub use`` re-exports followed), glob imports, and other
crates of the system by their library name. Calls are best effort: a path call resolves when the
path names a function or method of the system; ``self.m()`` resolves to the impl type's method;
any other method call needs the receiver's type, which is not inferred, and is counted unresolved.

A file that includes the code prost or tonic generate for a protobuf package
(``tonic::include_proto!("pkg")``, ``include!(concat!(env!("OUT_DIR"), "/pkg.rs"))``) has an
``includes`` edge from its module to each ``.proto`` file of the system that declares the package;
a package no such file declares (generated from another crate's protos) is counted.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import posixpath
from collections.abc import Iterable, Mapping
from typing import Any

from extractor.rust.facts import RustDefinition, RustFacts, RustUse
from extractor.native.manifests import Crate, Manifests
from extractor.native.calls import each_call
from extractor.native.graph import extract_with_manifests, finish_graph, parse_error_diagnostic
from extractor.naming import file_id
from extractor.model import (Contribution, Diagnostic, Edge, EdgeKind, Language, Location, Node, NodeKind,
                             Parameter, ParamKind)

_KINDS = {"module": NodeKind.MODULE, "struct": NodeKind.STRUCT, "enum": NodeKind.ENUM, "union": NodeKind.UNION,
          "trait": NodeKind.TRAIT, "function": NodeKind.FUNCTION, "method": NodeKind.METHOD,
          "field": NodeKind.ATTRIBUTE, "variant": NodeKind.ATTRIBUTE}
_MEMBERS = frozenset({"field", "variant"})  # attribute nodes contained in their type, tagged with the kind
_TYPES = frozenset({NodeKind.STRUCT, NodeKind.ENUM, NodeKind.UNION, NodeKind.TRAIT})
_CALLABLE = frozenset({NodeKind.FUNCTION, NodeKind.METHOD})
_EXTERN_ROOTS = frozenset({"std", "core", "alloc"})
_MAX_DEPTH = 8


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class RustItem:
    """One definition as the graph placed it (for the bindings and FFI steps)."""

    node: str
    path: str
    line: int
    kind: str
    attrs: tuple[str, ...] = ()
    owner_attrs: tuple[str, ...] = ()  # the enclosing impl's (`pymethods`)
    abi: str = ""  # `extern "C"` fn, or a fn declared in an `extern "C" { }` block ("foreign" tag)
    adds: tuple[tuple[str, str, str], ...] = ()  # a #[pymodule]'s registrations: (kind, resolved id or name, written)
    crate: str = ""


def module_path(path: str, crate: Crate | None, siblings: set[str]) -> tuple[str, ...]:
    """The module of the file at ``path`` (label-prefixed): (crate, mod, ...)."""
    if crate is None:
        parts = path[:-3].split("/")
        if parts[-1] in ("lib", "main", "mod") and len(parts) > 1:
            parts = parts[:-1]
        return tuple(p.replace("-", "_").replace(".", "_") for p in parts)
    rel = path[len(crate.dir) + 1:] if crate.dir else path
    if rel == crate.lib_path:
        return (crate.name,)
    parts = rel[:-3].split("/")
    if parts[0] == "src":
        parts = parts[1:]
        if parts == ["main"] and posixpath.join(crate.dir, crate.lib_path) not in siblings:
            return (crate.name,)
    if parts and parts[-1] == "mod":
        parts = parts[:-1]
    return (crate.name, *(p.replace("-", "_") for p in parts))


def _other_target(path: str, crate: Crate, module: tuple[str, ...]) -> bool:
    """Whether the file belongs to a target of the package other than its library: Cargo's
    ``benches/``, ``tests/``, ``examples/``, ``src/bin/``, or ``src/main.rs`` beside a library."""
    rel = path[len(crate.dir) + 1:] if crate.dir else path
    return rel.split("/", 1)[0] in ("benches", "tests", "examples") or rel.startswith("src/bin/") or \
        (rel == "src/main.rs" and module != (crate.name,))


def _target_root(path: str, crate: Crate) -> bool:
    """The root file of a bench, test, example or binary: ``tests/it.rs``, ``examples/x/main.rs``,
    ``src/bin/tool.rs``, ``src/main.rs``."""
    parts = (path[len(crate.dir) + 1:] if crate.dir else path).split("/")
    if parts[0] in ("benches", "tests", "examples"):
        return len(parts) == 2 or (len(parts) == 3 and parts[2] == "main.rs")
    if parts[:2] == ["src", "bin"]:
        return len(parts) == 3 or (len(parts) == 4 and parts[3] == "main.rs")
    return parts == ["src", "main.rs"]


@dataclasses.dataclass
class _Def:
    path: str
    module: tuple[str, ...]
    record: RustDefinition
    id: str = ""
    parent: str = ""
    owner: str = ""  # resolved id of the impl's type (methods)


@dataclasses.dataclass(frozen=True, slots=True)
class RustShared:
    """What the Rust graph step shares with later steps (the FFI step binds PyO3 and ``extern "C"``)."""

    items: tuple[RustItem, ...]
    definition_sites: tuple[Location, ...]


def extract_rust_graph(ctx: Any) -> Contribution[RustShared]:
    """The pipeline entry: ``ctx.facts("rust")``, the system's Cargo.toml files and the packages of
    its .proto files in, graph parts out."""
    packages: dict[str, list[str]] = collections.defaultdict(list)
    for f, proto in ctx.facts("proto", Language.PROTO):
        if proto is not None and proto.package:
            packages[proto.package].append(f.path)
    return extract_with_manifests(ctx, "rust", Language.RUST,
                                  functools.partial(build_rust_graph, protos=packages), "Cargo.toml")


def build_rust_graph(files: Iterable[tuple[str, RustFacts]], manifests: Manifests,
                     protos: Mapping[str, list[str]] | None = None) -> Contribution[RustShared]:
    """``protos``: the system's .proto files by the package they declare."""
    entries = sorted(files, key=lambda e: e[0])
    paths = {p for p, _ in entries}
    stats: collections.Counter[str] = collections.Counter()
    diagnostics: list[Diagnostic] = []
    modules: dict[str, tuple[str, ...]] = {}
    crate_of: dict[str, str] = {}
    targets = set()
    roots = set()  # the root files of those targets
    for path, _facts in entries:
        crate = manifests.crate_of(path)
        modules[path] = module_path(path, crate, paths)
        crate_of[path] = crate.name if crate is not None else modules[path][0]
        if crate is None:
            stats["files_outside_crates"] += 1
        elif _other_target(path, crate, modules[path]):
            targets.add(_join(modules[path]))
            if _target_root(path, crate):
                roots.add(path)
    file_modules = {_join(m) for m in modules.values()}
    table = _Table(manifests)
    table.targets = targets
    defs: list[_Def] = []
    for path, facts in entries:
        mod = modules[path]
        table.add_module(mod, path, 1, file_module=True)
        for use in facts.uses:
            table.add_use(mod, use)
        for record in facts.defs:
            d = _Def(path, mod, record)
            defs.append(d)
            if record.kind == "module" and "declaration" in record.tags and "::" not in record.qual \
                    and path in roots and _join((*mod[:-1], record.qual)) in file_modules:
                # `mod common;` in a bench, test or example root (or a binary's main.rs) is the file beside
                # it (`tests/common/mod.rs`), which every root of the directory may declare: named there
                table.add_use(mod, RustUse(f"super::{record.qual}", "", record.line, ""))
                # the targets' directory (`tests`) holds no file of its own: a module paths walk through
                table.items.setdefault(_join(mod[:-1]), NodeKind.MODULE)
                stats["target_modules_beside"] += 1
            elif record.kind == "module":
                table.add_module((*mod, *record.qual.split("::")), path, record.line,
                                 file_module=False, declared="declaration" in record.tags)
            elif record.kind != "method" and record.kind not in _MEMBERS:
                table.items[_join((*mod, *record.qual.split("::")))] = _KINDS[record.kind]
        problem = parse_error_diagnostic(path, facts.errors, facts.error_lines)
        if problem is not None:
            stats["files_with_parse_errors"] += 1
            diagnostics.append(problem)
    for d in defs:
        _place(d, table)
        if d.record.kind == "method":
            table.items.setdefault(d.id[len("rs:"):], NodeKind.METHOD)
    _separate_member_names(defs)
    nodes, sites = _merge(defs, table, _impl_sites(entries, modules, table))
    edges: list[Edge] = []
    external: dict[str, Node] = {}

    def ext(path: str, kind: NodeKind = NodeKind.EXTERNAL) -> str:
        nid = "rs:" + path
        if nid not in nodes and nid not in external:
            external[nid] = Node(nid, kind, path.rsplit("::", 1)[-1], path, "rust")
        return nid

    for mid, (path, line) in sorted(table.module_sites.items()):
        parent = mid.rsplit("::", 1)[0] if "::" in mid else ""
        if parent and "rs:" + parent in nodes:
            edges.append(Edge("rs:" + parent, "rs:" + mid, EdgeKind.CONTAINS, path, line))
    for d in defs:
        if d.record.kind == "module":
            continue
        if d.parent and d.parent in nodes:
            edges.append(Edge(d.parent, d.id, EdgeKind.CONTAINS, d.path, d.record.line))
    for path, facts in entries:
        mod = modules[path]
        mid = "rs:" + _join(mod)
        for use in facts.uses:
            written, line = use.path, use.line
            scope = (*mod, *use.scope.split("::")) if use.scope else mod
            parts = written.removesuffix("::*").split("::")
            target = table.resolve(scope, parts)
            for k in range(len(parts) - 1, 0, -1):
                if target:
                    break
                # `use crate::m::NAME` where NAME is made by a macro (lazy_static!): the module stands
                prefix = table.resolve(scope, parts[:k])
                if prefix and table.items.get(prefix) is NodeKind.MODULE:
                    target = prefix
            if target:
                stats["uses_internal"] += 1
                dest = target if nodes.get("rs:" + target, None) is not None and \
                    nodes["rs:" + target].kind is NodeKind.MODULE else table.module_of(target)
                if dest and "rs:" + dest != mid:
                    edges.append(Edge(mid, "rs:" + dest, EdgeKind.IMPORTS, path, line))
            else:
                root = table.absolute(scope, written.split("::"))
                if root and root[0] in table.crate_ids:
                    stats["uses_unresolved"] += 1  # a path into the system that names nothing found
                    continue
                head = written.split("::")[0]
                if head in ("crate", "self", "super"):
                    stats["uses_unresolved"] += 1
                    continue
                stats["uses_external"] += 1
                edges.append(Edge(mid, ext(head), EdgeKind.IMPORTS, path, line))
        for type_written, trait_written, line, scope_text in facts.impls:
            if not trait_written:
                continue
            scope = (*mod, *scope_text.split("::")) if scope_text else mod
            src = table.resolve(scope, type_written.split("::"))
            dst = table.resolve(scope, trait_written.split("::"))
            if not src:
                stats["impls_foreign_type"] += 1
                continue
            stats["impls_trait"] += 1
            edges.append(Edge("rs:" + src, "rs:" + dst if dst else ext(_external_name(table, scope, trait_written)),
                              EdgeKind.IMPLEMENTS, path, line))
    for d in defs:
        for base in d.record.bases:
            dst = table.resolve(d.module, base.split("::"))
            edges.append(Edge(d.id, "rs:" + dst if dst else ext(_external_name(table, d.module, base)),
                              EdgeKind.INHERITS, d.path, d.record.line))
    by_file_qual = {(d.path, d.record.qual): d for d in defs}
    for path, facts in entries:
        for caller_qual, callee, line in each_call(facts.calls):
            caller = by_file_qual.get((path, caller_qual))
            if caller is None:
                continue
            target = _resolve_call(table, nodes, caller, callee)
            if target:
                stats["calls_resolved"] += 1
                edges.append(Edge(caller.id, target, EdgeKind.CALLS, path, line))
            else:
                stats["calls_unresolved"] += 1
    for path, facts in entries:
        for package, line in facts.protos:
            declared = (protos or {}).get(package, ())
            stats["proto_includes" if declared else "proto_includes_outside"] += 1
            # from the innermost module around it (`pub mod pb { tonic::include_proto!("pkg"); }`)
            inner = max((r for r in facts.defs if r.kind == "module" and r.start <= line <= r.end),
                        key=lambda r: r.start, default=None)
            module = _join((*modules[path], *inner.qual.split("::"))) if inner is not None else _join(modules[path])
            edges.extend(Edge("rs:" + module, file_id(proto), EdgeKind.INCLUDES, path, line)
                         for proto in sorted(declared))
    all_nodes, all_edges = finish_graph(nodes.values(), external.values(), edges, stats, len(entries))
    stats["crates"] = len({crate_of[p] for p in crate_of})
    exported: dict[tuple[str, str], list[RustUse]] = collections.defaultdict(list)  # (file, scope) -> uses
    for path, facts in entries:
        for use in facts.uses:
            if use.scope and any(a.startswith(("pymodule_export", "pyo3::pymodule_export")) for a in use.attrs):
                exported[(path, use.scope)].append(use)
    items = _items(defs, table, exported)
    return Contribution(nodes=all_nodes, edges=all_edges, diagnostics=tuple(sorted(diagnostics)),
                        stats=dict(sorted(stats.items())),
                        shared=RustShared(items, tuple(sorted(sites))))


# -- names ---------------------------------------------------------------------------------------

def _join(parts: Iterable[str]) -> str:
    return "::".join(parts)


class _Table:
    """Modules, items and `use` bindings by path; resolves written paths to item paths."""

    def __init__(self, manifests: Manifests) -> None:
        self.items: dict[str, NodeKind] = {}
        self.module_sites: dict[str, tuple[str, int]] = {}
        self.declared: dict[str, tuple[str, int]] = {}  # `mod x;` sites
        self.uses: dict[str, dict[str, str]] = collections.defaultdict(dict)  # module -> alias -> written abs path
        self.globs: dict[str, list[str]] = collections.defaultdict(list)
        self.crate_ids = {c.name for c in manifests.crates}
        self._memo: dict[tuple[tuple[str, ...], tuple[str, ...]], str] = {}
        self._glob_memo: dict[tuple[str, ...], list[str]] = {}
        self.libs: dict[str, list[str]] = collections.defaultdict(list)
        self.targets: set[str] = set()  # modules of a package's targets other than its library (benches, tests)
        for c in manifests.crates:
            self.libs[c.lib].append(c.name)

    def add_module(self, mod: tuple[str, ...], path: str, line: int, file_module: bool, declared: bool = False) -> None:
        key = _join(mod)
        self.items[key] = NodeKind.MODULE
        if declared:
            self.declared.setdefault(key, (path, line))
        elif file_module or key not in self.module_sites:
            self.module_sites[key] = (path, line)

    def add_use(self, mod: tuple[str, ...], use: RustUse) -> None:
        written, alias, scope = use.path, use.alias, use.scope
        where = _join((*mod, *scope.split("::")) if scope else mod)
        parts = written.split("::")
        if parts[-1] == "*":
            self.globs[where].append(written[:-3])
            return
        name = alias or (parts[-2] if parts[-1] == "self" and len(parts) > 1 else parts[-1])
        if name != "_":
            self.uses[where][name] = written.removesuffix("::self")

    def absolute(self, scope: tuple[str, ...], parts: list[str]) -> tuple[str, ...]:
        """The written path's first segment made absolute; () when it is not a system path."""
        if not parts:
            return ()
        head, rest = parts[0], parts[1:]
        if head == "crate":
            return (scope[0], *rest)
        if head == "self":
            return (*scope, *rest)
        if head == "super":
            base = scope
            while parts and parts[0] == "super":
                base = base[:-1]
                parts = parts[1:]
            return (*base, *parts) if base else ()
        return ()

    def resolve(self, scope: tuple[str, ...], parts: list[str], depth: int = 0) -> str:
        """Item path that ``parts`` (as written in module ``scope``) names, or ""."""
        if not parts or depth > _MAX_DEPTH or not scope:
            return ""
        key = (scope, tuple(parts))
        hit = self._memo.get(key)
        if hit is None:
            # glob imports make the search a graph (`use super::*` both ways): a path being
            # resolved further up the stack resolves to nothing here, which breaks the cycle
            self._memo[key] = ""
            hit = self._memo[key] = self._resolve(scope, parts, depth)
        return hit

    def _resolve(self, scope: tuple[str, ...], parts: list[str], depth: int) -> str:
        absolute = self.absolute(scope, parts)
        if absolute:
            return self._walk(absolute, depth)
        head = parts[0]
        # a name visible in the module or an enclosing item scope (nested fns see their module)
        for k in range(len(scope), 0, -1):
            where = scope[:k]
            key = _join(where)
            if _join((*where, head)) in self.items:
                return self._walk((*where, *parts), depth)
            written = self.uses.get(key, {}).get(head)
            if written is not None:
                target = self.resolve(where, written.split("::"), depth + 1)
                if not target:
                    return ""
                return self._walk((*target.split("::"), *parts[1:]), depth)
            for target in self.glob_targets(where, depth):
                if self._walk((*target.split("::"), head), depth + 1):
                    return self._walk((*target.split("::"), *parts), depth)
            if self.items.get(key) is NodeKind.MODULE:
                break  # a module does not see its parent module's names
        crates = self.libs.get(head, ())
        if crates:
            # `use tokenizers::x` in a crate whose own library is also `tokenizers` means the other one,
            # except in the package's other targets (benches, tests, examples, binaries), which use its
            # library by its name: Hugging Face tokenizers' benches, beside its Python bindings' crate
            # whose library is named `tokenizers` too
            own = scope[0] in crates and any(_join(scope[:k]) in self.targets for k in range(2, len(scope) + 1))
            others = [c for c in crates if c != scope[0]] or list(crates)
            crate = scope[0] if own else next((c for c in others if c == head), others[0])
            return self._walk((crate, *parts[1:]), depth)
        return ""

    def glob_targets(self, where: tuple[str, ...], depth: int) -> list[str]:
        """The modules (or enums) that `use x::*` lines in ``where`` bring names from."""
        hit = self._glob_memo.get(where)
        if hit is None:
            bases = self.globs.get(_join(where), ())
            hit = [t for t in (self.resolve(where, b.split("::"), depth + 1) for b in bases) if t]
            if bases:
                self._glob_memo[where] = hit
        return hit

    def _walk(self, absolute: tuple[str, ...], depth: int) -> str:
        """Follow the path segment by segment through modules and re-exports."""
        for i in range(1, len(absolute) + 1):
            prefix = _join(absolute[:i])
            if prefix in self.items:
                continue
            parent = absolute[:i - 1]
            if not parent:
                return ""
            key = _join(parent)
            name = absolute[i - 1]
            written = self.uses.get(key, {}).get(name)
            target = ""
            if written is not None:
                target = self.resolve(parent, written.split("::"), depth + 1)
            if not target:
                for base_target in self.glob_targets(parent, depth):
                    if _join((base_target, name)) in self.items:
                        target = _join((base_target, name))
                        break
            if not target:
                return ""
            return self._walk((*target.split("::"), *absolute[i:]), depth + 1)
        return _join(absolute)

    def module_of(self, item: str) -> str:
        parts = item.split("::")
        for k in range(len(parts), 0, -1):
            if self.items.get(_join(parts[:k])) is NodeKind.MODULE:
                return _join(parts[:k])
        return ""


def _external_name(table: _Table, scope: tuple[str, ...], written: str) -> str:
    """A name outside the system as its full written path when a `use` says where it comes from."""
    parts = written.split("::")
    for k in range(len(scope), 0, -1):
        alias = table.uses.get(_join(scope[:k]), {}).get(parts[0])
        if alias is not None:
            return _join((*alias.split("::"), *parts[1:]))
    return written


def _place(d: _Def, table: _Table) -> None:
    r = d.record
    qual = r.qual.split("::")
    if r.kind == "method":
        written = r.owner.type if r.owner is not None else ""
        owner_parts = written.split("::")
        scope_parts = qual[:len(qual) - len(owner_parts) - 1]
        scope = (*d.module, *scope_parts)
        in_trait = r.owner is not None and r.owner.in_trait
        resolved = table.resolve(scope, owner_parts) if not in_trait else _join((*d.module, *qual[:-1]))
        if resolved:
            d.owner = resolved
            d.id = "rs:" + _join((resolved, qual[-1]))
            d.parent = "rs:" + resolved
        else:
            # an impl for a type outside the system (`impl Trait for Vec<u8>`): named where it is
            d.id = "rs:" + _join((*d.module, *qual))
            d.parent = "rs:" + _join(scope)
        return
    full = (*d.module, *qual)
    d.id = "rs:" + _join(full)
    d.parent = "rs:" + _join(full[:-1])


def _impl_sites(entries: list[tuple[str, RustFacts]], modules: Mapping[str, tuple[str, ...]],
                table: _Table) -> dict[str, set[Location]]:
    """Every `impl` block (inherent or of a trait) of a system type, as a site of that type."""
    found: dict[str, set[Location]] = collections.defaultdict(set)
    for path, facts in entries:
        mod = modules[path]
        for type_written, _trait, line, scope_text in facts.impls:
            scope = (*mod, *scope_text.split("::")) if scope_text else mod
            target = table.resolve(scope, type_written.split("::"))
            if target and table.items.get(target) in _TYPES:
                found["rs:" + target].add(Location(path, line))
    return found


def _separate_member_names(defs: list[_Def]) -> None:
    """Fields and variants live in a namespace of their own: a getter `fn len(&self)` beside the field
    `len` keeps the path as its id, and the member's id is the path with ``#field`` (``#variant``)."""
    items = {d.id for d in defs if d.record.kind not in _MEMBERS}
    for d in defs:
        if d.record.kind in _MEMBERS and d.id in items:
            d.id += "#" + d.record.kind


def _merge(defs: list[_Def], table: _Table,
           impl_sites: Mapping[str, set[Location]]) -> tuple[dict[str, Node], list[Location]]:
    groups: dict[str, list[_Def]] = collections.defaultdict(list)
    for d in defs:
        if d.record.kind != "module" or "declaration" in d.record.tags:
            groups[d.id].append(d)
    nodes: dict[str, Node] = {}
    sites: list[Location] = []
    for mid, (path, line) in table.module_sites.items():
        decl = table.declared.get(mid)
        nodes["rs:" + mid] = Node("rs:" + mid, NodeKind.MODULE, mid.rsplit("::", 1)[-1], mid, "rust", path, line,
                                  sites=(Location(*decl),) if decl else ())
    for mid, decl in table.declared.items():
        if mid not in table.module_sites:  # `mod x;` whose file is not in the tree (generated, cfg'd out)
            nodes["rs:" + mid] = Node("rs:" + mid, NodeKind.MODULE, mid.rsplit("::", 1)[-1], mid, "rust",
                                      decl[0], decl[1], tags=("declaration",))
    for nid, group in sorted(groups.items()):
        if nid in nodes and nodes[nid].kind is NodeKind.MODULE:
            continue
        group.sort(key=lambda d: ("declaration" in d.record.tags, d.path, d.record.line))
        rep = group[0]
        r = rep.record
        kind = _KINDS[r.kind]
        tags = set(r.tags)
        if len(group) > 1 and any("declaration" not in d.record.tags for d in group):
            tags.discard("declaration")
        if r.owner is not None and r.owner.trait:
            tags.add("trait-impl")
        if r.abi and "foreign" not in tags:
            tags.add(f"extern-{r.abi}")
        params = tuple(Parameter(n, ParamKind.POSITIONAL_ONLY, t) for n, t in r.params)
        signature = ""
        if kind in _CALLABLE:
            signature = "(" + ", ".join(f"{n}: {t}" if n != "self" else t for n, t in r.params) + ")"
            signature += f" -> {r.returns}" if r.returns else ""
        qual = nid[len("rs:"):].split("#", 1)[0]
        decorators = tuple(sorted({a.split("(", 1)[0] for a in r.attrs}))
        member = r.kind in _MEMBERS
        if member:
            tags.add(r.kind)
        others = {Location(d.path, d.record.line) for d in group[1:]}
        others |= impl_sites.get(nid, set()) - {Location(rep.path, r.line)}
        nodes[nid] = Node(nid, kind, qual.rsplit("::", 1)[-1], qual, "rust", rep.path, r.line, r.doc,
                          signature[:300], tuple(sorted(tags)), params=params,
                          returns="" if member else r.returns, annotation=r.returns if member else "",
                          decorators=decorators, api="public: pub" if r.public else "", sites=tuple(sorted(others)))
    for d in defs:
        if d.record.kind not in _MEMBERS:
            sites.append(Location(d.path, d.record.line))
    return nodes, sites


def _resolve_call(table: _Table, nodes: Mapping[str, Node], caller: _Def, callee: str) -> str:
    caller_path = caller.id[len("rs:"):].split("::")
    if callee.startswith("self."):
        if not caller.owner:
            return ""
        target = "rs:" + _join((caller.owner, callee[5:]))
        return target if target in nodes and nodes[target].kind in _CALLABLE else ""
    if callee.startswith("?."):
        return ""
    parts = callee.split("::")
    if parts[0] == "Self":
        if not caller.owner:
            return ""
        target = "rs:" + _join((caller.owner, *parts[1:]))
        return target if target in nodes and nodes[target].kind in _CALLABLE else ""
    # a function nested in the caller's body, then the module's names
    nested = "rs:" + _join((*caller_path, *parts))
    if nested in nodes and nodes[nested].kind in _CALLABLE:
        return nested
    scope = caller.module
    qual = caller.record.qual.split("::")
    if caller.record.kind != "method":
        scope = (*caller.module, *qual[:-1])
    found = table.resolve(scope, parts)
    if not found:
        return ""
    target = "rs:" + found
    if target in nodes and nodes[target].kind in _CALLABLE:
        return target
    return ""


def _items(defs: list[_Def], table: _Table, exported: Mapping[tuple[str, str], list[RustUse]]) -> tuple[RustItem, ...]:
    """The items later steps read; a declarative ``#[pymodule] mod m { #[pymodule_export] use
    super::X; }`` adds what its ``exported`` uses (by file and scope) name, as kind "use": a class,
    function or submodule, which the FFI step tells apart by what the path resolves to."""
    out = []
    for d in defs:
        r = d.record
        owner_attrs = r.owner.attrs if r.owner is not None else ()
        if not r.attrs and not owner_attrs and not r.abi:
            continue
        adds = []
        for add in r.adds:
            resolved = table.resolve((*d.module, *r.qual.split("::")[:-1]), add.name.split("::"))
            adds.append((add.kind, "rs:" + resolved if resolved else "", add.name))
        if r.kind == "module":
            for use in exported.get((d.path, r.qual), ()):
                resolved = table.resolve((*d.module, *r.qual.split("::")), use.path.split("::"))
                adds.append(("use", "rs:" + resolved if resolved else "", use.path))
        out.append(RustItem(d.id, d.path, r.line, r.kind, r.attrs, owner_attrs, r.abi, tuple(adds), d.module[0]))
    return tuple(sorted(out))
