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
    opts: str = ""  # Rust: "histogram" for `HistogramOpts::new`, "counter-or-gauge" for `Opts::new`
    func: bool = False  # Go `NewCounterFunc`, `NewGaugeFunc`
    opts_text: str = ""  # Go: the options argument as written, when it is no literal


class NativeMetricFacts(msgspec.Struct, frozen=True, omit_defaults=True):
    """What one Rust or Go file says about Prometheus metrics."""

    metrics: tuple[NativeMetric, ...] = ()
    constants: dict[str, str] = {}  # string constants of the file by name
    # metrics-exporter-prometheus bucket configuration: (how, name) with how "full", "prefix",
    # "suffix" (name None when a constant of another file), or ("all", "") for `set_buckets`
    exporter_buckets: tuple[tuple[str, str | None], ...] = ()
    # crates whose metrics archdiff does not read: (crate, line of the file's first use of it)
    unmodeled: tuple[tuple[str, int], ...] = ()
