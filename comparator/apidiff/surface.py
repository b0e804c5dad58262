"""One release's API surface, read from its graph: members (inherited ones too), bases, re-exports, uses."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from extractor.model import Binding, Edge, EdgeKind, Node, NodeKind
from extractor.naming import Lineage

# Placeholders and containers whose coming and going is not an API change of their own.
SKIPPED_KINDS = frozenset({NodeKind.EXTERNAL, NodeKind.FILE, NodeKind.NAMESPACE})
# What callers do with a symbol, counted as its uses.
USE_EDGES = frozenset({EdgeKind.CALLS, EdgeKind.INHERITS, EdgeKind.IMPORTS, EdgeKind.ALIASES, EdgeKind.BINDS,
                       EdgeKind.LAUNCHES, EdgeKind.IMPLEMENTS})
# The kinds a caller tells apart (griffe's: module, class, function, attribute).
GROUPS = {NodeKind.MODULE: "module", NodeKind.CLASS: "class", NodeKind.STRUCT: "class", NodeKind.UNION: "class",
          NodeKind.ENUM: "class", NodeKind.TRAIT: "class", NodeKind.INTERFACE: "class",
          NodeKind.FUNCTION: "function", NodeKind.METHOD: "function", NodeKind.KERNEL: "function",
          NodeKind.ATTRIBUTE: "attribute"}
CLASS_KINDS = frozenset(k for k, g in GROUPS.items() if g == "class")


def is_public(node: Node) -> bool:
    return node.api.startswith("public")


def is_reexport(node: Node) -> bool:
    return node.kind is NodeKind.ATTRIBUTE and node.value_kind == "re-export"


class Surface:
    def __init__(self, nodes: Iterable[Node], edges: Iterable[Edge]) -> None:
        self.nodes: dict[str, Node] = {n.id: n for n in nodes if n.kind not in SKIPPED_KINDS}
        # module -> name -> the statement binding it, for names with no node of their own (imports ...)
        self.bound: dict[str, dict[str, Binding]] = {nid: {b.name: b for b in n.bound}
                                                     for nid, n in self.nodes.items() if n.bound}
        self.everything: set[str] = set(self.nodes)
        self.parent: dict[str, str] = {}
        self.children: dict[str, dict[str, str]] = defaultdict(dict)
        bases: dict[str, list[str]] = defaultdict(list)
        self.aliases: dict[str, str] = {}
        self.uses: Counter[str] = Counter()
        # (proto message or rpc, line) -> the types its field or rpc on that line names (resolved by the extractor)
        self.proto_uses: dict[tuple[str, int], list[str]] = defaultdict(list)
        contains, inherits, aliases, uses = EdgeKind.CONTAINS, EdgeKind.INHERITS, EdgeKind.ALIASES, EdgeKind.USES
        imports: list[str] = []
        importers: list[str] = []
        for e in edges:
            kind = e.kind
            if kind is contains:
                # one container per node; the smallest id when a graph states two (deterministic)
                if e.target in self.nodes and e.source < self.parent.get(e.target, "\uffff"):
                    self.parent[e.target] = e.source
            elif kind is inherits:
                bases[e.source].append(e.target)
            elif kind is aliases:
                source = self.nodes.get(e.source)
                if source is not None and source.kind is NodeKind.MODULE:
                    imports.append(e.target)  # the module imports that symbol under its name
                    importers.append(e.source)
                else:
                    self.aliases[e.source] = min(e.target, self.aliases.get(e.source, e.target))
            elif kind is uses and e.source.startswith("proto:"):
                self.proto_uses[(e.source, e.line)].append(e.target)
            if kind in USE_EDGES:
                self.uses[e.target] += 1
        for child, parent in self.parent.items():
            self.children[parent][self.nodes[child].name] = child
        # module -> name -> symbol it imports under that name (not API: where a name still leads)
        self.imported: dict[str, dict[str, str]] = defaultdict(dict)
        for module, target in sorted(zip(importers, imports)):
            if target in self.nodes:
                self.imported[module].setdefault(self.nodes[target].name, target)
        for listed in bases.values():
            listed.sort()  # the graph does not keep the written order of bases
        self.bases = dict(bases)
        self.lineage = Lineage(self.bases)
        self._members: dict[str, dict[str, str]] = {}
        self.exported_as: dict[str, list[str]] = defaultdict(list)  # symbol -> re-exports naming it
        for alias, target in sorted(self.aliases.items()):
            self.exported_as[target].append(alias)

    def resolve(self, nid: str) -> str | None:
        """What a node stands for: itself, or for a re-export the node it names (None: outside)."""
        seen = set()
        while nid in self.nodes and is_reexport(self.nodes[nid]) and nid not in seen:
            seen.add(nid)
            nid = self.aliases.get(nid, "")
        return nid if nid in self.nodes else None

    def member(self, container: str, name: str) -> str | None:
        """``name`` in a module (its own names, then what it imports) or a class (through its MRO)."""
        if self.nodes[container].kind in CLASS_KINDS:
            return self.members(container).get(name)
        found = self.children.get(container, {}).get(name)
        return found if found is not None else self.imported.get(container, {}).get(name)

    def group(self, node: Node) -> str | None:
        """The kind a caller sees; a re-export has its target's (None when the target is outside)."""
        if is_reexport(node):
            target = self.nodes.get(self.aliases.get(node.id, ""))
            return None if target is None or is_reexport(target) else GROUPS.get(target.kind)
        return GROUPS.get(node.kind)

    def members(self, cls: str) -> dict[str, str]:
        """Name -> node id of a class's members, inherited ones included (the nearest in its MRO)."""
        found = self._members.get(cls)
        if found is None:
            mro = self.lineage.mro(cls)
            if len(mro) > 1 and self.lineage.mro(mro[1]) == mro[1:]:
                found = {**self.members(mro[1]), **self.children.get(cls, {})}  # single inheritance: reuse
            else:
                found = {}
                for base in reversed(mro):
                    found.update(self.children.get(base, {}))
            self._members[cls] = found
        return found

    def ancestors(self, cls: str) -> set[str]:
        return set(self.lineage.mro(cls)[1:])

    def use_count(self, nid: str) -> int:
        count = self.uses.get(nid, 0)
        node = self.nodes.get(nid)
        if node is not None and node.name in ("__init__", "__new__") and nid in self.parent:
            count += self.uses.get(self.parent[nid], 0)  # calling the class calls its constructor
        return count
