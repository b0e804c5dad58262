"""`archdiff graph` on the real vLLM 0.10.2 sdist: Python operators reach their CUDA kernels
through the `binds` edge, and a C++ implementation's callers are Python functions."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from extractor.context import ExtractOptions
from extractor.evidence.write import write_bundle
from tests.conftest import cache_root, extract_real

pytestmark = pytest.mark.real


@pytest.fixture(scope="module")
def vllm_evidence(vllm_src, tmp_path_factory):
    result = extract_real(vllm_src, options=ExtractOptions(jobs=2, cache_dir=cache_root() / "archdiff",
                                                           probe_structs=False))
    return write_bundle(None, tmp_path_factory.mktemp("vllm"), result.data)


def query(evidence, command: str, *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "archdiff.cli", "graph", command, str(evidence), *args,
                           "--format", "json", "--cache-dir", str(evidence.parent / "cache")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def steps(chain: list[dict]) -> list[tuple[str | None, str]]:
    return [(s["edge"]["kind"] if s["edge"] else None, s["node"]["id"]) for s in chain]


def test_paged_attention_reaches_its_cuda_kernel_through_the_binding(vllm_evidence):
    answer = query(vllm_evidence, "reach", "py:vllm._custom_ops.paged_attention_v1", "--to-kind", "kernel")
    by_id = {h["node"]["id"]: h for h in answer["hits"]}
    hit = by_id["cpp:vllm::paged_attention_v1_kernel"]
    assert hit["node"]["path"] == "csrc/attention/attention_kernels.cuh" and hit["node"]["language"] == "cuda"
    # the operator call binds to the C++ implementation, which calls the launcher (through the
    # dispatch macros of paged_attention_v1.cu), which launches the kernel
    assert steps(hit["chain"]) == [
        (None, "py:vllm._custom_ops.paged_attention_v1"), ("binds", "cpp:paged_attention_v1"),
        ("calls", "cpp:paged_attention_v1_launcher"), ("launches", "cpp:vllm::paged_attention_v1_kernel")]
    assert hit["chain"][1]["edge"]["path"] == "vllm/_custom_ops.py"
    assert all(h["node"]["kind"] == "kernel" for h in answer["hits"])
    assert "cpp:vllm::paged_attention_v2_kernel" not in by_id  # v1's chain does not lead to v2


def test_a_layer_reaches_its_kernel_through_the_torch_operator(vllm_evidence):
    # forward_cuda calls self.op, which __init__ set to torch.ops._C.silu_and_mul
    answer = query(vllm_evidence, "path", "vllm.model_executor.layers.activation.SiluAndMul.forward_cuda",
                   "cpp:vllm::act_and_mul_kernel")
    assert [steps(p) for p in answer["paths"]] == [[
        (None, "py:vllm.model_executor.layers.activation.SiluAndMul.forward_cuda"), ("binds", "cpp:silu_and_mul"),
        ("launches", "cpp:vllm::act_and_mul_kernel")]]
    assert answer["paths"][0][1]["edge"] == {"kind": "binds", "path": "vllm/model_executor/layers/activation.py",
                                             "line": 88}


def test_callers_of_a_cpp_implementation_are_its_python_callers(vllm_evidence):
    answer = query(vllm_evidence, "callers", "cpp:paged_attention_v1", "--language", "python")
    callers = {h["node"]["id"] for h in answer["hits"]}
    assert "py:vllm._custom_ops.paged_attention_v1" in callers
    assert all(h["chain"][-1]["edge"]["kind"] == "binds" for h in answer["hits"])
    deeper = query(vllm_evidence, "callers", "cpp:paged_attention_v1", "--depth", "3", "--language", "python")
    depth = {h["node"]["id"]: h["depth"] for h in deeper["hits"]}
    # the CPU attention backend calls the wrapper, which calls the operator
    assert depth["py:vllm.v1.attention.backends.cpu_attn._PagedAttention.forward_decode"] == 2
    assert {k: v for k, v in depth.items() if v == 1} == {h["node"]["id"]: 1 for h in answer["hits"]}
