"""brpc's bvar variables as the metrics brpc's ``/brpc_metrics`` service shows Prometheus.

A bvar is exposed under the name it is given (``bvar::Adder<int> g_requests("requests")``,
``LatencyRecorder lat("rpc", "Handle")`` = prefix and name, ``x.expose("name")`` later), written
as ``bvar::to_underscored_name`` writes it (brpc src/bvar/variable.cpp: upper-case letters lowered
with an ``_`` before them unless one is there, other characters but digits an ``_``). brpc's
PrometheusMetricsDumper (src/brpc/builtin/prometheus_metrics_service.cpp) types every numeric
bvar a gauge; one holding a string is left out (and so is not read here). A LatencyRecorder
exposes nine numbers (src/bvar/latency_recorder.cpp: ``_latency``, ``_max_latency``, ``_qps``,
``_count``, ``_latency_80``/``_90``/``_99`` at the default percentile flags, ``_latency_999``,
``_latency_9999``; a trailing ``latency`` of its name dropped first), kept as one record with those
series. A ``bvar::MultiDimension<T>(name, {"label", ...})`` is a family of T with those labels
(brpc src/bvar/multi_dimension_inl.h dumps it under the same names, ``_count`` there typed counter).
The dumper writes a LatencyRecorder under the server's own prefix (``rpc_server_``) as a summary
instead; that is brpc's own, never a system's.
"""

from __future__ import annotations

from collections.abc import Callable

from extractor.context import SourceFile
from extractor.model import Diagnostic, Severity
from extractor.telemetry.cpp_scan import ArgumentValue, BvarVariable
from extractor.telemetry.records import MetricDefinition, MetricType, lint_name

LIBRARY = "bvar"
LATENCY_SERIES = ("_count", "_latency", "_latency_80", "_latency_90", "_latency_99", "_latency_999",
                  "_latency_9999", "_max_latency", "_qps")


def underscored(name: str, into: str = "") -> str:
    """``bvar::to_underscored_name``: ``name`` appended to ``into`` as brpc writes it."""
    out = list(into)
    for i, c in enumerate(name):
        if c.isascii() and c.isalpha():
            if c.isupper():
                if i and not name[i - 1].isupper() and (not out or out[-1] != "_"):
                    out.append("_")
                out.append(c.lower())
            else:
                out.append(c)
        elif c.isascii() and c.isdigit():
            out.append(c)
        elif not out or out[-1] != "_":
            out.append("_")
    return "".join(out)


def exposed_name(kind: str, prefix: str | None, name: str) -> str:
    """The name brpc exposes a bvar (a LatencyRecorder: the stem of its series) under."""
    if kind == "LatencyRecorder":
        if name.endswith(("latency", "Latency")) and len(name) > len("latency"):
            name = name[: -len("latency")]
        return underscored(f"{prefix}_{name}" if prefix else name)
    stem = underscored(prefix) if prefix else ""
    if stem and not stem.endswith("_"):
        stem += "_"
    return underscored(name, stem)


def bvar_record(file: SourceFile, bvar: BvarVariable, value: Callable[[ArgumentValue | None], str | None],
                through: str = "") -> tuple[MetricDefinition | None, Diagnostic | None]:
    """The metric a bvar is, or why its name is not known (``value``: an argument's value, constants
    of other files resolved)."""
    name = value(bvar.name)
    prefix = value(bvar.prefix) if bvar.prefix is not None else None
    if name is None or (bvar.prefix is not None and prefix is None):
        written = ", ".join(a.text for a in (bvar.prefix, bvar.name) if a is not None)
        return None, Diagnostic(file.path, bvar.line, "metric-name-unresolved",
                                f"bvar {bvar.kind} name ({written}) is not a literal or a constant of the analysed "
                                "files", Severity.INFO)
    full = exposed_name(bvar.kind, prefix, name)
    series = tuple(full + s for s in LATENCY_SERIES) if bvar.kind == "LatencyRecorder" else (full,)
    kind = f"MultiDimension<{bvar.kind}>" if bvar.multi else bvar.kind
    labels_known = not bvar.multi or bvar.labels is not None
    return MetricDefinition(
        path=file.path, line=bvar.line, name=full, type=MetricType.GAUGE, help="",
        labels=tuple(sorted(bvar.labels or ())), buckets=(), unit="", language=file.language.value, dynamic=False,
        exposed_names=series, lint=lint_name(full, MetricType.GAUGE, LIBRARY),
        labels_resolved=labels_known, buckets_resolved=True, library=LIBRARY, via=f"{through}bvar::{kind}",
        unresolved="" if labels_known else "labels: a MultiDimension's label names are not literals"), None
