"""A release's telemetry in the report: thresholds that read a metric now gone first (an alert that
stops firing is what an operator must see before anything else), then the metric changes with
whose series they are, then the thresholds added, removed and changed. Formatting only."""

from __future__ import annotations

import dataclasses

from comparator.kinds.telemetry.records import (MetricChanges, OrphanedThreshold, Reading, TelemetryRelease,
                                                ThresholdChanges, ThresholdRef)
from comparator.markup import BREAKING, HTML_ROW_LIMIT, at, cell, esc, html_loc, html_table, md_table
from comparator.records import Located

ORPHANS_NONE = "None: every threshold still reads series the new release exposes."
HOW = {Reading.DIRECT: "in its expression", Reading.RECORDED: "behind recording rules",
       Reading.LINK: "through a linked metric"}


@dataclasses.dataclass(frozen=True, slots=True)
class MetricChangeRow:
    """One row of the metric changes table, whatever the change."""

    name: str
    origin: str  # "" for the system's own
    change: str
    breaking: bool
    at: Located


@dataclasses.dataclass(frozen=True, slots=True)
class ThresholdChangeRow:
    x: ThresholdRef
    change: str


def _value(x: OrphanedThreshold | ThresholdRef) -> str:
    return "" if x.value is None else f"{x.value:g}"


def _how(x: OrphanedThreshold) -> str:
    """How an orphaned threshold read what is gone, and what it should read now."""
    text = HOW[x.reads]
    through = [v.split("@", 1)[0] for v in x.through]
    if through:
        text += f" ({', '.join(through)})"
    if x.renamed_to:
        text += "; renamed: " + ", ".join(f"{old} → {new}" for old, new in sorted(x.renamed_to.items()))
    return text


def metric_rows(me: MetricChanges) -> list[MetricChangeRow]:
    """One row per metric change: name, whose series (own or the library), change, breaking, where."""
    rows = [MetricChangeRow(x.name, x.origin, "added", False, x) for x in me.added]
    rows += [MetricChangeRow(x.name, x.origin, "removed", True, x) for x in me.removed]
    rows += [MetricChangeRow(f"{x.from_.name} → {x.to.name}", x.origin, f"renamed (similarity {x.similarity:.2f})",
                             True, x.to) for x in me.renamed]
    rows += [MetricChangeRow(x.name, x.origin, f"retyped {x.old_type} → {x.new_type}", True, x) for x in me.retyped]
    rows += [MetricChangeRow(x.name, "", "; ".join([*(f"now also exposed through {lib}" for lib in x.added),
                                                    *(f"no longer exposed through {lib}" for lib in x.removed)]),
                             x.breaking, x) for x in me.twins_changed]
    return rows


def threshold_rows(th: ThresholdChanges) -> list[ThresholdChangeRow]:
    rows = [ThresholdChangeRow(x, "added") for x in th.added]
    rows += [ThresholdChangeRow(x, "removed") for x in th.removed]
    rows += [ThresholdChangeRow(x, "; ".join(x.changes)) for x in th.changed]
    return rows


def markdown(release: TelemetryRelease, la: str, lb: str) -> list[str]:
    out = ["### Thresholds reading a metric that is gone", ""]
    orphans = release.orphaned_thresholds
    out += md_table(["Threshold", "Kind", "Condition", "Missing", "How it read them", "Where"], [
        [cell(x.name), cell(x.source_kind), f"{cell(x.op)} {_value(x)}".strip() or "—",
         cell(", ".join(x.missing)), cell(_how(x)), at(x)] for x in orphans]) if orphans else [ORPHANS_NONE, ""]
    me = release.metrics
    out += ["### Metrics", ""]
    rows = metric_rows(me)
    out += md_table(["Metric", "Origin", "Change", "Breaking", "Where"], [
        [cell(r.name), cell(r.origin or "own"), cell(r.change), "yes" if r.breaking else "", at(r.at)]
        for r in rows]) if rows else ["No metric added, removed, renamed or retyped.", ""]
    if me.renames_not_searched:
        out += [f"Renames not looked for: {cell(me.renames_not_searched)}.", ""]
    th = threshold_rows(release.thresholds)
    out += ["### Thresholds added, removed or changed", ""]
    out += md_table(["Threshold", "Kind", "Condition", "Change", "Where"], [
        [cell(r.x.name), cell(r.x.source_kind), f"{cell(r.x.op)} {_value(r.x)}".strip() or "—",
         cell(r.change), at(r.x)] for r in th]) if th else ["No threshold added, removed or changed.", ""]
    return out


def html(release: TelemetryRelease, la: str, lb: str) -> str:
    orphans = release.orphaned_thresholds
    orphan_table = html_table(["Threshold", "Kind", "Condition", "Missing series", "How it read them", "Where"], [
        [esc(x.name), esc(x.source_kind), f'<b>{esc(x.op)} {esc(_value(x))}</b>',
         f'<span class=sym>{esc(", ".join(x.missing))}</span>', esc(_how(x)), html_loc(x)] for x in orphans],
        limit=HTML_ROW_LIMIT) if orphans else f'<p class=muted>{esc(ORPHANS_NONE)}</p>'
    rows = metric_rows(release.metrics)
    metrics = html_table(["Metric", "Origin", "Change", "", "Where"], [
        [f'<span class=sym>{esc(r.name)}</span>', esc(r.origin or "own"), esc(r.change),
         BREAKING if r.breaking else "", html_loc(r.at)] for r in rows], limit=HTML_ROW_LIMIT) if rows \
        else '<p class=muted>No metric added, removed, renamed or retyped.</p>'
    th = threshold_rows(release.thresholds)
    changes = html_table(["Threshold", "Kind", "Condition", "Change", "Where"], [
        [esc(r.x.name), esc(r.x.source_kind), f'<b>{esc(r.x.op)} {esc(_value(r.x))}</b>',
         esc(r.change), html_loc(r.x)] for r in th], limit=HTML_ROW_LIMIT) if th \
        else '<p class=muted>No threshold added, removed or changed.</p>'
    return (f'<section id=release-thresholds><h3>Thresholds reading a metric that is gone</h3>{orphan_table}</section>'
            f'<section id=release-metrics><h3>Metrics</h3>{metrics}</section>'
            f'<section id=release-threshold-changes><h3>Thresholds added, removed or changed</h3>{changes}</section>')
