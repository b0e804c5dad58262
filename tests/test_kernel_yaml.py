"""Operator kernels registered through a kernel YAML file (ExecuTorch's functions.yaml and
custom_ops.yaml): read as implementations of their operators, their functions with torchgen's
`native` sub-namespace."""

from __future__ import annotations

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system

RUNTIME = {
    "kernels/portable/functions.yaml": """# portable kernels
- op: add.out
  kernels:
    - arg_meta: null
      kernel_name: torch::executor::add_out

- op: acos.out
  kernels:
    - arg_meta: null
      kernel_name: torch::executor::acos_out
""",
    "kernels/portable/cpu/op_add.cpp": """namespace torch { namespace executor { namespace native {
Tensor& add_out(KernelRuntimeContext& ctx, const Tensor& a, const Tensor& b, Tensor& out) { return out; }
} } }
""",
    "kernels/aten/functions.yaml": "- op: add.out\n- op: sub.out\n",  # ATen mode: a list of operators, no kernels
    "custom/custom_ops.yaml": """- func: my_ops::mul3.out(Tensor input, *, Tensor(a!) output) -> Tensor(a!)
  kernels:
    - arg_meta: null
      kernel_name: custom::mul3_out_impl # native:: is added
- func: my_ops::gone.out(Tensor input, *, Tensor(a!) output) -> Tensor(a!)
  kernels:
    - arg_meta: null
      kernel_name: custom::gone_out
""",
    "custom/op_mul3.cpp": """namespace custom {
Tensor& mul3_out_impl(const Tensor& in, Tensor& out);  // not the kernel: that one is custom::native's
namespace native {
Tensor& mul3_out_impl(KernelRuntimeContext& ctx, const Tensor& in, Tensor& out) { return out; }
} }
""",
    "deploy/values.yaml": "replicas: 2\nkernel_name: not-a-list\n",
    "app/__init__.py": "",
    "app/run.py": """import torch


def mul3(x, out):
    return torch.ops.my_ops.mul3.out(x, output=out)


def gone(x, out):
    return torch.ops.my_ops.gone.out(x, output=out)


def add(a, b, out):
    return torch.ops.aten.add.out(a, b, out=out)
""",
}


def test_kernels_a_yaml_registers_implement_their_operators(tmp_path):
    for rel, code in RUNTIME.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code)
    bundle = extract_system([str(tmp_path)], options=ExtractOptions(jobs=1, cache_dir=None,
                                                                    probe_structs=False)).bundle
    binds = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    # the custom operator binds to its kernel; PyTorch's own `aten::add` is PyTorch's when Python calls it,
    # though the system's runtime has a kernel for it
    assert binds == {("py:app.run.mul3", "cpp:custom::native::mul3_out_impl", 5)}
    nodes = {n["id"]: n for n in bundle["graph"]["nodes"]}
    assert nodes["cpp:torch::executor::native::add_out"]["api"] == "public: torch op aten::add"
    cpp = bundle["stats"]["cpp"]
    assert (cpp["kernel_yaml_registrations"], cpp["kernel_yaml_registrations_unresolved"]) == (4, 2)
    said = {(d["path"], d["line"], d["code"]): d["message"] for d in bundle["diagnostics"]
            if d["code"] in ("kernel-function-unresolved", "binding-without-impl")}
    assert set(said) == {("kernels/portable/functions.yaml", 9, "kernel-function-unresolved"),
                         ("custom/custom_ops.yaml", 7, "kernel-function-unresolved"),
                         ("app/run.py", 9, "binding-without-impl")}
    assert "torch::executor::native::acos_out (line 9)" in said["kernels/portable/functions.yaml", 9,
                                                                 "kernel-function-unresolved"]
    assert "kernel YAML (custom/custom_ops.yaml:7)" in said["app/run.py", 9, "binding-without-impl"]
    assert bundle["stats"]["bindings"]["torch_op_calls_torch_own"] == 1
