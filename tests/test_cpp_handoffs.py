"""Kernels handed to a launcher of the system's own are launched by the function that hands them.

MLX launches every CUDA kernel through ``encoder.add_kernel_node(kernel, grid, block, args...)``, a
method that hands the kernel on through two more of its own to a ``cudaKernelNodeParams``'s ``func``
(or to ``cudaLaunchKernelExC``): read as calls alone, 99 of its 101 kernels had no launch. A small
handwritten tree in that shape: an encoder whose template method forwards the kernel to another,
which forwards it (cast to ``void*``) to one defined in another file; a free wrapper over
``cudaLaunchKernel``; kernels handed to them through a local, by a qualified name and with template
arguments; and handed to functions that launch nothing.
"""

from __future__ import annotations

from extractor.model import EdgeKind

from tests.cpp_support import cpp_graph, edges

FILES = {
    "gpu/encoder.h": """
#pragma once
#include <cuda_runtime.h>

namespace gpu {

class Encoder {
 public:
  template <typename F, typename... Params>
  void add_node(F* func, dim3 grid, dim3 block, Params&&... params) {
    add_node_ex(func, grid, block, 0);
  }

  template <typename F>
  void add_node_ex(F func, dim3 grid, dim3 block, unsigned smem) {
    add_node_raw(reinterpret_cast<void*>(func), grid, block, smem);
  }

  void add_node_raw(void* func, dim3 grid, dim3 block, unsigned smem);
  void note(const float* data, int n);
};

void launch_raw(const void* func, dim3 grid, dim3 block);

}  // namespace gpu
""",
    "gpu/encoder.cpp": """
#include "gpu/encoder.h"

namespace gpu {

void Encoder::add_node_raw(void* func, dim3 grid, dim3 block, unsigned smem) {
  cudaKernelNodeParams params = {0};
  params.func = func;
  params.gridDim = grid;
  params.blockDim = block;
}

void Encoder::note(const float* data, int n) {}

void launch_raw(const void* func, dim3 grid, dim3 block) {
  cudaLaunchKernel(func, grid, block, nullptr, 0, nullptr);
}

}  // namespace gpu
""",
    "ops/kernels.cu": """
#include "gpu/encoder.h"

namespace ops {

namespace cu {
__global__ void scale(float* x, float by) { x[threadIdx.x] *= by; }

template <int N>
__global__ void sum(const float* x, float* out) { out[0] = x[N]; }

template <int N>
__global__ void norm(const float* x, float* out) { out[0] = x[0] / N; }

__global__ void unused(float* x) {}
}  // namespace cu

void record(void (*fn)(float*, float), int tag);

void run(gpu::Encoder& encoder, float* x, float* out, bool wide) {
  auto kernel = cu::sum<4>;
  encoder.add_node(kernel, dim3(1), dim3(32), x, out);
  encoder.add_node(cu::scale, dim3(1), dim3(32), x, 2.0f);
  gpu::launch_raw((const void*)cu::sum<8>, dim3(1), dim3(32));
  auto picked = wide ? &cu::sum<16> : &cu::sum<2>;
  encoder.add_node_ex(picked, dim3(1), dim3(64), 0);
  record(cu::scale, 1);            // handed to a function that launches nothing
  encoder.note(x, 4);
  auto chosen = cu::sum<1>;
  if (wide) {
    chosen = cu::norm<2>;          // a branch gives the local another kernel
  }
  encoder.add_node(chosen, dim3(1), dim3(32), x, out);
}

}  // namespace ops
""",
}


def test_kernels_handed_to_the_systems_own_launchers_are_launched(tmp_path):
    graph = cpp_graph(tmp_path, FILES)
    launches = {(s.removeprefix("cpp:"), t.removeprefix("cpp:")) for s, t in edges(graph, EdgeKind.LAUNCHES)}
    assert launches == {("ops::run", "ops::cu::sum"), ("ops::run", "ops::cu::scale"), ("ops::run", "ops::cu::norm")}
    lines = sorted((e.line, e.target.rpartition("::")[2]) for e in graph.edges if e.kind is EdgeKind.LAUNCHES)
    # through the local (22), by its qualified name (23), through the wrapper of cudaLaunchKernel (24),
    # either of two instances by a condition, handed to the encoder's second method (26): one edge a line;
    # each kernel the local is given before the call (33)
    assert lines == [(22, "sum"), (23, "scale"), (24, "sum"), (26, "sum"), (33, "norm"), (33, "sum")]
    assert graph.stats["kernels_handed_to_launchers"] == 6
    # the encoder's calls stay calls
    assert ("cpp:ops::run", "cpp:gpu::Encoder::add_node") in edges(graph, EdgeKind.CALLS)
