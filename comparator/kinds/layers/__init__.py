"""Layers: the two systems' layers aligned by role, and a release's layer drift (modules that changed role).

Each side of a row says how strongly its modules hold the layer (the share of its lines whose role
more than path words decided, as the layers step states it), and a weak side (under half) is
flagged: the takeaways count no aligned role and no gap that rests on a weak side. Each concept of
a side comes with the rows of the modules that found it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from comparator.kind import Counts, EvidenceKind, Labels, Takeaway, Where, plural, where
from comparator.kinds.layers import render
from comparator.kinds.layers.records import (ConceptHitRow, KeySymbolRow, LayerConceptRows, LayerDrift, LayerRow,
                                             LayersRelease, LayersSection, LayerSideRow, RoleChange, TopModule)
from comparator.records import Sides
from extractor.evidence.read import Evidence
from extractor.layers.records import LAYERS, UNASSIGNED, Layer, apart_roles, role_by_path

KEY_SYMBOLS_SHOWN = 5
CONCEPT_ROWS_SHOWN = 5


@dataclasses.dataclass(frozen=True, slots=True)
class LayerSide:
    by_role: Mapping[str, Layer]  # in the order the layers step emitted them (taxonomy order)
    roles: Mapping[str, str]  # file path -> role


class LayersKind(EvidenceKind[LayerSide, LayersSection, LayersRelease]):
    key = "layers"
    title = "Layers"
    release_rank = 3

    def summarize(self, evidence: Evidence) -> LayerSide:
        return LayerSide({layer.role: layer for layer in evidence.of(LAYERS) if layer.role},
                         role_by_path(evidence.of(LAYERS)))

    def compare(self, a: LayerSide, b: LayerSide) -> LayersSection:
        return align_layers(a.by_role, b.by_role)

    def diff_release(self, a: LayerSide, b: LayerSide) -> LayersRelease:
        return LayersRelease(layer_drift(a.roles, b.roles))

    def count(self, section: LayersSection, release: LayersRelease | None) -> Counts:
        if release is not None:
            return Counts(len(release.layer_drift.changed), 0)
        return Counts(len(section.gaps.a) + len(section.gaps.b), 0)

    def release_takeaways(self, section: LayersSection, release: LayersRelease, labels: Labels) -> list[Takeaway]:
        drift = release.layer_drift
        if not drift.changed:
            return []
        return [Takeaway(f"Layer drift: {plural(len(drift.changed), 'module')} changed role; "
                         f"{drift.added_modules:,} modules added, {drift.removed_modules:,} removed.",
                         "release-layers")]

    def takeaways(self, section: LayersSection, release: LayersRelease | None, labels: Labels) -> list[Takeaway]:
        la, lb = labels
        ra, rb = section.roles
        if not (ra or rb):
            return [Takeaway("Neither evidence bundle carries layer records, so no roles could be aligned.", "layers")]
        # Only rows a reader can lean on: a side that rests mostly on path words counts for nothing.
        aligned_roles = [r.role for r in section.rows if r.aligned and not _weak(r)]
        shaky = [r.role for r in section.rows if r.aligned and _weak(r)]
        text = (f"{la} partitions its code into {plural(ra, 'architectural layer')} and {lb} into {rb:,}, "
                f"with {plural(len(aligned_roles), 'directly aligned role')}")
        text += f" ({', '.join(aligned_roles)})" if aligned_roles else ""
        text += (f"; {plural(len(shaky), 'more aligned role')} rest{'s' if len(shaky) == 1 else ''} on path words "
                 f"alone on one side ({', '.join(shaky)}) and {'is' if len(shaky) == 1 else 'are'} not counted."
                 if shaky else ".")
        out = [Takeaway(text, "layers")]
        rows = {r.role: r for r in section.rows}
        for (side, gaps), label in zip(section.gaps.items(), labels):
            # a gap counts only where the other side's layer rests on more than path words
            shown = [g for g in gaps if not _side_weak(rows[g].b if side == "a" else rows[g].a)]
            if shown:
                out.append(Takeaway(f"{label} has no layer for: {', '.join(shown)}.", "layers"))
        return out

    def markdown(self, section: LayersSection, la: str, lb: str) -> list[str]:
        return render.markdown(section, la, lb)

    def html(self, section: LayersSection, la: str, lb: str) -> str:
        return render.html(section, la, lb)

    def release_markdown(self, release: LayersRelease, la: str, lb: str) -> list[str]:
        return render.release_markdown(release, la, lb)

    def release_html(self, release: LayersRelease, la: str, lb: str) -> str:
        return render.release_html(release, la, lb)


def align_layers(a: Mapping[str, Layer], b: Mapping[str, Layer]) -> LayersSection:
    """One row per role found in either system; a row is aligned when both systems have it."""
    order: list[str] = []
    for side in (a, b):  # the layers step emits roles in taxonomy order: keep it
        for role in side:
            if role not in order:
                order.append(role)
    first_seen = {role: i for i, role in enumerate(order)}

    def apart(role: str) -> bool:
        return any(side[role].apart for side in (a, b) if role in side)

    order.sort(key=lambda r: (r == UNASSIGNED, apart(r), first_seen[r]))
    rows = []
    for role in order:
        la, lb = a.get(role), b.get(role)  # a role one side lacks is a gap: the point of the table
        title = next(layer.title for layer in (la, lb) if layer is not None)
        rows.append(LayerRow(
            role=role,
            title=title or role,
            apart=apart(role),
            assigned=role != UNASSIGNED,  # the row of modules no role reached has no share to show
            aligned=la is not None and lb is not None and role != UNASSIGNED and not apart(role),
            a=layer_side(la),
            b=layer_side(lb),
        ))

    def architectural(side: Mapping[str, Layer]) -> int:
        return sum(1 for r, layer in side.items() if r != UNASSIGNED and not layer.apart)

    def gaps(of: Callable[[LayerRow], LayerSideRow | None]) -> tuple[str, ...]:
        return tuple(sorted(r.role for r in rows if of(r) is None and r.role != UNASSIGNED and not r.apart))

    def reason(side: Mapping[str, Layer]) -> str:
        return "" if side else ("no layer records in this evidence (the layers step did not run or found no code "
                                "modules)")

    return LayersSection(
        rows=tuple(rows),
        aligned=sum(1 for r in rows if r.aligned),
        roles=Sides(architectural(a), architectural(b)),
        gaps=Sides(gaps(lambda r: r.a), gaps(lambda r: r.b)),
        empty_reason=Sides(reason(a), reason(b)),
    )


def layer_side(layer: Layer | None) -> LayerSideRow | None:
    if layer is None:
        return None
    symbols = tuple(KeySymbolRow(s.name, s.id, s.kind, s.in_degree, s.path, s.line) for s in layer.key_symbols)
    # The row's anchor: the first place a reader can open, preferring a symbol definition.
    anchor = next((where(s) for s in layer.key_symbols if s.line > 0), None) \
        or next((where(e) for e in layer.evidence if e.line > 0), None) \
        or next((where(e) for e in layer.evidence if e.path), None) \
        or next((where(m) for m in layer.modules if m.path), Where("", 0))
    top_modules = sorted(layer.modules, key=lambda m: (-m.score, m.path))
    return LayerSideRow(
        summary=layer.summary,
        modules=len(layer.modules),
        lines=layer.lines,
        corroborated_lines=layer.corroborated_lines,
        corroborated_share=layer.corroborated_share,
        weak=layer.weak,
        concepts=tuple(sorted(layer.concepts)),
        # each concept with the modules that found it and their first rows, to open from the report
        concept_rows=tuple(LayerConceptRows(c.id, c.modules, tuple(ConceptHitRow(e.path, e.line, e.matched, e.via)
                                                                  for e in c.evidence[:CONCEPT_ROWS_SHOWN]))
                           for c in sorted(layer.concept_evidence, key=lambda c: c.id)),
        key_symbols=symbols[:KEY_SYMBOLS_SHOWN],
        top_modules=tuple(TopModule(m.module, m.path, m.line) for m in top_modules[:KEY_SYMBOLS_SHOWN]),
        anchor=anchor,
    )


def _weak(row: LayerRow) -> bool:
    return _side_weak(row.a) or _side_weak(row.b)


def _side_weak(side: LayerSideRow | None) -> bool:
    return side is not None and side.weak


def layer_drift(ra: Mapping[str, str], rb: Mapping[str, str]) -> LayerDrift:
    changed = tuple(RoleChange(p, 0, ra[p], rb[p]) for p in sorted(set(ra) & set(rb)) if ra[p] != rb[p])
    per_role = {role: Sides(sum(1 for r in ra.values() if r == role), sum(1 for r in rb.values() if r == role))
                for role in sorted(set(ra.values()) | set(rb.values()))}
    return LayerDrift(changed, per_role, added_modules=len(set(rb) - set(ra)), removed_modules=len(set(ra) - set(rb)))


KIND = LayersKind()
__all__ = ["KIND", "LayersKind", "align_layers", "apart_roles", "layer_drift"]
