"""A release's metric changes (what breaks dashboards and alerts), the thresholds that stop
working, and the thresholds added, removed or changed, over two telemetry summaries (:mod:`.summary`).

A change is one metric name: a metric's twins (its Ray series) go with it and are named on its
row, never counted as a second change; a twin that comes or goes while its metric stays is a
change of its own (``twins_changed``). A row says whose the metric is (``origin``: "" for the
system's own, else the library that provides the series), so a change that is only a library's
reads as such.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Sequence

from comparator.kinds.telemetry.records import (Metric, MetricChanges, MetricPresence, MetricRef, OrphanedThreshold,
                                                Provenance, Reading, RenamedMetric, RetypedMetric, TelemetrySide,
                                                ThresholdChange, ThresholdChanges, ThresholdPresence, ThresholdRef,
                                                ThresholdRow, TwinsChanged)
from comparator.records import Where

RENAME_SIMILARITY = 0.8  # difflib ratio above which a removed+added metric pair of one type is a rename
# Pairs of a removed and an added metric compared for a rename. A real release changes a few dozen
# metrics; evidence with thousands on each side would cost hours of string matching, so beyond this
# renames are not looked for (and the findings say so).
RENAME_PAIRS = 250_000


@dataclasses.dataclass(frozen=True, slots=True)
class NamedMetric:
    """A metric name of one side: its first definition, whose it is, and its twins' libraries."""

    row: Metric
    origin: str
    twins: frozenset[str]

    def ref(self) -> MetricRef:
        m = self.row
        return MetricRef(m.name, m.type, self.origin, tuple(sorted(self.twins)), m.path, m.line)

    def presence(self, breaking: bool) -> MetricPresence:
        m = self.row
        return MetricPresence(m.name, m.type, self.origin, tuple(sorted(self.twins)), m.path, m.line, breaking)


def _by_name(tele: TelemetrySide) -> dict[str, NamedMetric]:
    """Each metric name of one side. A name the code defines itself is its own even when a
    library also provides it."""
    first: dict[str, Metric] = {}
    for row in (*tele.metrics, *tele.library_metrics):
        first.setdefault(row.name, row)
    twins: dict[str, set[str]] = {name: set() for name in first}
    for twin in tele.twins:
        if twin.twin_of.name in twins:
            twins[twin.twin_of.name].add(twin.library)
    return {name: NamedMetric(row, row.origin, frozenset(twins[name])) for name, row in first.items()}


def diff_metrics(ta: TelemetrySide, tb: TelemetrySide) -> MetricChanges:
    """Metrics added, removed, renamed (same type and origin, similar name) and retyped between
    releases, and twins that came or went beside a metric that stayed."""
    ma, mb = _by_name(ta), _by_name(tb)
    removed_names = sorted(set(ma) - set(mb))
    added_names = sorted(set(mb) - set(ma))
    candidates = []
    searched = len(removed_names) * len(added_names) <= RENAME_PAIRS
    for r in removed_names if searched else ():
        for n in added_names:
            if ma[r].row.type != mb[n].row.type or ma[r].origin != mb[n].origin:
                continue
            matcher = difflib.SequenceMatcher(None, r, n)
            if matcher.real_quick_ratio() < RENAME_SIMILARITY or matcher.quick_ratio() < RENAME_SIMILARITY:
                continue  # upper bounds of the ratio: most pairs stop here
            ratio = matcher.ratio()
            if ratio >= RENAME_SIMILARITY:
                candidates.append((-ratio, r, n))
    renamed: list[RenamedMetric] = []
    used_r: set[str] = set()
    used_n: set[str] = set()
    for neg, r, n in sorted(candidates):
        if r in used_r or n in used_n:
            continue
        used_r.add(r)
        used_n.add(n)
        renamed.append(RenamedMetric(ma[r].ref(), mb[n].ref(), round(-neg, 3), mb[n].origin, True))
    both = sorted(set(ma) & set(mb))
    retyped = tuple(RetypedMetric(n, ma[n].row.type, mb[n].row.type, mb[n].origin,
                                  Where(ma[n].row.path, ma[n].row.line), True, mb[n].row.path, mb[n].row.line)
                    for n in both if ma[n].row.type != mb[n].row.type)
    twins_changed = tuple(TwinsChanged(n, tuple(sorted(mb[n].twins - ma[n].twins)),
                                       tuple(sorted(ma[n].twins - mb[n].twins)), bool(ma[n].twins - mb[n].twins),
                                       mb[n].row.path, mb[n].row.line)
                          for n in both if ma[n].twins != mb[n].twins)
    return MetricChanges(
        added=tuple(mb[n].presence(False) for n in added_names if n not in used_n),
        removed=tuple(ma[n].presence(True) for n in removed_names if n not in used_r),
        renamed=tuple(sorted(renamed, key=lambda r: r.from_.name)),
        retyped=retyped,
        twins_changed=twins_changed,
        renames_not_searched=None if searched else (f"{len(removed_names):,} removed x {len(added_names):,} added "
                                                    f"metrics exceed {RENAME_PAIRS:,} pairs"),
    )


def _series(tele: TelemetrySide) -> dict[str, str]:
    """Every series a scrape of the system shows -> whose it is ("" own, else the library; a
    twin's series are its library's)."""
    out: dict[str, str] = {}
    for row in (*tele.metrics, *tele.twins, *tele.library_metrics):
        twin = row.provenance is Provenance.TWIN
        whose = row.origin or (row.library if twin else "")
        for name in (row.name, *row.exposed_names):
            if twin and name == row.name:
                continue  # a twin's registered name is its metric's; only its own series are its
            out[name] = "" if name in out and out[name] == "" else whose
    return out


def _series_renames(metrics: MetricChanges, ta: TelemetrySide, tb: TelemetrySide) -> dict[str, str]:
    """Old series name -> new series name, for each series of a renamed metric (``x_bucket`` of a
    histogram renamed ``x`` -> ``y`` is ``y_bucket``): what a threshold on the old name must read now."""
    ma, mb = _by_name(ta), _by_name(tb)
    out: dict[str, str] = {}
    for r in metrics.renamed:
        old, new = r.from_.name, r.to.name
        new_series = set(mb[new].row.exposed_names)
        for series in (old, *ma[old].row.exposed_names):
            if series.startswith(old) and new + series[len(old):] in new_series | {new}:
                out[series] = new + series[len(old):]
    return out


def orphaned_thresholds(ta: TelemetrySide, tb: TelemetrySide,
                        metrics: MetricChanges | None = None) -> tuple[OrphanedThreshold, ...]:
    """Thresholds (of either release) that read a series the old release exposed and the new does
    not: in their expression, behind the recording rules they read (``raw_metrics``), or through a
    definition the extractor linked them to (an HPA on a prometheus-adapter metric). When the
    metric was renamed, ``renamed_to`` gives the series to read instead."""
    series_a, series_b = _series(ta), _series(tb)
    gone = {name: whose for name, whose in series_a.items() if name not in series_b}
    names_b = set(_by_name(tb))
    gone_names = {name: entry.origin for name, entry in _by_name(ta).items() if name not in names_b}
    renames = _series_renames(metrics or diff_metrics(ta, tb), ta, tb)
    rows, seen = [], set()
    for side, tele in (("b", tb), ("a", ta)):
        for t in tele.thresholds:
            key = (t.path, t.line, t.name, t.expr)
            if key in seen:
                continue
            direct = sorted(set(t.metrics) & set(gone))
            recorded = sorted(set(t.raw_metrics) & set(gone))
            linked = sorted(set(t.links) & set(gone_names)) if not (direct or recorded) else []
            missing = sorted({*direct, *recorded, *linked})
            if not missing:
                continue
            seen.add(key)
            # whose each missing name was: a series of the old release, else a metric it linked
            whose = {gone[m] if m in gone else gone_names[m] for m in missing}
            rows.append(OrphanedThreshold(
                name=t.name, source_kind=t.source_kind, op=t.op, value=t.value, missing=tuple(missing),
                renamed_to={m: renames[m] for m in missing if m in renames},
                reads=Reading.DIRECT if direct else (Reading.RECORDED if recorded else Reading.LINK),
                through=tuple(v for v in t.via if v.startswith(("record:", "adapter:", "alert:"))),
                origin="" if "" in whose else ", ".join(sorted(whose)),
                release=side, breaking=True, path=t.path, line=t.line))
    return tuple(sorted(rows, key=lambda r: (r.path, r.line, r.name)))


def _threshold_ref(t: ThresholdRow) -> ThresholdRef:
    return ThresholdRef(t.name, t.source_kind, t.op, t.value, t.expr, t.path, t.line)


def _same(old: ThresholdRow, new: ThresholdRow) -> bool:
    """Unchanged: the same expression, value, duration, severity, series read and file (a line that
    moved within its file is no change)."""
    return (old.expr, old.value, old.for_, old.severity, old.metrics, old.raw_metrics, old.path) == \
        (new.expr, new.value, new.for_, new.severity, new.metrics, new.raw_metrics, new.path)


def _changes(old: ThresholdRow, new: ThresholdRow) -> list[str]:
    """What changed in one threshold, in words an operator reads."""
    out = []
    if old.value != new.value:
        out.append(f"value {_num(old.value)} → {_num(new.value)}")
    for key, was, now in (("for", old.for_, new.for_), ("severity", old.severity, new.severity)):
        if was != now:
            out.append(f"{key} {was or '(none)'} → {now or '(none)'}")
    for word, was_read, now_read in (("reads", old.metrics, new.metrics),
                                     ("reads behind recording rules", old.raw_metrics, new.raw_metrics)):
        gained, lost = sorted(set(now_read) - set(was_read)), sorted(set(was_read) - set(now_read))
        if gained or lost:
            out.append(f"{word}: " + ", ".join([*(f"+{m}" for m in gained), *(f"-{m}" for m in lost)]))
    if _shape(old.expr) != _shape(new.expr) and not any(c.startswith("reads") for c in out):
        out.append("expression rewritten")
    if old.path != new.path:
        out.append(f"moved from {old.path}:{old.line}")
    return out


_TRAILING_BOUND = re.compile(r"\s*(?:[<>]=?|[=!]=)\s*[-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?\s*$")


def _shape(expr: str) -> str:
    """An expression without its trailing bound: a new value alone is no rewrite."""
    return _TRAILING_BOUND.sub("", " ".join(expr.split()))


def _num(value: float | None) -> str:
    return "(none)" if value is None else f"{value:g}"


def _changed(old: ThresholdRow, new: ThresholdRow, changes: Sequence[str]) -> ThresholdChange:
    return ThresholdChange(new.name, new.source_kind, new.op, new.value, new.expr, new.path, new.line,
                           changes=tuple(changes), old_value=old.value, old_location=Where(old.path, old.line),
                           breaking=False)


def diff_thresholds(ta: TelemetrySide, tb: TelemetrySide) -> ThresholdChanges:
    """Thresholds added, removed and changed between releases. A threshold is known by its source
    kind, name and comparison (an alert ``X >``, a dashboard panel's step ``>=``); of several with
    one key (a panel's two steps), those equal on both sides pair first, the rest in file order."""
    groups: dict[tuple[str, str, str], tuple[list[ThresholdRow], list[ThresholdRow]]] = {}
    for side, tele in ((0, ta), (1, tb)):
        for t in tele.thresholds:
            groups.setdefault((t.source_kind, t.name, t.op), ([], []))[side].append(t)
    added: list[ThresholdRow] = []
    removed: list[ThresholdRow] = []
    changed: list[ThresholdChange] = []
    for key in sorted(groups):
        olds, news = list(groups[key][0]), list(groups[key][1])
        for old in list(olds):
            twin = next((n for n in news if _same(old, n)), None)
            if twin is not None:  # unchanged (a line that moved within its file is no change)
                olds.remove(old)
                news.remove(twin)
        for old, new in zip(olds, news):
            changed.append(_changed(old, new, _changes(old, new)))
        removed += olds[len(news):]
        added += news[len(olds):]
    # A dashboard panel or an alert renamed in place (same file, line, kind and comparison) is a
    # change of that threshold, not one removed and another added.
    for old in list(removed):
        match = next((n for n in added if (n.source_kind, n.path, n.line, n.op) ==
                      (old.source_kind, old.path, old.line, old.op)), None)
        if match is not None:
            removed.remove(old)
            added.remove(match)
            changed.append(_changed(old, match, [f"renamed from {old.name}", *_changes(old, match)]))

    def presence(t: ThresholdRow) -> ThresholdPresence:
        return ThresholdPresence(t.name, t.source_kind, t.op, t.value, t.expr, t.path, t.line, breaking=False)

    def order(row: ThresholdRef) -> tuple[str, int, str, str, str]:
        return (row.path, row.line, row.name, row.op, _num(row.value))
    return ThresholdChanges(added=tuple(sorted(map(presence, added), key=order)),
                            removed=tuple(sorted(map(presence, removed), key=order)),
                            changed=tuple(sorted(changed, key=order)))
