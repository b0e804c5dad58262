"""Struct layouts: families (by tag) side by side with byte maps, and a release's layout changes (ABI).

Holes and padding are the extractor's (``StructLayout.holes``, ``padding``), never computed again:
the byte map draws exactly the holes the evidence states. Each changed layout of a release (and
each removed struct) names the public Python API that reaches its struct in the new release (the
old one) (:mod:`comparator.impact`): the
struct's graph node is the aggregate of that qualified name at the layout's header, else the only
one of that name (a template instance, ``Vec<float, 1>``, is its template's node); a layout with no
node says so.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from comparator.impact import reaching_apis
from comparator.kind import SIDES, Counts, EvidenceKind, Labels, Takeaway, plural
from comparator.kinds.structs import render
from comparator.kinds.structs.records import (Family, FamilySide, LayoutChange, LayoutSize, Segment, StructChanges,
                                              StructPresence, StructRow, StructsRelease, StructsSection,
                                              StructTotals)
from comparator.records import ApiReach, Sides
from extractor.evidence.read import Evidence
from extractor.model import NodeKind
from extractor.structs.records import STRUCTS, Member, Method, StructLayout
from extractor.structs.render import byte_map

STRUCTS_PER_FAMILY = 40
SEGMENTS_PER_STRUCT = 160
AGGREGATE_KINDS = frozenset({NodeKind.STRUCT, NodeKind.CLASS, NodeKind.UNION})
_TEMPLATE_ARGUMENTS = re.compile(r"<.*>")


@dataclasses.dataclass(frozen=True, slots=True)
class StructsSide:
    layouts: tuple[StructLayout, ...]
    evidence: Evidence  # its graph: what reaches a changed struct


class StructsKind(EvidenceKind[StructsSide, StructsSection, StructsRelease]):
    key = "structs"
    title = "Structs"
    release_rank = 1

    def summarize(self, evidence: Evidence) -> StructsSide:
        return StructsSide(evidence.of(STRUCTS), evidence)

    def compare(self, a: StructsSide, b: StructsSide) -> StructsSection:
        return compare_structs(a.layouts, b.layouts)

    def diff_release(self, a: StructsSide, b: StructsSide) -> StructsRelease:
        changes = diff_structs(a.layouts, b.layouts)
        # a changed struct in the new release's graph, a removed one in the old release's
        now, before = reached_structs(b.evidence, changes.changed), reached_structs(a.evidence, changes.removed)
        return StructsRelease(dataclasses.replace(
            changes, changed=tuple(dataclasses.replace(x, reached_by=now[x.qualname]) for x in changes.changed),
            removed=tuple(dataclasses.replace(x, reached_by=before[x.qualname]) for x in changes.removed)))

    def count(self, section: StructsSection, release: StructsRelease | None) -> Counts:
        if release is not None:
            st = release.structs
            return Counts.of([*st.changed, *st.removed, *st.added])
        shown = [{(s.qualname, s.size) for f in section.families for s in (f.a if side == "a" else f.b).structs}
                 for side in SIDES]
        return Counts(len(shown[0] ^ shown[1]), 0)

    def release_takeaways(self, section: StructsSection, release: StructsRelease, labels: Labels) -> list[Takeaway]:
        st = release.structs
        if not (st.changed or st.removed or st.added):
            return []
        nb = sum(1 for r in st.changed if r.breaking) + len(st.removed)
        return [Takeaway(f"Structs: {plural(len(st.changed), 'layout')} changed, {len(st.removed):,} removed, "
                         f"{len(st.added):,} added; {nb:,} of these break the ABI (size, alignment, member offsets "
                         f"or a removed type).{_reached_sentence(st.changed)}", "release-structs")]

    def takeaways(self, section: StructsSection, release: StructsRelease | None, labels: Labels) -> list[Takeaway]:
        if release is not None:
            return []  # a release's structs are told by their changes
        la, lb = labels
        out = []
        for family in section.families:
            if family.tag == "untagged":
                continue
            fa, fb, tag = family.a, family.b, family.tag
            if fa.count and fb.count:
                text = f"Struct family {tag}: {la} documents {_family(fa)}, {lb} {_family(fb, noun=False)}."
            else:
                have, hl, lack = (fa, la, lb) if fa.count else (fb, lb, la)
                text = f"Struct family {tag}: {hl} documents {_family(have)}, whereas {lack} exposes none."
            out.append(Takeaway(text, f"structs-{tag}"))
        if not section.totals.a.count and not section.totals.b.count:
            out.append(Takeaway("No struct layouts in either evidence bundle, so no byte maps could be compared.",
                                "structs"))
        return out

    def markdown(self, section: StructsSection, la: str, lb: str) -> list[str]:
        return render.markdown(section, la, lb)

    def html(self, section: StructsSection, la: str, lb: str) -> str:
        return render.html(section, la, lb)

    def release_markdown(self, release: StructsRelease, la: str, lb: str) -> list[str]:
        return render.release_markdown(release, la, lb)

    def release_html(self, release: StructsRelease, la: str, lb: str) -> str:
        return render.release_html(release, la, lb)


def _reached_sentence(changed: Sequence[LayoutChange]) -> str:
    """" 2 of the changed layouts are reached from the public Python API (BlockTable from
    Engine.step, ...).": the first three by name, the nearest API of each."""
    reached = [x for x in changed if x.reached_by is not None and x.reached_by.apis]
    if not reached:
        return ""
    named = ", ".join(f"{x.qualname} from {x.reached_by.apis[0].qualname}" for x in reached[:3]
                      if x.reached_by is not None)
    more = ", ..." if len(reached) > 3 else ""
    return (f" {len(reached):,} of the changed layouts {'is' if len(reached) == 1 else 'are'} reached from the "
            f"public Python API ({named}{more}).")


def _family(side: FamilySide, noun: bool = True) -> str:
    """"3 structs totalling 560 bytes", saying how many have a layout when not all do."""
    count = plural(side.count, "struct") if noun else f"{side.count:,}"
    if side.resolved == side.count:
        return f"{count} totalling {side.total_bytes:,} bytes"
    if not side.resolved:
        return f"{count} (none with a resolved layout)"
    return f"{count} ({side.resolved:,} with a layout, totalling {side.total_bytes:,} bytes)"


def struct_segments(struct: StructLayout) -> tuple[Segment, ...]:
    """The extractor's byte map of a layout (members, and exactly its holes and padding), capped."""
    return tuple(Segment(s.offset, s.size, s.label, s.type, s.kind) for s in byte_map(struct)[:SEGMENTS_PER_STRUCT])


def _struct_row(struct: StructLayout) -> StructRow:
    return StructRow(
        qualname=struct.qualname,
        kind=struct.kind,
        size=struct.size,
        align=struct.align,
        members=len(struct.members),
        hole_bytes=struct.sum_holes,
        padding=struct.padding,
        method=struct.method.value,
        error=struct.error,
        tags=tuple(sorted(struct.tags)),
        segments=struct_segments(struct),
        path=struct.path,
        line=struct.line,
    )


def compare_structs(a: Sequence[StructLayout], b: Sequence[StructLayout]) -> StructsSection:
    """Struct families (by tag) side by side, with sizes, total bytes and byte maps."""
    rows = {side: sorted((_struct_row(s) for s in layouts), key=lambda r: (-r.size, r.qualname, r.path, r.line))
            for side, layouts in zip(SIDES, (a, b))}
    tags = sorted({t for side in SIDES for r in rows[side] for t in r.tags})

    def resolved(of: list[StructRow]) -> list[StructRow]:
        return [r for r in of if r.method != Method.UNRESOLVED.value]

    families = []
    for tag in [*tags, ""]:
        sides = []
        for side in SIDES:
            members = [r for r in rows[side] if (tag in r.tags if tag else not r.tags)]
            sides.append(FamilySide(
                count=len(members),
                resolved=len(resolved(members)),
                total_bytes=sum(r.size for r in resolved(members)),
                hole_bytes=sum(r.hole_bytes for r in resolved(members)),
                structs=tuple(members[:STRUCTS_PER_FAMILY]),
                more=max(0, len(members) - STRUCTS_PER_FAMILY),
            ))
        if sides[0].count or sides[1].count:
            families.append(Family(tag or "untagged", sides[0], sides[1]))
    totals = [StructTotals(
        count=len(rows[side]),
        resolved=len(resolved(rows[side])),
        unresolved=len(rows[side]) - len(resolved(rows[side])),
        total_bytes=sum(r.size for r in resolved(rows[side])),
        hole_bytes=sum(r.hole_bytes for r in resolved(rows[side])),
        empty_reason="" if rows[side] else "no struct layouts in this evidence (no ELF given, no header "
                                           "probe compiled, or the structs step did not run)",
    ) for side in SIDES]
    return StructsSection(tuple(families), Sides(totals[0], totals[1]))


def reached_structs(evidence: Evidence, changed: Sequence[LayoutChange | StructPresence]) -> dict[str, ApiReach]:
    """The public Python API of ``evidence`` that reaches each struct, by qualified name (nothing
    is indexed for none)."""
    node_of = struct_nodes(evidence, changed)
    reach = reaching_apis(evidence, [node for node in node_of.values() if node])
    return {x.qualname: reach[node_of[x.qualname]] if node_of[x.qualname] else
            ApiReach("", (), 0, (), unresolved=f"the graph has no struct, class or union {x.qualname} at {x.path}")
            for x in changed}


def struct_nodes(evidence: Evidence, changed: Sequence[LayoutChange | StructPresence]) -> dict[str, str]:
    """The graph node of each changed struct ("" when none): the aggregate of its qualified name
    (a template instance's template) at its path, else the only aggregate of that name (a
    specialisation laid out in another header than its primary template's)."""
    at_path: dict[tuple[str, str], str] = {}
    by_name: dict[str, list[str]] = {}
    for n in evidence.graph.nodes:
        if n.kind in AGGREGATE_KINDS:
            at_path[n.qualname, n.path] = n.id
            by_name.setdefault(n.qualname, []).append(n.id)
    out = {}
    for x in changed:
        name = _TEMPLATE_ARGUMENTS.sub("", x.qualname)
        alone = by_name[name] if name in by_name and len(by_name[name]) == 1 else [""]
        out[x.qualname] = at_path[name, x.path] if (name, x.path) in at_path else alone[0]
    return out


def _first_by_name(layouts: Sequence[StructLayout]) -> dict[str, StructLayout]:
    """One layout per qualified name: a resolved one if there is, then the first by path."""
    out: dict[str, StructLayout] = {}
    for s in sorted(layouts, key=lambda s: (s.method is Method.UNRESOLVED, s.path)):
        out.setdefault(s.qualname, s)
    return out


def diff_structs(a: Sequence[StructLayout], b: Sequence[StructLayout]) -> StructChanges:
    """Layout changes of structs present in both releases (matched by qualified name)."""
    olds, news = _first_by_name(a), _first_by_name(b)
    changed = []
    for name in sorted(set(olds) & set(news)):
        old, new = olds[name], news[name]
        if Method.UNRESOLVED in (old.method, new.method):
            continue  # a layout is only known on one side (or none): nothing to compare
        changes, breaking = _layout_changes(old, new)
        if changes:
            changed.append(LayoutChange(
                qualname=name, changes=tuple(changes), breaking=breaking,
                old=LayoutSize(old.size, old.align, old.path, old.line),
                new=LayoutSize(new.size, new.align, new.path, new.line),
                segments_old=struct_segments(old), segments_new=struct_segments(new), path=new.path, line=new.line))

    def presence(s: StructLayout, breaking: bool) -> StructPresence:
        return StructPresence(s.qualname, s.size, s.method.value, breaking, s.path, s.line)

    removed = tuple(presence(olds[n], True) for n in sorted(set(olds) - set(news)))
    added = tuple(presence(news[n], False) for n in sorted(set(news) - set(olds)))
    return StructChanges(tuple(changed), removed, added)


def _layout_changes(old: StructLayout, new: StructLayout) -> tuple[list[str], bool]:
    """What changed between two layouts of one struct, and whether it breaks the ABI."""
    members_a: dict[str, Member] = {m.name: m for m in old.members}
    members_b: dict[str, Member] = {m.name: m for m in new.members}
    changes: list[str] = []
    breaking = False
    for key, was, now in (("size", old.size, new.size), ("align", old.align, new.align)):
        if was != now:
            changes.append(f"{key} {was} -> {now}")
            breaking = True
    for m in sorted(set(members_a) - set(members_b)):
        changes.append(f"member '{m}' removed (was at offset {members_a[m].offset})")
        breaking = True
    for m in sorted(set(members_b) - set(members_a)):
        changes.append(f"member '{m}' added at offset {members_b[m].offset}")
    for m in sorted(set(members_a) & set(members_b)):
        ma, mb = members_a[m], members_b[m]
        for key, was, now in (("offset", ma.offset, mb.offset), ("size", ma.size, mb.size),
                              ("bit_offset", ma.bit_offset, mb.bit_offset), ("bit_size", ma.bit_size, mb.bit_size)):
            if was != now:
                changes.append(f"member '{m}' {key} {was} -> {now}")
                breaking = True
        if ma.type != mb.type:
            changes.append(f"member '{m}' type {ma.type} -> {mb.type}")
            breaking = True
    return changes, breaking


KIND = StructsKind()
__all__ = ["KIND", "StructsKind", "StructsSide", "compare_structs", "diff_structs", "reached_structs", "struct_segments"]
