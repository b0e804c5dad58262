"""The ``metrics`` evidence kind: Prometheus metric definitions from Python and C++, and the
series libraries expose for the code.

Per-file scanners (:mod:`.python_scan`, :mod:`.cpp_scan`) collect candidates; the extract step
decides, with every file at once: the class that ``self._gauge_cls`` names may be set in a
subclass elsewhere (vLLM's ``PrometheusStatLogger`` and ``RayPrometheusStatLogger``), and a
factory may be called from any module (:mod:`.python_records`, :mod:`.factories`).
"""

from __future__ import annotations

import re
from collections import Counter as Tally
from typing import Any

from extractor.context import Context
from extractor.model import Contribution, Diagnostic, Language, Severity, Step
from extractor.telemetry.cpp_scan import scan_cpp_metrics
from extractor.telemetry.libraries import conventions
from extractor.telemetry.python_records import python_records
from extractor.telemetry.python_scan import scan_python_metrics
from extractor.telemetry.records import MetricDefinition, MetricType, expose_names, lint_name

# -- C++ ----------------------------------------------------------------------------------

_CONSTANT_NAME = re.compile(r"^(k[A-Z0-9]\w*|[A-Z][A-Z0-9_]+)$")


def _cpp_records(ctx: Context) -> tuple[list[MetricDefinition], list[Diagnostic], Tally]:
    files = list(ctx.facts("metrics", Language.CPP, Language.CUDA))
    # Constants from other files (a header's kMetricName) resolve a name only when they look like
    # constants and have one value system-wide: an ordinary identifier such as `name` could be
    # anything, and guessing would invent a metric.
    shared: dict[str, set[str]] = {}
    for _, facts in files:
        for key, value in facts.get("constants", {}).items():
            if _CONSTANT_NAME.match(key):
                shared.setdefault(key, set()).add(value)
    records: list[MetricDefinition] = []
    diagnostics: list[Diagnostic] = []
    stats: Tally = Tally()
    for file, facts in files:
        for chain in facts.get("metrics", []):
            stats["cpp_chains"] += 1
            name_fact = chain.get("name") or {}
            name = name_fact.get("value")
            if name is None and name_fact.get("constant") and len(shared.get(name_fact["constant"], ())) == 1:
                name = next(iter(shared[name_fact["constant"]]))  # a constant from a header
            if name is None:
                diagnostics.append(Diagnostic(
                    file.path, chain["line"], "metric-name-unresolved",
                    f"prometheus-cpp {chain['type']} name {name_fact.get('text', '(no .Name)')!r} is "
                    "not a literal or a constant of the analysed files", Severity.INFO))
                stats["cpp_unresolved"] += 1
                continue
            kind = MetricType(chain["type"])
            help_fact = chain.get("help") or {}
            help_text = help_fact.get("value")
            if help_text is None and help_fact.get("constant") and len(shared.get(help_fact["constant"], ())) == 1:
                help_text = next(iter(shared[help_fact["constant"]]))
            buckets = tuple(chain.get("buckets") or ()) if kind is MetricType.HISTOGRAM else ()
            records.append(MetricDefinition(
                path=file.path, line=chain["line"], name=name, type=kind, help=help_text or "",
                labels=tuple(sorted(set(chain.get("labels", [])) | set(chain.get("add_labels", [])))),
                buckets=buckets, unit="", language=file.language.value, dynamic=False,
                exposed_names=expose_names(kind, name, "prometheus-cpp"),
                lint=lint_name(name, kind, "prometheus-cpp"),
                labels_resolved=True,
                buckets_resolved=kind is not MetricType.HISTOGRAM or chain.get("buckets") is not None,
                library="prometheus-cpp", via="builder",
            ))
    return records, diagnostics, stats


def extract_metrics(ctx: Context) -> Contribution:
    py_records, py_diags, py_stats = python_records(ctx, conventions())
    cpp_records, cpp_diags, cpp_stats = _cpp_records(ctx)
    # One record per definition site and name: a construction reached through several subclasses
    # that all resolve to the same prometheus_client class is still one metric.
    records = sorted(set(py_records) | set(cpp_records))
    stats: dict[str, Any] = dict(py_stats + cpp_stats)
    stats["metrics"] = len(records)
    stats["metrics_by_type"] = dict(sorted(Tally(r.type.value for r in records).items()))
    stats["metrics_by_language"] = dict(sorted(Tally(r.language for r in records).items()))
    stats["metrics_dynamic"] = sum(r.dynamic for r in records)
    stats["metrics_with_lint"] = sum(bool(r.lint) for r in records)
    return Contribution(records=tuple(records), diagnostics=tuple(sorted(py_diags + cpp_diags)),
                        stats=stats)


STEP = METRICS_STEP = Step(
    name="metrics",
    extract=extract_metrics,
    scanners={Language.PYTHON: scan_python_metrics, Language.CPP: scan_cpp_metrics,
              Language.CUDA: scan_cpp_metrics},
    bundle_key="metrics",
    version="2",
)
