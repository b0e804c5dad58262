"""Torch operators registered with TorchScript's registry object, outside any TORCH_LIBRARY block
(`static auto r = torch::RegisterOperators("ns::op", &fn);` and the chained `.op(...)` form), as
FasterTransformer's th_op and the engines built on it (rtp-llm) write them. The mini-repo is written here."""

from __future__ import annotations

import pytest

from tests.native_support import written_bundle

FILES = {
    "csrc/engine_ops.cc": """
        #include <torch/script.h>
        namespace mini {
        void initEngine(int64_t port) {}
        void setLogLevel(int64_t level) {}
        at::Tensor scale(at::Tensor x, double s) { return x; }
        at::Tensor shift(at::Tensor x) { return x; }
        }  // namespace mini

        static auto init_engine = torch::RegisterOperators("mini::init_engine", &mini::initEngine);
        static auto log_level   = torch::RegisterOperators("mini::set_log_level", &mini::setLogLevel);

        namespace mini {
        static auto registry = torch::RegisterOperators()
                                   .op("mini::scale(Tensor x, float s) -> Tensor", &scale)
                                   .op("mini::shift", &shift);
        // no namespace in the name: which library it joins is not written, nothing is guessed
        static auto unqualified = torch::RegisterOperators("orphan", &shift);
        }  // namespace mini
        """,
    "pkg/__init__.py": "",
    "pkg/engine.py": """
        import torch


        def start(port):
            torch.ops.mini.init_engine(port)
            torch.ops.mini.set_log_level(2)


        def forward(x):
            return torch.ops.mini.shift(torch.ops.mini.scale(x, 0.5))
        """,
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("torch_op_registry")
    return written_bundle(root / "src", FILES)


def test_operators_of_the_registry_object_bind_to_their_functions(bundle):
    edges = {(e["kind"], e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"]
             if e["kind"] in ("binds", "implements")}
    assert edges == {
        ("binds", "py:pkg.engine.start", "cpp:mini::initEngine", 5),
        ("binds", "py:pkg.engine.start", "cpp:mini::setLogLevel", 6),
        ("binds", "py:pkg.engine.forward", "cpp:mini::scale", 10),
        ("binds", "py:pkg.engine.forward", "cpp:mini::shift", 10),
        # an operator node is made from a schema, as a block's `m.def("op", &fn)` without one makes none
        ("implements", "cpp:mini::scale", "torchop:mini::scale", 14),
    }
    assert "torch-op-unregistered" not in {d["code"] for d in bundle["diagnostics"]}
    assert bundle["stats"]["bindings"]["torch_op_calls_bound"] == 4


def test_a_schema_given_to_the_registry_is_the_operators_signature(bundle):
    ops = {n["id"]: (n["signature"], [p["name"] for p in n["params"]]) for n in bundle["graph"]["nodes"]
           if "torch-op" in (n.get("tags") or [])}
    assert ops["torchop:mini::scale"] == ("mini::scale(Tensor x, float s) -> Tensor", ["x", "s"])
    assert set(ops) == {"torchop:mini::scale"}
