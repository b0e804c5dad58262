"""What a Python module exports beyond its own definitions: ``__all__``, re-exports, star imports,
and the symbols it imports under their own names (rules: extractor.python.api, docs/python-api.md)."""

from __future__ import annotations

import operator
from collections import defaultdict

from extractor import naming
from extractor.model import Diagnostic, Edge, EdgeKind, Node, NodeKind, Severity
from extractor.python.defs import PyGraph
from extractor.python.resolve import PyModule, Resolver, resolve_text


def module_exports(g: PyGraph, resolver: Resolver, modules: dict[str, PyModule]) -> dict[str, tuple[str, ...]]:
    """Each module's ``__all__``, with the ``other.__all__`` it adds read from those modules."""
    out: dict[str, tuple[str, ...]] = {}
    for name in modules:
        listed = _listed_exports(g, resolver, modules, name, frozenset({name}))
        if listed is not None:
            out[name] = listed
    return out


# The recursive walks below are module functions, not closures: a closure that calls itself holds
# itself through its cell, a cycle that would keep everything it closes over (the modules, their
# facts, the resolver: 30 MB on vLLM) until a collection the pipeline never runs (extractor.run.pipeline).
def _listed_exports(g: PyGraph, resolver: Resolver, modules: dict[str, PyModule], name: str,
                    seen: frozenset[str]) -> tuple[str, ...] | None:
    """Module ``name``'s ``__all__`` with the ``other.__all__`` it adds; None without ``__all__``."""
    module = modules[name]
    listed, refs = module.facts.all_names, module.facts.all_refs
    if listed is None and not refs:
        return None
    found = list(listed or ())
    for ref in refs:
        target = resolve_text(resolver, module, "", ref)
        if target is not None and target[0] == "node" and g.nodes[target[1]].kind is NodeKind.MODULE:
            other = naming.id_name(target[1])
            if other not in seen:
                found += _listed_exports(g, resolver, modules, other, seen | {other}) or ()
    return tuple(dict.fromkeys(found))


def reexports(g: PyGraph, resolver: Resolver, modules: dict[str, PyModule], exports: dict[str, tuple[str, ...]]) -> None:
    """An ``attribute`` node and an ``aliases`` edge for each imported name a module re-exports."""
    for name, module in sorted(modules.items()):
        wanted = set(exports.get(name, ())) | module.explicit_exports
        if not wanted:
            continue
        mid = naming.py_id(name)
        lines: dict[str, int] = {}
        for imp in module.facts.imports:
            if imp.scope == "":
                lines.setdefault(imp.asname or imp.name or imp.module.split(".")[0], imp.line)
        for export in sorted(wanted):
            nid = f"{mid}.{export}"
            if nid in g.nodes:
                continue  # defined here, or a submodule
            binding = module.namespace.get(export)
            if binding is None:
                found = resolver.from_star(module, export, 0)
            elif binding[0] == "ref":
                found = resolver.absolute(binding[1])
            else:
                found = binding
            if found is None or found[0] not in ("node", "ext") or found[1] == nid:
                if found is None or found[0] not in ("node", "ext"):
                    g.diagnostics.append(Diagnostic(module.file.path, 0, "export-unbound",
                                                    f"{name}.__all__ lists {export}, which the module does not bind",
                                                    Severity.INFO))
                continue
            target = found[1] if found[0] == "node" else g.ext_node(found[1])
            line = lines.get(export, 0)
            g.nodes[nid] = Node(nid, NodeKind.ATTRIBUTE, export, f"{name}.{export}", "python", module.file.path, line,
                                tags=("re-export",), value_kind="re-export")
            g.contains.append(Edge(mid, nid, EdgeKind.CONTAINS, module.file.path, line))
            g.edges.append(Edge(nid, target, EdgeKind.ALIASES, module.file.path, line))
            g.reexported[nid] = target
            g.stats["reexports"] += 1


def contained(g: PyGraph) -> defaultdict[str, dict[str, str]]:
    """Each node's contained nodes by name (submodules too), from the ``contains`` edges: built once
    for :func:`star_reexports`, which adds to it, and :func:`further_bindings`, which reads it after."""
    children: defaultdict[str, dict[str, str]] = defaultdict(dict)
    nodes = g.nodes
    for edge in g.contains:
        child = nodes.get(edge.target)
        if child is not None:
            children[edge.source][child.name] = edge.target
    return children


def star_reexports(g: PyGraph, resolver: Resolver, modules: dict[str, PyModule],
                   exports: dict[str, tuple[str, ...]], children: defaultdict[str, dict[str, str]]) -> None:
    """``from .tasks import *`` in a module without ``__all__`` makes the public names of ``tasks``
    (its ``__all__``, else its own public definitions, attributes and re-exports) names of the module:
    re-exports too, tagged ``star`` (griffe counts them public as well)."""
    for name, module in sorted(modules.items()):
        if name in exports or not module.star_imports:
            continue
        mid = naming.py_id(name)
        for star in module.star_imports:
            if star not in modules:
                continue
            for export, target in sorted(_star_targets(g, resolver, modules, exports, children, star,
                                                       frozenset({name, star})).items()):
                nid = f"{mid}.{export}"
                if nid in g.nodes or target == nid:
                    continue
                g.nodes[nid] = Node(nid, NodeKind.ATTRIBUTE, export, f"{name}.{export}", "python", module.file.path, 0,
                                    tags=("re-export", "star"), value_kind="re-export")
                g.contains.append(Edge(mid, nid, EdgeKind.CONTAINS, module.file.path, 0))
                g.edges.append(Edge(nid, target, EdgeKind.ALIASES, module.file.path, 0))
                g.reexported[nid] = target
                children[mid][export] = nid
                g.stats["reexports"] += 1


def _star_targets(g: PyGraph, resolver: Resolver, modules: dict[str, PyModule], exports: dict[str, tuple[str, ...]],
                  children: defaultdict[str, dict[str, str]], name: str, seen: frozenset[str]) -> dict[str, str]:
    """What ``from name import *`` binds: each public name of module ``name`` -> its node."""
    nodes = g.nodes
    module = modules[name]
    if name in exports:
        found = {}
        for export in exports[name]:
            target = children[naming.py_id(name)].get(export)
            if target is not None and nodes[target].kind is NodeKind.MODULE:
                target = None  # a submodule: what the package binds under that name decides
            if target is None and export in module.namespace and module.namespace[export][0] == "ref":
                resolved = resolver.absolute(module.namespace[export][1])
                target = resolved[1] if resolved[0] == "node" else None
            if target is not None:
                found[export] = target
        return found
    found = {k: v for k, v in children[naming.py_id(name)].items()
             if not k.startswith("_") and nodes[v].kind is not NodeKind.MODULE}
    for star in module.star_imports:
        if star in modules and star not in seen:
            for k, v in _star_targets(g, resolver, modules, exports, children, star, seen | {star}).items():
                found.setdefault(k, v)
    return found

def imported_names(g: PyGraph, resolver: Resolver, name: str, module: PyModule) -> list[tuple[str, int]]:
    """The symbols of the system module ``name`` imports at module level under the symbol's own name,
    with the import's line: each is an ``aliases`` edge from the module, since ``from vllm.config.lora
    import LoRAConfig`` keeps ``vllm.config.LoRAConfig`` importable, which an API diff must know.
    (An edge, not a node: such names are not the module's API.) Reads only: a process map can split
    the modules."""
    mid = naming.py_id(name)
    found: list[tuple[str, int]] = []
    for imp in module.facts.imports:
        line, imported, asname = imp.line, imp.name, imp.asname
        if imp.scope or not imported or imported == "*" or (asname and asname != imported):
            continue
        binding = module.namespace.get(imported)
        if f"{mid}.{imported}" in g.nodes or binding is None or binding[0] != "ref":
            continue
        target = resolver.absolute(binding[1])
        if target[0] == "node" and g.nodes[target[1]].kind is not NodeKind.MODULE \
                and g.nodes[target[1]].name == imported:
            found.append((target[1], line))
    return found


def further_bindings(resolver: Resolver, modules: dict[str, PyModule], exports: dict[str, tuple[str, ...]],
                     children: defaultdict[str, dict[str, str]], name: str) -> list[tuple[str, int, str, str]]:
    """Module ``name``'s ``bound``, as sorted (name, line, form, target) rows of
    :class:`~extractor.model.Binding`: the names the module binds at module level that have no node
    of their own, with the statement binding each (the first one): an import (``import a.b`` binds
    ``a``; not under ``if TYPE_CHECKING:``), a star import of a module of the system (its ``__all__``,
    else its public names; what a star import of an outside module binds is not known), a
    ``for``/``with`` target, a ``global``. An import binding a symbol or module of the system names
    it (``target``), so that a diff can compare kinds. ``pkg.mod.x`` still reads whichever
    statement binds ``x``; an API diff must know it. Reads only: a process map can split the modules."""
    module = modules[name]
    own = children[naming.py_id(name)]  # names with a node of their own: left out before any row is built
    package = naming.package_of(name, module.is_package)
    found: list[tuple[str, int, str, str]] = []
    for imp in module.facts.imports:
        if imp.scope or imp.typing_only:
            continue  # a function's own name, or one only type checkers bind
        if imp.name == "*":
            source = naming.resolve_relative(package, imp.module, imp.level)
            if source in modules:
                found += [(k, imp.line, "star import", "")
                          for k in sorted(_star_names(modules, exports, children, source, frozenset({name})))
                          if k not in own]
        else:
            bound = imp.asname or imp.name or imp.module.split(".")[0]
            if bound not in own:
                found.append((bound, imp.line, "import", _import_target(resolver, module, bound)))
    found += [(b.name, b.line, b.form, "") for b in module.facts.bindings if b.name not in own]
    first: dict[str, tuple[str, int, str, str]] = {}
    for binding in sorted(found, key=_line):
        first.setdefault(binding[0], binding)
    return sorted(first.values())


_line = operator.itemgetter(1)  # a row's line


def _star_names(modules: dict[str, PyModule], exports: dict[str, tuple[str, ...]],
                children: defaultdict[str, dict[str, str]], name: str, seen: frozenset[str]) -> set[str]:
    """The names ``from name import *`` binds (its ``__all__``, else its public names, and theirs)."""
    if name in exports:
        return set(exports[name])
    found = {k for k in children[naming.py_id(name)] if not k.startswith("_")}
    for star in modules[name].star_imports:
        if star in modules and star not in seen:
            found |= _star_names(modules, exports, children, star, seen | {star})
    return found


def _import_target(resolver: Resolver, module: PyModule, name: str) -> str:
    """The node of the system a module-level import binds ``name`` to, else ""."""
    binding = module.namespace.get(name)
    if binding is None or binding[0] != "ref":
        return ""  # a later statement binds it (a node of the module's own), or nothing resolvable
    found = resolver.absolute(binding[1])
    return found[1] if found[0] == "node" else ""
