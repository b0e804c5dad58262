"""A release's symbol changes and changed signatures in the report. Formatting only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from comparator.markup import BREAKING, HTML_ROW_LIMIT, at, cell, esc, html_loc, html_table, md_table

ROW_KINDS = ("added", "removed", "moved", "renamed", "signatures")


def release_markdown(release: Mapping[str, Any], la: str, lb: str) -> list[str]:
    sym = release["symbols"]
    out = md_table(["Symbols", "Count", "Breaking"], [
        [k, len(sym[k]), sum(1 for x in sym[k] if x.get("breaking"))] for k in ROW_KINDS])
    for key in ("removed", "added"):
        if sym[key]:
            out += [f"### Symbols {key}", ""]
            rows = sorted(sym[key], key=lambda x: (not x["breaking"], x["id"]))
            out += md_table(["Symbol", "Kind", "Breaking", "Where"],
                            [[cell(x["id"]), cell(x["kind"]), "yes" if x["breaking"] else "", at(x)] for x in rows])
    for key in ("moved", "renamed"):
        if sym[key]:
            out += [f"### Symbols {key}", ""]
            out += md_table(["From", "To", "How", "Where"], [[cell(x["from"]["id"]), cell(x["to"]["id"]),
                                                            cell(x["how"]), at(x["to"])] for x in sym[key]])
    if sym["signatures"]:
        out += ["### Changed signatures", ""]
        rows = sorted(sym["signatures"], key=lambda x: (not x["breaking"], x["id"]))
        out += md_table(["Symbol", "Old", "New", "Breaking", "Where"],
                        [[cell(x["id"]), cell(x["old"]), cell(x["new"]),
                          cell("; ".join(x["reasons"])) if x["breaking"] else "", at(x)] for x in rows])
    return out


def _symbol_cells(x: Mapping[str, Any]) -> list[str]:
    return [f'<span class=sym>{esc(x["id"])}</span>', esc(x["kind"]), BREAKING if x.get("breaking") else "", html_loc(x)]


def release_html(release: Mapping[str, Any], la: str, lb: str) -> str:
    sym = release["symbols"]
    counts = html_table(["Symbols", "Count", "Breaking"], [
        [k, f'{len(sym[k]):,}', f'{sum(1 for x in sym[k] if x.get("breaking")):,}'] for k in ROW_KINDS], numeric=(1, 2))
    parts = [f'{counts}<section id=release-symbols>']
    for key in ("removed", "added"):
        rows = sorted(sym[key], key=lambda x: (not x["breaking"], x["id"]))
        parts.append(f'<details{" open" if key == "removed" else ""}><summary>{len(rows):,} symbols {key}</summary>'
                     + html_table(["Symbol", "Kind", "", "Where"], [_symbol_cells(x) for x in rows], limit=HTML_ROW_LIMIT)
                     + "</details>")
    for key in ("moved", "renamed"):
        if sym[key]:
            parts.append(f'<h3>Symbols {key}</h3>' + html_table(["From", "To", "How", ""], [
                [f'<span class=sym>{esc(x["from"]["id"])}</span> {html_loc(x["from"])}',
                 f'<span class=sym>{esc(x["to"]["id"])}</span> {html_loc(x["to"])}', esc(x["how"]),
                 BREAKING if x["breaking"] else ""] for x in sym[key]], limit=HTML_ROW_LIMIT))
    parts.append("</section><section id=release-signatures><h3>Changed Python signatures</h3>")
    sigs = sorted(sym["signatures"], key=lambda x: (not x["breaking"], x["id"]))
    parts.append(html_table(["Symbol", "Old", "New", "Why it breaks", "Where"], [
        [f'<span class=sym>{esc(x["id"])}</span>', f'<span class=sym>{esc(x["old"])}</span>',
         f'<span class=sym>{esc(x["new"])}</span>',
         BREAKING + " " + esc("; ".join(x["reasons"])) if x["breaking"] else "", html_loc(x)]
        for x in sigs], limit=HTML_ROW_LIMIT) if sigs else '<p class=muted>No signature changed.</p>')
    return "".join(parts) + "</section>"
