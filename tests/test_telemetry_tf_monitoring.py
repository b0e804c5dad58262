"""TensorFlow's monitoring metrics (``monitoring::Counter<N>::New(...)``, ``Gauge<T, N>``, ``Sampler<N>``),
in the shapes TensorFlow Serving uses, and the names its Prometheus exporter writes for them.

A metric's name is a path (``/serving/request_count``); the exporter turns every character but
``[a-zA-Z0-9_]`` into ``:``. A Sampler takes its name, help and labels in braces and its buckets
next (``Buckets::Exponential(scale, growth, count)``, ``Buckets::Explicit({...})``). A small
handwritten server in those shapes.
"""

from __future__ import annotations

from extractor.model import to_jsonable
from extractor.telemetry.metrics import METRICS_STEP
from telemetry_support import build_context

HEADER = """\
#pragma once
// names of the server's metrics
namespace serving {
constexpr char kLoadCount[] = "/serving/model_load_count";
}  // namespace serving
"""

UTIL = """\
#include "serving/names.h"
#include "tensorflow/core/lib/monitoring/counter.h"
#include "tensorflow/core/lib/monitoring/sampler.h"

namespace serving {
namespace {

auto* request_count = monitoring::Counter<2>::New(
    "/serving/request_count", "The total number of requests.",
    "model_name", "status");

auto* request_latency = tensorflow::monitoring::Sampler<2>::New(
    {"/serving/request_latency",
     "Wall time of a request (us).", "model_name",
     "API"},  // scale 10, growth 1.8
    monitoring::Buckets::Exponential(10, 1.8, 4));

auto* batch_size = monitoring::Sampler<0>::New(
    {"/serving/batch_size", "Batch sizes."},
    monitoring::Buckets::Explicit({1, 2, 8}));

auto* uuid = monitoring::Gauge<std::string, 1>::New(
    "/serving/model-uuid", "UUID of a model.", "model_name");

auto* loads = Counter<0>::New(kLoadCount, "Loads.");

auto* first = monitoring::Counter<0>::New("0/first", "Starts with a digit.");

auto* spread = monitoring::Sampler<1>::New({"/serving/spread", "Spread.", "model"}, MakeBuckets());

auto* percentiles = monitoring::PercentileSampler<0>::New(
    {"/serving/percentiles", "Percentiles."}, {50.0, 99.0}, 1024, monitoring::UnitOfMeasure::kTime);

}  // namespace

template <typename Task>
void RecordPadding(int padding) {
  static auto* cell = monitoring::Sampler<0>::New(
      {absl::StrCat("/serving/", Task::Name(), "/padding"), "Padding."},
      monitoring::Buckets::Exponential(1, 2, 3));
  cell->GetCell()->Add(padding);
}

auto* named = monitoring::Counter<0>::New(MakeName(), "Named at run time.");

}  // namespace serving
"""

# a class template of the system's own named Counter, in a file that includes no monitoring header
OTHER = """\
namespace stats {
auto* hits = Counter<1>::New("/not/a/tf/metric", "help", "x");
}
"""


def _result(tmp_path):
    (tmp_path / "serving").mkdir()
    (tmp_path / "serving" / "names.h").write_text(HEADER)
    (tmp_path / "serving" / "util.cc").write_text(UTIL)
    (tmp_path / "stats.cc").write_text(OTHER)
    return build_context(tmp_path, [METRICS_STEP]).results["metrics"]


def test_metrics_and_the_names_the_exporter_writes(tmp_path):
    result = _result(tmp_path)
    found = {r["name"]: r for r in (to_jsonable(record) for record in result.records)}
    assert sorted(found) == ["/serving/batch_size", "/serving/model-uuid", "/serving/model_load_count",
                             "/serving/request_count", "/serving/request_latency", "/serving/spread",
                             "/serving/{}/padding", "0/first"]
    count = found["/serving/request_count"]
    assert (count["path"], count["line"], count["type"], count["library"], count["labels"]) == \
        ("serving/util.cc", 8, "counter", "tensorflow-monitoring", ["model_name", "status"])
    assert count["help"] == "The total number of requests."
    assert count["exposed_names"] == [":serving:request_count"]  # no _total
    latency = found["/serving/request_latency"]
    assert (latency["type"], latency["labels"]) == ("histogram", ["API", "model_name"])
    assert latency["buckets"] == [10.0, 18.0, 32.4, 58.32]  # each the last times 1.8
    assert latency["exposed_names"] == [":serving:request_latency", ":serving:request_latency_bucket",
                                        ":serving:request_latency_count", ":serving:request_latency_sum"]
    assert found["/serving/batch_size"]["buckets"] == [1.0, 2.0, 8.0]
    uuid = found["/serving/model-uuid"]
    assert (uuid["type"], uuid["exposed_names"]) == ("gauge", [":serving:model:uuid"])
    # a constant of an included header; a bare Counter in a file that includes the library's header
    assert found["/serving/model_load_count"]["line"] == 25
    assert found["0/first"]["exposed_names"] == ["_0:first"]


def test_what_is_not_known_is_said(tmp_path):
    result = _result(tmp_path)
    found = {r["name"]: r for r in (to_jsonable(record) for record in result.records)}
    spread = found["/serving/spread"]
    assert not spread["buckets_resolved"] and "MakeBuckets()" in spread["unresolved"]
    said = sorted((d.path, d.line, d.code) for d in result.diagnostics if d.code.startswith("metric-"))
    assert said == [("serving/util.cc", 31, "metric-not-modeled"), ("serving/util.cc", 44, "metric-name-unresolved")]
    # a name absl::StrCat builds from a value of the run: a pattern, its series with it
    padding = found["/serving/{}/padding"]
    assert (padding["line"], padding["type"], padding["dynamic"], padding["buckets"]) == (38, "histogram", True,
                                                                                         [1.0, 2.0, 4.0])
    assert padding["exposed_names"] == [":serving:{}:padding", ":serving:{}:padding_bucket",
                                        ":serving:{}:padding_count", ":serving:{}:padding_sum"]
    assert padding["unresolved"] == ('name: Task::Name() in absl::StrCat("/serving/", Task::Name(), "/padding") is '
                                     "no literal nor a constant of the analysed files")
