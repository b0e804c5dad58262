"""TensorFlow's monitoring metrics (``tensorflow/core/lib/monitoring``, ``tsl/lib/monitoring``) as the
series TensorFlow Serving's Prometheus exporter writes for them.

A metric is made with ``monitoring::Counter<N>::New(name, help, label...)``, ``Gauge<T, N>::New(...)``
the same, ``Sampler<N>::New({name, help, label...}, buckets)``. Its name is a path
(``/tensorflow/serving/request_count``) that TensorFlow Serving's exporter (tensorflow_serving/util/
prometheus_exporter.cc, ``GetPrometheusMetricName``, read at 9d981c5) writes with every character but
``[a-zA-Z0-9_]`` turned to ``:`` and an ``_`` before a leading digit (``:tensorflow:serving:request_count``),
label names with every character but ``[a-zA-Z0-9]`` turned to ``_``. A Counter (kCumulative) is a
counter written under that name, no ``_total``; a Gauge a gauge; a Sampler a histogram with ``_bucket``
(its limits, the last ``+Inf``), ``_sum`` and ``_count``. A PercentileSampler the exporter writes as a
scalar of a value it does not hold: said, not recorded. A name ``absl::StrCat`` builds from a value
computed at run time (``absl::StrCat("/serving/", task_name, "/size")``) is kept as a pattern,
``{}`` where that value goes, ``dynamic``, with the reason; any other name not read is said unresolved.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from extractor.context import SourceFile
from extractor.model import Diagnostic, Severity
from extractor.telemetry.cpp_scan import ArgumentValue, TfMonitoringMetric
from extractor.telemetry.records import MetricDefinition, MetricType, lint_name

LIBRARY = "tensorflow-monitoring"
_TYPES = {"Counter": MetricType.COUNTER, "Gauge": MetricType.GAUGE, "Sampler": MetricType.HISTOGRAM}
_SERIES = {MetricType.HISTOGRAM: ("", "_bucket", "_count", "_sum")}


_NOT_NAMED = re.compile(r"[^a-zA-Z0-9_]")


def exposed_name(name: str, pattern: list[str | None] | None = None) -> str:
    """``GetPrometheusMetricName`` of TensorFlow Serving's exporter: of ``name``, or of a ``pattern``'s
    pieces (``{}`` kept where a piece is not known)."""
    pieces = pattern if pattern is not None else [name]
    out = "".join("{}" if piece is None else _NOT_NAMED.sub(":", piece) for piece in pieces)
    return "_" + out if out[:1].isdigit() else out


def _pattern(name: ArgumentValue, value: Callable[[ArgumentValue | None], str | None]
             ) -> tuple[list[str | None], list[str]]:
    """A name ``absl::StrCat`` builds, piece by piece (None where the value is computed at run time
    or a constant no file gives), and the pieces not known as written."""
    pieces: list[str | None] = []
    unknown: list[str] = []
    for kind, text in name.parts:
        piece = text if kind == "lit" else value(ArgumentValue(None, text, text)) if kind == "const" else None
        pieces.append(piece)
        if piece is None:
            unknown.append(text)
    return pieces, unknown


def exposed_label(label: str) -> str:
    """``SanatizeLabelName`` of TensorFlow Serving's exporter."""
    out = re.sub(r"[^a-zA-Z0-9]", "_", label)
    return "_" + out if out[:1].isdigit() else out


def tf_record(file: SourceFile, metric: TfMonitoringMetric,
              value: Callable[[ArgumentValue | None], str | None]) -> tuple[MetricDefinition | None,
                                                                            Diagnostic | None]:
    """The metric a ``monitoring::<Kind>::New`` call makes, or why it is not known (``value``: an
    argument's value, constants of other files resolved)."""
    kind = _TYPES.get(metric.kind)
    name = value(metric.name)
    if kind is None:
        return None, Diagnostic(file.path, metric.line, "metric-not-modeled",
                                f"monitoring::{metric.kind} {name or metric.name.text!r}: how TensorFlow Serving's "
                                "exporter writes it (a scalar of a value it does not hold) is not modeled",
                                Severity.INFO)
    pattern, unknown = _pattern(metric.name, value) if name is None and metric.name.parts else (None, [])
    if name is None and pattern is None:
        return None, Diagnostic(file.path, metric.line, "metric-name-unresolved",
                                f"monitoring::{metric.kind} name {metric.name.text!r} is not a literal or a "
                                "constant of the analysed files", Severity.INFO)
    labels = [value(label) for label in metric.labels]
    unresolved = [f"name: {', '.join(unknown)} in {' '.join(metric.name.text.split())} is no literal nor a "
                  "constant of the analysed files"] if unknown else []
    if any(label is None for label in labels):
        unresolved.append("labels: " + ", ".join(a.text for a, v in zip(metric.labels, labels) if v is None)
                          + " not a literal or a constant of the analysed files")
    buckets_known = kind is not MetricType.HISTOGRAM or metric.buckets is not None
    if not buckets_known:
        unresolved.append(f"buckets: {metric.buckets_text or '(none)'} is not Buckets::Exponential or "
                          "Buckets::Explicit of literals")
    if pattern is not None:
        name = "".join("{}" if piece is None else piece for piece in pattern)
        full = exposed_name(name, pattern)
    else:
        assert name is not None
        full = exposed_name(name)
    return MetricDefinition(
        path=file.path, line=metric.line, name=name, type=kind, help=value(metric.help) or "",
        labels=tuple(sorted({exposed_label(label) for label in labels if label is not None})),
        buckets=metric.buckets or () if kind is MetricType.HISTOGRAM else (), unit="",
        language=file.language.value, dynamic=pattern is not None,
        exposed_names=tuple(full + suffix for suffix in _SERIES.get(kind, ("",))),
        lint=lint_name(full, kind, LIBRARY), labels_resolved=all(label is not None for label in labels),
        buckets_resolved=buckets_known, library=LIBRARY, via=f"monitoring::{metric.kind}::New",
        unresolved="; ".join(unresolved)), None
