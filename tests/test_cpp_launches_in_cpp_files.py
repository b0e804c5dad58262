"""A C/C++ file that launches kernels (`kernel<<<grid, block>>>(args)` in a `.h`, `.hpp`, `.inl` or
`.cpp` only nvcc compiles: flash-attention's launch templates, CUTLASS's device adapters in vLLM) is
read with the CUDA grammar, whose launches the C++ grammar read as ERROR nodes and lost, silently. The
file keeps its language; a C++ file without a launch is read by the C++ grammar as before."""

from __future__ import annotations

from pathlib import Path

from extractor.cpp.parse import grammar_language, parse_source
from extractor.model import EdgeKind, Language
from tests.cpp_support import cpp_graph

KERNELS = r'''
namespace fa {
template <typename Traits, bool Split>
__global__ void fwd_kernel(int params) {}

template <typename Traits, int Log>
__global__ void combine_kernel(int params) {}
}
'''

LAUNCH_TEMPLATE = r'''
#pragma once
#include "kernels.cuh"

namespace fa {
template <typename Traits>
void run_fwd(int params, cudaStream_t stream) {
    dim3 grid(4, 2);
    auto kernel = &fwd_kernel<Traits, false>;
    kernel<<<grid, Traits::kThreads, 0, stream>>>(params);
}

template <typename Traits>
void run_split(int params, cudaStream_t stream) {
    fwd_kernel<Traits, true><<<grid, Traits::kThreads, smem_size(params), stream>>>(params);
    if (params > 1) {
        combine_kernel<Traits, 1><<<1, 128, 0, stream>>>(params);
    }
}

int after_the_launches(int x) { return helper(x); }
}
'''

PLAIN = r'''
// a merge left this: <<<<<<< HEAD
std::vector<std::vector<std::vector<int>>> nested(int n) { return {}; }
int shifted(int a) { return a << 3 >> 1; }
'''


def test_launches_in_a_header_are_read(tmp_path: Path):
    graph = cpp_graph(tmp_path, {"kernels.cuh": KERNELS.lstrip("\n"),
                                 "fwd_launch_template.h": LAUNCH_TEMPLATE.lstrip("\n")})
    launched = {(e.source, e.target, e.line) for e in graph.edges if e.kind is EdgeKind.LAUNCHES}
    assert launched == {("cpp:fa::run_fwd", "cpp:fa::fwd_kernel", 9), ("cpp:fa::run_split", "cpp:fa::fwd_kernel", 14),
                        ("cpp:fa::run_split", "cpp:fa::combine_kernel", 16)}
    header = next(n for n in graph.nodes if n.id == "cpp:fa::after_the_launches")
    assert header.language == "cpp" and header.path == "fwd_launch_template.h"  # the file keeps its language
    assert graph.stats.get("launches_unresolved", 0) == 0


def test_only_a_file_that_launches_is_read_as_cuda():
    assert grammar_language(LAUNCH_TEMPLATE.encode(), Language.CPP) is Language.CUDA
    assert grammar_language(PLAIN.encode(), Language.CPP) is Language.CPP  # `<<<` and `>>>` without a launch
    assert grammar_language(LAUNCH_TEMPLATE.encode(), Language.RUST) is Language.RUST
    tree = parse_source(LAUNCH_TEMPLATE.encode(), Language.CPP)
    assert tree.root_node.has_error  # what the C++ grammar makes of a launch
    assert not parse_source(LAUNCH_TEMPLATE.encode(), Language.CUDA).root_node.has_error
