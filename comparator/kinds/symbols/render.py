"""A release's symbol drift in the report: added, removed, moved and renamed symbols, attributes per
class or module. Informational (what breaks callers is the API section). Formatting only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from comparator.markup import HTML_ROW_LIMIT, at, cell, esc, html_loc, html_table, md_table

ROW_KINDS = ("added", "removed", "moved", "renamed")
NAMES_SHOWN = 8  # attribute names shown per row in a table cell


def _public_first(rows: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(rows, key=lambda x: (not x["api"].startswith("public"), x["id"]))


def _names(row: Mapping[str, Any], key: str) -> str:
    names, count = row[key], row[f"{key}_count"]
    if not count:
        return ""
    more = count - min(len(names), NAMES_SHOWN)
    return f"{count:,}: " + ", ".join(names[:NAMES_SHOWN]) + (f" … {more:,} more" if more else "")


def _counts(sym: Mapping[str, Any]) -> list[list[Any]]:
    rows = [[k, f"{len(sym[k]):,}"] for k in ROW_KINDS]
    attrs = sym["attributes"]
    rows.append(["attributes added", f"{sum(r['added_count'] for r in attrs):,}"])
    rows.append(["attributes removed", f"{sum(r['removed_count'] for r in attrs):,}"])
    return rows


def release_markdown(release: Mapping[str, Any], la: str, lb: str) -> list[str]:
    sym = release["symbols"]
    out = ["### Symbol drift", "", "Informational: what breaks callers is in the API changes above.", ""]
    out += md_table(["Symbols", "Count"], _counts(sym))
    for key in ("removed", "added"):
        if sym[key]:
            out += [f"#### Symbols {key}", ""]
            out += md_table(["Symbol", "Kind", "API", "Where"],
                            [[cell(x["id"]), cell(x["kind"]), cell(x["api"]) or "—", at(x)]
                             for x in _public_first(sym[key])])
    for key in ("moved", "renamed"):
        if sym[key]:
            out += [f"#### Symbols {key}", ""]
            out += md_table(["From", "To", "How", "Where"], [[cell(x["from"]["id"]), cell(x["to"]["id"]),
                                                            cell(x["how"]), at(x["to"])] for x in sym[key]])
    if sym["attributes"]:
        out += ["#### Attributes of classes and modules that kept existing", ""]
        out += md_table(["In", "Kind", "Added", "Removed", "Where"],
                        [[cell(x["id"]), cell(x["kind"]), cell(_names(x, "added")), cell(_names(x, "removed")), at(x)]
                         for x in sym["attributes"]])
    return out


def _symbol_cells(x: Mapping[str, Any]) -> list[str]:
    return [f'<span class=sym>{esc(x["id"])}</span>', esc(x["kind"]), esc(x["api"]), html_loc(x)]


def release_html(release: Mapping[str, Any], la: str, lb: str) -> str:
    sym = release["symbols"]
    parts = ['<section id=release-symbols><h3>Symbol drift</h3><p class=muted>Informational: what breaks callers is '
             'in the API changes above.</p>', html_table(["Symbols", "Count"], _counts(sym), numeric=(1,))]
    for key in ("removed", "added"):
        rows = _public_first(sym[key])
        parts.append(f'<details><summary>{len(rows):,} symbols {key}</summary>'
                     + html_table(["Symbol", "Kind", "API", "Where"], [_symbol_cells(x) for x in rows],
                                  limit=HTML_ROW_LIMIT) + "</details>")
    for key in ("moved", "renamed"):
        if sym[key]:
            parts.append(f'<h4>Symbols {key}</h4>' + html_table(["From", "To", "How"], [
                [f'<span class=sym>{esc(x["from"]["id"])}</span> {html_loc(x["from"])}',
                 f'<span class=sym>{esc(x["to"]["id"])}</span> {html_loc(x["to"])}', esc(x["how"])]
                for x in sym[key]], limit=HTML_ROW_LIMIT))
    if sym["attributes"]:
        parts.append(f'<details><summary>attributes of {len(sym["attributes"]):,} classes and modules that kept '
                     'existing</summary>' + html_table(["In", "Kind", "Added", "Removed", "Where"], [
                         [f'<span class=sym>{esc(x["id"])}</span>', esc(x["kind"]),
                          f'<span class=sym>{esc(_names(x, "added"))}</span>',
                          f'<span class=sym>{esc(_names(x, "removed"))}</span>', html_loc(x)]
                         for x in sym["attributes"]], limit=HTML_ROW_LIMIT) + "</details>")
    return "".join(parts) + "</section>"
