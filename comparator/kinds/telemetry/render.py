"""Telemetry of two systems in the report: counts, the crosswalk of their own metrics, the series
their libraries add (apart), each side's metrics with origin, wrapper and thresholds, the thresholds
with what they read or why nothing, and the metric names left unresolved. Formatting only."""

from __future__ import annotations

from collections.abc import Sequence

from comparator.kinds.telemetry.records import (Metric, MetricThreshold, OwnMetric, Provenance, TelemetrySection,
                                                TelemetrySide, ThresholdRow)
from comparator.markup import HTML_ROW_LIMIT, LIST_LIMIT, at, cell, esc, html_loc, html_table, md_table, none_found
from comparator.records import SIDES

# Own metrics per side in the Markdown: vLLM (35) against Triton (34) has to fit a pull-request
# comment beside the other kinds; the JSON and HTML reports have every row.
MD_METRIC_ROWS = 15
CROSSWALK_NOTE = ("Own metrics only: Ray twins, library series and the metrics of tests, examples and vendored "
                  "code are never paired.")
APART_NOTE = ("Defined in modules the layers set apart (tests, examples & benchmarks; vendored code): not counted "
              "as own.")
UNRESOLVED_APART_NOTE = ("in modules the layers set apart (tests, examples & benchmarks; vendored code), not counted "
                         "with the system's own.")
LIBRARY_NOTE = "Exposed because the system uses the library, not defined by its code; not counted as its metrics."


def count_rows(tele: TelemetrySection) -> list[tuple[str, list[str]]]:
    """(label, [a, b]) rows of the counts table, as plain numbers."""
    a, b = tele.a, tele.b
    types = sorted(set(a.by_type) | set(b.by_type))
    libs = sorted(set(a.twins_by_library) | set(b.twins_by_library))
    rows = [("own metrics", [f"{t.own_names:,}" for t in (a, b)])]
    # keyed by the types and libraries each side has: one a side lacks counts 0 there
    rows += [(f"· {t}", [f"{s.by_type.get(t, 0):,}" for s in (a, b)]) for t in types]
    rows += [(f"exposed again through {lib} (twins)", [f"{s.twins_by_library.get(lib, 0):,}" for s in (a, b)])
             for lib in libs]
    rows.append(("series from libraries", [f"{sum(s.library_by_origin.values()):,}" for s in (a, b)]))
    rows += [(f"metrics in {title.lower()} (apart)", [f"{s.apart_by_layer.get(title, 0):,}" for s in (a, b)])
             for title in sorted(set(a.apart_by_layer) | set(b.apart_by_layer))]
    rows.append(("thresholds (linked / not linked)",
                 [f"{len(s.thresholds):,} ({len(s.thresholds) - s.unlinked_thresholds:,} / "
                  f"{s.unlinked_thresholds:,})" for s in (a, b)]))
    rows.append(("own metrics without a threshold", [f"{len(s.without_threshold):,}" for s in (a, b)]))
    rows.append(("unresolved metric names or types", [f"{len(s.unresolved):,}" for s in (a, b)]))
    if a.unresolved_apart or b.unresolved_apart:
        rows.append(("unresolved in modules set apart", [f"{len(s.unresolved_apart):,}" for s in (a, b)]))
    return rows


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(cell(n) for n in names[:LIST_LIMIT])
    return shown + (f" … and {len(names) - LIST_LIMIT:,} more" if len(names) > LIST_LIMIT else "")


def _value(x: MetricThreshold | ThresholdRow) -> str:
    return "" if x.value is None else f"{x.value:g}"


def _readers(m: Metric) -> int:
    """Alerts, panels, scalers reading a metric: a panel's colour steps are one panel."""
    return len({(x.source_kind, x.name, x.path, x.line) for x in m.thresholds})


def _reads_md(t: ThresholdRow) -> str:
    linked = ", ".join(cell(x.name) + (f" ({cell(x.origin)})" if x.origin else "")
                       + (" (twin)" if x.provenance is Provenance.TWIN else "") for x in t.linked)
    if t.recorded_through:
        linked += f" — behind {cell(' → '.join(t.recorded_through))}"
    return linked


def _library_groups(rows: Sequence[Metric]) -> list[tuple[tuple[str, str, str], list[str]]]:
    """Library series by (library, how the code brought it in, where): one line each."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for m in rows:
        groups.setdefault((m.origin, m.via, at(m)), []).append(m.name)
    return sorted(groups.items())


# ---------------------------------------------------------------------------------------- Markdown


def markdown(tele: TelemetrySection, la: str, lb: str) -> list[str]:
    out = ["## Telemetry", ""]
    out += md_table(["", la, lb], [[cell(label), *values] for label, values in count_rows(tele)])
    for side, label in zip((tele.a, tele.b), (la, lb)):
        if side.empty_reason:
            out += [f"{label}: none found ({cell(side.empty_reason)}).", ""]
    out += ["### Metric crosswalk", "", CROSSWALK_NOTE, ""]
    if tele.crosswalk:
        out += md_table(["Score", la, lb, "Shared", "Units"], [
            [f"{r.score:.2f}", f"{cell(r.a.name)} ({cell(r.a.type)}, {at(r.a)})",
             f"{cell(r.b.name)} ({cell(r.b.type)}, {at(r.b)})", cell(", ".join(r.shared)),
             cell(r.unit_note or r.dimension or "—")] for r in tele.crosswalk])
    else:
        out += ["none found (no pair of metrics shares enough name tokens after normalisation).", ""]
    if tele.libraries:
        out += ["### Series from libraries", "", LIBRARY_NOTE, ""]
        out += md_table(["Library", la, lb, "Exposed by both"], [
            [cell(r.origin), f"{r.a:,}", f"{r.b:,}", _names(r.shared) or "—"] for r in tele.libraries])
    for side, label in zip((tele.a, tele.b), (la, lb)):
        out += _side_markdown(side, label)
    return out


def _side_markdown(t: TelemetrySide, label: str) -> list[str]:
    out: list[str] = []
    if t.metrics:
        out += [f"### Metrics of {label}", ""]
        # compact (a pull-request comment has room for little): a metric's twins ride on its name,
        # its further definition sites and its thresholds are counted (the thresholds table below
        # says what each reads); the JSON and HTML reports have every row
        vias = {m.via for m in t.metrics}
        if len(vias) == 1:  # one way for all (prometheus-cpp builder chains): said once
            out += [f"Via (the same for all): {cell(vias.pop() or '—')}.", ""]
        out += md_table(["Metric", "Type", *(["Via"] if vias else []), "Read by", "Where"], [
            [cell(m.name) + "".join(f" (+{cell(lib)})" for lib in m.twins), cell(m.type),
             *([cell(m.via or "—")] if vias else []), f"{_readers(m):,}",
             at(m) + (f" (+{len(m.other_sites):,})" if m.other_sites else "")]
            for m in t.metrics if not m.repeat], limit=MD_METRIC_ROWS)
    if t.apart_metrics:
        out += [f"Metrics of {label} set apart ({len(t.apart_metrics):,}): {APART_NOTE}", ""]
        out += [f"- {cell(m.name)} ({cell(m.type)}, {at(m)})" for m in t.apart_metrics[:LIST_LIMIT]]
        if len(t.apart_metrics) > LIST_LIMIT:
            out.append(f"- … and {len(t.apart_metrics) - LIST_LIMIT:,} more")
        out.append("")
    if t.library_metrics:
        out += [f"Series {label} gets from libraries:", ""]
        out += [f"- {cell(origin)} ({cell(via or 'used')} at {where}): {_names(names)}"
                for (origin, via, where), names in _library_groups(t.library_metrics)] + [""]
    linked = [x for x in t.thresholds if x.reads_defined_metric]
    unlinked = [x for x in t.thresholds if not x.reads_defined_metric]
    if linked:
        out += [f"### Thresholds of {label} and the metrics they read", ""]
        out += md_table(["Threshold", "Kind", "Condition", "Reads", "Where"], [
            [cell(x.name), cell(x.source_kind), f"{cell(x.op)} {_value(x)}".strip() or "—", _reads_md(x),
             at(x)] for x in linked])
    if unlinked:
        out += [f"### Thresholds of {label} linked to no metric ({len(unlinked):,})", ""]
        out += md_table(["Threshold", "Kind", "Condition", "Why not linked", "Where"], [
            [cell(x.name), cell(x.source_kind), f"{cell(x.op)} {_value(x)}".strip() or "—",
             cell(x.unlinked), at(x)] for x in unlinked])
    if t.unresolved:
        out += [f"### Metric names or types of {label} left unresolved ({len(t.unresolved):,})", ""]
        out += md_table(["Name", "Why", "Where"], [[cell(u.name or "(unread)"), cell(u.reason), at(u)]
                                                   for u in t.unresolved])
    if t.unresolved_apart:
        out += [f"Left unresolved in modules of {label} set apart ({len(t.unresolved_apart):,}): "
                f"{UNRESOLVED_APART_NOTE}", ""]
        groups: dict[tuple[str, str], list[int]] = {}
        for u in t.unresolved_apart:  # one line per reason and file: a test file repeats one shape
            groups.setdefault((u.reason, u.path), []).append(u.line)
        for (reason, path), lines in list(groups.items())[:LIST_LIMIT]:
            where = f"line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}"
            out.append(f"- {cell(reason)}: {cell(path)} {where}")
        if len(groups) > LIST_LIMIT:
            out.append(f"- … and {len(groups) - LIST_LIMIT:,} more")
        out.append("")
    return out


# ---------------------------------------------------------------------------------------- HTML


def _threshold_text(x: MetricThreshold | ThresholdRow) -> str:
    value = _value(x)
    default = " <span class=pill>grafana default</span>" if x.default else ""
    return (f'<div>{esc(x.name)} <b>{esc(x.op)} {esc(value)}</b> <span class=muted>{esc(x.source_kind)}'
            f'</span>{default} {html_loc(x)}</div>')


def _reads_html(t: ThresholdRow) -> str:
    names = ", ".join(f'<span class=sym>{esc(x.name)}</span>'
                      + (f' <span class=pill>{esc(x.origin)}</span>' if x.origin else "")
                      + (" <span class=pill>twin</span>" if x.provenance is Provenance.TWIN else "") for x in t.linked)
    if t.recorded_through:
        names += f'<div class=muted>behind {esc(" → ".join(t.recorded_through))}</div>'
    return names


def html(tele: TelemetrySection, la: str, lb: str) -> str:
    counts = html_table(["", la, lb], [[esc(label), *values] for label, values in count_rows(tele)], numeric=(1, 2))
    if tele.crosswalk:
        cross = html_table(["Score", la, lb, "Shared concept", "Units"], [
            [f'{r.score:.2f}', f'<span class=sym>{esc(r.a.name)}</span> {esc(r.a.type)} {html_loc(r.a)}',
             f'<span class=sym>{esc(r.b.name)}</span> {esc(r.b.type)} {html_loc(r.b)}',
             esc(", ".join(r.shared)), esc(r.unit_note or r.dimension or "—")] for r in tele.crosswalk],
            numeric=(0,))
    else:
        cross = none_found("no pair of metrics shares enough name tokens after unit and synonym normalisation")
    libraries = ""
    if tele.libraries:
        libraries = (f'<section id=telemetry-libraries><h3>Series from libraries</h3><p class=muted>{esc(LIBRARY_NOTE)}'
                     f'</p>' + html_table(["Library", la, lb, "Exposed by both"], [
                         [esc(r.origin), f'{r.a:,}', f'{r.b:,}', esc(", ".join(r.shared)) or "—"]
                         for r in tele.libraries], numeric=(1, 2)) + "</section>")
    cols = "".join(_side_html(t, side, label) for side, t, label in zip(SIDES, (tele.a, tele.b), (la, lb)))
    return (f'<section id=telemetry><h2>Telemetry</h2>{counts}<section id=crosswalk><h3>Metric crosswalk</h3>'
            f'<p class=muted>Metrics that measure the same thing under different names or units (name tokens '
            f'after dropping the namespace, unit words and exposition suffixes, with synonyms merged). '
            f'{esc(CROSSWALK_NOTE)}</p>{cross}</section>{libraries}<div class=cols>{cols}</div></section>')


def _metric_cells(m: OwnMetric) -> list[str]:
    return [f'<span class=sym>{esc(m.name)}</span>'
            + "".join(f' <span class=pill>also via {esc(lib)}</span>' for lib in m.twins)
            + (f'<div class=loc>via {esc(m.via)}</div>' if m.via else "")
            + f'<div class=muted>{esc(m.help[:140])}</div>', esc(m.type),
            "".join(_threshold_text(x) for x in m.thresholds) or '<span class=muted>none</span>',
            "<br>".join([html_loc(m), *(html_loc(s) for s in m.other_sites)])]


def _side_html(t: TelemetrySide, side: str, label: str) -> str:
    if not t.metrics and not t.library_metrics and not t.thresholds and not t.apart_metrics:
        return f'<div><h3 class=sys-{side}>{label}</h3>{none_found(t.empty_reason)}</div>'
    parts = [f'<h3 class=sys-{side}>{label}: {t.own_names:,} metrics of its own</h3>']
    if t.metrics:
        parts.append(html_table(["Metric", "Type", "Thresholds", "Defined at"],
                                [_metric_cells(m) for m in t.metrics if not m.repeat], limit=HTML_ROW_LIMIT))
    else:
        parts.append(none_found(t.empty_reason))
    if t.apart_metrics:
        parts.append(f'<details><summary>{len(t.apart_metrics):,} metrics set apart</summary><p class=muted>'
                     f'{esc(APART_NOTE)}</p>' + html_table(["Metric", "Type", "Thresholds", "Defined at"],
                                                            [_metric_cells(m) for m in t.apart_metrics],
                                                            limit=HTML_ROW_LIMIT) + "</details>")
    if t.library_metrics:
        parts.append(f'<details><summary>{len(t.library_metrics):,} series from libraries</summary>' + html_table(
            ["Series", "Library", "Type", "Thresholds", "Where"], [
                [f'<span class=sym>{esc(m.name)}</span><div class=loc>via {esc(m.via)}</div>', esc(m.origin),
                 esc(m.type), "".join(_threshold_text(x) for x in m.thresholds),
                 html_loc(m)] for m in t.library_metrics], limit=HTML_ROW_LIMIT) + "</details>")
    linked = [x for x in t.thresholds if x.reads_defined_metric]
    unlinked = [x for x in t.thresholds if not x.reads_defined_metric]
    if linked:
        parts.append(f'<details open><summary>{len(linked):,} thresholds and the metrics they read</summary>'
                     + html_table(["Threshold", "Reads"], [[_threshold_text(x), _reads_html(x)] for x in linked],
                         limit=HTML_ROW_LIMIT) + "</details>")
    if unlinked:
        parts.append(f'<details open><summary>{len(unlinked):,} thresholds linked to no metric</summary>'
                     + html_table(["Threshold", "Why not linked", "Expression"], [
                         [_threshold_text(x), esc(x.unlinked), f'<span class=loc>{esc(x.expr[:200])}</span>']
                         for x in unlinked], limit=HTML_ROW_LIMIT) + "</details>")
    for rows, what in ((t.unresolved, "metric names or types left unresolved"),
                       (t.unresolved_apart, "left unresolved in modules set apart")):
        if rows:
            parts.append(f'<details><summary>{len(rows):,} {what}</summary>'
                         + html_table(["Name", "Why", "Where"], [
                             [f'<span class=sym>{esc(u.name or "(unread)")}</span>', esc(u.reason), html_loc(u)]
                             for u in rows], limit=HTML_ROW_LIMIT) + "</details>")
    return f'<div>{"".join(parts)}</div>'
