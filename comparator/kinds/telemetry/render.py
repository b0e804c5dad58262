"""Telemetry in the report: metric tables with their thresholds, the crosswalk, a release's metric
changes and orphaned thresholds. Formatting only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from comparator.markup import BREAKING, LIST_LIMIT, at, cell, esc, html_loc, html_table, md_table, none_found


def markdown(tele: Mapping[str, Any], la: str, lb: str) -> list[str]:
    out = ["## Telemetry", ""]
    types = sorted(set(tele["a"]["by_type"]) | set(tele["b"]["by_type"]))
    out += md_table(["Metric type", la, lb], [[cell(t), tele["a"]["by_type"].get(t, 0), tele["b"]["by_type"].get(t, 0)]
                                              for t in types] + [["thresholds", len(tele["a"]["thresholds"]),
                                                                  len(tele["b"]["thresholds"])]])
    for side, label in (("a", la), ("b", lb)):
        t = tele[side]
        if t["empty_reason"]:
            out += [f"{label}: none found ({cell(t['empty_reason'])}).", ""]
    out += ["### Metric crosswalk", ""]
    if tele["crosswalk"]:
        out += md_table(["Score", la, lb, "Shared", "Units"], [
            [f"{r['score']:.2f}", f"{cell(r['a']['name'])} ({cell(r['a']['type'])}, {at(r['a'])})",
             f"{cell(r['b']['name'])} ({cell(r['b']['type'])}, {at(r['b'])})", cell(", ".join(r["shared"])),
             cell(r["unit_note"] or r["dimension"] or "—")] for r in tele["crosswalk"]])
    else:
        out += ["none found (no pair of metrics shares enough name tokens after normalisation).", ""]
    for side, label in (("a", la), ("b", lb)):
        t = tele[side]
        if not t["metrics"]:
            continue
        out += [f"### Metrics of {label}", ""]
        out += md_table(["Metric", "Type", "Thresholds", "Where"], [
            [cell(m["name"]), cell(m["type"]),
             "; ".join(f"{cell(x['name'])} {cell(x['op'])} {x['value'] if x['value'] is not None else ''} "
                       f"({cell(x['source_kind'])}, {at(x)})" for x in m["thresholds"]) or "none",
             at(m)] for m in t["metrics"]])
        if t["without_threshold"]:
            names = sorted(set(t["without_threshold"]))
            shown = ", ".join(cell(n) for n in names[:LIST_LIMIT])
            more = f" … and {len(names) - LIST_LIMIT:,} more" if len(names) > LIST_LIMIT else ""
            out += [f"Without any threshold ({len(names):,}): {shown}{more}.", ""]
    return out


def release_markdown(release: Mapping[str, Any], la: str, lb: str) -> list[str]:
    me = release["metrics"]
    out = ["### Metrics", ""]
    rows = [[cell(x["name"]), "added", "", at(x)] for x in me["added"]]
    rows += [[cell(x["name"]), "removed", "yes", at(x)] for x in me["removed"]]
    rows += [[f"{cell(x['from']['name'])} → {cell(x['to']['name'])}", f"renamed ({x['similarity']:.2f})", "yes",
              at(x["to"])] for x in me["renamed"]]
    rows += [[cell(x["name"]), f"retyped {cell(x['old_type'])} → {cell(x['new_type'])}", "yes", at(x)]
             for x in me["retyped"]]
    out += md_table(["Metric", "Change", "Breaking", "Where"], rows) if rows else \
        ["No metric added, removed, renamed or retyped.", ""]
    if release["orphaned_thresholds"]:
        out += ["### Thresholds reading a metric that is gone", ""]
        out += md_table(["Threshold", "Kind", "Missing", "Where"], [[cell(x["name"]), cell(x["source_kind"]),
                                                                     cell(", ".join(x["missing"])), at(x)]
                                                                    for x in release["orphaned_thresholds"]])
    return out


def _threshold_text(x: Mapping[str, Any]) -> str:
    value = "" if x.get("value") is None else f' {x["value"]:g}'
    default = " <span class=pill>grafana default</span>" if x.get("default") else ""
    return (f'<div>{esc(x["name"])} <b>{esc(x["op"])}{esc(value)}</b> <span class=muted>{esc(x["source_kind"])}'
            f'</span>{default} {html_loc(x)}</div>')


def html(tele: Mapping[str, Any], la: str, lb: str) -> str:
    types = sorted(set(tele["a"]["by_type"]) | set(tele["b"]["by_type"]))
    counts = html_table(["Metric type", la, lb], [[esc(t), f'{tele["a"]["by_type"].get(t, 0):,}',
                                                   f'{tele["b"]["by_type"].get(t, 0):,}'] for t in types]
                        + [["<i>thresholds</i>", f'{len(tele["a"]["thresholds"]):,}', f'{len(tele["b"]["thresholds"]):,}'],
                           ["<i>metrics without a threshold</i>", f'{len(tele["a"]["without_threshold"]):,}',
                            f'{len(tele["b"]["without_threshold"]):,}']], numeric=(1, 2))
    if tele["crosswalk"]:
        cross = html_table(["Score", la, lb, "Shared concept", "Units"], [
            [f'{r["score"]:.2f}', f'<span class=sym>{esc(r["a"]["name"])}</span> {esc(r["a"]["type"])} {html_loc(r["a"])}',
             f'<span class=sym>{esc(r["b"]["name"])}</span> {esc(r["b"]["type"])} {html_loc(r["b"])}',
             esc(", ".join(r["shared"])), esc(r["unit_note"] or r["dimension"] or "—")] for r in tele["crosswalk"]],
            numeric=(0,))
    else:
        cross = none_found("no pair of metrics shares enough name tokens after unit and synonym normalisation")
    cols = []
    for side, label in (("a", la), ("b", lb)):
        t = tele[side]
        if not t["metrics"]:
            cols.append(f'<div><h3 class=sys-{side}>{label}</h3>{none_found(t["empty_reason"])}</div>')
            continue
        table = html_table(["Metric", "Type", "Thresholds", "Defined at"], [
            [f'<span class=sym>{esc(m["name"])}</span><div class=muted>{esc(m["help"][:140])}</div>', esc(m["type"]),
             "".join(_threshold_text(x) for x in m["thresholds"]) or '<span class=muted>none</span>', html_loc(m)]
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


def release_html(release: Mapping[str, Any], la: str, lb: str) -> str:
    me = release["metrics"]
    rows = [[f'<span class=sym>{esc(x["name"])}</span>', "added", "", html_loc(x)] for x in me["added"]]
    rows += [[f'<span class=sym>{esc(x["name"])}</span>', "removed", BREAKING, html_loc(x)] for x in me["removed"]]
    rows += [[f'<span class=sym>{esc(x["from"]["name"])} → {esc(x["to"]["name"])}</span>',
              f'renamed (similarity {x["similarity"]:.2f})', BREAKING, html_loc(x["to"])] for x in me["renamed"]]
    rows += [[f'<span class=sym>{esc(x["name"])}</span>', f'retyped {esc(x["old_type"])} → {esc(x["new_type"])}',
              BREAKING, html_loc(x)] for x in me["retyped"]]
    metrics = html_table(["Metric", "Change", "", "Where"], rows) if rows \
        else '<p class=muted>No metric added, removed, renamed or retyped.</p>'
    orphans = html_table(["Threshold", "Kind", "Missing metrics", "Where"], [
        [esc(x["name"]), esc(x["source_kind"]), esc(", ".join(x["missing"])), html_loc(x)]
        for x in release["orphaned_thresholds"]]) if release["orphaned_thresholds"] \
        else '<p class=muted>None: every threshold still reads defined metrics.</p>'
    return (f'<section id=release-metrics><h3>Metrics</h3>{metrics}</section>'
            f'<section id=release-thresholds><h3>Thresholds reading a metric that is gone</h3>{orphans}</section>')
