"""Markdown for pull-request comments: formatting only, every number comes from the findings.

Lists are cut at a fixed length (a PR comment has to stay readable); the JSON report has them all.
Repository text is escaped: GitHub renders HTML inside Markdown.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

LIST_LIMIT = 25
ROW_LIMIT = 40
# GitHub refuses comments longer than 65,536 characters; keep a margin for the note below.
MAX_CHARS = 60_000


def _cell(value: Any) -> str:
    text = html.escape(str(value), quote=False).replace("|", "\\|").replace("\n", " ").replace("`", "'")
    return text.replace("*", "\\*").replace("_", "\\_").replace("[", "\\[").replace("]", "\\]")


def _at(row: Mapping[str, Any]) -> str:
    path = row.get("path") or ""
    return _cell(f"{path}:{row.get('line', 0)}") if path else "—"


def _table(head: Sequence[str], rows: Iterable[Sequence[Any]], limit: int = ROW_LIMIT) -> list[str]:
    rows = list(rows)
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(" --- " for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows[:limit]]
    if len(rows) > limit:
        out.append(f"\n… {len(rows) - limit:,} more rows in the JSON report.")
    return out + [""]


def render_markdown(findings: Mapping[str, Any]) -> str:
    sa, sb = findings["systems"]
    la, lb = _cell(sa["label"]), _cell(sb["label"])
    kind = "release comparison" if findings["mode"] == "release" else "cross-system comparison"
    out = [f"# archdiff {kind}: {la} → {lb}", ""]
    out += _table(["", la, lb], [
        ["sources", ", ".join(_cell(s) for s in sa["sources"]) or "—", ", ".join(_cell(s) for s in sb["sources"]) or "—"],
        ["files", f"{sa['files']:,}", f"{sb['files']:,}"],
        ["symbols / edges", f"{sa['nodes']:,} / {sa['edges']:,}", f"{sb['nodes']:,} / {sb['edges']:,}"],
        ["diagnostics", f"{sa['diagnostics']:,}", f"{sb['diagnostics']:,}"],
    ])
    diff = findings["differences"]
    out += [f"**{diff['any']:,} differences, {diff['breaking']:,} breaking.**", "", "## Takeaways", ""]
    out += [f"- {_cell(t['text'])} _(§ {t['ref']})_" for t in findings["takeaways"]] + [""]
    if findings.get("release"):
        out += _release(findings["release"], la, lb)
    out += _layers(findings["layers"], la, lb)
    out += _structs(findings["structs"], la, lb)
    out += _telemetry(findings["telemetry"], la, lb)
    out += _graph(findings["graph"], la, lb)
    out += _concepts(findings["concepts"], la, lb)
    return _fit("\n".join(out).rstrip() + "\n")


def _fit(text: str) -> str:
    """Cut at a line break so the comment fits; sections come most important first."""
    if len(text) <= MAX_CHARS:
        return text
    cut = text.rfind("\n", 0, MAX_CHARS - 200)
    return (text[:cut] + f"\n\n… cut here to fit a pull-request comment ({len(text) - cut:,} more characters); "
            "the full findings are in report.json and report.html.\n")


def _layers(layers: Mapping[str, Any], la: str, lb: str) -> list[str]:
    out = ["## Layers", "", f"{layers['aligned']:,} directly aligned roles; {la} has "
           f"{layers['roles']['a']:,} architectural layers, {lb} {layers['roles']['b']:,}.", ""]
    for side, label in (("a", la), ("b", lb)):
        if layers["empty_reason"][side]:
            out += [f"{label}: none found ({_cell(layers['empty_reason'][side])}).", ""]

    def side_cell(s: Mapping[str, Any] | None) -> str:
        if s is None:
            return "— (gap)"
        symbols = ", ".join(f"{_cell(k['name'])} ({_at(k)})" for k in s["key_symbols"][:3])
        # The summary already gives module and line counts: the cell adds where the layer starts.
        text = f"{_cell(s['summary'])}<br>at {_at(s['anchor'])}"
        return text + (f"<br>key: {symbols}" if symbols else "")

    rows = [[("**" if r["aligned"] else "") + _cell(r["title"]) + ("**" if r["aligned"] else "")
             + (" (apart)" if r["apart"] else ""), side_cell(r["a"]), side_cell(r["b"])] for r in layers["rows"]]
    return out + _table(["Role", la, lb], rows)


def _structs(structs: Mapping[str, Any], la: str, lb: str) -> list[str]:
    out = ["## Struct layouts", ""]
    totals = structs["totals"]
    for side, label in (("a", la), ("b", lb)):
        t = totals[side]
        if t["empty_reason"]:
            out.append(f"- {label}: none found ({_cell(t['empty_reason'])}).")
        else:
            out.append(f"- {label}: {t['count']:,} structs ({t['resolved']:,} with a layout, {t['unresolved']:,} "
                       f"unresolved), {t['total_bytes']:,} bytes, {t['hole_bytes']:,} bytes in holes.")
    out.append("")
    out += _table(["Family", la, lb], [[_cell(f["tag"]),
                                         f"{f['a']['count']:,} structs, {f['a']['total_bytes']:,} B",
                                         f"{f['b']['count']:,} structs, {f['b']['total_bytes']:,} B"]
                                        for f in structs["families"]])
    for family in structs["families"]:
        if family["tag"] == "untagged":
            continue
        rows = [[label, _cell(s["qualname"]), f"{s['size']:,}", f"{s['hole_bytes']:,}", _cell(s["method"]), _at(s)]
                for side, label in (("a", la), ("b", lb)) for s in family[side]["structs"]]
        out += [f"### Family {_cell(family['tag'])}", ""]
        out += _table(["System", "Struct", "Size (B)", "Holes (B)", "Method", "Where"], rows)
    return out


def _telemetry(tele: Mapping[str, Any], la: str, lb: str) -> list[str]:
    out = ["## Telemetry", ""]
    types = sorted(set(tele["a"]["by_type"]) | set(tele["b"]["by_type"]))
    out += _table(["Metric type", la, lb], [[_cell(t), tele["a"]["by_type"].get(t, 0), tele["b"]["by_type"].get(t, 0)]
                                            for t in types] + [["thresholds", len(tele["a"]["thresholds"]),
                                                                len(tele["b"]["thresholds"])]])
    for side, label in (("a", la), ("b", lb)):
        t = tele[side]
        if t["empty_reason"]:
            out += [f"{label}: none found ({_cell(t['empty_reason'])}).", ""]
    out += ["### Metric crosswalk", ""]
    if tele["crosswalk"]:
        out += _table(["Score", la, lb, "Shared", "Units"], [
            [f"{r['score']:.2f}", f"{_cell(r['a']['name'])} ({_cell(r['a']['type'])}, {_at(r['a'])})",
             f"{_cell(r['b']['name'])} ({_cell(r['b']['type'])}, {_at(r['b'])})", _cell(", ".join(r["shared"])),
             _cell(r["unit_note"] or r["dimension"] or "—")] for r in tele["crosswalk"]])
    else:
        out += ["none found (no pair of metrics shares enough name tokens after normalisation).", ""]
    for side, label in (("a", la), ("b", lb)):
        t = tele[side]
        if not t["metrics"]:
            continue
        out += [f"### Metrics of {label}", ""]
        out += _table(["Metric", "Type", "Thresholds", "Where"], [
            [_cell(m["name"]), _cell(m["type"]),
             "; ".join(f"{_cell(x['name'])} {_cell(x['op'])} {x['value'] if x['value'] is not None else ''} "
                       f"({_cell(x['source_kind'])}, {_at(x)})" for x in m["thresholds"]) or "none",
             _at(m)] for m in t["metrics"]])
        if t["without_threshold"]:
            names = sorted(set(t["without_threshold"]))
            shown = ", ".join(_cell(n) for n in names[:LIST_LIMIT])
            more = f" … and {len(names) - LIST_LIMIT:,} more" if len(names) > LIST_LIMIT else ""
            out += [f"Without any threshold ({len(names):,}): {shown}{more}.", ""]
    return out


def _graph(graph: Mapping[str, Any], la: str, lb: str) -> list[str]:
    ga, gb = graph["a"], graph["b"]
    out = ["## Symbol graph", ""]
    rows = [["symbols", f"{ga['nodes']:,}", f"{gb['nodes']:,}"], ["edges", f"{ga['edges']:,}", f"{gb['edges']:,}"],
            ["density", f"{ga['density']:.2e}", f"{gb['density']:.2e}"],
            ["cross-language binds", f"{ga['binds']:,}", f"{gb['binds']:,}"]]
    for key, prefix in (("nodes_by_kind", "symbols: "), ("nodes_by_language", "language: "), ("edges_by_kind", "edges: ")):
        for k in sorted(set(ga[key]) | set(gb[key])):
            rows.append([_cell(prefix + k), f"{ga[key].get(k, 0):,}", f"{gb[key].get(k, 0):,}"])
    out += _table(["", la, lb], rows, limit=200)
    for side, label in (("a", la), ("b", lb)):
        g = graph[side]
        out += [f"### Most depended-upon symbols in {label}", ""]
        if g["central"]:
            out += _table(["Symbol", "Kind", "Dependents", "Where"],
                          [[_cell(c["id"]), _cell(c["kind"]), c["dependents"], _at(c)] for c in g["central"]])
        else:
            out += [f"none found ({_cell(g['empty_reason'] or 'no calls, imports or inherits edges')}).", ""]
        if g["layer_cycles"]:
            for cycle in g["layer_cycles"]:
                both = "; ".join(f"{_cell(m['a'])} ⇄ {_cell(m['b'])} ({m['a_to_b']:,}/{m['b_to_a']:,})"
                                 for m in cycle.get("mutual", [])[:8])
                out.append(f"- Cycle between layers: {_cell(', '.join(cycle['layers']))} "
                           f"({len(cycle['edges']):,} layer-to-layer links)" + (f"; both ways: {both}" if both else ""))
            out.append("")
    return out


def _concepts(c: Mapping[str, Any], la: str, lb: str) -> list[str]:
    out = ["## Concepts", ""]

    def ev(entry: Mapping[str, Any] | None) -> str:
        if not entry:
            return "—"
        first = entry["evidence"][0] if entry["evidence"] else {}
        return f"{entry['count']:,} hits" + (f" ({_cell(first.get('match', ''))} at {_at(first)})" if first else "")

    rows = [[_cell(r["id"]), kind, ev(r["a"]), ev(r["b"])]
            for kind, key in (("shared", "shared"), (f"only {la}", "only_a"), (f"only {lb}", "only_b")) for r in c[key]]
    if rows:
        return out + _table(["Concept", "", la, lb], rows, limit=100)
    return out + ["none found (no concept records in either evidence bundle).", ""]


def _release(r: Mapping[str, Any], la: str, lb: str) -> list[str]:
    out = ["## Release changes", ""]
    sym = r["symbols"]
    out += _table(["Symbols", "Count", "Breaking"], [
        [k, len(sym[k]), sum(1 for x in sym[k] if x.get("breaking"))]
        for k in ("added", "removed", "moved", "renamed", "signatures")])
    for key in ("removed", "added"):
        if sym[key]:
            out += [f"### Symbols {key}", ""]
            rows = sorted(sym[key], key=lambda x: (not x["breaking"], x["id"]))
            out += _table(["Symbol", "Kind", "Breaking", "Where"],
                          [[_cell(x["id"]), _cell(x["kind"]), "yes" if x["breaking"] else "", _at(x)] for x in rows])
    for key in ("moved", "renamed"):
        if sym[key]:
            out += [f"### Symbols {key}", ""]
            out += _table(["From", "To", "How", "Where"], [[_cell(x["from"]["id"]), _cell(x["to"]["id"]),
                                                          _cell(x["how"]), _at(x["to"])] for x in sym[key]])
    if sym["signatures"]:
        out += ["### Changed signatures", ""]
        rows = sorted(sym["signatures"], key=lambda x: (not x["breaking"], x["id"]))
        out += _table(["Symbol", "Old", "New", "Breaking", "Where"],
                      [[_cell(x["id"]), _cell(x["old"]), _cell(x["new"]),
                        _cell("; ".join(x["reasons"])) if x["breaking"] else "", _at(x)] for x in rows])
    st = r["structs"]
    out += ["### Struct layouts", ""]
    if st["changed"] or st["removed"] or st["added"]:
        rows = [[_cell(x["qualname"]), "changed", _cell("; ".join(x["changes"])), "yes" if x["breaking"] else "", _at(x)]
                for x in st["changed"]]
        rows += [[_cell(x["qualname"]), "removed", f"{x['size']:,} B", "yes", _at(x)] for x in st["removed"]]
        rows += [[_cell(x["qualname"]), "added", f"{x['size']:,} B", "", _at(x)] for x in st["added"]]
        out += _table(["Struct", "Change", "Detail", "ABI-breaking", "Where"], rows)
    else:
        out += ["No struct layout changed between the releases (among the structs both bundles resolve).", ""]
    me = r["metrics"]
    out += ["### Metrics", ""]
    rows = [[_cell(x["name"]), "added", "", _at(x)] for x in me["added"]]
    rows += [[_cell(x["name"]), "removed", "yes", _at(x)] for x in me["removed"]]
    rows += [[f"{_cell(x['from']['name'])} → {_cell(x['to']['name'])}", f"renamed ({x['similarity']:.2f})", "yes",
              _at(x["to"])] for x in me["renamed"]]
    rows += [[_cell(x["name"]), f"retyped {_cell(x['old_type'])} → {_cell(x['new_type'])}", "yes", _at(x)]
             for x in me["retyped"]]
    out += _table(["Metric", "Change", "Breaking", "Where"], rows) if rows else ["No metric added, removed, renamed "
                                                                                  "or retyped.", ""]
    if r["orphaned_thresholds"]:
        out += ["### Thresholds reading a metric that is gone", ""]
        out += _table(["Threshold", "Kind", "Missing", "Where"], [[_cell(x["name"]), _cell(x["source_kind"]),
                                                                   _cell(", ".join(x["missing"])), _at(x)]
                                                                  for x in r["orphaned_thresholds"]])
    drift = r["layer_drift"]
    out += ["### Layer drift", ""]
    if drift["changed"]:
        out += _table(["Module", "From", "To"], [[_cell(x["path"]), _cell(x["from"]), _cell(x["to"])]
                                                  for x in drift["changed"]])
    else:
        out += ["No module present in both releases changed role.", ""]
    return out
