"""Live scrapes: a real prometheus_client HTTP server on 127.0.0.1 serving the fixture's metrics,
scraped and reconciled against the statically extracted definitions."""

from __future__ import annotations

import importlib
import json

import prometheus_client
import pytest
from click.testing import CliRunner

from archdiff.commands.telemetry import read_exposition, telemetry
from extractor.errors import UserInputError
from extractor.model import to_jsonable
from extractor.telemetry.metrics import METRICS_STEP
from extractor.telemetry.scrape import ScrapedFamily, parse_exposition, reconcile
from telemetry_support import build_context

from conftest import FIXTURES


@pytest.fixture(scope="module")
def definitions():
    records = build_context(FIXTURES / "pymetrics", [METRICS_STEP]).results["metrics"].records
    return [to_jsonable(r) for r in records]


@pytest.fixture()
def live_server(monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURES / "pymetrics"))
    service = importlib.import_module("pymetrics.service")
    registry = prometheus_client.CollectorRegistry()
    metrics = service.build_metrics(registry, worker_id=3, mode="online")
    metrics["requests"].labels(route="/v1/completions", code="200").inc()
    metrics["latency"].observe(0.2)
    metrics["build"].info({"version": "1.0"})
    # defined here in the test, not in the analysed code
    prometheus_client.Gauge("toy_debug_flag", "Only in the test.", registry=registry).set(1)
    prometheus_client.ProcessCollector(registry=registry)
    server, thread = prometheus_client.start_http_server(0, addr="127.0.0.1", registry=registry)
    try:
        yield f"http://127.0.0.1:{server.server_port}/metrics"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_live_scrape_reconciles_with_static_definitions(live_server, definitions):
    families = parse_exposition(read_exposition(live_server))
    result = reconcile(definitions, families)
    assert "toy_requests" in result.matched and "toy_requests_created" in result.matched
    assert "toy_build_info" in result.matched  # Info: family name_info, type gauge
    assert "toy_worker_3_busy" in result.matched  # matched by the f-string pattern
    assert result.exposed_not_found == ("toy_debug_flag",)
    # the process collector the test registers: prometheus_client's own, named in libraries.yaml
    assert result.library_families and all(f.family.startswith("process_") and f.origin == "prometheus_client"
                                           and f.evidence == "by name" for f in result.library_families)
    # StatLogger is never constructed in the server, and mode="online" never builds the offline name
    assert {d.split("@")[0] for d in result.defined_not_exposed} == {
        "toy:cache_config_info", "toy:finished", "toy:scheduler_running",
        "toy:time_to_first_token_seconds", "toy_offline_queue_depth"}
    assert result.type_mismatches == ()


def test_type_mismatch_is_reported(definitions):
    text = "# HELP toy_inflight_requests x\n# TYPE toy_inflight_requests counter\ntoy_inflight_requests_total 1\n"
    result = reconcile(definitions, parse_exposition(text))
    assert [(m.family, m.scraped_type, m.defined_type) for m in result.type_mismatches] == [
        ("toy_inflight_requests", "counter", "gauge")]


def test_cli_scrape_with_evidence(live_server, definitions, tmp_path):
    evidence = tmp_path / "evidence.json"
    evidence.write_text(json.dumps({"schema_version": 1, "metrics": definitions}))
    out = CliRunner().invoke(telemetry, ["scrape", live_server, "--evidence", str(evidence), "--json"])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.output)
    assert payload["reconciliation"]["exposed_not_found"] == ["toy_debug_flag"]
    assert any(f["name"] == "toy_requests" and f["type"] == "counter" for f in payload["families"])


def test_cli_bad_inputs(tmp_path):
    with pytest.raises(UserInputError):
        read_exposition(str(tmp_path / "missing.txt"))
    bad = tmp_path / "bad.txt"
    bad.write_text("this is { not exposition\n")
    with pytest.raises(UserInputError):
        parse_exposition(bad.read_text())
    saved = tmp_path / "ok.txt"
    saved.write_text("# TYPE up gauge\nup 1\n")
    out = CliRunner().invoke(telemetry, ["scrape", str(saved), "--evidence", str(bad)])
    assert out.exit_code != 0 and isinstance(out.exception, UserInputError)
    assert parse_exposition(saved.read_text()) == (ScrapedFamily("up", "gauge", "", ("up",)),)


def test_prometheus_cpp_exposition_reconciles(tmp_path):
    """Text as prometheus-cpp's serializer writes it: counters without _total, summaries with
    quantile samples, histograms with _count/_sum/_bucket."""
    records = build_context(FIXTURES / "triton_like", [METRICS_STEP],
                            only=("core/src/metrics.cc", "core/src/metrics.h")).results["metrics"].records
    definitions = [to_jsonable(r) for r in records]
    text = "\n".join([
        "# HELP tl_request_success ok", "# TYPE tl_request_success counter", "tl_request_success 3",
        "# HELP tl_request_summary_us s", "# TYPE tl_request_summary_us summary",
        "tl_request_summary_us_count 2", "tl_request_summary_us_sum 10",
        'tl_request_summary_us{quantile="0.5"} 4',
        "# HELP tl_first_response_ms h", "# TYPE tl_first_response_ms histogram",
        "tl_first_response_ms_count 1", "tl_first_response_ms_sum 7",
        'tl_first_response_ms_bucket{le="10"} 1', 'tl_first_response_ms_bucket{le="+Inf"} 1',
        "# TYPE tl_gpu_utilization counter", "tl_gpu_utilization 1", ""])
    result = reconcile(definitions, parse_exposition(text))
    assert result.matched == ("tl_first_response_ms", "tl_gpu_utilization", "tl_request_success",
                              "tl_request_summary_us")
    assert [(m.family, m.scraped_type, m.defined_type) for m in result.type_mismatches] == [
        ("tl_gpu_utilization", "counter", "gauge")]
    assert len(result.defined_not_exposed) == 4 and result.exposed_not_found == ()
