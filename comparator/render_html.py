"""One self-contained HTML page: inline CSS and JS, nothing fetched, readable from file://.

Formatting only: every number and sentence comes from the findings. All repository text goes
through :func:`esc`; the embedded graph tables are JSON inside ``<script type="application/json">``
with ``<``, ``>`` and ``&`` written as ``\\u003c``-style escapes, so no repository string can close
the script element or open a comment.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

ASSETS = Path(__file__).with_name("assets")
ROW_LIMIT = 300  # rows per release-change table; the JSON report has them all
MIN_BAR = 30.0  # per cent of the family's widest struct


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def embed_json(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _loc(row: Mapping[str, Any]) -> str:
    path = row.get("path") or ""
    if not path:
        return '<span class="loc">—</span>'
    return f'<span class="loc">{esc(path)}:{int(row.get("line") or 0)}</span>'


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], *, attrs: str = "", numeric: Sequence[int] = (),
           limit: int | None = None) -> str:
    rows = list(rows)
    shown = rows if limit is None else rows[:limit]
    ths = "".join(f'<th{" class=num" if i in numeric else ""}>{h}</th>' for i, h in enumerate(head))
    body = "".join("<tr>" + "".join(f'<td{" class=num" if i in numeric else ""}>{c}</td>' for i, c in enumerate(r))
                   + "</tr>" for r in shown)
    more = ""
    if limit is not None and len(rows) > limit:
        more = f'<p class="muted">{len(rows) - limit:,} more rows in the JSON report.</p>'
    return f"<table{attrs}><thead><tr>{ths}</tr></thead><tbody>{body}</tbody></table>{more}"


def _none(reason: str) -> str:
    return f'<p class="muted">None found: {esc(reason)}.</p>'


def render_html(findings: Mapping[str, Any], graph_view: Mapping[str, Any] | None = None) -> str:
    """The report page. ``graph_view`` (from :func:`comparator.graphview.build_graph_view`) feeds
    the interactive graph view; without it the view says that no graph was embedded."""
    sa, sb = findings["systems"]
    la, lb = esc(sa["label"]), esc(sb["label"])
    release = findings.get("release")
    title = f"archdiff: {sa['label']} → {sb['label']}"
    subtitle = ("Release comparison: what changed between two releases of one system."
                if release else "Cross-system comparison: architectural layers, struct byte layouts, "
                                "Prometheus telemetry with thresholds, and symbol graphs, side by side.")
    toc = [("summary", "Summary"), *([("release", "Release changes")] if release else []), ("layers", "Layers"),
           ("structs", "Structs"), ("telemetry", "Telemetry"), ("graph", "Graph statistics"),
           ("concepts", "Concepts"), ("graph-explorer", "Graph view")]
    parts = [
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        '<meta name=viewport content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title>",
        # Errors are collected from the very start, so the self-test can report any of them.
        "<script>window.__archdiffErrors=[];window.addEventListener('error',function(e){"
        "window.__archdiffErrors.push(String(e.message||e));});(function(){var ce=console.error;"
        "console.error=function(){window.__archdiffErrors.push([].slice.call(arguments).join(' '));"
        "return ce.apply(console,arguments);};})();</script>",
        f"<style>{_asset('report.css')}</style></head><body>",
        f'<header class=top><h1>{esc(title)}</h1><p>{esc(subtitle)}</p></header>',
        "<nav class=toc>" + "".join(f'<a href="#{k}">{esc(v)}</a>' for k, v in toc) + "</nav><main>",
        _summary(findings, la, lb),
        _release(release, la, lb) if release else "",
        _layers(findings["layers"], la, lb),
        _structs(findings["structs"], la, lb),
        _telemetry(findings["telemetry"], la, lb),
        _graph_stats(findings["graph"], la, lb),
        _concepts(findings["concepts"], la, lb),
        _graph_view(graph_view),
        "</main>",
        f"<script>{_asset('report.js')}</script>",
        f"<script>{_asset('selftest.js')}</script>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _summary(f: Mapping[str, Any], la: str, lb: str) -> str:
    sa, sb = f["systems"]
    rows = [["Sources", esc(", ".join(sa["sources"]) or "—"), esc(", ".join(sb["sources"]) or "—")],
            ["Files", f"{sa['files']:,}", f"{sb['files']:,}"],
            ["Symbols", f"{sa['nodes']:,}", f"{sb['nodes']:,}"],
            ["Edges", f"{sa['edges']:,}", f"{sb['edges']:,}"],
            ["Diagnostics", f"{sa['diagnostics']:,}", f"{sb['diagnostics']:,}"]]
    items = "".join(f'<li>{esc(t["text"])}<a href="#{esc(t["ref"])}">§ {esc(t["ref"])}</a></li>' for t in f["takeaways"])
    d = f["differences"]
    return (f'<section id=summary><h2>Summary</h2>'
            + _table(["", f'<span class=sys-a>{la}</span>', f'<span class=sys-b>{lb}</span>'], rows, numeric=(1, 2))
            + f'<p><b>{d["any"]:,}</b> differences, <b>{d["breaking"]:,}</b> breaking.</p>'
            + f'<h3>Takeaways</h3><ul class=takeaways>{items}</ul></section>')


def _layer_cell(side: Mapping[str, Any] | None) -> str:
    if side is None:
        return '<td class=empty>no layer with this role</td>'
    symbols = "".join(f'<div><span class=sym>{esc(s["name"])}</span> <span class=muted>{esc(s["kind"])}</span> '
                      f'{_loc(s)}</div>' for s in side["key_symbols"])
    concepts = "".join(f'<span class=pill>{esc(c)}</span>' for c in side["concepts"][:6])
    return (f'<td><div>{esc(side["summary"])}</div><div class=muted>at {_loc(side["anchor"])}</div>'
            f'{symbols}<div>{concepts}</div></td>')


def _layers(layers: Mapping[str, Any], la: str, lb: str) -> str:
    rows = []
    for r in layers["rows"]:
        cls = "aligned" if r["aligned"] else "gap"
        tag = " <span class=pill>apart</span>" if r["apart"] else ""
        rows.append(f'<tr class={cls} id="layer-{esc(r["role"])}"><td><b>{esc(r["title"])}</b>{tag}'
                    f'<div class=loc>{esc(r["role"])}</div></td>{_layer_cell(r["a"])}{_layer_cell(r["b"])}</tr>')
    empty = "".join(_none(f"{label}: {layers['empty_reason'][s]}") for s, label in (("a", la), ("b", lb))
                    if layers["empty_reason"][s])
    return (f'<section id=layers><h2>Layers</h2><p>Layers mapped by architectural role. <b>{layers["aligned"]:,}</b> '
            f'directly aligned roles; {la} has {layers["roles"]["a"]:,} architectural layers, {lb} '
            f'{layers["roles"]["b"]:,}. Aligned rows carry a green edge; gaps are hatched.</p>{empty}'
            f'<table id=layer-table><thead><tr><th style="width:18%">Role</th><th class=sys-a>{la}</th>'
            f'<th class=sys-b>{lb}</th></tr></thead><tbody>{"".join(rows)}</tbody></table></section>')


def _bytemap(struct: Mapping[str, Any], scale_bytes: int, segments_key: str = "segments") -> str:
    size = max(1, int(struct.get("size") or 0))
    segments = struct.get(segments_key) or []
    if not segments:
        reason = struct.get("error") or "no layout (unresolved)"
        return f'<div class=muted>{esc(reason)}</div>'
    # To scale within the family, except that a bar under MIN_BAR of the widest is enlarged (and
    # says so): a 64-byte struct beside a 2,560-byte one would otherwise be a sliver.
    natural = 100.0 * size / max(1, scale_bytes)
    width = max(natural, MIN_BAR)
    zoom = f'<div class=muted style="font-size:11px">bar enlarged ×{width / natural:.0f} to be readable</div>' \
        if width > natural * 1.5 else ""
    segs = []
    for k, s in enumerate(segments):
        left = 100.0 * s["offset"] / size
        w = 100.0 * s["size"] / size
        cls = s["kind"] + (" alt" if s["kind"] == "member" and k % 2 else "")
        tip = f'{s["label"]} {s["type"]} @{s["offset"]} +{s["size"]} B'.replace("  ", " ")
        segs.append(f'<div class="seg {esc(cls)}" style="left:{left:.3f}%;width:{w:.3f}%" title="{esc(tip)}">'
                    f'{esc(s["label"])}</div>')
    return f'<div class=bytemap style="width:{width:.2f}%">{"".join(segs)}</div>{zoom}'


def _struct_block(s: Mapping[str, Any], scale: int) -> str:
    holes = f', <span style="color:var(--hole)">{s["hole_bytes"]} B in holes</span>' if s.get("hole_bytes") else ""
    return (f'<div class=bytemap-row><div class=title><span class=sym>{esc(s["qualname"])}</span> '
            f'{s["size"]:,} B, align {s["align"]}{holes} · {esc(s["method"])} · {_loc(s)}</div>'
            f'{_bytemap(s, scale)}</div>')


LEGEND = ('<div class=legend><span><i style="background:#3b82f6"></i>member</span><span><i style="background:#7c3aed">'
          '</i>base</span><span><i style="background:var(--hole)"></i>hole</span><span><i style="background:var(--pad)">'
          '</i>tail padding</span><span class=muted>bars drawn to scale within a family (very small ones enlarged, '
          'as marked); hover a segment for its type, offset and size</span></div>')


def _structs(structs: Mapping[str, Any], la: str, lb: str) -> str:
    t = structs["totals"]
    intro = []
    for side, label in (("a", la), ("b", lb)):
        if t[side]["empty_reason"]:
            intro.append(_none(f"{label}: {t[side]['empty_reason']}"))
        else:
            intro.append(f'<p>{label}: {t[side]["count"]:,} structs ({t[side]["resolved"]:,} with a layout, '
                         f'{t[side]["unresolved"]:,} unresolved), {t[side]["total_bytes"]:,} bytes, '
                         f'{t[side]["hole_bytes"]:,} bytes in holes.</p>')
    summary = _table(["Family", f"{la}: structs", f"{la}: bytes", f"{lb}: structs", f"{lb}: bytes"],
                     [[f'<a href="#structs-{esc(f["tag"])}">{esc(f["tag"])}</a>', f'{f["a"]["count"]:,}',
                       f'{f["a"]["total_bytes"]:,}', f'{f["b"]["count"]:,}', f'{f["b"]["total_bytes"]:,}']
                      for f in structs["families"]], numeric=(1, 2, 3, 4))
    blocks = []
    for family in structs["families"]:
        scale = max([s["size"] for side in ("a", "b") for s in family[side]["structs"]] + [1])
        cols = []
        for side, label in (("a", la), ("b", lb)):
            fam = family[side]
            body = "".join(_struct_block(s, scale) for s in fam["structs"]) or '<p class=muted>none in this family</p>'
            more = f'<p class=muted>{fam["more"]:,} more in the JSON report.</p>' if fam["more"] else ""
            cols.append(f'<div><h4 class=sys-{side}>{label}: {fam["count"]:,} structs, {fam["total_bytes"]:,} bytes'
                        f'</h4>{body}{more}</div>')
        inner = f'<div class=cols>{"".join(cols)}</div>'
        if family["tag"] == "untagged":
            inner = f"<details><summary>show {family['a']['count'] + family['b']['count']:,} untagged structs</summary>{inner}</details>"
        blocks.append(f'<section id="structs-{esc(family["tag"])}"><h3>Family {esc(family["tag"])}</h3>{inner}</section>')
    return f'<section id=structs><h2>Struct layouts</h2>{"".join(intro)}{summary}{LEGEND}{"".join(blocks)}</section>'


def _threshold_text(x: Mapping[str, Any]) -> str:
    value = "" if x.get("value") is None else f' {x["value"]:g}'
    default = " <span class=pill>grafana default</span>" if x.get("default") else ""
    return (f'<div>{esc(x["name"])} <b>{esc(x["op"])}{esc(value)}</b> <span class=muted>{esc(x["source_kind"])}'
            f'</span>{default} {_loc(x)}</div>')


def _telemetry(tele: Mapping[str, Any], la: str, lb: str) -> str:
    types = sorted(set(tele["a"]["by_type"]) | set(tele["b"]["by_type"]))
    counts = _table(["Metric type", la, lb], [[esc(t), f'{tele["a"]["by_type"].get(t, 0):,}',
                                               f'{tele["b"]["by_type"].get(t, 0):,}'] for t in types]
                    + [["<i>thresholds</i>", f'{len(tele["a"]["thresholds"]):,}', f'{len(tele["b"]["thresholds"]):,}'],
                       ["<i>metrics without a threshold</i>", f'{len(tele["a"]["without_threshold"]):,}',
                        f'{len(tele["b"]["without_threshold"]):,}']], numeric=(1, 2))
    if tele["crosswalk"]:
        cross = _table(["Score", la, lb, "Shared concept", "Units"], [
            [f'{r["score"]:.2f}', f'<span class=sym>{esc(r["a"]["name"])}</span> {esc(r["a"]["type"])} {_loc(r["a"])}',
             f'<span class=sym>{esc(r["b"]["name"])}</span> {esc(r["b"]["type"])} {_loc(r["b"])}',
             esc(", ".join(r["shared"])), esc(r["unit_note"] or r["dimension"] or "—")] for r in tele["crosswalk"]],
            numeric=(0,))
    else:
        cross = _none("no pair of metrics shares enough name tokens after unit and synonym normalisation")
    cols = []
    for side, label in (("a", la), ("b", lb)):
        t = tele[side]
        if not t["metrics"]:
            cols.append(f'<div><h3 class=sys-{side}>{label}</h3>{_none(t["empty_reason"])}</div>')
            continue
        table = _table(["Metric", "Type", "Thresholds", "Defined at"], [
            [f'<span class=sym>{esc(m["name"])}</span><div class=muted>{esc(m["help"][:140])}</div>', esc(m["type"]),
             "".join(_threshold_text(x) for x in m["thresholds"]) or '<span class=muted>none</span>', _loc(m)]
            for m in t["metrics"]])
        unlinked = [x for x in t["thresholds"] if not x["reads_defined_metric"]]
        extra = ""
        if unlinked:
            extra = (f'<details><summary>{len(unlinked):,} thresholds read no metric defined in this system</summary>'
                     + "".join(_threshold_text(x) + f'<div class=loc>{esc(x["expr"][:200])}</div>' for x in unlinked)
                     + "</details>")
        cols.append(f'<div><h3 class=sys-{side}>{label}: {len(t["metrics"]):,} metrics</h3>{table}{extra}</div>')
    return (f'<section id=telemetry><h2>Telemetry</h2>{counts}<section id=crosswalk><h3>Metric crosswalk</h3>'
            f'<p class=muted>Metrics that measure the same thing under different names or units (name tokens '
            f'after dropping the namespace, unit words and exposition suffixes, with synonyms merged).</p>{cross}'
            f'</section><div class=cols>{"".join(cols)}</div></section>')


def _matrix(matrix: Mapping[str, Mapping[str, int]]) -> str:
    roles = sorted(set(matrix) | {r for row in matrix.values() for r in row})
    if not roles:
        return '<p class=muted>None found: no dependency edges between modules that have layers.</p>'
    peak = max([v for row in matrix.values() for v in row.values()] + [1])
    head = "".join(f'<th title="{esc(r)}">{esc(r[:10])}</th>' for r in roles)
    body = []
    for ra in roles:
        cells = []
        for rb in roles:
            v = matrix.get(ra, {}).get(rb, 0)
            alpha = 0.08 + 0.8 * (v / peak) ** 0.5 if v else 0
            style = f' style="background:rgba(37,99,235,{alpha:.2f})"' if v else ""
            cells.append(f'<td{style} title="{esc(ra)} → {esc(rb)}: {v}">{v or ""}</td>')
        body.append(f'<tr><th>{esc(ra)}</th>{"".join(cells)}</tr>')
    return (f'<div style="overflow:auto"><table class=matrix><thead><tr><th>from \\ to</th>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def _graph_stats(graph: Mapping[str, Any], la: str, lb: str) -> str:
    ga, gb = graph["a"], graph["b"]
    rows = [["symbols", f'{ga["nodes"]:,}', f'{gb["nodes"]:,}'], ["edges", f'{ga["edges"]:,}', f'{gb["edges"]:,}'],
            ["density", f'{ga["density"]:.2e}', f'{gb["density"]:.2e}'],
            ["cross-language binds", f'{ga["binds"]:,}', f'{gb["binds"]:,}']]
    for key, prefix in (("nodes_by_kind", "symbols: "), ("nodes_by_language", "language: "), ("edges_by_kind", "edges: ")):
        for k in sorted(set(ga[key]) | set(gb[key])):
            rows.append([esc(prefix + k), f'{ga[key].get(k, 0):,}', f'{gb[key].get(k, 0):,}'])
    cols = []
    for side, label in (("a", la), ("b", lb)):
        g = graph[side]
        central = _table(["Symbol", "Kind", "Dependents", "Defined at"], [
            [f'<span class=sym>{esc(c["id"])}</span>', esc(c["kind"]), f'{c["dependents"]:,}', _loc(c)]
            for c in g["central"]], numeric=(2,)) if g["central"] else _none(g["empty_reason"] or "no dependency edges")
        cycles = "".join(
            f'<div><b>Cycle</b> between {esc(", ".join(c["layers"]))}: '
            + "; ".join(f'{esc(e["from"])}→{esc(e["to"])} ({e["count"]:,}, e.g. {_loc(e["example"])})'
                        for e in c["edges"][:12])
            + (f' … {len(c["edges"]) - 12} more links' if len(c["edges"]) > 12 else "")
            + (('<div class=muted>Both ways: ' + "; ".join(
                f'{esc(m["a"])}⇄{esc(m["b"])} ({m["a_to_b"]:,}/{m["b_to_a"]:,})' for m in c["mutual"][:15])
                + "</div>") if c.get("mutual") else "") + "</div>"
            for c in g["layer_cycles"]) or '<p class=muted>No cycles between layers.</p>'
        cols.append(f'<div id="graph-{side}"><h3 class=sys-{side}>{label}</h3><h4>Most depended-upon symbols</h4>'
                    f'{central}<h4>Layer-to-layer dependencies</h4>{_matrix(g["layer_matrix"])}{cycles}</div>')
    return (f'<section id=graph><h2>Graph statistics</h2>{_table(["", la, lb], rows, numeric=(1, 2))}'
            f'<div class=cols>{"".join(cols)}</div></section>')


def _concepts(c: Mapping[str, Any], la: str, lb: str) -> str:
    def cell(entry: Mapping[str, Any] | None) -> str:
        if not entry:
            return '<span class=muted>—</span>'
        ev = "".join(f'<div><span class=sym>{esc(e["match"])}</span> {_loc(e)}</div>' for e in entry["evidence"][:2])
        return f'{entry["count"]:,} hits in {entry["files"]:,} files{ev}'

    rows = [[f'<b>{esc(r["id"])}</b><div class=muted>{esc(r["title"])}</div>', kind, cell(r["a"]), cell(r["b"])]
            for kind, key in (("shared", "shared"), (f"only {la}", "only_a"), (f"only {lb}", "only_b")) for r in c[key]]
    body = _table(["Concept", "", la, lb], rows) if rows else _none("no concept records in either evidence bundle")
    return f'<section id=concepts><h2>Concepts</h2>{body}</section>'


def _symbol_cells(x: Mapping[str, Any]) -> list[str]:
    bad = '<span class="pill bad">breaking</span>' if x.get("breaking") else ""
    return [f'<span class=sym>{esc(x["id"])}</span>', esc(x["kind"]), bad, _loc(x)]


def _release(r: Mapping[str, Any], la: str, lb: str) -> str:
    sym = r["symbols"]
    counts = _table(["Symbols", "Count", "Breaking"], [
        [k, f'{len(sym[k]):,}', f'{sum(1 for x in sym[k] if x.get("breaking")):,}']
        for k in ("added", "removed", "moved", "renamed", "signatures")], numeric=(1, 2))
    parts = [f'<section id=release><h2>Release changes: {la} → {lb}</h2>{counts}<section id=release-symbols>']
    for key in ("removed", "added"):
        rows = sorted(sym[key], key=lambda x: (not x["breaking"], x["id"]))
        parts.append(f'<details{" open" if key == "removed" else ""}><summary>{len(rows):,} symbols {key}</summary>'
                     + _table(["Symbol", "Kind", "", "Where"], [_symbol_cells(x) for x in rows], limit=ROW_LIMIT)
                     + "</details>")
    for key in ("moved", "renamed"):
        if sym[key]:
            parts.append(f'<h3>Symbols {key}</h3>' + _table(["From", "To", "How", ""], [
                [f'<span class=sym>{esc(x["from"]["id"])}</span> {_loc(x["from"])}',
                 f'<span class=sym>{esc(x["to"]["id"])}</span> {_loc(x["to"])}', esc(x["how"]),
                 '<span class="pill bad">breaking</span>' if x["breaking"] else ""] for x in sym[key]], limit=ROW_LIMIT))
    parts.append("</section><section id=release-signatures><h3>Changed Python signatures</h3>")
    sigs = sorted(sym["signatures"], key=lambda x: (not x["breaking"], x["id"]))
    parts.append(_table(["Symbol", "Old", "New", "Why it breaks", "Where"], [
        [f'<span class=sym>{esc(x["id"])}</span>', f'<span class=sym>{esc(x["old"])}</span>',
         f'<span class=sym>{esc(x["new"])}</span>',
         '<span class="pill bad">breaking</span> ' + esc("; ".join(x["reasons"])) if x["breaking"] else "", _loc(x)]
        for x in sigs], limit=ROW_LIMIT) if sigs else '<p class=muted>No signature changed.</p>')
    st = r["structs"]
    parts.append("</section><section id=release-structs><h3>Struct layout changes</h3>")
    if st["changed"] or st["removed"] or st["added"]:
        for x in st["changed"]:
            scale = max(x["old"]["size"], x["new"]["size"], 1)
            bad = '<span class="pill bad">ABI-breaking</span>' if x["breaking"] else ""
            parts.append(f'<div class=bytemap-row><div class=title><span class=sym>{esc(x["qualname"])}</span> {bad} '
                         f'{_loc(x)}: {esc("; ".join(x["changes"]))}</div>'
                         f'<div class=muted>before ({x["old"]["size"]:,} B)</div>'
                         f'{_bytemap({"size": x["old"]["size"], "segments": x["segments_old"]}, scale)}'
                         f'<div class=muted>after ({x["new"]["size"]:,} B)</div>'
                         f'{_bytemap({"size": x["new"]["size"], "segments": x["segments_new"]}, scale)}</div>')
        parts.append(_table(["Struct", "Change", "Size", "Where"],
                            [[f'<span class=sym>{esc(x["qualname"])}</span>', "removed", f'{x["size"]:,}', _loc(x)]
                             for x in st["removed"]]
                            + [[f'<span class=sym>{esc(x["qualname"])}</span>', "added", f'{x["size"]:,}', _loc(x)]
                               for x in st["added"]]))
    else:
        parts.append('<p class=muted>No struct layout changed among the structs both releases resolve.</p>')
    me = r["metrics"]
    parts.append("</section><section id=release-metrics><h3>Metrics</h3>")
    rows = [[f'<span class=sym>{esc(x["name"])}</span>', "added", "", _loc(x)] for x in me["added"]]
    rows += [[f'<span class=sym>{esc(x["name"])}</span>', "removed", '<span class="pill bad">breaking</span>', _loc(x)]
             for x in me["removed"]]
    rows += [[f'<span class=sym>{esc(x["from"]["name"])} → {esc(x["to"]["name"])}</span>',
              f'renamed (similarity {x["similarity"]:.2f})', '<span class="pill bad">breaking</span>', _loc(x["to"])]
             for x in me["renamed"]]
    rows += [[f'<span class=sym>{esc(x["name"])}</span>', f'retyped {esc(x["old_type"])} → {esc(x["new_type"])}',
              '<span class="pill bad">breaking</span>', _loc(x)] for x in me["retyped"]]
    parts.append(_table(["Metric", "Change", "", "Where"], rows) if rows
                 else '<p class=muted>No metric added, removed, renamed or retyped.</p>')
    parts.append("</section><section id=release-thresholds><h3>Thresholds reading a metric that is gone</h3>")
    parts.append(_table(["Threshold", "Kind", "Missing metrics", "Where"], [
        [esc(x["name"]), esc(x["source_kind"]), esc(", ".join(x["missing"])), _loc(x)] for x in r["orphaned_thresholds"]])
        if r["orphaned_thresholds"] else '<p class=muted>None: every threshold still reads defined metrics.</p>')
    drift = r["layer_drift"]
    parts.append(f'</section><section id=release-layers><h3>Layer drift</h3><p>{drift["added_modules"]:,} modules '
                 f'added, {drift["removed_modules"]:,} removed.</p>')
    parts.append(_table(["Module", "From", "To"], [[_loc(x), esc(x["from"]), esc(x["to"])] for x in drift["changed"]],
                        limit=ROW_LIMIT) if drift["changed"] else '<p class=muted>No module changed role.</p>')
    parts.append("</section></section>")
    return "".join(parts)


def _graph_view(graph_view: Mapping[str, Any] | None) -> str:
    data = embed_json(graph_view if graph_view else {"systems": []})
    return ('<section id=graph-explorer><h2>Graph view</h2><div id=graph-view><div class=controls>'
            '<label>System <select id=graph-system></select></label>'
            '<label>Layer <select id=graph-role></select></label>'
            '<label>Kind <select id=graph-kind></select></label>'
            '<input type=search id=symbol-search placeholder="search a symbol (e.g. Scheduler)" autocomplete=off>'
            '<span id=graph-status class=status></span></div>'
            '<div class=panes><ul id=search-results></ul><div><svg id=graph-canvas></svg><div id=node-info>'
            '<span class=muted>Search a symbol, then pick it to see what depends on it and what it depends on.'
            '</span></div></div></div></div>'
            f'<script type="application/json" id=graph-data>{data}</script></section>')
