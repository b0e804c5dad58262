"""Metal Shading Language read as the C++ it is, its kernels kernels.

Apple-GPU backends (MLX, llama.cpp's ggml-metal, PyTorch's MPS, candle) write their kernels in `.metal`
files and headers: C++14 with address spaces (`device`, `constant`, `threadgroup`, `thread`), a
`kernel` (or `[[kernel]]`) qualifier and attributes on parameters. Unread, a system's Metal kernels
were absent; its Metal headers, read as plain C++, were mostly ERROR nodes. A small handwritten tree in
those shapes: a header of templated kernels and helpers, a `.metal` file that includes it, and host
C++ whose own `device` names must stay as written.
"""

from __future__ import annotations

from extractor.acquire.inventory import SUFFIXES
from extractor.model import EdgeKind, Language

from tests.cpp_support import cpp_graph, edges

FILES = {
    "kernels/ops.h": """
#pragma once
#include <metal_stdlib>
using namespace metal;

struct Limits {
  static constexpr constant float big = 1e30;
};

template <typename T>
inline T twice(T v) { return v + v; }

template <typename T>
struct Accumulator {
  T total;
  void add(T v) thread { total += v; }
};

template <typename T, int N>
[[kernel]] void scale(
    device const T* in [[buffer(0)]],
    device T* out [[buffer(1)]],
    constant uint& size [[buffer(2)]],
    threadgroup T* scratch [[threadgroup(0)]],
    uint gid [[thread_position_in_grid]]) {
  thread Accumulator<T> acc{0};
  acc.add(in[gid]);
  if (gid < size) out[gid] = twice(acc.total);
}
""",
    "kernels/copy.metal": """
#include "ops.h"

kernel void copy_rows(device const float* src [[buffer(0)]],
                      device float* dst [[buffer(1)]],
                      uint2 index [[thread_position_in_grid]]) {
  dst[index.x] = twice(src[index.x]);
}
""",
    "host/engine.cpp": """
namespace metal { struct Device { int id; }; Device& device(int i); }

int start(int i) {
  auto& device = metal::device(i);
  int kernel = device.id;
  return kernel;
}
""",
}


def test_metal_files_are_read_and_their_kernels_are_kernels(tmp_path):
    assert SUFFIXES[".metal"] is Language.CPP
    graph = cpp_graph(tmp_path, FILES)
    nodes = {n.id.removeprefix("cpp:"): n for n in graph.nodes}
    kernels = {name: (n.path, n.line) for name, n in nodes.items() if n.kind.value == "kernel"}
    assert kernels == {"scale": ("kernels/ops.h", 20), "copy_rows": ("kernels/copy.metal", 4)}
    # parameters keep their names; the address spaces and attributes are no part of their types
    assert [(p.name, p.annotation) for p in nodes["scale"].params] == [
        ("in", "const T*"), ("out", "T*"), ("size", "uint&"), ("scratch", "T*"), ("gid", "uint")]
    assert {"twice", "Accumulator", "Accumulator::add", "Limits"} <= nodes.keys()
    assert {("cpp:scale", "cpp:twice"), ("cpp:copy_rows", "cpp:twice"),
            ("cpp:scale", "cpp:Accumulator::add")} <= edges(graph, EdgeKind.CALLS)
    assert not any(d.code == "parse-errors" for d in graph.diagnostics)
    # host C++ is no Metal: its `device` and `kernel` are names, as written
    assert nodes["start"].kind.value == "function" and ("cpp:start", "cpp:metal::device") in edges(graph, EdgeKind.CALLS)
