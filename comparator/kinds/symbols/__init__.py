"""Symbols across two releases of one system: added, removed, moved and renamed symbols, and
changed Python signatures, each saying whether it breaks users of the public API."""

from __future__ import annotations

import bisect
import collections
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from comparator.kind import Counts, EvidenceKind, Takeaway, loc, plural
from comparator.kinds.symbols import render
from comparator.kinds.symbols.breaking import breaking_reasons
from extractor.evidence import Evidence
from extractor.layers.records import apart_roles, role_by_path
from extractor.model import EdgeKind, Node, NodeKind

CLASS_RENAME_OVERLAP = 0.6  # share of member names a removed and an added class must have in common
# Placeholders and containers whose coming and going says nothing an importer or linker sees.
SYMBOL_SKIP_KINDS = frozenset({NodeKind.EXTERNAL, NodeKind.NAMESPACE, NodeKind.FILE})
ROW_KINDS = ("added", "removed", "moved", "renamed", "signatures")


class SymbolSide(NamedTuple):
    nodes: dict[str, Node]  # id -> node, placeholders and containers left out
    modules: dict[str, str]  # file path -> module qualname
    children: dict[str, set[str]]  # container id -> names of the symbols it contains
    containers: dict[str, str]  # symbol id -> its container's id
    apart_paths: set[str]  # files of layers set apart (tests, examples, benchmarks, build scripts)


class SymbolsKind(EvidenceKind):
    key = "symbols"
    title = "Symbols"
    release_rank = 0

    def summarize(self, evidence: Evidence) -> SymbolSide:
        nodes = {n.id: n for n in evidence.graph.nodes if n.kind not in SYMBOL_SKIP_KINDS}
        modules = {n.path: n.qualname for n in evidence.graph.nodes if n.kind is NodeKind.MODULE and n.path}
        children: dict[str, set[str]] = collections.defaultdict(set)
        containers: dict[str, str] = {}
        for edge in evidence.graph.edges:
            if edge.kind is EdgeKind.CONTAINS and edge.target in nodes:
                children[edge.source].add(nodes[edge.target].name)
                containers.setdefault(edge.target, edge.source)
        apart = apart_roles(evidence.layers)
        apart_paths = {p for p, role in role_by_path(evidence.layers).items() if role in apart}
        return SymbolSide(nodes, modules, children, containers, apart_paths)

    def diff_release(self, a: SymbolSide, b: SymbolSide) -> dict[str, Any]:
        return {"symbols": diff_symbols(a, b)}

    def count(self, section: Any, release: Mapping[str, Any] | None) -> Counts:
        if not release:
            return Counts()
        rows = [r for key in ROW_KINDS for r in release["symbols"][key]]
        return Counts(len(rows), sum(1 for r in rows if r["breaking"]))

    def release_takeaways(self, section: Any, release: Mapping[str, Any], labels: Sequence[str]) -> list[Takeaway]:
        la, lb = labels
        sym = release["symbols"]
        breaking_removed = sum(1 for r in sym["removed"] if r["breaking"])
        out = [Takeaway(f"From {la} to {lb}: {plural(len(sym['added']), 'symbol')} added, {len(sym['removed']):,} "
                        f"removed ({breaking_removed:,} public), {len(sym['moved']):,} moved, {len(sym['renamed']):,} "
                        f"renamed.", "release-symbols")]
        if sym["signatures"]:
            nb = sum(1 for r in sym["signatures"] if r["breaking"])
            out.append(Takeaway(f"{plural(len(sym['signatures']), 'Python signature')} changed; {nb:,} of them can "
                                f"break existing callers (a parameter removed, reordered or newly required).",
                                "release-signatures"))
        return out

    release_markdown = staticmethod(render.release_markdown)
    release_html = staticmethod(render.release_html)


def _public(node: Node) -> bool:
    qualname = node.qualname or node.id
    parts = re.split(r"\.|::", qualname)
    return not any(p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in parts) \
        and "<locals>" not in qualname


def _symbol_row(node: Node) -> dict[str, Any]:
    return {"id": node.id, "kind": node.kind.value, "name": node.name, "signature": node.signature,
            "public": _public(node), **loc(node)}


def _local_name(node: Node, module_of_path: Mapping[str, str]) -> str:
    """The qualified name inside its module (``Engine.step``), or the full qualname for C++."""
    module = module_of_path.get(node.path, "")
    if module and node.qualname.startswith(module + "."):
        return node.qualname[len(module) + 1:]
    return node.qualname


def diff_symbols(a: SymbolSide, b: SymbolSide) -> dict[str, Any]:
    """Added, removed, moved and renamed symbols, and changed Python signatures."""
    nodes = {"a": a.nodes, "b": b.nodes}
    modules = {"a": a.modules, "b": b.modules}
    # Tests, examples, benchmarks and build scripts (the layers the taxonomy sets apart) are not an
    # interface anyone imports: their changes are listed, never breaking.
    apart_paths = a.apart_paths | b.apart_paths

    def api(node: Node) -> bool:
        return _public(node) and node.path not in apart_paths

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
        bucket.append({"from": _symbol_row(old), "to": _symbol_row(new), "how": how, "breaking": api(old)})

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
    removed = _fold([i for i in removed_ids if i not in taken_a], a.containers, nodes["a"], api)
    added = _fold([i for i in added_ids if i not in taken_b], b.containers, nodes["b"], lambda _node: False)
    signatures = []
    for i in sorted(set(nodes["a"]) & set(nodes["b"])):
        old, new = nodes["a"][i], nodes["b"][i]
        if old.signature != new.signature and old.language == "python" and (old.signature or new.signature):
            reasons = breaking_reasons(old, new)
            signatures.append({"id": i, "kind": new.kind.value, "old": old.signature, "new": new.signature,
                               "breaking": bool(reasons) and api(new), "reasons": reasons,
                               "old_location": loc(old), **loc(new)})
    return {
        "added": added,
        "removed": removed,
        "moved": sorted(moved, key=lambda r: r["from"]["id"]),
        "renamed": sorted(renamed, key=lambda r: r["from"]["id"]),
        "signatures": signatures,
        "added_by_kind": dict(sorted(collections.Counter(r["kind"] for r in added).items())),
        "removed_by_kind": dict(sorted(collections.Counter(r["kind"] for r in removed).items())),
    }


def _with_prefix(ids: list[str], prefix: str) -> list[str]:
    """The ids of a sorted list that start with ``prefix`` (one bisection, not a pass over all)."""
    start = bisect.bisect_left(ids, prefix)
    end = start
    while end < len(ids) and ids[end].startswith(prefix):
        end += 1
    return ids[start:end]


def _fold(ids: list[str], container: Mapping[str, str], nodes: Mapping[str, Node],
          breaking: Callable[[Node], bool]) -> list[dict[str, Any]]:
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
    return [dict(_symbol_row(nodes[i]), breaking=breaking(nodes[i]), members=members.get(i, 0)) for i in kept]


KIND = SymbolsKind()
__all__ = ["KIND", "SymbolsKind", "diff_symbols"]
