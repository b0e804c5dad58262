"""Cross-language `binds` edges through Rust and Go: PyO3, cgo and Rust's `extern "C"`.

- PyO3. Python calls ``<...>.<module>.<Name>(...)``; Rust registers ``#[pyclass]`` types,
  ``#[pyfunction]`` functions and the methods of ``#[pymethods]`` impls, and a ``#[pymodule]``
  function adds them (``m.add_class::<T>()``, ``wrap_pyfunction!(f)``, ``wrap_pymodule!(sub)``).
  Python names follow PyO3's rules: ``#[pyclass(name = "X")]``, ``#[pyo3(name = "x")]`` (or
  ``#[pyfunction(name = ...)]``, ``#[pymodule(name = ...)]``) override the Rust name; ``#[new]``
  is what calling the class runs, so a call of the class binds to the type and to that method.
  The top module's dotted name is ``[tool.maturin] module-name`` in pyproject.toml (or the
  Cargo ``[lib] name``); a submodule is its parent's name plus its own. An item that no module
  adds is placed in the crate's top module, and its record says the module was inferred.
- cgo. ``C.name(...)`` in a Go file that imports "C" binds to the C/C++ function ``name`` of the
  system (C names are global); one defined in the file's own preamble has no C/C++ node and is
  counted apart.
- Rust FFI, both ways. A Rust call of a function declared in an ``extern "C" { }`` block binds to
  the C/C++ definition of that name; a C/C++ call of a function the C/C++ side only declares binds
  to the Rust ``extern "C"`` function of that name (``#[no_mangle]`` or ``#[export_name]``).
"""

from __future__ import annotations

import collections
import dataclasses
import re
from collections.abc import Iterable, Mapping
from typing import Any

from extractor.bindings import Binding, PyBindIndex
from extractor.cpp.graph import PyBinding
from extractor.manifests import Manifests
from extractor.model import Contribution, Edge, EdgeKind, Node, NodeKind, Step

_NAME_ARG = re.compile(r'\bname\s*=\s*"([^"]+)"')
_CALLABLE = frozenset({NodeKind.FUNCTION, NodeKind.METHOD})


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class PyO3Export:
    """One Rust item as Python sees it."""

    path: str
    line: int
    kind: str  # "def", "class" or "method" (PyBinding's kinds) or "module"
    module: str  # dotted Python module ("tokenizers.tokenizers", "tokenizers.tokenizers.models")
    name: str
    owner: str  # Python class name, for methods
    target: str  # Rust node id
    module_read: bool  # False when no #[pymodule] was found adding it (the crate's top module assumed)


def extract_ffi(ctx: Any) -> Contribution:
    rust = ctx.results.get("rust")
    go = ctx.results.get("go")
    python = ctx.results.get("python")
    cpp = ctx.results.get("cpp")
    nodes: dict[str, Node] = {}
    edges: list[Edge] = []
    for result in (rust, go, cpp):
        if result is not None:
            nodes.update((n.id, n) for n in result.nodes)
            edges.extend(result.edges)
    manifests = next((r.extra["manifests"] for r in (rust, go) if r is not None and "manifests" in r.extra),
                     Manifests())
    items = tuple(rust.extra.get("items", ())) if rust is not None else ()
    call_sites = tuple(python.extra.get("call_sites", ())) if python is not None else ()
    cgo = tuple(go.extra.get("cgo_calls", ())) if go is not None else ()
    return bind_native(items, manifests, call_sites, cgo, nodes, edges)


def bind_native(items: Iterable[Any], manifests: Manifests, call_sites: Iterable[Any], cgo: Iterable[Any],
                nodes: Mapping[str, Node], edges: Iterable[Edge]) -> Contribution:
    items = tuple(items)
    stats: collections.Counter[str] = collections.Counter()
    bindings: list[Binding] = []
    exports = pyo3_exports(items, manifests, nodes)
    stats["pyo3_exports"] = sum(1 for e in exports if e.kind != "module")
    stats["pyo3_modules"] = sum(1 for e in exports if e.kind == "module")
    stats["pyo3_module_inferred"] = sum(1 for e in exports if not e.module_read)
    index = PyBindIndex(tuple(PyBinding(e.path, e.line, e.kind, e.module.rsplit(".", 1)[-1], e.name, e.owner,
                                        e.target.rsplit("::", 1)[-1], e.target) for e in exports if e.kind != "module"))
    for site in sorted(call_sites, key=lambda s: (s.path, s.line, s.caller, s.callee)):
        for b in index.lookup(site.callee):
            stats["pyo3_calls_bound"] += 1
            bindings.append(Binding(site.path, site.line, site.caller, site.callee, b.target, "pyo3",
                                    f"{b.path}:{b.line}", "", ""))
    c_functions = _c_functions(nodes)
    for use in cgo:
        target = c_functions.get(use.name)
        if use.preamble:
            stats["cgo_calls_preamble"] += 1
        elif target:
            stats["cgo_calls_bound"] += 1
            bindings.append(Binding(use.path, use.line, use.caller, f"C.{use.name}", target, "cgo", "", "", ""))
        else:
            stats["cgo_calls_unbound"] += 1
    foreign = {i.node: i for i in items if i.abi and "foreign" in nodes.get(i.node, _NO_NODE).tags}
    exported = {}
    for i in items:
        if i.abi and i.node not in foreign and any(a.startswith(("no_mangle", "unsafe(no_mangle", "export_name"))
                                                   for a in i.attrs):
            exported[_exported_name(i)] = i
    declared_only = {n.name: n.id for n in nodes.values() if n.language in ("cpp", "cuda") and
                     n.kind is NodeKind.FUNCTION and "declaration" in n.tags}
    for edge in sorted(set(edges), key=lambda e: (e.source, e.target, e.path, e.line)):
        if edge.kind is not EdgeKind.CALLS:
            continue
        if edge.target in foreign:
            name = edge.target.rsplit("::", 1)[-1]
            target = c_functions.get(name)
            stats["rust_ffi_calls_bound" if target else "rust_ffi_calls_unbound"] += 1
            if target:
                bindings.append(Binding(edge.path, edge.line, edge.source, name, target, "rust-ffi",
                                        f"{foreign[edge.target].path}:{foreign[edge.target].line}", "", ""))
        elif edge.target.startswith("cpp:"):
            name = edge.target[len("cpp:"):]
            if name in exported and declared_only.get(name) == edge.target:
                stats["c_calls_into_rust"] += 1
                item = exported[name]
                bindings.append(Binding(edge.path, edge.line, edge.source, name, item.node, "rust-ffi",
                                        f"{item.path}:{item.line}", "", ""))
    bindings = sorted(set(bindings))
    out_edges = sorted({Edge(b.caller, b.target, EdgeKind.BINDS, b.path, b.line) for b in bindings})
    stats["binds_edges"] = len(out_edges)
    stats["rust_extern_c_exported"] = len(exported)
    stats["rust_extern_c_declared"] = len(foreign)
    return Contribution(edges=tuple(out_edges), stats=dict(sorted(stats.items())),
                        extra={"bindings": tuple(bindings), "pyo3_exports": exports})


_NO_NODE = Node("", NodeKind.EXTERNAL, "", "", "")


def _exported_name(item: Any) -> str:
    for a in item.attrs:
        m = re.match(r'(?:unsafe\()?export_name\s*=\s*"([^"]+)"', a)
        if m:
            return m.group(1)
    return item.node.rsplit("::", 1)[-1]


def _c_functions(nodes: Mapping[str, Node]) -> dict[str, str]:
    """C-callable name -> C/C++ node id: functions at global scope (C has no namespaces)."""
    out = {}
    for n in nodes.values():
        if n.language in ("cpp", "cuda") and n.kind in _CALLABLE and n.qualname == n.name:
            if "declaration" not in n.tags or n.name not in out:
                out[n.name] = n.id
    return out


def _python_name(attrs: Iterable[str], default: str, *heads: str) -> str:
    for a in attrs:
        if a.startswith(heads) or a.startswith("pyo3("):
            m = _NAME_ARG.search(a)
            if m:
                return m.group(1)
    return default


def _has(attrs: Iterable[str], *heads: str) -> bool:
    return any(a == h or a.startswith(h + "(") or a.startswith(f"pyo3::{h}") for a in attrs for h in heads)


def pyo3_exports(items: tuple[Any, ...], manifests: Manifests, nodes: Mapping[str, Node]) -> tuple[PyO3Export, ...]:
    """Every PyO3 module, class, function and method with the dotted name Python reaches it by."""
    by_crate: dict[str, list[Any]] = collections.defaultdict(list)
    for i in items:
        by_crate[i.crate].append(i)
    out: list[PyO3Export] = []
    for crate_name, crate_items in sorted(by_crate.items()):
        modules = {i.node: i for i in crate_items if _has(i.attrs, "pymodule")}
        if not any(_has(i.attrs, "pyclass", "pyfunction", "pymodule") or _has(i.owner_attrs, "pymethods")
                   for i in crate_items):
            continue
        crate = next((c for c in manifests.crates if c.name == crate_name), None)
        lib = crate.lib if crate is not None else crate_name
        top_dotted = _extension_module(manifests, crate, lib)
        python_names = {m: _python_name(i.attrs, m.rsplit("::", 1)[-1], "pymodule") for m, i in modules.items()}
        # module dotted names: the top module is the extension's; submodules hang under their adder
        dotted: dict[str, str] = {}
        parent_of = {add[1]: m for m, i in modules.items() for add in i.adds if add[0] == "mod" and add[1]}
        for m in sorted(modules):
            chain, current = [], m
            while current in parent_of and current not in chain:
                chain.append(current)
                current = parent_of[current]
            root = current
            name = top_dotted if python_names[root] == lib.rsplit(".", 1)[-1] or len(modules) == 1 else python_names[root]
            for sub in reversed(chain):
                name = f"{name}.{python_names[sub]}"
            dotted[m] = name
        top = next((dotted[m] for m in sorted(modules) if dotted[m] == top_dotted), top_dotted)
        added: dict[str, str] = {}
        for m, i in sorted(modules.items()):
            out.append(PyO3Export(i.path, i.line, "module", dotted[m], python_names[m], "", m, True))
            for kind, target, _written in i.adds:
                if target and kind in ("cls", "fn"):
                    added.setdefault(target, dotted[m])
            for j in crate_items:  # items inside a declarative `#[pymodule] mod`
                if j.node.startswith(m + "::") and j.node not in added:
                    added[j.node] = dotted[m]
        class_names: dict[str, tuple[str, str, bool]] = {}
        for i in crate_items:
            if _has(i.attrs, "pyclass"):
                module = added.get(i.node) or top
                name = _python_name(i.attrs, i.node.rsplit("::", 1)[-1], "pyclass")
                class_names[i.node] = (module, name, i.node in added)
                out.append(PyO3Export(i.path, i.line, "class", module, name, "", i.node, i.node in added))
            elif _has(i.attrs, "pyfunction"):
                module = added.get(i.node) or top
                name = _python_name(i.attrs, i.node.rsplit("::", 1)[-1], "pyfunction")
                out.append(PyO3Export(i.path, i.line, "def", module, name, "", i.node, i.node in added))
        for i in crate_items:
            if not _has(i.owner_attrs, "pymethods") or i.kind != "method":
                continue
            owner = i.node.rsplit("::", 1)[0]
            if owner not in class_names or _has(i.attrs, "getter", "setter", "classattr"):
                continue
            module, cls, read = class_names[owner]
            if _has(i.attrs, "new"):
                out.append(PyO3Export(i.path, i.line, "class", module, cls, "", i.node, read))
                continue
            name = _python_name(i.attrs, i.node.rsplit("::", 1)[-1], "pyo3")
            out.append(PyO3Export(i.path, i.line, "method", module, name, cls, i.node, read))
    return tuple(sorted(set(out)))


def _extension_module(manifests: Manifests, crate: Any, lib: str) -> str:
    """The dotted Python name of a crate's extension module: maturin's module-name, else the lib name."""
    if crate is not None:
        for ext in manifests.extensions:
            manifest_dir = ext.dir
            if ext.manifest:
                manifest_dir = "/".join(p for p in (ext.dir, ext.manifest.rsplit("/", 1)[0] if "/" in ext.manifest
                                                      else "") if p)
            if manifest_dir == crate.dir:
                return ext.module
    return lib


STEP = Step(name="ffi", extract=extract_ffi, version="1")
