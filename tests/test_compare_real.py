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
    assert (row["path"], row["line"], row["kind"], row["breaking"]) == ("vllm/_custom_ops.py", 283, "function", False)


def test_public_function_removed_in_0_10_2(release):
    # vllm/entrypoints/chat_utils.py:1348 `def random_tool_call_id() -> str` is gone in 0.10.2
    removed = {r["id"]: r for r in release["release"]["symbols"]["removed"]}
    row = removed["py:vllm.entrypoints.chat_utils.random_tool_call_id"]
    assert (row["path"], row["line"], row["breaking"]) == ("vllm/entrypoints/chat_utils.py", 1348, True)


def test_breaking_signature_change(release):
    # abstract.py: fused_output_quant_supported(self, dtype, static, group_shape) (0.10.1, line 291)
    # became fused_output_quant_supported(self, quant_key: QuantKey) (0.10.2, line 317)
    sigs = {r["id"]: r for r in release["release"]["symbols"]["signatures"]}
    row = sigs["py:vllm.attention.backends.abstract.AttentionImpl.fused_output_quant_supported"]
    assert row["breaking"] and row["line"] == 317 and row["old_location"]["line"] == 291
    assert "required parameter 'quant_key' added" in row["reasons"]
    assert "parameter 'group_shape' removed" in row["reasons"]


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
