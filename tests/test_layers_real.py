"""Layers of the real vLLM 0.10.2 sdist. No rule in roles.yaml names a vLLM path: these files must
land in their roles through general signals (path words, imports, symbols, concepts)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from extractor.context import ExtractOptions
from extractor.evidence.read import evidence_from_json
from extractor.layers import UNASSIGNED
from tests.conftest import cache_root, extract_real
from extractor.layers.records import LAYERS

pytestmark = pytest.mark.real


@pytest.fixture(scope="module")
def vllm_layers(vllm_src):
    """The layers the pipeline extracts (after the graph steps, whose symbols give key symbols), as
    records read back from the evidence."""
    extraction = extract_real(vllm_src, name="vllm", version="0.10.2",
                              options=ExtractOptions(jobs=2, cache_dir=cache_root() / "archdiff"))
    evidence = evidence_from_json(extraction.bundle)
    return vllm_src, SimpleNamespace(records=evidence.of(LAYERS), stats=evidence.stats["layers"])


@pytest.mark.parametrize("path, role", [
    ("vllm/entrypoints/openai/api_server.py", "ingress"),
    ("vllm/v1/core/sched/scheduler.py", "scheduling"),
    ("vllm/v1/core/block_pool.py", "memory"),
    ("vllm/distributed/parallel_state.py", "parallelism"),
    ("vllm/v1/metrics/loggers.py", "telemetry"),
    ("vllm/v1/engine/core.py", "engine"),
    ("vllm/model_executor/models/llama.py", "models"),
    ("vllm/model_executor/model_loader/default_loader.py", "model-loading"),
    ("vllm/v1/worker/gpu_worker.py", "execution"),
    ("tests/conftest.py", "tests"),
])
def test_known_files_get_their_role(vllm_layers, path, role):
    _ctx, result = vllm_layers
    got = {m.path: m for l in result.records for m in l.modules}[path]
    assert got.role == role, f"{path}: {got.role} ({got.score}) from {got.evidence}"


def test_csrc_attention_is_kernels(vllm_layers):
    _ctx, result = vllm_layers
    attention = {m.path: m.role for l in result.records for m in l.modules if m.path.startswith("csrc/attention/")}
    assert len(attention) >= 15  # 19 files in 0.10.2
    assert {p: r for p, r in attention.items() if r != "kernels"} == {}


def test_most_non_test_code_is_assigned(vllm_layers):
    _ctx, result = vllm_layers
    stats = result.stats
    assert stats["lines_counted"] > 300_000  # the vllm/ and csrc/ code is counted, tests are not
    assert stats["assigned_share"] >= 0.80
    assert stats["lines_assigned"] / stats["lines_counted"] == pytest.approx(stats["assigned_share"], abs=1e-4)


def test_summaries_name_symbols_that_exist(vllm_layers):
    root, result = vllm_layers
    texts = {}
    for layer in result.records:
        if layer.role == UNASSIGNED or layer.apart:
            continue
        assert layer.key_symbols, layer.role
        named = re.search(r"key symbols ([^;.]+)", layer.summary).group(1).split(", ")
        assert named == [s.name for s in layer.key_symbols[: len(named)]]
        for symbol in layer.key_symbols:
            assert symbol.path in {m.path for m in layer.modules}
            if symbol.path not in texts:
                texts[symbol.path] = (root / symbol.path).read_text(encoding="utf-8", errors="replace").splitlines()
            assert symbol.name in texts[symbol.path][symbol.line - 1], symbol


def test_scheduling_layer_carries_the_priority_queue(vllm_layers):
    _ctx, result = vllm_layers
    scheduling = next(l for l in result.records if l.role == "scheduling")
    assert "priority-queue" in scheduling.concepts
    memory = next(l for l in result.records if l.role == "memory")
    assert "paged-kv-cache" in memory.concepts
