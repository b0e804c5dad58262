"""Torch operators whose schema or name a block gives through a wrapper: PyTorch's selective build
(`m.def(TORCH_SELECTIVE_SCHEMA("ns::op(...) -> ..."))`, `m.impl(TORCH_SELECTIVE_NAME("ns::op"), fn)`)
and a schema given its alias analysis (`m.def(torch::schema("ns::op(...) -> ...", alias), fn)`), as
intel-extension-for-pytorch writes them. The mini-repo is written here."""

from __future__ import annotations


import pytest

from tests.native_support import written_bundle


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
    # a block macro of the system's own, defined in a header over torch::Library (IPEX's shape)
    "csrc/library.h": """
        #include <torch/library.h>
        #define MY_LIBRARY_FRAGMENT(ns, m) _MY_LIBRARY_FRAGMENT(ns, m, C10_UID)
        #define MY_LIBRARY_IMPL(ns, k, m) _MY_LIBRARY_IMPL(ns, k, m, C10_UID)
        #define MY_MODULE(name, m) PYBIND11_MODULE(name, m)
        #define MY_FRAGMENT() TORCH_LIBRARY_FRAGMENT(mini_ops, m)
        #define MY_REGISTER(NAME, Func) m.impl(TORCH_SELECTIVE_NAME("mini_ops::" NAME), Func);
        """,
    "csrc/scan.cpp": """
        #include "library.h"
        namespace mini {
        at::Tensor scan(const at::Tensor& u) { return u; }
        at::Tensor scan_autocast(const at::Tensor& u) { return u; }
        int version() { return 1; }
        int twice(int x) { return 2 * x; }
        }  // namespace mini

        namespace {
        MY_LIBRARY_FRAGMENT(mini_ops, m) {
          m.def("scan(Tensor u) -> Tensor");
          m.impl("scan", c10::DispatchKey::CPU, mini::scan);
        }

        MY_LIBRARY_IMPL(mini_ops, AutocastCPU, m) {
          m.impl("scan", mini::scan_autocast);
        }

        // names only, no schema and no impl: not a torch library's block
        MY_MODULE(_ext, m) {
          m.def("version", &mini::version);
        }

        // a block macro given no arguments (a macro's use, said), its registrations through a macro
        // of the header: both expanded from their definitions
        MY_FRAGMENT() {
          MY_REGISTER("version", mini::version);
        }

        TORCH_LIBRARY_FRAGMENT(mini_ops, m) {
          MY_REGISTER("twice", mini::twice);
          UNKNOWN_REGISTER("thrice", mini::twice);
        }
        }  // namespace
        """,
    "pkg/__init__.py": "",
    "pkg/layer.py": """
        import torch


        def forward(x):
            y = torch.ops.mini_ops.fused(x, 0.1)
            return torch.ops.mini_ops.gelu(y)


        def scan(u):
            return torch.ops.mini_ops.scan(u)


        def through_macros(x):
            torch.ops.mini_ops.version()
            torch.ops.mini_ops.thrice(x)
            return torch.ops.mini_ops.twice(x)
        """,
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("torch_op_wrappers")
    return written_bundle(root / "src", FILES)


def test_operators_named_through_a_wrapper_bind_to_their_functions(bundle):
    edges = {(e["kind"], e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"]
             if e["kind"] in ("binds", "implements")}
    assert edges == {
        ("binds", "py:pkg.layer.forward", "cpp:mini::fused", 5),
        ("binds", "py:pkg.layer.forward", "cpp:mini::gelu", 6),
        # at the line that names the operator, inside the wrapper
        ("implements", "cpp:mini::fused", "torchop:mini_ops::fused", 10),
        ("implements", "cpp:mini::gelu", "torchop:mini_ops::gelu", 17),
        # a block macro of the system (below)
        ("binds", "py:pkg.layer.scan", "cpp:mini::scan", 10),
        ("binds", "py:pkg.layer.scan", "cpp:mini::scan_autocast", 10),
        ("implements", "cpp:mini::scan", "torchop:mini_ops::scan", 12),
        ("implements", "cpp:mini::scan_autocast", "torchop:mini_ops::scan", 16),
        # through macros (the last test)
        ("binds", "py:pkg.layer.through_macros", "cpp:mini::version", 14),
        ("binds", "py:pkg.layer.through_macros", "cpp:mini::twice", 16),
    }


def test_a_wrapped_schema_is_the_operators_signature(bundle):
    ops = {n["id"]: (n["signature"], n["line"], [p["name"] for p in n["params"]]) for n in bundle["graph"]["nodes"]
           if "torch-op" in (n.get("tags") or [])}
    assert ops == {
        "torchop:mini_ops::fused": ("mini_ops::fused(Tensor x, float p) -> Tensor", 10, ["x", "p"]),
        "torchop:mini_ops::gelu": ("mini_ops::gelu(Tensor x) -> Tensor", 13, ["x"]),
        "torchop:mini_ops::scan": ("scan(Tensor u) -> Tensor", 11, ["u"]),
    }


def test_a_block_macro_of_the_system_is_read_as_a_torch_library_block(bundle):
    binds = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    # every implementation registered for the operator, in the fragment and the impl block (its dispatch key)
    assert {b for b in binds if b[0] == "py:pkg.layer.scan"} == {
        ("py:pkg.layer.scan", "cpp:mini::scan", 10), ("py:pkg.layer.scan", "cpp:mini::scan_autocast", 10)}
    names = {n["name"] for n in bundle["graph"]["nodes"]}
    assert "torchop:mini_ops::scan" in {n["id"] for n in bundle["graph"]["nodes"]}
    # the blocks are no functions; the module-shaped one stays a macro's use, and says so
    assert "MY_LIBRARY_FRAGMENT" not in names and "MY_LIBRARY_IMPL" not in names and "MY_MODULE" in names
    said = {(d["path"], d["line"], d["code"], d["message"].split("(")[0]) for d in bundle["diagnostics"]}
    assert {s for s in said if s[2] == "macro-body"} == {("csrc/scan.cpp", 20, "macro-body", "MY_MODULE"),
                                                         ("csrc/scan.cpp", 26, "macro-body", "MY_FRAGMENT")}


def test_operators_registered_through_a_macro_of_a_header_bind(bundle):
    binds = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    assert {b for b in binds if b[0] == "py:pkg.layer.through_macros"} == {
        # a macro used in a block macro's body that opens a torch library block, both in the header
        ("py:pkg.layer.through_macros", "cpp:mini::version", 14),
        # in a block written out; a macro the system does not define registers nothing known
        ("py:pkg.layer.through_macros", "cpp:mini::twice", 16),
    }
    assert bundle["stats"]["bindings"]["torch_op_calls_unregistered"] == 1  # thrice
