"""Operators registered through a module's alias of torch.library's registering functions
(``register_kernel = torch.library.register_kernel`` in one module, ``from .._ops import
register_kernel`` and ``@register_kernel("ns::op", "cuda")`` in the backends), and the decorator
those functions return applied in a call (``register_kernel("ns::op", "xpu")(other.fn)``)."""

from __future__ import annotations

from pathlib import Path

from tests.native_support import written_bundle


FILES = {
    "pkg/__init__.py": "",
    "pkg/_ops.py": '''
        import torch

        register_kernel = torch.library.register_kernel
        register_fake = torch.library.register_fake

        torch.library.define("pkg::scale", "(Tensor x) -> Tensor")


        @register_fake("pkg::scale")
        def _(x):
            return x


        @register_kernel("pkg::local", "cpu")
        def local_impl(x):
            return x
    ''',
    "pkg/helpers.py": '''
        def register(name, key):
            return lambda fn: fn
    ''',
    "pkg/backends/__init__.py": "",
    "pkg/backends/triton_ops.py": '''
        def quantize(x):
            return x
    ''',
    "pkg/backends/cuda.py": '''
        from .._ops import register_fake, register_kernel
        from ..helpers import register


        @register_kernel("pkg::scale", "cuda")
        def _(x):
            return x * 2


        @register_fake("pkg::faked")
        def faked(x):
            return x


        @register("pkg::decoy", "cuda")
        def decoy(x):
            return x
    ''',
    "pkg/backends/xpu.py": '''
        import torch

        from .._ops import register_kernel
        from . import triton_ops


        def helper(x):
            return x


        register_kernel("pkg::quantize", "xpu")(triton_ops.quantize)
        torch.library.custom_op("pkg::direct", mutates_args=())(helper)
        register_kernel("pkg::handed", "xpu", helper)(triton_ops.quantize)
    ''',
    "pkg/api.py": '''
        import torch


        def run(x):
            torch.ops.pkg.scale(x)
            torch.ops.pkg.local(x)
            torch.ops.pkg.quantize(x)
            torch.ops.pkg.direct(x)
            torch.ops.pkg.faked(x)
            torch.ops.pkg.decoy(x)
            return torch.ops.pkg.handed(x)
    ''',
}


def _bundle(root: Path) -> dict:
    return written_bundle(root, FILES)


def test_an_alias_imported_from_another_module_registers_and_its_decorator_applied_in_a_call(tmp_path: Path):
    bundle = _bundle(tmp_path)
    binds = sorted((e["target"], e["line"]) for e in bundle["graph"]["edges"]
                   if e["kind"] == "binds" and e["source"] == "py:pkg.api.run")
    assert binds == [
        ("py:pkg._ops.local_impl", 6),  # the alias used in its own module
        ("py:pkg.backends.cuda._", 5),  # @register_kernel imported from pkg._ops
        ("py:pkg.backends.triton_ops.quantize", 7),  # register_kernel(...)(triton_ops.quantize)
        ("py:pkg.backends.xpu.helper", 8),  # torch.library.custom_op(...)(helper)
    ]
    stats = bundle["stats"]["bindings"]
    # faked (register_fake is no implementation), decoy (an ordinary function of the system) and
    # handed (its function given already: the call's result is no decorator) register nothing
    assert stats["torch_op_calls_unregistered"] == 3
    assert stats["python_op_registrations"] == 4


BRANCHED = {
    "fa/__init__.py": "",
    # flash-attention's interface: the alias is torch's where torch has custom_op, a no-op elsewhere
    "fa/interface.py": '''
        import torch

        if torch.__version__ >= "2.4.0":
            _custom_op_wrapper = torch.library.custom_op
            _register_fake_wrapper = torch.library.register_fake
        else:
            def noop_custom_op_wrapper(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
                return fn

            _custom_op_wrapper = noop_custom_op_wrapper
            _register_fake_wrapper = noop_custom_op_wrapper

        try:
            _kernel_wrapper = torch.library.register_kernel
        except AttributeError:
            _kernel_wrapper = None


        @_custom_op_wrapper("fa::_forward", mutates_args=(), device_types="cuda")
        def _forward(q):
            return q


        @_register_fake_wrapper("fa::_forward")
        def _forward_fake(q):
            return q


        @_kernel_wrapper("fa::_backward", "cuda")
        def _backward(q):
            return q


        def forward(q):
            torch.ops.fa._forward(q)
            return torch.ops.fa._backward(q)
    ''',
}


def test_an_alias_bound_in_a_branch_at_module_level_registers(tmp_path: Path):
    bundle = written_bundle(tmp_path, BRANCHED)
    binds = sorted((e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds")
    assert binds == [("py:fa.interface.forward", "py:fa.interface._backward", 36),
                     ("py:fa.interface.forward", "py:fa.interface._forward", 35)]
    assert "torch_op_calls_unregistered" not in bundle["stats"]["bindings"]


COMPOSED = {
    "te/__init__.py": "",
    # TransformerEngine's EP ops: the namespace a module constant, the name an f-string of it
    "te/ep.py": '''
        import torch

        _LIB = "te_ep"


        @torch.library.custom_op(f"{_LIB}::prepare", mutates_args=(), device_types="cuda")
        def _prepare_op(x):
            return x


        @torch.library.custom_op(_LIB + "::combine", mutates_args=())
        def _combine_op(x):
            return x


        @torch.library.custom_op(f"{_LIB!r}::quoted", mutates_args=())
        def _quoted_op(x):
            return x


        def run(x):
            torch.ops.te_ep.prepare(x)
            return torch.ops.te_ep.combine(x)
    ''',
}


def test_an_operator_name_made_of_module_constants_registers(tmp_path: Path):
    bundle = written_bundle(tmp_path, COMPOSED)
    binds = sorted((e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds")
    assert binds == [("py:te.ep.run", "py:te.ep._combine_op", 23), ("py:te.ep.run", "py:te.ep._prepare_op", 22)]
    assert bundle["stats"]["bindings"]["python_op_registrations"] == 2  # not the one with a conversion (!r)
