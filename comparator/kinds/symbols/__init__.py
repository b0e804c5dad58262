"""Symbols across two releases of one system: what was added, removed, moved and renamed (drift).

Informational: whether a change breaks callers is the API kind's verdict (typed rules over the
graph's parameters and ``api`` fields), so nothing here is marked breaking and nothing is counted
twice. Attributes (fields, properties, module constants) are many and move together: they are
folded into one row per class or module that kept existing (``attributes``), the names listed.
"""

from __future__ import annotations

import bisect
import collections
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from comparator.kind import Counts, EvidenceKind, Takeaway, loc, plural
from comparator.kinds.symbols import render
from extractor.evidence.read import Evidence
from extractor.model import EdgeKind, Node, NodeKind

CLASS_RENAME_OVERLAP = 0.6  # share of member names a removed and an added class must have in common
# Placeholders and containers whose coming and going says nothing an importer or linker sees.
SYMBOL_SKIP_KINDS = frozenset({NodeKind.EXTERNAL, NodeKind.NAMESPACE, NodeKind.FILE})
ROW_KINDS = ("added", "removed", "moved", "renamed")
NAMES_PER_ROW = 50  # attribute names listed per class or module; the counts keep them all


class SymbolSide(NamedTuple):
    nodes: dict[str, Node]  # id -> node, placeholders and containers left out
    modules: dict[str, str]  # file path -> module qualname
    children: dict[str, set[str]]  # container id -> names of the symbols it contains
    containers: dict[str, str]  # symbol id -> its container's id


class SymbolsKind(EvidenceKind):
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

    def diff_release(self, a: SymbolSide, b: SymbolSide) -> dict[str, Any]:
        return {"symbols": diff_symbols(a, b)}

    def count(self, section: Any, release: Mapping[str, Any] | None) -> Counts:
        """Only what is new: every change of a symbol the old release had (removed, moved, renamed,
        changed) is a row of the API kind, counted there."""
        if not release:
            return Counts()
        sym = release["symbols"]
        return Counts(len(sym["added"]) + sum(r["added_count"] for r in sym["attributes"]), 0)

    def release_takeaways(self, section: Any, release: Mapping[str, Any], labels: Sequence[str]) -> list[Takeaway]:
        la, lb = labels
        sym = release["symbols"]
        attrs = sym["attributes"]
        text = (f"Symbol drift from {la} to {lb}: {plural(len(sym['added']), 'symbol')} added, "
                f"{len(sym['removed']):,} removed, {len(sym['moved']):,} moved, {len(sym['renamed']):,} renamed")
        if attrs:
            text += (f"; {plural(sum(r['added_count'] for r in attrs), 'attribute')} added and "
                     f"{sum(r['removed_count'] for r in attrs):,} removed in {plural(len(attrs), 'class or module', 'classes and modules')}"
                     " that kept existing")
        return [Takeaway(text + " (what breaks callers: the API changes).", "release-symbols")]

    release_markdown = staticmethod(render.release_markdown)
    release_html = staticmethod(render.release_html)


def _symbol_row(node: Node) -> dict[str, Any]:
    return {"id": node.id, "kind": node.kind.value, "name": node.name, "signature": node.signature,
            "api": node.api, **loc(node)}


def _local_name(node: Node, module_of_path: Mapping[str, str]) -> str:
    """The qualified name inside its module (``Engine.step``), or the full qualname for C++."""
    module = module_of_path.get(node.path, "")
    if module and node.qualname.startswith(module + "."):
        return node.qualname[len(module) + 1:]
    return node.qualname


def diff_symbols(a: SymbolSide, b: SymbolSide) -> dict[str, Any]:
    """Added, removed, moved and renamed symbols; attributes of surviving containers folded per container."""
    nodes = {"a": a.nodes, "b": b.nodes}
    modules = {"a": a.modules, "b": b.modules}
    removed_ids = sorted(set(nodes["a"]) - set(nodes["b"]))
    added_ids = sorted(set(nodes["b"]) - set(nodes["a"]))
    moved: list[dict[str, Any]] = []
    renamed: list[dict[str, Any]] = []
    taken_a: set[str] = set()
    taken_b: set[str] = set()

    def pair(old_id: str, new_id: str, bucket: list, how: str) -> None:
        old, new = nodes["a"][old_id], nodes["b"][new_id]
        taken_a.add(old_id)
        taken_b.add(new_id)
        bucket.append({"from": _symbol_row(old), "to": _symbol_row(new), "how": how})

    # 1. same qualified name, another file (a module turned into a package, a header split)
    added_by_qualname = collections.defaultdict(list)
    for i in added_ids:
        added_by_qualname[(nodes["b"][i].kind, nodes["b"][i].qualname)].append(i)
    for i in removed_ids:
        old = nodes["a"][i]
        hits = added_by_qualname.get((old.kind, old.qualname), [])
        if len(hits) == 1 and old.kind is not NodeKind.MODULE:
            pair(i, hits[0], moved, "same qualified name, other file")

    # 2. same local name, kind and signature in another module; unique on both sides
    def key(side: str, i: str) -> tuple:
        n = nodes[side][i]
        return (n.kind, _local_name(n, modules[side]), n.signature)
    removed_keys = collections.Counter(key("a", i) for i in removed_ids if i not in taken_a)
    added_keys = collections.defaultdict(list)
    for i in added_ids:
        if i not in taken_b:
            added_keys[key("b", i)].append(i)
    for i in removed_ids:
        if i in taken_a or nodes["a"][i].kind in (NodeKind.MODULE, NodeKind.METHOD, NodeKind.FILE, NodeKind.NAMESPACE):
            continue
        k = key("a", i)
        if removed_keys[k] == 1 and len(added_keys.get(k, [])) == 1:
            pair(i, added_keys[k][0], moved, "same name and signature, other module")
    # 3. renamed classes: same module, a large share of member names in common
    added_by_file = collections.defaultdict(list)  # candidates per (kind, file): no pass over all pairs
    for j in added_ids:
        if nodes["b"][j].kind in (NodeKind.CLASS, NodeKind.STRUCT):
            added_by_file[(nodes["b"][j].kind, nodes["b"][j].path)].append(j)
    for i in removed_ids:
        old = nodes["a"][i]
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
    for old_parent, new_parent in [(r["from"]["id"], r["to"]["id"]) for r in moved + renamed]:
        for i in _with_prefix(removed_ids, old_parent + ".") + _with_prefix(removed_ids, old_parent + "::"):
            if i not in taken_a:
                j = new_parent + i[len(old_parent):]
                if j in nodes["b"] and j not in taken_b:
                    taken_a.add(i)
                    taken_b.add(j)
    # A symbol whose container went (or came) with it is reported through the container: the
    # methods of a removed class are one finding, not one per method.
    removed = _fold([i for i in removed_ids if i not in taken_a], a.containers, nodes["a"])
    added = _fold([i for i in added_ids if i not in taken_b], b.containers, nodes["b"])
    attributes = _attributes_by_container(removed, added, a, b)
    removed = [r for r in removed if not r.pop("folded")]
    added = [r for r in added if not r.pop("folded")]
    return {
        "added": added,
        "removed": removed,
        "moved": sorted(moved, key=lambda r: r["from"]["id"]),
        "renamed": sorted(renamed, key=lambda r: r["from"]["id"]),
        "attributes": attributes,
        "added_by_kind": _by_kind(added, attributes, "added_count"),
        "removed_by_kind": _by_kind(removed, attributes, "removed_count"),
    }


def _by_kind(rows: list[dict[str, Any]], attributes: list[dict[str, Any]], key: str) -> dict[str, int]:
    counts = collections.Counter(r["kind"] for r in rows)
    counts["attribute"] += sum(r[key] for r in attributes)
    return dict(sorted((k, v) for k, v in counts.items() if v))


def _attributes_by_container(removed: list[dict[str, Any]], added: list[dict[str, Any]], a: SymbolSide,
                             b: SymbolSide) -> list[dict[str, Any]]:
    """Attribute rows whose class or module lives on, folded into one row per container (marked
    ``folded`` in place): a dataclass that gained three fields is one row naming them."""
    found: dict[str, dict[str, list[str]]] = collections.defaultdict(lambda: {"added": [], "removed": []})
    for rows, side, key in ((removed, a, "removed"), (added, b, "added")):
        for row in rows:
            container = side.containers.get(row["id"])
            row["folded"] = row["kind"] == NodeKind.ATTRIBUTE.value and container in side.nodes
            if row["folded"]:
                found[container][key].append(row["name"])
    out = []
    for container in sorted(found):
        node = b.nodes.get(container) or a.nodes[container]
        names = found[container]
        out.append({"id": container, "kind": node.kind.value, "added_count": len(names["added"]),
                    "removed_count": len(names["removed"]), "added": sorted(names["added"])[:NAMES_PER_ROW],
                    "removed": sorted(names["removed"])[:NAMES_PER_ROW], **loc(node)})
    return out


def _with_prefix(ids: list[str], prefix: str) -> list[str]:
    """The ids of a sorted list that start with ``prefix`` (one bisection, not a pass over all)."""
    start = bisect.bisect_left(ids, prefix)
    end = start
    while end < len(ids) and ids[end].startswith(prefix):
        end += 1
    return ids[start:end]


def _fold(ids: list[str], container: Mapping[str, str], nodes: Mapping[str, Node]) -> list[dict[str, Any]]:
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
    return [dict(_symbol_row(nodes[i]), members=members.get(i, 0)) for i in kept]


KIND = SymbolsKind()
__all__ = ["KIND", "SymbolsKind", "diff_symbols"]
