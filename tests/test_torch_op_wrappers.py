"""Torch operators whose schema or name a block gives through a wrapper: PyTorch's selective build
(`m.def(TORCH_SELECTIVE_SCHEMA("ns::op(...) -> ..."))`, `m.impl(TORCH_SELECTIVE_NAME("ns::op"), fn)`)
and a schema given its alias analysis (`m.def(torch::schema("ns::op(...) -> ...", alias), fn)`), as
intel-extension-for-pytorch writes them. The mini-repo is written here."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system

FILES = {
    "csrc/ops.cpp": """
        #include <torch/library.h>
        namespace mini {
        at::Tensor fused(const at::Tensor& x, double p) { return x; }
        at::Tensor gelu(const at::Tensor& x) { return x; }
        }  // namespace mini

        TORCH_LIBRARY_FRAGMENT(mini_ops, m) {
          m.def(
              torch::schema(
                  "mini_ops::fused(Tensor x, float p) -> Tensor",
                  c10::AliasAnalysisKind::PURE_FUNCTION),
              mini::fused);
          m.def(TORCH_SELECTIVE_SCHEMA("mini_ops::gelu(Tensor x) -> Tensor"));
        }

        TORCH_LIBRARY_IMPL(mini_ops, CPU, m) {
          m.impl(TORCH_SELECTIVE_NAME("mini_ops::gelu"), TORCH_FN((&mini::gelu)));
        }
        """,
    "pkg/__init__.py": "",
    "pkg/layer.py": """
        import torch


        def forward(x):
            y = torch.ops.mini_ops.fused(x, 0.1)
            return torch.ops.mini_ops.gelu(y)
        """,
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("torch_op_wrappers")
    for rel, text in FILES.items():
        path = Path(root / "src" / rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return extract_system([str(root / "src")], options=ExtractOptions(jobs=1, cache_dir=root / "cache",
                                                                       probe_structs=False)).bundle


def test_operators_named_through_a_wrapper_bind_to_their_functions(bundle):
    edges = {(e["kind"], e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"]
             if e["kind"] in ("binds", "implements")}
    assert edges == {
        ("binds", "py:pkg.layer.forward", "cpp:mini::fused", 5),
        ("binds", "py:pkg.layer.forward", "cpp:mini::gelu", 6),
        # at the line that names the operator, inside the wrapper
        ("implements", "cpp:mini::fused", "torchop:mini_ops::fused", 10),
        ("implements", "cpp:mini::gelu", "torchop:mini_ops::gelu", 17),
    }


def test_a_wrapped_schema_is_the_operators_signature(bundle):
    ops = {n["id"]: (n["signature"], n["line"], [p["name"] for p in n["params"]]) for n in bundle["graph"]["nodes"]
           if "torch-op" in (n.get("tags") or [])}
    assert ops == {
        "torchop:mini_ops::fused": ("mini_ops::fused(Tensor x, float p) -> Tensor", 10, ["x", "p"]),
        "torchop:mini_ops::gelu": ("mini_ops::gelu(Tensor x) -> Tensor", 13, ["x"]),
    }
