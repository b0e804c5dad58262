"""The telemetry kind on evidence the full pipeline extracts at test time from fixtures/telemetry_ops
(own metrics through class attributes with Ray twins, prometheus-fastapi-instrumentator, a chart with
recording rules, alerts, KEDA and a Grafana ConfigMap), from its next release (make_telemetry_ops_v2)
and from fixtures/fastapi_service; then rules on handwritten records."""

from __future__ import annotations

import pytest

from comparator.compare import compare_evidence
from comparator.kinds.telemetry import KIND, diff_thresholds, summarize_telemetry
from comparator.registry import KINDS
from comparator.render_html import render_html
from comparator.render_markdown import render_markdown
from extractor.context import ExtractOptions
from extractor.evidence.read import evidence_from_json
from extractor.run.pipeline import extract_system
from extractor.telemetry.records import METRICS, THRESHOLDS
from tests.compare_support import ROOT, evidence, make_telemetry_ops_v2, metric, threshold

INSTRUMENTATOR = "prometheus-fastapi-instrumentator"


def _extract(path, name, version, cache):
    return evidence_from_json(extract_system([str(path)], name=name, version=version,
                                             options=ExtractOptions(jobs=1, cache_dir=cache)).bundle)


@pytest.fixture(scope="module")
def ops(tmp_path_factory):
    """(release 1, release 2, the fastapi_service fixture) as evidence."""
    tmp = tmp_path_factory.mktemp("ops")
    cache = tmp / "cache"
    v1 = _extract(ROOT / "fixtures" / "telemetry_ops", "telemetry_ops", "1", cache)
    v2 = _extract(make_telemetry_ops_v2(tmp), "telemetry_ops", "2", cache)
    svc = _extract(ROOT / "fixtures" / "fastapi_service", "svc", "1", cache)
    return v1, v2, svc


@pytest.fixture(scope="module")
def systems(ops):
    v1, _v2, svc = ops
    return compare_evidence(v1, svc)


@pytest.fixture(scope="module")
def release(ops):
    v1, v2, _svc = ops
    return compare_evidence(v1, v2)


def test_library_series_stand_apart_by_library_and_are_never_paired(systems):
    tele = systems["telemetry"]
    by_lib = {r["origin"]: r for r in tele["libraries"]}
    # the instrumentator's five HTTP series for opsvc; fastapi_service configures a namespace and
    # the in-progress gauge, so its six share no name with them
    assert (by_lib[INSTRUMENTATOR]["a"], by_lib[INSTRUMENTATOR]["b"], by_lib[INSTRUMENTATOR]["shared"]) == (5, 6, [])
    assert by_lib["prometheus_client"]["shared"][:2] == ["process_cpu_seconds", "process_max_fds"]
    http = {m["name"]: m for m in tele["a"]["library_metrics"]}["http_request_duration_seconds"]
    assert (http["origin"], http["via"], http["path"], http["line"]) == \
        (INSTRUMENTATOR, "builder:Instrumentator.instrument", "opsvc/api.py", 11)
    library = {m["name"] for side in ("a", "b") for m in tele[side]["library_metrics"]}
    paired = {r[side]["name"] for r in tele["crosswalk"] for side in ("a", "b")}
    assert not paired & library
    assert not {m["name"] for side in ("a", "b") for m in tele[side]["metrics"]} & library


def test_a_ray_twin_counts_once_with_its_metric(systems):
    a = systems["telemetry"]["a"]
    assert a["own_names"] == 6 and len(a["metrics"]) == 6  # each site once, not once per client library
    assert a["twins_by_library"] == {"ray": 6}
    requests = {m["name"]: m for m in a["metrics"]}["opsvc:requests"]
    assert (requests["library"], requests["via"], requests["twins"]) == \
        ("prometheus_client", "class-attr:StatLogger._counter_cls", ["ray"])
    twin = {t["name"]: t for t in a["twins"]}["opsvc:requests_total"]
    assert twin["twin_of"]["name"] == "opsvc:requests"
    assert twin["via"] == "class-attr:RayStatLogger._counter_cls > factory:opsvc.ray_wrappers.RayCounter"
    # systems mode counts own metric names only: 6 opsvc against svc's 2 own
    assert systems["telemetry"]["b"]["own_names"] == 2
    assert KIND.count(KIND.read_section(systems), None).any == 8


def test_thresholds_say_what_they_read_through_which_rules_or_why_nothing(systems):
    rows = {t["name"]: t for t in systems["telemetry"]["a"]["thresholds"]}
    slow = rows["OpsvcSlow"]
    assert slow["linked"] == [{"name": "opsvc:request_latency_seconds", "provenance": "own", "origin": ""}]
    assert slow["recorded_through"] == ["opsvc:request_latency_seconds:mean5m"]
    assert rows["HTTP p99"]["linked"] == [{"name": "http_request_duration_seconds", "provenance": "library",
                                           "origin": INSTRUMENTATOR}]
    down = rows["OpsvcDown"]
    assert not down["reads_defined_metric"] and down["unlinked"] == "reads only series Prometheus writes itself: up"
    assert systems["telemetry"]["a"]["unlinked_thresholds"] == 1


def test_unresolved_names_are_listed_with_their_reason(systems):
    assert [(u["name"], u["reason"], u["path"], u["line"]) for u in systems["telemetry"]["a"]["unresolved"]] == \
        [("opsvc:worker_{worker_id}_busy", "parameter worker_id", "opsvc/stats.py", 38)]


def test_release_names_the_thresholds_that_stop_working(release):
    rows = [(o["name"], o["missing"], o["reads"], o["renamed_to"]) for o in release["release"]["orphaned_thresholds"]]
    assert rows == [
        ("opsvc:tokens:rate5m", ["opsvc:tokens_total"], "direct", {}),
        ("OpsvcNoTokens", ["opsvc:tokens_total"], "recorded", {}),  # behind the recording rule
        ("opsvc[0]", ["opsvc:kv_usage_ratio"], "direct", {"opsvc:kv_usage_ratio": "opsvc:kv_cache_usage_ratio"}),
    ]
    assert release["takeaways"][1]["text"].startswith(
        "3 thresholds read a metric that telemetry_ops 2 no longer exposes (1 of them because the metric was renamed)")


def test_release_metric_changes_count_a_twin_once(release):
    me = release["release"]["metrics"]
    # opsvc:tokens goes with its Ray twin opsvc:tokens_total: one removal
    assert [(r["name"], r["origin"]) for r in me["removed"]] == [("opsvc:tokens", "")]
    assert [(r["from"]["name"], r["to"]["name"]) for r in me["renamed"]] == \
        [("opsvc:kv_usage_ratio", "opsvc:kv_cache_usage_ratio")]
    assert me["added"] == []
    assert [(r["name"], r["removed"], r["breaking"]) for r in me["twins_changed"]] == \
        [("opsvc:request_latency_seconds", ["ray"], True)]


def test_release_thresholds_added_and_changed(release):
    th = release["release"]["thresholds"]
    assert [(t["name"], t["op"], t["value"]) for t in th["added"]] == [("OpsvcQueueFull", ">", 64.0)]
    assert [(t["name"], t["changes"]) for t in th["changed"]] == [("OpsvcSlow", ["value 2 → 3"])]
    assert th["removed"] == []
    # 8 telemetry rows (6 breaking) and the api kind's 2 breaking ones: StatLogger.tokens removed,
    # and with it the member RayStatLogger inherited
    assert release["differences"] == {"any": 10, "breaking": 8}


def test_release_report_shows_orphaned_thresholds_before_metric_changes(release):
    md = render_markdown(release, KINDS)
    gone, metrics = md.index("### Thresholds reading a metric that is gone"), md.index("### Metrics\n")
    assert gone < metrics
    assert ("| opsvc\\[0\\] | keda | target 0.8 | opsvc:kv\\_usage\\_ratio | in its expression; renamed: "
            "opsvc:kv\\_usage\\_ratio → opsvc:kv\\_cache\\_usage\\_ratio | deploy/chart/templates/scaledobject.yaml:9 |") in md
    assert "| opsvc:request\\_latency\\_seconds | own | no longer exposed through ray | yes | opsvc/stats.py:27 |" in md
    page = render_html(release, KINDS)
    assert page.index('id=release-thresholds') < page.index('id=release-metrics') < page.index(
        'id=release-threshold-changes')
    assert "behind opsvc:request_latency_seconds:mean5m" in page


def test_systems_report_lists_library_series_and_unlinked_thresholds(systems):
    md = render_markdown(systems, KINDS)
    assert "| exposed again through ray (twins) | 6 | 0 |" in md
    assert f"| {INSTRUMENTATOR} | 5 | 6 | — |" in md
    assert ("| OpsvcDown | prometheus-rule | == 0 | reads only series Prometheus writes itself: up | "
            "deploy/chart/templates/prometheusrule.yaml:32 |") in md
    assert "| opsvc:worker\\_{worker\\_id}\\_busy | parameter worker\\_id | opsvc/stats.py:38 |" in md


# ---------------------------------------------------------------- rules on handwritten records


def _tele(metrics=(), thresholds=()):
    ev = evidence(metrics=metrics, thresholds=thresholds)
    return summarize_telemetry(ev.of(METRICS), ev.of(THRESHOLDS))


@pytest.mark.parametrize("old,new,expected", [
    # a panel renamed in place (same file, line, comparison) is one threshold changed
    ([threshold(["a_seconds_sum"], name="Old title", op=">=", value=80.0)],
     [threshold(["b_seconds_sum"], name="New title", op=">=", value=80.0)],
     {"changed": [("New title", ["renamed from Old title", "reads: +b_seconds_sum, -a_seconds_sum"])]}),
    # two steps of one panel: only the step whose value moved changes
    ([threshold(["q"], name="Queue", value=16.0), threshold(["q"], name="Queue", value=64.0)],
     [threshold(["q"], name="Queue", value=16.0), threshold(["q"], name="Queue", value=32.0)],
     {"changed": [("Queue", ["value 64 → 32"])]}),
    # the same alert in another file: moved, nothing else
    ([threshold(["q"], name="Q", path="old.yaml")], [threshold(["q"], name="Q", path="new.yaml")],
     {"changed": [("Q", ["moved from old.yaml:3"])]}),
    ([threshold(["q"], name="Q")], [], {"removed": [("Q", None)]}),
])
def test_threshold_diff_rules(old, new, expected):
    got = diff_thresholds(_tele(thresholds=old), _tele(thresholds=new))
    rows = {"changed": [(t.name, list(t.changes)) for t in got.changed],
            "removed": [(t.name, None) for t in got.removed],
            "added": [(t.name, None) for t in got.added]}
    assert rows == {"changed": [], "removed": [], "added": [], **expected}


def test_a_twin_added_with_its_metric_is_one_added_metric():
    own = metric("svc:hits", "counter", path="s.py", line=4, library="prometheus_client",
                 exposed=["svc:hits_total"])
    twin = metric("svc:hits_total", "counter", path="s.py", line=4, library="ray", exposed=["ray_svc:hits_total"])
    old = evidence("svc", "1")
    new = evidence("svc", "2", metrics=[own, twin])
    me = compare_evidence(old, new)["release"]["metrics"]
    assert [(r["name"], r["twins"]) for r in me["added"]] == [("svc:hits", ["ray"])]
    assert me["twins_changed"] == []


def test_metrics_of_tests_and_examples_stand_apart_from_the_systems_own(tmp_path):
    """A metric a test defines (the layers set tests/ apart) is listed apart: not one of the
    system's own, never paired, and a release that adds it changes no metric."""
    import shutil

    tree = tmp_path / "svc"
    shutil.copytree(ROOT / "fixtures" / "fastapi_service", tree)
    before = _extract(tree, "svc", "1", tmp_path / "cache")
    (tree / "tests").mkdir()
    (tree / "tests" / "test_load.py").write_text(
        'from prometheus_client import Counter\n\n'
        'SENT = Counter("svc_load_test_requests", "Requests the load test sent")\n')
    after = _extract(tree, "svc", "2", tmp_path / "cache")
    side = KIND.summarize(after)
    assert [(m.name, m.type, m.path, m.line) for m in side.apart_metrics] == [
        ("svc_load_test_requests", "counter", "tests/test_load.py", 3)]
    assert side.apart_by_layer == {"Tests, examples & benchmarks": 1}
    assert "svc_load_test_requests" not in {m.name for m in side.metrics}
    assert side.own_names == KIND.summarize(before).own_names
    assert compare_evidence(before, after)["release"]["metrics"]["added"] == []
    other = _extract(tree, "other", "1", tmp_path / "cache")  # another system: the systems' report
    report = render_markdown(compare_evidence(before, other), KINDS)
    assert "1 more in tests, examples &amp; benchmarks, set apart" in report
    assert "| metrics in tests, examples &amp; benchmarks (apart) | 0 | 1 |" in report


def test_names_left_unresolved_in_tests_stand_apart_from_the_systems_own(tmp_path):
    """A metric name a test builds at run time is listed apart from the names the system's own code
    leaves unresolved (Triton's metrics API test: 16 families whose kind is a parameter, which the
    report counted among Triton's own unresolved names, 22 where its own code has 5)."""
    import shutil

    tree = tmp_path / "svc"
    shutil.copytree(ROOT / "fixtures" / "fastapi_service", tree)
    (tree / "tests").mkdir()
    (tree / "tests" / "test_names.py").write_text(
        'import os\n\nfrom prometheus_client import Counter, Gauge\n\n'
        'SENT = Counter(os.environ["METRIC"], "Requests the load test sent")\n\n\n'
        'def per_worker(worker):\n    return Gauge(f"svc_worker_{worker}_busy", "Busy")\n')
    (tree / "svc_names.py").write_text(
        'from prometheus_client import Counter\n\n\n'
        'def per_route(route):\n    return Counter(f"svc_{route}_hits", "Hits of one route")\n')
    system = _extract(tree, "svc", "2", tmp_path / "cache")
    side = KIND.summarize(system)
    assert [(u.path, u.line, u.kind) for u in side.unresolved] == [("svc_names.py", 5, "pattern")]
    assert [(u.path, u.line, u.kind) for u in side.unresolved_apart] == [
        ("tests/test_names.py", 5, "name-unresolved"), ("tests/test_names.py", 9, "pattern")]
    other = _extract(tmp_path / "svc", "other", "1", tmp_path / "cache")
    report = render_markdown(compare_evidence(system, other), KINDS)
    assert "| unresolved metric names or types | 1 | 1 |" in report
    assert "| unresolved in modules set apart | 2 | 2 |" in report
    assert "tests/test\\_names.py line 5" in report
