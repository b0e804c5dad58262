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


ATTRIBUTED_DECLARATOR = b"""#include <cuda_runtime.h>
template <class T, bool UE8M0 = false>
__global__ void
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1000)
__launch_bounds__(512, 4) cvt_to_fp4(
#else
cvt_to_fp4(
#endif
    int rows, const T* in, unsigned* out) {
  out[0] = static_cast<unsigned>(in[rows]);
}

template <class T>
void invoke_cvt(int rows, const T* in, unsigned* out, bool ue8m0, cudaStream_t stream) {
  if (ue8m0) {
    cvt_to_fp4<T, true><<<rows, 512, 0, stream>>>(rows, in, out);
  } else {
    cvt_to_fp4<T, false><<<rows, 512, 0, stream>>>(rows, in, out);
  }
}
"""


def test_a_kernel_whose_declarator_the_branches_write_with_and_without_an_attribute_is_defined_once():
    # rtp-llm's (and TensorRT-LLM's) FP4 quantisation kernels: `__launch_bounds__` only for newer
    # architectures; read both branches, the declarator opened two parameter lists and the kernel was an
    # ERROR node, its launches bound to nothing
    facts = scan_source(ATTRIBUTED_DECLARATOR, Language.CUDA)
    assert [(d.qual, d.kind, d.line) for d in facts.defs if d.qual == "cvt_to_fp4"] == [("cvt_to_fp4", "kernel", 5)]
    assert sorted(each_call(facts.launches)) == [("invoke_cvt", "cvt_to_fp4", 16), ("invoke_cvt", "cvt_to_fp4", 18)]
    assert facts.errors == 0


def test_a_region_whose_conditionals_have_no_second_branch_is_parsed_again_once(monkeypatch):
    """Keeping each conditional's first branch (the second variant) reads the same bytes as keeping
    both when no conditional in the error regions has an `#else` or `#elif` there: one parse serves."""
    import extractor.cpp.scan as cpp_scan
    from extractor.cpp.parse import parse_source
    from extractor.model import ParsedFile

    variants: list[bytes] = []
    real = cpp_scan._variant_facts

    def counted(parsed, variant, *args, **kwargs):
        variants.append(variant)
        return real(parsed, variant, *args, **kwargs)

    parsed = ParsedFile(Language.CUDA, KERNELS, parse_source(KERNELS, Language.CUDA))
    facts = scan_source(KERNELS, Language.CUDA)
    monkeypatch.setattr(cpp_scan, "_variant_facts", counted)
    inner = KERNELS.index(b"  #define WHOLE_STEPS"), KERNELS.index(b"    out[r]")  # `#ifdef` ... `#else` ... `#endif`
    # the `#ifdef` alone, its `#else` past the region's end (a region that ends inside a group)
    no_else = KERNELS.index(b"  #ifdef WHOLE_STEPS"), KERNELS.index(b"  #else")
    cpp_scan._rescan_without_conditionals(parsed, [inner], facts)
    assert len(variants) == 2 and variants[0] != variants[1]
    variants.clear()
    cpp_scan._rescan_without_conditionals(parsed, [no_else], facts)
    assert len(variants) == 1


def test_a_constructor_whose_branches_each_begin_its_initializers_reads_the_first():
    """RocksDB's semaphores: `#ifdef ROCKSDB_USE_STD_SEMAPHORES` / `: sem_(n)` / `#else` / `: count_(n)` /
    `#endif`. Read twice, the constructor was an ERROR node, the class's later members functions of the
    namespace, and the functions of the class after it lost their namespace."""
    data = (b"namespace rocksdb {\nclass CountingSemaphore {\n public:\n  explicit CountingSemaphore(int n)\n"
            b"#ifdef ROCKSDB_USE_STD_SEMAPHORES\n      : sem_(n)\n#else\n      : count_(n)  // a comment\n"
            b"#endif\n  {\n    check(n);\n  }\n  void Acquire() { wait(); }\n};\n"
            b"class BinarySemaphore {\n public:\n  void Release() { signal(); }\n};\n}\n")
    facts = scan_source(data, Language.CPP)
    assert [d.qual for d in facts.defs if d.kind == "function"] == [
        "rocksdb::CountingSemaphore::CountingSemaphore", "rocksdb::CountingSemaphore::Acquire",
        "rocksdb::BinarySemaphore::Release"]
    assert facts.errors == 0
    assert ("rocksdb::CountingSemaphore::CountingSemaphore", "check", 11) in set(each_call(facts.calls))
