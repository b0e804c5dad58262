"""Kernels that CUDA code launches without `<<<...>>>`, kernels written through a macro, CuTe's alignment
macro:

- a host function that launches the kernel handed to it (launchers.yaml): `cudaLaunchKernelEx(&config,
  kernel, args...)`, `cudaLaunchKernel((void*)k, ...)`, CUTLASS's `launch_kernel_on_cluster(params,
  (void*)kernel, ...)` (FlashMLA launches most of its kernels so);
- a local holding a kernel whose template arguments hold parentheses (`&k<decltype(p)>`), or one of two
  by a condition (`auto kernel = prefill ? &k1<T> : &k2<T>;`);
- a function qualified by CUTLASS's `CUTLASS_GLOBAL` (`__global__` in a header outside the system:
  DeepGEMM writes every kernel so) is a kernel, in a `.cuh` and in a C++ header alike;
- `struct CUTE_ALIGNAS(16) X {` (CuTe's `alignas(n)`) keeps X and its members."""

from __future__ import annotations

from pathlib import Path

from extractor.model import EdgeKind
from tests.cpp_support import cpp_graph

KERNELS = r'''
namespace mla {
template <typename T, typename P>
__global__ void decode_kernel(P params) {}

template <typename T>
__global__ void prefill_kernel(int params) {}

__global__ void combine_kernel(int params) {}

__global__ void meta_kernel(int params) {}

__global__ void cluster_kernel(int params) {}

template <typename T, typename P>
void run_decode(P params, cudaStream_t stream) {
    auto mla_kernel = &decode_kernel<T, decltype(params)>;
    mla_kernel<<<1, 128, 0, stream>>>(params);
}

template <typename T>
void run_either(bool prefill, int params, cudaStream_t stream) {
    auto kernel = prefill ? &prefill_kernel<T> : &decode_kernel<T, int>;
    cudaLaunchConfig_t config = {dim3(1), dim3(128), 0, stream, nullptr, 0};
    cudaLaunchKernelEx(&config, kernel, params);
}

void run_others(int params, cudaStream_t stream) {
    void* args[] = {&params};
    cudaLaunchKernel((void*)combine_kernel, dim3(1), dim3(32), args, 0, stream);
    cutlass::ClusterLaunchParams launch_params = {dim3(1), dim3(32), dim3(2, 1, 1), 0, stream};
    cutlass::launch_kernel_on_cluster(launch_params, (void*)&cluster_kernel, params);
    cudaLaunchKernelEx(&config_of(params), get_kernel(params), params);  // a call's result: not known
    cudaFuncSetAttribute(meta_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 0);  // no launch
}
}
'''


def _launched(graph) -> set[tuple[str, str, int]]:
    return {(e.source, e.target, e.line) for e in graph.edges if e.kind is EdgeKind.LAUNCHES}


def test_launchers_and_held_kernels_launch_the_kernel_they_name(tmp_path: Path):
    graph = cpp_graph(tmp_path, {"mla.cu": KERNELS.lstrip("\n")})
    assert _launched(graph) == {
        ("cpp:mla::run_decode", "cpp:mla::decode_kernel", 17),  # template arguments with decltype(...)
        ("cpp:mla::run_either", "cpp:mla::prefill_kernel", 24),  # one of two by a condition, launched by
        ("cpp:mla::run_either", "cpp:mla::decode_kernel", 24),  # cudaLaunchKernelEx
        ("cpp:mla::run_others", "cpp:mla::combine_kernel", 29),  # cast to void*
        ("cpp:mla::run_others", "cpp:mla::cluster_kernel", 31)}  # CUTLASS's cluster launch
    # the launchers stay calls (of functions outside the system)
    assert graph.stats.get("launches_unresolved", 0) == 0


CUTLASS_KERNELS = r'''
#pragma once
namespace deep_gemm {
template <int kNumThreads, typename T>
CUTLASS_GLOBAL void __launch_bounds__(kNumThreads, 1)
sm90_gemm_impl(T* out, int m) {}

template <int kNumThreads>
CUTLASS_GLOBAL __launch_bounds__(kNumThreads, 1) void
sm90_logits_impl(float* out) {}

CUTLASS_DEVICE void helper(float* out) {}
}
'''


def test_a_function_qualified_by_cutlass_global_is_a_kernel(tmp_path: Path):
    code = CUTLASS_KERNELS.lstrip("\n")
    graph = cpp_graph(tmp_path, {"impls/sm90_gemm.cuh": code,
                                 "impls/sm90_gemm_copy.h": code.replace("deep_gemm", "cpp_copy")})
    kinds = {n.id: n.kind.value for n in graph.nodes}
    for ns in ("deep_gemm", "cpp_copy"):
        assert kinds[f"cpp:{ns}::sm90_gemm_impl"] == "kernel"
        assert kinds[f"cpp:{ns}::sm90_logits_impl"] == "kernel"
        assert kinds[f"cpp:{ns}::helper"] == "function"


ALIGNED = r'''
namespace ku {
struct CUTE_ALIGNAS(16) CLCResponseObj {
    CUTE_ALIGNAS(16) int data[4];
    void reset();
};
void issue_clc_query(CLCResponseObj& response_obj) {}
}
'''


def test_a_struct_aligned_by_cute_alignas_keeps_its_name_and_members(tmp_path: Path):
    # CuTe's `#define CUTE_ALIGNAS(n) alignas(n)`, in a header outside the system (FlashMLA's kerutils)
    graph = cpp_graph(tmp_path, {"intrinsics.cuh": ALIGNED.lstrip("\n")})
    kinds = {n.id: n.kind.value for n in graph.nodes}
    assert kinds.get("cpp:ku::CLCResponseObj") == "struct"
    assert kinds.get("cpp:ku::CLCResponseObj::reset") == "method"
    assert not [d for d in graph.diagnostics if d.code == "parse-errors"]


IN_BODY_MACROS = r'''
namespace g {
template <typename T, bool B>
__global__ void normKernel(T* in, T* out) {}
__global__ void appendKernel(int* in) {}

void runNorm(float* in, float* out, bool squared, cudaStream_t stream) {
#define RUN_NORM(TYPE_T, INPUT)                            \
    do {                                                   \
        if (squared) {                                     \
            normKernel<TYPE_T, true>                       \
                    <<<1, 32, 0, stream>>>(INPUT, out);     \
        } else {                                           \
            normKernel<TYPE_T, false>                      \
                    <<<1, 32, 0, stream>>>(INPUT, out);     \
        }                                                  \
    } while (0)
    RUN_NORM(float, in);
#undef RUN_NORM
}

void runAppend(int* in, cudaStream_t stream) {
#define RUN_APPEND                                    \
    do {                                              \
        appendKernel<<<1, 32, 0, stream>>>(in);       \
    } while (0)
    if (in) {
        RUN_APPEND;
    }
#undef RUN_APPEND
}

__global__ void interleavedKernel(int* in) {}

void runInterleaved(int* in, cudaStream_t stream) {
#define RUN_APPEND interleavedKernel<<<1, 32, 0, stream>>>(in)
    RUN_APPEND;
#undef RUN_APPEND
}
}
'''


def test_a_macro_defined_in_a_body_launches_from_where_it_is_used(tmp_path: Path):
    # faiss's GPU code defines its launch macros inside the function that uses them, object-like or not
    graph = cpp_graph(tmp_path, {"k.cu": IN_BODY_MACROS.lstrip("\n")})
    assert _launched(graph) == {("cpp:g::runNorm", "cpp:g::normKernel", 17),  # the use's line, not the #define's
                                ("cpp:g::runAppend", "cpp:g::appendKernel", 27),
                                ("cpp:g::runInterleaved", "cpp:g::interleavedKernel", 36)}  # the name defined again


LAUNCHER_MACROS = r'''
template <typename K, typename T>
__global__ void twoshot_kernel(T* data) {}

template <typename T, int Loops>
__global__ void fwd_kernel(T* data) {}

template <typename T>
__global__ void halo_kernel(T* data) {}

#define TWOSHOT_DISPATCH(codec)                                                   \
  hipLaunchKernelGGL((twoshot_kernel<codec, T>), dim3(grid), dim3(block), 0, stream, data);

#define BY_PARAMETER(kernel) cudaLaunchKernel((void*)kernel, grid, block, args, 0, stream);

template <typename T>
void allreduce(T* data, int grid, int block, hipStream_t stream) {
    TWOSHOT_DISPATCH(int)
}

template <typename T>
void forward(T* data, int grid, cudaStream_t stream) {
#define LAUNCH_FWD(LOOPS)                                                          \
  do {                                                                             \
    auto fwd_func = fwd_kernel<T, LOOPS>;                                          \
    using F = decltype(fwd_kernel<T, LOOPS>);                                      \
    cudaLaunchCooperativeKernel<F>(fwd_func, grid, 128, nullptr, 0, stream);       \
  } while (0)
    if (grid > 1)
        LAUNCH_FWD(2);
    else
        LAUNCH_FWD(1);
#define LAUNCH_HALO(T)                                                             \
  cudaLaunchCooperativeKernel((void*)halo_kernel<T>, grid, 128, nullptr, 0, stream)
    LAUNCH_HALO(float);
    BY_PARAMETER(halo_kernel<T>);
}
'''


def test_a_launcher_called_in_a_macro_launches_from_where_the_macro_is_used(tmp_path: Path):
    # vLLM's quick all-reduce (hipLaunchKernelGGL in a macro at namespace level), apex's batch norm and peer
    # memory (cudaLaunchCooperativeKernel in macros defined in the body, through a local the macro declares)
    graph = cpp_graph(tmp_path, {"reduce.cu": LAUNCHER_MACROS.lstrip("\n")})
    launched = {(e.source, e.target, e.line) for e in graph.edges if e.kind is EdgeKind.LAUNCHES}
    # a macro that hands its parameter to a launcher (BY_PARAMETER) is a launcher macro: its use launches
    # the kernel it is handed
    assert launched == {("cpp:allreduce", "cpp:twoshot_kernel", 17), ("cpp:forward", "cpp:fwd_kernel", 29),
                        ("cpp:forward", "cpp:halo_kernel", 34), ("cpp:forward", "cpp:halo_kernel", 35)}


CLUSTER_KERNELS = r'''
namespace tk {
template<typename lcft>
__global__ __launch_bounds__(256, 1)
#ifdef KITTENS_BLACKWELL
__cluster_dims__(detail::CLUSTER_BLOCKS_v<lcft>)
#endif
void kernel(const __grid_constant__ typename lcft::globals globals) {}

template<typename config>
__launch_bounds__(256, 1)
__cluster_dims__(detail::CLUSTER_BLOCKS_v<config>)
__global__ void interpret(const __grid_constant__ typename config::globals globals) {}

__global__ void __maxnreg__(64) capped(int* x) {}

void run(int* x) {
    capped<<<1, 1>>>(x);
}
}
'''


def test_kernels_with_cluster_dims_or_a_register_cap_stay_kernels(tmp_path: Path):
    """CUDA's `__cluster_dims__(...)` and `__maxnreg__(n)` are attributes, as `__launch_bounds__` is; and a
    conditional group they alone filled (`#ifdef` / `__cluster_dims__(...)` / `#endif` between `__global__` and
    the declarator) is no longer there to split the declaration."""
    graph = cpp_graph(tmp_path, {"k.cu": CLUSTER_KERNELS.lstrip("\n")})
    kinds = {n.id: n.kind.value for n in graph.nodes}
    assert {k: kinds.get(k) for k in ("cpp:tk::kernel", "cpp:tk::interpret", "cpp:tk::capped")} == \
        {"cpp:tk::kernel": "kernel", "cpp:tk::interpret": "kernel", "cpp:tk::capped": "kernel"}
    assert _launched(graph) == {("cpp:tk::run", "cpp:tk::capped", 17)}


LAUNCH_HEADER = r'''
#pragma once
#ifndef DISABLE_SM90_FEATURES
#define LAUNCH_KERNEL(config, kernel, ...) CUDA_CHECK(cudaLaunchKernelEx(config, kernel, ##__VA_ARGS__))
#else
#define LAUNCH_KERNEL(config, kernel, ...) kernel<<<num_sms, num_threads, 0, stream>>>(__VA_ARGS__)
#endif
#define SWITCH_RANKS(case_macro) switch (num_ranks) { case 2: case_macro(2); default: break; }
'''

LAUNCHED_BY_MACROS = r'''
#include "launch.cuh"
#define LAUNCH_ONE(k) LAUNCH_KERNEL(&cfg, k, ptrs)
namespace ep {
template <int kNumRanks>
__global__ void barrier_kernel(int** ptrs, int rank) {}
__global__ void clean_kernel(int** ptrs) {}
__global__ void sum_kernel(int** ptrs) {}

void barrier(int** ptrs, int rank, int num_ranks, cudaStream_t stream) {
#define BARRIER_LAUNCH_CASE(ranks) \
    LAUNCH_KERNEL(&cfg, barrier_kernel<ranks>, ptrs, rank); \
    break
    SWITCH_RANKS(BARRIER_LAUNCH_CASE);
#undef BARRIER_LAUNCH_CASE
}

void clean(int** ptrs) {
    LAUNCH_KERNEL(&cfg, clean_kernel, ptrs);
}

void sum(int** ptrs) {
    LAUNCH_ONE(sum_kernel);
}
}
'''


def test_a_launcher_macro_launches_the_kernel_it_is_handed_in_the_file_and_its_includers(tmp_path: Path):
    """DeepEP's `LAUNCH_KERNEL(config, kernel, ...)` wraps `cudaLaunchKernelEx` (or `kernel<<<...>>>`) in a
    header; a use in a body, in a macro of the body's own handed to a dispatch macro, or through a macro of
    the file that wraps it, launches the kernel it names."""
    graph = cpp_graph(tmp_path, {"launch.cuh": LAUNCH_HEADER.lstrip("\n"),
                                 "intranode.cu": LAUNCHED_BY_MACROS.lstrip("\n")})
    assert _launched(graph) == {("cpp:ep::barrier", "cpp:ep::barrier_kernel", 13),
                                ("cpp:ep::clean", "cpp:ep::clean_kernel", 18),
                                ("cpp:ep::sum", "cpp:ep::sum_kernel", 22)}


KERNEL_AND_HOST_OF_ONE_NAME = r'''
#include "launch.cuh"
namespace ep {
__device__ int lane() { return 0; }
void check(int x) {}

template <int kNumRanks>
__global__ void notify(int** ptrs, int rank) { lane(); }

void notify(int** ptrs, int rank, int num_ranks) {
    check(num_ranks);
    LAUNCH_KERNEL(&cfg, notify<8>, ptrs, rank);
}

__global__ void plain(int* x) {}
void plain(int* x, int n) { plain<<<1, n>>>(x); }

struct Buffer { void sync(); };
void Buffer::sync() { notify(nullptr, 0, 8); plain(nullptr, 4); }
}
'''


def test_a_kernel_and_the_host_function_of_its_name_are_two_nodes(tmp_path: Path):
    """DeepEP names each legacy kernel as the host function that launches it (`__global__ void dispatch(...)`
    and `void dispatch(...)`): a call names the host function, a launch the kernel (`cpp:__global__ ...`), and
    each body's calls are its own. Merged, the host's callers called the kernel, which launched itself."""
    graph = cpp_graph(tmp_path, {"launch.cuh": LAUNCH_HEADER.lstrip("\n"),
                                 "intranode.cu": KERNEL_AND_HOST_OF_ONE_NAME.lstrip("\n")})
    nodes = {n.id: n for n in graph.nodes}
    kernel = nodes["cpp:__global__ ep::notify"]
    assert (kernel.kind.value, kernel.name, kernel.qualname, kernel.line) == \
        ("kernel", "notify", "__global__ ep::notify", 7)
    assert (nodes["cpp:ep::notify"].kind.value, nodes["cpp:ep::notify"].line) == ("function", 9)
    assert _launched(graph) == {("cpp:ep::notify", "cpp:__global__ ep::notify", 11),
                                ("cpp:ep::plain", "cpp:__global__ ep::plain", 15)}
    called = {(e.source, e.target) for e in graph.edges if e.kind is EdgeKind.CALLS}
    assert {("cpp:__global__ ep::notify", "cpp:ep::lane"), ("cpp:ep::notify", "cpp:ep::check"),
            ("cpp:ep::Buffer::sync", "cpp:ep::notify"), ("cpp:ep::Buffer::sync", "cpp:ep::plain")} <= called
    assert not {(a, b) for a, b in called if "__global__" in b}
