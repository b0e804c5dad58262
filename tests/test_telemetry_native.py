"""Rust and Go metric definitions and the series their libraries expose.

None of the three libraries can run here (no Go toolchain; crates.io is out of reach for cargo),
so the expected series are the libraries' documented rules, cited in
extractor/telemetry/native_metrics.py: the prometheus crate and client_golang join
namespace/subsystem/name with `_` and expose a counter under its name as given; the metrics crate's
exporter replaces characters outside [a-zA-Z0-9_:] with `_` and renders `histogram!` as a summary
unless buckets are configured.
"""

from __future__ import annotations

import pytest

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


def test_a_rust_file_using_the_prometheus_client_crate_is_said_not_read(tmp_path):
    # mosec: client_rust registers metrics by value (`registry.register(name, help, metric)`, the
    # type from the value's declared type), which the scanner does not follow: said, not silent
    from extractor.context import ExtractOptions
    from extractor.run.pipeline import extract_system

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "metrics.rs").write_text(
        "use prometheus_client::metrics::counter::Counter;\nuse prometheus_client::registry::Registry;\n\n"
        "pub fn init(registry: &mut Registry) {\n    let c = Counter::<u64>::default();\n"
        "    registry.register_with_unit(\"mosec_throughput\", \"throughput\", Unit::Seconds, c);\n}\n")
    (tmp_path / "src" / "other.rs").write_text("use prometheus::register_int_counter;\n"
                                               "// prometheus_client is not used here\n")
    bundle = extract_system([str(tmp_path / "src")], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c")).bundle
    said = [(d["path"], d["line"]) for d in bundle["diagnostics"] if d["code"] == "metric-library-not-modeled"]
    assert said == [("metrics.rs", 1)]
    assert bundle["stats"]["metrics"]["rust_files_unmodeled_metric_libraries"] == 1
