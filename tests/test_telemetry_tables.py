"""prometheus_client metrics declared in a table of specifications and made by a loop over it
(FastDeploy's ``MetricsManager.METRICS``: ``{"key": {"type": Gauge, "name": ..., "description": ...,
"kwargs": {...}}}``, then ``config["type"](config["name"], config["description"], **config["kwargs"])``
for each entry). Written small, per case."""

from __future__ import annotations

from extractor.telemetry.metrics import METRICS_STEP
from telemetry_support import write_tree

MANAGER = """
    from prometheus_client import Counter, Gauge, Histogram

    LATENCY = [0.1, 0.5, 1.0]


    class MetricsManager:
        METRICS = {
            "running": {
                "type": Gauge,
                "name": "srv:num_requests_running",
                "description": "Requests running",
                "kwargs": {},
            },
            "ttft": {
                "type": Histogram,
                "name": "srv:time_to_first_token_seconds",
                "description": "Time to first token",
                "kwargs": {"buckets": [0.01, 0.1, 1.0]},
            },
            "queue": {
                "type": Histogram,
                "name": "srv:queue_seconds",
                "description": "Queue time",
                "kwargs": {"buckets": LATENCY},
            },
            "tokens": {
                "type": Counter,
                "name": "srv:tokens_total",
                "description": "Tokens",
                "kwargs": {"labelnames": ["model"]},
            },
        }

        def __init__(self):
            for metric_name, config in self.METRICS.items():
                setattr(self, metric_name, config["type"](config["name"], config["description"], **config["kwargs"]))

        def init_speculative(self, method):
            self.SPECULATIVE = {
                "accepted": {"type": Counter, "name": "srv:accepted_tokens", "description": "Accepted"},
            }
            if method == "mtp":
                self.SPECULATIVE["efficiency"] = {"type": Gauge, "name": "srv:efficiency", "description": "Eff"}
            for config in self.SPECULATIVE.values():
                config["type"](name=config["name"], documentation=config["description"])
    """


def test_each_entry_of_a_table_made_in_a_loop_is_a_metric(tmp_path):
    result = write_tree(tmp_path, {"srv/__init__.py": "", "srv/metrics.py": MANAGER}, [METRICS_STEP], "metrics")
    found = {r.name: (r.type.value, r.help, r.labels, r.buckets, r.line) for r in result.records}
    assert found == {
        # at the line the entry names the metric
        "srv:num_requests_running": ("gauge", "Requests running", (), (), 11),
        "srv:time_to_first_token_seconds": ("histogram", "Time to first token", (), (0.01, 0.1, 1.0), 17),
        # buckets in a module constant
        "srv:queue_seconds": ("histogram", "Queue time", (), (0.1, 0.5, 1.0), 23),
        # labels among the entry's keywords; the given _total is the counter's own suffix
        "srv:tokens": ("counter", "Tokens", ("model",), (), 29),
        # a table set on self in a method, an entry added to it by key, read by keyword
        "srv:accepted_tokens": ("counter", "Accepted", (), (), 41),
        "srv:efficiency": ("gauge", "Eff", (), (), 44),
    }
    assert not [d for d in result.diagnostics if d.code == "metric-classes-without-records"]


def test_a_table_no_shape_reads_says_it_made_nothing(tmp_path):
    """A table built by a call: its entries are not read, and the file says so instead of nothing."""
    result = write_tree(tmp_path, {"srv/__init__.py": "", "srv/metrics.py": """
        from prometheus_client import Gauge


        def specs():
            return {"a": {"type": Gauge, "name": "srv:a", "description": "A"}}


        class Manager:
            def __init__(self):
                for key, config in specs().items():
                    setattr(self, key, config["type"](config["name"], config["description"]))
        """}, [METRICS_STEP], "metrics")
    assert not result.records
    said = [(d.path, d.line, d.code) for d in result.diagnostics]
    assert said == [("srv/metrics.py", 6, "metric-classes-without-records")]
