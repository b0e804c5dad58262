"""Concepts of kernel libraries written in Python (Liger-Kernel's, vLLM's Triton kernels): GPU
kernels in the Triton language, their autotuning, and autograd functions with a hand-written
backward pass, each found on the name the code resolves through its imports."""

from __future__ import annotations

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system

KERNELS = {
    "pkg/__init__.py": "",
    "pkg/ops/__init__.py": "",
    "pkg/ops/norm.py": """import torch
import triton
import triton.language as tl
from triton import jit as triton_jit


@triton.autotune(configs=[triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def _norm_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pass


@triton_jit
def _scale_kernel(x_ptr):
    pass


class NormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        _norm_kernel[(1,)](x, 1)
        return x
""",
    # vLLM's shape: triton imported once, where a placeholder stands in when it is missing, and re-exported
    "pkg/triton_utils.py": "try:\n    import triton\nexcept ImportError:\n    triton = None\n",
    "pkg/ops/act.py": "from pkg.triton_utils import triton\n\n\n@triton.jit\ndef _act_kernel(x):\n    pass\n",
    # a jit of the system's own is no Triton kernel
    "pkg/jit.py": "def jit(fn):\n    return fn\n\n\n@jit\ndef traced():\n    pass\n",
    "tests/test_norm.py": "import triton\n\n\n@triton.jit\ndef _test_kernel():\n    pass\n",
}


def test_triton_kernels_their_autotuning_and_custom_autograd_functions(tmp_path):
    for rel, code in KERNELS.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code)
    bundle = extract_system([str(tmp_path)], options=ExtractOptions(jobs=1, cache_dir=None,
                                                                    probe_structs=False)).bundle
    found = {c["id"]: sorted((e["path"], e["line"], e["matched"]) for e in c["evidence"]) for c in bundle["concepts"]}
    assert found == {
        "triton-kernels": [("pkg/ops/act.py", 4, "pkg.triton_utils.triton.jit"),
                           ("pkg/ops/norm.py", 7, "triton.autotune"), ("pkg/ops/norm.py", 8, "triton.jit"),
                           ("pkg/ops/norm.py", 13, "triton.jit")],
        "kernel-autotuning": [("pkg/ops/norm.py", 7, "triton.autotune")],
        "custom-autograd": [("pkg/ops/norm.py", 18, "torch.autograd.Function")]}
