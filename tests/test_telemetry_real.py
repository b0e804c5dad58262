"""Metrics and thresholds on the real vLLM 0.10.2 sdist, checked against the sdist's own test list
and against facts read independently from its source with ``ast``."""

from __future__ import annotations

import ast
import json
import re

import pytest

from extractor.telemetry.metrics import METRICS_STEP
from extractor.telemetry.records import MetricType
from extractor.telemetry.thresholds import THRESHOLDS_STEP
from telemetry_support import build_context

pytestmark = pytest.mark.real

DASHBOARD = "examples/online_serving/prometheus_grafana/grafana.json"


@pytest.fixture(scope="module")
def vllm_ctx(vllm_src):
    only = tuple(sorted(p.relative_to(vllm_src).as_posix() for p in (vllm_src / "vllm").rglob("*.py")))
    return build_context(vllm_src, [METRICS_STEP, THRESHOLDS_STEP], only=only + (DASHBOARD,))


def expected_v1(vllm_src) -> list[str]:
    tree = ast.parse((vllm_src / "tests/entrypoints/openai/test_metrics.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "EXPECTED_METRICS_V1" for t in targets):
                return [ast.literal_eval(e) for e in node.value.elts]
    raise AssertionError("EXPECTED_METRICS_V1 not found in the sdist's test_metrics.py")


def read_construction(path, line, name):
    """Type and help of the constructor call at ``path:line``, read straight from the source:
    the callee's class attribute (``_gauge_cls = prometheus_client.Gauge``) gives the type, the
    ``documentation`` argument (a literal, or a local assigned one) the help."""
    tree = ast.parse(path.read_text())
    class_attrs = {}
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for item in cls.body:
            if isinstance(item, ast.Assign) and isinstance(item.value, ast.Attribute) \
                    and isinstance(item.value.value, ast.Name) and item.value.value.id == "prometheus_client":
                class_attrs[item.targets[0].id] = item.value.attr.lower()
    for function in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        local_strings = {}
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) \
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                local_strings.setdefault(node.targets[0].id, []).append(node.value.value)
        for call in (n for n in ast.walk(function) if isinstance(n, ast.Call) and n.lineno == line):
            kwargs = {k.arg: k.value for k in call.keywords}
            value = kwargs.get("name")
            given = value.value if isinstance(value, ast.Constant) else None
            if given is None and isinstance(value, ast.Name) and name in local_strings.get(value.id, []):
                given = name
            if given != name:
                continue
            doc = kwargs["documentation"]
            help_text = doc.value if isinstance(doc, ast.Constant) else local_strings[doc.id][0]
            return class_attrs[call.func.attr], help_text
    raise AssertionError(f"no constructor for {name} at {path}:{line}")


def test_every_expected_v1_metric_is_exposed_with_type_and_help(vllm_ctx, vllm_src):
    records = [r for r in vllm_ctx.results["metrics"].records if r.path.startswith("vllm/v1/")]
    expected = expected_v1(vllm_src)
    assert "vllm:cache_config_info" in expected and len(expected) > 40
    for family in expected:
        exposing = [r for r in records if family in r.exposed_names]
        assert len(exposing) == 1, f"{family}: exposed by {[(r.name, r.path, r.line) for r in exposing]}"
        record = exposing[0]
        kind, help_text = read_construction(vllm_src / record.path, record.line, record.name)
        assert (record.type.value, record.help) == (kind, help_text), family
    info = next(r for r in records if r.name == "vllm:cache_config_info")
    assert info.type is MetricType.GAUGE and info.path == "vllm/v1/metrics/loggers.py"


def test_no_metric_is_invented(vllm_ctx, vllm_src):
    records = [r for r in vllm_ctx.results["metrics"].records if not r.origin]  # library-made: below
    assert len(records) >= 50
    for record in records:
        text = (vllm_src / record.path).read_text()
        # the library strips a counter's trailing _total, so the source may spell it with one
        given = {record.name} | ({record.name + "_total"} if record.type is MetricType.COUNTER else set())
        assert any(f'"{g}"' in text or f"'{g}'" in text for g in given), (record.name, record.path)
    # Ray wrappers replace the class attributes in subclasses: not prometheus_client metrics, and
    # no definition is reported from the Ray module.
    assert not [r for r in records if r.path == "vllm/v1/metrics/ray_wrappers.py"]


def test_grafana_example_dashboard_thresholds_and_reads(vllm_ctx, vllm_src):
    dashboard = json.loads((vllm_src / DASHBOARD).read_text())
    records = [r for r in vllm_ctx.results["thresholds"].records if r.path == DASHBOARD]
    panels = [p for p in dashboard["panels"] if p.get("targets")]
    assert len(panels) >= 10
    defined = {n for r in vllm_ctx.results["metrics"].records for n in r.exposed_names}
    for panel in panels:
        mine = [r for r in records if r.name == panel["title"]]
        read = {m for t in panel["targets"] for m in re.findall(r"vllm:[A-Za-z0-9_:]+", t["expr"])}
        assert mine and all(set(r.metrics) == read for r in mine), panel["title"]
        steps = (panel.get("fieldConfig", {}).get("defaults", {}).get("thresholds") or {}).get("steps", [])
        numbered = sorted(s["value"] for s in steps if s.get("value") is not None)
        assert sorted(r.value for r in mine if r.value is not None) == numbered, panel["title"]
        # every series the dashboard reads is one the code defines, and the record links it
        assert read <= defined and all(r.links for r in mine), panel["title"]
    # vLLM's example keeps Grafana's untouched default step: flagged, not treated as a decision
    assert [r for r in records if r.value == 80.0] and all(r.default for r in records if r.value == 80.0)


def test_ray_metrics_through_the_wrapper_classes(vllm_ctx, vllm_src):
    """RayPrometheusStatLogger swaps _gauge_cls for RayGaugeWrapper, a class that forwards its
    ``name`` to ray.util.metrics.Gauge: each construction site is then also a Ray metric, exposed
    with the ray_ prefix of Ray's metrics agent."""
    records = vllm_ctx.results["metrics"].records
    expected = expected_v1(vllm_src)
    ray = {r.name: r for r in records if r.library == "ray" and r.path == "vllm/v1/metrics/loggers.py"}
    gauge = ray["vllm:num_requests_running"]
    assert gauge.via == ("class-attr:RayPrometheusStatLogger._gauge_cls > "
                         "factory:vllm.v1.metrics.ray_wrappers.RayGaugeWrapper")
    assert gauge.exposed_names == ("ray_vllm:num_requests_running",)
    assert gauge.labels == ("model_name", "engine")  # labelnames -> tuple(labelnames) -> tag_keys
    counter = ray["vllm:prompt_tokens"]
    assert counter.exposed_names == ("ray_vllm:prompt_tokens", "ray_vllm:prompt_tokens_total")
    # every v1 family the sdist's test expects from prometheus_client has its Ray twin
    v1_ray = {n for r in records if r.library == "ray" and r.path.startswith("vllm/v1/") for n in r.exposed_names}
    missing = [f for f in expected if f.startswith("vllm:") and "ray_" + f not in v1_ray
               and not (f.endswith("_total") and "ray_" + f[: -len("_total")] in v1_ray)
               and f.rsplit("_", 1)[-1] not in ("bucket", "count", "sum", "created")]
    assert missing == []


def test_instrumentator_metrics_with_their_library_origin(vllm_ctx, vllm_src):
    records = [r for r in vllm_ctx.results["metrics"].records
               if r.origin == "prometheus-fastapi-instrumentator"]
    by_name = {r.name: r for r in records}
    assert set(by_name) == {"http_requests", "http_request_size_bytes", "http_response_size_bytes",
                            "http_request_duration_highr_seconds", "http_request_duration_seconds"}
    source = (vllm_src / "vllm/entrypoints/openai/api_server.py").read_text().splitlines()
    (line,) = {r.line for r in records}
    assert "Instrumentator(" in source[line - 1]  # the chain that calls .instrument(app)
    assert "http_requests_total" in by_name["http_requests"].exposed_names
    assert by_name["http_request_duration_seconds"].buckets == (0.1, 0.5, 1.0)
    assert by_name["http_requests"].labels == ("method", "status", "handler")
    # vLLM hands prometheus_client's REGISTRY on (get_prometheus_registry): the default collectors
    defaults = {r.name for r in vllm_ctx.results["metrics"].records if r.via == "default-registry"}
    assert {"process_cpu_seconds", "python_gc_objects_collected", "python"} <= defaults
