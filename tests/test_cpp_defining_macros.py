"""Macros of a file that define one function named by pasting their parameters, expanded at each
use at namespace level: `MAKE_C(scale, float, 32)` defines `cscale_32` (bitsandbytes' shape:
its `extern "C"` wrappers for ctypes are all written so, the uses without a `;`, which makes
tree-sitter swallow the next `#define` into an ERROR node)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from extractor.context import ExtractOptions
from extractor.model import EdgeKind
from extractor.run.pipeline import extract_system
from tests.cpp_support import cpp_graph, edges

SOURCE = r'''
template <typename T> void kernel(T* p, int n) {}

#define MAKE_IMPL(name, T, bits)                 \
    void name##_##bits(T* p, int n) {            \
        kernel<T>(p, n);                         \
    }

MAKE_IMPL(scale, float, 32)
MAKE_IMPL(scale, double, 64)

#define MAKE_C(name, T, bits)                    \
    void c##name##_##bits(T* p, int n) {         \
        name##_##bits(p, n);                     \
    }

#define INSTANTIATE(T) template void kernel<T>(T* p, int n);
INSTANTIATE(float)

#define HOLDER(T) struct T##Holder { T value; };
HOLDER(Foo)
#define RESTRICT
#define TARGET_AVX2
#define MAKE_ACC(name) void accumulate_##name(float* RESTRICT acc, int n) { step_##name(acc); }
TARGET_AVX2 static MAKE_ACC(avx2)

namespace ops {
MAKE_IMPL(shift, float, fp32)
}

void helper() {
    MAKE_IMPL(inside, float, body)
}

extern "C" {
MAKE_C(scale, float, 32)
MAKE_C(scale, double, 64)
}
'''


def test_each_use_at_namespace_level_defines_the_function_its_expansion_names(tmp_path: Path):
    graph = cpp_graph(tmp_path, {"interface.cpp": SOURCE.lstrip("\n")})
    expanded = {n.id: (n.line, n.signature) for n in graph.nodes if "macro-expanded" in n.tags}
    assert expanded == {
        "cpp:scale_32": (8, "(float* p, int n)"),
        "cpp:scale_64": (9, "(double* p, int n)"),
        "cpp:accumulate_avx2": (24, "(float* acc, int n)"),  # after a specifier and an attribute macro
        "cpp:ops::shift_fp32": (27, "(float* p, int n)"),
        "cpp:cscale_32": (35, "(float* p, int n)"),
        "cpp:cscale_64": (36, "(double* p, int n)"),
        "cpp:FooHolder": (20, ""),  # the struct one names by pasting: written out as a member macro's use is
    }  # not `inside_body` (a statement of helper's), not INSTANTIATE's (it pastes no name)
    assert graph.shared.c_linkage >= {"cpp:cscale_32", "cpp:cscale_64"}
    assert "cpp:scale_32" not in graph.shared.c_linkage
    assert "cpp:accumulate_avx2" in graph.shared.internal  # `static` kept from before the use
    calls = edges(graph, EdgeKind.CALLS)
    assert {("cpp:cscale_32", "cpp:scale_32"), ("cpp:cscale_64", "cpp:scale_64"),
            ("cpp:scale_32", "cpp:kernel")} <= calls
    # the function macros, all expanded, and the struct's, written out, are not said to hide definitions
    assert not [d for d in graph.diagnostics if d.code == "macro-definitions"]


def test_python_ctypes_calls_bind_to_the_functions_a_macro_defines(tmp_path: Path):
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "interface.cpp").write_text(SOURCE.lstrip("\n"))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "native.py").write_text(textwrap.dedent('''
        import ctypes

        lib = ctypes.CDLL("libinterface.so")


        def scale(ptr, n):
            lib.cscale_32(ptr, n)
            return lib.cscale_64(ptr, n)
    ''').lstrip("\n"))
    options = ExtractOptions(jobs=1, cache_dir=None, probe_structs=False)
    bundle = extract_system([str(tmp_path)], options=options).bundle
    binds = sorted((e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds")
    assert binds == [("py:pkg.native.scale", "cpp:cscale_32", 7), ("py:pkg.native.scale", "cpp:cscale_64", 8)]
    assert "ctypes_names_outside" not in bundle["stats"]["bindings"]
    assert not [d for d in bundle["diagnostics"] if d["code"] == "scanner-failed"]  # HOLDER defines a struct


KERNELS = r'''
#define AFFINE_OP(TYPENAME, FN_NAME, AFFINE) \
extern "C" __global__ void FN_NAME(          \
    const size_t numel, const TYPENAME *inp, \
    TYPENAME *out) {                         \
    for (size_t i = 0; i < numel; ++i) {     \
        TYPENAME x = inp[i];                 \
        out[i] = AFFINE;                     \
    }                                        \
}                                            \

AFFINE_OP(float, affine_f32, x * 2)
AFFINE_OP(double, affine_f64, x * 2)
'''


def test_a_defining_macro_may_write_its_function_extern_c(tmp_path: Path):
    # candle's kernels: `extern "C" __global__ void FN_NAME(...)`, one per dtype, loaded by name from Rust
    graph = cpp_graph(tmp_path, {"affine.cu": KERNELS.lstrip("\n")})
    expanded = {n.id: (n.kind.value, n.line) for n in graph.nodes if "macro-expanded" in n.tags}
    assert expanded == {"cpp:affine_f32": ("kernel", 11), "cpp:affine_f64": ("kernel", 12)}


HEADS = r'''
namespace flash {
#if defined(__CUDA_ARCH__)
#define PARAM_MODIFIER __grid_constant__
#else
#define PARAM_MODIFIER
#endif

// the macro is the kernel's head; each use gives it a name, template parameters and a body
#define DEFINE_FORWARD_KERNEL(kernelName, ...) \
template<typename Traits, __VA_ARGS__> \
__global__ void kernelName(PARAM_MODIFIER const Params params)

#define DEFINE_HELPER(name) inline int name(int x)

DEFINE_FORWARD_KERNEL(fwd_kernel, bool Is_dropout, bool Is_causal) {
    flash::compute_attn<Traits, Is_dropout, Is_causal>(params);
}

DEFINE_FORWARD_KERNEL(splitkv_kernel, bool Is_causal) {
    combine(params);
}

DEFINE_HELPER(twice) { return helper(x); }

#define NOT_A_HEAD(name, value) int name = value
void compute_attn(const Params params) {}
void combine(const Params params) {}
int helper(int x) { return x; }
}
'''


def test_a_macro_that_writes_a_function_head_defines_the_function_each_use_gives_a_body(tmp_path: Path):
    # flash-attention's DEFINE_FLASH_FORWARD_KERNEL: the uses were one function named after the macro,
    # and the kernels they define were missing
    graph = cpp_graph(tmp_path, {"launch_template.h": HEADS.lstrip("\n")})
    expanded = {n.id: (n.kind.value, n.line, "template" in n.tags) for n in graph.nodes if "macro-expanded" in n.tags}
    assert expanded == {"cpp:flash::fwd_kernel": ("kernel", 15, True),
                        "cpp:flash::splitkv_kernel": ("kernel", 19, True),
                        "cpp:flash::twice": ("function", 23, False)}
    assert not [n.id for n in graph.nodes if "DEFINE_" in n.id]
    assert {("cpp:flash::fwd_kernel", "cpp:flash::compute_attn"), ("cpp:flash::splitkv_kernel", "cpp:flash::combine"),
            ("cpp:flash::twice", "cpp:flash::helper")} <= edges(graph, EdgeKind.CALLS)
