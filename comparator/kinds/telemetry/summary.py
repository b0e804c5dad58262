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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from comparator.kind import loc
from extractor.model import Diagnostic
from extractor.telemetry.records import MetricDefinition, MetricType, Threshold

# Which record of a site is the metric when a site yields records of several libraries. Ray comes
# last: its agent re-exports what the code measures under ray_-prefixed names, and the site's
# other library is the one the code's own class names (vLLM's PrometheusStatLogger).
PRIMARY_LIBRARIES = ("prometheus_client", "prometheus-cpp", "opentelemetry", "ray")
OWN, TWIN, LIBRARY = "own", "twin", "library"
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


def _metric_row(metric: MetricDefinition, provenance: str) -> dict[str, Any]:
    return {
        "name": metric.name,
        "type": metric.type.value,
        "unit": metric.unit,
        "help": metric.help[:300],
        "labels": sorted(metric.labels),
        "language": metric.language,
        "dynamic": metric.dynamic,
        "unresolved": metric.unresolved,
        "exposed_names": sorted(metric.exposed_names),
        "library": metric.library,
        "via": metric.via,
        "origin": metric.origin,
        "provenance": provenance,
        "quantiles": list(metric.quantiles),
        "exemplars": metric.exemplars,
        **loc(metric),
    }


def _threshold_row(t: Threshold) -> dict[str, Any]:
    return {
        "name": t.name,
        "expr": t.expr[:400],
        "metrics": sorted(t.metrics),
        "raw_metrics": sorted(t.raw_metrics),
        "links": sorted(t.links),
        "via": list(t.via),
        "unlinked": t.unlinked,
        "op": t.op,
        "value": t.value,  # finite or None: the evidence loader refuses NaN and infinities
        "for": t.for_,
        "severity": t.severity,
        "source_kind": t.source_kind.value,
        "default": t.default,
        **loc(t),
    }


def loc_of(row: Mapping[str, Any]) -> dict[str, Any]:
    return {"path": row["path"], "line": row["line"]}


def _reading(metric: Mapping[str, Any], threshold: Mapping[str, Any]) -> str:
    """How ``threshold`` reads ``metric``: ``direct`` (a series of it in the expression),
    ``recorded`` (behind a recording rule), ``link`` (a definition the extractor linked by name,
    e.g. through a prometheus-adapter rule), or '' when it does not. A twin is read only through
    its own series: its name is its metric's, and a link by name belongs to the metric."""
    exposed = set(metric["exposed_names"])
    if exposed & set(threshold["metrics"]):
        return "direct"
    if exposed & set(threshold["raw_metrics"]):
        return "recorded"
    if metric["provenance"] != TWIN and metric["name"] in threshold["links"]:
        return "link"
    return ""


def _distinct(rows: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Rows by name, the first definition site of each name (rows are sorted by name, path, line)."""
    out: dict[str, Mapping[str, Any]] = {}
    for row in rows:
        out.setdefault(row["name"], row)
    return out


def unresolved_metrics(own_rows: Sequence[Mapping[str, Any]],
                       diagnostics: Iterable[Diagnostic]) -> list[dict[str, Any]]:
    """Metric names the extractor could not read, with why: own metrics whose name is a pattern
    (``dynamic``: an f-string over a run-time value) and the metrics step's diagnostics for a name
    it could not read at all. A twin's pattern is its metric's, listed once."""
    rows = [{"name": m["name"], "reason": m["unresolved"] or "the name is built at run time",
             "kind": "pattern", "via": m["via"], "path": m["path"], "line": m["line"]}
            for m in own_rows if m["dynamic"]]
    rows += [{"name": "", "reason": d.message, "kind": d.code.removeprefix("metric-"), "via": "",
              "path": d.path, "line": d.line} for d in diagnostics if d.code in UNRESOLVED_CODES]
    return sorted(rows, key=lambda r: (r["path"], r["line"], r["name"], r["reason"]))


def summarize_telemetry(metrics: Sequence[MetricDefinition], thresholds: Sequence[Threshold],
                        diagnostics: Sequence[Diagnostic] = ()) -> dict[str, Any]:
    """One system's metrics (own, twins, library-provided), each with the thresholds that read it,
    the thresholds with what they read (or why nothing), and the metric names left unresolved."""
    own, twins, library = split_metrics(metrics)

    def rows_of(records: Iterable[MetricDefinition], provenance: str) -> list[dict[str, Any]]:
        return sorted((_metric_row(m, provenance) for m in records), key=lambda m: (m["name"], m["path"], m["line"]))

    own_rows = rows_of(own, OWN)
    library_rows = rows_of(library, LIBRARY)
    twin_rows = []
    for twin, primary in sorted(twins, key=lambda p: (p[0].name, p[0].path, p[0].line, p[0].library)):
        row = _metric_row(twin, TWIN)
        row["twin_of"] = {"name": primary.name, "library": primary.library, **loc(primary)}
        twin_rows.append(row)
    twin_libraries: dict[tuple[str, str, int], set[str]] = collections.defaultdict(set)
    for row in twin_rows:
        first = row["twin_of"]
        twin_libraries[(first["name"], first["path"], first["line"])].add(row["library"])
    first_site: dict[str, dict[str, Any]] = {}
    for row in own_rows:
        row["twins"] = sorted(twin_libraries.get((row["name"], row["path"], row["line"]), ()))
        # one metric, several definition sites (vLLM's v0 and v1 engines register one family
        # each): the first row carries the others, the rest say they repeat it
        first = first_site.setdefault(row["name"], row)
        row["repeat"] = first is not row
        row["other_sites"] = []
        if row["repeat"]:
            first["other_sites"].append(loc_of(row))
    limits = sorted((_threshold_row(t) for t in thresholds),
                    key=lambda t: (t["path"], t["line"], t["name"], t["expr"], t["op"], str(t["value"])))
    read_by: list[dict[str, tuple[str, str]]] = [{} for _ in limits]
    for metric in (*own_rows, *twin_rows, *library_rows):
        metric["thresholds"] = []
        for i, t in enumerate(limits):
            how = _reading(metric, t)
            if how:
                # by name: a family registered at two sites is one metric for the threshold
                read_by[i].setdefault(metric["name"] if metric["provenance"] != TWIN else
                                      metric["exposed_names"][0], (metric["provenance"], metric["origin"]))
                metric["thresholds"].append({"reads": how, **{k: t[k] for k in (
                    "name", "op", "value", "source_kind", "severity", "default", "path", "line")}})
    for t, read in zip(limits, read_by):
        t["reads_defined_metric"] = bool(read)
        t["reads"] = sorted({provenance for provenance, _ in read.values()})  # own, twin, library
        t["linked"] = [{"name": name, "provenance": provenance, "origin": origin}
                       for name, (provenance, origin) in sorted(read.items())]
        t["recorded_through"] = [v.split("@", 1)[0].removeprefix("record:") for v in t["via"]
                                 if v.startswith("record:")]
        if not read and not t["unlinked"]:
            # evidence made before the extractor gave reasons (schema 1, upgraded) carries none:
            # said rather than left blank
            t["unlinked"] = "reads no series of a metric defined in this evidence"
    names = _distinct(own_rows)
    by_type = collections.Counter(m["type"] for m in names.values())
    read_names = {m["name"] for m in own_rows if m["thresholds"]}
    return {
        "metrics": own_rows,
        "twins": twin_rows,
        "library_metrics": library_rows,
        "thresholds": limits,
        "unresolved": unresolved_metrics(own_rows, diagnostics),
        "by_type": dict(sorted(by_type.items())),
        "dominant_type": min(by_type, key=lambda t: (-by_type[t], t)) if by_type else "",
        "definitions": len(own_rows),
        "own_names": len(names),
        "without_threshold": sorted(set(names) - read_names),
        "with_threshold": len(read_names),
        "library_by_origin": dict(sorted(collections.Counter(
            m["origin"] for m in _distinct(library_rows).values()).items())),
        "twins_by_library": dict(sorted(collections.Counter(
            lib for lib, _ in {(m["library"], m["twin_of"]["name"]) for m in twin_rows}).items())),
        "unlinked_thresholds": sum(1 for t in limits if not t["reads_defined_metric"]),
        "empty_reason": "" if own_rows else _empty_reason(library_rows),
    }


def _empty_reason(library_rows: Sequence[Mapping[str, Any]]) -> str:
    if library_rows:
        return (f"no metric definitions of its own; {len(_distinct(library_rows)):,} series come from the "
                f"libraries it uses")
    return ("no metric definitions in this evidence (no prometheus_client, prometheus-cpp, Ray or OpenTelemetry "
            "definitions found, or the metrics step did not run)")
