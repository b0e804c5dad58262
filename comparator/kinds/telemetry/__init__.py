"""Telemetry: each system's metrics (its own, the series its libraries add, the twins a second client
library makes of its own) with the thresholds that read them, the metric crosswalk between two
systems, and a release's metric and threshold changes (what breaks dashboards and alerts).

The computing lives in :mod:`.summary` (one side), :mod:`.crosswalk` (two systems) and
:mod:`.release` (two releases); this module wires them into the comparator's protocol and words
the takeaways. Rendering is :mod:`.render` and :mod:`.render_release`.
"""

from __future__ import annotations

from comparator.kind import Counts, EvidenceKind, Labels, Takeaway, apart_paths, plural
from comparator.kinds.telemetry import render, render_release
from comparator.kinds.telemetry.crosswalk import crosswalk_metrics, library_series
from comparator.kinds.telemetry.records import TelemetryRelease, TelemetrySection, TelemetrySide
from comparator.kinds.telemetry.release import diff_metrics, diff_thresholds, orphaned_thresholds
from comparator.kinds.telemetry.summary import summarize_telemetry
from comparator.records import Verdict
from extractor.evidence.read import Evidence
from extractor.telemetry.records import METRICS, THRESHOLDS


class TelemetryKind(EvidenceKind[TelemetrySide, TelemetrySection, TelemetryRelease]):
    key = "telemetry"
    title = "Telemetry"
    release_rank = 2

    def summarize(self, evidence: Evidence) -> TelemetrySide:
        return summarize_telemetry(evidence.of(METRICS), evidence.of(THRESHOLDS), evidence.diagnostics,
                                   apart_paths(evidence))

    def compare(self, a: TelemetrySide, b: TelemetrySide) -> TelemetrySection:
        return TelemetrySection(a, b, crosswalk_metrics(a, b), library_series(a, b))

    def diff_release(self, a: TelemetrySide, b: TelemetrySide) -> TelemetryRelease:
        metrics = diff_metrics(a, b)
        return TelemetryRelease(metrics, orphaned_thresholds(a, b, metrics), diff_thresholds(a, b))

    def count(self, section: TelemetrySection, release: TelemetryRelease | None) -> Counts:
        if release is not None:
            me, th = release.metrics, release.thresholds
            rows: list[Verdict] = [*me.added, *me.removed, *me.renamed, *me.retyped, *me.twins_changed,
                                   *release.orphaned_thresholds, *th.added, *th.removed, *th.changed]
            return Counts.of(rows)
        # the systems' own metrics by name: a library's series and a twin are no design difference
        names = [{m.name for m in side.metrics} for side in (section.a, section.b)]
        return Counts(len(names[0] ^ names[1]), 0)

    def release_takeaways(self, section: TelemetrySection, release: TelemetryRelease,
                          labels: Labels) -> list[Takeaway]:
        out = []
        orphans = release.orphaned_thresholds
        if orphans:  # first: an alert that silently stops firing is what an operator must see
            renamed = sum(1 for o in orphans if o.renamed_to)
            out.append(Takeaway(
                f"{plural(len(orphans), 'threshold')} read a metric that {labels[1]} no longer exposes"
                + (f" ({renamed:,} of them because the metric was renamed)" if renamed else "")
                + f": {', '.join(o.name for o in orphans[:5])}{' …' if len(orphans) > 5 else ''}.",
                "release-thresholds"))
        me = release.metrics
        if me.added or me.removed or me.renamed or me.retyped or me.twins_changed:
            broken = len(me.removed) + len(me.renamed) + len(me.retyped)
            library = sum(1 for r in (*me.added, *me.removed) if r.origin)
            text = (f"Telemetry: {plural(len(me.added), 'metric')} added, {len(me.removed):,} removed, "
                    f"{len(me.renamed):,} renamed, {len(me.retyped):,} retyped"
                    + (f" ({library:,} of the added or removed are a library's series)" if library else "")
                    + (f"; {broken:,} of these break dashboards and alerts that read them." if broken else
                       "; no existing metric changed name or type."))
        else:
            text = f"Telemetry: the {plural(section.b.own_names, 'metric')} keep their names and types."
        out.append(Takeaway(text, "release-metrics"))
        th = release.thresholds
        if th.added or th.removed or th.changed:
            out.append(Takeaway(f"Thresholds: {len(th.added):,} added, {len(th.removed):,} removed, "
                                f"{len(th.changed):,} changed.", "release-threshold-changes"))
        return out

    def takeaways(self, section: TelemetrySection, release: TelemetryRelease | None,
                  labels: Labels) -> list[Takeaway]:
        la, lb = labels

        def tele(t: TelemetrySide) -> str:
            dominant = f"{t.dominant_type} dominant" if t.dominant_type else "none dominant"
            extra = []
            if t.twins_by_library:
                extra.append(" and ".join(f"{n:,} exposed again through {lib}"
                                          for lib, n in t.twins_by_library.items()))
            if t.library_by_origin:
                extra.append(f"{sum(t.library_by_origin.values()):,} more series from "
                             f"{', '.join(t.library_by_origin)}")
            if t.apart_by_layer:
                extra.append(" and ".join(f"{n:,} more in {title.lower()}, set apart"
                                          for title, n in t.apart_by_layer.items()))
            more = f" ({'; '.join(extra)})" if extra else ""
            linked = len(t.thresholds) - t.unlinked_thresholds
            return (f"{plural(t.own_names, 'metric')} of its own ({dominant}){more} with "
                    f"{plural(len(t.thresholds), 'threshold')} ({linked:,} linked to a metric), "
                    f"{t.with_threshold:,} own metric(s) covered by one")

        out = [Takeaway(f"Production telemetry: {la} specifies {tele(section.a)}; {lb} specifies "
                        f"{tele(section.b)}.", "telemetry")]
        cross = [r for r in section.crosswalk if not r.same_name]
        if cross:
            best = cross[0]
            note = f" ({best.unit_note})" if best.unit_note else ""
            out.append(Takeaway(f"Metric crosswalk: {plural(len(cross), 'pair')} of metrics measure the same thing "
                                f"under different names; the closest is {best.a.name} and "
                                f"{best.b.name}{note}.", "crosswalk"))
        return out

    def markdown(self, section: TelemetrySection, la: str, lb: str) -> list[str]:
        return render.markdown(section, la, lb)

    def html(self, section: TelemetrySection, la: str, lb: str) -> str:
        return render.html(section, la, lb)

    def release_markdown(self, release: TelemetryRelease, la: str, lb: str) -> list[str]:
        return render_release.markdown(release, la, lb)

    def release_html(self, release: TelemetryRelease, la: str, lb: str) -> str:
        return render_release.html(release, la, lb)


KIND = TelemetryKind()
__all__ = ["KIND", "TelemetryKind", "crosswalk_metrics", "diff_metrics", "diff_thresholds", "library_series",
           "orphaned_thresholds", "summarize_telemetry"]

