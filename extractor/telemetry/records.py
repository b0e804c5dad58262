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

from extractor.datafile import load_data_file


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
    library: str = ""  # "prometheus_client" or "prometheus-cpp"
    via: str = ""  # how the constructor was reached: "import", "attribute", "class-attr:<Class>._x", "subclass:<Class>"


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
    via: tuple[str, ...] = ()  # adapter-renamed metric -> the metrics its metricsQuery reads


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


def build_python_name(metric_type: MetricType, name: str, namespace: str = "", subsystem: str = "",
                      unit: str = "") -> str:
    """The registered name, joined the way prometheus_client's ``_build_full_name`` does."""
    full = (namespace + "_" if namespace else "") + (subsystem + "_" if subsystem else "") + name
    if metric_type is MetricType.COUNTER and full.endswith("_total"):
        full = full[: -len("_total")]
    if unit and not full.endswith("_" + unit):
        full += "_" + unit
    return full


def expose_names(metric_type: MetricType, name: str, library: str) -> tuple[str, ...]:
    suffixes = (CPP_SUFFIXES if library == "prometheus-cpp" else PYTHON_SUFFIXES).get(metric_type, ("",))
    return tuple(sorted(name + s for s in suffixes))


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
    if (metric_type is MetricType.COUNTER and library == "prometheus-cpp"
            and not name.endswith("_total")):
        findings.append("counter-without-total: prometheus-cpp exposes the name as given, no _total")
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
