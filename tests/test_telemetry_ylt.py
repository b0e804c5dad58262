"""yalantinglibs' metrics (``ylt::metric``), in the shapes Mooncake's store and transfer engine use.

A ylt metric is an object made with its name and help: a class member whose constructor's
initializer list names it (the constructor often in a ``.cpp``, the member's type in the header), a
member given its arguments in braces where it is declared, a ``std::make_shared<T>(...)``. The
kinds with labels take their names as an array (after a map of static labels in the "hybrid" form
a system may define itself); a histogram its bounds. A small handwritten store in those shapes.
"""

from __future__ import annotations

from extractor.model import to_jsonable
from extractor.telemetry.metrics import METRICS_STEP
from telemetry_support import build_context

HEADER = """\
#pragma once
#include <array>
#include <map>
#include "ylt/metric/counter.hpp"
#include "ylt/metric/histogram.hpp"

namespace store {

const std::vector<double> kLatencyBucket = {
    // sub-ms
    100, 500,
    1000};  // 1 ms

struct StoreMetric {
    StoreMetric(std::map<std::string, std::string> labels = {});

    ylt::metric::counter_t reads_;
    ylt::metric::gauge_t keys_;
    ylt::metric::histogram_t put_latency_;
    ylt::metric::dynamic_gauge_1t per_segment_;
    ylt::metric::counter_t orphan_;
    std::string name_;
};

struct ClientMetric {
    std::array<std::string, 1> rpc_names = {"rpc_name"};

    ClientMetric()
        : get_latency_("client_get_latency_us", "Get latency (us)", kLatencyBucket),
          rpc_count_("client_rpc_count", "RPCs made", {{"role", "client"}}, rpc_names) {}

    ylt::metric::histogram_t get_latency_;
    ylt::metric::hybrid_counter_1t rpc_count_;
};

struct TransferMetric {
    static inline const std::array<std::string, 1> kTransport{"transport"};
    static inline const std::array<std::string, 2> kFailover{"from", "to"};

    ylt::metric::basic_dynamic_counter<int64_t, 1> bytes_{"transfer_bytes_total", "Bytes moved", kTransport};
    ylt::metric::basic_dynamic_counter<int64_t, 2> failovers_{
        "transfer_failover_total", "Failovers", kFailover};
#ifdef WITH_LATENCY
    ylt::metric::basic_dynamic_histogram<int64_t, 1> latency_{
        "transfer_latency_us", "Latency", std::vector<double>{1, 10}, kTransport};
#endif
    ylt::metric::gauge_t computed_{name_of("queue"), "Queue depth"};
};

}  // namespace store
"""

SOURCE = """\
#include "store_metric.h"

namespace store {

StoreMetric::StoreMetric(std::map<std::string, std::string> labels)
    : reads_("store_read_bytes", "Bytes read"),
      keys_("store_key_count", "Keys held", labels),
      put_latency_("store_put_latency_us", "Put latency (us)", kLatencyBucket),
      per_segment_("segment_allocated_bytes", "Bytes allocated of the segment", {"segment"}),
      orphan_(make_name(), "Not a literal"),
      name_("store_metric") {}

std::shared_ptr<ylt::metric::summary_t> rpc_summary() {
    return std::make_shared<ylt::metric::summary_t>("rpc_latency", "RPC latency",
                                                    std::vector<double>{0.5, 0.9, 0.99});
}

}  // namespace store
"""


def _result(tmp_path):
    (tmp_path / "store_metric.h").write_text(HEADER)
    (tmp_path / "store_metric.cpp").write_text(SOURCE)
    return build_context(tmp_path, [METRICS_STEP]).results["metrics"]


def test_members_named_by_their_constructors_and_their_braces(tmp_path):
    result = _result(tmp_path)
    found = {r["name"]: r for r in (to_jsonable(record) for record in result.records)}
    assert sorted(found) == ["client_get_latency_us", "client_rpc_count", "rpc_latency", "segment_allocated_bytes",
                             "store_key_count", "store_put_latency_us", "store_read_bytes", "transfer_bytes_total",
                             "transfer_failover_total", "transfer_latency_us"]
    # where the name is given: the initializer in the .cpp, whose member the header types
    reads = found["store_read_bytes"]
    assert (reads["path"], reads["line"], reads["type"], reads["library"]) == \
        ("store_metric.cpp", 6, "counter", "yalantinglibs")
    assert reads["exposed_names"] == ["store_read_bytes"]  # ylt appends no _total
    assert any(f.startswith("counter-without-total") for f in reads["lint"])
    assert (found["store_key_count"]["type"], found["store_key_count"]["help"]) == ("gauge", "Keys held")
    assert found["segment_allocated_bytes"]["labels"] == ["segment"]
    assert found["transfer_failover_total"]["labels"] == ["from", "to"]
    assert found["transfer_bytes_total"]["labels"] == ["transport"]
    latency = found["transfer_latency_us"]
    assert (latency["type"], latency["buckets"], latency["labels"]) == ("histogram", [1.0, 10.0], ["transport"])
    assert latency["exposed_names"] == ["transfer_latency_us_bucket", "transfer_latency_us_sum",
                                        "transfer_latency_us_count"]
    # the hybrid form: a map of static labels, then the array of the dynamic ones (a member of the class)
    assert found["client_rpc_count"]["labels"] == ["role", "rpc_name"]
    assert found["client_get_latency_us"]["buckets"] == [100.0, 500.0, 1000.0]
    summary = found["rpc_latency"]
    assert (summary["type"], summary["quantiles"]) == ("summary", [0.5, 0.9, 0.99])


def test_what_is_not_known_is_said(tmp_path):
    result = _result(tmp_path)
    found = {r["name"]: r for r in (to_jsonable(record) for record in result.records)}
    # a map of static labels handed in by the caller: its names are not known
    keys = found["store_key_count"]
    assert not keys["labels_resolved"] and keys["unresolved"].startswith("labels: labels")
    # bounds named by a constant of another file
    put = found["store_put_latency_us"]
    assert not put["buckets_resolved"] and "kLatencyBucket" in put["unresolved"]
    said = sorted((d.path, d.line, d.message) for d in result.diagnostics if d.code == "metric-name-unresolved")
    assert said == [
        ("store_metric.h", 21, "ylt::metric::counter_t member StoreMetric::orphan_: no constructor's initializer "
                               "list of the analysed files names it"),
        ("store_metric.h", 47, "ylt::metric::gauge_t name 'name_of(\"queue\")' is not a literal or a constant of "
                               "the analysed files")]
    assert not [d for d in result.diagnostics if d.code == "metric-library-not-modeled"]
