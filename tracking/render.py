"""The timeline page and the index page: formatting only, from the data of
:func:`tracking.timeline.build_timeline`. One self-contained HTML file each (inline CSS, charts as
inline SVG, one small inline script that collects errors and runs the browser self-test); every
string from a repository or the evidence goes through :func:`tracking.svg.esc`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tracking.svg import BAD, GOOD, NEUTRAL, PALETTE, Series, bar_chart, esc

TOP_ROLES = 8  # layers drawn by name; the rest are summed as "other layers"

_CSS = """
:root { --fg:#1d232b; --muted:#5b6573; --line:#d6dbe1; --soft:#f4f6f8; --a:#2563eb; --bad:#b91c1c; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--fg); }
header { padding:18px 28px 10px; border-bottom:1px solid var(--line); background:var(--soft); }
header h1 { margin:0 0 4px; font-size:22px; } header p { margin:0; color:var(--muted); }
main { max-width:1440px; margin:0 auto; padding:8px 28px 60px; }
h2 { font-size:18px; border-bottom:2px solid var(--line); padding-bottom:4px; margin-top:28px; }
.grid2 { display:grid; grid-template-columns:repeat(auto-fit,minmax(520px,1fr)); gap:18px 28px; }
figure.chart-box { margin:0; } figcaption { font-weight:600; margin:6px 0; }
.scroll { overflow-x:auto; }
svg.chart { display:block; font-size:11px; }
svg.chart .grid { stroke:#e5e7eb; } svg.chart .axis { stroke:#6b7280; }
svg.chart .tick, svg.chart .xlabel { fill:#5b6573; }
svg.chart a.bar-link rect { cursor:pointer; } svg.chart a.bar-link:hover rect { opacity:.75; }
.legend span { display:inline-block; margin-right:12px; font-size:12px; }
.legend i { display:inline-block; width:14px; height:10px; margin-right:4px; vertical-align:middle; }
table { border-collapse:collapse; width:100%; margin:6px 0 12px; }
th, td { border:1px solid var(--line); padding:5px 8px; text-align:left; vertical-align:top; }
th { background:var(--soft); } td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
a { color:var(--a); } .muted { color:var(--muted); } .bad { color:var(--bad); font-weight:600; }
.pill { display:inline-block; padding:0 7px; border-radius:9px; border:1px solid var(--line); font-size:12px; }
.pill.bad { background:#fee2e2; border-color:#fecaca; }
code { font-size:12.5px; }
"""

# Errors from the very start of the page, and the self-test the browser test opens with #selftest.
_HEAD_SCRIPT = ("<script>window.__archdiffErrors=[];window.addEventListener('error',function(e){"
                "window.__archdiffErrors.push(String(e.message||e));});(function(){var ce=console.error;"
                "console.error=function(){window.__archdiffErrors.push([].slice.call(arguments).join(' '));"
                "return ce.apply(console,arguments);};})();</script>")
_SELFTEST = """<script>(function(){"use strict";
if(!/^#selftest/.test(window.location.hash||"")){return;}
var out={charts:document.querySelectorAll("svg.chart").length,
bars:document.querySelectorAll("svg.chart rect").length,
reportLinks:[].map.call(document.querySelectorAll("a.pair-report"),function(a){return a.getAttribute("href");}),
chartLinks:[].map.call(document.querySelectorAll("svg.chart a.bar-link"),function(a){return a.getAttribute("href");}),
releases:document.querySelectorAll("#releases tbody tr").length};
out.errors=window.__archdiffErrors||[];
var pre=document.createElement("pre");pre.id="selftest-result";pre.textContent=JSON.stringify(out);
document.body.appendChild(pre);})();</script>"""


def _page(title: str, subtitle: str, body: str) -> str:
    return ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
            '<meta name=viewport content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title>{_HEAD_SCRIPT}<style>{_CSS}</style></head><body>"
            f"<header><h1>{esc(title)}</h1><p>{subtitle}</p></header><main>{body}</main>{_SELFTEST}</body></html>\n")


def render_timeline(data: Mapping[str, Any]) -> str:
    rows = data["releases"]
    labels = [r["name"] for r in rows]
    links = [r["pair"]["report"] + "/report.html" if r["pair"] else None for r in rows]
    charts = [_layers_chart(data, labels, links), _api_chart(data, labels, links), _breaking_chart(rows, labels, links),
              _metrics_chart(data, labels, links), _metric_changes_chart(rows, labels, links),
              _structs_chart(rows, labels, links), _binds_chart(rows, labels, links)]
    subtitle = (f"{len(rows):,} releases of <b>{esc(data['system'])}</b> from <code>{esc(data['spec'])}</code>. "
                "Each release's changes are drawn on that release; its bars link to the comparison with the release "
                'before it. <a href="index.html">All releases and reports</a>.')
    body = (f'<h2>Drift</h2><div class=grid2>{"".join(charts)}</div>'
            f'<h2>Releases</h2>{_release_table(rows)}')
    return _page(f"archdiff timeline: {data['system']}", subtitle, body)


def _layers_chart(data, labels, links) -> str:
    rows = data["releases"]
    roles = data["roles"]
    named, rest = roles[:TOP_ROLES], roles[TOP_ROLES:]
    titles = {role: title for r in rows for role, title in r["layer_titles"].items()}
    apart = {role for r in rows for role in r["apart"]}  # tests, examples, vendored code: not architecture
    series = [Series(titles.get(role, role) + (" (set apart)" if role in apart else ""),
                     tuple(r["layers"].get(role, 0) for r in rows), PALETTE[i % len(PALETTE)])
              for i, role in enumerate(named)]
    if rest:
        series.append(Series(f"{len(rest)} other layers", tuple(sum(r["layers"].get(x, 0) for x in rest) for r in rows),
                             NEUTRAL))
    return bar_chart("chart-layers", "Symbols per layer", labels, series, links)


def _api_chart(data, labels, links) -> str:
    rows = data["releases"]
    chart = bar_chart("chart-api", "Public API size (symbols whose api says public)", labels,
                      [Series("public symbols", tuple(r["api"]["public"] for r in rows), PALETTE[0])], links)
    if data["api_known"]:
        missing = [r["name"] for r in rows if not r["api"]["decided"]]
        note = f"No api field in the evidence of {esc(', '.join(missing))}." if missing else ""
    else:
        note = ("The evidence of these releases has no <code>api</code> field on any symbol (it is written by "
                "language steps that decide what is public: Python, with a newer archdiff), so the size of the "
                "public API is unknown here, not zero.")
    return chart.replace("</figure>", f'<p class=muted>{note}</p></figure>') if note else chart


def _breaking_chart(rows, labels, links) -> str:
    areas = sorted({area for r in rows if r["pair"] for area in r["pair"]["breaking"]})
    series = [Series(f"breaking: {area.replace('_', ' ')}", tuple(_pair(r, "breaking").get(area, 0) for r in rows),
                     _shade(BAD, i)) for i, area in enumerate(areas)]
    series.append(Series("other changes", tuple(
        max(0, _pair(r, "differences").get("any", 0) - _pair(r, "differences").get("breaking", 0)) for r in rows),
        "#cbd5e1"))
    return bar_chart("chart-breaking", "Changes since the release before (breaking ones in red)", labels, series, links)


def _metrics_chart(data, labels, links) -> str:
    rows = data["releases"]
    series = [Series(t, tuple(r["metrics"]["by_type"].get(t, 0) for r in rows), PALETTE[i % len(PALETTE)])
              for i, t in enumerate(data["metric_types"])]
    return bar_chart("chart-metrics", "Prometheus metrics by type", labels, series, links)


def _metric_changes_chart(rows, labels, links) -> str:
    def count(r, key):
        return _pair(r, "metrics").get(key, 0)
    series = [Series("added", tuple(count(r, "added") for r in rows), GOOD),
              Series("renamed", tuple(count(r, "renamed") for r in rows), "#d97706"),
              Series("retyped", tuple(count(r, "retyped") for r in rows), "#7c3aed"),
              Series("removed", tuple(count(r, "removed") for r in rows), BAD, down=True)]
    return bar_chart("chart-metric-changes", "Metrics added (up) and removed (down)", labels, series, links)


def _structs_chart(rows, labels, links) -> str:
    def count(r, key):
        return _pair(r, "structs").get(key, 0)
    series = [Series("layout changed", tuple(count(r, "changed") for r in rows), BAD),
              Series("added", tuple(count(r, "added") for r in rows), GOOD),
              Series("removed", tuple(count(r, "removed") for r in rows), NEUTRAL, down=True)]
    return bar_chart("chart-structs", "Struct layouts changed, added, removed", labels, series, links)


def _binds_chart(rows, labels, links) -> str:
    return bar_chart("chart-binds", "Cross-language bindings (binds edges)", labels,
                     [Series("binds edges", tuple(r["binds"] for r in rows), PALETTE[5])], links)


def _pair(row: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    return (row["pair"] or {}).get(key) or {}


def _shade(color: str, i: int) -> str:
    return color if i == 0 else ("#ef4444", "#f87171", "#991b1b", "#fca5a5")[(i - 1) % 4]


def _release_table(rows: Sequence[Mapping[str, Any]]) -> str:
    head = ["Release", "Files", "Symbols", "Public API", "Metrics", "Structs", "binds", "Compared with", "Changes",
            "Breaking"]
    body = []
    for r in rows:
        pair = r["pair"]
        if pair:
            d = pair["differences"]
            compared = f'<a class=pair-report href="{esc(pair["report"])}/report.html">{esc(pair["old"])} → {esc(r["version"])}</a>'
            breaking = f'<span class=bad>{d["breaking"]:,}</span>' if d["breaking"] else "0"
            changes = f'{d["any"]:,}'
        else:
            compared, changes, breaking = '<span class=muted>first release</span>', "—", "—"
        api = f'{r["api"]["public"]:,}' if r["api"]["decided"] else '<span class=muted>no api field</span>'
        cells = [f'<a href="{esc(r["evidence"])}">{esc(r["name"])}</a>', f'{r["files"]:,}', f'{r["nodes"]:,}', api,
                 f'{r["metrics"]["total"]:,}', f'{r["structs"]["total"]:,}', f'{r["binds"]:,}', compared, changes,
                 breaking]
        body.append("<tr>" + "".join(f"<td{' class=num' if 0 < i < 7 or i > 7 else ''}>{c}</td>"
                                     for i, c in enumerate(cells)) + "</tr>")
    ths = "".join(f"<th{' class=num' if 0 < i < 7 or i > 7 else ''}>{h}</th>" for i, h in enumerate(head))
    return f"<table id=releases><thead><tr>{ths}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render_index(data: Mapping[str, Any], new: Sequence[str] = ()) -> str:
    """The entry page: every release with its evidence, every pair with its reports."""
    rows = data["releases"]
    fresh = set(new)
    release_rows = []
    pair_rows = []
    for r in rows:
        mark = ' <span class=pill>new in the last run</span>' if r["version"] in fresh else ""
        commits = ", ".join(c[:12] for c in r["commits"]) or "—"
        release_rows.append(f'<tr><td>{esc(r["name"])}{mark}</td><td><code>{esc(commits)}</code></td>'
                            f'<td class=num>{r["files"]:,}</td><td class=num>{r["nodes"]:,}</td>'
                            f'<td class=num>{r["diagnostics"]:,}</td><td><a href="{esc(r["evidence"])}">evidence.json</a></td></tr>')
        pair = r["pair"]
        if pair:
            d = pair["differences"]
            base = esc(pair["report"])
            take = "".join(f"<li>{esc(t)}</li>" for t in pair["takeaways"])
            breaking = f'<span class="pill bad">{d["breaking"]:,} breaking</span>' if d["breaking"] else "0 breaking"
            pair_rows.append(f'<tr><td><a class=pair-report href="{base}/report.html">{esc(pair["old"])} → '
                             f'{esc(r["version"])}</a></td><td class=num>{d["any"]:,}</td><td>{breaking}</td>'
                             f'<td><a href="{base}/report.md">md</a> · <a href="{base}/report.json">json</a></td>'
                             f'<td><ul>{take}</ul></td></tr>')
    body = ('<p><a href="timeline.html"><b>Timeline</b></a>: the drift across all releases, drawn.</p>'
            '<h2>Releases</h2><table id=releases><thead><tr><th>Release</th><th>Commit</th><th class=num>Files</th>'
            '<th class=num>Symbols</th><th class=num>Diagnostics</th><th>Evidence</th></tr></thead>'
            f'<tbody>{"".join(release_rows)}</tbody></table>'
            '<h2>Each release against the one before</h2><table id=pairs><thead><tr><th>Report</th>'
            '<th class=num>Changes</th><th>Breaking</th><th>Also as</th><th>Takeaways</th></tr></thead>'
            f'<tbody>{"".join(pair_rows) or "<tr><td colspan=5 class=muted>one release: nothing to compare yet</td></tr>"}'
            '</tbody></table>')
    subtitle = f"Releases of <b>{esc(data['system'])}</b> tracked from <code>{esc(data['spec'])}</code>."
    return _page(f"archdiff releases: {data['system']}", subtitle, body)
