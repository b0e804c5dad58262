"""Operators a plugin registers with its engine's helper, which the plugin's tree does not define
(fixtures/vllm_plugin_mini: the shape of vllm-ascend, registering with vLLM's
``direct_register_custom_op`` imported from ``vllm.utils`` or ``vllm.utils.torch_utils``): their
``torch.ops.<ns>.<op>`` calls bind to the plugin's Python functions (``registrars.yaml``)."""

from __future__ import annotations

import pytest

from tests.native_support import fixture_bundle

MODEL = "npu_plugin/model.py"


@pytest.fixture(scope="module")
def bundle() -> dict:
    return fixture_bundle("vllm_plugin_mini")


def test_operators_registered_with_the_engine_helper_bind_to_the_plugin_functions(bundle):
    binds = sorted((e["source"], e["target"], e["path"], e["line"]) for e in bundle["graph"]["edges"]
                   if e["kind"] == "binds")
    assert binds == [
        # direct_register_custom_op(op_name=..., op_func=...) imported from vllm.utils: namespace vllm
        ("py:npu_plugin.model.Layer.forward", "py:npu_plugin.ops._gather_impl", MODEL, 8),
        # target_lib=plugin_lib: the plugin's own Library("npu_plugin", ...) decides the namespace
        ("py:npu_plugin.model.Layer.forward", "py:npu_plugin.ops._own_impl", MODEL, 10),
        # positional, imported under another name from vllm.utils.torch_utils
        ("py:npu_plugin.model.Layer.forward", "py:npu_plugin.ops._rope_impl", MODEL, 9),
        # the plugin's own helper handing its parameters on to the engine's
        ("py:npu_plugin.model.Layer.forward", "py:npu_plugin.ops._wrapped_impl", MODEL, 11),
    ]


def test_a_function_of_the_tree_with_the_helpers_name_registers_nothing(bundle):
    stats = bundle["stats"]["bindings"]
    # torch.ops.vllm.mine: local_ops defines its own direct_register_custom_op, which is no forwarder
    assert stats["torch_op_calls_unregistered"] == 1
    assert (stats["registrar_calls"], stats["python_op_forwarders"], stats["torch_ops_registered_python"]) == (3, 1, 4)
    assert not [d for d in bundle["diagnostics"] if d["code"].startswith("python-op")]
