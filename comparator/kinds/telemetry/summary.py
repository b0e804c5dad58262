"""One system's telemetry as production sees it: the metrics the system defines itself, the series
libraries add for it, the twins a second client library makes of its own metrics, and the
thresholds with what they read.

Three sets, counted apart so that nothing is counted twice:

- **own** metrics (``origin`` empty): the system's design, counted by name (a family that two code
  paths register, vLLM's v0 and v1 engines, is one metric with two definition sites);
- **library-provided** series (``origin`` set: prometheus_client's default collectors, the FastAPI
  instrumentator's HTTP metrics, OpenTelemetry's ``target_info``): exposed because the code uses a
  library, not designed by it;
- **twins**: one construction site that the extractor followed into two client libraries (vLLM's
  stat logger swaps its ``prometheus_client`` classes for Ray wrappers in a subclass): the same
  measurement, exposed a second time under the other library's names (``ray_<name>``). The record
  of the library first in :data:`PRIMARY_LIBRARIES` is the metric; the others are its twins.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from comparator.kinds.telemetry.records import (LinkedMetric, Metric, MetricThreshold, OwnMetric, Provenance,
                                                Reading, TelemetrySide, ThresholdRow, TwinMetric, TwinOf,
                                                UnresolvedName)
from comparator.records import Where
from extractor.model import Diagnostic
from extractor.telemetry.records import MetricDefinition, MetricType, Threshold

# Which record of a site is the metric when a site yields records of several libraries. Ray comes
# last: its agent re-exports what the code measures under ray_-prefixed names, and the site's
# other library is the one the code's own class names (vLLM's PrometheusStatLogger).
PRIMARY_LIBRARIES = ("prometheus_client", "prometheus-cpp", "opentelemetry", "ray")
OWN, TWIN, LIBRARY = Provenance.OWN, Provenance.TWIN, Provenance.LIBRARY
# Diagnostics of the metrics step that stand for a metric the catalogue may lack: a name (or type)
# the code does not give as text, a factory chain deeper than the extractor follows.
UNRESOLVED_CODES = ("metric-name-unresolved", "metric-type-unresolved", "metric-factory-too-deep")


def _rank(library: str) -> tuple[int, str]:
    return (PRIMARY_LIBRARIES.index(library) if library in PRIMARY_LIBRARIES else len(PRIMARY_LIBRARIES) - 1,
            library)


def _family(metric: MetricDefinition) -> str:
    """The name a twin shares with its metric: prometheus_client strips a counter's trailing
    ``_total`` when it registers the name, Ray keeps it (vLLM's ``vllm:prompt_tokens_total`` is
    ``vllm:prompt_tokens`` for one and ``vllm:prompt_tokens_total`` for the other)."""
    if metric.type is MetricType.COUNTER and metric.name.endswith("_total"):
        return metric.name[: -len("_total")]
    return metric.name


def split_metrics(metrics: Iterable[MetricDefinition]) -> tuple[list[MetricDefinition],
                                                                  list[tuple[MetricDefinition, MetricDefinition]],
                                                                  list[MetricDefinition]]:
    """(own metrics, (twin, its metric) pairs, library-provided series)."""
    own: list[MetricDefinition] = []
    library: list[MetricDefinition] = []
    sites: dict[tuple[str, int, str, str], list[MetricDefinition]] = collections.defaultdict(list)
    for m in metrics:
        if m.origin:
            library.append(m)
        else:
            sites[(m.path, m.line, m.type.value, _family(m))].append(m)
    twins: list[tuple[MetricDefinition, MetricDefinition]] = []
    for group in sites.values():
        group.sort(key=lambda m: (_rank(m.library), m.name, m.via))
        primary = group[0]
        for m in group:
            if m.library != primary.library:
                twins.append((m, primary))
            else:  # one library, several names at one site (a name held in a variable): each a metric
                own.append(m)
    return own, twins, library


M = TypeVar("M", bound=Metric)


def _metric_row(metric: MetricDefinition, provenance: Provenance, thresholds: tuple[MetricThreshold, ...]) -> Metric:
    """The row every metric has, whatever its provenance."""
    return Metric(name=metric.name, type=metric.type.value, unit=metric.unit, help=metric.help[:300],
                  labels=tuple(sorted(metric.labels)), language=metric.language, dynamic=metric.dynamic,
                  unresolved=metric.unresolved, exposed_names=tuple(sorted(metric.exposed_names)),
                  library=metric.library, via=metric.via, origin=metric.origin, provenance=provenance,
                  quantiles=tuple(metric.quantiles), exemplars=metric.exemplars, path=metric.path, line=metric.line,
                  thresholds=thresholds)


def _fields(row: Metric) -> dict[str, Any]:
    """A metric row's fields, to extend it into an own metric's or a twin's row."""
    return {f.name: getattr(row, f.name) for f in dataclasses.fields(row)}


def _reading(metric: MetricDefinition, provenance: Provenance, threshold: Threshold) -> Reading | None:
    """How ``threshold`` reads ``metric``: ``direct`` (a series of it in the expression),
    ``recorded`` (behind a recording rule), ``link`` (a definition the extractor linked by name,
    e.g. through a prometheus-adapter rule), or None when it does not. A twin is read only through
    its own series: its name is its metric's, and a link by name belongs to the metric."""
    exposed = set(metric.exposed_names)
    if exposed & set(threshold.metrics):
        return Reading.DIRECT
    if exposed & set(threshold.raw_metrics):
        return Reading.RECORDED
    if provenance is not TWIN and metric.name in threshold.links:
        return Reading.LINK
    return None


def _distinct(rows: Sequence[M]) -> dict[str, M]:
    """Rows by name, the first definition site of each name (rows are sorted by name, path, line)."""
    out: dict[str, M] = {}
    for row in rows:
        out.setdefault(row.name, row)
    return out


def unresolved_metrics(rows: Sequence[Metric], diagnostics: Iterable[Diagnostic]) -> tuple[UnresolvedName, ...]:
    """Metric names (and types) the extractor could not read, with why: metrics of ``rows`` whose
    name is a pattern (``dynamic``: an f-string over a run-time value) and the metrics step's
    diagnostics for a name or type it could not read at all. A twin's pattern is its metric's,
    listed once."""
    found = [UnresolvedName(m.name, m.unresolved or "the name is built at run time", "pattern", m.via, m.path, m.line)
             for m in rows if m.dynamic]
    found += [UnresolvedName("", d.message, d.code.removeprefix("metric-"), "", d.path, d.line)
              for d in diagnostics if d.code in UNRESOLVED_CODES]
    return tuple(sorted(found, key=lambda r: (r.path, r.line, r.name, r.reason)))


def summarize_telemetry(metrics: Sequence[MetricDefinition], thresholds: Sequence[Threshold],
                        diagnostics: Sequence[Diagnostic] = (), apart: Mapping[str, str] | None = None
                        ) -> TelemetrySide:
    """One system's metrics (own, twins, library-provided), each with the thresholds that read it,
    the thresholds with what they read (or why nothing), and the metric names left unresolved.
    ``apart``: the paths of the modules the layers set apart, each with its layer's title; a metric
    defined there (a test's, an example's) is listed apart, not as the system's own."""
    own, twins, library = split_metrics(metrics)
    apart = apart or {}
    set_apart = sorted((m for m in own if m.path in apart), key=lambda m: (m.name, m.path, m.line))
    own = [m for m in own if m.path not in apart]
    twins = [(twin, primary) for twin, primary in twins if primary.path not in apart]
    own.sort(key=lambda m: (m.name, m.path, m.line))
    library.sort(key=lambda m: (m.name, m.path, m.line))
    twins.sort(key=lambda p: (p[0].name, p[0].path, p[0].line, p[0].library))
    limits = sorted(thresholds, key=lambda t: (t.path, t.line, t.name, t.expr[:400], t.op, str(t.value)))
    # Which thresholds read which metric, and (per threshold) the metrics it reads, by name: a
    # family registered at two sites is one metric for the threshold.
    read_by: list[dict[str, tuple[Provenance, str]]] = [{} for _ in limits]

    def read(metric: MetricDefinition, provenance: Provenance) -> tuple[MetricThreshold, ...]:
        found = []
        for i, t in enumerate(limits):
            how = _reading(metric, provenance, t)
            if how is not None:
                name = metric.name if provenance is not TWIN else sorted(metric.exposed_names)[0]
                read_by[i].setdefault(name, (provenance, metric.origin))
                found.append(MetricThreshold(how, t.name, t.op, t.value, t.source_kind.value, t.severity,
                                             t.default, t.path, t.line))
        return tuple(found)

    own_read = [read(m, OWN) for m in own]
    apart_rows = tuple(OwnMetric(**_fields(_metric_row(m, OWN, read(m, OWN))), twins=(), repeat=False, other_sites=())
                       for m in set_apart)
    twin_read = [read(m, TWIN) for m, _primary in twins]
    library_rows = tuple(_metric_row(m, LIBRARY, read(m, LIBRARY)) for m in library)
    twin_rows = tuple(TwinMetric(**_fields(_metric_row(twin, TWIN, reads)),
                                 twin_of=TwinOf(primary.name, primary.library, primary.path, primary.line))
                      for (twin, primary), reads in zip(twins, twin_read))
    twin_libraries: dict[tuple[str, str, int], set[str]] = collections.defaultdict(set)
    for row in twin_rows:
        twin_libraries[(row.twin_of.name, row.twin_of.path, row.twin_of.line)].add(row.library)
    # one metric, several definition sites (vLLM's v0 and v1 engines register one family each):
    # the first row carries the others, the rest say they repeat it
    other_sites: dict[str, list[Where]] = collections.defaultdict(list)
    first_of_name: dict[str, MetricDefinition] = {}
    for m in own:
        first = first_of_name.setdefault(m.name, m)
        if first is not m:
            other_sites[m.name].append(Where(m.path, m.line))
    own_rows = tuple(OwnMetric(**_fields(_metric_row(m, OWN, reads)),
                               twins=tuple(sorted(twin_libraries.get((m.name, m.path, m.line), ()))),
                               repeat=first_of_name[m.name] is not m,
                               other_sites=tuple(other_sites[m.name]) if first_of_name[m.name] is m else ())
                     for m, reads in zip(own, own_read))
    rows = tuple(_threshold_row(t, reads) for t, reads in zip(limits, read_by))
    names = _distinct(own_rows)
    by_type = collections.Counter(m.type for m in names.values())
    read_names = {m.name for m in own_rows if m.thresholds}
    return TelemetrySide(
        metrics=own_rows,
        twins=twin_rows,
        library_metrics=library_rows,
        thresholds=rows,
        unresolved=unresolved_metrics(own_rows, [d for d in diagnostics if d.path not in apart]),
        by_type=dict(sorted(by_type.items())),
        dominant_type=min(by_type, key=lambda t: (-by_type[t], t)) if by_type else "",
        definitions=len(own_rows),
        own_names=len(names),
        without_threshold=tuple(sorted(set(names) - read_names)),
        with_threshold=len(read_names),
        library_by_origin=dict(sorted(collections.Counter(
            m.origin for m in _distinct(library_rows).values()).items())),
        twins_by_library=dict(sorted(collections.Counter(
            lib for lib, _ in {(m.library, m.twin_of.name) for m in twin_rows}).items())),
        unlinked_thresholds=sum(1 for t in rows if not t.reads_defined_metric),
        empty_reason="" if own_rows else _empty_reason(library_rows, apart_rows),
        apart_metrics=apart_rows,
        unresolved_apart=unresolved_metrics(apart_rows, [d for d in diagnostics if d.path in apart]),
        apart_by_layer=dict(sorted(collections.Counter(
            title for title, _name in {(apart[m.path], m.name) for m in apart_rows}).items())),
    )


def _threshold_row(t: Threshold, read: Mapping[str, tuple[Provenance, str]]) -> ThresholdRow:
    """A threshold with what it reads (``read``: metric name -> its provenance and origin), or why nothing."""
    unlinked = t.unlinked
    if not read and not unlinked:
        # evidence made before the extractor gave reasons (schema 1, upgraded) carries none:
        # said rather than left blank
        unlinked = "reads no series of a metric defined in this evidence"
    return ThresholdRow(
        name=t.name,
        expr=t.expr[:400],
        metrics=tuple(sorted(t.metrics)),
        raw_metrics=tuple(sorted(t.raw_metrics)),
        links=tuple(sorted(t.links)),
        via=tuple(t.via),
        unlinked=unlinked,
        op=t.op,
        value=t.value,  # finite or None: the evidence loader refuses NaN and infinities
        for_=t.for_,
        severity=t.severity,
        source_kind=t.source_kind.value,
        default=t.default,
        path=t.path,
        line=t.line,
        reads_defined_metric=bool(read),
        reads=tuple(sorted({provenance for provenance, _ in read.values()})),  # own, twin, library
        linked=tuple(LinkedMetric(name, provenance, origin) for name, (provenance, origin) in sorted(read.items())),
        recorded_through=tuple(v.split("@", 1)[0].removeprefix("record:") for v in t.via if v.startswith("record:")),
    )


def _empty_reason(library_rows: Sequence[Metric], apart_rows: Sequence[Metric] = ()) -> str:
    if apart_rows:
        return (f"no metric definitions of its own outside tests, examples and vendored code "
                f"({len(_distinct(apart_rows)):,} there)")
    if library_rows:
        return (f"no metric definitions of its own; {len(_distinct(library_rows)):,} series come from the "
                f"libraries it uses")
    return ("no metric definitions in this evidence (no prometheus_client, prometheus-cpp, Ray or OpenTelemetry "
            "definitions found, or the metrics step did not run)")
