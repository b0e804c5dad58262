"""Findings rules on handwritten miniature evidence: each case states the shape and what must follow."""

from __future__ import annotations

import dataclasses

import pytest

from comparator.compare import compare_evidence
from comparator.kinds.structs import struct_segments
from comparator.kinds.telemetry import summarize_telemetry
from comparator.kinds.telemetry.crosswalk import crosswalk_metrics, metric_concept
from comparator.registry import KINDS
from extractor.model import Edge, EdgeKind, Node, NodeKind
from extractor.telemetry.records import METRICS, THRESHOLDS
from tests.compare_support import evidence, layer as _layer, metric, struct, threshold


def bundle(name="sys", version="1", **records):
    return evidence(name, version, **records)


def tele(**records):
    ev = bundle(**records)
    return summarize_telemetry(ev.of(METRICS), ev.of(THRESHOLDS))


def test_empty_bundles_give_sections_with_reasons_not_crashes():
    f = compare_evidence(bundle("a"), bundle("b"))
    assert f["mode"] == "systems"
    assert f["layers"]["rows"] == [] and "no layer records" in f["layers"]["empty_reason"]["a"]
    assert "no struct layouts" in f["structs"]["totals"]["b"]["empty_reason"]
    assert "no metric definitions" in f["telemetry"]["a"]["empty_reason"]
    assert f["telemetry"]["crosswalk"] == []
    assert any("Neither evidence bundle carries layer records" in t["text"] for t in f["takeaways"])


def test_crosswalk_pairs_queue_time_in_seconds_with_one_in_microseconds():
    a = tele(metrics=[metric("vllm:request_queue_time_seconds", "histogram"),
                                            metric("vllm:num_requests_running", "gauge"),
                                            metric("vllm:request_success", "counter")])
    b = tele(metrics=[metric("nv_inference_queue_duration_us", "counter", path="m.cc", line=9),
                                            metric("nv_inference_request_success", "counter", path="m.cc", line=4),
                                            metric("nv_gpu_power_usage", "gauge")])
    rows = {(r.a.name, r.b.name): r for r in crosswalk_metrics(a, b)}
    queue = rows[("vllm:request_queue_time_seconds", "nv_inference_queue_duration_us")]
    assert queue.dimension == "time" and queue.unit_note == "units differ: 1 seconds = 1e+06 us"
    assert queue.b.path == "m.cc" and queue.b.line == 9
    assert ("vllm:request_success", "nv_inference_request_success") in rows
    # running requests and GPU power share no concept: never paired
    assert not any(k[0] == "vllm:num_requests_running" for k in rows)


def test_units_of_another_dimension_are_never_paired():
    assert metric_concept("x_cache_bytes", "", "")[1] == "bytes"
    a = tele(metrics=[metric("x_cache_usage_bytes", "gauge")])
    b = tele(metrics=[metric("y_cache_usage_seconds", "gauge")])
    assert crosswalk_metrics(a, b) == ()


def test_thresholds_attach_to_the_metrics_they_read():
    t = tele(metrics=[metric("q_total", exposed=["q_total"]), metric("idle", "gauge")],
                                   thresholds=[threshold(["q_total"]), threshold(["unknown_metric"], name="x")])
    by_name = {m.name: m for m in t.metrics}
    assert [x.name for x in by_name["q_total"].thresholds] == ["alert"]
    assert t.without_threshold == ("idle",)
    assert t.unlinked_thresholds == 1


def test_release_metric_rename_retype_removal_and_orphaned_threshold():
    old = bundle("svc", "1", metrics=[metric("svc_queue_time_seconds", "histogram"), metric("svc_hits", "counter"),
                                      metric("svc_load", "gauge"), metric("svc_gone", "gauge", line=7)],
                 thresholds=[threshold(["svc_gone"], name="GoneHigh", line=12)])
    new = bundle("svc", "2", metrics=[metric("svc_queue_times_seconds", "histogram"), metric("svc_hits", "gauge"),
                                      metric("svc_load", "gauge")],
                 thresholds=[threshold(["svc_gone"], name="GoneHigh", line=12)])
    r = compare_evidence(old, new)["release"]
    assert [(x["from"]["name"], x["to"]["name"]) for x in r["metrics"]["renamed"]] == \
        [("svc_queue_time_seconds", "svc_queue_times_seconds")]
    assert [(x["name"], x["old_type"], x["new_type"]) for x in r["metrics"]["retyped"]] == [("svc_hits", "counter", "gauge")]
    assert [x["name"] for x in r["metrics"]["removed"]] == ["svc_gone"]
    assert r["metrics"]["added"] == []
    assert [(x["name"], x["missing"], x["line"]) for x in r["orphaned_thresholds"]] == [("GoneHigh", ["svc_gone"], 12)]
    assert all(x["breaking"] for x in r["metrics"]["renamed"] + r["metrics"]["retyped"] + r["orphaned_thresholds"])


@pytest.mark.parametrize("new_members,new_size,breaking", [
    # a member moved: every consumer compiled against the old layout reads the wrong bytes
    ([("a", "int", 0, 4), ("b", "long", 16, 8)], 24, True),
    # a member added inside the tail padding: offsets and size unchanged
    ([("a", "int", 0, 4), ("b", "long", 8, 8), ("c", "int", 16, 4)], 24, False),
    # size grows
    ([("a", "int", 0, 4), ("b", "long", 8, 8), ("c", "long", 24, 8)], 32, True),
    # a member removed
    ([("a", "int", 0, 4)], 24, True),
])
def test_struct_layout_changes_and_abi_breaks(new_members, new_size, breaking):
    old = bundle("lib", "1", structs=[struct("S", 24, [("a", "int", 0, 4), ("b", "long", 8, 8)])])
    new = bundle("lib", "2", structs=[struct("S", new_size, new_members, line=5)])
    changed = compare_evidence(old, new)["release"]["structs"]["changed"]
    assert [c["qualname"] for c in changed] == ["S"]
    assert changed[0]["breaking"] is breaking
    assert changed[0]["line"] == 5


def test_byte_map_segments_cover_the_struct_with_holes_and_padding():
    s = struct("S", 24, [("a", "char", 0, 1), ("b", "long", 8, 8), ("c", "short", 16, 2)])
    segs = struct_segments(s)
    assert [(x.kind, x.offset, x.size) for x in segs] == [
        ("member", 0, 1), ("hole", 1, 7), ("member", 8, 8), ("member", 16, 2), ("padding", 18, 6)]
    assert sum(x.size for x in segs) == 24


def test_struct_families_group_by_tag_with_total_bytes():
    a = bundle("x", structs=[struct("Shm", 64, [("h", "int", 0, 4)], tags=["shared-memory"]),
                             struct("Pin", 32, [("p", "int", 0, 4)], tags=["pinned", "shared-memory"])])
    b = bundle("y")
    fams = {f["tag"]: f for f in compare_evidence(a, b)["structs"]["families"]}
    assert fams["shared-memory"]["a"]["total_bytes"] == 96 and fams["shared-memory"]["a"]["count"] == 2
    assert fams["pinned"]["a"]["total_bytes"] == 32 and fams["pinned"]["b"]["count"] == 0
    text = " ".join(t["text"] for t in compare_evidence(a, b)["takeaways"])
    assert "x 1 documents 1 struct totalling 32 bytes, whereas y 1 exposes none" in text


def test_layers_align_by_role_and_the_matrix_is_read_from_the_layer_records():
    nodes = [Node(f"py:{p}", NodeKind.MODULE, p, p, "python", p, 1) for p in ("api.py", "sched.py", "mem.py")]
    edges = [Edge("py:api.py", "py:sched.py", EdgeKind.IMPORTS, "api.py", 2),
             Edge("py:sched.py", "py:mem.py", EdgeKind.CALLS, "sched.py", 5),
             Edge("py:mem.py", "py:sched.py", EdgeKind.IMPORTS, "mem.py", 1)]
    # the counts the layers step stated; the comparator must not count the edges again
    a = bundle("a", nodes=nodes, edges=edges,
               layers=[_layer("ingress", ["api.py"], depends_on=[("scheduling", 4)]),
                       _layer("scheduling", ["sched.py"], depends_on=[("memory", 1)]),
                       _layer("memory", ["mem.py"], depends_on=[("scheduling", 1)])])
    b = bundle("b", layers=[_layer("scheduling", ["s.cc"]), _layer("tokenization", ["t.cc"])])
    f = compare_evidence(a, b)
    rows = {r["role"]: r for r in f["layers"]["rows"]}
    assert f["layers"]["aligned"] == 1 and rows["scheduling"]["aligned"]
    assert rows["ingress"]["b"] is None and f["layers"]["gaps"]["b"] == ["ingress", "memory"]
    assert rows["scheduling"]["a"]["anchor"] == {"path": "sched.py", "line": 3}
    g = f["graph"]["a"]
    assert g["layer_matrix"] == {"ingress": {"scheduling": 4}, "memory": {"scheduling": 1}, "scheduling": {"memory": 1}}
    assert [c["layers"] for c in g["layer_cycles"]] == [["memory", "scheduling"]]
    assert g["layer_cycles"][0]["edges"][0]["example"] == {"path": "mem.py", "line": 1, "source": "py:mem.py",
                                                           "target": "py:x", "kind": "imports"}
    assert g["central"][0]["id"] == "py:sched.py" and g["central"][0]["dependents"] == 2


def test_most_depended_upon_symbols_are_the_systems_own_by_its_own_dependents():
    """Tests, examples and vendored code (the layers set them apart) neither rank nor count as
    dependents: vLLM's vendored pynvml helpers and Triton's QA `test_util` ranked among the top ten,
    and a symbol most of whose callers are tests ranked by them."""
    paths = ("core.py", "util.py", "third_party/vendored.py", "tests/t1.py", "tests/t2.py", "tests/t3.py")
    nodes = [Node(f"py:{p}", NodeKind.MODULE, p, p, "python", p, 1) for p in paths]
    imports = [("core.py", "util.py"), ("core.py", "third_party/vendored.py"), ("util.py", "third_party/vendored.py"),
               ("tests/t1.py", "core.py"), ("tests/t2.py", "core.py"), ("tests/t3.py", "core.py"),
               ("tests/t1.py", "tests/t3.py"), ("tests/t2.py", "tests/t3.py")]
    edges = [Edge(f"py:{a}", f"py:{b}", EdgeKind.IMPORTS, a, 1) for a, b in imports]
    layers = [_layer("engine", ["core.py", "util.py"]), _layer("vendored", ["third_party/vendored.py"], apart=True),
              _layer("tests", ["tests/t1.py", "tests/t2.py", "tests/t3.py"], apart=True)]
    g = compare_evidence(bundle("a", nodes=nodes, edges=edges, layers=layers), bundle("b"))["graph"]["a"]
    assert [(c["id"], c["dependents"]) for c in g["central"]] == [("py:util.py", 1)]
    # without layers every symbol and every dependent counts, as before
    g = compare_evidence(bundle("a", nodes=nodes, edges=edges), bundle("b"))["graph"]["a"]
    assert [(c["id"], c["dependents"]) for c in g["central"]][:2] == [("py:core.py", 3), ("py:tests/t3.py", 2)]

def test_findings_are_deterministic():
    a = bundle("a", metrics=[metric("m")], structs=[struct("S", 24, [("a", "int", 0, 4), ("b", "long", 8, 8)])])
    assert compare_evidence(a, bundle("b")) == compare_evidence(a, bundle("b"))


def test_renderers_say_none_found_with_the_reason_for_empty_sections():
    from comparator.render_html import render_html
    from comparator.render_json import render_json
    from comparator.render_markdown import render_markdown

    f = compare_evidence(bundle("a"), bundle("b"))
    md, page = render_markdown(f, KINDS), render_html(f, KINDS)
    assert "none found (no struct layouts in this evidence" in md
    assert "None found: a 1: no layer records in this evidence" in page
    assert render_json(f).startswith("{")


def test_removed_symbols_break_exactly_when_their_api_says_public():
    # the verdict is the evidence's own `api` reason (tests/ trees, underscores, __all__: the extractor's
    # rules), never a name rule of the comparator; a symbol without a reason is not known to be public
    api = {"py:tests.t.check_x": "private: in a tests/ tree", "py:pkg.api.serve": "public: module-level name",
           "py:pkg.api._helper": "private: underscore name", "py:pkg.api.legacy": ""}
    nodes = [Node(i, NodeKind.FUNCTION, i.rsplit(".", 1)[-1], i[3:], "python", "pkg/api.py", 3, signature="()",
                  api=reason) for i, reason in api.items()]
    old, new = bundle("p", "1", nodes=nodes), bundle("p", "2")
    f = compare_evidence(old, new)
    rows = {r["id"]: r for r in f["release"]["api"]["changes"]}
    assert {i: r["breaking"] for i, r in rows.items()} == {i: i == "py:pkg.api.serve" for i in api}
    assert rows["py:pkg.api.legacy"]["why"] == "not public API (no api recorded)"
    assert f["differences"] == {"any": 4, "breaking": 1}
    # the drift lists all four, with the reason, and decides nothing
    assert {r["id"]: r["api"] for r in f["release"]["symbols"]["removed"]} == api
    # a private change alone passes --fail-on breaking
    private = bundle("p", "1", nodes=[n for n in nodes if n.id == "py:pkg.api._helper"])
    assert compare_evidence(private, new)["differences"] == {"any": 1, "breaking": 0}


def test_one_generic_shared_word_is_not_a_crosswalk_pair():
    a = tele(metrics=[metric("vllm:lora_requests_info", "gauge")])
    b = tele(metrics=[metric("nv_inference_count", "counter"), metric("nv_other", "gauge")])
    assert crosswalk_metrics(a, b) == ()


def test_family_takeaway_says_when_layouts_are_missing():
    unresolved = struct("Shm", 0, [], method="unresolved", tags=["shared-memory"])
    a = bundle("x", structs=[struct("S", 64, [("h", "int", 0, 4)], tags=["shared-memory"])])
    b = bundle("y", structs=[unresolved, dataclasses.replace(unresolved, qualname="Shm2")])
    text = " ".join(t["text"] for t in compare_evidence(a, b)["takeaways"])
    assert "x 1 documents 1 struct totalling 64 bytes, y 1 2 (none with a resolved layout)" in text


def test_takeaways_never_rest_on_weak_layers_and_concepts_open_to_their_rows():
    a = bundle("a", layers=[_layer("scheduling", ["sched.py"]), _layer("memory", ["pool.py"], share=0.2),
                            _layer("ingress", ["api.py"])])
    b = bundle("b", layers=[_layer("scheduling", ["s.cc"], concepts=[("priority-queue", [("s.cc", 12, "std::priority_queue")])]),
                            _layer("memory", ["m.cc"]), _layer("tokenization", ["t.cc"], share=0.0)])
    f = compare_evidence(a, b)
    rows = {r["role"]: r for r in f["layers"]["rows"]}
    assert rows["memory"]["a"]["weak"] and rows["memory"]["aligned"] and rows["tokenization"]["b"]["weak"]
    texts = [t["text"] for t in f["takeaways"] if t["ref"] == "layers"]
    # memory is aligned, but one side rests on path words: counted apart, named as such
    assert texts[0] == ("a 1 partitions its code into 3 architectural layers and b 1 into 3, with 1 directly aligned "
                        "role (scheduling); 1 more aligned role rests on path words alone on one side (memory) "
                        "and is not counted.")
    # b's ingress gap is a takeaway; a's tokenization gap is not: b's tokenization layer is weak
    assert "b 1 has no layer for: ingress." in texts and not any(t.startswith("a 1 has no layer") for t in texts)
    assert rows["scheduling"]["b"]["concept_rows"] == [
        {"id": "priority-queue", "modules": 1, "rows": [{"path": "s.cc", "line": 12, "matched": "std::priority_queue",
                                                         "via": "names"}]}]
    kind = KINDS[[k.key for k in KINDS].index("layers")]
    page = kind.html(kind.read_section(f), "a", "b")
    assert '<details class=concept><summary class=pill title="s.cc:12 std::priority_queue">priority-queue' in page
    assert "20% by evidence, weak: path words" in page
