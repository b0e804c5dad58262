"""Symbols across two releases of one system: what was added, removed, moved and renamed (drift).

Informational: whether a change breaks callers is the API kind's verdict (typed rules over the
graph's parameters and ``api`` fields), so nothing here is marked breaking and nothing is counted
twice. Attributes (fields, properties, module constants) are many and move together: they are
folded into one row per class or module that kept existing (``attributes``), the names listed.
"""

from __future__ import annotations

import bisect
import collections
import dataclasses
from collections.abc import Mapping, Sequence

from comparator.kind import Counts, EvidenceKind, Labels, Takeaway, plural
from comparator.kinds.symbols import render
from comparator.kinds.symbols.records import (AttributeChanges, SymbolChange, SymbolDrift, SymbolMove, SymbolRef,
                                              SymbolsRelease)
from extractor.evidence.read import Evidence
from extractor.model import EdgeKind, Node, NodeKind

CLASS_RENAME_OVERLAP = 0.6  # share of member names a removed and an added class must have in common
# Placeholders and containers whose coming and going says nothing an importer or linker sees.
SYMBOL_SKIP_KINDS = frozenset({NodeKind.EXTERNAL, NodeKind.NAMESPACE, NodeKind.FILE})
NAMES_PER_ROW = 50  # attribute names listed per class or module; the counts keep them all


@dataclasses.dataclass(frozen=True, slots=True)
class SymbolSide:
    nodes: Mapping[str, Node]  # id -> node, placeholders and containers left out
    modules: Mapping[str, str]  # file path -> module qualname
    children: Mapping[str, set[str]]  # container id -> names of the symbols it contains
    containers: Mapping[str, str]  # symbol id -> its container's id


class SymbolsKind(EvidenceKind[SymbolSide, None, SymbolsRelease]):
    key = "symbols"
    title = "Symbols"
    release_rank = 4  # drift, after what breaks callers (API), the ABI, dashboards and layers

    def summarize(self, evidence: Evidence) -> SymbolSide:
        nodes = {n.id: n for n in evidence.graph.nodes if n.kind not in SYMBOL_SKIP_KINDS}
        modules = {n.path: n.qualname for n in evidence.graph.nodes if n.kind is NodeKind.MODULE and n.path}
        children: dict[str, set[str]] = collections.defaultdict(set)
        containers: dict[str, str] = {}
        for edge in evidence.graph.edges:
            if edge.kind is EdgeKind.CONTAINS and edge.target in nodes:
                children[edge.source].add(nodes[edge.target].name)
                containers.setdefault(edge.target, edge.source)
        return SymbolSide(nodes, modules, children, containers)

    def compare(self, a: SymbolSide, b: SymbolSide) -> None:
        return None  # drift between releases only: two systems' symbols are the graph kind's numbers

    def diff_release(self, a: SymbolSide, b: SymbolSide) -> SymbolsRelease:
        return SymbolsRelease(diff_symbols(a, b))

    def count(self, section: None, release: SymbolsRelease | None) -> Counts:
        """Only what is new: every change of a symbol the old release had (removed, moved, renamed,
        changed) is a row of the API kind, counted there."""
        if release is None:
            return Counts()
        sym = release.symbols
        return Counts(len(sym.added) + sum(r.added_count for r in sym.attributes), 0)

    def release_takeaways(self, section: None, release: SymbolsRelease, labels: Labels) -> list[Takeaway]:
        la, lb = labels
        sym = release.symbols
        attrs = sym.attributes
        text = (f"Symbol drift from {la} to {lb}: {plural(len(sym.added), 'symbol')} added, "
                f"{len(sym.removed):,} removed, {len(sym.moved):,} moved, {len(sym.renamed):,} renamed")
        if attrs:
            text += (f"; {plural(sum(r.added_count for r in attrs), 'attribute')} added and "
                     f"{sum(r.removed_count for r in attrs):,} removed in {plural(len(attrs), 'class or module', 'classes and modules')}"
                     " that kept existing")
        return [Takeaway(text + " (what breaks callers: the API changes).", "release-symbols")]

    def release_markdown(self, release: SymbolsRelease, la: str, lb: str) -> list[str]:
        return render.release_markdown(release, la, lb)

    def release_html(self, release: SymbolsRelease, la: str, lb: str) -> str:
        return render.release_html(release, la, lb)


def _symbol_ref(node: Node) -> SymbolRef:
    return SymbolRef(node.id, node.kind.value, node.name, node.signature, node.api, node.path, node.line)


def _symbol_change(node: Node, members: int) -> SymbolChange:
    return SymbolChange(node.id, node.kind.value, node.name, node.signature, node.api, node.path, node.line, members)


def _local_name(node: Node, module_of_path: Mapping[str, str]) -> str:
    """The qualified name inside its module (``Engine.step``), or the full qualname for C++."""
    module = module_of_path.get(node.path, "")
    if module and node.qualname.startswith(module + "."):
        return node.qualname[len(module) + 1:]
    return node.qualname


def diff_symbols(a: SymbolSide, b: SymbolSide) -> SymbolDrift:
    """Added, removed, moved and renamed symbols; attributes of surviving containers folded per container."""
    olds, news = a.nodes, b.nodes
    removed_ids = sorted(set(olds) - set(news))
    added_ids = sorted(set(news) - set(olds))
    moved: list[SymbolMove] = []
    renamed: list[SymbolMove] = []
    taken_a: set[str] = set()
    taken_b: set[str] = set()

    def pair(old_id: str, new_id: str, bucket: list[SymbolMove], how: str) -> None:
        old, new = olds[old_id], news[new_id]
        taken_a.add(old_id)
        taken_b.add(new_id)
        bucket.append(SymbolMove(_symbol_ref(old), _symbol_ref(new), how))

    # 1. same qualified name, another file (a module turned into a package, a header split)
    added_by_qualname: dict[tuple[NodeKind, str], list[str]] = collections.defaultdict(list)
    for i in added_ids:
        added_by_qualname[(news[i].kind, news[i].qualname)].append(i)
    for i in removed_ids:
        old = olds[i]
        hits = added_by_qualname.get((old.kind, old.qualname), [])
        if len(hits) == 1 and old.kind is not NodeKind.MODULE:
            pair(i, hits[0], moved, "same qualified name, other file")

    # 2. same local name, kind and signature in another module; unique on both sides
    def key(side: SymbolSide, i: str) -> tuple[NodeKind, str, str]:
        n = side.nodes[i]
        return (n.kind, _local_name(n, side.modules), n.signature)
    removed_keys = collections.Counter(key(a, i) for i in removed_ids if i not in taken_a)
    added_keys: dict[tuple[NodeKind, str, str], list[str]] = collections.defaultdict(list)
    for i in added_ids:
        if i not in taken_b:
            added_keys[key(b, i)].append(i)
    for i in removed_ids:
        if i in taken_a or olds[i].kind in (NodeKind.MODULE, NodeKind.METHOD, NodeKind.FILE, NodeKind.NAMESPACE):
            continue
        k = key(a, i)
        if removed_keys[k] == 1 and len(added_keys.get(k, [])) == 1:
            pair(i, added_keys[k][0], moved, "same name and signature, other module")
    # 3. renamed classes: same module, a large share of member names in common
    added_by_file: dict[tuple[NodeKind, str], list[str]] = collections.defaultdict(list)  # candidates per (kind, file)
    for j in added_ids:
        if news[j].kind in (NodeKind.CLASS, NodeKind.STRUCT):
            added_by_file[(news[j].kind, news[j].path)].append(j)
    for i in removed_ids:
        old = olds[i]
        if i in taken_a or old.kind not in (NodeKind.CLASS, NodeKind.STRUCT):
            continue
        mine = a.children.get(i, set())
        best, best_overlap = None, 0.0
        for j in added_by_file.get((old.kind, old.path), ()):
            if j in taken_b:
                continue
            theirs = b.children.get(j, set())
            if not mine or not theirs:
                continue
            overlap = len(mine & theirs) / len(mine | theirs)
            if overlap >= CLASS_RENAME_OVERLAP and overlap > best_overlap:
                best, best_overlap = j, overlap
        if best is not None:
            pair(i, best, renamed, f"same file, {best_overlap:.0%} of member names in common")
    # Members of a moved or renamed class moved with it: report the class, not each method.
    for old_parent, new_parent in [(r.from_.id, r.to.id) for r in moved + renamed]:
        for i in _with_prefix(removed_ids, old_parent + ".") + _with_prefix(removed_ids, old_parent + "::"):
            if i not in taken_a:
                j = new_parent + i[len(old_parent):]
                if j in news and j not in taken_b:
                    taken_a.add(i)
                    taken_b.add(j)
    # A symbol whose container went (or came) with it is reported through the container: the
    # methods of a removed class are one finding, not one per method.
    removed = _fold([i for i in removed_ids if i not in taken_a], a.containers, olds)
    added = _fold([i for i in added_ids if i not in taken_b], b.containers, news)
    attributes, folded = _attributes_by_container(removed, added, a, b)
    removed = [r for r in removed if r.id not in folded]
    added = [r for r in added if r.id not in folded]
    return SymbolDrift(
        added=tuple(added),
        removed=tuple(removed),
        moved=tuple(sorted(moved, key=lambda r: r.from_.id)),
        renamed=tuple(sorted(renamed, key=lambda r: r.from_.id)),
        attributes=attributes,
        added_by_kind=_by_kind(added, sum(r.added_count for r in attributes)),
        removed_by_kind=_by_kind(removed, sum(r.removed_count for r in attributes)),
    )


def _by_kind(rows: Sequence[SymbolChange], attributes: int) -> dict[str, int]:
    counts = collections.Counter(r.kind for r in rows)
    counts["attribute"] += attributes
    return dict(sorted((k, v) for k, v in counts.items() if v))


def _attributes_by_container(removed: Sequence[SymbolChange], added: Sequence[SymbolChange], a: SymbolSide,
                             b: SymbolSide) -> tuple[tuple[AttributeChanges, ...], set[str]]:
    """Attribute rows whose class or module lives on, folded into one row per container (and the
    ids so folded, no longer listed apart): a dataclass that gained three fields is one row naming them."""
    def by_container(rows: Sequence[SymbolChange], side: SymbolSide) -> dict[str, list[str]]:
        found: dict[str, list[str]] = collections.defaultdict(list)
        for row in rows:
            container = side.containers.get(row.id)  # None: a top-level symbol
            if row.kind == NodeKind.ATTRIBUTE.value and container is not None and container in side.nodes:
                folded.add(row.id)
                found[container].append(row.name)
        return found

    folded: set[str] = set()
    gone, came = by_container(removed, a), by_container(added, b)
    out = []
    for container in sorted({*gone, *came}):
        node = b.nodes[container] if container in b.nodes else a.nodes[container]
        names_added, names_removed = sorted(came.get(container, ())), sorted(gone.get(container, ()))
        out.append(AttributeChanges(container, node.kind.value, len(names_added), len(names_removed),
                                    tuple(names_added[:NAMES_PER_ROW]), tuple(names_removed[:NAMES_PER_ROW]),
                                    node.path, node.line))
    return tuple(out), folded


def _with_prefix(ids: list[str], prefix: str) -> list[str]:
    """The ids of a sorted list that start with ``prefix`` (one bisection, not a pass over all)."""
    start = bisect.bisect_left(ids, prefix)
    end = start
    while end < len(ids) and ids[end].startswith(prefix):
        end += 1
    return ids[start:end]


def _fold(ids: list[str], container: Mapping[str, str], nodes: Mapping[str, Node]) -> list[SymbolChange]:
    chosen = set(ids)
    members: collections.Counter[str] = collections.Counter()
    kept = []
    for i in ids:
        top, cursor, hops = None, container.get(i), 0
        while cursor is not None and hops < 64:  # hops: a malformed bundle must not loop forever
            if cursor in chosen:
                top = cursor
            cursor, hops = container.get(cursor), hops + 1
        if top is None:
            kept.append(i)
        else:
            members[top] += 1
    return [_symbol_change(nodes[i], members[i]) for i in kept]


KIND = SymbolsKind()
__all__ = ["KIND", "SymbolsKind", "diff_symbols"]
