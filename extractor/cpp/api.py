"""Why a C/C++ symbol is or is not part of the system's API (``Node.api``).

In order, the first that holds:

- ``public: torch op <namespace>::<op>`` — registered as a torch operator's implementation;
- ``public: pybind11 <module>.<name>`` — bound to Python with pybind11 (a class: its Python name);
  ``public: nanobind <module>.<name>`` with nanobind (a submodule's: ``core.fft.fft``); ``public: swig
  <module>.<name>`` wrapped by a SWIG module (:mod:`extractor.cpp.swig`);
- ``internal: anonymous namespace`` / ``internal: static function`` / ``internal: private member``;
- ``public: public header <path>`` — declared or defined in a public header: one under an
  ``include/`` directory, or one that another repository of the system includes;
- ``internal: not in a public header`` otherwise.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping

from extractor.cpp.ops import OpRegistration, PyBinding
from extractor.cpp.symbols import AGGREGATES, CALLABLE, DefinitionSite
from extractor.model import Edge, EdgeKind, Node, NodeKind
from extractor.naming import id_name

HEADER_SUFFIXES = frozenset({".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc"})
_CLASSIFIED = AGGREGATES | CALLABLE | {NodeKind.ENUM}


def public_headers(paths: Iterable[str], include_edges: Iterable[Edge], sources: Mapping[str, str]) -> set[str]:
    """Headers under an ``include/`` directory, and headers another source of the system includes."""
    found = {p for p in paths if posixpath.splitext(p)[1] in HEADER_SUFFIXES and "include" in p.split("/")[:-1]}
    for e in include_edges:
        if e.kind is EdgeKind.INCLUDES:
            src, dst = id_name(e.source), id_name(e.target)
            if sources.get(src, "") != sources.get(dst, ""):
                found.add(dst)
    return found


def classify_api(nodes: Iterable[Node], sites: Iterable[DefinitionSite], ops: Iterable[OpRegistration],
                 bindings: Iterable[PyBinding], public: set[str]) -> dict[str, str]:
    """node id -> api reason, for functions, methods, kernels, classes, structs, unions, enums."""
    reasons: dict[str, str] = {}
    for r in sorted(ops):
        if r.target and (r.kind == "impl" or r.function):
            reasons.setdefault(r.target, f"public: torch op {r.library}::{r.op}")
    for b in sorted(bindings):
        if b.target:
            reasons.setdefault(b.target, f"public: {b.mechanism} {b.python_name}")
    paths: dict[str, set[str]] = {}
    for s in sites:
        paths.setdefault(s.node, set()).add(s.path)
    for n in nodes:
        if n.id in reasons or n.kind not in _CLASSIFIED:
            continue
        if "(anonymous namespace@" in n.id:
            reasons[n.id] = "internal: anonymous namespace"
        elif "private" in n.tags:
            reasons[n.id] = "internal: private member"
        elif n.kind is NodeKind.FUNCTION and "static" in n.tags:
            reasons[n.id] = "internal: static function"
        elif exposed := sorted(paths.get(n.id, set()) & public):
            reasons[n.id] = f"public: public header {exposed[0]}"
        else:
            reasons[n.id] = "internal: not in a public header"
    return reasons
