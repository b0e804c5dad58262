"""Layers in the report: the aligned-layer table, and the release's layer drift. Formatting only."""

from __future__ import annotations

from comparator.kinds.layers.records import LayerConceptRows, LayerRow, LayersRelease, LayersSection, LayerSideRow
from comparator.markup import HTML_ROW_LIMIT, at, cell, esc, html_loc, html_table, md_table, none_found


def markdown(layers: LayersSection, la: str, lb: str) -> list[str]:
    out = ["## Layers", "", f"{layers.aligned:,} directly aligned roles; {la} has "
           f"{layers.roles.a:,} architectural layers, {lb} {layers.roles.b:,}.", ""]
    for reason, label in zip(layers.empty_reason, (la, lb)):
        if reason:
            out += [f"{label}: none found ({cell(reason)}).", ""]

    def side_cell(s: LayerSideRow | None) -> str:
        if s is None:
            return "— (gap)"
        symbols = ", ".join(f"{cell(k.name)} ({at(k)})" for k in s.key_symbols[:3])
        # The summary already gives module and line counts: the cell adds where the layer starts.
        text = f"{cell(s.summary)}<br>at {at(s.anchor)}"
        return text + (f"<br>key: {symbols}" if symbols else "")

    rows = [[("**" if r.aligned else "") + cell(r.title) + ("**" if r.aligned else "")
             + (" (apart)" if r.apart else ""), side_cell(r.a), confidence(r, r.a), side_cell(r.b),
             confidence(r, r.b)] for r in layers.rows]
    return out + ["Evidence: the share of a layer's lines whose role more than path words decided; "
                  "_weak_ under half (no takeaway rests on it).", ""] \
        + md_table(["Role", la, "evidence", lb, "evidence"], rows)


def confidence(row: LayerRow, side: LayerSideRow | None) -> str:
    if side is None or not row.assigned:
        return ""
    return f"{side.corroborated_share:.0%}" + (" _weak_" if side.weak else "")


def release_markdown(release: LayersRelease, la: str, lb: str) -> list[str]:
    drift = release.layer_drift
    out = ["### Layer drift", ""]
    if drift.changed:
        out += md_table(["Module", "From", "To"], [[cell(x.path), cell(x.from_), cell(x.to)] for x in drift.changed])
    else:
        out += ["No module present in both releases changed role.", ""]
    return out


def _layer_cell(side: LayerSideRow | None, assigned: bool) -> str:
    if side is None:
        return '<td class=empty>no layer with this role</td>'
    symbols = "".join(f'<div><span class=sym>{esc(s.name)}</span> <span class=muted>{esc(s.kind)}</span> '
                      f'{html_loc(s)}</div>' for s in side.key_symbols)
    held = (f'<span class="pill{" bad" if side.weak else ""}" title="share of the layer\'s lines whose role more '
            f'than path words decided">{side.corroborated_share:.0%} by evidence'
            f'{", weak: path words" if side.weak else ""}</span>') if assigned else ""
    # A concept opens to the rows that found it, in this layer's own modules.
    concepts = "".join(_concept(c) for c in side.concept_rows[:6])
    return (f'<td><div>{esc(side.summary)}</div><div class=muted>at {html_loc(side.anchor)} {held}</div>'
            f'{symbols}<div>{concepts}</div></td>')


def _concept(concept: LayerConceptRows) -> str:
    rows = "".join(f'<div>{html_loc(r)} <span class=sym>{esc(r.matched)}</span> <span class=muted>'
                   f'{esc(r.via)}</span></div>' for r in concept.rows)
    title = "; ".join(f'{r.path}:{r.line} {r.matched}' for r in concept.rows)
    modules = f'{concept.modules} module{"s" if concept.modules != 1 else ""}'
    return (f'<details class=concept><summary class=pill title="{esc(title)}">{esc(concept.id)} '
            f'<span class=muted>{modules}</span></summary>{rows}</details>')


def html(layers: LayersSection, la: str, lb: str) -> str:
    rows = []
    for r in layers.rows:
        cls = "aligned" if r.aligned else "gap"
        tag = " <span class=pill>apart</span>" if r.apart else ""
        rows.append(f'<tr class={cls} id="layer-{esc(r.role)}"><td><b>{esc(r.title)}</b>{tag}'
                    f'<div class=loc>{esc(r.role)}</div></td>{_layer_cell(r.a, r.assigned)}{_layer_cell(r.b, r.assigned)}</tr>')
    empty = "".join(none_found(f"{label}: {reason}") for reason, label in zip(layers.empty_reason, (la, lb)) if reason)
    return (f'<section id=layers><h2>Layers</h2><p>Layers mapped by architectural role. <b>{layers.aligned:,}</b> '
            f'directly aligned roles; {la} has {layers.roles.a:,} architectural layers, {lb} '
            f'{layers.roles.b:,}. Aligned rows carry a green edge; gaps are hatched.</p>{empty}'
            f'<table id=layer-table><thead><tr><th style="width:18%">Role</th><th class=sys-a>{la}</th>'
            f'<th class=sys-b>{lb}</th></tr></thead><tbody>{"".join(rows)}</tbody></table></section>')


def release_html(release: LayersRelease, la: str, lb: str) -> str:
    drift = release.layer_drift
    table = html_table(["Module", "From", "To"], [[html_loc(x), esc(x.from_), esc(x.to)] for x in drift.changed],
                       limit=HTML_ROW_LIMIT) if drift.changed else '<p class=muted>No module changed role.</p>'
    return (f'<section id=release-layers><h3>Layer drift</h3><p>{drift.added_modules:,} modules added, '
            f'{drift.removed_modules:,} removed.</p>{table}</section>')
