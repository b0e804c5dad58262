"""Struct layouts: families (by tag) side by side with byte maps, and a release's layout changes (ABI).

Holes and padding are the extractor's (``StructLayout.holes``, ``padding``), never computed again:
the byte map draws exactly the holes the evidence states.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from comparator.kind import SIDES, Counts, EvidenceKind, Takeaway, loc, plural
from comparator.kinds.structs import render
from extractor.evidence.read import Evidence
from extractor.structs.records import Member, Method, StructLayout
from extractor.structs.render import byte_map
from extractor.structs.records import STRUCTS

STRUCTS_PER_FAMILY = 40
SEGMENTS_PER_STRUCT = 160


class StructsKind(EvidenceKind):
    key = "structs"
    title = "Structs"
    release_rank = 1

    def summarize(self, evidence: Evidence) -> tuple[StructLayout, ...]:
        return evidence.of(STRUCTS)

    def compare(self, a: Sequence[StructLayout], b: Sequence[StructLayout]) -> dict[str, Any]:
        return compare_structs(a, b)

    def diff_release(self, a: Sequence[StructLayout], b: Sequence[StructLayout]) -> dict[str, Any]:
        return {"structs": diff_structs(a, b)}

    def count(self, section: Mapping[str, Any], release: Mapping[str, Any] | None) -> Counts:
        if release:
            st = release["structs"]
            rows = [*st["changed"], *st["removed"], *st["added"]]
            return Counts(len(rows), sum(1 for r in rows if r["breaking"]))
        shown = {side: {(s["qualname"], s["size"]) for f in section["families"] for s in f[side]["structs"]}
                 for side in SIDES}
        return Counts(len(shown["a"] ^ shown["b"]), 0)

    def release_takeaways(self, section: Any, release: Mapping[str, Any], labels: Sequence[str]) -> list[Takeaway]:
        st = release["structs"]
        if not (st["changed"] or st["removed"] or st["added"]):
            return []
        nb = sum(1 for r in st["changed"] if r["breaking"]) + len(st["removed"])
        return [Takeaway(f"Structs: {plural(len(st['changed']), 'layout')} changed, {len(st['removed']):,} removed, "
                         f"{len(st['added']):,} added; {nb:,} of these break the ABI (size, alignment, member offsets "
                         f"or a removed type).", "release-structs")]

    def takeaways(self, section: Mapping[str, Any], release: Mapping[str, Any] | None,
                  labels: Sequence[str]) -> list[Takeaway]:
        if release:
            return []  # a release's structs are told by their changes
        la, lb = labels
        out = []
        for family in section["families"]:
            if family["tag"] == "untagged":
                continue
            fa, fb, tag = family["a"], family["b"], family["tag"]
            if fa["count"] and fb["count"]:
                text = f"Struct family {tag}: {la} documents {_family(fa)}, {lb} {_family(fb, noun=False)}."
            else:
                have, hl, lack = (fa, la, lb) if fa["count"] else (fb, lb, la)
                text = f"Struct family {tag}: {hl} documents {_family(have)}, whereas {lack} exposes none."
            out.append(Takeaway(text, f"structs-{tag}"))
        totals = section["totals"]
        if not totals["a"]["count"] and not totals["b"]["count"]:
            out.append(Takeaway("No struct layouts in either evidence bundle, so no byte maps could be compared.",
                                "structs"))
        return out

    markdown = staticmethod(render.markdown)
    html = staticmethod(render.html)
    release_markdown = staticmethod(render.release_markdown)
    release_html = staticmethod(render.release_html)


def _family(side: Mapping[str, Any], noun: bool = True) -> str:
    """"3 structs totalling 560 bytes", saying how many have a layout when not all do."""
    count = plural(side["count"], "struct") if noun else f"{side['count']:,}"
    if side["resolved"] == side["count"]:
        return f"{count} totalling {side['total_bytes']:,} bytes"
    if not side["resolved"]:
        return f"{count} (none with a resolved layout)"
    return f"{count} ({side['resolved']:,} with a layout, totalling {side['total_bytes']:,} bytes)"


def struct_segments(struct: StructLayout) -> list[dict[str, Any]]:
    """The extractor's byte map of a layout (members, and exactly its holes and padding), capped."""
    return [{"offset": s.offset, "size": s.size, "label": s.label, "type": s.type, "kind": s.kind}
            for s in byte_map(struct)[:SEGMENTS_PER_STRUCT]]


def _struct_row(struct: StructLayout) -> dict[str, Any]:
    return {
        "qualname": struct.qualname,
        "kind": struct.kind,
        "size": struct.size,
        "align": struct.align,
        "members": len(struct.members),
        "hole_bytes": struct.sum_holes,
        "padding": struct.padding,
        "method": struct.method.value,
        "error": struct.error,
        "tags": sorted(struct.tags),
        "segments": struct_segments(struct),
        **loc(struct),
    }


def compare_structs(a: Sequence[StructLayout], b: Sequence[StructLayout]) -> dict[str, Any]:
    """Struct families (by tag) side by side, with sizes, total bytes and byte maps."""
    rows = {side: sorted((_struct_row(s) for s in layouts), key=lambda r: (-r["size"], r["qualname"], r["path"], r["line"]))
            for side, layouts in zip(SIDES, (a, b))}
    tags = sorted({t for side in SIDES for r in rows[side] for t in r["tags"]})
    families = []
    for tag in [*tags, ""]:
        family: dict[str, Any] = {"tag": tag or "untagged"}
        for side in SIDES:
            members = [r for r in rows[side] if (tag in r["tags"] if tag else not r["tags"])]
            resolved = [r for r in members if r["method"] != Method.UNRESOLVED.value]
            family[side] = {
                "count": len(members),
                "resolved": len(resolved),
                "total_bytes": sum(r["size"] for r in resolved),
                "hole_bytes": sum(r["hole_bytes"] for r in resolved),
                "structs": members[:STRUCTS_PER_FAMILY],
                "more": max(0, len(members) - STRUCTS_PER_FAMILY),
            }
        if family["a"]["count"] or family["b"]["count"]:
            families.append(family)
    totals = {}
    for side in SIDES:
        resolved = [r for r in rows[side] if r["method"] != Method.UNRESOLVED.value]
        totals[side] = {
            "count": len(rows[side]),
            "resolved": len(resolved),
            "unresolved": len(rows[side]) - len(resolved),
            "total_bytes": sum(r["size"] for r in resolved),
            "hole_bytes": sum(r["hole_bytes"] for r in resolved),
            "empty_reason": "" if rows[side] else "no struct layouts in this evidence (no ELF given, no header "
                                                   "probe compiled, or the structs step did not run)",
        }
    return {"families": families, "totals": totals}


def diff_structs(a: Sequence[StructLayout], b: Sequence[StructLayout]) -> dict[str, Any]:
    """Layout changes of structs present in both releases (matched by qualified name)."""
    by_side: dict[str, dict[str, StructLayout]] = {}
    for side, layouts in zip(SIDES, (a, b)):
        by_side[side] = {}
        for s in sorted(layouts, key=lambda s: (s.method is Method.UNRESOLVED, s.path)):
            by_side[side].setdefault(s.qualname, s)
    changed = []
    for name in sorted(set(by_side["a"]) & set(by_side["b"])):
        old, new = by_side["a"][name], by_side["b"][name]
        if Method.UNRESOLVED in (old.method, new.method):
            continue  # a layout is only known on one side (or none): nothing to compare
        changes, breaking = _layout_changes(old, new)
        if changes:
            changed.append({"qualname": name, "changes": changes, "breaking": breaking,
                            "old": {"size": old.size, "align": old.align, **loc(old)},
                            "new": {"size": new.size, "align": new.align, **loc(new)},
                            "segments_old": struct_segments(old), "segments_new": struct_segments(new), **loc(new)})
    removed = [{"qualname": n, "size": by_side["a"][n].size, "method": by_side["a"][n].method.value,
                "breaking": True, **loc(by_side["a"][n])} for n in sorted(set(by_side["a"]) - set(by_side["b"]))]
    added = [{"qualname": n, "size": by_side["b"][n].size, "method": by_side["b"][n].method.value,
              "breaking": False, **loc(by_side["b"][n])} for n in sorted(set(by_side["b"]) - set(by_side["a"]))]
    return {"changed": changed, "removed": removed, "added": added}


def _layout_changes(old: StructLayout, new: StructLayout) -> tuple[list[str], bool]:
    """What changed between two layouts of one struct, and whether it breaks the ABI."""
    members_a: dict[str, Member] = {m.name: m for m in old.members}
    members_b: dict[str, Member] = {m.name: m for m in new.members}
    changes, breaking = [], False
    for key in ("size", "align"):
        if getattr(old, key) != getattr(new, key):
            changes.append(f"{key} {getattr(old, key)} -> {getattr(new, key)}")
            breaking = True
    for m in sorted(set(members_a) - set(members_b)):
        changes.append(f"member '{m}' removed (was at offset {members_a[m].offset})")
        breaking = True
    for m in sorted(set(members_b) - set(members_a)):
        changes.append(f"member '{m}' added at offset {members_b[m].offset}")
    for m in sorted(set(members_a) & set(members_b)):
        ma, mb = members_a[m], members_b[m]
        for key in ("offset", "size", "bit_offset", "bit_size"):
            if getattr(ma, key) != getattr(mb, key):
                changes.append(f"member '{m}' {key} {getattr(ma, key)} -> {getattr(mb, key)}")
                breaking = True
        if ma.type != mb.type:
            changes.append(f"member '{m}' type {ma.type} -> {mb.type}")
            breaking = True
    return changes, breaking


KIND = StructsKind()
__all__ = ["KIND", "StructsKind", "compare_structs", "diff_structs", "struct_segments"]
