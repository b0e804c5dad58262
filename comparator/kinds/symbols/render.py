"""A release's symbol drift in the report: added, removed, moved and renamed symbols, attributes per
class or module. Informational (what breaks callers is the API section). Formatting only."""

from __future__ import annotations

from collections.abc import Sequence

from comparator.kinds.symbols.records import AttributeChanges, SymbolChange, SymbolDrift, SymbolsRelease
from comparator.markup import HTML_ROW_LIMIT, at, cell, esc, html_loc, html_table, md_table

NAMES_SHOWN = 8  # attribute names shown per row in a table cell


def _public_first(rows: Sequence[SymbolChange]) -> list[SymbolChange]:
    return sorted(rows, key=lambda x: (not x.api.startswith("public"), x.id))


def _names(names: Sequence[str], count: int) -> str:
    if not count:
        return ""
    more = count - min(len(names), NAMES_SHOWN)
    return f"{count:,}: " + ", ".join(names[:NAMES_SHOWN]) + (f" … {more:,} more" if more else "")


def _added(row: AttributeChanges) -> str:
    return _names(row.added, row.added_count)


def _removed(row: AttributeChanges) -> str:
    return _names(row.removed, row.removed_count)


def _counts(sym: SymbolDrift) -> list[list[str]]:
    rows = [[k, f"{len(rows):,}"] for k, rows in (("added", sym.added), ("removed", sym.removed),
                                                   ("moved", sym.moved), ("renamed", sym.renamed))]
    rows.append(["attributes added", f"{sum(r.added_count for r in sym.attributes):,}"])
    rows.append(["attributes removed", f"{sum(r.removed_count for r in sym.attributes):,}"])
    return rows


def release_markdown(release: SymbolsRelease, la: str, lb: str) -> list[str]:
    sym = release.symbols
    out = ["### Symbol drift", "", "Informational: what breaks callers is in the API changes above.", ""]
    out += md_table(["Symbols", "Count"], _counts(sym))
    for key, changes in (("removed", sym.removed), ("added", sym.added)):
        if changes:
            out += [f"#### Symbols {key}", ""]
            out += md_table(["Symbol", "Kind", "API", "Where"],
                            [[cell(x.id), cell(x.kind), cell(x.api) or "—", at(x)] for x in _public_first(changes)])
    for key, moves in (("moved", sym.moved), ("renamed", sym.renamed)):
        if moves:
            out += [f"#### Symbols {key}", ""]
            out += md_table(["From", "To", "How", "Where"], [[cell(x.from_.id), cell(x.to.id), cell(x.how), at(x.to)]
                                                            for x in moves])
    if sym.attributes:
        out += ["#### Attributes of classes and modules that kept existing", ""]
        out += md_table(["In", "Kind", "Added", "Removed", "Where"],
                        [[cell(x.id), cell(x.kind), cell(_added(x)), cell(_removed(x)), at(x)] for x in sym.attributes])
    return out


def _symbol_cells(x: SymbolChange) -> list[str]:
    return [f'<span class=sym>{esc(x.id)}</span>', esc(x.kind), esc(x.api), html_loc(x)]


def release_html(release: SymbolsRelease, la: str, lb: str) -> str:
    sym = release.symbols
    parts = ['<section id=release-symbols><h3>Symbol drift</h3><p class=muted>Informational: what breaks callers is '
             'in the API changes above.</p>', html_table(["Symbols", "Count"], _counts(sym), numeric=(1,))]
    for key, changes in (("removed", sym.removed), ("added", sym.added)):
        rows = _public_first(changes)
        parts.append(f'<details><summary>{len(rows):,} symbols {key}</summary>'
                     + html_table(["Symbol", "Kind", "API", "Where"], [_symbol_cells(x) for x in rows],
                                  limit=HTML_ROW_LIMIT) + "</details>")
    for key, moves in (("moved", sym.moved), ("renamed", sym.renamed)):
        if moves:
            parts.append(f'<h4>Symbols {key}</h4>' + html_table(["From", "To", "How"], [
                [f'<span class=sym>{esc(x.from_.id)}</span> {html_loc(x.from_)}',
                 f'<span class=sym>{esc(x.to.id)}</span> {html_loc(x.to)}', esc(x.how)]
                for x in moves], limit=HTML_ROW_LIMIT))
    if sym.attributes:
        parts.append(f'<details><summary>attributes of {len(sym.attributes):,} classes and modules that kept '
                     'existing</summary>' + html_table(["In", "Kind", "Added", "Removed", "Where"], [
                         [f'<span class=sym>{esc(x.id)}</span>', esc(x.kind),
                          f'<span class=sym>{esc(_added(x))}</span>',
                          f'<span class=sym>{esc(_removed(x))}</span>', html_loc(x)]
                         for x in sym.attributes], limit=HTML_ROW_LIMIT) + "</details>")
    return "".join(parts) + "</section>"
