"""A custom autograd function's ``F.apply(...)`` runs ``F.forward``: torch.autograd.Function's
inherited classmethod calls the subclass's static forward (Liger-Kernel's modules, vLLM's Triton
attention). The chain from a module's forward through the function to the kernel it launches is
then one path of calls. ``apply`` of any other class, or one the class defines, is not rewritten."""

from __future__ import annotations

from tests.helpers import edge_set
from tests.native_support import written_bundle

SOURCE = '''
import torch
from torch.autograd import Function


def _kernel(x):
    return x


class NormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return _kernel(x)


class ScaledNorm(NormFunction):  # forward inherited from a base of the system
    pass


class Gate(Function):  # the base imported by name
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def apply(x):  # its own apply is the one called
        return x


class Plain:
    @staticmethod
    def forward(x):
        return x


class Norm(torch.nn.Module):
    def forward(self, x):
        NormFunction.apply(x)
        ScaledNorm.apply(x)
        Gate.apply(x)
        return Plain.apply(x)
'''

M = "py:pkg.mod."


def test_apply_of_a_custom_autograd_function_runs_its_forward(tmp_path):
    calls = edge_set(written_bundle(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": SOURCE}), "calls")
    assert {target for source, target in calls if source == M + "Norm.forward"} == {
        M + "NormFunction.forward",  # NormFunction.apply and ScaledNorm.apply, its base's forward
        M + "Gate.apply"}
    assert (M + "NormFunction.forward", M + "_kernel") in calls


BOUND = {
    "pkg/__init__.py": "",
    "pkg/act.py": '''
import torch


class SwiGLUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        return x * y


class Plain:
    pass


swiglu = SwiGLUFunction.apply
plain = Plain.apply


def gate(x, y):
    return swiglu(x, y)
''',
    "pkg/mlp.py": '''
from pkg.act import plain, swiglu
from pkg import act


def mlp(x, y):
    plain(x)
    act.swiglu(x, y)
    return swiglu(x, y)
''',
}


def test_a_name_bound_to_a_custom_autograd_functions_apply_runs_its_forward(tmp_path):
    # flash-linear-attention's, mamba's and vLLM's shape: `swiglu = SwiGLUFunction.apply`, then `swiglu(x, y)`
    calls = edge_set(written_bundle(tmp_path, BOUND), "calls")
    assert {(source, target) for source, target in calls if target.endswith("forward") or "Plain" in target} == {
        ("py:pkg.act.gate", "py:pkg.act.SwiGLUFunction.forward"),
        ("py:pkg.mlp.mlp", "py:pkg.act.SwiGLUFunction.forward")}  # Plain's apply is no autograd function's
