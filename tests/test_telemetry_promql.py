"""The PromQL lexer: metric names read, and the top-level comparison."""

from __future__ import annotations

import pytest

from extractor.telemetry.promql import analyse


@pytest.mark.parametrize("expr, metrics, op, value", [
    ('histogram_quantile(0.99, sum by(le) (rate(vllm:e2e_request_latency_seconds_bucket'
     '{model_name="$model_name"}[$__rate_interval])))',
     ("vllm:e2e_request_latency_seconds_bucket",), "", None),
    ("sum by (pod) (rate(a_total[1m])) / ignoring(pod) group_left sum (rate(a_total[1m]))",
     ("a_total",), "", None),
    ("avg(delta(q_us{<<.LabelMatchers>>}[30s])/(1+delta(ok{<<.LabelMatchers>>}[30s]))) by (<<.GroupBy>>)",
     ("ok", "q_us"), "", None),
    ("rate(errors_total[5m]) / rate(requests_total[5m]) > 0.05", ("errors_total", "requests_total"), ">", 0.05),
    ("0.5 < up", ("up",), ">", 0.5),  # literal on the left: flipped
    ('{__name__="foo", job="x"} == bool 1', ("foo",), "==", 1.0),
    ("sum without (instance, job) (x offset 5m) >= -3", ("x",), ">=", -3.0),
    ("max_over_time(x[1h:5m]) > 1e3", ("x",), ">", 1000.0),
    ("a > b", ("a", "b"), ">", None),
    ("count(up{job=~\"triton.*\"} == 0) by (instance) != 0", ("up",), "!=", 0.0),
    ("topk(3, sum by (model) (rate(nv_inference_count[5m]))) and on(model) vector(1)",
     ("nv_inference_count",), "", None),
    # keywords and aggregations in any case, as Prometheus reads them (kube-prometheus-stack's TargetDown)
    ("100 * (count(up == 0) BY (cluster, job) / COUNT(up) BY (cluster, job)) > 10", ("up",), ">", 10.0),
    ("SUM WITHOUT (pod) (x OFFSET 5m) > BOOL 2", ("x",), ">", 2.0),
    # Helm's template actions left in a rule, and a comment in it (kube-prometheus-stack's alertmanager rules)
    ("# failed scrapes could create false negatives, see\n# https://www.robustperception.io/x for details.\n"
     "max_over_time(alertmanager_cluster_failed_peers{job=\"{{ $alertmanagerJob }}\"}[5m])\n"
     "  / on ({{ range $.Values.labels }}{{ . }},{{ end }}namespace) group_left\n"
     "  count by ({{ range $.Values.labels }}{{ . }},{{- end }}namespace) (up) > {{ .Values.x | default 0.01 }}",
     ("alertmanager_cluster_failed_peers", "up"), ">", None),
])
def test_analyse(expr, metrics, op, value):
    result = analyse(expr)
    assert (result.metrics, result.op, result.value, result.error) == (metrics, op, value, "")


def test_unknown_syntax_is_reported_and_names_salvaged():
    result = analyse("sum(foo{a=\"b\"}[5m]) ? bar")
    assert result.error.startswith("unexpected '?'")
    assert result.metrics == ("bar", "foo")


def test_salvaged_names_leave_out_comments_and_strings():
    # what the lexer rejects is read for names; a comment's words and a label's value are not names
    result = analyse('sum(kube_pod_owner{owner_kind="Deployment"}) ? x  # see www.example.io')
    assert result.error.startswith("unexpected '?'")
    assert result.metrics == ("kube_pod_owner", "x")


def test_unbalanced_brackets_are_reported():
    assert analyse("sum(rate(x[5m])").error == "unbalanced brackets"
