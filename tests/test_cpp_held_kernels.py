"""A kernel launched through a local that holds it, `auto kernel = &ln_fwd_kernel<Traits>;` then
`kernel<<<grid, threads, smem, stream>>>(params)` (flash-attention's layer norm and launch templates),
launches that kernel: the last such declaration of the body before the launch, a commented-out one
not counted."""

from __future__ import annotations

from pathlib import Path

from extractor.model import EdgeKind
from tests.cpp_support import cpp_graph, edges

SOURCE = r'''
namespace ln {
template <typename Traits, bool Even>
__global__ void fwd_kernel(int params) {}

template <typename Traits>
__global__ void bwd_kernel(int params) {}

__global__ void bwd_kernel_8bit(int params) {}

__global__ void finalize_kernel(int params) {}

template <typename Traits>
void launch(int params, bool even, cudaStream_t stream) {
    auto kernel = &fwd_kernel<Traits, true>;
    if (!even) {
        kernel = &fwd_kernel<Traits, false>;
    }
    kernel<<<1, 128, 0, stream>>>(params);
    auto kernel_b = bwd_kernel<Traits>;
    // auto kernel_b = &finalize_kernel;
    if (even) { kernel_b = &bwd_kernel_8bit; }
    kernel_b<<<1, 128, 0, stream>>>(params);
    const auto fin = &finalize_kernel;
    fin<<<1, 32, 0, stream>>>(params);
}

void other(cudaStream_t stream, void (*given)(int)) {
    given<<<1, 1, 0, stream>>>(0);
}
}
'''


def test_a_launch_through_a_local_launches_the_kernel_it_holds(tmp_path: Path):
    graph = cpp_graph(tmp_path, {"ln_kernels.cu": SOURCE.lstrip("\n")})
    launched = {(e.source, e.target, e.line) for e in graph.edges if e.kind is EdgeKind.LAUNCHES}
    assert launched == {("cpp:ln::launch", "cpp:ln::fwd_kernel", 18), ("cpp:ln::launch", "cpp:ln::bwd_kernel", 22),
                        ("cpp:ln::launch", "cpp:ln::bwd_kernel_8bit", 22),  # assigned to it after
                        ("cpp:ln::launch", "cpp:ln::finalize_kernel", 24)}
    assert ("cpp:ln::other", "cpp:ln::fwd_kernel") not in edges(graph, EdgeKind.LAUNCHES)  # a parameter: unknown
    assert graph.stats["launches_unresolved"] == 1


CHOSEN = r'''
template <typename T>
__global__ void permute_kernel(int params) {}

template <typename T>
void run(int params, bool act_order, cudaStream_t stream) {
    if (act_order) {
        auto kernel = permute_kernel<T>;
        kernel<<<1, 128, 0, stream>>>(params);
    }
    auto kernel = get_marlin_kernel<T>(
        params, act_order);
    kernel<<<1, 256, 0, stream>>>(params);
}
'''


def test_a_local_that_holds_a_calls_result_launches_nothing_known(tmp_path: Path):
    # vLLM's marlin MoE: the last declaration before the second launch holds what a call returns
    graph = cpp_graph(tmp_path, {"ops.cu": CHOSEN.lstrip("\n")})
    launched = {(e.source, e.target, e.line) for e in graph.edges if e.kind is EdgeKind.LAUNCHES}
    assert launched == {("cpp:run", "cpp:permute_kernel", 8)}
    assert graph.stats["launches_unresolved"] == 1


TABLES = r'''
template <typename T, bool Skip, bool Align>
__global__ void expand_kernel(int params) {}

template <typename T, bool Done>
__global__ void finalize_kernel(int params) {}

__global__ void other_kernel(int params) {}

template <typename T>
void expand(int params, bool skip, bool align, cudaStream_t stream) {
    using FuncPtr = decltype(&expand_kernel<T, true, true>);
    FuncPtr func_map[2][2] = {
        {&expand_kernel<T, false, false>, &expand_kernel<T, false, true>},
        {&expand_kernel<T, true, false>, &expand_kernel<T, true, true>},
    };
    auto func = func_map[skip][align];
    func<<<1, 256, 0, stream>>>(params);
}

template <typename T>
void finalize(int params, bool done, cudaStream_t stream) {
    using FuncPtr = decltype(&finalize_kernel<T, false>);
    FuncPtr func_map[2] = {&finalize_kernel<T, false>, &finalize_kernel<T, true>};
    auto* const kernel = func_map[done];
    kernel<<<1, 256, 0, stream>>>(params);
}

void chosen(int params, int which, cudaStream_t stream) {
    FuncPtr table[2] = {&other_kernel, pick_kernel(which)};
    auto kernel = table[which];
    kernel<<<1, 32, 0, stream>>>(params);
}
'''


def test_a_local_that_holds_an_entry_of_a_kernel_table_launches_every_kernel_of_it(tmp_path: Path):
    # vLLM's MoE permute launchers: a table of kernel pointers, indexed by the run's flags
    graph = cpp_graph(tmp_path, {"permute.cu": TABLES.lstrip("\n")})
    launched = {(e.source, e.target, e.line) for e in graph.edges if e.kind is EdgeKind.LAUNCHES}
    assert launched == {("cpp:expand", "cpp:expand_kernel", 17), ("cpp:finalize", "cpp:finalize_kernel", 25)}
    # a table with an entry that is no kernel named (a call's result) tells nothing: unresolved
    assert graph.stats["launches_unresolved"] == 1


PICKED = r'''
typedef void (*fp_matmul_kernel)(int);

template <bool Half, bool Groups>
__global__ void matmul_kernel(int params) {}

__global__ void other_kernel(int params) {}

fp_matmul_kernel matmul_kernel_pick(bool half, bool groups)
{
    if (half) { if (groups) return matmul_kernel<true, true>; else return matmul_kernel<true, false>; }
    // return other_kernel;
    if (groups) return matmul_kernel<false, true>;
    return NULL;
}

int size_pick(int n) { if (n) return other_kernel; return n + 1; }

void matmul(int params, bool half, bool groups, cudaStream_t stream) {
    fp_matmul_kernel kernel = matmul_kernel_pick(half, groups);
    kernel<<<1, 128, 0, stream>>>(params);
    fp_matmul_kernel sized = size_pick(params);
    sized<<<1, 128, 0, stream>>>(params);
    fp_matmul_kernel elsewhere = pick_elsewhere(params);
    elsewhere<<<1, 128, 0, stream>>>(params);
    fp_matmul_kernel direct = &other_kernel;
    direct<<<1, 32, 0, stream>>>(params);
}
'''

POINTERS = r'''
template <typename T, int Tile, bool Masked>
__global__ void tiled_forward(const T* f, int n) {}

__global__ void plain_forward(const float* f, int n) {}

template <typename T>
void forward(const T* f, int n, int tile, bool masked, cudaStream_t stream) {
    void (*kernel)(const T*, int) = nullptr;
    if (masked) {
        if (tile == 2) {
            kernel = &tiled_forward<T, 2, true>;
        } else {
            kernel = &tiled_forward<T, 4, true>;
        }
    } else {
        kernel = tiled_forward<T, 1, false>;
    }
    kernel<<<1, 128, 0, stream>>>(f, n);
    void (*plain)(const float*, int) = &plain_forward;
    plain<<<1, 32, 0, stream>>>(nullptr, n);
    void (*given)(const float*, int) = pick(tile);
    given<<<1, 32, 0, stream>>>(nullptr, n);
}
'''


def test_a_local_that_holds_what_a_picking_function_returns_launches_each_kernel_it_returns(tmp_path: Path):
    # exllama's and vLLM's GPTQ launchers: a typedef'd function pointer given what a function of the file
    # returns, each return a kernel (or NULL)
    graph = cpp_graph(tmp_path, {"q4_matmul.cu": PICKED.lstrip("\n")})
    launched = {(e.source, e.target, e.line) for e in graph.edges if e.kind is EdgeKind.LAUNCHES}
    assert launched == {("cpp:matmul", "cpp:matmul_kernel", 20), ("cpp:matmul", "cpp:other_kernel", 26)}
    # a function that also returns something else, or one the file does not define, tells nothing
    assert graph.stats["launches_unresolved"] == 2


def test_a_launch_through_a_function_pointer_the_body_declares_launches_what_is_given_to_it(tmp_path: Path):
    # apex's transducer joint: `void (*kernel)(...);` declared, a kernel assigned to it in each branch
    graph = cpp_graph(tmp_path, {"joint.cu": POINTERS.lstrip("\n")})
    launched = {(e.source, e.target, e.line) for e in graph.edges if e.kind is EdgeKind.LAUNCHES}
    assert launched == {("cpp:forward", "cpp:tiled_forward", 18), ("cpp:forward", "cpp:plain_forward", 20)}
    # a pointer given what a call returns tells nothing: unresolved (and `nullptr` names no kernel)
    assert graph.stats["launches_unresolved"] == 1
