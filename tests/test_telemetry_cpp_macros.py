"""prometheus-cpp metrics defined through a system's own macros, which name each metric by an
identifier they stringify (extractor.telemetry.cpp_macros)."""

from __future__ import annotations

from extractor.telemetry.cpp_macros import MacroUse, macro_definitions, macro_uses
from extractor.telemetry.metrics import METRICS_STEP
from telemetry_support import build_context

# A registry singleton with helpers wrapping the builders, and macros over the helpers: a metric
# without labels, a family with instances whose labels go through __VA_ARGS__, a histogram whose
# buckets do.
METRICS_H = r'''#pragma once
#include <prometheus/counter.h>
#include <prometheus/registry.h>

namespace srv {
class Registry {
 public:
  static Registry& Get();
  prometheus::Family<prometheus::Counter>& MakeCounter(const std::string& name, const std::string& desc) {
    return prometheus::BuildCounter().Name(name).Help(desc).Register(registry_);
  }
  prometheus::Family<prometheus::Gauge>& MakeGauge(const std::string& name, const std::string& desc) {
    return prometheus::BuildGauge().Name(name).Help(desc).Register(registry_);
  }
  prometheus::Family<prometheus::Histogram>& MakeHistogram(const std::string& name, const std::string& desc) {
    return prometheus::BuildHistogram().Name(name).Help(desc).Register(registry_);
  }
 private:
  prometheus::Registry registry_;
};
}  // namespace srv

#define SRV_GAUGE(name, desc) \
  auto& GAUGE_##name = srv::Registry::Get().MakeGauge(#name, desc).Add({});
#define SRV_COUNTER_FAMILY(name, desc) \
  auto& name##_family = srv::Registry::Get().MakeCounter(#name, desc);
#define SRV_COUNTER_INSTANCE(alias, name, ...) \
  auto& COUNTER_##alias = name##_family.Add(__VA_ARGS__);
#define SRV_HISTOGRAM(name, desc, ...)                 \
  auto& HISTOGRAM_##name = srv::Registry::Get()        \
                               .MakeHistogram(#name, desc) \
                               .Add({}, __VA_ARGS__);
#define SRV_GAUGE_SET(name, value) GAUGE_##name.Set(value);
'''

SCHEDULER_CC = r'''#include "common/metrics.h"

SRV_GAUGE(num_waiting_requests, "Requests waiting in the queue");
SRV_COUNTER_FAMILY(request_status_total, "Requests by final status");
SRV_COUNTER_INSTANCE(request_ok, request_status_total, {{"code", "OK"}});
SRV_COUNTER_INSTANCE(request_cancelled,
                     request_status_total,
                     {{"code", "CANCELLED"}});
// SRV_GAUGE(commented_out, "not a metric");
SRV_HISTOGRAM(
    time_to_first_token_seconds,
    "Time to first token",
    std::vector<double>{0.01, 0.1, 1.0});

namespace srv {
void Scheduler::Step() {
  SRV_GAUGE_SET(num_waiting_requests, queue_.size());
}
}  // namespace srv
'''


def test_metrics_defined_by_macro_uses_at_namespace_scope(tmp_path):
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "metrics.h").write_text(METRICS_H)
    (tmp_path / "scheduler.cc").write_text(SCHEDULER_CC)
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    assert sorted((r.path, r.line, r.name, r.type.value, r.help, r.labels, r.buckets, r.via)
                  for r in result.records) == [
        ("scheduler.cc", 3, "num_waiting_requests", "gauge", "Requests waiting in the queue", (), (),
         "macro:SRV_GAUGE > helper:MakeGauge"),
        ("scheduler.cc", 4, "request_status_total", "counter", "Requests by final status", ("code",), (),
         "macro:SRV_COUNTER_FAMILY > helper:MakeCounter"),
        ("scheduler.cc", 10, "time_to_first_token_seconds", "histogram", "Time to first token", (),
         (0.01, 0.1, 1.0), "macro:SRV_HISTOGRAM > helper:MakeHistogram"),
    ]
    # every helper is reached: none is said to take a name no call passes
    assert not [d for d in result.diagnostics if d.code == "metric-name-unresolved"]


def test_a_macro_defined_two_ways_takes_the_included_definition_or_is_said_ambiguous(tmp_path):
    for part, helper in (("a", "MakeCounter"), ("b", "MakeOther")):
        (tmp_path / part).mkdir()
        (tmp_path / part / "metrics.h").write_text(
            METRICS_H.replace("#define SRV_COUNTER_FAMILY(name, desc) \\\n  auto& name##_family = "
                              "srv::Registry::Get().MakeCounter(",
                              f"#define SRV_COUNTER_FAMILY(name, desc) \\\n  auto& name##_family = "
                              f"srv::Registry::Get().{helper}("))
    (tmp_path / "a" / "use.cc").write_text('#include "metrics.h"\nSRV_COUNTER_FAMILY(a_total, "A");\n')
    (tmp_path / "orphan.cc").write_text('#include <metrics_elsewhere.h>\nSRV_COUNTER_FAMILY(lost_total, "L");\n')
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    assert [(r.path, r.name) for r in result.records] == [("a/use.cc", "a_total")]
    assert [(d.path, d.line, d.code) for d in result.diagnostics if d.code.startswith("metric-macro")] == [
        ("orphan.cc", 2, "metric-macro-ambiguous")]


def test_a_helpers_family_takes_the_labels_and_buckets_added_where_it_is_called(tmp_path):
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "metrics.h").write_text(METRICS_H)
    (tmp_path / "server.cc").write_text(
        '#include "common/metrics.h"\n'
        'void Init() {\n'
        '  auto& family = srv::Registry::Get().MakeCounter("rpc_total", "RPCs");\n'
        '  family.Add({{"method", "Get"}});\n'
        '  family.Add({{"method", "Put"}, {"peer", "x"}});\n'
        '  srv::Registry::Get().MakeHistogram("rpc_seconds", "RPC time").Add({}, {0.5, 2.0});\n'
        '}\n')
    result = build_context(tmp_path, [METRICS_STEP]).results["metrics"]
    assert sorted((r.name, r.labels, r.buckets) for r in result.records) == [
        ("rpc_seconds", (), (0.5, 2.0)), ("rpc_total", ("method", "peer"), ())]


def test_macro_definitions_and_uses_are_read_as_the_preprocessor_reads_them():
    assert [(d.name, d.line, d.params) for d in macro_definitions(METRICS_H)] == [
        ("SRV_GAUGE", 23, ("name", "desc")), ("SRV_COUNTER_FAMILY", 25, ("name", "desc")),
        ("SRV_COUNTER_INSTANCE", 27, ("alias", "name", "__VA_ARGS__")),
        ("SRV_HISTOGRAM", 29, ("name", "desc", "__VA_ARGS__")), ("SRV_GAUGE_SET", 33, ("name", "value"))]
    uses = macro_uses(SCHEDULER_CC)
    # braces do not group for the preprocessor: {{"code", "OK"}} is two arguments; the use inside
    # a function body and the one in a comment are not read
    assert uses[2] == MacroUse("SRV_COUNTER_INSTANCE", 5, ("request_ok", "request_status_total", '{{"code"', '"OK"}}'))
    assert [(u.name, u.line) for u in uses] == [
        ("SRV_GAUGE", 3), ("SRV_COUNTER_FAMILY", 4), ("SRV_COUNTER_INSTANCE", 5), ("SRV_COUNTER_INSTANCE", 6),
        ("SRV_HISTOGRAM", 10)]
