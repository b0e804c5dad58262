"""Rust and Go metric definitions and the series their libraries expose.

None of the four libraries can run here (no Go toolchain; crates.io is out of reach for cargo),
so the expected series are the libraries' documented rules, cited in
extractor/telemetry/native_metrics.py: the prometheus crate and client_golang join
namespace/subsystem/name with `_` and expose a counter under its name as given; the metrics crate's
exporter replaces characters outside [a-zA-Z0-9_:] with `_` and renders `histogram!` as a summary
unless buckets are configured; client_rust (prometheus-client) appends `_total` to a counter and
`_<unit>` to a name registered with a unit (extractor/telemetry/client_rust_records.py).
"""

from __future__ import annotations

import pytest

from extractor.telemetry.client_rust_records import split_type
from extractor.telemetry.native_metrics import exposed, fq_name, sanitize
from extractor.telemetry.records import MetricType

from tests.native_support import fixture_bundle, metrics_by_name


@pytest.mark.parametrize(("parts", "expected"), [
    (("ns", "sub", "name"), "ns_sub_name"), (("", "sub", "name"), "sub_name"), (("ns", "", "name"), "ns_name"),
    (("", "", "name"), "name"),
])
def test_fq_name_skips_empty_parts(parts, expected):
    assert fq_name(*parts) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    ("tgi.request.count", "tgi_request_count"), ("a-b c", "a_b_c"), ("1abc", "_abc"), ("ok:x_1", "ok:x_1")])
def test_metrics_exporter_sanitizes_names(raw, expected):
    assert sanitize(raw) == expected


def test_rust_metrics_of_both_crates():
    found = metrics_by_name(fixture_bundle("pyo3_ext"), "rust")
    assert set(found) == {"fastok_encode_calls_total", "fastok_encode_seconds", "fastok_model_vocab_entries",
                          "fastok_batch_size", "fastok_batches"}
    counter = found["fastok_encode_calls_total"]  # register_int_counter! inside lazy_static!
    assert (counter["type"], counter["exposed_names"], counter["library"]) == (
        "counter", ["fastok_encode_calls_total"], "rust-prometheus")
    hist = found["fastok_encode_seconds"]  # HistogramOpts::new(..).namespace(NAMESPACE).buckets(..)
    assert hist["buckets"] == [0.001, 0.01, 0.1] and hist["labels"] == ["model"]
    assert hist["exposed_names"] == ["fastok_encode_seconds", "fastok_encode_seconds_bucket",
                                     "fastok_encode_seconds_count", "fastok_encode_seconds_sum"]
    gauge = found["fastok_model_vocab_entries"]  # Opts::new handed to IntGaugeVec::new
    assert gauge["type"] == "gauge" and gauge["help"] == "Entries in the vocabulary"
    assert gauge["labels"] == ["model"] and gauge["labels_resolved"]  # the vector's label list
    batch = found["fastok_batch_size"]  # metrics::histogram!("fastok.batch.size"): no buckets configured
    assert batch["exposed_names"] == ["fastok_batch_size", "fastok_batch_size_count", "fastok_batch_size_sum"]
    assert batch["help"] == "Sequences per encode batch" and batch["labels"] == ["mode"]
    assert found["fastok_batches"]["exposed_names"] == ["fastok_batches"]  # no _total from the exporter


def test_go_metrics_with_constants_from_another_file_and_factories():
    found = metrics_by_name(fixture_bundle("cgo_mini"), "go")
    assert set(found) == {"cgomini_server_requests_total", "cgomini_model_load_seconds", "cgomini_models_loaded",
                          "queue_wait_seconds"}
    requests = found["cgomini_server_requests_total"]  # Namespace from names.go, Subsystem from metrics.go
    assert requests["labels"] == ["method"] and requests["exposed_names"] == ["cgomini_server_requests_total"]
    load = found["cgomini_model_load_seconds"]  # promauto.NewHistogram, ExponentialBuckets(0.5, 2, 4)
    assert load["buckets"] == [0.5, 1.0, 2.0, 4.0]
    assert found["cgomini_models_loaded"]["type"] == "gauge"  # factory := promauto.With(reg)
    summary = found["queue_wait_seconds"]  # promauto.With(reg).NewSummaryVec
    assert summary["exposed_names"] == ["queue_wait_seconds", "queue_wait_seconds_count", "queue_wait_seconds_sum"]


def test_exposed_series_per_type():
    assert exposed(MetricType.HISTOGRAM, "h") == ("h", "h_bucket", "h_count", "h_sum")
    assert exposed(MetricType.HISTOGRAM, "h", MetricType.SUMMARY) == ("h", "h_count", "h_sum")
    assert exposed(MetricType.COUNTER, "c_total") == ("c_total",)


def _client_rust_record(m: dict) -> tuple:
    return (m["line"], m["type"], m["labels"], m["buckets"], m["unit"], m["exposed_names"], m["labels_resolved"],
            m["buckets_resolved"], m["unresolved"])


def test_prometheus_client_crate_registrations_are_read_across_the_crate():
    # client_rust (prometheus-client 0.25) registers by value: the kind, labels and buckets come from the
    # value's type, written in lib.rs's aliases, labels.rs's label structs, a struct field, or a
    # constructor fn; the prefix from a caller's sub-registry
    bundle = fixture_bundle("client_rust_mini")
    found = metrics_by_name(bundle, "rust")
    assert {m["library"] for m in found.values()} == {"client_rust"}
    assert {m["path"] for m in found.values()} == {"src/server.rs"}
    got = {name: _client_rust_record(m) for name, m in found.items()}
    hist = ["_bucket", "_count", "_sum"]
    assert got == {
        # RouteHits::default(): alias of Family<RouteLabels, Hits>, Hits = Counter<u64, AtomicU64>; r#type is `type`
        "kit_route_hits": (46, "counter", ["route", "type"], [], "", ["kit_route_hits", "kit_route_hits_total"],
                           True, True, ""),
        # Family::new_with_constructor(latency_histogram as fn() -> Histogram): the Self field's type gives the
        # labels (ShardLabels flattens RouteLabels), the fn its const bucket array; register_with_unit(Unit::Seconds)
        "kit_shard_latency_seconds": (49, "histogram", ["shard", "route", "type"], [0.05, 0.2, 1.0, 5.0], "seconds",
                                      ["kit_shard_latency_seconds"] + [f"kit_shard_latency_seconds{s}" for s in hist],
                                      True, True, ""),
        # the name is a const of lib.rs
        "kit_queue_depth": (52, "gauge", [], [], "", ["kit_queue_depth"], True, True, ""),
        "kit_extra_events": (55, "counter", [], [], "", ["kit_extra_events", "kit_extra_events_total"], False, True,
                             "labels: the label set is Vec<(String,String)>: its names come with each series "
                             "(get_or_create), not from a type"),
        # a sub-registry of the sub-registry; exponential_buckets(64.0, 4.0, 4) computed
        "kit_io_payload_bytes": (59, "histogram", [], [64.0, 256.0, 1024.0, 4096.0], "bytes",
                                 ["kit_io_payload_bytes"] + [f"kit_io_payload_bytes{s}" for s in hist], True, True, ""),
        "kit_build": (62, "info", ["version", "commit"], [], "", ["kit_build_info"], True, True, ""),
        # client_rust appends _total to whatever the counter is named
        "kit_restarts_total": (65, "counter", [], [], "", ["kit_restarts_total", "kit_restarts_total_total"],
                               True, True, ""),
        # registered on a parameter of a function nothing in the crate calls: the prefix is the caller's
        "uptime": (77, "gauge", [], [], "", ["uptime"], False, True,
                   "prefix: the registry is parameter 1 of register_uptime, which no function of the crate hands a "
                   "registry"),
    }
    assert found["kit_restarts_total"]["lint"] == [
        "total-appended: client_rust appends _total to a counter: exposed as kit_restarts_total_total"]
    said = {(d["code"], d["path"], d["line"]) for d in bundle["diagnostics"]}
    assert ("metric-type-unresolved", "src/server.rs", 68) in said  # Sampled's metric_type() is decided at run time
    assert ("metric-prefix-unresolved", "src/server.rs", 77) in said
    assert not [d for d in bundle["diagnostics"] if d["code"] == "metric-library-not-modeled"]
    stats = bundle["stats"]["metrics"]
    assert (stats["rust_client_registrations"], stats["rust_client_unresolved"],
            stats["rust_client_registrations_in_tests"]) == (9, 1, 1)


@pytest.mark.parametrize(("text", "expected"), [
    ("prometheus_client::Family<EngineLabels,Histogram,fn()->Histogram>",
     ("prometheus_client::Family", ["EngineLabels", "Histogram", "fn()->Histogram"])),
    ("Family<Vec<(String,String)>,Gauge<f64,AtomicU64>>", ("Family", ["Vec<(String,String)>", "Gauge<f64,AtomicU64>"])),
    ("Histogram", ("Histogram", [])),
])
def test_client_rust_types_split_at_their_top_level_arguments(text, expected):
    assert split_type(text) == expected


ROUTER_021 = {
    # metrics 0.21's macros (TGI's and LoRAX's routers): a value argument, then label pairs
    "router/src/infer.rs": (
        "pub fn batch(d: std::time::Duration) {\n"
        "    metrics::increment_counter!(\"router_request_failure\", \"err\" => \"validation\");\n"
        "    metrics::histogram!(\"router_batch_duration\", d.as_secs_f64(), \"method\" => \"prefill\");\n"
        "    metrics::increment_gauge!(\"router_queue_size\", 1.0);\n"
        "    metrics::absolute_counter!(\"router_tokens\", 5);\n"
        "}\n"
        "pub fn fail() {\n"
        "    metrics::increment_counter!(\"router_request_failure\", \"stage\" => \"queue\");\n"
        "    metrics::decrement_gauge!(\"router_queue_size\", 1.0);\n"
        "    metrics::register_counter!(\"router_started\");\n"
        "}\n"),
    # a bare register macro imported from the metrics crate
    "router/src/server.rs": (
        "use metrics::register_histogram;\n"
        "pub fn start() {\n    register_histogram!(\"router_batch_size\", \"kind\" => \"decode\");\n}\n"),
    # a bare register macro of the prometheus crate stays the prometheus crate's
    "exporter/src/lib.rs": (
        "use prometheus::register_counter;\n"
        "pub fn start() {\n    register_counter!(\"exporter_requests\", \"Requests served\").unwrap();\n}\n"),
    # client_rust's module paths name `metrics::`: no metrics-crate macro is read there
    "client/src/lib.rs": (
        "use prometheus_client::metrics::histogram::Histogram;\n"
        "macro_rules! histogram { ($name:expr) => { Histogram::new([1.0].into_iter()) }; }\n"
        "pub fn make() -> Histogram {\n    histogram!(\"local_thing\")\n}\n"),
}


def _bundle_of_tree(root, files: dict[str, str]) -> dict:
    """The evidence of a tree of ``files`` (path -> text) written under ``root``."""
    from extractor.context import ExtractOptions
    from extractor.run.pipeline import extract_system

    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return extract_system([str(root)], options=ExtractOptions(jobs=1, probe_structs=False)).bundle


def test_the_metrics_crate_macros_up_to_0_21_are_read(tmp_path):
    found = metrics_by_name(_bundle_of_tree(tmp_path, ROUTER_021), "rust")
    assert {name: (m["type"], m["labels"], m["library"], m["path"], m["line"]) for name, m in found.items()} == {
        "router_request_failure": ("counter", ["err", "stage"], "metrics-rs", "router/src/infer.rs", 2),
        "router_batch_duration": ("histogram", ["method"], "metrics-rs", "router/src/infer.rs", 3),
        "router_queue_size": ("gauge", [], "metrics-rs", "router/src/infer.rs", 4),
        "router_tokens": ("counter", [], "metrics-rs", "router/src/infer.rs", 5),
        "router_started": ("counter", [], "metrics-rs", "router/src/infer.rs", 10),
        "router_batch_size": ("histogram", ["kind"], "metrics-rs", "router/src/server.rs", 3),
        "exporter_requests": ("counter", [], "rust-prometheus", "exporter/src/lib.rs", 3),
    }
    assert found["exporter_requests"]["help"] == "Requests served"
    assert found["router_request_failure"]["exposed_names"] == ["router_request_failure"]  # as given


OTEL_GO = {
    "go.mod": "module example.com/gateway\n\ngo 1.22\n",
    "telemetry/metrics.go": (
        "package telemetry\n\n"
        "import (\n\t\"go.opentelemetry.io/otel\"\n\totelmetric \"go.opentelemetry.io/otel/metric\"\n)\n\n"
        "const requestsName = \"gateway.requests_total\"\n\n"
        "func Init() {\n"
        "\tmeter := otel.Meter(\"gateway\")\n"
        "\tmeter.Int64Counter(requestsName, otelmetric.WithDescription(\"Requests served\"))\n"
        "\tmeter.Float64Histogram(\"rpc.duration\", otelmetric.WithUnit(\"s\"),\n"
        "\t\totelmetric.WithExplicitBucketBoundaries(0.1, 0.5, 1))\n"
        "\tmeter.Int64UpDownCounter(\"queue.size\", otelmetric.WithUnit(\"{request}\"))\n"
        "\tmeter.Float64ObservableGauge(\"gpu.util\", otelmetric.WithUnit(\"%\"))\n"
        "\tmeter.Int64Histogram(\"batch.size\")\n"
        "\tmeter.Int64Counter(\"2xx.responses\")\n"
        "\tmeter.Float64Gauge(\"cache.hit\", otelmetric.WithUnit(\"1\"))\n"
        "\tmeter.Int64UpDownCounter(\"slots.used\", otelmetric.WithUnit(\"1\"))\n"
        "\tmeter.Int64Counter(\"net..sent__bytes\", otelmetric.WithUnit(\"By\"))\n"
        "}\n"
        # package-level variables (kubeai's metric names): one the file never assigns, one it does
        "var lookupsName = \"gateway.lookups\"\n"
        "var changingName = \"gateway.first\"\n\n"
        "func Later(meter otelmetric.Meter) {\n"
        "\tmeter.Int64Counter(lookupsName)\n"
        "\tmeter.Int64Counter(changingName)\n"
        "\tchangingName = \"gateway.second\"\n"
        "}\n"),
    # an Int64Counter method of the project's own, in a file that imports no OpenTelemetry package
    "stats/stats.go": (
        "package stats\n\ntype Registry struct{}\n\n"
        "func (Registry) Int64Counter(name string) int64 { return 0 }\n\n"
        "func Use(r Registry) int64 {\n\treturn r.Int64Counter(\"not_a_metric\")\n}\n"),
}


def test_go_opentelemetry_instruments_as_the_prometheus_exporter_writes_them(tmp_path):
    from extractor.telemetry.native_metrics import OTEL_DEFAULT_BUCKETS

    bundle = _bundle_of_tree(tmp_path, OTEL_GO)
    found = metrics_by_name(bundle, "go")
    assert {name: (m["type"], m["line"], m["via"], m["buckets"]) for name, m in found.items()} == {
        "gateway_requests_total": ("counter", 12, "instrument", []),  # _total taken off, then put back
        "rpc_duration_seconds": ("histogram", 13, "instrument", [0.1, 0.5, 1.0]),  # s -> _seconds
        "queue_size": ("gauge", 15, "instrument", []),  # an up-down counter; an annotation adds nothing
        "gpu_util_percent": ("gauge", 16, "observable-instrument", []),
        "batch_size": ("histogram", 17, "instrument", list(OTEL_DEFAULT_BUCKETS)),  # the SDK's boundaries
        "_2xx_responses_total": ("counter", 18, "instrument", []),  # a leading digit kept, `_` before it
        "cache_hit_ratio": ("gauge", 19, "instrument", []),  # a gauge of unit 1 is a ratio...
        "slots_used": ("gauge", 20, "instrument", []),  # ... an up-down counter's is not
        "net_sent_bytes_total": ("counter", 21, "instrument", []),  # `_` runs collapse; `bytes` is there
        "gateway_lookups_total": ("counter", 27, "instrument", []),
    }
    assert [(d["path"], d["line"]) for d in bundle["diagnostics"] if d["code"] == "metric-name-unresolved"] == [
        ("telemetry/metrics.go", 28)]  # a variable the file reassigns stands for no one value
    requests = found["gateway_requests_total"]
    assert (requests["help"], requests["library"], requests["exposed_names"]) == (
        "Requests served", "opentelemetry-go", ["gateway_requests_total"])
    assert found["rpc_duration_seconds"]["exposed_names"] == [
        "rpc_duration_seconds", "rpc_duration_seconds_bucket", "rpc_duration_seconds_count", "rpc_duration_seconds_sum"]
    assert all(not m["labels"] and not m["labels_resolved"] and "each measurement" in m["unresolved"]
               for m in found.values())


# The prometheus crate's own constructors, as a service writes them in `Lazy` statics: a scalar
# counter or gauge from `new(name, help)`, vectors from `new(Opts::new(..), &[labels])`, a name
# built by a helper function (not read: said, with its line).
RUST_CONSTRUCTORS = {
    "Cargo.toml": "[package]\nname = \"kvpool\"\nversion = \"0.1.0\"\n",
    "src/stats.rs": (
        "use once_cell::sync::Lazy;\n"
        "use prometheus::{Gauge, Histogram, HistogramOpts, IntCounter, IntGaugeVec, CounterVec, Opts};\n"
        "\n"
        "const EVICTIONS: &str = \"kvpool_evictions_total\";\n"
        "\n"
        "fn pool_name(suffix: &str) -> String {\n    format!(\"kvpool_{}\", suffix)\n}\n"
        "\n"
        "pub static HITS: Lazy<IntCounter> = Lazy::new(|| {\n"
        "    IntCounter::new(\"kvpool_hits_total\", \"Lookups that found a block\").unwrap()\n"
        "});\n"
        "pub static EVICTED: Lazy<IntCounter> =\n"
        "    Lazy::new(|| IntCounter::new(EVICTIONS, \"Blocks evicted\").unwrap());\n"
        "pub static FREE: Lazy<Gauge> = Lazy::new(|| Gauge::new(pool_name(\"free_blocks\"), \"Free\").unwrap());\n"
        "pub static BLOCKS: Lazy<IntGaugeVec> = Lazy::new(|| {\n"
        "    IntGaugeVec::new(\n"
        "        Opts::new(\"kvpool_blocks\", \"Blocks held per tier\"),\n"
        "        &[\"tier\", \"device\"],\n"
        "    )\n"
        "    .unwrap()\n"
        "});\n"
        "pub static COPY_SECONDS: Lazy<Histogram> = Lazy::new(|| {\n"
        "    Histogram::with_opts(HistogramOpts::new(\"kvpool_copy_seconds\", \"Copy time\")).unwrap()\n"
        "});\n"
        "pub fn by_kind(kinds: &[&str]) -> CounterVec {\n"
        "    CounterVec::new(Opts::new(\"kvpool_misses_total\", \"Misses\"), kinds).unwrap()\n"
        "}\n"
        "pub fn qualified() -> prometheus::IntGauge {\n"
        "    prometheus::IntGauge::new(\"kvpool_pinned\", \"Pinned blocks\").unwrap()\n"
        "}\n"),
    # a Counter of the crate's own, in a file that uses the prometheus crate for something else
    "src/local.rs": (
        "use prometheus::Registry;\n\n"
        "pub struct Counter { n: u64, label: &'static str }\n"
        "impl Counter {\n    pub fn new(n: u64, label: &'static str) -> Self { Counter { n, label } }\n}\n"
        "pub fn make(_r: &Registry) -> Counter {\n    Counter::new(\"not_a_metric\", \"no\")\n}\n"),
}


def test_the_prometheus_crate_constructors_are_read(tmp_path):
    bundle = _bundle_of_tree(tmp_path, RUST_CONSTRUCTORS)
    found = metrics_by_name(bundle, "rust")
    assert {name: (m["type"], m["labels"], m["labels_resolved"], m["via"], m["path"], m["line"])
            for name, m in found.items()} == {
        "kvpool_hits_total": ("counter", [], True, "constructor", "src/stats.rs", 11),
        "kvpool_evictions_total": ("counter", [], True, "constructor", "src/stats.rs", 14),
        # the Opts inside IntGaugeVec::new is a gauge, whatever constructor comes next in the file
        "kvpool_blocks": ("gauge", ["device", "tier"], True, "opts", "src/stats.rs", 18),
        "kvpool_copy_seconds": ("histogram", [], True, "opts", "src/stats.rs", 24),
        "kvpool_misses_total": ("counter", [], False, "opts", "src/stats.rs", 27),  # labels: a parameter
        "kvpool_pinned": ("gauge", [], True, "constructor", "src/stats.rs", 30),
        # Gauge::new(pool_name(..)): the file's helper returns format!("kvpool_{}", suffix)
        "kvpool_free_blocks": ("gauge", [], True, "constructor", "src/stats.rs", 15),
    }
    assert (found["kvpool_hits_total"]["help"], found["kvpool_hits_total"]["exposed_names"]) == (
        "Lookups that found a block", ["kvpool_hits_total"])
    assert not [d for d in bundle["diagnostics"] if d["code"] == "metric-name-unresolved"]


RUST_NAMES = {
    # names kept in modules of a file of their own, the same constant name in two of them
    "runtime/src/metrics/names.rs": (
        "pub mod prefix {\n    pub const FRONTEND: &str = \"svc_frontend\";\n}\n"
        "pub mod frontend {\n    pub const REQUESTS_TOTAL: &str = \"requests_total\";\n"
        "    pub const QUEUED: &str = \"queued_requests\";\n}\n"
        "pub mod worker {\n    pub const REQUESTS_TOTAL: &str = \"worker_requests_total\";\n}\n"),
    "router/src/names.rs": (
        "pub mod worker {\n    pub const REQUESTS_TOTAL: &str = \"router_worker_requests_total\";\n}\n"),
    "router/src/metrics.rs": (
        "use prometheus::{IntCounter, IntGauge, IntGaugeVec, Opts};\n"
        "use svc_runtime::metrics::names::{frontend, prefix, worker};\n"
        "const LOCAL: &str = \"svc_router\";\n"
        "\n"
        "fn frontend_name(suffix: &str) -> String {\n    format!(\"{}_{}\", prefix::FRONTEND, suffix)\n}\n"
        "\n"
        "pub fn make(raw: String) {\n"
        "    let a = IntCounter::new(frontend_name(frontend::REQUESTS_TOTAL), \"Requests\").unwrap();\n"
        "    let b = IntGaugeVec::new(\n"
        "        Opts::new(\n"
        "            format!(\n"
        "                \"{}_{}\",\n"
        "                prefix::FRONTEND,\n"
        "                frontend::QUEUED\n"
        "            ),\n"
        "            \"Queued\",\n"
        "        ),\n"
        "        &[\"model\"],\n"
        "    ).unwrap();\n"
        "    let c = IntCounter::new(svc_runtime::metrics::names::worker::REQUESTS_TOTAL, \"Worker\").unwrap();\n"
        "    let d = IntGauge::new(format!(\"{LOCAL}_{n}\", n = \"ready\"), \"Ready\").unwrap();\n"
        "    let name = |suffix: &str| format!(\"{}_{}\", &raw, suffix);\n"
        "    let e = IntGauge::new(name(\"depth\"), \"Depth\").unwrap();\n"
        "    let f = IntCounter::new(worker::REQUESTS_TOTAL, \"Which worker?\").unwrap();\n"
        "    let g = IntGauge::new(format!(\"{LOCAL}_{:>4}\", \"x\"), \"Padded\").unwrap();\n"
        "}\n"),
}


def test_rust_metric_names_from_module_constants_format_and_name_helpers(tmp_path):
    bundle = _bundle_of_tree(tmp_path, RUST_NAMES)
    found = metrics_by_name(bundle, "rust")
    assert {name: (m["type"], m["line"], m["dynamic"]) for name, m in found.items()} == {
        "svc_frontend_requests_total": ("counter", 10, False),  # a helper's format! over another file's modules
        "svc_frontend_queued_requests": ("gauge", 12, False),  # format! with its arguments on lines of their own
        "worker_requests_total": ("counter", 22, False),  # the path narrows to the runtime's module
        "svc_router_ready": ("gauge", 23, False),  # a constant captured by name, a named argument
        "{}_depth": ("gauge", 25, True),  # a closure over a value the code computes: a pattern
        "svc_router_{}": ("gauge", 27, True),  # a formatting spec is not applied: that piece is unknown
    }
    assert found["svc_frontend_queued_requests"]["labels"] == ["model"]
    assert found["{}_depth"]["unresolved"] == (
        'name: &raw in format!("{}_{}", &raw, suffix) is no literal nor a string constant of the analysed files')
    # `worker::REQUESTS_TOTAL` names a constant of two modules with different values: said, not guessed
    unresolved = [(d["path"], d["line"]) for d in bundle["diagnostics"] if d["code"] == "metric-name-unresolved"]
    assert unresolved == [("router/src/metrics.rs", 26)]


def test_the_metrics_crate_labels_as_one_expression_and_exporter_buckets_of_a_file_of_their_own():
    """fixtures/metrics_rs_mini: metrics 0.22+ handles, labels handed over as `&labels` (a local
    array, an array in place, a `vec![Label::new(..)]`, a struct field), and the exporter's matchers
    in `gateway/src/exporter.rs`, which names no metrics macro (TEI's router/src/prometheus.rs)."""
    found = metrics_by_name(fixture_bundle("metrics_rs_mini"), "rust")
    assert {name: (m["path"], m["line"], m["type"], m["labels"], m["labels_resolved"])
            for name, m in found.items()} == {
        "engine_queue_size": ("engine/src/lib.rs", 10, "gauge", [], True),
        "engine_requests": ("engine/src/lib.rs", 16, "counter", ["model", "route"], True),
        "engine_schedule_duration": ("engine/src/lib.rs", 17, "histogram", ["model", "route"], True),
        "engine_batches": ("engine/src/lib.rs", 18, "counter", ["kind"], True),
        "engine_batch_tokens": ("engine/src/lib.rs", 20, "histogram", ["device"], True),
        "engine_failures": ("engine/src/lib.rs", 21, "counter", ["err"], True),
        "engine_step_tokens": ("engine/src/lib.rs", 27, "histogram", [], False),  # &self.labels: not read
    }
    # Suffix("duration"), Full("engine_step_tokens"), Full(TOKENS_METRIC): histograms, not summaries
    for name in ("engine_schedule_duration", "engine_batch_tokens", "engine_step_tokens"):
        assert found[name]["exposed_names"] == [name, f"{name}_bucket", f"{name}_count", f"{name}_sum"]
        assert found[name]["lint"] == []


# A custom collector (semantic-router's inflight collector, kube-state-metrics' shape): each metric is a
# prometheus.NewDesc kept in a struct field or a variable, its type the value type of the const metrics
# Collect makes with it.
GO_COLLECTOR = {
    "go.mod": "module example.com/router\n\ngo 1.22\n",
    "metrics/collector.go": (
        "package metrics\n\n"
        "import \"github.com/prometheus/client_golang/prometheus\"\n\n"
        "const namespace = \"router\"\n\n"
        "type poolCollector struct {\n\tinflight *prometheus.Desc\n\tserved *prometheus.Desc\n"
        "\tlatency *prometheus.Desc\n\todd *prometheus.Desc\n}\n\n"
        "var upDesc = prometheus.NewDesc(\"router_up\", \"Whether the router serves.\", nil, nil)\n\n"
        "func newPoolCollector() *poolCollector {\n"
        "\treturn &poolCollector{\n"
        "\t\tinflight: prometheus.NewDesc(\"router_inflight_requests\", \"Requests in flight.\",\n"
        "\t\t\t[]string{\"model\"}, prometheus.Labels{\"pool\": \"main\"}),\n"
        "\t\tserved: prometheus.NewDesc(prometheus.BuildFQName(namespace, \"pool\", \"served_total\"),\n"
        "\t\t\t\"Requests served.\", []string{\"model\", \"code\"}, nil),\n"
        "\t\tlatency: prometheus.NewDesc(\"router_latency_seconds\", \"Latency.\", nil, nil),\n"
        "\t\todd: prometheus.NewDesc(\"router_odd\", \"Odd.\", nil, nil),\n"
        "\t}\n}\n\n"
        "func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {\n"
        "\tch <- prometheus.MustNewConstMetric(c.inflight, prometheus.GaugeValue, 1, \"m\")\n"
        "\tch <- prometheus.MustNewConstMetric(c.served, prometheus.CounterValue, 2, \"m\", \"200\")\n"
        "\tch <- prometheus.MustNewConstHistogram(c.latency, 3, 0.5, map[float64]uint64{1: 3})\n"
        "\tch <- prometheus.MustNewConstMetric(c.odd, valueType(), 1)\n"
        "\tch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, 1)\n"
        "}\n"),
}


def test_go_custom_collector_descs_are_metrics_typed_by_their_const_metrics(tmp_path):
    bundle = _bundle_of_tree(tmp_path, GO_COLLECTOR)
    found = metrics_by_name(bundle, "go")
    assert {name: (m["type"], m["line"], m["labels"], m["via"], m["exposed_names"]) for name, m in found.items()} == {
        "router_up": ("gauge", 14, [], "collector", ["router_up"]),
        "router_inflight_requests": ("gauge", 18, ["model", "pool"], "collector", ["router_inflight_requests"]),
        "router_pool_served_total": ("counter", 20, ["code", "model"], "collector", ["router_pool_served_total"]),
        "router_latency_seconds": ("histogram", 22, [], "collector", [
            "router_latency_seconds", "router_latency_seconds_bucket", "router_latency_seconds_count",
            "router_latency_seconds_sum"]),
    }
    assert found["router_pool_served_total"]["help"] == "Requests served."
    # a value type the code computes gives no type: said, with the line
    [odd] = [d for d in bundle["diagnostics"] if d["code"] == "metric-type-unresolved"]
    assert (odd["path"], odd["line"]) == ("metrics/collector.go", 23) and "NewDesc" in odd["message"]


# A controller's metrics whose options and label lists name constants of other packages, through the
# file's imports (aliased or not); a constant of the package's own other file; a same-named constant of
# the defining package that the qualified name must not take; a label no file defines.
GO_IMPORTED_CONSTANTS = {
    "go.mod": "module example.com/ctl\n\ngo 1.22\n",
    "pkg/names/names.go": 'package names\n\nconst (\n\tSubsystem = "ctl"\n\tLabelModel = "model"\n)\n',
    "pkg/controller/labels.go": 'package controller\n\nconst LabelPool = "pool"\n',
    "pkg/controller/metrics.go": """package controller

import (
\t"github.com/prometheus/client_golang/prometheus"
\tn "example.com/ctl/pkg/names"
)

const Subsystem = "wrong"

var claims = prometheus.NewGaugeVec(prometheus.GaugeOpts{
\tSubsystem: n.Subsystem,
\tName:      "claims_ready",
\tHelp:      "Ready claims.",
}, []string{n.LabelModel, LabelPool, "phase"})

var unknown = prometheus.NewCounterVec(prometheus.CounterOpts{
\tName: "claims_dropped_total",
}, []string{labelFromFlag})
""",
}


def test_go_metric_options_and_labels_name_constants_of_imported_packages(tmp_path):
    found = metrics_by_name(_bundle_of_tree(tmp_path, GO_IMPORTED_CONSTANTS), "go")
    assert {name: (m["labels"], m["labels_resolved"], m["dynamic"], m["line"]) for name, m in found.items()} == {
        # Subsystem is names.Subsystem (imported as n), not the package's own `Subsystem`
        "ctl_claims_ready": (["model", "phase", "pool"], True, False, 10),
        "claims_dropped_total": ([], False, False, 16),
    }
    assert found["claims_dropped_total"]["unresolved"].startswith("labels: labelFromFlag in the label list")


RUST_FACTORIES = {
    "runtime/src/metrics.rs": (
        "use prometheus::Opts;\n"
        "pub struct Metrics { prefix: String }\n"
        "impl Metrics {\n"
        "    pub fn create_intcounter(&self, name: &str, help: &str) -> anyhow::Result<prometheus::IntCounter> {\n"
        "        let opts = Opts::new(build_name(&self.prefix, name), help);\n"
        "        Ok(prometheus::IntCounter::with_opts(opts)?)\n"
        "    }\n"
        "    pub fn update_counter(&self, by: u64) -> u64 {\n        by\n    }\n"
        "}\n"),
    "runtime/src/handler.rs": (
        "const REQUESTS: &str = \"requests_total\";\n"
        "pub fn setup(metrics: &Metrics) {\n"
        "    let requests = metrics\n"
        "        .create_intcounter(REQUESTS, \"Requests handled\")\n"
        "        .unwrap();\n"
        "    metrics.update_counter(1);\n"
        "}\n"),
}


def test_calls_of_the_systems_own_metric_factories_are_said(tmp_path):
    """Dynamo makes most of its Rust metrics through `Metrics::create_intcounter(name, ..)`, whose body
    builds the registered name through functions of its own: each call is a diagnostic naming the
    factory and the argument, not a silent absence."""
    bundle = _bundle_of_tree(tmp_path, RUST_FACTORIES)
    said = [(d["path"], d["line"], d["message"]) for d in bundle["diagnostics"]
            if d["code"] == "metric-factory-not-followed"]
    assert said == [("runtime/src/handler.rs", 4,
                     "create_intcounter('requests_total', ...) makes a prometheus IntCounter through the system's "
                     "function create_intcounter (runtime/src/metrics.rs:4), which builds the name it registers "
                     "from its arguments; archdiff does not follow it, so this metric is not in the metrics "
                     "evidence")]


# llm-d's endpoint picker: label sets and buckets kept in package-level variables of the metrics file,
# a label set extended with append(), a label set of another file of the package (read there, with
# that file's constants); a variable the file assigns again, one of another package, and one two files
# of the package define differently stay unread, each with the list as written.
GO_HELD_LISTS = {
    "go.mod": "module example.com/epp\n\ngo 1.22\n",
    "pkg/metrics/other.go": ('package metrics\n\nconst labelZone = "zone"\n\n'
                             'var otherLabels = []string{"x", labelZone}\n\nvar twice = []string{"a"}\n'),
    "pkg/metrics/again.go": 'package metrics\n\nvar twice = []string{"b"}\n',
    "pkg/other/lists.go": 'package other\n\nvar farLabels = []string{"far"}\n',
    "pkg/metrics/metrics.go": """package metrics

import "github.com/prometheus/client_golang/prometheus"

const labelPool = "pool"

var (
\tmodelLabels = []string{"model_name", "target_model_name"}
\tpoolLabels  = []string{labelPool}
\tmoved       = []string{"a"}
\tlatencyBuckets = []float64{
\t\t0.005, 0.5, // under a second
\t\t5,
\t}
\tsizeBuckets    = prometheus.ExponentialBuckets(1, 2, 3)
\tdefBuckets     = prometheus.DefBuckets
)

var requests = prometheus.NewCounterVec(prometheus.CounterOpts{
\tSubsystem: "epp", Name: "requests_total",
}, modelLabels)

var errors = prometheus.NewCounterVec(prometheus.CounterOpts{
\tSubsystem: "epp", Name: "errors_total",
}, append(modelLabels, "error_code", labelPool))

var both = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "both_total"}, append(poolLabels, modelLabels...))

var latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
\tName: "latency_seconds", Buckets: latencyBuckets,
}, poolLabels)

var sizes = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sizes", Buckets: sizeBuckets})

var plain = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "plain", Buckets: defBuckets})

var changed = prometheus.NewHistogramVec(prometheus.HistogramOpts{
\tName: "changed", Buckets: fromFlag, Help: helpOf("Changed.", 1),
}, moved)

var elsewhere = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "elsewhere"}, otherLabels)

var far = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "far"}, farLabels)

var ambiguous = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ambiguous"}, twice)

func init() {
\tmoved = append(moved, "b")
}
""",
}


def test_go_label_sets_and_buckets_held_in_variables_of_the_file(tmp_path):
    found = metrics_by_name(_bundle_of_tree(tmp_path, GO_HELD_LISTS), "go")
    assert {name: (m["labels"], m["labels_resolved"], m["buckets"], m["buckets_resolved"])
            for name, m in found.items()} == {
        "epp_requests_total": (["model_name", "target_model_name"], True, [], True),
        "epp_errors_total": (["error_code", "model_name", "pool", "target_model_name"], True, [], True),
        "both_total": (["model_name", "pool", "target_model_name"], True, [], True),
        "latency_seconds": (["pool"], True, [0.005, 0.5, 5.0], True),
        "sizes": ([], True, [1.0, 2.0, 4.0], True),
        "plain": ([], True, [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0], True),
        "changed": ([], False, [], False),
        "elsewhere": (["x", "zone"], True, [], True),
        "far": ([], False, [], True),
        "ambiguous": ([], False, [], True),
    }
    assert found["changed"]["unresolved"] == (
        "labels: moved is no literal label list nor a variable of the package or local of the function holding "
        "one; buckets: fromFlag are no literal numbers nor a variable of the package holding them; "
        "help: helpOf(\"Changed.\", 1) is no literal nor a string constant of the analysed files")
    assert found["changed"]["help"] == ""
    for name, written in (("far", "farLabels"), ("ambiguous", "twice")):
        assert found[name]["unresolved"] == (f"labels: {written} is no literal label list nor a variable of the "
                                             "package or local of the function holding one")


# Seldon Core v2's scheduler: metrics made by helpers of the package whose parameters are the name, help and
# label list (`createCounterVec(name, help, labelNames)`), called with a label list held in a local, and
# buckets in a package variable of another file
GO_FACTORIES = {
    "go.mod": "module example.com/sched\n\ngo 1.22\n",
    "metrics/utils.go": """package metrics

import "github.com/prometheus/client_golang/prometheus"

func createCounterVec(counterName string, helperName string, labelNames []string) *prometheus.CounterVec {
\treturn prometheus.NewCounterVec(prometheus.CounterOpts{Name: counterName, Help: helperName}, labelNames)
}

func unusedGauge(gaugeName string) prometheus.Gauge {
\treturn prometheus.NewGauge(prometheus.GaugeOpts{Name: gaugeName})
}
""",
    "metrics/agent.go": """package metrics

import "github.com/prometheus/client_golang/prometheus"

const (
\tinferCounterName = "sched_infer_total"
\tServerLabel      = "server"
)

var DefaultBuckets = []float64{0.1, 1, 10}

func inferCounter() *prometheus.CounterVec {
\tlabelNames := []string{ServerLabel, "code"}
\treturn createCounterVec(
\t\tinferCounterName,
\t\t"A count of inference calls",
\t\tlabelNames,
\t)
}

func evictCounter() *prometheus.CounterVec {
\treturn createCounterVec("sched_evict_total", "Evictions", []string{ServerLabel})
}
""",
    "metrics/gateway.go": """package metrics

import "github.com/prometheus/client_golang/prometheus"

func latency() *prometheus.HistogramVec {
\tlabelNames := []string{ServerLabel}
\treturn prometheus.NewHistogramVec(prometheus.HistogramOpts{
\t\tName: "sched_latency_seconds", Buckets: DefaultBuckets,
\t}, labelNames)
}
""",
}


def test_go_metric_factories_local_label_lists_and_package_buckets(tmp_path):
    bundle = _bundle_of_tree(tmp_path, GO_FACTORIES)
    found = metrics_by_name(bundle, "go")
    assert {name: (m["path"], m["line"], m["type"], m["help"], m["labels"], m["labels_resolved"], m["buckets"],
                   m["via"]) for name, m in found.items()} == {
        "sched_infer_total": ("metrics/agent.go", 14, "counter", "A count of inference calls", ["code", "server"],
                              True, [], "factory:createCounterVec"),
        "sched_evict_total": ("metrics/agent.go", 22, "counter", "Evictions", ["server"], True, [],
                              "factory:createCounterVec"),
        "sched_latency_seconds": ("metrics/gateway.go", 7, "histogram", "", ["server"], True, [0.1, 1.0, 10.0],
                                  "constructor"),
    }
    # a factory no call reaches is said where it is, as before; one that is reached says nothing of its own
    assert [(d["path"], d["line"]) for d in bundle["diagnostics"] if d["code"] == "metric-name-unresolved"] \
        == [("metrics/utils.go", 10)]


# The inference gateway's endpoint picker before v0.4 (and Kubernetes' own components): metrics made with
# k8s.io/component-base/metrics, which joins namespace, subsystem and name as client_golang does and
# writes the stability level into the help ("[ALPHA] ...", ALPHA when none is given).
GO_COMPONENT_BASE = {
    "go.mod": "module example.com/gw\n\ngo 1.22\n",
    "pkg/metrics/metrics.go": """package metrics

import (
\tcompbasemetrics "k8s.io/component-base/metrics"
\t"k8s.io/component-base/metrics/legacyregistry"
)

const component = "gw"

var requests = compbasemetrics.NewCounterVec(
\t&compbasemetrics.CounterOpts{
\t\tSubsystem:      component,
\t\tName:           "request_total",
\t\tHelp:           "Requests.",
\t\tStabilityLevel: compbasemetrics.STABLE,
\t},
\t[]string{"model_name"},
)

var latency = compbasemetrics.NewHistogram(&compbasemetrics.HistogramOpts{
\tSubsystem: component,
\tName:      "latency_seconds",
\tHelp:      "Latency.",
\tBuckets:   []float64{0.1, 1},
})

func Register() {
\tlegacyregistry.MustRegister(requests, latency)
}
""",
}


def test_go_component_base_metrics(tmp_path):
    found = metrics_by_name(_bundle_of_tree(tmp_path, GO_COMPONENT_BASE), "go")
    assert {name: (m["type"], m["line"], m["labels"], m["buckets"], m["help"], m["library"])
            for name, m in found.items()} == {
        "gw_request_total": ("counter", 10, ["model_name"], [], "[STABLE] Requests.", "k8s.io/component-base"),
        "gw_latency_seconds": ("histogram", 20, [], [0.1, 1.0], "[ALPHA] Latency.", "k8s.io/component-base"),
    }


def test_a_go_import_of_a_metrics_library_not_modeled_is_said(tmp_path):
    # llm-d's endpoint picker registers its metrics on controller-runtime's metrics.Registry, which also
    # serves that library's own series: said where the file imports it, not silently left out
    files = {
        "go.mod": "module example.com/op\n\ngo 1.22\n",
        "pkg/metrics/metrics.go": (
            'package metrics\n\nimport (\n\t"github.com/prometheus/client_golang/prometheus"\n'
            '\t"sigs.k8s.io/controller-runtime/pkg/metrics"\n)\n\n'
            'var up = prometheus.NewGauge(prometheus.GaugeOpts{Name: "op_up"})\n\n'
            'func Register() { metrics.Registry.MustRegister(up) }\n'),
        "pkg/other/other.go": ('package other\n\nimport "sigs.k8s.io/controller-runtime/pkg/metrics/server"\n\n'
                               'var _ = server.Options{}\n'),
    }
    bundle = _bundle_of_tree(tmp_path, files)
    said = [(d["path"], d["line"], d["message"].split(",")[0]) for d in bundle["diagnostics"]
            if d["code"] == "metric-library-not-modeled"]
    assert said == [("pkg/metrics/metrics.go", 5, "uses controller-runtime metrics")]
    assert set(metrics_by_name(bundle, "go")) == {"op_up"}


# client_rust metrics a server keeps in a struct built by `Metrics::new()` and registers under a
# namespace its configuration gives (`format!("{namespace}_x")`), on `<Registry>::default()`
CLIENT_RUST_HELD = {
    "Cargo.toml": "[package]\nname = \"srv\"\n",
    "src/metrics.rs": """\
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StageLabel {
    pub stage: String,
}

pub(crate) struct Metrics {
    pub(crate) requests: Family<StageLabel, Counter>,
    pub(crate) batch_size: Family<StageLabel, Histogram>,
    pub(crate) latency: Family<StageLabel, Histogram>,
}

impl Metrics {
    pub(crate) fn new(scale: f64) -> Self {
        Self {
            requests: Family::<StageLabel, Counter>::default(),
            batch_size: Family::<StageLabel, Histogram>::new_with_constructor(|| {
                Histogram::new(exponential_buckets(1f64, 2f64, 4))
            }),
            latency: Family::<StageLabel, Histogram>::new_with_constructor(move || {
                Histogram::new(exponential_buckets(scale, 2f64, 4))
            }),
        }
    }

    pub(crate) fn init_with_namespace(namespace: &str) -> Registry {
        let mut registry = <Registry>::default();
        let metrics = Metrics::new(0.001);
        registry.register(format!("{namespace}_requests"), "requests", metrics.requests.clone());
        registry.register(format!("{namespace}_batch_size"), "batch sizes", metrics.batch_size.clone());
        registry.register("latency", "latency", metrics.latency.clone());
        registry
    }
}
""",
}


def test_client_rust_metrics_held_in_a_struct_under_a_configured_namespace(tmp_path):
    bundle = _bundle_of_tree(tmp_path, CLIENT_RUST_HELD)
    found = metrics_by_name(bundle, "rust")
    assert {name: (m["type"], m["line"], m["dynamic"], m["labels"]) for name, m in found.items()} == {
        "{}_requests": ("counter", 34, True, ["stage"]),  # the field's type, the struct built by Metrics::new
        "{}_batch_size": ("histogram", 35, True, ["stage"]),
        "latency": ("histogram", 36, False, ["stage"]),
    }
    assert found["{}_requests"]["exposed_names"] == ["{}_requests", "{}_requests_total"]
    assert found["{}_requests"]["unresolved"] == (
        'name: namespace in format!("{namespace}_requests") is no literal nor a string constant of the crate')
    # the buckets of the histogram `Self { batch_size: ... }` stores in the field
    assert found["{}_batch_size"]["buckets"] == [1.0, 2.0, 4.0, 8.0]
    latency = found["latency"]  # computed from a value the code holds at run time: said
    assert not latency["buckets_resolved"] and latency["unresolved"].startswith("buckets:")
    # `<Registry>::default()` is a root registry: no prefix to say
    assert not [d for d in bundle["diagnostics"] if d["code"].startswith("metric-")]
