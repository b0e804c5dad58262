"""prometheus-cpp metric definitions: builder chains read by :mod:`.cpp_scan`, and the call sites
of helper functions that wrap a chain and take the metric's name (and help, labels) as parameters.

Helpers and their call sites may be in different files: both are matched here, by the helper's
unqualified name and its number of parameters.
"""

from __future__ import annotations

import re
from collections import Counter as Tally

from extractor.context import Context, SourceFile
from extractor.model import Diagnostic, Language, Severity
from extractor.telemetry.cpp_scan import ArgumentValue, BuilderChain, CppMetricFacts, MetricHelper
from extractor.telemetry.libraries import conventions
from extractor.telemetry.records import MetricDefinition, MetricType, expose_names, lint_name, unmodeled_library

_CONSTANT_NAME = re.compile(r"^(k[A-Z0-9]\w*|[A-Z][A-Z0-9_]+)$")


def cpp_records(ctx: Context) -> tuple[list[MetricDefinition], list[Diagnostic], Tally]:
    files: list[tuple[SourceFile, CppMetricFacts]] = list(ctx.facts("metrics", Language.CPP, Language.CUDA))
    # Constants from other files (a header's kMetricName) resolve a name only when they look like
    # constants and have one value system-wide: an ordinary identifier such as `name` could be
    # anything, and guessing would invent a metric.
    shared: dict[str, set[str]] = {}
    helpers: dict[tuple[str, int], list[tuple[SourceFile, MetricHelper]]] = {}
    for file, facts in files:
        for key, value in facts.constants.items():
            if _CONSTANT_NAME.match(key):
                shared.setdefault(key, set()).add(value)
        for helper in facts.helpers:
            helpers.setdefault((helper.function, helper.params), []).append((file, helper))
    records: list[MetricDefinition] = []
    diagnostics: list[Diagnostic] = []
    stats: Tally = Tally()
    reached: set[tuple[str, int]] = set()
    for file, facts in files:
        for prefix, line in facts.unmodeled:
            stats["cpp_files_unmodeled_metric_libraries"] += 1
            diagnostics.append(unmodeled_library(file.path, line, *conventions().unmodeled_includes[prefix]))
        for chain in facts.metrics:
            stats["cpp_chains"] += 1
            name = _constant(chain.name, shared)
            if name is None:
                written = chain.name.text if chain.name is not None else "(no .Name)"
                diagnostics.append(Diagnostic(
                    file.path, chain.line, "metric-name-unresolved",
                    f"prometheus-cpp {chain.type} name {written!r} is "
                    "not a literal or a constant of the analysed files", Severity.INFO))
                stats["cpp_unresolved"] += 1
                continue
            records.append(_record(file, chain.line, chain, name, _constant(chain.help, shared),
                                   chain.labels, "builder"))
        for call in facts.calls:
            for helper_file, helper in helpers.get((call.callee, len(call.args)), []):
                positions = helper.positions
                name = call.args[positions.name]
                if name is None:
                    continue
                chain = helper.chain
                reached.add((helper_file.path, chain.line))
                help_text = call.args[positions.help] if positions.help is not None else \
                    _constant(chain.help, shared)
                labels = chain.labels
                if positions.labels is not None:
                    labels = call.labels[positions.labels] or ()
                records.append(_record(file, call.line, chain, name, help_text, labels, f"helper:{helper.function}"))
                stats["cpp_helper_calls"] += 1
    for (function, _), defined in sorted(helpers.items()):
        for helper_file, helper in defined:
            stats["cpp_chains"] += 1
            if (helper_file.path, helper.chain.line) not in reached:
                stats["cpp_unresolved"] += 1
                diagnostics.append(Diagnostic(
                    helper_file.path, helper.chain.line, "metric-name-unresolved",
                    f"prometheus-cpp {helper.chain.type} name is parameter "
                    f"{helper.positions.name + 1} of {function}(), and no call of it passes a literal",
                    Severity.INFO))
    return records, diagnostics, stats


def _constant(fact: ArgumentValue | None, shared: dict[str, set[str]]) -> str | None:
    if fact is None:
        return None
    value = fact.value
    if value is None and fact.constant and len(shared.get(fact.constant, ())) == 1:
        value = next(iter(shared[fact.constant]))  # a constant from a header
    return value


def _record(file: SourceFile, line: int, chain: BuilderChain, name: str, help_text: str | None,
            labels: tuple[str, ...], via: str) -> MetricDefinition:
    kind = MetricType(chain.type)
    numbers = chain.buckets
    buckets = tuple(numbers or ()) if kind is MetricType.HISTOGRAM else ()
    quantiles = tuple(numbers or ()) if kind is MetricType.SUMMARY else ()
    unresolved_labels = chain.labels_variable and via == "builder"
    return MetricDefinition(
        path=file.path, line=line, name=name, type=kind, help=help_text or "",
        labels=tuple(sorted(set(labels) | set(chain.add_labels))),
        buckets=buckets, unit="", language=file.language.value, dynamic=False,
        exposed_names=expose_names(kind, name, "prometheus-cpp"),
        lint=lint_name(name, kind, "prometheus-cpp"),
        labels_resolved=not unresolved_labels,
        buckets_resolved=kind is not MetricType.HISTOGRAM or numbers is not None,
        library="prometheus-cpp", via=via, quantiles=quantiles,
        unresolved=f"labels: variable {chain.labels_variable}" if unresolved_labels else "",
    )
