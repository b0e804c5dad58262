"""`binds` edges from ``torch.ops.<ns>.<op>`` to the Python function registered as the operator
(fixtures/pyops_mini: vLLM's shapes, a Library, two levels of registration helpers imported from
another module, ``@torch.library.custom_op``, ``lib.impl``)."""

from __future__ import annotations

import ast

import pytest

from extractor.bindings.python_ops import DEF, REF, OpArg, scan_registrations
from extractor.context import ExtractOptions
from extractor.python.index import module_index
from tests.conftest import FIXTURES, extract_real_with_context

OPS = "mini/ops/attention.py"


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    options = ExtractOptions(jobs=1, cache_dir=tmp_path_factory.mktemp("cache"), probe_structs=False)
    extraction, ctx = extract_real_with_context(FIXTURES / "pyops_mini", options=options)
    return extraction.bundle, ctx


def test_operator_calls_bind_to_the_python_functions_registered_as_them(mini):
    bundle, _ctx = mini
    binds = {(e["source"], e["target"], e["path"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    assert binds == {
        # registered through register_eager -> register_op -> lib.impl, helpers imported from mini.registry
        ("py:mini.ops.attention.Layer.forward", "py:mini.ops.attention.attend", OPS, 38),
        ("py:mini.ops.attention.Layer.forward", "py:mini.ops.attention.fused", OPS, 39),  # @custom_op
        ("py:mini.ops.attention.Layer.forward", "py:mini.registry.scale", OPS, 40),  # lib.impl("direct", ...)
        # an operator held in an attribute and called through it; its library handed to the helper
        ("py:mini.ops.attention.Layer.__init__", "py:mini.ops.attention.attend", OPS, 35),
        ("py:mini.ops.attention.Layer.backward", "py:mini.ops.attention.attend", OPS, 43),
    }


def test_the_bindings_say_where_the_operator_was_registered(mini):
    _bundle, ctx = mini
    found = {(b.line, b.target, b.mechanism, b.registered_at, b.dispatch, b.namespace)
             for b in ctx.results["bindings"].shared.bindings}
    assert (38, "py:mini.ops.attention.attend", "torch-op-python", f"{OPS}:16", "", "read") in found
    assert (39, "py:mini.ops.attention.fused", "torch-op-python", f"{OPS}:26", "", "read") in found
    assert (40, "py:mini.registry.scale", "torch-op-python", "mini/registry.py:27", "CUDA", "read") in found


def test_stats_and_the_registration_whose_function_is_not_found(mini):
    bundle, _ctx = mini
    stats = bundle["stats"]["bindings"]
    assert {k: v for k, v in stats.items() if "python" in k or "forwarder" in k or k.startswith("torch_op")} == {
        "forwarder_calls_resolved": 3,  # attend, attend_fake_only, tiled
        "forwarder_calls_unresolved": 1,  # gelu: its function is a value, not a def
        "python_op_forwarders": 2,  # register_op, register_eager
        "python_op_registrations": 6,
        "python_op_registrations_unresolved": 1,
        "torch_op_calls": 7,
        "torch_op_calls_bound_python": 5,
        "torch_op_calls_python_function_unresolved": 1,  # torch.ops.mini.gelu
        "torch_op_calls_unregistered": 1,  # torch.ops.mini.missing: nobody registers it
        "torch_ops_registered": 0,
        "torch_ops_registered_python": 6,
    }
    [said] = [d for d in bundle["diagnostics"] if d["code"] == "python-op-function-unresolved"]
    assert (said["path"], said["line"], said["severity"]) == (OPS, 23, "info")
    assert "torch.ops.mini.gelu" in said["message"] and "'gelu_kernel'" in said["message"]


TORCH_LIBRARY_FORMS = '''
import torch
from torch.library import custom_op, impl, register_fake


@custom_op("ns::plain", mutates_args=())
def plain(x):
    return x


@register_fake("ns::plain")
def plain_fake(x):
    return x


@torch.library.register_kernel("ns::kernel", "cuda")
def kernel(x):
    return x


def helper(x):
    return x


impl("ns::helped.default", "CPU", helper)
torch.library.impl("ns::far", "CPU", torch.nn.functional.relu)
'''


def test_the_scanner_reads_torch_librarys_decorators_and_calls_but_not_fake_kernels():
    facts = scan_registrations(module_index(ast.parse(TORCH_LIBRARY_FORMS)))
    assert facts is not None
    assert [(r.line, r.namespace, r.op, r.function, r.how) for r in facts.registrations] == [
        (6, "ns", "plain", OpArg("", DEF, "plain"), "custom_op"),
        (16, "ns", "kernel", OpArg("", DEF, "kernel"), "register_kernel"),
        (25, "ns", "helped", OpArg("", DEF, "helper"), "impl"),
        (26, "ns", "far", OpArg("", REF, "torch.nn.functional.relu"), "impl"),
    ]


@pytest.mark.real
def test_vllms_attention_ops_bind_to_the_python_functions_behind_them(vllm_src):
    from tests.conftest import cache_root, extract_real

    options = ExtractOptions(jobs=2, cache_dir=cache_root() / "archdiff", probe_structs=False)
    bundle = extract_real(vllm_src, options=options).bundle
    binds = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    layer = "py:vllm.attention.layer"
    assert (f"{layer}.Attention.forward", f"{layer}.unified_attention", 293) in binds
    assert (f"{layer}.Attention.forward", f"{layer}.unified_attention_with_output", 280) in binds
    stats = bundle["stats"]["bindings"]
    # measured: 44 direct_register_custom_op calls + 2 @torch.library.custom_op; before, 199 unregistered
    assert stats["python_op_registrations"] == 46 and "python_op_registrations_unresolved" not in stats
    assert stats["torch_op_calls_bound_python"] == 118
    assert stats["torch_op_calls_bound"] == 310  # the C++ bindings as before
    # 81 before a method called on what an operator returned (`out.size()` read as torch.ops._C.op().size)
    # stopped counting as an operator call: 9 of them in vLLM 0.10.2; then 41 calls of PyTorch's own
    # operators (aten 21, symm_mem 14, higher_order 6) counted apart
    assert stats["torch_op_calls_unregistered"] == 31
    assert stats["torch_op_calls_torch_own"] == 41
