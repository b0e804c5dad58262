"""Metrics declared in a YAML table of specifications that code reads at run time (TorchServe's
``metrics.yaml``: dimensions as anchors, then ``counter``/``gauge``/``histogram`` lists under a
grouping key; or entries that say their type). Written small, per case."""

from __future__ import annotations

from extractor.telemetry.metrics import METRICS_STEP
from extractor.telemetry.records import MetricType
from extractor.telemetry.thresholds import THRESHOLDS_STEP
from extractor.telemetry.yaml_tables import BUCKETS_UNKNOWN, EXPOSURE_UNKNOWN
from telemetry_support import write_tree

TYPE_KEYED = """\
    dimensions:
      - &model "ModelName"
      - &host "Hostname"

    server_metrics:
      counter:
        - name: Requests2XX
          unit: Count
          dimensions: [*model, *host]
      histogram:
        - name: queue_latency_seconds
          unit: seconds
          dimensions: ["model_name"]
          buckets: [0.1, 1, 10]
        - name: LoadTime
          unit: ms
          dimensions: [*host]

    model_metrics:
      gauges:
        - name: HandlerTime
          unit: ms
          dimensions: [*model]
"""


def by_name(result):
    return {r.name: r for r in result.records}


def test_a_table_keyed_by_type_is_one_metric_per_entry(tmp_path):
    result = write_tree(tmp_path, {"conf/metrics.yaml": TYPE_KEYED}, [METRICS_STEP], "metrics")
    found = by_name(result)
    assert sorted(found) == ["HandlerTime", "LoadTime", "Requests2XX", "queue_latency_seconds"]
    requests = found["Requests2XX"]
    assert (requests.path, requests.line, requests.type, requests.unit) == ("conf/metrics.yaml", 7,
                                                                             MetricType.COUNTER, "Count")
    assert requests.labels == ("ModelName", "Hostname")  # the anchors' values
    assert (requests.language, requests.via, requests.dynamic) == ("yaml", "table:server_metrics.counter", False)
    # the reader decides the suffixes: the declared name is what a scrape's parser reports as the family
    assert requests.exposed_names == ("Requests2XX",) and requests.unresolved == EXPOSURE_UNKNOWN
    latency = found["queue_latency_seconds"]
    assert (latency.type, latency.buckets, latency.buckets_resolved) == (
        MetricType.HISTOGRAM, (0.1, 1.0, 10.0), True)
    assert latency.labels == ("model_name",)
    load = found["LoadTime"]  # no buckets: the reader's default
    assert (load.buckets, load.buckets_resolved) == ((), False)
    assert load.unresolved == f"{EXPOSURE_UNKNOWN}; {BUCKETS_UNKNOWN}"
    assert "non-base-unit: unit 'ms' should be seconds" in load.lint
    handler = found["HandlerTime"]
    assert (handler.type, handler.via, handler.line) == (MetricType.GAUGE, "table:model_metrics.gauges", 21)
    assert result.stats["metrics_from_tables"] == 4


def test_entries_that_say_their_type(tmp_path):
    table = """\
        exporter:
          metrics:
            - name: cache_hits_total
              type: Counter
              help: Cache hits
              labels: [tier]
            - name: cache_bytes
              type: gauge
              description: Bytes held
              labels: {tier: hot}
            - name: not_a_metric
              type: something
              help: neither counter nor gauge
    """
    result = write_tree(tmp_path, {"deploy/exporter.yml": table}, [METRICS_STEP], "metrics")
    found = by_name(result)
    assert sorted(found) == ["cache_bytes", "cache_hits_total"]
    hits = found["cache_hits_total"]
    assert (hits.type, hits.help, hits.labels, hits.line, hits.via) == (
        MetricType.COUNTER, "Cache hits", ("tier",), 3, "table:exporter.metrics")
    assert (found["cache_bytes"].type, found["cache_bytes"].labels) == (MetricType.GAUGE, ("tier",))
    (problem,) = [d for d in result.diagnostics if d.code == "metric-table-entry"]
    assert (problem.path, problem.line) == ("deploy/exporter.yml", 11) and "'something'" in problem.message


def test_yaml_that_only_mentions_a_type_word_is_no_table(tmp_path):
    files = {
        # a summary of names is not a table of metric specifications
        "ci/workflow.yaml": "jobs:\n  summary:\n    - name: build\n      runs-on: ubuntu\n",
        # an HPA's `type: Pods` and a chart value named gauge
        "chart/values.yaml": "gauge: true\nmetrics:\n  - type: Pods\n    name: x\n    labels: [a]\n",
        # a site's configuration with a tag no safe reader knows: unread, and no metric table either
        "docs/mkdocs.yaml": "site: !ENV SITE\nplugins:\n  - search:\n      summary:\n        - index.md\n",
    }
    result = write_tree(tmp_path, files, [METRICS_STEP], "metrics")
    assert result.records == () and result.diagnostics == ()


def test_an_unnamed_entry_and_an_unreadable_table_are_diagnostics(tmp_path):
    files = {
        "a/metrics.yaml": "ts_metrics:\n  counter:\n    - unit: Count\n      dimensions: [a]\n"
                          "    - name: Ok\n      unit: Count\n",
        "b/metrics.yaml": "dims:\n  - &m ModelName\nts_metrics:\n  gauge:\n    - name: G\n      dimensions: [*nope]\n",
    }
    result = write_tree(tmp_path, files, [METRICS_STEP], "metrics")
    assert [r.name for r in result.records] == ["Ok"]
    codes = {(d.path, d.line, d.code) for d in result.diagnostics}
    assert codes == {("a/metrics.yaml", 3, "metric-table-entry"), ("b/metrics.yaml", 6, "metric-table-unread")}


def test_a_threshold_on_a_table_metric_links_to_it(tmp_path):
    files = {
        "conf/metrics.yaml": TYPE_KEYED,
        "deploy/rules.yaml": """\
            groups:
              - name: serving
                rules:
                  - alert: TooMany5xx
                    expr: rate(Requests2XX[5m]) > 10
        """,
    }
    result = write_tree(tmp_path, files, [METRICS_STEP, THRESHOLDS_STEP], "thresholds")
    (rule,) = result.records
    assert (rule.metrics, rule.links, rule.unlinked) == (("Requests2XX",), ("Requests2XX",), "")
