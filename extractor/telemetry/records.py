"""Metric and threshold records, the series a scrape shows for each, and the naming lint.

Exposed series follow the client libraries' real behaviour (read from their source):

* prometheus_client 0.26 (``metrics.py`` ``_build_full_name`` and ``exposition.generate_latest``):
  the full name is ``namespace_subsystem_name``; a counter's trailing ``_total`` is stripped and
  ``_<unit>`` appended when missing; counters expose ``<name>_total`` and ``<name>_created``,
  histograms ``_bucket``/``_count``/``_sum``/``_created``, summaries ``_count``/``_sum``/``_created``,
  Info ``<name>_info``, Enum (a stateset) and Gauge the name itself.
* prometheus-cpp (``core/src/text_serializer.cc``): the family name is written as given, a counter
  gets no ``_total``; histograms ``_count``/``_sum``/``_bucket``; summaries ``_count``/``_sum`` and
  the name itself with a ``quantile`` label.

``exposed_names`` also lists the family name the way prometheus_client's parser reports it (a
counter family ``x`` for samples ``x_total``), because that is what scrape tools compare against.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import re
from pathlib import Path

from extractor.support.datafile import load_data_file
from extractor.model import Diagnostic, RecordKind, Severity


class MetricType(str, enum.Enum):
    COUNTER = "counter"
    GAUGE = "gauge"
    HISTOGRAM = "histogram"
    SUMMARY = "summary"
    INFO = "info"
    ENUM = "enum"


class SourceKind(str, enum.Enum):
    PROMETHEUS_RULE = "prometheus-rule"
    GRAFANA = "grafana"
    HPA = "hpa"
    ADAPTER = "adapter"
    KEDA = "keda"
    INHIBIT = "alertmanager-inhibit"


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class MetricDefinition:
    path: str
    line: int
    name: str  # full name as registered (namespace/subsystem/unit applied); a pattern when dynamic
    type: MetricType
    help: str
    labels: tuple[str, ...]
    buckets: tuple[float, ...]
    unit: str
    language: str
    dynamic: bool  # the name is a pattern (f-string, concatenation with unknown parts)
    exposed_names: tuple[str, ...]
    lint: tuple[str, ...] = ()
    labels_resolved: bool = True  # False when some label names could not be read statically
    buckets_resolved: bool = True  # False for a histogram whose boundaries are computed at run time
    library: str = ""  # the client library that names the series: prometheus_client, prometheus-cpp, ray, opentelemetry
    # How the constructor was reached: "import", "attribute", "class-attr:<Class>._x",
    # "subclass:<Class>", "builder", and for factories "factory:<qualname>" steps joined by " > ".
    via: str = ""
    origin: str = ""  # the library that defines the metric when the analysed code does not ("" = the code)
    quantiles: tuple[float, ...] = ()  # a summary's quantiles where the code states them
    exemplars: bool = False  # the code attaches exemplars to its observations
    unresolved: str = ""  # why a dynamic name (or a label/bucket set) could not be read


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Threshold:
    path: str
    line: int
    source_kind: SourceKind
    name: str  # alert/record name, panel title, HPA metric name, adapter exposed name
    expr: str
    metrics: tuple[str, ...]  # metric (series) names the expression reads
    op: str  # top-level comparison ("" when none)
    value: float | None
    for_: str = ""
    severity: str = ""
    default: bool = False  # Grafana's untouched default step (red at 80)
    links: tuple[str, ...] = ()  # names of metric definitions in the bundle it reads
    # How it reaches them: "adapter:<name>@path:line" (an adapter-renamed metric),
    # "record:<name>@path:line" (a recorded series, followed to the raw metrics behind it),
    # "alert:<name>@path:line" (an inhibit rule naming an alert)
    via: tuple[str, ...] = ()
    raw_metrics: tuple[str, ...] = ()  # the series read once recorded series are followed (empty: none followed)
    unlinked: str = ""  # why it links no metric definition ("" when it does)


PYTHON_SUFFIXES = {
    MetricType.COUNTER: ("", "_total", "_created"),
    MetricType.GAUGE: ("",),
    MetricType.HISTOGRAM: ("", "_bucket", "_count", "_sum", "_created"),
    MetricType.SUMMARY: ("", "_count", "_sum", "_created"),
    MetricType.INFO: ("_info",),
    MetricType.ENUM: ("",),
}

CPP_SUFFIXES = {
    MetricType.COUNTER: ("",),
    MetricType.GAUGE: ("",),
    MetricType.HISTOGRAM: ("", "_bucket", "_count", "_sum"),
    MetricType.SUMMARY: ("", "_count", "_sum"),
}

# The type a text-format scrape reports for each family (prometheus_client's generate_latest
# turns info and stateset into gauges).
SCRAPE_TYPE = {
    MetricType.COUNTER: "counter",
    MetricType.GAUGE: "gauge",
    MetricType.HISTOGRAM: "histogram",
    MetricType.SUMMARY: "summary",
    MetricType.INFO: "gauge",
    MetricType.ENUM: "gauge",
}


def prometheus_default_buckets() -> tuple[float, ...]:
    import prometheus_client  # the installed library is the authority on its own default

    return tuple(prometheus_client.Histogram.DEFAULT_BUCKETS)


def build_python_name(metric_type: MetricType, name: str, namespace: str = "", subsystem: str = "",
                      unit: str = "") -> str:
    """The registered name, joined the way prometheus_client's ``_build_full_name`` does."""
    full = (namespace + "_" if namespace else "") + (subsystem + "_" if subsystem else "") + name
    if metric_type is MetricType.COUNTER and full.endswith("_total"):
        full = full[: -len("_total")]
    if unit and not full.endswith("_" + unit):
        full += "_" + unit
    return full


# Series written through a prometheus_client *MetricFamily (custom collectors: Ray's metrics agent,
# OpenTelemetry's Prometheus exporter): no _created samples.
FAMILY_SUFFIXES = {
    MetricType.COUNTER: ("", "_total"),
    MetricType.GAUGE: ("",),
    MetricType.HISTOGRAM: ("", "_bucket", "_count", "_sum"),
    MetricType.SUMMARY: ("", "_count", "_sum"),
    MetricType.INFO: ("_info",),
}

# aioprometheus (formats/text.py): the name as given, a histogram's and a summary's samples beside it
AIOPROMETHEUS_SUFFIXES = {
    MetricType.COUNTER: ("",),
    MetricType.GAUGE: ("",),
    MetricType.HISTOGRAM: ("_bucket", "_count", "_sum"),
    MetricType.SUMMARY: ("", "_count", "_sum"),
}

RAY_NAMESPACE = "ray"
_OTEL_SANITIZE = re.compile(r"[^a-zA-Z0-9:]+")


def expose_names(metric_type: MetricType, name: str, library: str) -> tuple[str, ...]:
    """Series names a scrape shows for a metric registered as ``name`` through ``library``."""
    if library == "ray":
        return ray_exposed_names(metric_type, name)
    if library == "collector":
        return tuple(sorted(name + s for s in FAMILY_SUFFIXES.get(metric_type, ("",))))
    if library == "aioprometheus":
        return tuple(sorted(name + s for s in AIOPROMETHEUS_SUFFIXES.get(metric_type, ("",))))
    if library == "opentelemetry":
        base = name[: -len("_total")] if metric_type is MetricType.COUNTER and name.endswith("_total") else name
        return tuple(sorted(base + s for s in FAMILY_SUFFIXES.get(metric_type, ("",))))
    suffixes = (CPP_SUFFIXES if library == "prometheus-cpp" else PYTHON_SUFFIXES).get(metric_type, ("",))
    return tuple(sorted(name + s for s in suffixes))


def ray_exposed_names(metric_type: MetricType, name: str) -> tuple[str, ...]:
    """Ray's metrics agent (python/ray/_private/metrics_agent.py, OpenCensusProxyCollector.to_metrics)
    prefixes ``ray_`` (the dashboard agent's exporter namespace) and writes prometheus_client
    metric families. Since Ray 2.10 a counter is a CounterMetricFamily (``_total``) and, for
    dashboards made before, also a gauge under the bare name unless the name already ends in
    ``_total`` (RAY_EXPORT_COUNTER_AS_GAUGE, default on)."""
    full = f"{RAY_NAMESPACE}_{name}"
    if metric_type is MetricType.COUNTER:
        base = full[: -len("_total")] if full.endswith("_total") else full
        names = {base, base + "_total"}
        if not full.endswith("_total"):
            names.add(full)
        return tuple(sorted(names))
    return tuple(sorted(full + s for s in FAMILY_SUFFIXES.get(metric_type, ("",))))


def build_otel_name(metric_type: MetricType, name: str, unit: str) -> str:
    """The family name opentelemetry-exporter-prometheus (0.66b2 ``_mapping.py``) writes: the name
    sanitized, the unit mapped to its Prometheus word and appended by prometheus_client's metric
    family (after a counter's ``_total`` is stripped). ``unit`` is already mapped."""
    full = _OTEL_SANITIZE.sub("_", ("_" + name[1:]) if name[:1].isdigit() else name)
    if metric_type is MetricType.COUNTER and full.endswith("_total"):
        full = full[: -len("_total")]
    if unit and not full.endswith("_" + unit):
        full += "_" + unit
    return full


NAMING_SCHEMA = {"non_base_units": {str: str}, "reserved_suffixes": [str]}


@functools.cache
def _naming_rules() -> dict:
    return load_data_file(Path(__file__).with_name("naming.yaml"), NAMING_SCHEMA)


_VALID_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def lint_name(name: str, metric_type: MetricType, library: str, unit: str = "") -> tuple[str, ...]:
    """Findings against Prometheus' naming practice; advice for the report, never an error."""
    rules = _naming_rules()
    findings: list[str] = []
    if not _VALID_NAME.match(name.replace("{", "").replace("}", "")):
        findings.append("invalid-name: not [a-zA-Z_:][a-zA-Z0-9_:]*")
    if ":" in name:
        findings.append("colon: colons are reserved for recording rules")
    if name.endswith("_total") and metric_type is not MetricType.COUNTER:
        findings.append(f"total-suffix: _total is for counters, this is a {metric_type.value}")
    if (metric_type is MetricType.COUNTER and library in ("prometheus-cpp", "aioprometheus", "yalantinglibs",
                                                                     "tensorflow-monitoring")
            and not name.endswith("_total")):
        findings.append(f"counter-without-total: {library} exposes the name as given, no _total")
    for suffix in rules["reserved_suffixes"]:
        if name.endswith(suffix):
            findings.append(f"reserved-suffix: {suffix} is appended by the exposition format")
    tokens = re.split(r"[_:]", name.lower())
    for token in tokens:
        base = rules["non_base_units"].get(token)
        if base:
            findings.append(f"non-base-unit: '{token}' should be {base}")
    if unit and unit.lower() in rules["non_base_units"]:
        findings.append(f"non-base-unit: unit '{unit}' should be {rules['non_base_units'][unit.lower()]}")
    return tuple(sorted(set(findings)))


def unmodeled_library(path: str, line: int, library: str, what: str) -> Diagnostic:
    """The diagnostic of a file that uses a library whose series archdiff does not model."""
    return Diagnostic(path, line, "metric-library-not-modeled",
                      f"uses {library}, which exposes {what}; archdiff does not model its series: "
                      "they are not in the metrics evidence", Severity.INFO)


METRICS = RecordKind("metrics", MetricDefinition)  # the bundle's "metrics" list
THRESHOLDS = RecordKind("thresholds", Threshold)  # the bundle's "thresholds" list
