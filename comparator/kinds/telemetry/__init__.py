"""Telemetry: each system's metrics with the thresholds that read them, the metric crosswalk
between two systems, and a release's metric changes (what breaks dashboards and alerts)."""

from __future__ import annotations

import collections
import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from comparator.kind import Counts, EvidenceKind, Takeaway, loc, plural
from comparator.kinds.telemetry import render
from comparator.kinds.telemetry.crosswalk import crosswalk_metrics
from extractor.evidence import Evidence
from extractor.telemetry.records import MetricDefinition, Threshold

RENAME_SIMILARITY = 0.8  # difflib ratio above which a removed+added metric pair of one type is a rename
# Pairs of a removed and an added metric compared for a rename. A real release changes a few dozen
# metrics; evidence with thousands on each side would cost hours of string matching, so beyond this
# renames are not looked for (and the findings say so).
RENAME_PAIRS = 250_000


class TelemetryKind(EvidenceKind):
    key = "telemetry"
    title = "Telemetry"
    release_rank = 2

    def summarize(self, evidence: Evidence) -> dict[str, Any]:
        return summarize_telemetry(evidence.metrics, evidence.thresholds)

    def compare(self, a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
        return {"a": a, "b": b, "crosswalk": crosswalk_metrics(a, b)}

    def diff_release(self, a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
        return {"metrics": diff_metrics(a, b), "orphaned_thresholds": orphaned_thresholds(a, b)}

    def count(self, section: Mapping[str, Any], release: Mapping[str, Any] | None) -> Counts:
        if release:
            me = release["metrics"]
            rows = [*me["added"], *me["removed"], *me["renamed"], *me["retyped"], *release["orphaned_thresholds"]]
            return Counts(len(rows), sum(1 for r in rows if r["breaking"]))
        names = [{m["name"] for m in section[side]["metrics"]} for side in ("a", "b")]
        return Counts(len(names[0] ^ names[1]), 0)

    def release_takeaways(self, section: Mapping[str, Any], release: Mapping[str, Any],
                          labels: Sequence[str]) -> list[Takeaway]:
        me = release["metrics"]
        if any(me[k] for k in ("added", "removed", "renamed", "retyped")):
            broken = len(me["removed"]) + len(me["renamed"]) + len(me["retyped"])
            text = (f"Telemetry: {plural(len(me['added']), 'metric')} added, {len(me['removed']):,} removed, "
                    f"{len(me['renamed']):,} renamed, {len(me['retyped']):,} retyped"
                    + (f"; {broken:,} of these break dashboards and alerts that read them." if broken else
                       "; no existing metric changed name or type."))
        else:
            text = f"Telemetry: the {plural(len(section['b']['metrics']), 'metric')} keep their names and types."
        out = [Takeaway(text, "release-metrics")]
        if release["orphaned_thresholds"]:
            out.append(Takeaway(f"{plural(len(release['orphaned_thresholds']), 'threshold')} read a metric that "
                                f"{labels[1]} no longer defines.", "release-thresholds"))
        return out

    def takeaways(self, section: Mapping[str, Any], release: Mapping[str, Any] | None,
                  labels: Sequence[str]) -> list[Takeaway]:
        la, lb = labels

        def tele(t: Mapping[str, Any]) -> str:
            dominant = f"{t['dominant_type']} dominant" if t["dominant_type"] else "none dominant"
            return (f"{plural(len(t['metrics']), 'metric')} ({dominant}) with "
                    f"{plural(len(t['thresholds']), 'threshold')}, {t['with_threshold']:,} metric(s) covered by one")

        out = [Takeaway(f"Production telemetry: {la} specifies {tele(section['a'])}; {lb} specifies "
                        f"{tele(section['b'])}.", "telemetry")]
        cross = [r for r in section["crosswalk"] if not r["same_name"]]
        if cross:
            best = cross[0]
            note = f" ({best['unit_note']})" if best["unit_note"] else ""
            out.append(Takeaway(f"Metric crosswalk: {plural(len(cross), 'pair')} of metrics measure the same thing "
                                f"under different names; the closest is {best['a']['name']} and "
                                f"{best['b']['name']}{note}.", "crosswalk"))
        return out

    markdown = staticmethod(render.markdown)
    html = staticmethod(render.html)
    release_markdown = staticmethod(render.release_markdown)
    release_html = staticmethod(render.release_html)


def _metric_row(metric: MetricDefinition) -> dict[str, Any]:
    return {
        "name": metric.name,
        "type": metric.type.value,
        "unit": metric.unit,
        "help": metric.help[:300],
        "labels": sorted(metric.labels),
        "language": metric.language,
        "dynamic": metric.dynamic,
        "exposed_names": sorted(metric.exposed_names),
        **loc(metric),
    }


def _threshold_row(t: Threshold) -> dict[str, Any]:
    return {
        "name": t.name,
        "expr": t.expr[:400],
        "metrics": sorted(t.metrics),
        "links": sorted(t.links),
        "op": t.op,
        "value": t.value,  # finite or None: the evidence loader refuses NaN and infinities
        "for": t.for_,
        "severity": t.severity,
        "source_kind": t.source_kind.value,
        "default": t.default,
        **loc(t),
    }


def _reads(metric: Mapping[str, Any], threshold: Mapping[str, Any]) -> bool:
    names = {metric["name"], *metric["exposed_names"]}
    return bool(names & (set(threshold["metrics"]) | set(threshold["links"])))


def summarize_telemetry(metrics: Sequence[MetricDefinition], thresholds: Sequence[Threshold]) -> dict[str, Any]:
    """One system's metrics, each with the thresholds that read it, and the thresholds."""
    rows = sorted((_metric_row(m) for m in metrics), key=lambda m: (m["name"], m["path"], m["line"]))
    limits = sorted((_threshold_row(t) for t in thresholds),
                    key=lambda t: (t["path"], t["line"], t["name"], t["expr"], t["op"], str(t["value"])))
    for metric in rows:
        metric["thresholds"] = [{k: t[k] for k in ("name", "op", "value", "source_kind", "severity", "default",
                                                   "path", "line")}
                                for t in limits if _reads(metric, t)]
    known = {n for m in rows for n in (m["name"], *m["exposed_names"])}
    for t in limits:
        t["reads_defined_metric"] = bool(known & (set(t["metrics"]) | set(t["links"])))
    by_type = collections.Counter(m["type"] for m in rows)
    return {
        "metrics": rows,
        "thresholds": limits,
        "by_type": dict(sorted(by_type.items())),
        "dominant_type": min(by_type, key=lambda t: (-by_type[t], t)) if by_type else "",
        "without_threshold": [m["name"] for m in rows if not m["thresholds"]],
        "with_threshold": sum(1 for m in rows if m["thresholds"]),
        "unlinked_thresholds": sum(1 for t in limits if not t["reads_defined_metric"]),
        "empty_reason": "" if rows else "no metric definitions in this evidence (no prometheus_client or "
                                        "prometheus-cpp definitions found, or the metrics step did not run)",
    }


def diff_metrics(ta: Mapping[str, Any], tb: Mapping[str, Any]) -> dict[str, Any]:
    """Metrics added, removed, renamed (same type, similar name) and retyped between releases."""
    ma = {m["name"]: m for m in ta["metrics"]}
    mb = {m["name"]: m for m in tb["metrics"]}
    removed_names = sorted(set(ma) - set(mb))
    added_names = sorted(set(mb) - set(ma))
    candidates = []
    searched = len(removed_names) * len(added_names) <= RENAME_PAIRS
    for r in removed_names if searched else ():
        for n in added_names:
            if ma[r]["type"] != mb[n]["type"]:
                continue
            matcher = difflib.SequenceMatcher(None, r, n)
            if matcher.real_quick_ratio() < RENAME_SIMILARITY or matcher.quick_ratio() < RENAME_SIMILARITY:
                continue  # upper bounds of the ratio: most pairs stop here
            ratio = matcher.ratio()
            if ratio >= RENAME_SIMILARITY:
                candidates.append((-ratio, r, n))
    renamed, used_r, used_n = [], set(), set()
    for neg, r, n in sorted(candidates):
        if r in used_r or n in used_n:
            continue
        used_r.add(r)
        used_n.add(n)
        renamed.append({"from": _metric_ref(ma[r]), "to": _metric_ref(mb[n]), "similarity": round(-neg, 3),
                        "breaking": True})
    retyped = [{"name": n, "old_type": ma[n]["type"], "new_type": mb[n]["type"],
                "old_location": {"path": ma[n]["path"], "line": ma[n]["line"]},
                "breaking": True, "path": mb[n]["path"], "line": mb[n]["line"]}
               for n in sorted(set(ma) & set(mb)) if ma[n]["type"] != mb[n]["type"]]
    out = {
        "added": [dict(_metric_ref(mb[n]), breaking=False) for n in added_names if n not in used_n],
        "removed": [dict(_metric_ref(ma[n]), breaking=True) for n in removed_names if n not in used_r],
        "renamed": sorted(renamed, key=lambda r: r["from"]["name"]),
        "retyped": retyped,
    }
    if not searched:
        out["renames_not_searched"] = (f"{len(removed_names):,} removed x {len(added_names):,} added metrics "
                                       f"exceed {RENAME_PAIRS:,} pairs")
    return out


def _metric_ref(m: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": m["name"], "type": m["type"], "path": m["path"], "line": m["line"]}


def orphaned_thresholds(ta: Mapping[str, Any], tb: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Thresholds (of either release) that read a series the old release exposed and the new does not."""
    exposed_a = {n for m in ta["metrics"] for n in (m["name"], *m["exposed_names"])}
    exposed_b = {n for m in tb["metrics"] for n in (m["name"], *m["exposed_names"])}
    gone = exposed_a - exposed_b
    rows, seen = [], set()
    for side, tele in (("b", tb), ("a", ta)):
        for t in tele["thresholds"]:
            key = (t["path"], t["line"], t["name"], t["expr"])
            missing = sorted(set(t["metrics"]) & gone)
            if missing and key not in seen:
                seen.add(key)
                rows.append({"name": t["name"], "source_kind": t["source_kind"], "missing": missing,
                             "release": side, "breaking": True, "path": t["path"], "line": t["line"]})
    return sorted(rows, key=lambda r: (r["path"], r["line"], r["name"]))


KIND = TelemetryKind()
__all__ = ["KIND", "TelemetryKind", "crosswalk_metrics", "diff_metrics", "orphaned_thresholds", "summarize_telemetry"]
