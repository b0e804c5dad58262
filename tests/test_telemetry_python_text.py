"""Prometheus text a Python server writes by hand, without prometheus_client (a router's
``/metrics`` handler that appends ``# HELP``/``# TYPE`` lines and f-string samples)."""

from __future__ import annotations

from extractor.telemetry.metrics import METRICS_STEP
from telemetry_support import build_context

ROUTER = '''"""A router's own /metrics text."""


def _labels(values):
    return "{" + ",".join(f'{k}="{v}"' for k, v in values.items()) + "}"


class RouterMetrics:
    def render(self, counts, active, spans):
        lines = [
            "# HELP router_requests_total Requests the router saw.",
            "# TYPE router_requests_total counter",
        ]
        for (event, pool), value in sorted(counts.items()):
            lines.append(
                "router_requests_total"
                f'{{event="{event}",pool="{pool}"}} {value}'
            )
        lines.extend([
            "# HELP router_active Requests in flight.",
            "# TYPE router_active gauge",
            f"router_active {active}",
            "# TYPE router_latency_seconds summary",
            f"router_latency_seconds_count {len(spans)}",
            f"router_latency_seconds{_labels({'q': 0.5})} {spans[0]}",
            "# TYPE router_wait_seconds histogram",
            f'router_wait_seconds_bucket{{le="+Inf"}} {len(spans)}',
        ])
        for name, help_text in (("router_cache_hits_total", "Cache hits."),):
            lines.extend([f"# HELP {name} {help_text}", f"# TYPE {name} counter"])
        return "\\n".join(lines) + "\\n"
'''

# a test's expected scrape: literal text the code compares with, not text it serves
EXPECTED = '''def test_scrape(body):
    patterns = [
        "# HELP served_total Served.",
        "# TYPE served_total counter",
        'served_total{model="m"} 0',
    ]
    for pattern in patterns:
        assert pattern in body
'''


def test_python_hand_written_exposition(tmp_path):
    (tmp_path / "router").mkdir()
    (tmp_path / "router" / "metrics.py").write_text(ROUTER)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_scrape.py").write_text(EXPECTED)
    ctx = build_context(tmp_path, [METRICS_STEP])
    result = ctx.results["metrics"]
    assert {r.name: (r.type.value, r.labels, r.labels_resolved, r.help, r.library, r.via, r.path, r.line)
            for r in result.records} == {
        "router_requests_total": ("counter", ("event", "pool"), True, "Requests the router saw.",
                                  "text-exposition", "exposition-text", "router/metrics.py", 12),
        "router_active": ("gauge", (), True, "Requests in flight.", "text-exposition", "exposition-text",
                          "router/metrics.py", 21),
        "router_latency_seconds": ("summary", (), True, "", "text-exposition", "exposition-text",
                                   "router/metrics.py", 23),
        # a histogram's or summary's samples are its _bucket, _count and _sum series
        "router_wait_seconds": ("histogram", ("le",), True, "", "text-exposition", "exposition-text",
                                "router/metrics.py", 26),
    }
    by_name = {r.name: r for r in result.records}
    assert by_name["router_requests_total"].exposed_names == ("router_requests_total",)  # as written
    unresolved = [(d.path, d.line) for d in result.diagnostics if d.code == "metric-name-unresolved"]
    assert unresolved == [("router/metrics.py", 30)]  # `# TYPE {name} counter`: built at run time
    assert result.stats["python_exposition_lines_compared"] == 1  # served_total: compared, not served
    assert result.stats["python_exposition_unresolved"] == 1
