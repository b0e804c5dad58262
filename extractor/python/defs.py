"""One module's definitions and attributes as graph nodes, from its scanned facts (extractor.python.scan).

- A function or method carries its parameters as :class:`~extractor.model.Parameter` records, its
  return annotation and its decorators; ``signature`` is only a display string derived from them
  (shortened past :data:`~extractor.python.expr.SIGNATURE_MAX` characters; ``params`` never
  are), written by the scanner.
- ``@overload`` variants go to the implementation's ``overloads``, each with its own line; a name
  with only overloads (a stub) is its first variant.
- A property (``@property``, ``@cached_property``) is an ``attribute`` node (its annotation is the
  getter's return annotation); its setter and deleter are part of it.
- Of two definitions of one name, a later one replaces the earlier when neither is conditional
  (Python runs both, the later binding wins); otherwise the first stands. The other definition
  sites go to ``sites``.
- Attributes: module-level names, class-body names and ``self.x`` set in ``__init__``-like methods,
  as ``attribute`` nodes with their annotation and value kind, tagged ``module-attribute``,
  ``class-attribute`` or ``instance-attribute``. Names starting with ``_`` are left out (they are
  nobody's API), except special ``__x__`` names of classes and modules; a definition always wins
  over an attribute of the same name.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict

from extractor.context import SourceFile
from extractor.model import Diagnostic, Edge, EdgeKind, Location, Node, NodeKind, Parameter, Signature, amend
from extractor.naming import py_id
from extractor.python.expr import to_params
from extractor.python.facts import CLASS, INSTANCE, MODULE, Attribute, Param, PythonFacts
from extractor.python.resolve import parent_qual

_KINDS = {"class": NodeKind.CLASS, "function": NodeKind.FUNCTION, "method": NodeKind.METHOD}
_ATTRIBUTE_TAGS = {MODULE: "module-attribute", CLASS: "class-attribute", INSTANCE: "instance-attribute"}


@dataclasses.dataclass(slots=True)
class PyGraph:
    """The Python graph while it is built: nodes, edges, outside names, members, diagnostics, stats."""

    nodes: dict[str, Node] = dataclasses.field(default_factory=dict)
    # ``contains`` edges apart from the others: four passes read only them (containers, members by name).
    # Lists, repeats and all: the output keeps one edge per key (graph._first_sites), which a set
    # of 110,000 edges on vLLM would only do again.
    contains: list[Edge] = dataclasses.field(default_factory=list)
    edges: list[Edge] = dataclasses.field(default_factory=list)  # every other kind
    # ``imports`` of protoc's generated modules, to the .proto files of the system: no node of this graph
    generated: list[Edge] = dataclasses.field(default_factory=list)
    external: dict[str, Node] = dataclasses.field(default_factory=dict)
    # a re-export node -> what it names (its ``aliases`` edge), for the API rules without a pass over the edges
    reexported: dict[str, str] = dataclasses.field(default_factory=dict)
    members: dict[str, dict[str, str]] = dataclasses.field(default_factory=lambda: defaultdict(dict))
    diagnostics: list[Diagnostic] = dataclasses.field(default_factory=list)
    stats: Counter[str] = dataclasses.field(default_factory=Counter)

    def ext_node(self, dotted: str) -> str:
        nid = py_id(dotted)
        if nid not in self.nodes and nid not in self.external:
            self.external[nid] = Node(nid, NodeKind.EXTERNAL, dotted.rsplit(".", 1)[-1], dotted, "python")
        return nid


@dataclasses.dataclass(slots=True)
class ClassFacts:
    """What the constructor and enum rules need of a class: its written bases and decorators."""

    id: str
    scope: str  # qualname of the scope the class statement runs in ("" at module level)
    bases: tuple[str, ...]  # as written
    decorators: tuple[str, ...]  # dotted names as written
    decorator_keywords: tuple[dict[str, str], ...]
    keywords: dict[str, str]
    line: int


@dataclasses.dataclass(slots=True)
class ModuleDefs:
    nodes: dict[str, Node] = dataclasses.field(default_factory=dict)
    edges: list[Edge] = dataclasses.field(default_factory=list)
    members: dict[str, dict[str, str]] = dataclasses.field(default_factory=lambda: defaultdict(dict))
    classes: dict[str, ClassFacts] = dataclasses.field(default_factory=dict)
    bindings: dict[str, list[Attribute]] = dataclasses.field(default_factory=lambda: defaultdict(list))


class Signatures:
    """Parameters by the facts they come from, each list made once per system (vLLM 0.10.2's 22,618
    definitions have 7,309 distinct parameter lists)."""

    def __init__(self) -> None:
        self._known: dict[tuple[Param, ...], tuple[Parameter, ...]] = {}

    def of(self, raw: tuple[Param, ...]) -> tuple[Parameter, ...]:
        found = self._known.get(raw)
        if found is None:
            found = self._known[raw] = to_params(raw)
        return found


class DefinitionsAhead:
    """The Python step's ``ahead`` (extractor.model.Step): each module's definitions placed while
    the pool still scans, with the module name they were placed under (the step places a module
    again if it names it otherwise)."""

    def __init__(self) -> None:
        self._signatures = Signatures()

    def __call__(self, path: str, module: str, facts: PythonFacts) -> tuple[str, ModuleDefs]:
        return module, place_definitions(module, path, facts, self._signatures)


def place_definitions(module: str, path: str, facts: PythonFacts,
                      signatures: Signatures | None = None) -> ModuleDefs:
    """Nodes, ``contains`` edges and members of one module's classes, functions and methods, from
    the facts of the file at ``path`` (``signatures``: shared by the modules of a system)."""
    out = ModuleDefs()
    signatures = signatures or Signatures()
    mid = py_id(module)
    conditional: dict[str, bool] = {}
    overloads: dict[str, list[Signature]] = defaultdict(list)
    stubs: dict[str, Node] = {}
    for d in facts.defs:
        kind, qual, line, doc, tags, decorators = d.kind, d.qualname, d.line, d.doc, d.tags, d.decorators
        qualname = f"{module}.{qual}"
        nid = py_id(qualname)
        short = qual.rsplit(".", 1)[-1]
        returns = d.returns
        params, signature = signatures.of(d.params), d.signature
        if kind == "class":
            signature = ""
        if "overload" in tags:
            overloads[nid].append(Signature(params, returns, path, line))
            if nid not in stubs:
                stubs[nid] = _node(nid, kind, short, qualname, path, line, doc, tags, signature, params, returns,
                                   decorators)
            continue
        if nid in out.nodes and any(d in (f"{short}.setter", f"{short}.deleter") for d in decorators):
            continue  # a property's accessor: part of the property
        cond = d.conditional
        old = out.nodes.get(nid)
        if old is not None and (cond or conditional[nid]):
            amend(old, "sites", (*old.sites, Location(path, line)))
            continue
        node = _node(nid, kind, short, qualname, path, line, doc, tags, signature, params, returns, decorators)
        if old is not None:
            # A later unconditional definition rebinds the name: the earlier one's members go with it.
            prefix = nid + "."
            gone = {k for k in out.nodes if k.startswith(prefix)}
            for k in gone:
                del out.nodes[k]
                out.classes.pop(k, None)
                out.members.pop(k, None)
            for names in out.members.values():
                for key in [key for key, value in names.items() if value in gone]:
                    del names[key]
            amend(node, "sites", (*old.sites, Location(old.path, old.line)))
        conditional[nid] = cond
        out.nodes[nid] = node
        scope = parent_qual(qual)
        parent = py_id(f"{module}.{scope}") if scope else mid
        out.edges.append(Edge(parent, nid, EdgeKind.CONTAINS, path, line))
        out.members[parent][short] = nid
        if kind == "class":
            out.classes[nid] = ClassFacts(nid, scope, d.bases, decorators,
                                          d.decorator_keywords or ({},) * len(decorators), d.keywords, line)
    for nid, variants in overloads.items():
        if nid not in out.nodes:  # only overloads (a stub): the first variant stands for the name
            out.nodes[nid] = stubs[nid]
            qual = stubs[nid].qualname[len(module) + 1:]
            parent = py_id(f"{module}.{parent_qual(qual)}") if parent_qual(qual) else mid
            out.edges.append(Edge(parent, nid, EdgeKind.CONTAINS, path, stubs[nid].line))
            out.members[parent][stubs[nid].name] = nid
        amend(out.nodes[nid], "overloads", tuple(variants))
    return out


def _node(nid: str, kind: str, short: str, qualname: str, path: str, line: int, doc: str,
          tags: tuple[str, ...], signature: str, params: tuple[Parameter, ...], returns: str,
          decorators: tuple[str, ...]) -> Node:
    if "property" in tags and kind == "method":
        return Node(nid, NodeKind.ATTRIBUTE, short, qualname, "python", path, line, doc, "", tuple(tags),
                    decorators=tuple(decorators), annotation=returns, value_kind="property")
    return Node(nid, _KINDS[kind], short, qualname, "python", path, line, doc, signature, tuple(tags),
                params=params, returns=returns, decorators=tuple(decorators))


def place_attributes(module: str, file: SourceFile, facts: PythonFacts, defs: ModuleDefs,
                     exports: frozenset[str]) -> list[Node]:
    """Attribute nodes of one module (module level, class bodies, instances), after its definitions.

    Class-body bindings of every name are also kept in ``defs.bindings`` (class id -> facts): the
    generated-constructor rules read private fields too.
    """
    mid = py_id(module)
    added: list[Node] = []
    for attr in facts.attrs:
        scope, name, line, where, annotation, kind = (attr.scope, attr.name, attr.line, attr.where, attr.annotation,
                                                      attr.value_kind)
        parent = mid if where == MODULE else py_id(f"{module}.{scope}")
        if where != MODULE:
            if parent not in defs.classes:
                continue
            if where == CLASS:
                defs.bindings[parent].append(attr)
        if not _kept(name, where, exports):
            continue
        nid = f"{parent}.{name}"
        existing = defs.nodes.get(nid)
        if existing is not None:
            if existing.kind is NodeKind.ATTRIBUTE and annotation and not existing.annotation \
                    and existing.value_kind != "property":
                amend(existing, "annotation", annotation)
            continue
        qualname = f"{module}.{scope}.{name}" if scope else f"{module}.{name}"
        node = Node(nid, NodeKind.ATTRIBUTE, name, qualname, "python", file.path, line,
                    tags=(_ATTRIBUTE_TAGS[where],), annotation=annotation, value_kind=kind)
        defs.nodes[nid] = node
        defs.edges.append(Edge(parent, nid, EdgeKind.CONTAINS, file.path, line))
        added.append(node)
    return added


def _kept(name: str, where: str, exports: frozenset[str]) -> bool:
    if name in exports:
        return True
    if name.startswith("__") and name.endswith("__"):
        return where != INSTANCE and name != "__all__"
    return not name.startswith("_")
