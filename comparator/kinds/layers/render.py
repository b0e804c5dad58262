"""Layers in the report: the aligned-layer table, and the release's layer drift. Formatting only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from comparator.markup import HTML_ROW_LIMIT, at, cell, esc, html_loc, html_table, md_table, none_found


def markdown(layers: Mapping[str, Any], la: str, lb: str) -> list[str]:
    out = ["## Layers", "", f"{layers['aligned']:,} directly aligned roles; {la} has "
           f"{layers['roles']['a']:,} architectural layers, {lb} {layers['roles']['b']:,}.", ""]
    for side, label in (("a", la), ("b", lb)):
        if layers["empty_reason"][side]:
            out += [f"{label}: none found ({cell(layers['empty_reason'][side])}).", ""]

    def side_cell(s: Mapping[str, Any] | None) -> str:
        if s is None:
            return "— (gap)"
        symbols = ", ".join(f"{cell(k['name'])} ({at(k)})" for k in s["key_symbols"][:3])
        # The summary already gives module and line counts: the cell adds where the layer starts.
        text = f"{cell(s['summary'])}<br>at {at(s['anchor'])}"
        return text + (f"<br>key: {symbols}" if symbols else "")

    rows = [[("**" if r["aligned"] else "") + cell(r["title"]) + ("**" if r["aligned"] else "")
             + (" (apart)" if r["apart"] else ""), side_cell(r["a"]), side_cell(r["b"])] for r in layers["rows"]]
    return out + md_table(["Role", la, lb], rows)


def release_markdown(release: Mapping[str, Any], la: str, lb: str) -> list[str]:
    drift = release["layer_drift"]
    out = ["### Layer drift", ""]
    if drift["changed"]:
        out += md_table(["Module", "From", "To"], [[cell(x["path"]), cell(x["from"]), cell(x["to"])]
                                                   for x in drift["changed"]])
    else:
        out += ["No module present in both releases changed role.", ""]
    return out


def _layer_cell(side: Mapping[str, Any] | None) -> str:
    if side is None:
        return '<td class=empty>no layer with this role</td>'
    symbols = "".join(f'<div><span class=sym>{esc(s["name"])}</span> <span class=muted>{esc(s["kind"])}</span> '
                      f'{html_loc(s)}</div>' for s in side["key_symbols"])
    concepts = "".join(f'<span class=pill>{esc(c)}</span>' for c in side["concepts"][:6])
    return (f'<td><div>{esc(side["summary"])}</div><div class=muted>at {html_loc(side["anchor"])}</div>'
            f'{symbols}<div>{concepts}</div></td>')


def html(layers: Mapping[str, Any], la: str, lb: str) -> str:
    rows = []
    for r in layers["rows"]:
        cls = "aligned" if r["aligned"] else "gap"
        tag = " <span class=pill>apart</span>" if r["apart"] else ""
        rows.append(f'<tr class={cls} id="layer-{esc(r["role"])}"><td><b>{esc(r["title"])}</b>{tag}'
                    f'<div class=loc>{esc(r["role"])}</div></td>{_layer_cell(r["a"])}{_layer_cell(r["b"])}</tr>')
    empty = "".join(none_found(f"{label}: {layers['empty_reason'][s]}") for s, label in (("a", la), ("b", lb))
                    if layers["empty_reason"][s])
    return (f'<section id=layers><h2>Layers</h2><p>Layers mapped by architectural role. <b>{layers["aligned"]:,}</b> '
            f'directly aligned roles; {la} has {layers["roles"]["a"]:,} architectural layers, {lb} '
            f'{layers["roles"]["b"]:,}. Aligned rows carry a green edge; gaps are hatched.</p>{empty}'
            f'<table id=layer-table><thead><tr><th style="width:18%">Role</th><th class=sys-a>{la}</th>'
            f'<th class=sys-b>{lb}</th></tr></thead><tbody>{"".join(rows)}</tbody></table></section>')


def release_html(release: Mapping[str, Any], la: str, lb: str) -> str:
    drift = release["layer_drift"]
    table = html_table(["Module", "From", "To"], [[html_loc(x), esc(x["from"]), esc(x["to"])] for x in drift["changed"]],
                       limit=HTML_ROW_LIMIT) if drift["changed"] else '<p class=muted>No module changed role.</p>'
    return (f'<section id=release-layers><h3>Layer drift</h3><p>{drift["added_modules"]:,} modules added, '
            f'{drift["removed_modules"]:,} removed.</p>{table}</section>')
