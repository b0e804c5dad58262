"""``archdiff check`` on vLLM 0.10.2 against 0.10.1 from the index, with the policy written from
vLLM's documented API (docs/policies/vllm.toml): only the promised surface fails."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, cache_root

pytestmark = pytest.mark.real

# What vllm/__init__.py binds (MODULE_ATTRS), at the paths the API diff reports: each failing row
# must be one of these or a member of one.
PROMISED = ("vllm.entrypoints.llm.LLM", "vllm.sampling_params.SamplingParams", "vllm.pooling_params.PoolingParams",
            "vllm.engine.arg_utils.EngineArgs", "vllm.engine.arg_utils.AsyncEngineArgs",
            "vllm.engine.llm_engine.LLMEngine", "vllm.engine.async_llm_engine.AsyncLLMEngine", "vllm.outputs.",
            "vllm.inputs.", "vllm.model_executor.models.", "vllm.executor.ray_utils.initialize_ray_cluster")


def test_the_vllm_policy_keeps_the_documented_surface(vllm_src: Path):
    proc = subprocess.run(
        [sys.executable, "-m", "archdiff.cli", "check", str(vllm_src), "--against", "pypi:vllm==0.10.1",
         "--policy", str(ROOT / "docs" / "policies" / "vllm.toml"), "--tree-version", "0.10.2",
         "--cache-dir", str(cache_root() / "archdiff"), "-j", "2"],
        check=False, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    head = re.match(r"archdiff \S+ check: vllm 0\.10\.1 -> vllm 0\.10\.2: ([\d,]+) failing, ([\d,]+) warnings?, 0 accepted, "
                    r"([\d,]+) outside the policy \(of ([\d,]+) breaking rows?\)", proc.stdout)
    assert head, proc.stdout[:300]
    failing, warnings, outside, unscoped = (int(g.replace(",", "")) for g in head.groups())
    assert failing + warnings + outside == unscoped
    assert failing < unscoped / 10  # the promise is a small part of what is importable
    rows = [line for line in proc.stdout.splitlines() if line.startswith("  failing: ")]
    assert len(rows) == failing
    symbols = {re.match(r"  failing: \S+:\d+: [a-z-]+: ([\w.]+)", line).group(1) for line in rows}  # type: ignore[union-attr]
    assert all(s.startswith(PROMISED) for s in symbols), sorted(symbols)
    text = "\n".join(rows)
    assert "parameter-removed: vllm.entrypoints.llm.LLM.generate(prompt_token_ids)" in text
    assert "parameter-kind-changed: vllm.entrypoints.llm.LLM.generate(use_tqdm): parameter kind changed: " \
           "positional-or-keyword -> keyword-only" in text
    # EngineArgs' positional moves are warnings by the policy; its removed fields still fail
    assert not any("parameter-moved: vllm.engine.arg_utils.EngineArgs.__init__" in r for r in rows)
    assert "attribute-removed: vllm.engine.arg_utils.EngineArgs.enable_prompt_adapter" in text
    assert "needs a minor bump (0.10.1 -> 0.11.0 at least); the tree declares 0.10.2 (patch): too small" in proc.stdout
