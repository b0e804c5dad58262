"""prometheus-cpp builder chains on the handwritten ``fixtures/triton_like/core`` files."""

from __future__ import annotations

import pytest

from extractor.cpp.parse import parse_source
from extractor.model import Language, ParsedFile
from extractor.telemetry.cpp_scan import scan_cpp_metrics
from extractor.telemetry.metrics import METRICS_STEP
from telemetry_support import build_context

from conftest import FIXTURES

CORE = ("core/src/metrics.cc", "core/src/metrics.h")


@pytest.fixture(scope="module")
def result():
    return build_context(FIXTURES / "triton_like", [METRICS_STEP], only=CORE).results["metrics"]


def test_every_builder_chain_and_nothing_else(result):
    assert sorted((r.name, r.type.value) for r in result.records) == [
        ("tl_energy_consumption_joules_total", "counter"),  # constexpr const char* constant
        ("tl_first_response_ms", "histogram"),
        ("tl_gpu_utilization", "gauge"),  # bare BuildGauge() after using namespace, #define name
        ("tl_pending_request_count", "gauge"),  # const std::string constant
        ("tl_queue_duration_us", "counter"),  # constant from the header
        ("tl_request_failure_total", "counter"),
        ("tl_request_success", "counter"),  # adjacent literals in Help
        ("tl_request_summary_us", "summary"),
    ]
    # the config builder's .Name("count") / .Name("INPUT0") are not metrics
    assert not {"count", "INPUT0"} & {r.name for r in result.records}


def test_help_labels_buckets_and_lines(result):
    records = {r.name: r for r in result.records}
    success = records["tl_request_success"]
    assert (success.help, success.line, success.path) == (
        "Requests that completed without error, counted once per request", 23, "core/src/metrics.cc")
    assert records["tl_queue_duration_us"].help == "Cumulative time requests spent queued, in microseconds"
    assert records["tl_request_failure_total"].labels == ("component",)
    histogram = records["tl_first_response_ms"]
    assert histogram.buckets == (1.0, 5.0, 10.0, 50.0, 100.0, 500.0) and histogram.buckets_resolved
    assert histogram.labels == ("model", "version")
    assert records["tl_gpu_utilization"].labels == ("gpu_uuid",)


def test_exposed_names_follow_prometheus_cpp(result):
    records = {r.name: r for r in result.records}
    # prometheus-cpp's text serializer writes a counter's name as given: no _total, no _created
    assert records["tl_request_success"].exposed_names == ("tl_request_success",)
    assert records["tl_first_response_ms"].exposed_names == (
        "tl_first_response_ms", "tl_first_response_ms_bucket", "tl_first_response_ms_count",
        "tl_first_response_ms_sum")
    assert records["tl_request_summary_us"].exposed_names == (
        "tl_request_summary_us", "tl_request_summary_us_count", "tl_request_summary_us_sum")
    assert records["tl_request_success"].lint == (
        "counter-without-total: prometheus-cpp exposes the name as given, no _total",)
    assert "non-base-unit: 'us' should be seconds" in records["tl_queue_duration_us"].lint


def test_runtime_name_is_a_diagnostic_not_a_record(result):
    assert [(d.path, d.line, d.code) for d in result.diagnostics] == [
        ("core/src/metrics.cc", 84, "metric-name-unresolved")]
    assert result.stats["cpp_chains"] == 9 and result.stats["cpp_unresolved"] == 1


def test_scanner_skips_files_without_builders():
    data = b'struct Config { Config& Name(const char*); };\nvoid f(Config c) { c.Name("count"); }\n'
    facts = scan_cpp_metrics(ParsedFile(Language.CPP, data, parse_source(data, Language.CPP)))
    assert facts is None or not facts.metrics


def test_builder_of_another_namespace_is_not_prometheus():
    data = b'void f() { auto& x = other::BuildCounter().Name("nope").Register(r); }\n'
    facts = scan_cpp_metrics(ParsedFile(Language.CPP, data, parse_source(data, Language.CPP)))
    assert facts is None or not facts.metrics


def test_ordinary_identifiers_are_not_resolved_from_other_files(tmp_path):
    (tmp_path / "a.cc").write_text(
        'void f() { std::string name = "not_a_metric"; }\n'
        'const std::string kGlobalName = "from_a";\n')
    (tmp_path / "b.cc").write_text(
        '#include "prometheus/registry.h"\n'
        'void g(const char* name, R& r) {\n'
        '  prometheus::BuildGauge().Name(name).Register(r);\n'
        '  prometheus::BuildGauge().Name(kGlobalName).Register(r);\n}\n')
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    assert [r.name for r in result.records] == ["from_a"]
    assert [(d.path, d.line) for d in result.diagnostics] == [("b.cc", 3)]


def test_names_built_from_a_constant_of_an_included_header(tmp_path):
    """ktransformers' kvc2 and scheduler: each defines METRIC_PREFIX in its own metrics.h and names
    its metrics `std::string(METRIC_PREFIX) + "_nodes"`; the header a file includes decides."""
    for part, prefix in (("kvc", "kv"), ("sched", "scheduler")):
        (tmp_path / part).mkdir()
        (tmp_path / part / "metrics.h").write_text(
            f'#pragma once\n#include <prometheus/registry.h>\n#define METRIC_PREFIX "{prefix}"\n'
            'constexpr char kSuffix[] = "_seconds";\n')
        (tmp_path / part / "metrics.cc").write_text(
            '#include "metrics.h"\n'
            'void Register(prometheus::Registry& r) {\n'
            '  prometheus::BuildCounter().Name(std::string(METRIC_PREFIX) + "_nodes").Help("Nodes").Register(r);\n'
            '  prometheus::BuildGauge().Name(std::string{METRIC_PREFIX} + "_wait" + kSuffix).Register(r);\n'
            '  prometheus::BuildGauge().Name(METRIC_PREFIX "_pages").Register(r);\n'
            '}\n')
    # a file that includes neither header: two values in the system, so none is chosen for it
    (tmp_path / "orphan.cc").write_text(
        '#include <prometheus/registry.h>\n'
        'void Orphan(prometheus::Registry& r) {\n'
        '  prometheus::BuildCounter().Name(std::string(METRIC_PREFIX) + "_lost").Register(r);\n}\n')
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    assert sorted((r.path, r.line, r.name) for r in result.records) == [
        ("kvc/metrics.cc", 3, "kv_nodes"), ("kvc/metrics.cc", 4, "kv_wait_seconds"), ("kvc/metrics.cc", 5, "kv_pages"),
        ("sched/metrics.cc", 3, "scheduler_nodes"), ("sched/metrics.cc", 4, "scheduler_wait_seconds"),
        ("sched/metrics.cc", 5, "scheduler_pages")]
    assert [(d.path, d.line, d.code) for d in result.diagnostics] == [("orphan.cc", 3, "metric-name-unresolved")]


# A server that writes its /metrics text itself, with no client library: literal families (one
# labelled, its help split over adjacent literals), one family whose samples are never literals,
# and a loop over a table of families whose `# TYPE` line is built at run time.
HANDWRITTEN = r'''
#include <sstream>
#include <string>
#include <vector>

struct Family { const char * name; const char * help; double value; };

std::string render(const std::vector<Family> & rows, const std::vector<double> & per_slot, double queued) {
    std::ostringstream out;
    for (const auto & row : rows) {
        out << "# HELP myserv_" << row.name << " " << row.help << "\n"
            << "# TYPE myserv_" << row.name << " gauge\n"
            << "myserv_" << row.name << " " << row.value << "\n";
    }
    out << "# HELP myserv_slot_tokens_total"
           " Tokens produced per slot\n"
        << "# TYPE myserv_slot_tokens_total counter\n";
    for (size_t i = 0; i < per_slot.size(); i++) {
        out << "myserv_slot_tokens_total{slot=\"" << i << "\",phase=\"" << "decode" << "\"} " << per_slot[i] << "\n";
    }
    out << "# HELP myserv_queue_depth Requests waiting\n# TYPE myserv_queue_depth gauge\n"
        << "myserv_queue_depth " << queued << "\n";
    out << "# TYPE myserv_build_seconds histogram\n";
    // "# TYPE not_in_a_literal counter" in a comment is no metric
    return out.str();
}
'''


def test_hand_written_exposition_text(tmp_path):
    (tmp_path / "server").mkdir()
    (tmp_path / "server" / "metrics_text.cpp").write_text(HANDWRITTEN)
    ctx = build_context(tmp_path, [METRICS_STEP])
    result = ctx.results["metrics"]
    assert {r.name: (r.type.value, r.labels, r.labels_resolved, r.help, r.library, r.via, r.path, r.line)
            for r in result.records} == {
        "myserv_slot_tokens_total": ("counter", ("phase", "slot"), True, "Tokens produced per slot",
                                     "text-exposition", "exposition-text", "server/metrics_text.cpp", 17),
        "myserv_queue_depth": ("gauge", (), True, "Requests waiting", "text-exposition", "exposition-text",
                               "server/metrics_text.cpp", 21),
        "myserv_build_seconds": ("histogram", (), False, "", "text-exposition", "exposition-text",
                                 "server/metrics_text.cpp", 23),
    }
    by_name = {r.name: r for r in result.records}
    assert by_name["myserv_slot_tokens_total"].exposed_names == ("myserv_slot_tokens_total",)  # as written
    assert by_name["myserv_build_seconds"].exposed_names == (
        "myserv_build_seconds", "myserv_build_seconds_bucket", "myserv_build_seconds_count", "myserv_build_seconds_sum")
    unresolved = [(d.path, d.line, d.code) for d in result.diagnostics if d.code == "metric-name-unresolved"]
    assert unresolved == [("server/metrics_text.cpp", 12, "metric-name-unresolved")]  # built at run time


TRITON_BACKEND = """#include "triton/core/tritonserver.h"
#include "names.h"

namespace backend {
TRITONSERVER_Error* Reporter::Init(TRITONSERVER_MetricKind kind, const char* name) {
  TRITONSERVER_MetricFamily* family = nullptr;
  RETURN_IF_ERROR(TRITONSERVER_MetricFamilyNew(
      &family, TRITONSERVER_METRIC_KIND_COUNTER, "backend_requests", "Requests the backend served"));
  TRITONSERVER_MetricFamilyNew(&latency_, TRITONSERVER_METRIC_KIND_HISTOGRAM, kLatencyMetricName, "Latency");
  ::TRITONSERVER_MetricFamilyNew(&family_, kind, "backend_any", "Its kind is the caller's");
  TRITONSERVER_MetricFamilyNew(&family_, TRITONSERVER_METRIC_KIND_GAUGE, name, "Its name is the caller's");
  TRITONSERVER_MetricNew(&metric_, family, labels.data(), labels.size());
  return nullptr;
}
}
"""


def test_metric_families_of_tritons_c_api(tmp_path):
    # a Triton backend's custom metrics (TensorRT-LLM's backend): the kind and the name are
    # arguments; the labels come with each TRITONSERVER_MetricNew
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "names.h").write_text(
        '#pragma once\nconstexpr char kLatencyMetricName[] = "backend_latency_us";\n')
    (tmp_path / "src" / "reporter.cc").write_text(TRITON_BACKEND)
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    assert {r.name: (r.type.value, r.line, r.help, r.library, r.labels_resolved, r.buckets_resolved)
            for r in result.records} == {
        "backend_requests": ("counter", 7, "Requests the backend served", "triton-c-api", False, True),
        "backend_latency_us": ("histogram", 9, "Latency", "triton-c-api", False, False),
    }
    by_name = {r.name: r for r in result.records}
    assert by_name["backend_requests"].exposed_names == ("backend_requests",)  # prometheus-cpp: as given
    assert "TRITONSERVER_MetricNew" in by_name["backend_requests"].unresolved
    said = sorted((d.line, d.code) for d in result.diagnostics if d.code.startswith("metric-"))
    assert said == [(10, "metric-type-unresolved"), (11, "metric-name-unresolved")]
