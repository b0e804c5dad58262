"""Every change of the API between two releases, computed over the graph's typed nodes and edges."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

from comparator.apidiff import proto
from comparator.apidiff.normalize import same_annotation
from comparator.apidiff.records import RULES, Breakage, BreakageKind
from comparator.apidiff.signatures import Change, parameter_changes, removed_overloads, render_params, return_change
from comparator.apidiff.surface import CLASS_KINDS, Surface, is_public, is_reexport
from extractor.model import Binding, Edge, Location, Node, NodeKind
from extractor.python.api import REEXPORTED

_CONSTRUCTORS = {"__new__": "__init__", "__init__": "__new__"}
# Why a change that a rule considered is not breaking although the symbol is public.
_HARMLESS = {
    BreakageKind.PARAMETER_REMOVED: "a *args/**kwargs of the right kind takes it now",
    BreakageKind.PARAMETER_KIND_CHANGED: "calls made the old way still bind",
    BreakageKind.RETURN_CHANGED: "the new type is narrower, or the function returned None",
    BreakageKind.OVERLOAD_REMOVED: "the new signature still accepts calls shaped like it",
    BreakageKind.ATTRIBUTE_RETYPED: "the annotation was dropped, not changed",
    BreakageKind.BINDING_CHANGED: RULES[BreakageKind.BINDING_CHANGED],
}


def find_breakages(old_nodes: Iterable[Node], old_edges: Iterable[Edge], new_nodes: Iterable[Node],
                   new_edges: Iterable[Edge]) -> tuple[Breakage, ...]:
    """The API changes from the old graph to the new one, each breaking or not, sorted by path.

    Language-agnostic: a symbol's ``api`` says whether it is public ("public: ..."); only a change
    of a public symbol that a rule calls breaking is breaking, everything else is listed as changed.
    """
    diff = _Diff(Surface(old_nodes, old_edges), Surface(new_nodes, new_edges))
    found = [*diff.symbols(), *diff.inherited()]
    return tuple(sorted(found, key=lambda b: (b.path, b.kind.value, b.subject)))


class _Diff:
    def __init__(self, old: Surface, new: Surface) -> None:
        self.old, self.new = old, new
        self.compared: set[tuple[str, str]] = set()
        self.places: dict[str, str | None] = {}

    def symbols(self) -> Iterator[Breakage]:
        old, new = self.old, self.new
        for nid in sorted(old.nodes):
            before = old.nodes[nid]
            where = self.counterpart(nid)
            if where is not None:
                yield from self.compare(before, new.nodes[where], self.reached_as(before, new.nodes[where]))
                continue
            parent = old.parent.get(nid)
            if parent is not None and parent in old.nodes:
                container = self.counterpart(parent)
                if container is None or old.group(old.nodes[parent]) != new.group(new.nodes[container]):
                    continue  # reported once, through its container (removed, or now another kind)
                binding = new.bound.get(container, {}).get(before.name)
                if binding is not None and binding.target in new.nodes:
                    # imported from elsewhere in the system: compared as what it names (griffe's alias rule)
                    yield from self.compare(before, new.nodes[binding.target], before.qualname)
                    continue
                if binding is not None:
                    yield self.rebound(before, new.nodes[container], binding)
                    continue
            yield self.removed(before, before.qualname, nid)

    def counterpart(self, nid: str) -> str | None:
        """Where an old symbol is in the new release: the same id; else the same name in the new
        place of its container (a class now re-exported from a package, a method now inherited);
        else what a surviving re-export of it names now (``pkg.X`` moved out of ``pkg._impl``)."""
        if nid in self.places:
            return self.places[nid]
        old, new = self.old, self.new
        self.places[nid] = None  # guards a cycle
        found = nid if nid in new.nodes else None
        if found is None:
            # The same name in the new place of its container; a module's own name may now be one it
            # imports (``vllm.config.LoRAConfig`` defined in vllm.config.lora, imported by vllm.config).
            parent = old.parent.get(nid)
            container = self.counterpart(parent) if parent in old.nodes else None
            container = new.resolve(container) if container is not None else None
            if container is not None:
                name = old.nodes[nid].name
                found = new.member(container, name)
                if found is None and name in _CONSTRUCTORS:  # a NamedTuple's __new__ became an __init__
                    found = new.member(container, _CONSTRUCTORS[name])
                if found is None and proto.is_proto(old.nodes[nid]):  # a field or enum value renamed
                    found = proto.renamed(old.nodes[nid], old, new, container)
        if found is None and old.nodes[nid].api.startswith(REEXPORTED):
            for alias in old.exported_as.get(nid, ()):
                if alias in new.nodes and (target := new.resolve(alias)) is not None and target != nid:
                    found = target
                    break
        self.places[nid] = found
        return found

    def record(self, before: Node, after: Node | None, change: Change, path: str, why: str = "") -> Breakage:
        """The row of one change; ``why`` (for a public symbol) says which case of its rule applied."""
        kind, subject, was, now, rule_breaks = change
        public = is_public(before)
        if not public:
            why = f"not public API ({before.api or 'no api recorded'})"
        elif not why:
            why = RULES[kind] if rule_breaks else _HARMLESS.get(kind, "no caller can tell")
        return Breakage(path, kind, subject, was, now, public and rule_breaks, why,
                        Location(before.path, before.line), Location(after.path, after.line) if after else None,
                        self.old.use_count(before.id), (after or before).id, before.language, before.id)

    def removed(self, before: Node, path: str, nid: str) -> Breakage:
        if proto.is_proto(before):
            parent = self.old.parent.get(before.id)
            container = self.counterpart(parent) if parent in self.old.nodes else None
            found = proto.removed(before, self.new, container)
            if found is not None:
                (kind, subject, was, now, breaks, why), holder = found
                record = self.record(before, None, (kind, subject, was, now, breaks), path, why)
                return dataclasses.replace(record, symbol=nid, new_location=Location(holder.path, holder.line)
                                           if holder is not None else None)  # where it is (to be) reserved
        kind = BreakageKind.ATTRIBUTE_REMOVED if before.kind is NodeKind.ATTRIBUTE and not is_reexport(before) \
            else BreakageKind.OBJECT_REMOVED
        return dataclasses.replace(self.record(before, None, (kind, "", before.kind.value, "", True), path), symbol=nid)

    def rebound(self, before: Node, module: Node, binding: Binding) -> Breakage:
        """A name with no symbol of its own in the new release that its module still binds (``try:
        import x / except ImportError: x = None`` now plain ``import x``): what binds it changed,
        reading it works. What an outside import or a loop binds is not known: no kind is compared."""
        record = self.record(before, None, (BreakageKind.BINDING_CHANGED, "", before.kind.value,
                                            f"{binding.form} (line {binding.line})", False), before.qualname)
        return dataclasses.replace(record, new_location=Location(module.path, binding.line), symbol=before.id)

    def reached_as(self, before: Node, after: Node) -> str:
        """The path callers use for what ``before`` became: a subclass's member now inherited is still
        reached as the subclass's (``Sub.forward``, now ``Base.forward``), a module's name now imported
        from elsewhere as the module's; otherwise the new symbol's own path."""
        old, new = self.old, self.new
        holder = old.parent.get(before.id)
        moved = self.counterpart(holder) if holder in old.nodes else None
        container = new.resolve(moved) if moved is not None else None
        parent = new.parent.get(after.id)
        if container is None or parent == container:
            return after.qualname
        if new.nodes[container].kind in CLASS_KINDS and parent in new.ancestors(container):
            return f"{new.nodes[container].qualname}.{after.name}"
        if new.nodes[container].kind is NodeKind.MODULE \
                and new.imported.get(container, {}).get(before.name) == after.id:
            return f"{new.nodes[container].qualname}.{before.name}"
        return after.qualname

    def compare(self, before: Node, after: Node, path: str | None = None) -> Iterator[Breakage]:
        """Changes from ``before`` to ``after``, reported under ``path`` (the new symbol's by default)."""
        if (before.id, after.id) in self.compared:
            return
        self.compared.add((before.id, after.id))
        old, new = self.old, self.new
        path = path or after.qualname
        was, now = old.group(before), new.group(after)
        if was is None or now is None:
            return  # a re-export of an outside name: nothing here to compare
        if was != now:
            yield self.record(before, after, (BreakageKind.OBJECT_KIND_CHANGED, "", was, now, True), path)
            return
        if proto.is_proto(before) and proto.is_proto(after):
            for kind, subject, old_text, new_text, breaks, why in proto.proto_changes(before, after, old, new):
                yield self.record(before, after, (kind, subject, old_text, new_text, breaks), path, why)
            return
        if is_reexport(before) or is_reexport(after):
            # What the names stand for is compared (griffe compares an alias by its target) unless it
            # is one symbol on both sides, which its own id covers.
            was_id, now_id = old.resolve(before.id), new.resolve(after.id)
            if was_id is not None and now_id is not None and was_id != now_id:
                yield from self.compare(old.nodes[was_id], new.nodes[now_id])
            return
        for change in self.changes(before, after, was):
            yield self.record(before, after, change, path)

    def changes(self, before: Node, after: Node, group: str) -> list[Change]:
        found: list[Change] = []
        if group == "function":
            params = (before.params, after.params)
            if before.name != after.name and {before.name, after.name} == set(_CONSTRUCTORS):
                params = (before.params[1:], after.params[1:])  # _cls of __new__ is self of __init__
            found += parameter_changes(*params)
            if (returned := return_change(before.returns, after.returns)) is not None:
                found.append(returned)
            for sig, breaks in removed_overloads(before.overloads, after.overloads, after.params):
                found.append((BreakageKind.OVERLOAD_REMOVED, render_params(sig.params), f"line {sig.line}", "", breaks))
        elif group == "class":
            kept = self.new.ancestors(after.id)
            # A base is kept when it is still an ancestor: the same, where it lives now, or one of the
            # same name (a class moved to another module: its removal under the old name is its own row).
            names = {k.rsplit(".", 1)[-1].rsplit("::", 1)[-1] for k in kept}
            gone = [a for a in sorted(self.old.ancestors(before.id)) if a not in kept and not (
                a in self.old.nodes and (moved := self.counterpart(a)) is not None and self.new.resolve(moved) in kept)
                and a.rsplit(".", 1)[-1].rsplit("::", 1)[-1] not in names]
            if gone:
                found.append((BreakageKind.BASE_REMOVED, ", ".join(g.split(":", 1)[-1] for g in gone), "", "", True))
        elif group == "attribute" and before.annotation and before.annotation != after.annotation:
            if not after.annotation:
                found.append((BreakageKind.ATTRIBUTE_RETYPED, "", before.annotation, "(no annotation)", False))
            elif not same_annotation(before.annotation, after.annotation):
                found.append((BreakageKind.ATTRIBUTE_RETYPED, "", before.annotation, after.annotation, True))
        return found

    def inherited(self) -> Iterator[Breakage]:
        """Members a public class had through its bases: gone, or now another definition."""
        old, new = self.old, self.new
        for cid in sorted(old.nodes):
            cls = old.nodes[cid]
            if cls.kind not in CLASS_KINDS or not is_public(cls):
                continue
            where = new.resolve(cid) if cid in new.nodes else None
            if where is None or new.nodes[where].kind not in CLASS_KINDS:
                continue
            lineage = old.lineage.mro(cid)
            if where == cid and new.lineage.mro(cid) == lineage and all(
                    old.children.get(b) == new.children.get(b) for b in lineage[1:]) \
                    and old.children.get(cid, {}).keys() == new.children.get(cid, {}).keys():
                continue  # same bases with the same members: what changed in them is reported under their ids
            now = new.members(where)
            for name, mid in sorted(old.members(cid).items()):
                if old.parent.get(mid) == cid:
                    continue  # its own member: compared under its own id
                target = now.get(name)
                if target is None:
                    if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                        continue
                    # The member is public through this public class, whatever its defining base says.
                    record = self.removed(old.nodes[mid], f"{cls.qualname}.{name}", f"{cid}.{name}")
                    yield dataclasses.replace(record, breaking=True, why=RULES[record.kind])
                elif target != mid:
                    yield from self.compare(old.nodes[mid], new.nodes[target], f"{cls.qualname}.{name}")
