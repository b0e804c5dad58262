"""Metric factories on the handwritten ``fixtures/metricwrappers`` service: each wrapper shape
yields a record at its call site with the factory chain in ``via``; values the code does not
give stay patterns or diagnostics with the reason."""

from __future__ import annotations


import pytest

from extractor.telemetry.metrics import METRICS_STEP
from telemetry_support import build_context, write_tree

from conftest import FIXTURES

F = "factory:wrapsvc.telemetry."


@pytest.fixture(scope="module")
def result():
    return build_context(FIXTURES / "metricwrappers", [METRICS_STEP]).results["metrics"]


def record(result, name):
    (found,) = [r for r in result.records if r.name == name]
    return found


@pytest.mark.parametrize("name, line, via, labels, buckets", [
    # a class forwarding ``name`` to prometheus_client.Gauge, labels defaulted in the wrapper
    ("wrapsvc_queue_depth", 9, F + "gauges.LabeledGauge", ("model",), ()),
    ("wrapsvc_load", 10, F + "gauges.LabeledGauge", ("model", "gpu"), ()),  # labels from the caller
    # ``name`` kept on self, the counter built later in another method
    ("wrapsvc_requests", 11, F + "gauges.LazyCounter", ("route",), ()),
    # a function factory building the name around the caller's suffix; its default buckets
    ("wrapsvc_prefill_seconds", 12, F + "factories.make_histogram", (), (0.1, 1.0)),
    # two levels: the outer factory's buckets override the inner default
    ("wrapsvc_decode_latency_seconds", 13, F + "factories.latency > " + F + "factories.make_histogram",
     (), (0.005, 0.05, 0.5)),
    # everything through **kwargs, namespace added by the factory
    ("wrapsvc_errors", 14, F + "factories.counter", ("kind",), ()),
    # labels through *args
    ("wrapsvc_payload_bytes", 15, F + "factories.summary", ("route", "method"), ()),
])
def test_wrapper_shapes(result, name, line, via, labels, buckets):
    found = record(result, name)
    assert (found.path, found.line, found.via, found.labels, found.buckets) == (
        "wrapsvc/server.py", line, via, labels, buckets)
    assert found.library == "prometheus_client" and not found.dynamic and found.labels_resolved


def test_exemplars_where_the_code_observes_with_them(result):
    with_exemplars = sorted(r.name for r in result.records if r.exemplars)
    # PREFILL observed with an exemplar in its own module, DECODE from another one
    assert with_exemplars == ["wrapsvc_decode_latency_seconds", "wrapsvc_prefill_seconds"]


def test_method_factory_through_self(result):
    found = record(result, "wrapsvc_cache_hits_ratio")
    assert (found.path, found.line) == ("wrapsvc/telemetry/factories.py", 32)
    assert found.via == F + "factories.Stats._ratio > " + F + "factories.prometheus_client_gauge"


def test_help_comes_from_the_call_site(result):
    assert record(result, "wrapsvc_queue_depth").help == "Requests waiting."
    assert record(result, "wrapsvc_decode_latency_seconds").help == "Decode time."


def test_unresolvable_names_stay_dynamic_or_diagnosed(result):
    worker = record(result, "wrapsvc_worker_{worker_id}_busy")
    assert worker.dynamic and worker.unresolved == "parameter worker_id" and worker.line == 22
    (diagnostic,) = [d for d in result.diagnostics if d.path == "wrapsvc/server.py"]
    assert (diagnostic.line, diagnostic.code) == (18, "metric-name-unresolved")
    assert "os.environ.get('WRAPSVC_METRIC', 'x')" in diagnostic.message and "LabeledGauge" in diagnostic.message
    # the constructors inside the wrappers are reached from call sites: no records, no noise there
    assert not [r for r in result.records if r.path in ("wrapsvc/telemetry/gauges.py",)]
    assert not [d for d in result.diagnostics if d.path.startswith("wrapsvc/telemetry/")]


def test_look_alikes_make_nothing(result):
    names = {r.name for r in result.records}
    assert "wrapsvc_started" not in names  # EventLog forwards its name to logging
    assert len([r for r in result.records if r.language == "python"]) == 12


def test_opentelemetry_names_as_the_exporter_writes_them(result):
    tokens = record(result, "wrapsvc_tokens")  # unit "1" maps to no suffix; dots to underscores
    assert tokens.via == "factory:wrapsvc.telemetry.otel.instrument > instrument"
    assert tokens.exposed_names == ("wrapsvc_tokens", "wrapsvc_tokens_total")
    queue = record(result, "wrapsvc_queue_time_milliseconds")  # ms -> milliseconds
    assert queue.library == "opentelemetry" and queue.unit == "ms" and queue.type.value == "histogram"
    assert record(result, "wrapsvc_inflight").type.value == "gauge"  # up-down counter -> gauge
    # attributes come with each measurement: no label is claimed, and the record says why
    assert (queue.labels, queue.labels_resolved) == ((), False)
    assert queue.unresolved.startswith("labels: OpenTelemetry takes attributes with each measurement")


def test_cpp_helpers_and_label_maps(result):
    requests = record(result, "wrapsvc_cpp_requests_total")
    assert (requests.path, requests.line, requests.via) == ("csrc/server.cc", 12, "helper:MakeCounter")
    assert requests.help == "Requests served by the C++ frontend"  # the helper's help parameter
    memory = record(result, "wrapsvc_cpp_memory_bytes")
    assert (memory.labels, memory.help, memory.via) == (("pool",), "Gauge made by MakeGauge", "helper:MakeGauge")
    power = record(result, "wrapsvc_cpp_power_watts")  # .Labels(gpu_labels), a map variable
    assert (power.labels, power.via, power.line) == (("gpu_uuid", "model"), "builder", 16)
    # the same map variable handed to the helper's labels parameter
    temperature = record(result, "wrapsvc_cpp_gpu_temperature_celsius")
    assert (temperature.labels, temperature.line) == (("gpu_uuid", "model"), 15)
    assert not [d for d in result.diagnostics if d.path.startswith("csrc/")]


def write(tmp_path, files):
    return write_tree(tmp_path, files, [METRICS_STEP], "metrics")


def test_uncalled_factory_and_depth_bound(tmp_path):
    result = write(tmp_path, {
        "m.py": """
            from prometheus_client import Gauge
            def g1(n): return Gauge(n, "d")
            def g2(n): return g1(n)
            def g3(n): return g2(n)
            def g4(n): return g3(n)
            def g5(n): return g4(n)
            def unused(n): return Gauge("m_" + n, "Never called.")
            A = g4("m_four")
            B = g5("m_five")
        """,
    })
    names = sorted(r.name for r in result.records)
    # g5 -> g4 -> g3 -> g2 -> g1 is five factories deep: past the bound, so not followed
    assert names == ["m_four", "m_{n}"]
    assert record(result, "m_{n}").line == 8 and record(result, "m_{n}").dynamic
    # the cut chain is said at its call site, and g5's own call of g4 stays unresolved
    assert [(d.line, d.code) for d in result.diagnostics] == [(7, "metric-name-unresolved"),
                                                               (10, "metric-factory-too-deep")]


def test_cpp_helper_without_literal_call_sites(tmp_path):
    result = write(tmp_path, {
        "a.cc": """
            #include "prometheus/registry.h"
            void* Make(prometheus::Registry& r, const std::string& name) {
              return &prometheus::BuildGauge().Name(name).Help("h").Register(r);
            }
            void Use(prometheus::Registry& r, const std::string& dynamic_name) { Make(r, dynamic_name); }
        """,
    })
    assert result.records == ()
    (diagnostic,) = result.diagnostics
    assert (diagnostic.line, diagnostic.code) == (4, "metric-name-unresolved")
    assert "parameter 2 of Make()" in diagnostic.message


# -- factories made by a function given the metric class (issue 25) ------------------------------
# The gateway shape: a method given Counter/Gauge/Histogram returns a closure calling it, kept on
# self and called with the names; likewise a lambda, a functools.partial, a module name, a dict entry.
GATEWAY = {
    "gw/__init__.py": "",
    "gw/metrics.py": """
        import functools
        from prometheus_client import Counter, Gauge, Histogram, Summary

        class NoOp:
            pass

        class Logger:
            def __init__(self, enabled):
                self.enabled = enabled
                self._counter = self._make_factory(Counter)
                self._gauge = self._make_factory(Gauge)
                self.requests = self._counter(name="gw_requests_total", documentation="Requests.",
                                              labelnames=["route"])
                self.inflight = self._gauge("gw_inflight", "Requests in flight.")
                self._kinds = {}
                self._kinds["histogram"] = self._make_factory(Histogram)
                self.latency = self._kinds["histogram"]("gw_latency_seconds", "Latency.", buckets=[0.1, 1.0])

            def _make_factory(self, cls, fallback=True):
                def factory(*args, **kwargs):
                    name = args[0] if args else kwargs.get("name", "")
                    if not self.enabled:
                        return NoOp()
                    return cls(*args, **kwargs)
                return factory

        def lambda_of(cls):
            return lambda name, doc: cls(name, doc, ["model"])

        def partial_of(cls, namespace):
            return functools.partial(cls, namespace=namespace)

        _tokens = lambda_of(Counter)
        TOKENS = _tokens("gw_tokens", "Tokens.")
        QUEUE = partial_of(Gauge, "gw")
        KINDS = {"summary": lambda_of(Summary)}
        SIZES = KINDS["summary"]("gw_sizes", "Sizes.")
        WAITING = QUEUE("waiting", "Waiting requests.", labelnames=("model",))
    """,
    "gw/server.py": """
        from gw.metrics import QUEUE
        RUNNING = QUEUE("running", "Running requests.")
    """,
}


def test_made_factories_of_every_shape(tmp_path):
    result = write(tmp_path, GATEWAY)
    made = "factory:gw.metrics."
    found = {r.name: (r.path, r.line, r.type.value, r.labels, r.buckets, r.via) for r in result.records}
    assert found == {
        "gw_requests": ("gw/metrics.py", 13, "counter", ("route",), (), made + "Logger._make_factory > closure"),
        "gw_inflight": ("gw/metrics.py", 15, "gauge", (), (), made + "Logger._make_factory > closure"),
        "gw_latency_seconds": ("gw/metrics.py", 18, "histogram", (), (0.1, 1.0), made + "Logger._make_factory > closure"),
        "gw_tokens": ("gw/metrics.py", 35, "counter", ("model",), (), made + "lambda_of > lambda"),
        # the namespace the partial binds, from the maker's own parameter
        "gw_waiting": ("gw/metrics.py", 39, "gauge", ("model",), (), made + "partial_of > partial"),
        "gw_running": ("gw/server.py", 3, "gauge", (), (), made + "partial_of > partial"),
        "gw_sizes": ("gw/metrics.py", 38, "summary", ("model",), (), made + "lambda_of > lambda"),  # a dict display
    }
    assert result.records and all(r.help.endswith(".") for r in result.records)
    assert not result.diagnostics


def test_metric_classes_without_records_are_said(tmp_path):
    result = write(tmp_path, {
        "svc/__init__.py": "from prometheus_client import Counter, Gauge  # re-exported: no use",
        # the classes are handed to a helper whose callable the code keeps in a shape not followed
        # (called straight away): the file is said, with what it used
        "svc/missed.py": """
            from prometheus_client import Counter, Gauge
            from svc.helpers import wrap

            def build(cls):
                return cls

            REQUESTS = build(Counter)("svc_requests", "Requests.")
            INFLIGHT = wrap(Gauge, "svc_inflight")
        """,
        "svc/helpers.py": """
            def wrap(cls, name):
                return None
        """,
        # the library for its server and registry only, a class in an annotation and isinstance
        "svc/serve.py": """
            from collections import Counter as Tally
            from prometheus_client import REGISTRY, Counter, start_http_server

            def serve(port: int, seen: Counter | None = None) -> None:
                start_http_server(port, registry=REGISTRY)
                if isinstance(seen, Counter):
                    pass
                Tally("abc")
        """,
        # a metrics client injected: constructor-shaped calls on it are said; a look-alike is not
        "svc/injected.py": """
            class Instruments:
                def __init__(self, metrics_client, tally):
                    self.latency = metrics_client.Histogram(name="svc_latency", documentation="Latency.")
                    self.words = tally.Counter("abc")
        """,
        # a file whose metrics come out says nothing more
        "svc/ok.py": """
            from prometheus_client import Counter
            DONE = Counter("svc_done", "Done.")
        """,
    })
    assert [r.name for r in result.records if not r.origin] == ["svc_done"]  # besides the default collectors
    injected, missed = result.diagnostics
    assert (missed.path, missed.line, missed.code) == ("svc/missed.py", 8, "metric-classes-without-records")
    assert missed.message.startswith("uses prometheus_client.Counter (line 8), prometheus_client.Gauge (line 9); but")
    assert (injected.path, injected.line) == ("svc/injected.py", 4)
    assert injected.message.startswith("calls metrics_client.Histogram (line 4) like constructors, on an object not")
    assert "tally" not in injected.message
    assert result.stats["python_files_metric_classes_without_records"] == 2


def test_files_of_reached_factories_are_not_silent(tmp_path):
    result = write(tmp_path, GATEWAY | {"gw/helpers.py": """
        from prometheus_client import Counter
        def counter(name):
            return Counter(name, "Made for a caller.")
    """, "gw/use.py": """
        from gw.helpers import counter
        HITS = counter("gw_hits")
    """})
    assert record(result, "gw_hits").path == "gw/use.py"
    assert not result.diagnostics and "python_files_metric_classes_without_records" not in result.stats  # zero: left out, as every count


def test_closures_over_other_callables_are_not_followed(tmp_path):
    # vLLM's lazy-import wrapper: a closure calling its fallback parameter, kept in module names
    result = write(tmp_path, {"lazy.py": """
        from prometheus_client import Gauge

        def _missing(*args, **kwargs):
            raise RuntimeError("not installed")

        def lazy(module_name, attr_name, fallback_fn=_missing):
            def wrapper(*args, **kwargs):
                return fallback_fn(*args, **kwargs)
            return wrapper

        quantize = lazy("flashinfer", "fp4_quantize")
        gauge_maker = lazy("x", "y", Gauge)
        OUT = quantize("lazy_not_a_metric", "Not a metric.")
        DEPTH = gauge_maker("lazy_depth", "A metric: the class given is Gauge.")
    """})
    assert [(r.name, r.via) for r in result.records if not r.origin] == [("lazy_depth", "factory:lazy.lazy > closure")]
    assert not result.diagnostics


def test_made_factory_behind_a_wrapper_and_a_wrapper_class(tmp_path):
    # order two both ways: a function forwarding to a kept callable, and a maker given a wrapper class
    result = write(tmp_path, {"two.py": """
        from prometheus_client import Counter

        class Prefixed:
            def __init__(self, name, documentation):
                self.metric = Counter("two_" + name, documentation)

        def make(cls):
            def factory(*args, **kwargs):
                return cls(*args, **kwargs)
            return factory

        counter = make(Counter)
        prefixed = make(Prefixed)

        def tokens(kind):
            return counter(f"two_{kind}_tokens", "Tokens.")

        PROMPT = tokens("prompt")
        EVENTS = prefixed("events", "Events.")
    """})
    found = {r.name: (r.line, r.via) for r in result.records if not r.origin}
    assert found == {
        "two_prompt_tokens": (19, "factory:two.tokens > factory:two.make > closure"),
        "two_events": (20, "factory:two.make > closure > factory:two.Prefixed"),
    }


def test_a_factory_branching_on_a_none_parameter_gives_the_branch_each_call_site_takes(tmp_path):
    # lightllm's Monitor.create_counter: `if labelnames is None: Counter(name, d) else: Counter(name, d,
    # labelnames=labelnames)`; a call with labels made two records of one metric, one without them
    result = write(tmp_path, {
        "m.py": """
            from prometheus_client import Counter, Histogram
            class Monitor:
                def counter(self, name, labelnames=None):
                    if labelnames is None:
                        c = Counter(name, "d")
                    else:
                        c = Counter(name, "d", labelnames=labelnames)
                    return c
                def histogram(self, name, buckets=None, labels=None):
                    if buckets is not None:
                        return Histogram(name, "d", labels or (), buckets=buckets)
                    elif labels is not None:
                        return Histogram(name, "d", labels)
                    return Histogram(name, "d")
                def init(self, given):
                    self.counter("app_plain_total")
                    self.counter("app_labelled_total", labelnames=["method"])
                    self.counter("app_given_total", labelnames=given)  # not known here: both branches
                    self.histogram("app_latency_seconds", buckets=[0.1, 1.0])
                    self.histogram("app_size_bytes", labels=["route"])
        """,
    })
    found = sorted((r.name, r.labels, r.labels_resolved, r.buckets[:2]) for r in result.records)
    assert found == [("app_given", (), False, ()), ("app_given", (), True, ()),  # either branch may run
                     ("app_labelled", ("method",), True, ()),
                     # past `if buckets is not None: return ...` buckets is None: not this call's way
                     ("app_latency_seconds", (), True, (0.1, 1.0)),
                     ("app_plain", (), True, ()),
                     ("app_size_bytes", ("route",), True, (0.005, 0.01))]  # the elif's, the default buckets


def test_a_metric_class_kept_on_self_by_a_method(tmp_path):
    # litellm's services logger: `self.Histogram = Histogram` in __init__, then `self.Histogram(name, ...)`
    # in a factory method; a class body attribute still wins, and an attribute set to two names is no class
    result = write(tmp_path, {
        "m.py": """
            from prometheus_client import Counter, Gauge, Histogram
            class Logger:
                _gauge_cls = Gauge
                def __init__(self, flag):
                    self.Histogram = Histogram
                    self._gauge_cls = Counter
                    self._either = Counter if flag else Gauge
                    self._two = Counter
                    self.Histogram("app_direct_seconds", "d")
                    self.histogram("app_latency")
                    self._gauge_cls("app_depth", "d")
                    self._two("app_nothing", "d")
                def later(self):
                    self._two = Gauge
                def histogram(self, name):
                    return self.Histogram(name + "_seconds", "d", labelnames=["route"], buckets=(0.1, 1.0))
        """,
    })
    found = sorted((r.line, r.name, r.type.value, r.labels, r.buckets[:2], r.via) for r in result.records)
    assert found == [
        (10, "app_direct_seconds", "histogram", (), (0.005, 0.01), "class-attr:Logger.Histogram"),
        (11, "app_latency_seconds", "histogram", ("route",), (0.1, 1.0),
         "factory:m.Logger.histogram > class-attr:Logger.Histogram"),
        (12, "app_depth", "gauge", (), (), "class-attr:Logger._gauge_cls")]
