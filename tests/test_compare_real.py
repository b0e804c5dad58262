"""On the real vLLM sdists (0.10.1 and 0.10.2): changes verified by hand in the two source trees,
and a vLLM-against-fixture report in which every layer, struct and metric row leads to code."""

from __future__ import annotations

import pytest

from comparator.compare import compare_evidence
from comparator.registry import KINDS
from comparator.render_markdown import render_markdown
from extractor.context import ExtractOptions
from extractor.evidence import evidence_from_json, load_evidence
from extractor.pipeline import extract_system
from tests.apidiff_support import api_comparison
from tests.compare_support import INPUTS
from tests.conftest import cache_root

pytestmark = pytest.mark.real


def _extract(root, version):
    return evidence_from_json(extract_system([str(root)], name="vllm", version=version,
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


def test_breaking_rows_are_the_api_scripts(release):
    # scripts/api_vs_griffe.py's archdiff side (Python-only extractions, cached by test_api_vs_griffe)
    # lists exactly the report's breaking rows inside the package
    from scripts.api_vs_griffe import report_differences, report_rows

    comparison = api_comparison("vllm", "0.10.1", "0.10.2")
    assert report_differences(comparison, release) == []
    assert len(report_rows(release, "vllm")) == len(comparison.breaking_rows) > 1_000


def test_metric_added_in_0_10_2(release):
    # vllm/v1/metrics/loggers.py: "vllm:inter_token_latency_seconds" is new in 0.10.2 (it replaces the
    # deprecated vllm:time_per_output_token_seconds, which 0.10.2 still defines)
    added = {m["name"] for m in release["release"]["metrics"]["added"]}
    assert "vllm:inter_token_latency_seconds" in added
    assert release["release"]["metrics"]["removed"] == []


def test_every_row_of_vllm_against_the_fixture_leads_to_code(new_bundle):
    findings = compare_evidence(new_bundle, load_evidence(INPUTS / "triton_like.evidence.json"))
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
