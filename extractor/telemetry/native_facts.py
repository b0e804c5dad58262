"""What the Rust and Go metric scanners return for one file (msgspec Structs).

Both scanners (:mod:`.rust_scan`, :mod:`.go_scan`) describe a metric definition the same way, so
:mod:`.native_metrics` turns either into records with one set of rules. The scanners are
annotated to return :class:`NativeMetricFacts`, so the driver decodes the cached facts into these
types (:mod:`extractor.run.facts`).
"""

from __future__ import annotations

import msgspec


class MetricText(msgspec.Struct, frozen=True, omit_defaults=True):
    """A name, help, namespace or subsystem argument: its value when the file says it, else how
    it is written (a constant of another file of the package may still resolve it)."""

    value: str | None = None  # a literal or a constant of this file
    text: str = ""  # as written, when it is neither
    constant: str = ""  # the name a constant would have (`NAME` of `metrics::NAME`)
    dynamic: bool = False  # `format!("{}_total", prefix)`: a pattern, `{}` where a value goes
    path: str = ""  # Rust: a constant named through modules (`names::frontend::REQUESTS`), as written
    # Rust: the pieces a `format!` (or a file's name helper around one) joins, each a literal or a
    # reference the extract step may resolve; the value is theirs when all resolve
    parts: tuple[MetricText, ...] = ()


class MetricBuckets(msgspec.Struct, frozen=True, omit_defaults=True):
    """A histogram's buckets as the definition gives them."""

    default: bool = False  # the library's default buckets, named (`prometheus.DefBuckets`)
    values: tuple[float, ...] | None = None  # the numbers, when they can be read
    text: str = ""  # as written, when they cannot


class NativeMetric(msgspec.Struct, frozen=True, omit_defaults=True):
    """One metric definition (or a `describe_*!` of the metrics crate) in Rust or Go."""

    library: str  # "prometheus" (Rust crate), "metrics" (Rust crate), "client_golang"
    line: int
    type: str = ""  # counter, gauge, histogram, summary; "" when nothing in the statement names it
    name: MetricText | None = None
    help: MetricText | None = None
    namespace: MetricText | None = None
    subsystem: MetricText | None = None
    labels: tuple[str, ...] | None = ()  # label names; None when the list is not a literal
    const_labels: tuple[str, ...] = ()
    # None: no buckets given, or (Rust) computed by a call: the library's defaults are assumed
    buckets: MetricBuckets | None = None
    describe: bool = False  # `describe_counter!(...)`: help and unit for the metric of that name
    unit: str = ""  # `Unit::Seconds` of a describe
    register_macro: bool = False  # Rust `register_*!(...)` rather than `Opts::new` + a constructor
    vec: bool = False  # a labelled vector (`register_counter_vec!`)
    integer: bool = False  # `IntCounter`, `register_int_gauge!`
    # Rust: "histogram" for `HistogramOpts::new`, "counter-or-gauge" for `Opts::new`; Go OpenTelemetry:
    # the instrument (Counter, UpDownCounter, Histogram, Gauge)
    opts: str = ""
    func: bool = False  # Go `NewCounterFunc`, `NewGaugeFunc`
    opts_text: str = ""  # Go: the options argument as written, when it is no literal
    # Go: label names the list gives as constants (`LabelPod`, `consts.Phase`), beside `labels`' strings
    label_refs: tuple[str, ...] = ()
    labels_text: str = ""  # Go: the label list as written, when it cannot be read (labels None)
    # Go: the function the definition is in, when a name, help, namespace, subsystem or the label list
    # is one of its parameters (a metric factory: its calls make the metrics), and those parameters in order
    factory: str = ""
    parameters: tuple[str, ...] = ()


class RustFactory(msgspec.Struct, frozen=True, omit_defaults=True):
    """A Rust function of the system that returns a prometheus crate metric (``fn create_intcounter(
    &self, name: &str, ..) -> Result<prometheus::IntCounter>``): its calls make metrics."""

    name: str
    line: int
    type: str  # counter, gauge, histogram
    integer: bool = False
    vec: bool = False


class FactoryCall(msgspec.Struct, frozen=True, omit_defaults=True):
    """A call of a function named like a metric maker (``metrics.create_intcounter(NAME, ..)``); the
    extract step keeps those of the system's factories."""

    callee: str
    line: int
    name: MetricText | None = None  # its first argument


class ClientBuckets(msgspec.Struct, frozen=True, omit_defaults=True):
    """The buckets a client_rust histogram is made with, as far as its file says."""

    values: tuple[float, ...] | None = None  # read (a literal array, exponential_buckets(...) computed)
    constant: str = ""  # a `const NAME: [f64; N]` of the crate (`NAME.iter().copied()`)
    function: str = ""  # the histogram a crate fn makes (`f as fn() -> Histogram` handed to a Family)
    text: str = ""  # as written, when none of these


class ClientRegistry(msgspec.Struct, frozen=True, omit_defaults=True):
    """Where the registry a client_rust metric is registered on comes from, within one function."""

    prefix: str = ""  # what `sub_registry_with_prefix` / `Registry::with_prefix` add here, joined with `_`
    labels: tuple[str, ...] = ()  # constant label names `sub_registry_with_label` adds here
    function: str = ""  # the registry is a parameter of this function (`S::register`, `f`): its callers decide
    index: int = -1  # ... at this position (`self` not counted)
    unknown: str = ""  # why its origin is not read (a field, an expression)


class ClientValue(msgspec.Struct, frozen=True, omit_defaults=True):
    """The metric handed to `register`: the types its function gives it, best first. Types are
    written without spaces, a client_rust type as `prometheus_client::Name`, a crate's as its name."""

    declared: str = ""  # `let x: T = ...`, or a parameter's type
    expression: str = ""  # the type the making expression names (`Family::<L, M>::default()`)
    call: str = ""  # a crate fn whose result it is (`let x = f();`): its return type
    field: str = ""  # the type of the field of `Self { x, ... }` it is stored in
    buckets: ClientBuckets | None = None  # where a histogram is made, when the function shows it
    info_labels: tuple[str, ...] | None = None  # `Info::new(vec![("key", value)])`
    text: str = ""  # the argument as written


class ClientRegistration(msgspec.Struct, frozen=True, omit_defaults=True):
    """One `registry.register(name, help, metric)` or `register_with_unit(name, help, unit, metric)`."""

    line: int
    name: MetricText
    help: MetricText | None = None
    unit: MetricText | None = None  # `Unit::Seconds` as "seconds", `Unit::Other("x")` as "x"
    value: ClientValue = ClientValue()
    registry: ClientRegistry = ClientRegistry()


class ClientCall(msgspec.Struct, frozen=True, omit_defaults=True):
    """A call handing a registry to a function of the crate (`SchedulerMetrics::register(&mut r)`)."""

    callee: str  # `S::f` or `f`
    index: int
    registry: ClientRegistry
    line: int


class ClientFunction(msgspec.Struct, frozen=True, omit_defaults=True):
    """A free function of the crate: what it returns and, for a histogram, its buckets."""

    returns: str
    buckets: ClientBuckets | None = None


class ClientLabel(msgspec.Struct, frozen=True, omit_defaults=True):
    """A field of a struct deriving `EncodeLabelSet`: a label, or a flattened label set."""

    name: str
    type: str
    flatten: bool = False


class ClientRustFacts(msgspec.Struct, frozen=True, omit_defaults=True):
    """What one Rust file says about metrics of the `prometheus-client` crate (client_rust): its
    registrations, and the definitions other files of the crate may need to type them."""

    registrations: tuple[ClientRegistration, ...] = ()
    calls: tuple[ClientCall, ...] = ()
    aliases: dict[str, str] = {}  # `type X = Y;` and `pub use prometheus_client::...::Y as X;`
    label_sets: dict[str, tuple[ClientLabel, ...]] = {}
    metric_types: dict[str, tuple[str, int]] = {}  # the crate's own EncodeMetric types: (kind or "", line)
    functions: dict[str, ClientFunction] = {}
    bucket_constants: dict[str, tuple[float, ...]] = {}
    in_tests: int = 0  # registrations under #[cfg(test)] or #[test]: not in the product, not read
    collectors: tuple[int, ...] = ()  # lines of `register_collector(...)`: a Collector writes its own


class LabelSet(msgspec.Struct, frozen=True, array_like=True):
    """Go: a package-level `[]string{...}` of label names: the strings and constants read, the names
    left for the extract step (``NativeMetric.label_refs``)."""

    labels: tuple[str, ...]
    label_refs: tuple[str, ...] = ()


class GoArgument(msgspec.Struct, frozen=True, omit_defaults=True):
    """One argument of a call of a Go function of the package, read as a metric factory would take it."""

    value: MetricText  # as a name, help, namespace or subsystem
    labels: tuple[str, ...] | None = None  # as a label list, when it is one (a literal, a variable holding one)
    label_refs: tuple[str, ...] = ()
    labels_text: str = ""


class GoCall(msgspec.Struct, frozen=True, omit_defaults=True):
    """A call of a plain function name (``createCounterVec(modelInferCounterName, "...", labelNames)``)
    in a Go file that defines metrics: a call of a metric factory of the package when the extract step
    finds a function of that name whose metric takes its options from its parameters."""

    callee: str
    line: int
    arguments: tuple[GoArgument, ...]


class NativeMetricFacts(msgspec.Struct, frozen=True, omit_defaults=True):
    """What one Rust or Go file says about Prometheus metrics."""

    metrics: tuple[NativeMetric, ...] = ()
    constants: dict[str, str] = {}  # string constants of the file by name (a name given two values left out)
    # metrics-exporter-prometheus bucket configuration: (how, name) with how "full", "prefix",
    # "suffix" (name None when a constant of another file), or ("all", "") for `set_buckets`
    exporter_buckets: tuple[tuple[str, str | None], ...] = ()
    # crates whose metrics archdiff does not read: (crate, line of the file's first use of it)
    unmodeled: tuple[tuple[str, int], ...] = ()
    client: ClientRustFacts | None = None  # Rust: the prometheus-client crate's shapes
    imports: dict[str, str] = {}  # Go, in a file defining metrics: each import's local name -> import path
    # Rust: every string constant of the file by its path of inline modules (`frontend::REQUESTS`,
    # `NAME` at the top), for references through modules from any file of the system
    scoped_constants: dict[str, str] = {}
    factories: tuple[RustFactory, ...] = ()  # Rust: functions returning a prometheus crate metric
    factory_calls: tuple[FactoryCall, ...] = ()  # Rust: calls of functions named like a metric maker
    label_sets: dict[str, LabelSet] = {}  # Go: the file's package-level label name lists, by variable
    go_calls: tuple[GoCall, ...] = ()  # Go: calls of plain function names, in a file defining metrics
    # Go: package-level `var`s of the file holding bucket numbers (`DefaultHistogramBuckets = []float64{...}`)
    bucket_vars: dict[str, tuple[float, ...]] = {}
