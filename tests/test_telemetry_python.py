"""prometheus_client definitions: every way the code reaches a metric class, on the handwritten
``fixtures/pymetrics`` package and on tiny packages written per case."""

from __future__ import annotations


import pytest

from extractor.telemetry.metrics import METRICS_STEP
from extractor.telemetry.records import MetricType, build_python_name, expose_names, lint_name
from telemetry_support import build_context, write_tree

from conftest import FIXTURES


@pytest.fixture(scope="module")
def fixture_metrics():
    ctx = build_context(FIXTURES / "pymetrics", [METRICS_STEP])
    return {(r.name, r.path): r for r in ctx.results["metrics"].records}


def by_name(metrics, name):
    found = [r for (n, _), r in metrics.items() if n == name]
    assert len(found) == 1, f"{name}: {len(found)} records"
    return found[0]


@pytest.mark.parametrize("name, kind, via, exposed", [
    # direct import; the given _total is stripped and the samples carry it again
    ("toy_requests", MetricType.COUNTER, "import",
     ("toy_requests", "toy_requests_created", "toy_requests_total")),
    ("toy_inflight_requests", MetricType.GAUGE, "import", ("toy_inflight_requests",)),  # alias G
    ("toy_http_latency_seconds", MetricType.HISTOGRAM, "attribute",  # namespace/subsystem/unit
     ("toy_http_latency_seconds", "toy_http_latency_seconds_bucket", "toy_http_latency_seconds_count",
      "toy_http_latency_seconds_created", "toy_http_latency_seconds_sum")),
    ("toy_payload_bytes", MetricType.SUMMARY, "attribute",
     ("toy_payload_bytes", "toy_payload_bytes_count", "toy_payload_bytes_created", "toy_payload_bytes_sum")),
    ("toy_build", MetricType.INFO, "import", ("toy_build_info",)),
    ("toy_state", MetricType.ENUM, "import", ("toy_state",)),
    ("toy_sent_bytes", MetricType.COUNTER, "import",
     ("toy_sent_bytes", "toy_sent_bytes_created", "toy_sent_bytes_total")),
    ("toy_batch_size", MetricType.GAUGE, "import", ("toy_batch_size",)),  # PREFIX + "_batch_size"
    ("toy_jobs", MetricType.COUNTER, "subclass:pymetrics.wrappers.TimedCounter",
     ("toy_jobs", "toy_jobs_created", "toy_jobs_total")),
    ("toy:scheduler_running", MetricType.GAUGE, "class-attr:StatLogger._gauge_cls", ("toy:scheduler_running",)),
    ("toy:finished", MetricType.COUNTER, "class-attr:StatLogger._counter_cls",
     ("toy:finished", "toy:finished_created", "toy:finished_total")),
])
def test_fixture_metric_paths(fixture_metrics, name, kind, via, exposed):
    record = by_name(fixture_metrics, name)
    assert (record.type, record.via, record.exposed_names) == (kind, via, exposed)
    assert record.library == "prometheus_client" and record.language == "python"


def test_help_labels_and_buckets_are_read(fixture_metrics):
    requests = by_name(fixture_metrics, "toy_requests")
    assert (requests.help, requests.labels, requests.line) == ("Requests served.", ("route", "code"), 20)
    latency = by_name(fixture_metrics, "toy_http_latency_seconds")
    assert latency.buckets == (0.01, 0.1, 1.0, 10.0) and latency.unit == "seconds"
    # labels concatenated from a local list, and from a self attribute set in the same method
    assert by_name(fixture_metrics, "toy_jobs").labels == ("model", "status")
    assert by_name(fixture_metrics, "toy:finished").labels == ("engine", "reason")
    # default buckets are the library's own when none are given; +Inf is implicit
    import prometheus_client

    ttft = by_name(fixture_metrics, "toy:time_to_first_token_seconds")
    assert ttft.buckets == (0.1, 0.5, 1.0, 5.0)
    assert tuple(prometheus_client.Histogram.DEFAULT_BUCKETS[:-1]) == (
        0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)


def test_local_variable_names_give_one_record_per_value(fixture_metrics):
    online = by_name(fixture_metrics, "toy_online_queue_depth")
    offline = by_name(fixture_metrics, "toy_offline_queue_depth")
    assert online.line == offline.line == 42
    # assigned None first, then the real name in a branch: the None is not a name
    info = by_name(fixture_metrics, "toy:cache_config_info")
    assert (info.type, info.help, info.labels_resolved) == (MetricType.GAUGE, "Cache configuration.", False)


def test_fstring_name_is_a_dynamic_pattern(fixture_metrics):
    worker = by_name(fixture_metrics, "toy_worker_{worker_id}_busy")
    assert worker.dynamic and worker.type is MetricType.GAUGE
    assert all(not r.dynamic for r in fixture_metrics.values() if r is not worker)


def test_look_alikes_are_not_metrics(fixture_metrics):
    names = {n for n, _ in fixture_metrics}
    assert "toy_fuel_level" not in names  # a local class called Gauge
    # collections.Counter / typing.Counter produce nothing; 16 definitions in all
    assert len(fixture_metrics) == 16
    # ClusterStatLogger swaps _gauge_cls for a non-Prometheus class: no second gauge record,
    # and its Counter subclass does not duplicate the counter.
    assert sum(1 for n, _ in fixture_metrics if n == "toy:finished") == 1


def write_package(tmp_path, files):
    return write_tree(tmp_path, files, [METRICS_STEP], "metrics")


def test_class_attribute_overridden_in_subclass_in_another_module(tmp_path):
    result = write_package(tmp_path, {
        "app/__init__.py": "",
        "app/base.py": """
            from prometheus_client import Counter
            class Base:
                _metric_cls = None
                def make(self):
                    return self._metric_cls(name="app_events", documentation="Events.")
        """,
        "app/impl.py": """
            import prometheus_client
            from app.base import Base
            class WithCounter(Base):
                _metric_cls = prometheus_client.Counter
            class WithGauge(Base):
                _metric_cls = prometheus_client.Gauge
        """,
    })
    kinds = sorted((r.name, r.type.value, r.via) for r in result.records)
    assert kinds == [("app_events", "counter", "class-attr:WithCounter._metric_cls"),
                     ("app_events", "gauge", "class-attr:WithGauge._metric_cls")]


def test_reexported_class_and_unresolved_name(tmp_path):
    result = write_package(tmp_path, {
        "lib/__init__.py": "from lib.metrics import Meter\n",
        "lib/metrics.py": """
            from prometheus_client import Gauge
            class Meter(Gauge):
                pass
        """,
        "use.py": """
            from lib import Meter
            def build(name):
                Meter("lib_meter", "A meter.")
                Meter(name, "Unknown name.")
        """,
    })
    assert [(r.name, r.type.value) for r in result.records] == [("lib_meter", "gauge")]
    assert [(d.path, d.line, d.code) for d in result.diagnostics] == [("use.py", 5, "metric-name-unresolved")]


@pytest.mark.parametrize("kind, name, namespace, subsystem, unit, expected", [
    (MetricType.COUNTER, "requests_total", "app", "", "", "app_requests"),
    (MetricType.COUNTER, "sent_total", "", "", "bytes", "sent_bytes"),
    (MetricType.GAUGE, "temp_celsius", "", "", "celsius", "temp_celsius"),
    (MetricType.HISTOGRAM, "x_total", "", "", "", "x_total"),
    (MetricType.GAUGE, "depth", "a", "b", "", "a_b_depth"),
])
def test_full_name_matches_the_library(kind, name, namespace, subsystem, unit, expected):
    import prometheus_client

    assert build_python_name(kind, name, namespace, subsystem, unit) == expected
    cls = {MetricType.COUNTER: prometheus_client.Counter, MetricType.GAUGE: prometheus_client.Gauge,
           MetricType.HISTOGRAM: prometheus_client.Histogram}[kind]
    registry = prometheus_client.CollectorRegistry()
    real = cls(name, "doc", namespace=namespace, subsystem=subsystem, unit=unit, registry=registry)
    assert real._name == expected  # the library's own full name
    scraped = {s.name for m in registry.collect() for s in m.samples} | {m.name for m in registry.collect()}
    assert scraped <= set(expose_names(kind, expected, "prometheus_client"))


def test_naming_lint():
    assert lint_name("x_total", MetricType.GAUGE, "prometheus_client") == (
        "total-suffix: _total is for counters, this is a gauge",)
    assert "colon: colons are reserved for recording rules" in lint_name("a:b", MetricType.GAUGE, "prometheus_client")
    assert lint_name("req_duration_ms", MetricType.HISTOGRAM, "prometheus_client") == (
        "non-base-unit: 'ms' should be seconds",)
    assert lint_name("req_duration_seconds", MetricType.HISTOGRAM, "prometheus_client") == ()
    assert lint_name("hits", MetricType.COUNTER, "prometheus-cpp") == (
        "counter-without-total: prometheus-cpp exposes the name as given, no _total",)
    assert lint_name("hits", MetricType.COUNTER, "prometheus_client") == ()


def test_extraction_is_deterministic():
    first = build_context(FIXTURES / "pymetrics", [METRICS_STEP]).results["metrics"]
    second = build_context(FIXTURES / "pymetrics", [METRICS_STEP]).results["metrics"]
    assert first.records == second.records and first.stats == second.stats


def test_src_layout_imports_resolve(tmp_path):
    result = write_package(tmp_path, {
        "src/svc/__init__.py": "",
        "src/svc/meters.py": """
            import prometheus_client
            class Meter(prometheus_client.Histogram):
                pass
        """,
        "src/svc/app.py": """
            from svc.meters import Meter
            LATENCY = Meter("svc_latency_seconds", "Latency.", buckets=(0.1, 1, float("inf")))
        """,
    })
    (record,) = result.records
    assert (record.name, record.type.value, record.buckets) == ("svc_latency_seconds", "histogram", (0.1, 1.0))
    assert record.via == "subclass:svc.meters.Meter"  # src/ is no package: the graph's module name


def test_runtime_buckets_are_marked_unresolved(tmp_path):
    result = write_package(tmp_path, {
        "m.py": """
            from prometheus_client import Histogram
            def make(limit):
                return Histogram("m_tokens", "Tokens.", buckets=compute_buckets(limit))
        """,
    })
    (record,) = result.records
    assert (record.buckets, record.buckets_resolved) == ((), False)


def test_label_lists_summed_with_a_computed_part_keep_the_names_they_give(tmp_path):
    """JetStream: `labelnames=universal_label_names + ["idx"]`, the first part from a dict's keys."""
    result = write_tree(tmp_path, {"svc/metrics.py": """
        from prometheus_client import Gauge

        class Collector:
            universal_labels = {"id": "host"}

            def __init__(self):
                names = list(self.universal_labels.keys())
                self.backlog = Gauge("svc_backlog", "Backlog", labelnames=names + ["idx"])
                self.loaded = Gauge("svc_loaded", "Loaded", labelnames=["model"] + ["idx", "slot"])
        """}, [METRICS_STEP], "metrics")
    found = {r.name: (r.labels, r.labels_resolved, r.unresolved) for r in result.records}
    assert found == {
        "svc_backlog": (("idx",), False, "labels: self.universal_labels.keys() + [...]"),
        "svc_loaded": (("model", "idx", "slot"), True, ""),  # in the order the sum gives them
    }
