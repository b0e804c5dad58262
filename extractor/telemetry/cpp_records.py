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

TensorFlow's monitoring metrics (``monitoring::Counter<1>::New("/a/b", ...)``) are read by
:mod:`.cpp_tfmon`, library ``tensorflow-monitoring``.

A Triton backend's custom metrics (Triton's C API, ``TRITONSERVER_MetricFamilyNew(&family, kind,
name, description)``) are a family each, library ``triton-c-api``; a kind or name it cannot read is
said unresolved.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter as Tally
from collections.abc import Callable, Mapping

import msgspec

from extractor.context import Context, SourceFile
from extractor.model import Diagnostic, Language, Severity
from extractor.support.pathsuffix import by_suffix
from extractor.telemetry.cpp_bvar import bvar_record
from extractor.telemetry.cpp_tfmon import tf_record
from extractor.telemetry.cpp_ylt import joined, ylt_record
from extractor.native.macros import MacroDefinition, MacroUse, expand
from extractor.telemetry.cpp_scan import (TRITON_FAMILY_NEW, TRITON_KINDS, ArgumentValue, BuilderChain, CppMetricFacts,
                                          MetricHelper, TritonFamily, scan_expansion)
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
    files_facts = {file.path: facts for file, facts in files}
    records: list[MetricDefinition] = []
    diagnostics: list[Diagnostic] = []
    stats: Tally = Tally()
    reached: set[tuple[str, int]] = set()

    def keep(record: MetricDefinition | None, problem: Diagnostic | None) -> None:
        """A library's record and the problem it met (either may be None), kept and counted."""
        if record is not None:
            records.append(record)
        if problem is not None:
            stats["cpp_unresolved"] += 1
            diagnostics.append(problem)

    expansions = _macro_expansions(files, diagnostics, stats)
    for file, facts in files:
        for prefix, line in facts.unmodeled:
            stats["cpp_files_unmodeled_metric_libraries"] += 1
            diagnostics.append(unmodeled_library(file.path, line, *conventions().unmodeled_includes[prefix]))
        resolve = _resolver(_included(file.path, facts.includes, constants_of, suffixes), constants_of, shared)
        expanded, macro_at = expansions.get(file.path, (CppMetricFacts(), {}))
        for chain, via in (*((c, "builder") for c in facts.metrics),
                           *((c, f"macro:{macro_at[c.line]}") for c in expanded.metrics)):
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
                                   chain.labels, via))
        for call, through in (*((c, "") for c in facts.calls),
                              *((c, f"macro:{macro_at[c.line]} > ") for c in expanded.calls)):
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
                if call.add_labels or (call.buckets is not None and chain.buckets is None):
                    # the family the helper returns, given labels (and buckets) where it is called
                    chain = msgspec.structs.replace(
                        chain, add_labels=tuple(sorted({*chain.add_labels, *call.add_labels})),
                        buckets=chain.buckets if chain.buckets is not None else call.buckets)
                records.append(_record(file, call.line, chain, name, help_text, labels,
                                       f"{through}helper:{helper.function}"))
                stats["cpp_helper_calls"] += 1
    for file, facts in files:
        resolve = _resolver(_included(file.path, facts.includes, constants_of, suffixes), constants_of, shared)
        expanded, macro_at = expansions.get(file.path, (CppMetricFacts(), {}))
        for bvar, through in (*((b, "") for b in facts.bvars),
                              *((b, f"macro:{macro_at[b.line]} > ") for b in expanded.bvars)):
            stats["cpp_bvars"] += 1
            keep(*bvar_record(file, bvar, lambda a: _constant(a, resolve), through))
        for tf_metric in facts.tf:
            stats["cpp_tf_monitoring"] += 1
            keep(*tf_record(file, tf_metric, lambda a: _constant(a, resolve)))
        for family in facts.triton:
            stats["cpp_triton_families"] += 1
            keep(*_triton_record(file, family, resolve))
    ylt, problems = joined((file, metric) for file, facts in files for metric in facts.ylt)
    diagnostics.extend(problems)
    stats["cpp_unresolved"] += len(problems)
    for file, metric in ylt:
        stats["cpp_ylt_metrics"] += 1
        resolve = _resolver(_included(file.path, files_facts[file.path].includes, constants_of, suffixes), constants_of,
                            shared)
        keep(*ylt_record(file, metric, lambda a: _constant(a, resolve)))
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


def _macro_expansions(files: list[tuple[SourceFile, CppMetricFacts]], diagnostics: list[Diagnostic], stats: Tally
                      ) -> dict[str, tuple[CppMetricFacts, dict[int, str]]]:
    """What each file's uses of the system's macros define (:mod:`.cpp_macros`), with the lines of
    the uses, and the macro used at each line. A macro the system defines in more than one way is
    written out with the definition the file's includes agree on; with none, each way is tried and
    a use that one of them makes a metric of is said ambiguous."""
    defined: dict[str, _Ways] = {}
    for file, facts in files:
        for definition in facts.macros:
            ways = defined.setdefault(definition.name, {})
            ways.setdefault((definition.params, definition.body), []).append((file.path, definition))
    if not defined:
        return {}
    defining = {file.path: file.path for file, facts in files if facts.macros}
    suffixes = by_suffix(defining)
    out: dict[str, tuple[CppMetricFacts, dict[int, str]]] = {}
    for file, facts in files:
        uses = [use for use in facts.macro_uses if use.name in defined]
        if not uses:
            continue
        included = set(_included(file.path, facts.includes, defining, suffixes)) | {file.path}

        def lookup(name: str) -> MacroDefinition | None:
            ways = defined.get(name, {})
            if len(ways) > 1:
                ways = {way: at for way, at in ways.items() if any(path in included for path, _d in at)}
            return next(iter(ways.values()))[0][1] if len(ways) == 1 else None

        lines: list[str] = []
        written_uses: list[MacroUse] = []  # the use each line writes out
        for use in uses:
            chosen = lookup(use.name)
            if chosen is None:
                _ambiguous(file, use, defined[use.name], lookup, diagnostics, stats)
                continue
            written = expand(use, chosen, lookup)
            if written is None:
                continue
            lines.append(" ".join(written.split()))
            written_uses.append(use)
        scanned = scan_expansion("\n".join(lines), file.language) if lines else None
        if scanned is None or not (scanned.metrics or scanned.calls or scanned.bvars):
            continue
        # the uses whose expansion holds a builder chain, a call passing a name-like literal or a bvar
        stats["cpp_macro_uses_expanded"] += len({c.line for c in scanned.metrics} | {c.line for c in scanned.calls}
                                                | {b.line for b in scanned.bvars})
        out[file.path] = (
            CppMetricFacts(
                tuple(msgspec.structs.replace(c, line=written_uses[c.line - 1].line) for c in scanned.metrics),
                calls=tuple(msgspec.structs.replace(c, line=written_uses[c.line - 1].line) for c in scanned.calls),
                bvars=tuple(msgspec.structs.replace(c, line=written_uses[c.line - 1].line) for c in scanned.bvars)),
            {use.line: use.name for use in written_uses})
    return out


_Ways = dict[tuple[tuple[str, ...], str], list[tuple[str, MacroDefinition]]]


def _ambiguous(file: SourceFile, use: MacroUse, ways: _Ways,
               lookup: Callable[[str], MacroDefinition | None], diagnostics: list[Diagnostic], stats: Tally) -> None:
    """A diagnostic for a use of a macro defined in several ways that one of them makes a metric of."""
    for at in ways.values():
        written = expand(use, at[0][1], lookup)
        scanned = scan_expansion(written, file.language) if written is not None else None
        if scanned is not None and (scanned.metrics or scanned.calls or scanned.bvars):
            places = ", ".join(sorted(f"{path}:{d.line}" for at in ways.values() for path, d in at[:1]))
            diagnostics.append(Diagnostic(
                file.path, use.line, "metric-macro-ambiguous",
                f"{use.name}(...) is defined in {len(ways)} ways ({places}) and no include of this file chooses one; "
                "one of them defines a metric here, which is not recorded", Severity.INFO))
            stats["cpp_macro_uses_ambiguous"] += 1
            return


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


def _included(path: str, includes: tuple[str, ...], constants_of: Mapping[str, object],
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
