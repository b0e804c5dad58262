"""Metric libraries beyond prometheus_client. aioprometheus (xinference's): its metrics are read
like prometheus_client's, with its own exposition (a counter's name as given, no ``_created``) and
its labels given with each observation; the library itself renders the same module's metrics, and
every series it writes is one the static record names. Libraries whose series archdiff does not
model (middleware, interceptors) are said where the code imports them."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from extractor.model import to_jsonable
from extractor.telemetry.metrics import METRICS_STEP
from telemetry_support import build_context

MODULE = textwrap.dedent('''\
    from aioprometheus import Counter, Gauge, Histogram, Summary
    import aioprometheus

    requests_total = Counter("svc:requests_total", "Requests served.")
    tokens = Counter("svc_tokens", "Tokens generated.", const_labels={"host": "h1"})
    inflight = Gauge("svc_inflight_requests", "Requests in flight.")
    latency = Histogram("svc_latency_seconds", "Latency.", buckets=(0.1, 0.5, 2.0))
    ttft = aioprometheus.Histogram("svc_ttft_seconds", "Time to first token.")
    sizes = Summary("svc_request_size_bytes", "Request sizes.")


    def observe():
        requests_total.inc({"model": "m"})
        tokens.add({"model": "m"}, 3)
        inflight.set({}, 2)
        latency.observe({"route": "/v1"}, 0.3)
        ttft.observe({}, 0.02)
        sizes.observe({}, 100)
''')

RENDER = textwrap.dedent('''\
    import json, re, sys
    sys.path.insert(0, sys.argv[1])
    import svc_metrics
    from aioprometheus import REGISTRY, render
    svc_metrics.observe()
    body, _headers = render(REGISTRY, [])
    text = body.decode() if isinstance(body, bytes) else body
    families, buckets = {}, {}
    kind = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind[name] = line.split(" ", 3)
            families[name] = set()
        elif line and not line.startswith("#"):
            sample = line.split("{")[0].split(" ")[0]
            family = next(f for f in sorted(families, key=len, reverse=True) if sample.startswith(f))
            families[family].add(sample)
            bound = re.search(r'[{,]le="([^"]+)"', line)
            if bound and bound.group(1) != "+Inf":
                buckets.setdefault(family, set()).add(float(bound.group(1)))
    print(json.dumps({f: {"type": kind[f], "samples": sorted(s), "buckets": sorted(buckets.get(f, ()))}
                      for f, s in families.items()}))
''')


def test_aioprometheus_metrics_are_read_and_named_as_the_library_exposes_them(tmp_path):
    (tmp_path / "svc_metrics.py").write_text(MODULE)
    records = build_context(tmp_path, [METRICS_STEP]).results["metrics"].records
    static = {r["name"]: r for r in (to_jsonable(record) for record in records)}
    done = subprocess.run([sys.executable, "-c", RENDER, str(tmp_path)], capture_output=True, text=True, check=True)
    rendered = json.loads(done.stdout)
    assert set(static) == set(rendered)  # every metric the library writes, and no other
    for name, family in rendered.items():
        record = static[name]
        assert record["library"] == "aioprometheus" and record["type"] == family["type"]
        assert set(family["samples"]) <= set(record["exposed_names"]), name
        assert [b for b in record["buckets"]] == family["buckets"], name
        # the labels come with each observation: not claimed as known
        assert record["labels_resolved"] is False and "observation" in record["unresolved"]
    assert static["svc_tokens"]["exposed_names"] == ["svc_tokens"]  # no _total, no _created
    assert any(f.startswith("counter-without-total") for f in static["svc_tokens"]["lint"])


def test_a_library_whose_series_are_not_modeled_is_said_where_it_is_imported(tmp_path):
    # MLServer: starlette_exporter's middleware and py-grpc-prometheus's interceptor expose series
    # that depend on options archdiff does not read; the evidence says so instead of lacking them
    (tmp_path / "app.py").write_text(
        "import os\n"
        "from starlette_exporter import PrometheusMiddleware, handle_metrics\n"
        "import starlette_exporter.optional_metrics\n\n\n"
        "def build(app):\n    from py_grpc_prometheus.prometheus_server_interceptor import PromServerInterceptor\n"
        "    app.add_middleware(PrometheusMiddleware, prefix='rest')\n    return PromServerInterceptor()\n")
    (tmp_path / "quiet.py").write_text("import prometheus_client\nfrom .starlette_exporter import x\n")
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    said = sorted((d.path, d.line, d.message.split(",")[0]) for d in result.diagnostics
                  if d.code == "metric-library-not-modeled")
    assert said == [("app.py", 2, "uses starlette_exporter"), ("app.py", 7, "uses py-grpc-prometheus")]
    assert result.stats["python_files_unmodeled_metric_libraries"] == 1


def test_a_cpp_file_including_a_metrics_library_that_is_not_modeled_is_said(tmp_path):
    # a C++ server whose instruments come from opentelemetry-cpp's Meter: archdiff does not read
    # them, and says so where the library's metrics API is included (its tracing API is not it)
    (tmp_path / "server_metrics.h").write_text(
        "#pragma once\n#include <string>\n  #  include <opentelemetry/metrics/provider.h>\n"
        "#include \"opentelemetry/sdk/metrics/meter_provider.h\"\n"
        "struct ServerMetrics {\n  void Init() { auto m = Provider::GetMeterProvider(); }\n};\n")
    (tmp_path / "other.cpp").write_text("// see opentelemetry/metrics/provider.h\n"
                                        "#include <opentelemetry/trace/provider.h>\nint metric;\n")
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    said = [(d.path, d.line, d.message.split(",")[0]) for d in result.diagnostics
            if d.code == "metric-library-not-modeled"]
    assert said == [("server_metrics.h", 3, "uses opentelemetry-cpp metrics")]
    assert result.stats["cpp_files_unmodeled_metric_libraries"] == 1


def test_a_copy_of_a_library_not_modeled_kept_in_the_tree_is_said_where_the_system_imports_it(tmp_path):
    # rtp-llm: KMonitor's Python client kept under the system's package and imported from there, and
    # its C++ client included; the copy's own files do not use it
    for path, text in {
        "app/__init__.py": "",
        "app/vendor/__init__.py": "",
        "app/vendor/kmonitor/__init__.py": "",
        "app/vendor/kmonitor/kmonitor.py": "from app.vendor.kmonitor.metric_base import MetricBase\n",
        "app/vendor/kmonitor/metric_base.py": "class MetricBase:\n    pass\n",
        "app/metrics.py": "import logging\n\nfrom app.vendor.kmonitor.kmonitor import KMonitor\n\n"
                          "kmon = KMonitor()\nkmon.register_gauge_metric('app_rt')\n",
        "app/other.py": "from app.vendor import kmonitor\n",
        "app/unrelated.py": "from app.kmonitoring import x\n",
        "cpp/Metrics.h": "#pragma once\n#include <map>\n#include \"kmonitor/client/MetricsReporter.h\"\n"
                         "class RpcMetrics : public kmonitor::MetricsGroup {};\n",
    }.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    said = sorted((d.path, d.line, d.message.split(",")[0]) for d in result.diagnostics
                  if d.code == "metric-library-not-modeled")
    assert said == [("app/metrics.py", 3, "uses kmonitor"), ("app/other.py", 1, "uses kmonitor"),
                    ("cpp/Metrics.h", 3, "uses kmonitor")]


TRITON_MODEL = textwrap.dedent('''\
    import triton_python_backend_utils as pb_utils


    def family(name, kind):
        return pb_utils.MetricFamily(name=name, description="made by a helper", kind=kind)


    class TritonPythonModel:
        def initialize(self, args):
            self.requests = pb_utils.MetricFamily(
                name="model_requests", description="Requests seen",
                kind=pb_utils.MetricFamily.COUNTER)
            self.memory = pb_utils.MetricFamily("model_memory_bytes", "Memory in use", pb_utils.MetricFamily.GAUGE)
            self.tokens = family("model_tokens", pb_utils.MetricFamily.HISTOGRAM)
            self.odd = pb_utils.MetricFamily(name="model_odd", description="?", kind=args["kind"])
            self.requests.Metric(labels={"model": "m"}).increment(1)
            self.tokens.Metric(labels={}, buckets=[1, 10]).observe(3)
''')


def test_triton_python_backend_metric_families_take_their_type_from_the_kind_argument(tmp_path):
    # a Triton model's model.py (TensorRT-LLM's backend): the type is an argument, and the labels and a
    # histogram's buckets come with each family.Metric(...)
    (tmp_path / "model.py").write_text(TRITON_MODEL)
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    static = {r["name"]: r for r in (to_jsonable(record) for record in result.records)}
    assert {name: (r["type"], r["line"], r["help"]) for name, r in static.items()} == {
        "model_requests": ("counter", 10, "Requests seen"),
        "model_memory_bytes": ("gauge", 13, "Memory in use"),
        "model_tokens": ("histogram", 14, "made by a helper"),
    }
    for record in static.values():
        assert record["library"] == "triton-python-backend" and record["labels_resolved"] is False
        assert "family.Metric(labels" in record["unresolved"]
    # Triton core writes them with prometheus-cpp: a counter as named
    assert static["model_requests"]["exposed_names"] == ["model_requests"]
    tokens = static["model_tokens"]
    assert tokens["buckets"] == [] and tokens["buckets_resolved"] is False and "buckets=[" in tokens["unresolved"]
    [odd] = [d for d in result.diagnostics if d.code == "metric-type-unresolved"]
    assert (odd.path, odd.line) == ("model.py", 15) and "args[...]" in odd.message


def test_a_builder_chain_kept_in_a_variable_then_exposed(tmp_path):
    # infinity's `instrumentator = Instrumentator().instrument(app)`, then `instrumentator.expose(app)` in
    # the lifespan function: the variable keeps the chain's end, and expose() serves the default registry
    (tmp_path / "app.py").write_text(textwrap.dedent("""\
        from prometheus_fastapi_instrumentator import Instrumentator
        def create(app):
            async def lifespan(app):
                instrumentator.expose(app)
            instrumentator = Instrumentator(excluded_handlers=["/metrics"]).instrument(app)
            quiet = Instrumentator().instrument(app)
            return quiet
    """))
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    by_via: dict[str, set[tuple[str, int]]] = {}
    for r in result.records:
        by_via.setdefault(r.via, set()).add((r.path, r.line))
    assert by_via == {"builder:Instrumentator.instrument": {("app.py", 5), ("app.py", 6)},
                      "default-registry": {("app.py", 4)}}
    assert "python_gc_objects_collected" in {r.name for r in result.records if r.via == "default-registry"}
