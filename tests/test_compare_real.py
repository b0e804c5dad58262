"""On the real vLLM sdists (0.10.1 and 0.10.2): changes verified by hand in the two source trees,
and a vLLM-against-fixture report in which every layer, struct and metric row leads to code."""

from __future__ import annotations

import pytest

from comparator.compare import compare_evidence
from comparator.kinds.telemetry import KIND as TELEMETRY
from comparator.registry import KINDS
from comparator.render_markdown import render_markdown
from extractor.context import ExtractOptions
from extractor.evidence.read import evidence_from_json, load_evidence
from tests.apidiff_support import api_comparison
from tests.compare_support import INPUTS
from tests.conftest import cache_root, extract_real

pytestmark = pytest.mark.real


def _extract(root, version):
    return evidence_from_json(extract_real(root, name="vllm", version=version,
                                           options=ExtractOptions(jobs=2, cache_dir=cache_root() / "archdiff")).bundle)


@pytest.fixture(scope="module")
def new_bundle(vllm_src):
    return _extract(vllm_src, "0.10.2")


@pytest.fixture(scope="module")
def release(vllm_prev_src, new_bundle):
    return compare_evidence(_extract(vllm_prev_src, "0.10.1"), new_bundle)


def test_release_mode_and_findings_render(release):
    assert release["mode"] == "release"
    assert "# archdiff release comparison: vllm 0.10.1 → vllm 0.10.2" in render_markdown(release, KINDS)


def test_function_added_in_0_10_2(release):
    # vllm/_custom_ops.py:283 `def poly_norm(out, input, weight, bias, epsilon)` exists only in 0.10.2
    added = {r["id"]: r for r in release["release"]["symbols"]["added"]}
    row = added["py:vllm._custom_ops.poly_norm"]
    assert (row["path"], row["line"], row["kind"]) == ("vllm/_custom_ops.py", 283, "function")
    assert row["api"] == "private: in a non-public module"  # vllm._custom_ops


def _api_rows(release):
    return {(r["symbol"], r["rule"], r["subject"]): r for r in release["release"]["api"]["changes"]}


def test_public_function_removed_in_0_10_2(release):
    # vllm/entrypoints/chat_utils.py:1348 `def random_tool_call_id() -> str` is gone in 0.10.2
    row = _api_rows(release)[("vllm.entrypoints.chat_utils.random_tool_call_id", "object-removed", "")]
    assert row["breaking"] and row["old_location"] == {"path": "vllm/entrypoints/chat_utils.py", "line": 1348}
    removed = {r["id"]: r for r in release["release"]["symbols"]["removed"]}
    assert removed["py:vllm.entrypoints.chat_utils.random_tool_call_id"]["api"] == "public: module-level name"


def test_breaking_signature_change(release):
    # abstract.py: fused_output_quant_supported(self, dtype, static, group_shape) (0.10.1, line 291)
    # became fused_output_quant_supported(self, quant_key: QuantKey) (0.10.2, line 317)
    rows = _api_rows(release)
    path = "vllm.attention.backends.abstract.AttentionImpl.fused_output_quant_supported"
    added = rows[(path, "parameter-added-required", "quant_key")]
    assert added["breaking"] and added["new_location"]["line"] == 317 and added["old_location"]["line"] == 291
    assert {s for p, rule, s in rows if p == path and rule == "parameter-removed"} == {"dtype", "static", "group_shape"}


def test_generated_constructor_change_leads_the_report(release):
    # EngineArgs is a dataclass: its __init__ exists only as dataclasses generates it, and 205 places in
    # 0.10.1 call the class; enable_prompt_adapter (a field in 0.10.1) is gone in 0.10.2
    api = release["release"]["api"]
    assert api["changes"][0]["symbol"] == "vllm.engine.arg_utils.EngineArgs.__init__" and api["changes"][0]["uses"] == 205
    row = _api_rows(release)[("vllm.engine.arg_utils.EngineArgs.__init__", "parameter-removed", "enable_prompt_adapter")]
    assert row["breaking"] and row["uses"] == 205
    # --fail-on breaking rests on the API rows alone, and the symbol drift marks nothing breaking
    assert release["differences"]["breaking"] == api["breaking"] > 1_000
    assert not any("breaking" in r for r in release["release"]["symbols"]["removed"])


def test_breaking_rows_are_those_of_api_vs_griffe(release):
    # bench/api_vs_griffe.py's archdiff side (Python-only extractions, cached by test_api_vs_griffe)
    # lists exactly the report's breaking rows inside the package
    from bench.api_vs_griffe import report_differences, report_rows

    comparison = api_comparison("vllm", "0.10.1", "0.10.2")
    assert report_differences(comparison, release) == []
    assert len(report_rows(release, "vllm")) == len(comparison.breaking_rows) > 1_000


def test_the_readme_figures_are_what_this_comparison_gives(release):
    # the README's API excerpt and counts come from docs/figures.json (test_readme_figures holds the
    # README to it); when the code's output changes, this fails until
    # `python3 -m bench.readme_vs_runs --only api --write` records the new figures
    import json

    from bench.readme_vs_runs import FIGURES, api_figures

    assert api_figures(release) == json.loads(FIGURES.read_text(encoding="utf-8"))["api"]


def test_metric_added_in_0_10_2(release):
    # vllm/v1/metrics/loggers.py: "vllm:inter_token_latency_seconds" is new in 0.10.2 (it replaces the
    # deprecated vllm:time_per_output_token_seconds, which 0.10.2 still defines)
    added = {m["name"] for m in release["release"]["metrics"]["added"]}
    assert "vllm:inter_token_latency_seconds" in added
    assert release["release"]["metrics"]["removed"] == []


@pytest.fixture(scope="module")
def against_fixture(new_bundle):
    return compare_evidence(new_bundle, load_evidence(INPUTS / "triton_like.evidence.json"))


def test_every_row_of_vllm_against_the_fixture_leads_to_code(against_fixture):
    findings = against_fixture
    assert findings["mode"] == "systems"
    rows = [side for r in findings["layers"]["rows"] for side in (r["a"], r["b"]) if side]
    assert len(rows) >= 10
    for side in rows:
        assert side["anchor"]["path"] and isinstance(side["anchor"]["line"], int)
        for symbol in side["key_symbols"]:
            assert symbol["path"] and symbol["line"] > 0
    structs = [s for f in findings["structs"]["families"] for side in ("a", "b") for s in f[side]["structs"]]
    assert any(s["path"].startswith("csrc/") for s in structs)
    assert all(s["path"] and s["line"] > 0 for s in structs)
    metrics = findings["telemetry"]["a"]["metrics"] + findings["telemetry"]["b"]["metrics"]
    assert len(findings["telemetry"]["a"]["metrics"]) >= 30
    assert all(m["path"] and m["line"] > 0 for m in metrics)
    for row in findings["telemetry"]["crosswalk"]:
        assert row["a"]["path"] and row["a"]["line"] > 0 and row["b"]["path"] and row["b"]["line"] > 0
    assert any(r["a"]["name"] == "vllm:request_success" for r in findings["telemetry"]["crosswalk"])


INSTRUMENTATOR_SERIES = {"http_request_duration_highr_seconds", "http_request_duration_seconds",
                         "http_request_size_bytes", "http_requests", "http_response_size_bytes"}


def test_vllm_library_series_stand_apart_from_its_own_metrics(against_fixture):
    # vllm/entrypoints/openai/api_server.py:370 `Instrumentator(...).instrument(app)`: the HTTP
    # series are the instrumentator's; the default registry adds prometheus_client's collectors
    tele = against_fixture["telemetry"]
    vllm = tele["a"]
    assert vllm["library_by_origin"] == {"prometheus-fastapi-instrumentator": 5, "prometheus_client": 10}
    http = [m for m in vllm["library_metrics"] if m["origin"] == "prometheus-fastapi-instrumentator"]
    assert {m["name"] for m in http} == INSTRUMENTATOR_SERIES
    assert {(m["path"], m["line"], m["via"]) for m in http} == \
        {("vllm/entrypoints/openai/api_server.py", 370, "builder:Instrumentator.instrument")}
    library = {m["name"] for m in vllm["library_metrics"]}
    paired = {r["a"]["name"] for r in tele["crosswalk"]}
    assert paired and not paired & library
    assert not library & {m["name"] for m in vllm["metrics"]}
    md = render_markdown(against_fixture, KINDS)
    assert "| prometheus-fastapi-instrumentator | 5 | 0 | — |" in md


def test_vllm_ray_twins_and_second_engine_are_not_counted_twice(against_fixture):
    vllm = against_fixture["telemetry"]["a"]
    # 55 prometheus_client definition sites (the v0 engine's vllm/engine/metrics.py and the v1
    # engine's loggers.py register most families twice) are 32 metric names; the 54 Ray records
    # at those sites (RayPrometheusStatLogger, RayMetrics) are twins of 32 of them, not metrics;
    # tests/v1/test_metrics_reader.py's 4 (test_counter, ...) stand apart with the tests
    assert (vllm["definitions"], vllm["own_names"], vllm["twins_by_library"]) == (55, 32, {"ray": 32})
    assert vllm["apart_by_layer"] == {"Tests, examples & benchmarks": 4}
    assert {m["path"] for m in vllm["apart_metrics"]} == {"tests/v1/test_metrics_reader.py"}
    assert {m["library"] for m in vllm["metrics"]} == {"prometheus_client"}
    assert len(vllm["twins"]) == 54 and all(t["exposed_names"][0].startswith("ray_") for t in vllm["twins"])
    running = [m for m in vllm["metrics"] if m["name"] == "vllm:num_requests_running"]
    assert [(m["path"], m["line"], m["repeat"], m["twins"]) for m in running] == [
        ("vllm/engine/metrics.py", 59, False, ["ray"]), ("vllm/v1/metrics/loggers.py", 188, True, ["ray"])]
    # the systems count: own names on one side only (none shared with the fixture's 8)
    assert TELEMETRY.count(TELEMETRY.read_section(against_fixture), None).any == 32 + 8


def test_grafana_panel_renamed_in_0_10_2_is_one_changed_threshold(release):
    # examples/online_serving/prometheus_grafana/grafana.json: the panel at line 405 is titled
    # "Time Per Output Token Latency" in 0.10.1 and "Inter Token Latency" in 0.10.2 (line 479)
    th = release["release"]["thresholds"]
    assert [(t["name"], t["line"], t["changes"][0]) for t in th["changed"]] == \
        [("Inter Token Latency", 405, "renamed from Time Per Output Token Latency")]
    assert "+vllm:inter_token_latency_seconds_bucket" in th["changed"][0]["changes"][1]
    assert th["added"] == [] and th["removed"] == []
    # 0.10.2 still defines the deprecated time_per_output_token metric: no threshold lost its series
    assert release["release"]["orphaned_thresholds"] == []


# -- the public Python API that reaches each changed struct layout and binding ----------------------


@pytest.fixture(scope="module")
def old_bundle(vllm_prev_src):
    return _extract(vllm_prev_src, "0.10.1")


def _impact_graph(evidence):
    """The graph as networkx, only the edges the report's walk follows: an independent check."""
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_edges_from((e.source, e.target) for e in evidence.graph.edges
                         if e.kind.value in ("binds", "calls", "launches", "uses"))
    return graph


def _public_reaching(evidence, graph, node):
    """The public Python nodes with a path to ``node``, its methods or its implementations."""
    import networkx as nx

    seeds = {node} | {e.target for e in evidence.graph.edges if e.kind.value == "contains" and e.source == node} \
        | {e.source for e in evidence.graph.edges if e.kind.value == "implements" and e.target == node}
    public = {n.id for n in evidence.graph.nodes if n.language == "python" and n.api.startswith("public:")}
    reaching = set().union(*(nx.ancestors(graph, s) for s in seeds if s in graph))
    return reaching & public


def _reached_rows(release):
    structs = release["release"]["structs"]
    layouts = [(row["qualname"], row["reached_by"], "new") for row in structs["changed"]] \
        + [(row["qualname"], row["reached_by"], "old") for row in structs["removed"]]
    bindings = [(row["symbol"], row["reached_by"], "new" if row["new_location"] else "old")
                for row in release["release"]["api"]["changes"] if "reached_by" in row]
    return layouts + bindings


def test_a_removed_torch_op_names_the_public_api_that_called_it(release, old_bundle):
    # csrc/cache_kernels.cu's gather_cache (torch op _C_cache_ops::gather_cache) is gone in 0.10.2;
    # in 0.10.1 vllm/attention/backends/mla/common.py's MLACommonImpl.forward reaches it
    row = _api_rows(release)[("<TORCH_EXTENSION_NAME>_cache_ops::gather_cache", "object-removed", "")]
    reach = row["reached_by"]
    apis = [a["id"] for a in reach["apis"]]
    assert "py:vllm.attention.backends.mla.common.MLACommonImpl.forward" in apis
    assert reach["total"] >= len(apis) >= 1
    # the witness chain's edges are edges of the old evidence, in order, ending at the implementation
    edges = {(e.source, e.target, e.kind.value, e.path, e.line) for e in old_bundle.graph.edges}
    links = reach["witness"]
    assert links[0]["node"] == apis[0] and links[-1]["node"] == "cpp:gather_cache"
    for before, link in zip(links, links[1:]):
        assert (before["node"], link["node"], link["edge"], link["path"], link["line"]) in edges
    assert "binds" in [link["edge"] for link in links]


def test_every_changed_layout_and_binding_python_reaches_names_an_api(release, old_bundle, new_bundle):
    graphs = {"old": (old_bundle, _impact_graph(old_bundle)), "new": (new_bundle, _impact_graph(new_bundle))}
    rows = _reached_rows(release)
    assert len(rows) >= 10  # 0.10.2 changed or removed a dozen torch operators
    unnamed = []
    for name, reach, side in rows:
        evidence, graph = graphs[side]
        independent = _public_reaching(evidence, graph, reach["node"]) if reach["node"] else set()
        assert reach["total"] == len(independent), name
        assert {a["id"] for a in reach["apis"]} <= independent, name
        if independent and not reach["apis"]:
            unnamed.append(name)
    assert unnamed == []


def test_resolved_layouts_kernels_take_are_reached_from_the_public_api(new_bundle):
    # No layout both releases resolve changed from 0.10.1 to 0.10.2; what a change would name is
    # the same walk: csrc/attention/dtype_bfloat16.cuh's bf16_4_t is taken by fp8 conversions the
    # cache kernels call, which MLACommonImpl.forward reaches through the concat_and_cache_mla op
    from comparator.kinds.structs import reached_structs
    from comparator.kinds.structs.records import LayoutChange, LayoutSize
    from extractor.structs.records import STRUCTS, Method

    resolved = [s for s in new_bundle.of(STRUCTS) if s.method is not Method.UNRESOLVED]
    as_changed = [LayoutChange(s.qualname, (), False, LayoutSize(s.size, s.align, s.path, s.line),
                               LayoutSize(s.size, s.align, s.path, s.line), (), (), s.path, s.line) for s in resolved]
    reached = reached_structs(new_bundle, as_changed)
    named = sorted(name for name, reach in reached.items() if reach.apis)
    assert {"vllm::bf16_4_t", "vllm::Float4_"} <= set(named) and len(named) >= 10
    reach = reached["vllm::bf16_4_t"]
    assert "py:vllm.attention.backends.mla.common.MLACommonImpl.forward" in [a.id for a in reach.apis]
    edges = {(e.source, e.target, e.kind.value, e.path, e.line) for e in new_bundle.graph.edges}
    links = reach.witness
    assert links[0].node == reach.apis[0].id and links[-1].node == "cpp:vllm::bf16_4_t"
    assert [link.edge for link in links][-1] == "uses" and "binds" in [link.edge for link in links]
    for before, link in zip(links, links[1:]):
        assert (before.node, link.node, link.edge, link.path, link.line) in edges
