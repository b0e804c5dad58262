"""A call of an item of a function or class of the system runs it: a Triton (or Numba) kernel
launched over a grid, ``kernel[grid](...)``, and a generic class made through its alias,
``Box[int](...)``; an item of anything else (a dict of handlers) is not followed."""

from __future__ import annotations

from pathlib import Path

from tests.native_support import written_bundle

FILES = {
    "ops/__init__.py": "",
    "ops/attention.py": '''
        from typing import Generic, TypeVar

        import triton
        import triton.language as tl

        T = TypeVar("T")


        @triton.autotune(configs=[], key=["n"])
        @triton.jit
        def _fwd_kernel(x_ptr, n, BLOCK: tl.constexpr):
            pid = tl.program_id(0)


        class Box(Generic[T]):
            pass


        HANDLERS = {"print": print}


        def forward(x, n):
            grid = (triton.cdiv(n, 16),)
            _fwd_kernel[grid](x, n, BLOCK=16)
            box = Box[int]()
            HANDLERS["print"](box)
            return x
    ''',
    "ops/api.py": '''
        from . import attention


        def run(x):
            attention._fwd_kernel[(1,)](x, 1, BLOCK=16)
    ''',
}


def test_a_kernel_launched_over_a_grid_and_a_generic_class_made_through_its_alias_are_calls(tmp_path: Path):
    bundle = written_bundle(tmp_path, FILES)
    calls = sorted((e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "calls")
    assert calls == [("py:ops.api.run", "py:ops.attention._fwd_kernel", 5),
                     ("py:ops.attention.forward", "py:ops.attention.Box", 25),
                     ("py:ops.attention.forward", "py:ops.attention._fwd_kernel", 24)]
    # HANDLERS["print"](box) is an item of a dict: unresolved, as any call the graph cannot follow
    assert bundle["stats"]["python"]["calls_unresolved"] == 1


HELD = {
    "ops/__init__.py": "",
    "ops/tril.py": '''
        import triton


        @triton.jit
        def k16(a):
            pass


        @triton.jit
        def k32(a):
            pass


        @triton.jit
        def k64(a):
            pass


        def make():
            return k64


        def solve(a, bt, merge=k16):
            if bt == 16:
                fn = k16
            elif bt == 32:
                fn = k32
            else:
                fn = None
            fn[(1,)](a)
            pick = k32 if bt == 32 else k64
            pick(a)
            made = k16
            made = make()
            made[(1,)](a)
            merge[(1,)](a)
            for looped in (k16, k32):
                looped[(1,)](a)
            looped = k64


        def other(a):
            fn[(1,)](a)
    ''',
}


def test_a_call_through_a_local_every_binding_gives_a_name_calls_each_name(tmp_path: Path):
    # flash-linear-attention's launchers pick a Triton kernel into a local, by branches or a condition
    bundle = written_bundle(tmp_path, HELD)
    calls = sorted((e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "calls")
    # one edge per caller and callee, at its first line: `pick(a)` adds k64 (k32 is fn's already)
    assert calls == [("py:ops.tril.solve", "py:ops.tril.k16", 30), ("py:ops.tril.solve", "py:ops.tril.k32", 30),
                     ("py:ops.tril.solve", "py:ops.tril.k64", 32), ("py:ops.tril.solve", "py:ops.tril.make", 34)]
    # a local also given a call's result, a parameter, a loop's target, and another function's use of the
    # name: unresolved
    assert bundle["stats"]["python"]["calls_unresolved"] == 4


def test_a_kernel_launched_through_torchs_triton_wrapper_is_a_call(tmp_path: Path):
    # mamba's shape: torch.library.wrap_triton(kernel)[grid](...), which torch.compile can trace
    bundle = written_bundle(tmp_path, {"ops/__init__.py": "", "ops/rotary.py": '''
        import torch
        import triton
        from torch.library import capture_triton


        @triton.jit
        def rotary_kernel(x):
            pass


        def rotary(x):
            torch.library.wrap_triton(rotary_kernel)[(1,)](x)
            capture_triton(rotary_kernel)[(1,)](x)
            torch.library.wrap_triton(rotary_kernel, x)[(1,)](x)
    '''})
    calls = sorted((e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "calls")
    assert calls == [("py:ops.rotary.rotary", "py:ops.rotary.rotary_kernel", 12)]
    assert bundle["stats"]["python"]["calls_unresolved"] == 1  # a wrapper given more than the kernel: not read


def test_a_kernel_handed_to_a_launcher_that_launches_that_parameter_is_called_by_the_caller(tmp_path: Path):
    # flash-linear-attention's Ascend backends: launch_grid_chunked(kernel, grid, ...) launches
    # kernel[...](...) in a closure; the caller names the kernel
    bundle = written_bundle(tmp_path, {"ops/__init__.py": "", "ops/launch.py": '''
        def launch_grid_chunked(kernel, grid, *, kernel_kwargs):
            def _recurse(ax):
                kernel[grid](**kernel_kwargs)
            _recurse(0)


        def run_later(kernel, grid):
            return kernel
    ''', "ops/chunk.py": '''
        import triton

        from ops.launch import launch_grid_chunked, run_later


        @triton.jit
        def fwd_kernel(x):
            pass


        @triton.jit
        def bwd_kernel(x):
            pass


        def plain(x):
            pass


        def forward(x):
            launch_grid_chunked(fwd_kernel, (1,), kernel_kwargs={})
            launch_grid_chunked(kernel=bwd_kernel, grid=(1,), kernel_kwargs={})
            run_later(bwd_kernel, (1,))
            launch_grid_chunked((1,), plain, kernel_kwargs={})


        def backward(x, wide):
            fn = bwd_kernel if wide else plain
            launch_grid_chunked(fn, (1,), kernel_kwargs={})
    '''})
    calls = sorted((e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "calls"
                   if "kernel" in e["target"])
    # a launcher that does not launch the parameter (run_later), or a parameter the kernel is not given as
    # (grid), launches nothing
    assert calls == [("py:ops.chunk.backward", "py:ops.chunk.bwd_kernel", 29),  # through a local holding it
                     ("py:ops.chunk.forward", "py:ops.chunk.bwd_kernel", 22),
                     ("py:ops.chunk.forward", "py:ops.chunk.fwd_kernel", 21)]
