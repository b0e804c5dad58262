"""brpc's bvar variables read as the metrics brpc's /brpc_metrics shows (extractor.telemetry.cpp_bvar)."""

from __future__ import annotations

from extractor.telemetry.cpp_bvar import exposed_name, underscored
from extractor.telemetry.metrics import METRICS_STEP
from telemetry_support import build_context

SERVER_CC = r'''#include <bvar/bvar.h>
#include <bvar/multi_dimension.h>
#include "names.h"

namespace srv {
bvar::Adder<int64_t> g_requests("server_requests");
static bvar::LatencyRecorder g_handle("rpc", "HandleLatency");
bvar::MultiDimension<bvar::Adder<int>> g_by_code("replies", {"code", "method"});
bvar::Status<std::string> g_version("server_version", "1.0");  // a string: brpc leaves it out
bvar::Window<bvar::Adder<int64_t>> g_window(&g_requests, 60);   // no name: hidden
bvar::Maxer<int> g_peak(kPeakName);
bvar::IntRecorder g_unknown(runtime_name());

class Queue {
 public:
  Queue() { depth_.expose("QueueDepth"); }
 private:
  bvar::Status<int> depth_;
};
}  // namespace srv
'''


def test_bvars_named_where_they_are_declared_or_exposed(tmp_path):
    (tmp_path / "names.h").write_text(
        '#pragma once\n// the names of the server\'s metrics\nconstexpr char kPeakName[] = "peak_inflight";\n')
    (tmp_path / "server.cc").write_text(SERVER_CC)
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    got = {r.name: (r.line, r.type.value, r.labels, r.library, r.via) for r in result.records}
    assert got == {
        "server_requests": (6, "gauge", (), "bvar", "bvar::Adder"),
        "rpc_handle": (7, "gauge", (), "bvar", "bvar::LatencyRecorder"),
        "replies": (8, "gauge", ("code", "method"), "bvar", "bvar::MultiDimension<Adder>"),
        "peak_inflight": (11, "gauge", (), "bvar", "bvar::Maxer"),
        "queue_depth": (16, "gauge", (), "bvar", "bvar::Status"),
    }
    by_name = {r.name: r for r in result.records}
    assert by_name["rpc_handle"].exposed_names == (
        "rpc_handle_count", "rpc_handle_latency", "rpc_handle_latency_80", "rpc_handle_latency_90",
        "rpc_handle_latency_99", "rpc_handle_latency_999", "rpc_handle_latency_9999", "rpc_handle_max_latency",
        "rpc_handle_qps")
    assert [(d.line, d.code) for d in result.diagnostics if d.code.startswith("metric-")] == [
        (12, "metric-name-unresolved")]


def test_bvar_names_are_written_as_brpc_writes_them():
    assert underscored("QueueDepth") == "queue_depth"
    assert underscored("HTTPServer.requests") == "httpserver_requests"
    assert underscored("a--b") == "a_b"
    assert exposed_name("Adder", "Rpc", "Count") == "rpc_count"
    assert exposed_name("Adder", "rpc_", "count") == "rpc_count"
    assert exposed_name("LatencyRecorder", "", "handle_latency") == "handle_"


def test_bvars_defined_through_the_systems_macros(tmp_path):
    (tmp_path / "metrics.h").write_text(
        '#pragma once\n#include <bvar/bvar.h>\n'
        '#define DEFINE_COUNTER(name, desc) bvar::Adder<double> COUNTER_##name(#name);\n'
        '#define DEFINE_MULTI(name, label, desc) \\\n'
        '  bvar::MultiDimension<bvar::LatencyRecorder> MULTI_##name(#name, {(label)});\n')
    (tmp_path / "metrics.cc").write_text(
        '#include "metrics.h"\nDEFINE_COUNTER(tokens_generated, "Tokens");\n'
        'DEFINE_MULTI(kv_cache_kilobytes,\n             "dp_rank",\n             "KV cache per rank");\n')
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    assert sorted((r.line, r.name, r.labels, r.via) for r in result.records) == [
        (2, "tokens_generated", (), "macro:DEFINE_COUNTER > bvar::Adder"),
        (3, "kv_cache_kilobytes", ("dp_rank",), "macro:DEFINE_MULTI > bvar::MultiDimension<LatencyRecorder>")]
