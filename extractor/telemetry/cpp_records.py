"""prometheus-cpp metric definitions: builder chains read by :mod:`.cpp_scan`, and the call sites
of helper functions that wrap a chain and take the metric's name (and help, labels) as parameters.

Helpers and their call sites may be in different files: both are matched here, by the helper's
unqualified name and its number of parameters.

A name or help that is a constant of another file (``.Name(kRequests)``, ``std::string(METRIC_PREFIX)
+ "_nodes"``) takes the value a header the file includes gives it (``#include "metrics.h"``, found
as the compiler looks first: beside the including file; else the one file of the system whose path
ends so), when those headers agree; else the one value the whole system gives a constant-like
name; else it is unresolved, said.

Prometheus text a file writes by hand (``# TYPE`` lines in its string literals) is a family each,
library ``text-exposition``; a ``# TYPE`` line whose name or type is computed is said unresolved.

A Triton backend's custom metrics (Triton's C API, ``TRITONSERVER_MetricFamilyNew(&family, kind,
name, description)``) are a family each, library ``triton-c-api``; a kind or name it cannot read is
said unresolved.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter as Tally
from collections.abc import Callable, Mapping

from extractor.context import Context, SourceFile
from extractor.model import Diagnostic, Language, Severity
from extractor.support.pathsuffix import by_suffix
from extractor.telemetry.cpp_scan import (TRITON_FAMILY_NEW, TRITON_KINDS, ArgumentValue, BuilderChain, CppMetricFacts,
                                          MetricHelper, TritonFamily)
from extractor.telemetry.exposition import exposition_record
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
    constants_of: dict[str, Mapping[str, str]] = {}
    for file, facts in files:
        constants_of[file.path] = facts.constants
        for key, value in facts.constants.items():
            if _CONSTANT_NAME.match(key):
                shared.setdefault(key, set()).add(value)
        for helper in facts.helpers:
            helpers.setdefault((helper.function, helper.params), []).append((file, helper))
    suffixes = by_suffix(constants_of)
    records: list[MetricDefinition] = []
    diagnostics: list[Diagnostic] = []
    stats: Tally = Tally()
    reached: set[tuple[str, int]] = set()
    for file, facts in files:
        for prefix, line in facts.unmodeled:
            stats["cpp_files_unmodeled_metric_libraries"] += 1
            diagnostics.append(unmodeled_library(file.path, line, *conventions().unmodeled_includes[prefix]))
        resolve = _resolver(_included(file.path, facts.includes, constants_of, suffixes), constants_of, shared)
        for chain in facts.metrics:
            stats["cpp_chains"] += 1
            name = _constant(chain.name, resolve)
            if name is None:
                written = chain.name.text if chain.name is not None else "(no .Name)"
                diagnostics.append(Diagnostic(
                    file.path, chain.line, "metric-name-unresolved",
                    f"prometheus-cpp {chain.type} name {written!r} is "
                    "not a literal or a constant of the analysed files", Severity.INFO))
                stats["cpp_unresolved"] += 1
                continue
            records.append(_record(file, chain.line, chain, name, _constant(chain.help, resolve),
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
                    _constant(chain.help, _resolver((), constants_of, shared))
                labels = chain.labels
                if positions.labels is not None:
                    labels = call.labels[positions.labels] or ()
                records.append(_record(file, call.line, chain, name, help_text, labels, f"helper:{helper.function}"))
                stats["cpp_helper_calls"] += 1
    for file, facts in files:
        resolve = _resolver(_included(file.path, facts.includes, constants_of, suffixes), constants_of, shared)
        for family in facts.triton:
            stats["cpp_triton_families"] += 1
            record, problem = _triton_record(file, family, resolve)
            if record is not None:
                records.append(record)
            if problem is not None:
                stats["cpp_unresolved"] += 1
                diagnostics.append(problem)
    for file, facts in files:
        for text in facts.exposition:
            stats["cpp_exposition_lines"] += 1
            if not text.name:
                stats["cpp_unresolved"] += 1
                diagnostics.append(Diagnostic(
                    file.path, text.line, "metric-name-unresolved",
                    f"hand-written Prometheus text: the # TYPE line is computed ({text.written!r} in the literal), "
                    "its name and type are not read", Severity.INFO))
                continue
            records.append(exposition_record(file.path, file.language.value, text))
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


def _constant(fact: ArgumentValue | None, resolve: Callable[[str], str | None]) -> str | None:
    """The argument's value: as the file gives it, else with its constants resolved by ``resolve``."""
    if fact is None or fact.value is not None:
        return None if fact is None else fact.value
    if fact.parts:
        values = [text if kind == "lit" else resolve(text) for kind, text in fact.parts]
        return "".join(v for v in values if v is not None) if all(v is not None for v in values) else None
    return resolve(fact.constant) if fact.constant else None


def _resolver(included: tuple[str, ...], constants_of: Mapping[str, Mapping[str, str]],
              shared: Mapping[str, set[str]]) -> Callable[[str], str | None]:
    """How a file names a constant of another file (module docstring): the value the headers it
    includes agree on, else the system-wide one. Only names that look like constants."""
    def resolve(name: str) -> str | None:
        if not _CONSTANT_NAME.match(name):
            return None
        found = {constants_of[f][name] for f in included if name in constants_of[f]}
        if found:
            return found.pop() if len(found) == 1 else None
        values = shared.get(name, ())
        return next(iter(values)) if len(values) == 1 else None
    return resolve


def _included(path: str, includes: tuple[str, ...], constants_of: Mapping[str, Mapping[str, str]],
              suffixes: Mapping[str, list[str]]) -> tuple[str, ...]:
    """The files with constants among those ``path`` includes: beside it first, else the only one
    of the system its include path names."""
    out = []
    for include in includes:
        beside = posixpath.normpath(posixpath.join(posixpath.dirname(path), include))
        if beside in constants_of:
            out.append(beside)
        elif len(candidates := suffixes.get(posixpath.normpath(include), [])) == 1:
            out.append(candidates[0])
    return tuple(out)


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


def _triton_record(file: SourceFile, family: TritonFamily, resolve: Callable[[str], str | None]
                   ) -> tuple[MetricDefinition | None, Diagnostic | None]:
    """A family made through Triton's C API, or why it is not one: its kind or its name is not
    known. Its labels are given with each metric (`TRITONSERVER_MetricNew(&m, family, labels,
    count)`), a histogram's buckets with each `TRITONSERVER_MetricNewWithArgs`; Triton core
    registers the family with prometheus-cpp (core src/metric_family.cc), which names it as given."""
    if not family.type:
        kinds = "/".join(sorted(TRITON_KINDS))
        return None, Diagnostic(file.path, family.line, "metric-type-unresolved",
                                f"Triton C API metric family's kind {family.kind_text!r} is none of {kinds}",
                                Severity.INFO)
    name = _constant(family.name, resolve)
    if name is None:
        return None, Diagnostic(file.path, family.line, "metric-name-unresolved",
                                f"Triton C API {family.type} name {family.name.text!r} is not a literal or a "
                                "constant of the analysed files", Severity.INFO)
    kind = MetricType(family.type)
    histogram = kind is MetricType.HISTOGRAM
    reasons = ["labels: Triton's C API takes label values with each TRITONSERVER_MetricNew(..., labels, ...)"]
    if histogram:
        reasons.append("buckets: Triton's C API takes a histogram's buckets with each TRITONSERVER_MetricNewWithArgs")
    return MetricDefinition(
        path=file.path, line=family.line, name=name, type=kind, help=_constant(family.help, resolve) or "",
        labels=(), buckets=(), unit="", language=file.language.value, dynamic=False,
        exposed_names=expose_names(kind, name, "prometheus-cpp"), lint=lint_name(name, kind, "prometheus-cpp"),
        labels_resolved=False, buckets_resolved=not histogram, library="triton-c-api", via=TRITON_FAMILY_NEW,
        unresolved="; ".join(reasons)), None
