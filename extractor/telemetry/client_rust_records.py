"""Metric records of the Rust ``prometheus-client`` crate (prometheus/client_rust), crate-wide.

Each file's scanner (:mod:`.client_rust_scan`) says what one function shows of a registration;
here the crate's files are read together (the crate: the nearest Cargo.toml above the file): type
aliases and ``pub use`` re-exports, structs deriving ``EncodeLabelSet``, ``const`` bucket arrays,
free functions that make histograms, the crate's own ``EncodeMetric`` types, and the calls that
hand a registry to the function that registers on it (for ``sub_registry_with_prefix`` prefixes
made by a caller). A definition written differently in two files of one crate is not used.

Exposition, read from client_rust 0.25.0 (``src/encoding/text.rs`` ``encode_descriptor``,
``MetricEncoder::write_prefix_name_unit``/``write_suffix``; ``src/registry.rs``
``sub_registry_with_prefix``, ``Unit::as_str``, ``Descriptor::new``): the family is
``<prefix>_<name>_<unit>`` (a sub-registry's prefix joined to its parent's with ``_``); a counter's
sample is ``<family>_total`` (always appended: a name already ending ``_total`` gives
``_total_total``), a histogram's ``_sum``/``_count``/``_bucket``, an info's ``_info``, a gauge's
the family name. Labels are a label-set struct's fields in declaration order (``r#type`` is
``type``; ``#[prometheus(flatten)]`` inlines the field's own set), after the constant labels of
``sub_registry_with_label``. ``Histogram::new(buckets)`` adds ``+Inf`` (not listed, as for every
library); ``exponential_buckets``/``linear_buckets`` are computed by the scanner. The help is kept
as written (client_rust writes it with a ``.`` appended).

A name ``format!`` builds from a value the crate does not hold (``format!("{namespace}_throughput")``,
a namespace the binary takes from its configuration) is kept as a pattern, ``{}`` where that value
goes, ``dynamic`` and the reason in ``unresolved``, as the prometheus crate's are (native_metrics).

What is not determined is said, never guessed: a type no candidate resolves is a
``metric-type-unresolved`` diagnostic (no record, as for the other libraries); labels or buckets
not read leave ``labels_resolved``/``buckets_resolved`` false with the reason in ``unresolved``; a
prefix a caller outside the crate could give is a ``metric-prefix-unresolved`` diagnostic.
"""

from __future__ import annotations

import dataclasses
from collections import Counter as Tally
from collections.abc import Iterable

from extractor.context import SourceFile
from extractor.model import Diagnostic, Severity
from extractor.native.manifests import Manifests
from extractor.telemetry.native_facts import (ClientBuckets, ClientFunction, ClientLabel, ClientRegistration,
                                               ClientRegistry, ClientRustFacts, ClientValue, MetricText,
                                               NativeMetricFacts)
from extractor.telemetry.records import MetricDefinition, MetricType, expose_names, lint_name

LIBRARY = "client_rust"
_CRATE = "prometheus_client::"
# client_rust 0.25 src/metrics/*.rs: each type's `TypedMetric::TYPE`
_LIBRARY_KINDS = {"Counter": MetricType.COUNTER, "ConstCounter": MetricType.COUNTER,
                  "CounterWithExemplar": MetricType.COUNTER, "Gauge": MetricType.GAUGE,
                  "ConstGauge": MetricType.GAUGE, "Histogram": MetricType.HISTOGRAM,
                  "HistogramWithExemplars": MetricType.HISTOGRAM, "Info": MetricType.INFO}
_MAX_DEPTH = 8


@dataclasses.dataclass(frozen=True, slots=True)
class _Kind:
    """What a metric's type says: its kind (None with ``why`` when not read), labels, and the
    crate's own EncodeMetric type it is, if any (``Histogram@histogram.rs:71``)."""

    kind: MetricType | None = None
    labels: tuple[str, ...] = ()
    labels_why: str = ""
    own: str = ""
    why: str = ""


@dataclasses.dataclass
class _Crate:
    """Definitions of one crate's files, by name; ``clashes`` are names defined differently twice."""

    aliases: dict[str, str] = dataclasses.field(default_factory=dict)
    label_sets: dict[str, tuple[ClientLabel, ...]] = dataclasses.field(default_factory=dict)
    metric_types: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)  # name -> (kind, where)
    functions: dict[str, ClientFunction] = dataclasses.field(default_factory=dict)
    buckets: dict[str, tuple[float, ...]] = dataclasses.field(default_factory=dict)
    strings: dict[str, str] = dataclasses.field(default_factory=dict)
    calls: dict[tuple[str, int], list[ClientRegistry]] = dataclasses.field(default_factory=dict)
    clashes: set[str] = dataclasses.field(default_factory=set)

    def seen_from(self, client: ClientRustFacts) -> _Crate:
        """The tables as one file sees them: its own functions and bucket arrays (private ones of
        the same name may sit in several modules) before the crate's."""
        return dataclasses.replace(self, functions={**self.functions, **client.functions},
                                   buckets={**self.buckets, **client.bucket_constants})

    def add(self, table: dict, name: str, value: object) -> None:
        if name in self.clashes:
            return
        if name in table and table[name] != value:
            del table[name]
            self.clashes.add(name)
        else:
            table[name] = value


def client_rust_records(files: Iterable[tuple[SourceFile, NativeMetricFacts]],
                        manifests: Manifests) -> tuple[list[MetricDefinition], list[Diagnostic], Tally]:
    """Records of every client_rust registration, with the diagnostics of what was not read."""
    by_crate: dict[str, list[tuple[SourceFile, NativeMetricFacts]]] = {}
    for file, facts in files:
        if facts.client is not None:
            manifest = manifests.crate_of(file.path)
            by_crate.setdefault(manifest.dir if manifest is not None else "", []).append((file, facts))
    records: list[MetricDefinition] = []
    diagnostics: list[Diagnostic] = []
    stats: Tally = Tally()
    for key in sorted(by_crate):
        members = sorted(by_crate[key], key=lambda e: e[0].path)
        crate = _tables(members)
        for file, facts in members:
            client = facts.client
            assert client is not None
            stats["rust_client_registrations_in_tests"] += client.in_tests
            for line in client.collectors:
                stats["rust_client_collectors"] += 1
                diagnostics.append(Diagnostic(file.path, line, "metric-collector-not-read",
                                              "client_rust register_collector: a Collector writes its own metrics "
                                              "in encode(); they are not in the metrics evidence", Severity.INFO))
            seen_from_file = crate.seen_from(client)
            for registration in client.registrations:
                stats["rust_client_registrations"] += 1
                record, problems = _record(file, registration, seen_from_file)
                if record is None:
                    stats["rust_client_unresolved"] += 1
                else:
                    records.append(record)
                diagnostics.extend(problems)
    return records, diagnostics, stats


def _tables(members: list[tuple[SourceFile, NativeMetricFacts]]) -> _Crate:
    crate = _Crate()
    for file, facts in members:
        client = facts.client
        assert client is not None
        for name, text in client.aliases.items():
            crate.add(crate.aliases, name, text)
        for name, fields in client.label_sets.items():
            crate.add(crate.label_sets, name, fields)
        for name, (kind, line) in client.metric_types.items():
            crate.add(crate.metric_types, name, (kind, f"{file.path}:{line}"))
        for name, function in client.functions.items():
            crate.add(crate.functions, name, function)
        for name, values in client.bucket_constants.items():
            crate.add(crate.buckets, name, values)
        for name, value in facts.constants.items():
            crate.add(crate.strings, name, value)
        for call in client.calls:
            crate.calls.setdefault((call.callee, call.index), []).append(call.registry)
    return crate


def _record(file: SourceFile, reg: ClientRegistration,
            crate: _Crate) -> tuple[MetricDefinition | None, list[Diagnostic]]:
    name = _string(reg.name, crate)
    name_why = ""
    if name is None and reg.name is not None and reg.name.parts:  # `format!("{namespace}_x")`: a pattern
        pieces = [_string(part, crate) for part in reg.name.parts]
        name = "".join("{}" if piece is None else piece for piece in pieces)
        name_why = (f"name: {', '.join(p.text or '?' for p, v in zip(reg.name.parts, pieces) if v is None)} in "
                    f"{reg.name.text} is no literal nor a string constant of the crate")
    if name is None:
        return None, [Diagnostic(file.path, reg.line, "metric-name-unresolved",
                                 f"client_rust metric name {reg.name.text!r} is not a literal or a constant of the "
                                 "crate", Severity.INFO)]
    found = _kind_of(reg.value, crate)
    if found.kind is None:
        return None, [Diagnostic(file.path, reg.line, "metric-type-unresolved",
                                 f"client_rust metric {name!r}: {found.why}", Severity.INFO)]
    kind = found.kind
    reasons: list[str] = [name_why] if name_why else []
    problems: list[Diagnostic] = []
    unit = ""
    dynamic = bool(name_why)
    if reg.unit is not None:
        unit = _string(reg.unit, crate) or ""
        if not unit:
            dynamic = True
            unit = "{}"
            reasons.append(f"unit: {reg.unit.text} is not a Unit archdiff reads")
    prefix, registry_labels, prefix_why = _prefix(reg.registry, crate, frozenset())
    if prefix is None:
        reasons.append(f"prefix: {prefix_why}")
        problems.append(Diagnostic(file.path, reg.line, "metric-prefix-unresolved",
                                   f"client_rust metric {name!r}: {prefix_why}; a sub-registry prefix there would "
                                   "come before the name", Severity.INFO))
    full = "_".join(part for part in (prefix or "", name, unit) if part)
    labels, labels_why = found.labels, found.labels_why
    if kind is MetricType.INFO and not labels and not labels_why:  # `Info::new(vec![("key", value)])`
        labels = reg.value.info_labels or ()
        labels_why = "" if reg.value.info_labels is not None else f"labels: the info's label set {reg.value.text}"
    labels_resolved = not labels_why and prefix is not None
    if labels_why:
        reasons.append(labels_why)
    buckets: tuple[float, ...] = ()
    buckets_why = ""
    if kind is MetricType.HISTOGRAM:
        buckets, buckets_why = _buckets(reg.value.buckets, reg.value.call, crate, 0)
        if buckets_why:
            reasons.append(buckets_why)
    lint = set(lint_name(full, kind, LIBRARY, unit if unit != "{}" else ""))
    if kind is MetricType.COUNTER and full.endswith("_total"):
        lint.add(f"total-appended: client_rust appends _total to a counter: exposed as {full}_total")
    via = "register_with_unit" if reg.unit is not None else "register"
    return MetricDefinition(
        path=file.path, line=reg.line, name=full, type=kind, help=_string(reg.help, crate) or "",
        labels=registry_labels + labels, buckets=buckets, unit=unit if unit != "{}" else "",
        language=file.language.value, dynamic=dynamic,
        exposed_names=expose_names(kind, full, "collector"),  # client_rust's suffixes are a metric family's
        lint=tuple(sorted(lint)), labels_resolved=labels_resolved, buckets_resolved=not buckets_why,
        library=LIBRARY, via=f"{via} > own-type:{found.own}" if found.own else via,
        unresolved="; ".join(reasons)), problems


def _string(text: MetricText | None, crate: _Crate) -> str | None:
    if text is None:
        return None
    if text.value is not None:
        return text.value
    if text.parts:  # a format!: its value when every piece has one
        pieces = [_string(part, crate) for part in text.parts]
        return None if None in pieces else "".join(piece or "" for piece in pieces)
    return crate.strings.get(text.constant) if text.constant else None


# -- types -------------------------------------------------------------------------------------------

def _kind_of(value: ClientValue, crate: _Crate) -> _Kind:
    """The first type that says what the metric is, in the order the code is surest of: the
    `let` annotation, the type the making expression names, the called function's return type,
    the struct field the metric is stored in. `Family::default()` alone names no type."""
    returned = crate.functions[value.call].returns if value.call in crate.functions else ""
    for candidate in (value.declared, value.expression, returned, value.field):
        if candidate and not _incomplete(candidate, crate):
            return _resolve(candidate, crate, 0)
    return _Kind(why=f"the type of {value.text} is written neither where it is made (a `let` annotation, "
                     "`Family::<L, M>::default()`, a function's return type) nor in a field of the struct the "
                     "function builds")


def _incomplete(text: str, crate: _Crate) -> bool:
    base, args = split_type(_expand(text, crate))
    return base == _CRATE + "Family" and not args


def _expand(text: str, crate: _Crate) -> str:
    """An alias without generic arguments, followed to what it names."""
    for _ in range(_MAX_DEPTH):
        if text not in crate.aliases:
            break
        text = crate.aliases[text]
    return text


def _resolve(text: str, crate: _Crate, depth: int) -> _Kind:
    base, args = split_type(text)
    if depth > _MAX_DEPTH:
        return _Kind(why=f"type {text} is followed through too many aliases")
    if base.startswith(_CRATE):
        name = base[len(_CRATE):]
        if name == "Family":
            if len(args) < 2:
                return _Kind(why=f"the family {text} does not name its metric type")
            inner = _resolve(args[1], crate, depth + 1)
            if inner.kind is None:
                return inner
            labels, why = _labels(args[0], crate, depth + 1)
            return dataclasses.replace(inner, labels=labels, labels_why=why)
        if name in _LIBRARY_KINDS:
            if name == "Info" and args:
                labels, why = _labels(args[0], crate, depth + 1)
                return _Kind(MetricType.INFO, labels, why)
            return _Kind(_LIBRARY_KINDS[name])
        known = ", ".join(sorted(_LIBRARY_KINDS))
        return _Kind(why=f"client_rust type {name} is not one of its metric types ({known})")
    if base in crate.aliases:
        return _resolve(crate.aliases[base], crate, depth + 1)
    if base in crate.metric_types:
        kind, where = crate.metric_types[base]
        if kind in (k.value for k in _LIBRARY_KINDS.values()):
            return _Kind(MetricType(kind), own=f"{base}@{where}")
        return _Kind(why=f"{base} implements EncodeMetric ({where}) but its metric_type() names no MetricType "
                         "archdiff reads")
    if base in crate.clashes:
        return _Kind(why=f"{base} is defined differently in several files of the crate")
    if base in _LIBRARY_KINDS or base == "Family":
        return _Kind(why=f"{base} is neither imported from prometheus_client (by name) nor an EncodeMetric type of "
                         "the crate")
    return _Kind(why=f"type {text} is not a client_rust metric type, an alias of one, or an EncodeMetric type of the "
                     "crate")


def _labels(text: str, crate: _Crate, depth: int) -> tuple[tuple[str, ...], str]:
    """A label set's names, "" as the reason; or no names and why they are not read."""
    base, _args = split_type(text)
    if base == _CRATE + "NoLabelSet":
        return (), ""
    if depth <= _MAX_DEPTH and base in crate.label_sets:
        names: list[str] = []
        for field in crate.label_sets[base]:
            if not field.flatten:
                names.append(field.name)
                continue
            inner, why = _labels(field.type, crate, depth + 1)
            if why:
                return (), f"{why} (flattened into {base}.{field.name})"
            names.extend(inner)
        return tuple(names), ""
    if depth <= _MAX_DEPTH and base in crate.aliases:
        return _labels(crate.aliases[base], crate, depth + 1)
    if base == "Vec" or text.startswith(("[", "&[", "(")):
        return (), (f"labels: the label set is {text}: its names come with each series (get_or_create), "
                    "not from a type")
    return (), f"labels: {text} is not a struct deriving EncodeLabelSet in the crate"


def split_type(text: str) -> tuple[str, list[str]]:
    """`A<B,C<D>,fn()->E>` -> ("A", ["B", "C<D>", "fn()->E"]); a type without arguments -> (text, [])."""
    opening = text.find("<")
    if opening < 0 or not text.endswith(">"):
        return text, []
    args: list[str] = []
    depth, start = 0, opening + 1
    inner_end = len(text) - 1
    i = start
    while i < inner_end:
        c = text[i]
        if c == "-" and text.startswith("->", i):
            i += 2
            continue
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
        elif c == "," and depth == 0:
            args.append(text[start:i])
            start = i + 1
        i += 1
    args.append(text[start:inner_end])
    return text[:opening], [a for a in args if a]


# -- buckets and prefixes ----------------------------------------------------------------------------

def _buckets(fact: ClientBuckets | None, call: str, crate: _Crate, depth: int) -> tuple[tuple[float, ...], str]:
    if fact is None and call in crate.functions:
        fact = crate.functions[call].buckets
    if fact is None:
        return (), "buckets: not given where the histogram is made"
    if fact.values is not None:
        return tuple(v for v in fact.values if v != float("inf")), ""
    if fact.constant:
        if fact.constant in crate.buckets:
            return crate.buckets[fact.constant], ""
        return (), f"buckets: {fact.constant} is not a constant array of numbers of the crate"
    if fact.function:
        made = crate.functions.get(fact.function)
        if made is not None and made.buckets is not None and depth < _MAX_DEPTH:
            return _buckets(made.buckets, "", crate, depth + 1)
        return (), f"buckets: {fact.function} is not a function of the crate making the histogram with its buckets"
    return (), f"buckets: {fact.text}: not read statically"


def _prefix(registry: ClientRegistry, crate: _Crate,
            seen: frozenset[str]) -> tuple[str | None, tuple[str, ...], str]:
    """The registry's prefix and constant labels; (None, (), why) when the code does not show them.
    A registry handed in as a parameter takes what every caller in the crate hands: one answer."""
    if registry.unknown:
        return None, (), registry.unknown
    if not registry.function:
        return registry.prefix, registry.labels, ""
    where = f"parameter {registry.index + 1} of {registry.function}"
    callers = crate.calls.get((registry.function, registry.index), [])
    if not callers:
        return None, (), f"the registry is {where}, which no function of the crate hands a registry"
    if registry.function in seen:
        return None, (), f"the registry is {where}, handed on in a cycle"
    outcomes = {_prefix(c, crate, seen | {registry.function}) for c in callers}
    if len(outcomes) > 1:
        return None, (), f"the callers of {registry.function} hand it registries with different prefixes"
    outer, labels, why = outcomes.pop()
    if outer is None:
        return None, (), why
    joined = f"{outer}_{registry.prefix}" if outer and registry.prefix else outer or registry.prefix
    return joined, labels + registry.labels, ""
