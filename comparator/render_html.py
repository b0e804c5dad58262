"""One self-contained HTML page: inline CSS and JS, nothing fetched, readable from file://.

The page frame, the summary and takeaways, then each evidence kind's own HTML in the order of the
kinds given, and the graph view. Formatting only: every number and sentence comes from the
findings. All repository text goes through :func:`comparator.markup.esc`; the embedded graph
tables are JSON inside ``<script type="application/json">`` with ``<``, ``>`` and ``&`` written as
``\\u003c``-style escapes, so no repository string can close the script element or open a comment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from comparator.markup import embed_json, esc, html_table
from comparator.records import Head
from comparator.view import KindView, read_head, release_order

ASSETS = Path(__file__).with_name("assets")


def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def render_html(findings: Mapping[str, Any], kinds: Sequence[KindView[Any, Any]],
                graph_view: Mapping[str, Any] | None = None) -> str:
    """The report page. ``graph_view`` (from :func:`comparator.graphview.build_graph_view`) feeds
    the interactive graph view; without it the view says that no graph was embedded."""
    head = read_head(findings)
    sa, sb = head.systems
    la, lb = esc(sa.label), esc(sb.label)
    release = findings["release"] if "release" in findings else {}
    title = f"archdiff: {sa.label} → {sb.label}"
    subtitle = ("Release comparison: what changed between two releases of one system."
                if release else "Cross-system comparison: architectural layers, struct byte layouts, "
                                "Prometheus telemetry with thresholds, and symbol graphs, side by side.")
    sections = [(kind, section) for kind in kinds if (section := kind.read_section(findings)) is not None]
    toc = [("summary", "Summary"), *([("release", "Release changes")] if release else []),
           *((kind.key, kind.title) for kind, _section in sections), ("graph-explorer", "Graph view")]
    release_part = ""
    if release:
        parts = [kind.release_html(part, la, lb) for kind in release_order(kinds)
                 if (part := kind.read_release(release)) is not None]
        release_part = f'<section id=release><h2>Release changes: {la} → {lb}</h2>' + "".join(parts) + "</section>"
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
        "<nav class=toc>" + "".join(f'<a href="#{esc(k)}">{esc(v)}</a>' for k, v in toc) + "</nav><main>",
        _summary(head, la, lb),
        release_part,
        *(kind.html(section, la, lb) for kind, section in sections),
        _graph_view(graph_view),
        "</main>",
        f"<script>{_asset('report.js')}</script>",
        f"<script>{_asset('selftest.js')}</script>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _summary(head: Head, la: str, lb: str) -> str:
    sa, sb = head.systems
    rows = [["Sources", esc(", ".join(sa.sources) or "—"), esc(", ".join(sb.sources) or "—")],
            ["Files", f"{sa.files:,}", f"{sb.files:,}"],
            ["Symbols", f"{sa.nodes:,}", f"{sb.nodes:,}"],
            ["Edges", f"{sa.edges:,}", f"{sb.edges:,}"],
            ["Diagnostics", f"{sa.diagnostics:,}", f"{sb.diagnostics:,}"]]
    if sa.not_read or sb.not_read:  # languages the extractor does not read: parts no evidence covers
        rows.append(["Not read", *(esc("; ".join(s.not_read or ())) or "—" for s in (sa, sb))])
    items = "".join(f'<li>{esc(t.text)}<a href="#{esc(t.ref)}">§ {esc(t.ref)}</a></li>' for t in head.takeaways)
    d = head.differences
    cut = ""
    if head.capped is not None:
        lists, limit = head.capped.lists, head.capped.limit
        cut = (f'<p class="muted warning">Cut to size: {len(lists):,} lists had more than {limit:,} '
               f'rows and show only the first {limit:,} ({esc(", ".join(lists))}); the counts here and '
               'the takeaways count them all.</p>')
    return ('<section id=summary><h2>Summary</h2>'
            + html_table(["", f'<span class=sys-a>{la}</span>', f'<span class=sys-b>{lb}</span>'], rows, numeric=(1, 2))
            + f'<p><b>{d.any:,}</b> differences, <b>{d.breaking:,}</b> breaking.</p>{cut}'
            + f'<h3>Takeaways</h3><ul class=takeaways>{items}</ul></section>')


def _graph_view(graph_view: Mapping[str, Any] | None) -> str:
    # The view is the page script's data (comparator.graphview), JSON by design: read as the script reads it.
    data = embed_json(graph_view if graph_view else {"systems": []})
    systems = graph_view["systems"] if graph_view else ()
    sampled = "".join(
        f'<p class="muted warning">{esc(s["label"])}: the graph is too large to embed whole; this view shows the '
        f'{s["sampled"]["nodes"][0]:,} best connected of {s["sampled"]["nodes"][1]:,} symbols and '
        f'{s["sampled"]["edges"][0]:,} of {s["sampled"]["edges"][1]:,} edges (the evidence has them all).</p>'
        for s in systems if "sampled" in s)
    return ('<section id=graph-explorer><h2>Graph view</h2>' + sampled + '<div id=graph-view><div class=controls>'
            '<label>System <select id=graph-system></select></label>'
            '<label>Layer <select id=graph-role></select></label>'
            '<label>Kind <select id=graph-kind></select></label>'
            '<input type=search id=symbol-search placeholder="search a symbol (e.g. Scheduler)" autocomplete=off>'
            '<span id=graph-status class=status></span></div>'
            '<div class=panes><ul id=search-results></ul><div><svg id=graph-canvas></svg><div id=node-info>'
            '<span class=muted>Search a symbol, then pick it to see what depends on it and what it depends on.'
            '</span></div></div></div></div>' + _highlights(systems) +
            f'<script type="application/json" id=graph-data>{data}</script></section>')


def _highlights(systems: Sequence[Mapping[str, Any]]) -> str:
    """The highlighted path of each side as a list (the page also draws it, marked): each node with
    the edge that led to it and that edge's evidence."""
    blocks = []
    for k, s in enumerate(systems):
        if "highlight" not in s:
            continue
        h = s["highlight"]
        head = f'<h3>Highlighted path in {esc(s["label"])}: {esc(h["from"])} → {esc(h["to"])}</h3>'
        if not h["chain"]:
            blocks.append(head + f'<p class=muted>{esc(h["missing"])}</p>')
            continue
        items = "".join(
            f'<li class=hl data-system={k} data-node={position}>'
            + (f'<span class=muted>-[{esc(edge)} {esc(path)}:{line}]-&gt;</span> ' if edge else "")
            + f'<span class=sym>{esc(node)}</span></li>'
            for position, node, edge, path, line in h["chain"])
        blocks.append(head + f'<ol class=highlight-path data-system={k}>{items}</ol>')
    return f'<div id=graph-highlight>{"".join(blocks)}</div>' if blocks else ""
