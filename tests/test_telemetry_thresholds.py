"""Thresholds from rules, dashboards, HPA and prometheus-adapter on the handwritten Helm chart,
and the bad inputs each of those can bring."""

from __future__ import annotations

import json
import textwrap

import pytest

from extractor.model import Language, ParsedFile
from extractor.telemetry.metrics import METRICS_STEP
from extractor.telemetry.records import SourceKind
from extractor.telemetry.thresholds import (THRESHOLDS_STEP, neutralise_templates, parse_quantity,
                                            scan_json_thresholds, scan_yaml_thresholds)
from telemetry_support import build_context

from conftest import FIXTURES

CHART = "server/deploy/k8s"


@pytest.fixture(scope="module")
def records():
    ctx = build_context(FIXTURES / "triton_like", [METRICS_STEP, THRESHOLDS_STEP])
    return ctx.results["thresholds"]


def pick(result, kind, name):
    return [r for r in result.records if r.source_kind is kind and r.name == name]


def test_alert_and_recording_rules(records):
    (failure,) = pick(records, SourceKind.PROMETHEUS_RULE, "TLHighFailureRatio")
    assert (failure.op, failure.value, failure.for_, failure.severity, failure.line) == (">", 0.05, "10m", "critical", 9)
    assert failure.metrics == ("tl_request_failure_total", "tl_request_success")
    assert failure.links == ("tl_request_failure_total", "tl_request_success")  # defined in core/src
    (slow,) = pick(records, SourceKind.PROMETHEUS_RULE, "TLSlowFirstResponse")
    assert (slow.op, slow.value, slow.metrics, slow.links) == (
        ">=", 500.0, ("tl_first_response_ms_bucket",), ("tl_first_response_ms",))
    (recording,) = pick(records, SourceKind.PROMETHEUS_RULE, "tl:pending_requests:sum")
    assert (recording.op, recording.value, recording.metrics) == ("", None, ("tl_pending_request_count",))


def test_hpa_on_adapter_metric_is_linked_through_metrics_query(records):
    (adapter,) = pick(records, SourceKind.ADAPTER, "tl_queue_avg_us")  # ${1}_avg_us applied to the series
    assert adapter.metrics == ("tl_queue_duration_us", "tl_request_success")
    (hpa,) = pick(records, SourceKind.HPA, "tl_queue_avg_us")
    assert hpa.path == f"{CHART}/templates/hpa.yaml" and hpa.line == 16
    assert (hpa.op, hpa.value) == ("target", 250.0)  # {{ .Values.autoscaling.targetQueueMicros }}
    assert hpa.metrics == ("tl_queue_duration_us", "tl_request_success")
    assert hpa.links == ("tl_queue_duration_us", "tl_request_success")
    assert hpa.via == (f"adapter:tl_queue_avg_us@{CHART}/values.yaml:27",)
    (cpu,) = pick(records, SourceKind.HPA, "cpu")  # from values.yaml, rendered with toYaml
    assert (cpu.value, cpu.metrics, cpu.expr) == (70.0, (), "Resource Utilization")


def test_grafana_panels_thresholds_and_default(records):
    (success,) = pick(records, SourceKind.GRAFANA, "Success rate")  # nested in a collapsed row
    assert (success.op, success.value, success.default, success.severity) == (">=", 80.0, True, "red")
    assert success.metrics == ("tl_request_failure_total", "tl_request_success")
    gpu = pick(records, SourceKind.GRAFANA, "GPU utilization")
    assert [(r.value, r.severity, r.default) for r in gpu] == [(75.0, "orange", False), (95.0, "red", False)]
    (queue,) = pick(records, SourceKind.GRAFANA, "Queue time (ms)")  # legacy graph thresholds
    assert (queue.op, queue.value, queue.severity) == (">", 200.0, "critical")
    (heatmap,) = pick(records, SourceKind.GRAFANA, "First response")  # reads, no threshold
    assert (heatmap.op, heatmap.value, heatmap.links) == ("", None, ("tl_first_response_ms",))
    assert not pick(records, SourceKind.GRAFANA, "Notes")  # text panel: no query
    assert records.stats["by_source_kind"] == {"adapter": 1, "grafana": 5, "hpa": 2, "prometheus-rule": 3}


def test_template_neutralising_keeps_lines():
    text = "{{- if .Values.on }}\nkind: X\nvalue: {{ .Values.v }}\n{{- end }}\n"
    out, placeholders = neutralise_templates(text)
    assert out.split("\n") == ["", "kind: X", "value: __tpl0__", "", ""]
    assert placeholders == {"__tpl0__": ".Values.v"}


@pytest.mark.parametrize("text, value", [("50", 50.0), ("500m", 0.5), ("1Gi", 2.0**30), ("x", None)])
def test_kubernetes_quantities(text, value):
    assert parse_quantity(text) == value


def write(tmp_path, rel, text):
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def test_bad_inputs_give_diagnostics_and_the_rest_is_counted(tmp_path):
    write(tmp_path, "rules/broken.yaml", """
        groups:
          - name: ok
            rules:
              - alert: Fine
                expr: up == 0
              - alert: Strange
                expr: rate(x[5m]) ? 3
        ---
        groups: [ {name: bad, rules: [
        ---
        groups:
          - name: after
            rules:
              - alert: AfterTheBadDocument
                expr: y > 1
    """)
    write(tmp_path, "dash/broken.json", '{"panels": [{"targets": [{"expr": "up"}]}, ')
    write(tmp_path, "dash/old.json", json.dumps({
        "title": "old", "schemaVersion": 6,
        "rows": [{"panels": [{"type": "singlestat", "title": "Up", "targets": [{"expr": "sum(up)"}],
                              "thresholds": "1,3"}]}]}, indent=1))
    result = build_context(tmp_path, [THRESHOLDS_STEP]).results["thresholds"]
    codes = sorted((d.path, d.code) for d in result.diagnostics)
    assert codes == [("dash/broken.json", "json-error"), ("dash/old.json", "grafana-old-schema"),
                     ("rules/broken.yaml", "promql-unknown"), ("rules/broken.yaml", "yaml-error")]
    names = sorted(r.name for r in result.records)
    assert names == ["AfterTheBadDocument", "Fine", "Strange", "Up", "Up"]
    assert sorted(r.value for r in result.records if r.name == "Up") == [1.0, 3.0]
    (strange,) = [r for r in result.records if r.name == "Strange"]
    assert strange.metrics == ("x",)


def test_cheap_rejection_of_unrelated_files():
    kernel_config = json.dumps({"1": {"BLOCK_SIZE_M": 16, "num_warps": 4}}).encode()
    assert scan_json_thresholds(ParsedFile(Language.JSON, kernel_config, None)) is None
    compose = b"services:\n  web:\n    image: nginx\n"
    assert scan_yaml_thresholds(ParsedFile(Language.YAML, compose, None)) is None


def test_v2beta1_hpa_and_records_are_json_and_path_free(tmp_path):
    write(tmp_path, "hpa.yaml", """
        apiVersion: autoscaling/v2beta1
        kind: HorizontalPodAutoscaler
        spec:
          metrics:
            - type: Pods
              pods:
                metricName: queue_depth
                targetAverageValue: 500m
    """)
    first = build_context(tmp_path, [THRESHOLDS_STEP]).results["thresholds"]
    second = build_context(tmp_path, [THRESHOLDS_STEP]).results["thresholds"]
    (hpa,) = first.records
    assert (hpa.name, hpa.value, hpa.metrics, hpa.line) == ("queue_depth", 0.5, ("queue_depth",), 6)
    from extractor.model import to_jsonable

    dumped = json.dumps(to_jsonable(first.records), sort_keys=True, allow_nan=False)
    assert dumped == json.dumps(to_jsonable(second.records), sort_keys=True, allow_nan=False)
    assert str(tmp_path) not in dumped


OPS = "deploy/chart/templates/"


@pytest.fixture(scope="module")
def ops():
    return build_context(FIXTURES / "opschart", [METRICS_STEP, THRESHOLDS_STEP]).results["thresholds"]


def test_prometheusrule_in_a_helm_template_with_a_values_threshold(ops):
    (slow,) = pick(ops, SourceKind.PROMETHEUS_RULE, "InferdSlow")
    assert (slow.path, slow.line, slow.op, slow.value, slow.for_) == (OPS + "prometheusrule.yaml", 20, ">", 2.5, "5m")
    (errors,) = pick(ops, SourceKind.PROMETHEUS_RULE, "InferdErrors")
    assert (errors.op, errors.value, errors.links) == (">", 0.02, ("inferd_requests",))


def test_recording_rule_chain_of_two_steps(ops):
    (slow,) = pick(ops, SourceKind.PROMETHEUS_RULE, "InferdSlow")
    assert slow.metrics == ("inferd:request_latency_seconds:max_over_models",)  # what the alert reads
    assert slow.raw_metrics == ("inferd_request_latency_seconds_count", "inferd_request_latency_seconds_sum")
    assert slow.links == ("inferd_request_latency_seconds",)  # the histogram behind both recordings
    assert slow.via == (f"record:inferd:request_latency_seconds:max_over_models@{OPS}prometheusrule.yaml:16",
                        f"record:inferd:request_latency_seconds:rate5m@{OPS}prometheusrule.yaml:12")
    # an HPA Object metric on the recorded series is followed the same way
    (hpa,) = pick(ops, SourceKind.HPA, "inferd:request_latency_seconds:max_over_models")
    assert (hpa.value, hpa.links) == (3.0, ("inferd_request_latency_seconds",))


def test_keda_prometheus_trigger(ops):
    keda = pick(ops, SourceKind.KEDA, "inferd_queue_per_replica")
    assert [(r.op, r.value) for r in keda] == [("activation", 1.0), ("target", 8.0)]  # values.yaml, | quote
    assert all(r.metrics == ("inferd_queue_depth",) and r.links == ("inferd_queue_depth",) for r in keda)
    assert keda[0].line == 15 and 'model="tiny"' in keda[0].expr  # the query with .Values.model filled in
    assert len([r for r in ops.records if r.source_kind is SourceKind.KEDA]) == 2  # the cpu trigger is not Prometheus


def test_grafana_dashboard_in_a_configmap(ops):
    queue = pick(ops, SourceKind.GRAFANA, "Queue depth")
    assert [(r.value, r.severity) for r in queue] == [(16.0, "orange"), (64.0, "red")]
    assert {r.path for r in queue} == {OPS + "dashboard-configmap.yaml"}
    text = (FIXTURES / "opschart" / OPS / "dashboard-configmap.yaml").read_text().splitlines()
    assert "inferd_queue_depth" in text[queue[0].line - 1]  # the line of the panel's query in the YAML
    (cache,) = pick(ops, SourceKind.GRAFANA, "KV cache")
    assert (cache.value, cache.links) == (0.9, ("inferd_kv_cache_usage_ratio",))


def test_hpa_external_metric_and_inhibit_rules(ops):
    (external,) = pick(ops, SourceKind.HPA, "inferd_kv_cache_usage_ratio")
    assert (external.expr, external.value, external.links) == ("External Value", 0.8, ("inferd_kv_cache_usage_ratio",))
    (inhibit,) = pick(ops, SourceKind.INHIBIT, "InferdDown inhibits InferdSlow")
    assert inhibit.links == ("inferd_request_latency_seconds",) and inhibit.expr == "equal: namespace"
    assert inhibit.via == (f"alert:InferdDown@{OPS}prometheusrule.yaml:30", f"alert:InferdSlow@{OPS}prometheusrule.yaml:20")
    (unknown,) = pick(ops, SourceKind.INHIBIT, "ClusterMaintenance inhibits *")
    assert unknown.unlinked == "names alerts no rule of this system defines: ClusterMaintenance"


def test_every_threshold_is_linked_or_says_why(ops):
    assert all(bool(r.links) != bool(r.unlinked) for r in ops.records)
    (down,) = pick(ops, SourceKind.PROMETHEUS_RULE, "InferdDown")
    assert down.unlinked == "reads only series Prometheus writes itself: up"
    assert ops.stats["through_recording_rules"] == 3 and ops.stats["linked"] == 12


def test_alias_bomb_in_a_rules_file_is_a_diagnostic(tmp_path):
    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x","x"]\n'
    previous = "a"
    for name in "bcdefghi":
        bomb += f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 10) + "]\n"
        previous = name
    write(tmp_path, "rules/bomb.yaml", "groups:\n  - name: g\n    rules:\n      - alert: Ok\n        expr: up == 0\n"
          "---\n" + bomb + "expr: up\n")
    result = build_context(tmp_path, [THRESHOLDS_STEP]).results["thresholds"]
    assert [(d.path, d.line, d.code) for d in result.diagnostics] == [("rules/bomb.yaml", 7, "yaml-limit")]
    assert [r.name for r in result.records] == ["Ok"]  # the document before it is still read


def test_a_document_with_a_value_no_safe_constructor_reads_is_a_diagnostic(tmp_path):
    """Found by the fuzz pass: a tag like ``!Ref`` on a scalar made the whole file a scanner failure."""
    write(tmp_path, "rules/tags.yaml", "groups:\n  - name: g\n    rules:\n      - alert: Ok\n        expr: up == 0\n"
          "---\ngroups:\n  - name: h\n    rules:\n      - alert: Tagged\n        expr: !Ref up\n"
          "---\nexpr: " + "9" * 5000 + "\n")
    result = build_context(tmp_path, [THRESHOLDS_STEP]).results["thresholds"]
    assert [(d.path, d.line, d.code, d.message) for d in result.diagnostics] == [
        ("rules/tags.yaml", 11, "yaml-error", "YAML value not read: could not determine a constructor for the tag '!Ref'"),
        ("rules/tags.yaml", 13, "yaml-error", "YAML value not read: Exceeds the limit (4300 digits) for integer string "
                                              "conversion"),
    ]
    assert [r.name for r in result.records] == ["Ok"]


def test_a_yaml_whose_type_key_holds_a_mapping_is_read_not_a_scanner_failure():
    # A data schema (torch's export schema has this shape) where ``type:`` is a mapping, beside an
    # HPA metric source in the same file: the scanner must read on past the first and find the second.
    data = textwrap.dedent("""\
        Argument:
          kind: union
          fields:
            as_tensor:
              type: {name: Tensor, optional: false}
        ---
        type: Pods
        pods:
          metric: {name: queue_depth}
          target: {type: AverageValue, averageValue: "10"}
        """).encode()
    facts = scan_yaml_thresholds(ParsedFile(Language.YAML, data, None))
    assert facts is not None and [h.metric for h in facts.hpa] == ["queue_depth"]


def test_a_custom_resource_definition_is_a_schema_not_thresholds(monkeypatch):
    """An operator's CustomResourceDefinition names a threshold's fields in its schema (KServe's
    InferenceService: `averageValue`, and here a `seriesQuery` property) and holds none: it is not
    composed, while the HPA beside it in the same file is read, on its own line."""
    from extractor.support import safeyaml

    data = textwrap.dedent("""\
        apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition   # the schema of a resource
        metadata: {name: adapters.example.io}
        spec:
          versions:
          - name: v1
            schema:
              openAPIV3Schema:
                properties:
                  seriesQuery: {type: string}
                  metricsQuery: {type: string}
                  averageValue: {type: integer}
        ---
        apiVersion: autoscaling/v2
        kind: HorizontalPodAutoscaler
        spec:
          metrics:
          - type: Pods
            pods:
              metric: {name: queue_depth}
              target: {type: AverageValue, averageValue: "10"}
        """).encode()
    composed = []
    real = safeyaml.compose_all
    monkeypatch.setattr(safeyaml, "compose_all", lambda text: composed.append(text) or real(text))
    facts = scan_yaml_thresholds(ParsedFile(Language.YAML, data, None))
    assert facts is not None and facts.adapter == () and [(h.metric, h.line) for h in facts.hpa] == [("queue_depth", 18)]
    assert len(composed) == 1 and "HorizontalPodAutoscaler" in composed[0]
    # the same schema as a plain mapping (no apiextensions kind) is still read: the rule is the resource's kind
    plain = data.replace(b"kind: CustomResourceDefinition", b"kind: AdapterConfig")
    assert len(scan_yaml_thresholds(ParsedFile(Language.YAML, plain, None)).adapter) == 1
