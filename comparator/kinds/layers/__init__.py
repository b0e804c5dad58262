"""Layers: the two systems' layers aligned by role, and a release's layer drift (modules that changed role).

Each side of a row says how strongly its modules hold the layer (the share of its lines whose role
more than path words decided, as the layers step states it), and a weak side (under half) is
flagged: the takeaways count no aligned role and no gap that rests on a weak side. Each concept of
a side comes with the rows of the modules that found it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from comparator.kind import SIDES, Counts, EvidenceKind, Takeaway, loc, plural
from comparator.kinds.layers import render
from extractor.evidence.read import Evidence
from extractor.layers.records import UNASSIGNED, Layer, apart_roles, role_by_path
from extractor.layers.records import LAYERS

KEY_SYMBOLS_SHOWN = 5
CONCEPT_ROWS_SHOWN = 5


class LayerSide(NamedTuple):
    by_role: dict[str, Layer]  # in the order the layers step emitted them (taxonomy order)
    roles: dict[str, str]  # file path -> role


class LayersKind(EvidenceKind):
    key = "layers"
    title = "Layers"
    release_rank = 3

    def summarize(self, evidence: Evidence) -> LayerSide:
        return LayerSide({layer.role: layer for layer in evidence.of(LAYERS) if layer.role},
                         role_by_path(evidence.of(LAYERS)))

    def compare(self, a: LayerSide, b: LayerSide) -> dict[str, Any]:
        return align_layers(a.by_role, b.by_role)

    def diff_release(self, a: LayerSide, b: LayerSide) -> dict[str, Any]:
        return {"layer_drift": layer_drift(a.roles, b.roles)}

    def count(self, section: Mapping[str, Any], release: Mapping[str, Any] | None) -> Counts:
        if release:
            return Counts(len(release["layer_drift"]["changed"]), 0)
        return Counts(len(section["gaps"]["a"]) + len(section["gaps"]["b"]), 0)

    def release_takeaways(self, section: Any, release: Mapping[str, Any], labels: Sequence[str]) -> list[Takeaway]:
        drift = release["layer_drift"]
        if not drift["changed"]:
            return []
        return [Takeaway(f"Layer drift: {plural(len(drift['changed']), 'module')} changed role; "
                         f"{drift['added_modules']:,} modules added, {drift['removed_modules']:,} removed.",
                         "release-layers")]

    def takeaways(self, section: Mapping[str, Any], release: Mapping[str, Any] | None,
                  labels: Sequence[str]) -> list[Takeaway]:
        la, lb = labels
        ra, rb = section["roles"]["a"], section["roles"]["b"]
        if not (ra or rb):
            return [Takeaway("Neither evidence bundle carries layer records, so no roles could be aligned.", "layers")]
        # Only rows a reader can lean on: a side that rests mostly on path words counts for nothing.
        aligned_roles = [r["role"] for r in section["rows"] if r["aligned"] and not _weak(r)]
        shaky = [r["role"] for r in section["rows"] if r["aligned"] and _weak(r)]
        text = (f"{la} partitions its code into {plural(ra, 'architectural layer')} and {lb} into {rb:,}, "
                f"with {plural(len(aligned_roles), 'directly aligned role')}")
        text += f" ({', '.join(aligned_roles)})" if aligned_roles else ""
        text += (f"; {plural(len(shaky), 'more aligned role')} rest{'s' if len(shaky) == 1 else ''} on path words "
                 f"alone on one side ({', '.join(shaky)}) and {'is' if len(shaky) == 1 else 'are'} not counted."
                 if shaky else ".")
        out = [Takeaway(text, "layers")]
        for side, label in zip(SIDES, labels):
            other = "b" if side == "a" else "a"
            gaps = [g for g in section["gaps"][side] if not _side_weak(_row(section, g)[other])]
            if gaps:
                out.append(Takeaway(f"{label} has no layer for: {', '.join(gaps)}.", "layers"))
        return out

    markdown = staticmethod(render.markdown)
    html = staticmethod(render.html)
    release_markdown = staticmethod(render.release_markdown)
    release_html = staticmethod(render.release_html)


def align_layers(a: Mapping[str, Layer], b: Mapping[str, Layer]) -> dict[str, Any]:
    """One row per role found in either system; a row is aligned when both systems have it."""
    by_side = {"a": a, "b": b}
    order: list[str] = []
    for side in SIDES:  # the layers step emits roles in taxonomy order: keep it
        for role in by_side[side]:
            if role not in order:
                order.append(role)
    first_seen = {role: i for i, role in enumerate(order)}

    def apart(role: str) -> bool:
        return any(by_side[s][role].apart for s in SIDES if role in by_side[s])

    order.sort(key=lambda r: (r == UNASSIGNED, apart(r), first_seen[r]))
    rows = []
    for role in order:
        la, lb = a.get(role), b.get(role)
        rows.append({
            "role": role,
            "title": (la or lb).title or role,
            "apart": apart(role),
            "assigned": role != UNASSIGNED,  # the row of modules no role reached has no share to show
            "aligned": la is not None and lb is not None and role != UNASSIGNED and not apart(role),
            "a": layer_side(la),
            "b": layer_side(lb),
        })
    architectural = {side: [r for r, layer in by_side[side].items() if r != UNASSIGNED and not layer.apart]
                     for side in SIDES}
    reasons = {side: ("" if by_side[side] else "no layer records in this evidence (the layers step did not run "
                      "or found no code modules)") for side in SIDES}
    return {
        "rows": rows,
        "aligned": sum(1 for r in rows if r["aligned"]),
        "roles": {side: len(architectural[side]) for side in SIDES},
        "gaps": {side: sorted(r["role"] for r in rows if r[side] is None and r["role"] != UNASSIGNED
                              and not r["apart"]) for side in SIDES},
        "empty_reason": reasons,
    }


def layer_side(layer: Layer | None) -> dict[str, Any] | None:
    if layer is None:
        return None
    symbols = [{"name": s.name, "id": s.id, "kind": s.kind, "in_degree": s.in_degree, **loc(s)}
               for s in layer.key_symbols]
    # The row's anchor: the first place a reader can open, preferring a symbol definition.
    anchor = next((loc(s) for s in layer.key_symbols if s.line > 0), None) \
        or next((loc(e) for e in layer.evidence if e.line > 0), None) \
        or next((loc(e) for e in layer.evidence if e.path), None) \
        or next((loc(m) for m in layer.modules if m.path), {"path": "", "line": 0})
    top_modules = sorted(layer.modules, key=lambda m: (-m.score, m.path))
    return {
        "summary": layer.summary,
        "modules": len(layer.modules),
        "lines": layer.lines,
        "corroborated_lines": layer.corroborated_lines,
        "corroborated_share": layer.corroborated_share,
        "weak": layer.weak,
        "concepts": sorted(layer.concepts),
        # each concept with the modules that found it and their first rows, to open from the report
        "concept_rows": [{"id": c.id, "modules": c.modules, "rows": [loc(e) | {"matched": e.matched, "via": e.via}
                                                                      for e in c.evidence[:CONCEPT_ROWS_SHOWN]]}
                         for c in sorted(layer.concept_evidence, key=lambda c: c.id)],
        "key_symbols": symbols[:KEY_SYMBOLS_SHOWN],
        "top_modules": [{"module": m.module, **loc(m)} for m in top_modules[:KEY_SYMBOLS_SHOWN]],
        "anchor": anchor,
    }


def _weak(row: Mapping[str, Any]) -> bool:
    return _side_weak(row["a"]) or _side_weak(row["b"])


def _side_weak(side: Mapping[str, Any] | None) -> bool:
    return bool(side and side.get("weak"))


def _row(section: Mapping[str, Any], role: str) -> Mapping[str, Any]:
    return next(r for r in section["rows"] if r["role"] == role)


def layer_drift(ra: Mapping[str, str], rb: Mapping[str, str]) -> dict[str, Any]:
    changed = [{"path": p, "line": 0, "from": ra[p], "to": rb[p]} for p in sorted(set(ra) & set(rb)) if ra[p] != rb[p]]
    per_role = {}
    for role in sorted(set(ra.values()) | set(rb.values())):
        per_role[role] = {"a": sum(1 for r in ra.values() if r == role), "b": sum(1 for r in rb.values() if r == role)}
    return {"changed": changed, "modules_per_role": per_role,
            "added_modules": len(set(rb) - set(ra)), "removed_modules": len(set(ra) - set(rb))}


KIND = LayersKind()
__all__ = ["KIND", "LayersKind", "align_layers", "apart_roles", "layer_drift"]
