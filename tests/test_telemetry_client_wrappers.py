"""Metrics made through a client wrapper of the analysed code: a class whose methods (or properties)
named like a metric class return the library's class, directly or as a ``functools.partial`` bound
to a registry (BentoML's ``PrometheusClient.Histogram``), called on a parameter annotated with that
class (``def setup(self, client: MetricsClient): client.Histogram(name=..., ...)``)."""

from __future__ import annotations

from extractor.telemetry.metrics import METRICS_STEP
from telemetry_support import write_tree

CLIENT = """
    from functools import partial


    class MetricsClient:
        @property
        def prometheus_client(self):
            import prometheus_client
            return prometheus_client

        @property
        def Histogram(self):
            return partial(self.prometheus_client.Histogram, registry=self.registry)

        @property
        def Counter(self):
            return self.prometheus_client.Counter


    class TracingClient(MetricsClient):
        def Gauge(self, *args, **kwargs):
            return None
    """

SERVER = """
    from __future__ import annotations

    import typing as t

    if t.TYPE_CHECKING:
        from .client import MetricsClient, TracingClient


    class Middleware:
        def setup(self, client: MetricsClient, traced: "TracingClient", buckets=(0.1, 1.0)):
            self.duration = client.Histogram(
                name="request_duration_seconds",
                documentation="Request duration",
                labelnames=["endpoint", "code"],
                buckets=[0.5, 1.0],
            )
            self.total = traced.Counter(name="requests", documentation="Requests", labelnames=["endpoint"])
            self.gauge = traced.Gauge(name="not_a_metric", documentation="its method returns no class")
    """


def test_a_client_wrappers_metric_classes_make_metrics(tmp_path):
    result = write_tree(tmp_path, {"srv/__init__.py": "", "srv/client.py": CLIENT, "srv/server.py": SERVER},
                        [METRICS_STEP], "metrics")
    found = {r.name: (r.type.value, r.labels, r.buckets, r.line, r.via) for r in result.records}
    assert found == {
        # a property returning functools.partial of the class a lazily importing property's module holds
        "request_duration_seconds": ("histogram", ("endpoint", "code"), (0.5, 1.0), 12,
                                     "forward:MetricsClient.Histogram"),
        # a base class's property, on a parameter annotated with a quoted subclass name
        "requests": ("counter", ("endpoint",), (), 18, "forward:MetricsClient.Counter"),
    }
