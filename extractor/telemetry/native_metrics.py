"""Metric records for Rust and Go, with the series names each library exposes.

The rules, read from each library's source (none can be run here: crates.io and the Go module
proxy are out of reach of this machine, so the fixtures are checked against these rules):

* Rust ``prometheus`` crate (tikv/rust-prometheus 0.13/0.14: ``src/desc.rs`` ``build_fq_name``,
  ``src/encoder/text.rs``): the name is ``namespace_subsystem_name`` with empty parts skipped; the
  text encoder writes a counter under its name as given (no ``_total`` is added) and a histogram
  as ``_bucket``/``_sum``/``_count``; ``DEFAULT_BUCKETS`` is the usual 0.005 ... 10 list.
* Rust ``metrics`` crate through ``metrics-exporter-prometheus`` (``src/formatting.rs``
  ``sanitize_metric_name``, ``src/render.rs`` ``add_suffix_to_name``): characters outside
  ``[a-zA-Z0-9_:]`` become ``_`` (``tgi.request.count`` -> ``tgi_request_count``); a counter gets a
  ``_total`` suffix only when the exporter is built with a counter suffix (off by default), so it
  is exposed as written; ``histogram!`` is rendered as a summary (quantiles, ``_sum``,
  ``_count``) unless the exporter is given buckets for it (``set_buckets``,
  ``set_buckets_for_metric(Matcher::Full|Prefix|Suffix(..))``), then as a histogram.
* Rust ``prometheus-client`` crate (client_rust): registered by value, read crate-wide; its rules
  are in :mod:`.client_rust_records`.
* Go ``client_golang`` (``prometheus/desc.go`` ``BuildFQName``, ``expfmt`` text format 0.0.4,
  which ``promhttp`` serves unless ``EnableOpenMetrics`` is set): ``namespace_subsystem_name``
  with empty parts skipped; counters as given, histograms ``_bucket``/``_sum``/``_count``,
  summaries the name (with ``quantile``) plus ``_sum``/``_count``; ``DefBuckets`` 0.005 ... 10.
* Go OpenTelemetry instruments through ``go.opentelemetry.io/otel/exporters/prometheus`` 0.66, whose
  names are prometheus/otlptranslator's (``metric_namer.go`` ``normalizeName``, the default
  ``UnderscoreEscapingWithSuffixes``): the name cut into tokens at every character outside
  ``[a-zA-Z0-9:]`` (so runs of ``_`` collapse and leading or trailing ones go), the unit's word
  appended unless a token already is it (``s`` -> ``seconds``, ``By/s`` -> ``bytes_per_second``,
  ``{request}`` nothing: the UCUM table of libraries.yaml, the Python exporter's), a counter's
  ``total`` tokens moved to the end, a gauge of unit ``1`` given ``ratio``, joined with ``_``, a
  leading digit prefixed with ``_``. A monotonic sum is a counter, an up-down one a gauge;
  histograms ``_bucket``/``_sum``/``_count`` with the SDK's default boundaries (``sdk/metric`` 0, 5,
  10, ..., 10000) unless ``WithExplicitBucketBoundaries`` gives them. Attributes come with each
  measurement: the labels are not read (``labels_resolved`` false, said in ``unresolved``).
"""

from __future__ import annotations

import collections
import dataclasses
import re
from collections import Counter as Tally
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

import msgspec

from extractor.context import Context, SourceFile
from extractor.go.graph import import_path
from extractor.model import Diagnostic, Language, Severity
from extractor.native.manifests import system_manifests
from extractor.telemetry.client_rust_records import client_rust_records
from extractor.telemetry.libraries import conventions
from extractor.telemetry.native_facts import (FactoryCall, GoCall, LabelSet, MetricText, NativeMetric,
                                              NativeMetricFacts, RustFactory)
from extractor.telemetry.records import MetricDefinition, MetricType, lint_name, unmodeled_library

DEFAULT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)  # all three libraries
_SERIES = {
    MetricType.COUNTER: ("",),
    MetricType.GAUGE: ("",),
    MetricType.HISTOGRAM: ("", "_bucket", "_count", "_sum"),
    MetricType.SUMMARY: ("", "_count", "_sum"),
}
_INVALID = re.compile(r"[^a-zA-Z0-9_:]")
_OTEL_SEPARATOR = re.compile(r"[^a-zA-Z0-9:]+")
_LIBRARY = {"prometheus": "rust-prometheus", "metrics": "metrics-rs", "client_golang": "client_golang",
            "otel-go": "opentelemetry-go", "component-base": "k8s.io/component-base"}
# the OpenTelemetry Go SDK default explicit bucket boundaries (sdk/metric aggregation)
OTEL_DEFAULT_BUCKETS = (0.0, 5.0, 10.0, 25.0, 50.0, 75.0, 100.0, 250.0, 500.0, 750.0, 1000.0, 2500.0, 5000.0,
                        7500.0, 10000.0)
OTEL_LABELS_AT_USE = ("labels: OpenTelemetry takes attributes with each measurement (metric.WithAttributes at "
                      "Add/Record), not at the instrument")


def fq_name(*parts: str) -> str:
    """``BuildFQName`` / ``build_fq_name``: the non-empty parts joined with ``_``."""
    return "_".join(p for p in parts if p)


def sanitize(name: str) -> str:
    """metrics-exporter-prometheus' ``sanitize_metric_name``."""
    out = _INVALID.sub("_", name)
    return "_" + out[1:] if out and out[0].isdigit() else out


def exposed(kind: MetricType, name: str, rendered: MetricType | None = None) -> tuple[str, ...]:
    return tuple(sorted(name + s for s in _SERIES[rendered or kind]))


def native_records(ctx: Context) -> tuple[list[MetricDefinition], list[Diagnostic], Tally]:
    records: list[MetricDefinition] = []
    diagnostics: list[Diagnostic] = []
    stats: Tally = Tally()
    for language in (Language.RUST, Language.GO):
        files: list[tuple[SourceFile, NativeMetricFacts]] = list(ctx.facts("metrics", language))
        constants = _shared_constants(files)
        label_sets = _shared_label_sets(files)
        imported = _imported_constants(files, constants, ctx) if language is Language.GO else {}
        described = _descriptions(files, constants)
        bucketed = [b for _f, facts in files for b in facts.exporter_buckets]
        if any(facts.client is not None for _f, facts in files):
            client_records, client_diagnostics, client_stats = client_rust_records(files, ctx.once(system_manifests))
            records += client_records
            diagnostics += client_diagnostics
            stats += client_stats
        paths = ModuleConstants(files) if language is Language.RUST else None
        factories: dict[str, list[tuple[SourceFile, RustFactory]]] = {}
        for file, facts in files:
            for factory in facts.factories:
                factories.setdefault(factory.name, []).append((file, factory))
        unmodeled = conventions().unmodeled_go if language is Language.GO else conventions().unmodeled_crates
        bucket_vars: dict[str, dict[str, tuple[float, ...]]] = collections.defaultdict(dict)  # package -> name ->
        for file, facts in files:
            bucket_vars[_package(file)].update(facts.bucket_vars)
        made_by = _go_factories(files)
        reached = {(_package(file), call.callee) for file, facts in files for call in facts.go_calls} & set(made_by)
        for file, facts in files:
            for crate, line in facts.unmodeled:
                stats[f"{language.value}_files_unmodeled_metric_libraries"] += 1
                diagnostics.append(unmodeled_library(file.path, line, *unmodeled[crate]))
            local = _Constants({**constants.get(_package(file), {}), **facts.constants}, paths)
            for alias, target in facts.imports.items():
                # `pkg.Name`: the constant Name of the package the file imports as pkg
                local.update((f"{alias}.{name}", value) for name, value in imported.get(target, {}).items())
            for call in facts.factory_calls:
                made = factories.get(call.callee)
                if made:
                    stats[f"{language.value}_factory_calls_not_followed"] += 1
                    diagnostics.append(_factory_call(file, call, made, local))
            package = _package(file)
            sets = label_sets.get(package, {})
            by_calls = [_made(call, m) for call in facts.go_calls for m in made_by.get((package, call.callee), ())]
            for m in [*facts.metrics, *by_calls]:
                if m.describe or (m.factory and m.parameters and (package, m.factory) in reached):
                    continue  # a factory's own definition: its calls make the metrics
                if m.labels is None and m.labels_text in sets:
                    # `NewCounterVec(opts, commonLabels)`, the list a package-level variable of another file
                    found = sets[m.labels_text]
                    m = msgspec.structs.replace(m, labels=found.labels, label_refs=found.label_refs, labels_text="")
                stats[f"{language.value}_definitions"] += 1
                stats[f"{language.value}_factory_definitions"] += bool(m.factory and not m.parameters)
                record, problem = _record(file, m, local, described, bucketed, bucket_vars[package])
                if record is not None:
                    records.append(record)
                if problem is not None:
                    diagnostics.append(problem)
                    stats[f"{language.value}_unresolved"] += 1
    return _one_per_series(records), diagnostics, stats


def _go_factories(files: Iterable[tuple[SourceFile, NativeMetricFacts]]) -> dict[tuple[str, str], list[NativeMetric]]:
    """Go metric factories by (package, function): definitions whose options read the parameters of the
    function they are in (:func:`extractor.telemetry.go_scan._factory_of`)."""
    out: dict[tuple[str, str], list[NativeMetric]] = collections.defaultdict(list)
    for file, facts in files:
        for m in facts.metrics:
            if m.factory and m.parameters:
                out[(_package(file), m.factory)].append(m)
    return out


def _made(call: GoCall, m: NativeMetric) -> NativeMetric:
    """The metric a call of a Go factory makes: the definition at the call, each option that reads a
    parameter given the call's argument for it."""
    given = dict(zip(m.parameters, call.arguments))

    def text(fact: MetricText | None) -> MetricText | None:
        if fact is not None and fact.value is None and fact.constant in given:
            return given[fact.constant].value
        return fact

    changes: dict[str, Any] = {"line": call.line, "parameters": (), "name": text(m.name), "help": text(m.help),
                               "namespace": text(m.namespace), "subsystem": text(m.subsystem)}
    if m.labels is None and m.labels_text in given:
        argument = given[m.labels_text]
        changes.update(labels=argument.labels, label_refs=argument.label_refs,
                       labels_text=argument.labels_text or argument.value.text)
    return msgspec.structs.replace(m, **changes)


def _factory_call(file: SourceFile, call: FactoryCall, made: list[tuple[SourceFile, RustFactory]],
                  constants: dict[str, str]) -> Diagnostic:
    """A call of the system's own function that returns a prometheus crate metric: the metric is made
    there, from this call's arguments, in a way the scanner does not follow (Dynamo's
    ``Metrics::create_intcounter`` prefixes the name through two more functions)."""
    where_file, factory = min(made, key=lambda item: (item[0].path, item[1].line))
    where = f"{where_file.path}:{factory.line}" + (f" and {len(made) - 1} more of that name" if len(made) > 1 else "")
    value = _resolve(call.name, constants)
    named = repr(value) if value is not None else (call.name.text if call.name is not None else "(no argument)")
    kind = ("Int" if factory.integer else "") + factory.type.capitalize() + ("Vec" if factory.vec else "")
    return Diagnostic(file.path, call.line, "metric-factory-not-followed",
                      f"{call.callee}({named}, ...) makes a prometheus {kind} through the system's function "
                      f"{call.callee} ({where}), which builds the name it registers from its arguments; archdiff "
                      "does not follow it, so this metric is not in the metrics evidence", Severity.INFO)


def _one_per_series(records: list[MetricDefinition]) -> list[MetricDefinition]:
    """The metrics crate has no registration: ``counter!("x")`` at each place it is incremented
    names the same series. Such a metric is one record, at its first place (by path and line),
    with the labels of all places; the other libraries define a metric once, where it is built."""
    merged: dict[tuple[str, MetricType], MetricDefinition] = {}
    out = []
    for r in sorted(records):
        if r.library != _LIBRARY["metrics"]:
            out.append(r)
            continue
        first = merged.get((r.name, r.type))
        if first is None:
            merged[(r.name, r.type)] = r
            continue
        merged[(r.name, r.type)] = dataclasses.replace(
            first, labels=tuple(sorted(set(first.labels) | set(r.labels))), help=first.help or r.help)
    return sorted(out + list(merged.values()))


class ModuleConstants:
    """The Rust string constants of the whole system by module path (the file's path, less its
    extension and a ``mod.rs``/``lib.rs``/``main.rs`` name, then its inline modules), for a name
    written through modules (``frontend_service::REQUESTS_TOTAL``) in any file. A path matches the
    constants whose module path ends the way it does, matched from its last two segments for as
    long as they agree (a crate's own name, ``dynamo_runtime::``, is no directory's); several
    values left is no value."""

    def __init__(self, files: Iterable[tuple[SourceFile, NativeMetricFacts]]) -> None:
        self.by_tail: dict[tuple[str, ...], list[tuple[tuple[str, ...], str]]] = {}
        for file, facts in files:
            parts = PurePosixPath(file.path).with_suffix("").parts
            base = parts[:-1] if parts and parts[-1] in ("mod", "lib", "main") else parts
            for scoped, value in facts.scoped_constants.items():
                full = (*base, *scoped.split("::"))
                self.by_tail.setdefault(full[-2:], []).append((full, value))

    def lookup(self, path: str) -> tuple[bool, str | None]:
        """(whether any constant has that path's end, its value when they all have one)."""
        segments = tuple(path.split("::"))
        found = self.by_tail.get(segments[-2:], [])
        if not found:
            return False, None
        for size in range(3, len(segments) + 1):
            narrower = [c for c in found if c[0][-size:] == segments[-size:]]
            if not narrower:
                break
            found = narrower
        values = {value for _path, value in found}
        return True, values.pop() if len(values) == 1 else None


class _Constants(dict):
    """A file's constants by name, and the system's by module path."""

    def __init__(self, names: dict[str, str], paths: ModuleConstants | None) -> None:
        super().__init__(names)
        self.paths = paths


def _package(file: SourceFile) -> str:
    return file.path.rsplit("/", 1)[0] if "/" in file.path else ""


def _shared_constants(files: Iterable[tuple[SourceFile, NativeMetricFacts]]) -> dict[str, dict[str, str]]:
    """String constants per directory (a Go package; for Rust, the module's directory): a name
    defined in another file of the same package resolves, one defined twice differently does not."""
    seen: dict[str, dict[str, set[str]]] = {}
    for file, facts in files:
        for key, value in facts.constants.items():
            seen.setdefault(_package(file), {}).setdefault(key, set()).add(value)
    return {pkg: {k: next(iter(v)) for k, v in names.items() if len(v) == 1} for pkg, names in seen.items()}


def _shared_label_sets(files: Iterable[tuple[SourceFile, NativeMetricFacts]]) -> dict[str, dict[str, LabelSet]]:
    """Go: label name lists per package, as :func:`_shared_constants` shares constants: a list
    two files of the package define differently is no one list."""
    seen: dict[str, dict[str, set[LabelSet]]] = {}
    for file, facts in files:
        for name, found in facts.label_sets.items():
            seen.setdefault(_package(file), {}).setdefault(name, set()).add(found)
    return {pkg: {k: next(iter(v)) for k, v in sets.items() if len(v) == 1} for pkg, sets in seen.items()}


def _imported_constants(files: Iterable[tuple[SourceFile, NativeMetricFacts]], constants: dict[str, dict[str, str]],
                        ctx: Context) -> dict[str, dict[str, str]]:
    """The string constants of each Go package of the system by its import path (from go.mod), for a
    metric whose options name another package's (``Subsystem: constants.SubsystemName``)."""
    if not any(facts.imports for _f, facts in files):
        return {}
    manifests = ctx.once(system_manifests)
    return {import_path(file.path, "", manifests): constants[_package(file)]
            for file, _facts in sorted(files, key=lambda f: f[0].path) if _package(file) in constants}


def _descriptions(files: Iterable[tuple[SourceFile, NativeMetricFacts]],
                  constants: dict[str, dict[str, str]]) -> dict[str, tuple[str, str]]:
    """`describe_counter!("name", Unit::Seconds, "help")` of the metrics crate: (help, unit) by name."""
    out: dict[str, tuple[str, str]] = {}
    for file, facts in files:
        local = {**constants.get(_package(file), {}), **facts.constants}
        for m in facts.metrics:
            if m.describe:
                name = _resolve(m.name, local)
                if name is not None:
                    out.setdefault(name, (_resolve(m.help, local) or "", m.unit))
    return out


def _resolve(fact: MetricText | None, constants: dict[str, str]) -> str | None:
    if fact is None:
        return None
    if fact.value is not None:
        return fact.value
    if fact.parts:  # a format!: its value when every piece has one
        pieces = [_resolve(part, constants) for part in fact.parts]
        return None if None in pieces else "".join(p or "" for p in pieces)
    paths = getattr(constants, "paths", None)
    if fact.path and paths is not None:
        known, value = paths.lookup(fact.path)
        if known:  # a constant of that module (or several values: none)
            return value
    return constants.get(fact.constant)


def _pattern(fact: MetricText, constants: dict[str, str]) -> tuple[str, str]:
    """A format!'s name as a pattern, ``{}`` where a piece has no value, and why."""
    pieces = [_resolve(part, constants) for part in fact.parts]
    unknown = [part.text or "?" for part, piece in zip(fact.parts, pieces) if piece is None]
    return ("".join("{}" if piece is None else piece for piece in pieces),
            f"name: {', '.join(unknown)} in {fact.text} is no literal nor a string constant of the analysed files")


def _record(file: SourceFile, m: NativeMetric, constants: dict[str, str], described: dict[str, tuple[str, str]],
            bucketed: list[tuple[str, str | None]], bucket_vars: Mapping[str, tuple[float, ...]] | None = None
            ) -> tuple[MetricDefinition | None, Diagnostic | None]:
    """``bucket_vars``: Go, the bucket numbers package-level variables of the file's package hold."""
    library = m.library
    if not m.type and m.opts == "Desc":
        return None, Diagnostic(file.path, m.line, "metric-type-unresolved",
                                f"{library} NewDesc here is given no one value type by the const metrics the file "
                                "makes with it (NewConstMetric(desc, prometheus.CounterValue|GaugeValue, ...), "
                                "NewConstHistogram, NewConstSummary): its metric type is unknown", Severity.INFO)
    if not m.type:
        return None, Diagnostic(file.path, m.line, "metric-type-unresolved",
                                f"{library} Opts::new here is not handed to a constructor or register macro in the "
                                "same statement: its metric type is unknown", Severity.INFO)
    kind = MetricType(m.type)
    raw = _resolve(m.name, constants)
    name_unread = ""
    if raw is None and m.name is not None and m.name.parts:
        raw, name_unread = _pattern(m.name, constants)
    if raw is None:
        written = m.name.text if m.name is not None else "(no name)"
        return None, Diagnostic(file.path, m.line, "metric-name-unresolved",
                                f"{library} {kind.value} name {written!r} is not a literal or a constant of the "
                                "analysed files", Severity.INFO)
    namespace = _resolve(m.namespace, constants) or ""
    subsystem = _resolve(m.subsystem, constants) or ""
    dynamic = bool(name_unread) or (m.name is not None and m.name.dynamic) or any(
        part is not None and part.text and _resolve(part, constants) is None for part in (m.namespace, m.subsystem))
    help_text = _resolve(m.help, constants) or ""
    # a help the code computes (llm-d's `metricsutil.HelpMsgWithStability("...", ALPHA)`): said, not left blank
    help_unread = f"help: {m.help.text} is no literal nor a string constant of the analysed files" \
        if m.help is not None and not help_text and m.help.text else ""
    unit = ""
    rendered = None
    if library == "otel-go":
        name, unit = otel_go_name(kind, raw, m.unit, m.opts), m.unit
    elif library == "metrics":
        name = sanitize(raw)
        described_help, unit = described.get(raw, ("", ""))
        help_text = help_text or described_help
        if kind is MetricType.HISTOGRAM and not _exporter_buckets(raw, bucketed):
            rendered = MetricType.SUMMARY
    else:
        name = fq_name(namespace, subsystem, raw)
    referenced = [constants.get(ref) for ref in m.label_refs]
    unread = [ref for ref, value in zip(m.label_refs, referenced) if value is None]
    labels = tuple(sorted(set(m.labels or ()) | {v for v in referenced if v is not None} | set(m.const_labels)))
    buckets: tuple[float, ...] = ()
    buckets_resolved = True
    buckets_unread = ""
    if kind is MetricType.HISTOGRAM and rendered is None:
        fact = m.buckets
        if library == "metrics":
            buckets_resolved = False  # the exporter's configuration decides them
        elif fact is None and library == "otel-go":
            buckets = OTEL_DEFAULT_BUCKETS
        elif fact is None or fact.default:
            buckets = DEFAULT_BUCKETS
        elif fact.values is not None:
            buckets = fact.values
        elif bucket_vars and fact.text in bucket_vars:  # a variable of another file of the package
            buckets = bucket_vars[fact.text]
        else:
            buckets_resolved = False
            buckets_unread = f"buckets: {fact.text} are no literal numbers nor a variable of the package holding them" \
                if fact.text else ""
    lib = _LIBRARY[library]
    lint = lint_name(name, kind, lib, unit)
    if rendered is not None:
        lint = tuple(sorted(set(lint) | {"rendered-as-summary: metrics-exporter-prometheus renders histogram! as a "
                                         "summary unless buckets are configured"}))
    language = file.language.value
    return MetricDefinition(
        path=file.path, line=m.line, name=name, type=kind, help=help_text, labels=labels, buckets=buckets,
        unit=unit.lower(), language=language, dynamic=dynamic, exposed_names=exposed(kind, name, rendered),
        lint=lint, labels_resolved=m.labels is not None and not unread, buckets_resolved=buckets_resolved,
        library=lib, via=_via(m),
        unresolved="; ".join(r for r in (name_unread, OTEL_LABELS_AT_USE if library == "otel-go"
                                         else _unread_labels(unread), _unread_list(m), buckets_unread, help_unread)
                                if r)), None


def _unread_list(m: NativeMetric) -> str:
    """Why a label list that is no literal was not read (Go: ``labels_text``)."""
    if m.labels is not None or not m.labels_text:
        return ""
    return (f"labels: {m.labels_text} is no literal label list nor a variable of the package or local of the "
            "function holding one")


def _unread_labels(unread: list[str]) -> str:
    if not unread:
        return ""
    return (f"labels: {', '.join(unread)} in the label list {'is' if len(unread) == 1 else 'are'} no literal nor a "
            "string constant of the package or of a package it imports")


def otel_go_name(kind: MetricType, name: str, unit: str, instrument: str) -> str:
    """The family name the OpenTelemetry Go Prometheus exporter writes (module docstring)."""
    tokens = [t for t in _OTEL_SEPARATOR.split(name) if t]
    main, _, per = (conventions().otel_unit(unit) if unit else "").partition("_per_")
    if main and main not in tokens:
        tokens.append(main)
    if per:
        tokens.append("per_" + per)
    if kind is MetricType.COUNTER:
        tokens = [t for t in tokens if t != "total"] + ["total"]
    if unit == "1" and instrument == "Gauge":  # not an up-down counter's: otlptranslator's gauges only
        tokens = [t for t in tokens if t != "ratio"] + ["ratio"]
    full = "_".join(tokens)
    return "_" + full if full[:1].isdigit() else full


def _exporter_buckets(name: str, bucketed: list[tuple[str, str | None]]) -> bool:
    for how, value in bucketed:
        if how == "all" or value is None:
            return True
        if (how == "full" and name == value) or (how == "prefix" and name.startswith(value)) or \
                (how == "suffix" and name.endswith(value)):
            return True
    return False


def _via(m: NativeMetric) -> str:
    if m.library == "metrics":
        return "macro"
    if m.library == "otel-go":
        return "observable-instrument" if m.func else "instrument"
    if m.library == "prometheus":
        return "register-macro" if m.register_macro else "opts" if m.opts else "constructor"
    if m.opts == "Desc":  # Go: a custom collector's Desc
        return "collector"
    if m.factory and not m.parameters:  # Go: made by a call of a factory of the package
        return f"factory:{m.factory}"
    return "constructor"
