"""Concepts in the report: shared and one-sided mechanisms with a first place each. Formatting only."""

from __future__ import annotations

from comparator.kinds.concepts.records import ConceptRow, ConceptSide, ConceptsSection
from comparator.markup import at, cell, esc, html_loc, html_table, md_table, none_found


def _rows(c: ConceptsSection, la: str, lb: str) -> list[tuple[str, ConceptRow]]:
    return [(kind, r) for kind, rows in (("shared", c.shared), (f"only {la}", c.only_a), (f"only {lb}", c.only_b))
            for r in rows]


def markdown(c: ConceptsSection, la: str, lb: str) -> list[str]:
    out = ["## Concepts", ""]

    def ev(entry: ConceptSide | None) -> str:
        if not entry:
            return "—"
        if not entry.evidence:
            return f"{entry.count:,} hits"
        first = entry.evidence[0]
        return f"{entry.count:,} hits ({cell(first.match)} at {at(first)})"

    rows = [[cell(r.id), kind, ev(r.a), ev(r.b)] for kind, r in _rows(c, la, lb)]
    if rows:
        return out + md_table(["Concept", "", la, lb], rows, limit=100)
    return out + ["none found (no concept records in either evidence bundle).", ""]


def html(c: ConceptsSection, la: str, lb: str) -> str:
    def side(entry: ConceptSide | None) -> str:
        if not entry:
            return '<span class=muted>—</span>'
        ev = "".join(f'<div><span class=sym>{esc(e.match)}</span> {html_loc(e)}</div>' for e in entry.evidence[:2])
        return f'{entry.count:,} hits in {entry.files:,} files{ev}'

    rows = [[f'<b>{esc(r.id)}</b><div class=muted>{esc(r.title)}</div>', kind, side(r.a), side(r.b)]
            for kind, r in _rows(c, la, lb)]
    body = html_table(["Concept", "", la, lb], rows) if rows else none_found("no concept records in either evidence bundle")
    return f'<section id=concepts><h2>Concepts</h2>{body}</section>'
