"""prometheus_client's metric families, which a custom collector yields from ``collect()``
(gpustack's exporters, a node exporter written in Python): each ``*MetricFamily(...)`` is a metric,
with its own parameter order, a counter's ``_total`` stripped and a unit appended as the library
does. The series each record says a scrape shows are checked against what prometheus_client itself
writes for the same module."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from extractor.model import to_jsonable
from extractor.telemetry.metrics import METRICS_STEP
from telemetry_support import build_context

MODULE = textwrap.dedent('''\
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily
    from prometheus_client import metrics_core
    from prometheus_client.registry import Collector

    LABELS = ["node"]


    class NodeCollector(Collector):
        def collect(self):
            up = GaugeMetricFamily("node_up", "Whether the node answers.", labels=LABELS + ["zone"])
            up.add_metric(["n1", "z"], 1)
            yield up
            jobs = CounterMetricFamily("node_jobs_total", "Jobs run.", None, ["node"])
            jobs.add_metric(["n1"], 3)
            yield jobs
            yield CounterMetricFamily("node_busy", "Busy time.", value=7, unit="seconds")
            yield metrics_core.SummaryMetricFamily("node_wait_seconds", "Waits.", count_value=2, sum_value=1.5)
            yield metrics_core.HistogramMetricFamily(
                "node_latency_seconds", "Latency.", buckets=[("0.5", 1), ("+Inf", 2)], sum_value=0.7)
            os_info = InfoMetricFamily("node_os", "Operating system.", labels=["node"])
            os_info.add_metric(["n1"], {"kernel": "6.1"})
            yield os_info
''')

RENDER = textwrap.dedent('''\
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import node_metrics
    from prometheus_client import CollectorRegistry
    registry = CollectorRegistry()
    registry.register(node_metrics.NodeCollector())
    out = {}
    for family in registry.collect():
        out[family.name] = {"type": family.type, "samples": sorted({s.name for s in family.samples}),
                            "labels": sorted({k for s in family.samples for k in s.labels if k != "le"})}
    print(json.dumps(out))
''')


def test_metric_families_of_a_custom_collector_are_metrics(tmp_path):
    (tmp_path / "node_metrics.py").write_text(MODULE)
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    static = {r["name"]: r for r in (to_jsonable(record) for record in result.records)}
    assert {name: (r["type"], r["line"], r["labels"], r["help"]) for name, r in static.items()} == {
        "node_up": ("gauge", 10, ["node", "zone"], "Whether the node answers."),
        "node_jobs": ("counter", 13, ["node"], "Jobs run."),
        "node_busy_seconds": ("counter", 16, [], "Busy time."),
        "node_wait_seconds": ("summary", 17, [], "Waits."),
        "node_latency_seconds": ("histogram", 18, [], "Latency."),
        "node_os": ("info", 20, ["node"], "Operating system."),
    }
    assert all(r["library"] == "prometheus_client" for r in static.values())
    # the bounds of a family's buckets and an info's value keys come with each add_metric
    latency = static["node_latency_seconds"]
    assert latency["buckets"] == [] and latency["buckets_resolved"] is False and "add_metric" in latency["unresolved"]
    assert static["node_os"]["labels_resolved"] is False and static["node_up"]["labels_resolved"] is True
    assert not [d for d in result.diagnostics if d.code.startswith("metric-")]

    scraped = json.loads(subprocess.run([sys.executable, "-c", RENDER, str(tmp_path)], check=True,
                                        capture_output=True, text=True).stdout)
    assert set(scraped) == set(static)
    for name, family in scraped.items():
        record = static[name]
        assert family["type"] == record["type"], name
        assert set(family["samples"]) <= set(record["exposed_names"]), name
        assert set(record["labels"]) <= set(family["labels"]), name


CHOSEN = textwrap.dedent('''\
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    _FAMILIES = {"gauge": GaugeMetricFamily, "counter": CounterMetricFamily}


    def family(kind, name, documentation):
        cls = _FAMILIES.get(kind)
        return cls(name, documentation)
''')


def test_metric_classes_held_in_a_dict_and_called_through_it_are_said(tmp_path):
    # the class is picked from a dict by a value known at run time (gpustack's runtime metrics
    # aggregator): archdiff makes no record of it, and says so where the classes are held
    (tmp_path / "chosen.py").write_text(CHOSEN)
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    assert result.records == ()
    [said] = [d for d in result.diagnostics if d.code == "metric-classes-without-records"]
    assert (said.path, said.line) == ("chosen.py", 3)
    assert "prometheus_client.core.CounterMetricFamily (line 3)" in said.message
    assert "prometheus_client.core.GaugeMetricFamily (line 3)" in said.message
