"""A file whose `#if` branches each open a block: the parse that recovers definitions from the error
region around them keeps each conditional's first branch there (as universal-ctags reads such a file),
not both, whose two `{` left a kernel's body open over every function after it.

The fixture is the shape of vLLM's ROCm skinny GEMMs (`csrc/rocm/skinny_gemms.cu`): a kernel whose
loop header differs in an `#ifdef` (`while (r < bound) {` / `#else` / `while (r < rows) {`), a stub of
the same kernel in the `#else` of an outer `#if`, then host code that launches it. Reading both
branches made the kernel call and launch what the host code after it calls and launches. (A `#pragma`
in the branch keeps the group from the reading before the parse, `parse.keep_first_of_opening_branches`,
which takes only groups with no other directive inside: this is the region it leaves to the recovery.)"""

from __future__ import annotations

from extractor.cpp.scan import scan_source
from extractor.model import Language
from extractor.native.calls import each_call

KERNELS = b"""#include <cassert>
#define UNREACHABLE assert(false);

__device__ float scale_up(float x) { return x * 2.0f; }
__device__ float scale_down(float x) { return x / 2.0f; }

#if defined(HAVE_WIDE_LOADS)
template <int STEP>
__global__ void strided_copy(const float* in, float* out, int rows) {
  int r = threadIdx.x;
  #define WHOLE_STEPS
  #ifdef WHOLE_STEPS
  int bound = rows - rows % STEP;
  #pragma unroll
  while (r < bound) {
  #else
  while (r < rows) {
  #endif
    out[r] = scale_up(in[r]);
    r += STEP;
  }
}
#else
template <int STEP>
__global__ void strided_copy(const float* in, float* out, int rows) {
  UNREACHABLE
}
#endif

int grid_for(int rows) { return rows / 64 + 1; }

void copy_rows(const float* in, float* out, int rows) {
  int grid = grid_for(rows);
  switch (rows % 2) {
    case 0:
      LAUNCH_EVEN(grid)
      break;
    default:
      strided_copy<4><<<grid, 64>>>(in, out, rows);
  }
}

float halve(float x) { return scale_down(x); }
"""


def test_a_kernel_whose_branches_open_blocks_calls_only_what_its_body_calls():
    facts = scan_source(KERNELS, Language.CUDA)
    assert facts.errors > 0  # the first parse fails around the kernel: the recovering parse is what is tested
    calls = {(caller, callee) for caller, callee, _ in each_call(facts.calls)}
    assert {callee for caller, callee in calls if caller == "strided_copy"} == {"scale_up"}
    assert ("copy_rows", "grid_for") in calls and ("halve", "scale_down") in calls
    assert sorted(each_call(facts.launches)) == [("copy_rows", "strided_copy", 39)]
    # both definitions of the kernel (the body and the `#else` stub) are still read, at their lines
    assert sorted(d.line for d in facts.defs if d.qual == "strided_copy") == [9, 25]
