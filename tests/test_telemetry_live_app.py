"""A live scrape of a small FastAPI service (prometheus_client, prometheus-fastapi-instrumentator)
started with uvicorn on 127.0.0.1: every series it exposes is explained, by the code's own
definitions (made through its wrappers) or by the library the code uses, none is unknown."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from extractor.model import to_jsonable
from extractor.telemetry.metrics import METRICS_STEP
from extractor.telemetry.scrape import parse_exposition, reconcile
from telemetry_support import build_context

from conftest import FIXTURES

APP = FIXTURES / "fastapi_service"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback only
        return response.read().decode()


@pytest.fixture(scope="module")
def served():
    """The service in its own process, so the scrape shows its default registry and nothing the
    test process registered."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(APP)}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    process = subprocess.Popen([sys.executable, "-m", "uvicorn", "svc.app:app", "--host", "127.0.0.1",
                                "--port", str(port), "--log-level", "warning"],
                               env=env, cwd=APP, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                get(base + "/metrics")
                break
            except (urllib.error.URLError, OSError):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"the service did not start: {process.stderr.read().decode()[-400:]}")
                time.sleep(0.2)
        for _ in range(3):
            get(base + "/v1/completions")
        yield get(base + "/metrics")
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_live_scrape_has_no_unexplained_series(served):
    records = build_context(APP, [METRICS_STEP]).results["metrics"].records
    definitions = [to_jsonable(r) for r in records]
    families = parse_exposition(served)
    result = reconcile(definitions, families)
    assert result.exposed_not_found == ()
    assert result.type_mismatches == ()
    # the code's own series, made through its wrappers
    assert {"svc_models_loaded", "svc_completions", "svc_completions_created"} <= set(result.matched)
    origins = {f.family: (f.origin, f.evidence) for f in result.library_families}
    # the instrumentator's, as configured: namespace svc, in-progress gauge renamed
    for family in ("svc_http_requests", "svc_http_request_duration_seconds",
                   "svc_http_request_duration_highr_seconds", "svc_http_request_size_bytes",
                   "svc_inprogress"):
        assert origins[family][0] == "prometheus-fastapi-instrumentator", family
        assert origins[family][1].startswith(family) and "svc/app.py:" in origins[family][1]
    # prometheus_client's default collectors, found because expose() serves the default registry
    assert origins["python_gc_objects_collected"][0] == "prometheus_client"
    assert "svc/app.py:" in origins["python_gc_objects_collected"][1]
    assert result.defined_not_exposed == ()
    assert len(families) == len(result.matched) + len(result.library_families)


OTEL_RUN = """
from opentelemetry import metrics
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import MeterProvider
import prometheus_client

metrics.set_meter_provider(MeterProvider(metric_readers=[PrometheusMetricReader()]))
from wrapsvc.telemetry import otel  # the fixture's own instruments, made on import

otel.TOKENS.add(3)
otel.QUEUE_TIME.record(12.5)
otel.INFLIGHT.add(1)
print(prometheus_client.generate_latest().decode())
"""


def test_opentelemetry_exporter_names_match_the_static_records():
    """The fixture's OpenTelemetry instruments, run through the real SDK and Prometheus exporter:
    the families they expose are the ones the static records predict."""
    env = {**os.environ, "PYTHONPATH": str(FIXTURES / "metricwrappers")}
    text = subprocess.run([sys.executable, "-c", OTEL_RUN], env=env, capture_output=True, text=True,
                          timeout=60, check=True).stdout
    records = build_context(FIXTURES / "metricwrappers", [METRICS_STEP],
                            only=("wrapsvc/telemetry/otel.py",)).results["metrics"].records
    result = reconcile([to_jsonable(r) for r in records], parse_exposition(text))
    assert set(result.matched) == {"wrapsvc_tokens", "wrapsvc_queue_time_milliseconds", "wrapsvc_inflight"}
    assert result.exposed_not_found == () and result.type_mismatches == ()
    assert "target_info" in {f.family for f in result.library_families}  # the reader's target_info
