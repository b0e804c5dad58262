"""Macro blanking and per-file scanning of C/C++/CUDA (no preprocessor is ever run)."""

from __future__ import annotations

import re

import hypothesis
import msgspec
import pytest

from extractor.cpp.facts import CppFacts, Definition
from extractor.cpp.parse import (attribute_macros, blank_continued_comments, blank_lambda_qualifiers, blank_macros,
                                 drop_operator_call_template_arguments, join_conditional_blocks,
                                 hashed_words, parenthesize_conditions, parse_source, spell_conditions,
                                 drop_extern_of_templates, drop_unread_typename, used_outside_directives, word_hash,
                                 word_hashes, write_vector_types)
from extractor.cpp.scan import scan_cpp
from extractor.model import Language, ParsedFile
from extractor.native.calls import each_call


def _keeps_places(rewritten: bytes, data: bytes) -> bool:
    """A rewrite before the parse keeps every byte's place: as many bytes, as many lines."""
    return len(rewritten) == len(data) and rewritten.count(b"\n") == data.count(b"\n")


def _rewritten(rewrite, code: str) -> tuple[bytes, bytes]:
    """``code``'s bytes and ``rewrite`` of them, which keeps every byte's place."""
    data = code.encode()
    rewritten = rewrite(data)
    assert _keeps_places(rewritten, data)
    return data, rewritten


def scan(code: str, language: Language = Language.CPP) -> CppFacts:
    data = code.encode()
    return scan_cpp(ParsedFile(language, data, parse_source(data, language)))


def defs_by_qual(facts: CppFacts) -> dict[str, Definition]:
    return {d.qual: d for d in facts.defs}


def scan_where_the_grammar_fails(code: str) -> CppFacts:
    """``code``'s facts, read with no ERROR node, where the grammar alone, on the bytes as written, makes some
    (the control: the rewrite before the parse is what reads it)."""
    facts = scan(code)
    assert facts.errors == 0
    data = code.encode()
    assert scan_cpp(ParsedFile(Language.CPP, data, _parse_as_written(data))).errors > 0
    return facts


@pytest.mark.parametrize(("code", "expected"), [
    ('#define API __attribute__((visibility("default")))\n', ["API"]),
    ("#define EMPTY\n", ["EMPTY"]),
    ("#define WIN __declspec(dllexport)  // windows\n", ["WIN"]),
    ("#if A\n#define X __declspec(dllimport)\n#else\n#define X\n#endif\n", ["X"]),
    ("#define DEVICE_INLINE __device__ __forceinline__\n", ["DEVICE_INLINE"]),
    ("#define ALIAS OTHER_API\n#define OTHER_API __attribute__((used))\n", ["ALIAS", "OTHER_API"]),
    ("#define N 32\n", []),
    ("#if A\n#define TAG\n#else\n#define TAG at::Tag::x\n#endif\n", []),
    ("#define F(x) (x)\n", []),  # function-like macros: tests/test_cpp_declaration_wrappers.py
    ("#define ADD a + b\n", []),
    # loop pragmas (lmdeploy's PRAGMA_UNROLL, CUTE_UNROLL): a pragma operator or directive, or nothing
    ('#if A\n#define UNROLL _Pragma("unroll")\n#elif B\n#define UNROLL #pragma unroll\n#else\n#define UNROLL\n#endif\n',
     ["UNROLL"]),
    ('#define UNROLL_4 _Pragma( "unroll 4" )  // four\n#define MSVC __pragma(warning)\n', ["MSVC", "UNROLL_4"]),
    ('#define LOOP _Pragma("unroll") for\n', []),
    ('#define CONT #pragma unroll \\\n  4\n', ["CONT"]),  # read over its continued line
    # pointer qualifiers: ggml's GGML_RESTRICT, by compiler (its 8,000 ERROR nodes in whisper.cpp)
    ("#if A\n#define R __restrict__\n#elif B\n#define R __restrict\n"
     "#elif C\n#define R restrict\n#else\n#define R\n#endif\n", ["R"]),
    ("#define LIMIT restrict_to\n", []),
    # specifiers a library adds where the compiler has them (fmt's FMT_CONSTEXPR, moodycamel's NOEXCEPT)
    ("#if A\n#define NOEXC noexcept\n#elif B\n#define NOEXC _NOEXCEPT\n#else\n#define NOEXC\n#endif\n"
     "#define CEXPR constexpr\n", ["CEXPR", "NOEXC"]),
    # function-like ones, blanked with their arguments (FlashInfer's FLASHINFER_SAMPLING_LAUNCH_BOUNDS)
    ("#if A\n#define LB(n) __launch_bounds__(n)\n#else\n#define LB(n)\n#endif\n", ["LB("]),
    ("#define IGNORE(x)\n#define ALIGNED(n) __attribute__((aligned(n)))\n", ["ALIGNED(", "IGNORE("]),
    ("#if A\n#define LB(n) __launch_bounds__(n)\n#else\n#define LB(n) n\n#endif\n", []),
    # a keyword defined for an old compiler (zlib's zconf.h, a Windows header) is the grammar's own word;
    # a word that is none (zlib's `local`) still qualifies
    ("#ifndef STDC\n#  define const\n#endif\n#define inline __inline\n#define local static\n"
     "#define static_assert(c, m)\n", ["local"]),
    # a qualifier by option (zlib's z_const), read as the attribute-like word it is
    ("#if defined(ZLIB_CONST)\n#  define z_const const\n#else\n#  define z_const\n#endif\n", ["z_const"]),
    ("#if M_I86SM\n#  define FAR _far\n#elif DOS\n#  define FAR far\n#else\n#  define FAR\n#endif\n", ["FAR"]),
    # a body over continued lines (Abseil's and BoringSSL's warning pragmas), read whole
    ('#if A\n#define PUSH \\\n  _Pragma("GCC diagnostic push")   \\\n'
     '  _Pragma("GCC diagnostic ignored \\"-Wdeprecated\\"")\n#else\n#define PUSH\n#endif\n'
     "#define TYPED \\\n  int\n#define EXPORTED __attribute__((used)) \\\n  __declspec(dllexport)\n",
     ["EXPORTED", "PUSH"]),
])
def test_attribute_macros_are_those_expanding_to_nothing_or_attributes(code, expected):
    assert attribute_macros(code.encode()) == expected


def test_blanking_keeps_offsets_and_lines_and_spares_directives():
    data = (b"#define EXPORT __attribute__((x))\n"
            b"EXPORT int f();\n"
            b"__global__ void __launch_bounds__(256,\n  2) k() {}\n")
    out = blank_macros(data, frozenset({"EXPORT"}), frozenset({"__launch_bounds__"}))
    assert len(out) == len(data)
    assert out.count(b"\n") == data.count(b"\n")
    assert out.splitlines()[0] == data.splitlines()[0]  # the #define itself is untouched
    assert out.splitlines()[1] == b"       int f();"
    assert b"__launch_bounds__" not in out and b"256" not in out
    assert out.splitlines()[3] == b"     k() {}"


def test_a_comment_on_a_continued_line_of_a_macro_does_not_end_its_body():
    """tree-sitter ends a macro's body at a `/* */` comment that a backslash continues past, and
    reads the rest as code: here a stray `}` closing the namespace, a bogus function `step`."""
    code = ("namespace engine {\n"
            "#define CLOSE_ALL }  /* namespace engine */ \\\n"
            "    }  // namespace outer\n"
            "#define STEP(x) \\\n"
            "    x.step(); /* one step */ \\\n"
            "    x.flush()\n"
            "struct Runner { int steps = 0; };  /* a comment after code stays */\n"
            "}  // namespace engine\n")
    rewritten = blank_continued_comments(code.encode())
    assert _keeps_places(rewritten, code.encode())
    assert b"one step" not in rewritten and b"namespace engine */" not in rewritten
    assert b"a comment after code stays" in rewritten and b"// namespace outer" in rewritten
    facts = scan(code)
    assert {d.qual for d in facts.defs} == {"engine", "engine::Runner"}
    assert facts.errors == 0


def test_a_block_opened_and_closed_in_conditional_groups_of_one_condition_is_one_block():
    """nlohmann's json.hpp opens an anonymous namespace in `#ifndef JSON_HAS_CPP_17` and closes it in a
    later group of the same condition; tree-sitter recovered from the lone braces by nesting what
    followed in the wrong namespace (a bogus `(anonymous namespace)::Value` here)."""
    code = ("namespace lib {\n"
            "#if !defined(HAS_CPP_17)\n"
            "namespace  // one definition per program\n"
            "{\n"
            "#endif\n"
            "class Parser { public: Parser(); };\n"
            "#if !defined(HAS_CPP_17)\n"
            "}  // namespace\n"
            "#endif\n"
            "#if !defined(HAS_CPP_17)\n"
            "namespace {\n"
            "#endif\n"
            "int dump();\n"
            "#if !defined(HAS_CPP_17)\n"
            "}\n"
            "#endif\n"
            "struct Value {};\n"
            "}  // namespace lib\n"
            "struct Top {};\n")
    joined = join_conditional_blocks(code.encode())
    assert _keeps_places(joined, code.encode())
    assert b"#if" not in joined and b"#endif" not in joined and b"// one definition per program" in joined
    facts = scan(code)
    assert {d.qual for d in facts.defs} == {
        "lib", "lib::(anonymous namespace)::Parser", "lib::(anonymous namespace)::Parser::Parser",
        "lib::(anonymous namespace)::dump", "lib::Value", "Top"}
    assert facts.errors == 0


@pytest.mark.parametrize("code", [
    "#ifdef A\nnamespace x {\n#endif\nint f();\n#ifdef B\n}\n#endif\n",  # other conditions
    "#ifdef A\nnamespace x {\n#else\nnamespace y {\n#endif\nint f();\n#ifdef A\n}\n#endif\n",  # an #else
    "#ifdef A\nnamespace x {\nint g();\n#endif\nint f();\n#ifdef A\n}\n#endif\n",  # more than the opening
    # tree-sitter reads this idiom as it is; joined, it lost functions of a file it cannot parse
    "#ifdef __cplusplus\nextern \"C\" {\n#endif\nint f(void);\n#ifdef __cplusplus\n}\n#endif\n",
    # the closing group closes the `extern "C"` one, not the namespace of the same condition
    "#ifdef A\nnamespace x {\n#endif\n#ifdef A\nextern \"C\" {\n#endif\nint f(void);\n#ifdef A\n}\n#endif\n",
])
def test_conditional_groups_that_do_not_pair_one_block_are_left_as_written(code):
    assert join_conditional_blocks(code.encode()) == code.encode()


def test_alternative_operators_in_conditions_are_spelled_with_symbols():
    # deepspeed's csrc/aio/py_lib/deepspeed_py_copy.cpp: the grammar makes `or` in a condition an
    # ERROR node (and the run a "definitions may be missing" warning); in code it reads it
    code = ("#if defined(__AVX512__) or defined(__AVX256__)\n"
            "union AVX_Data {\n  float data;\n};\n"
            "#elif not defined(A) and \\\n    defined(B)  // or not\n"
            "struct Plain { int x; };\n"
            "#endif\n"
            "#ifdef or_else\nint orx(int a, int b) { return a or not b; }\n#endif\n")
    data, spelled = _rewritten(spell_conditions, code)
    assert spelled.splitlines()[0] == b"#if defined(__AVX512__) || defined(__AVX256__)"
    assert spelled.splitlines()[4:6] == [b"#elif !   defined(A) &&  \\", b"    defined(B)  // or not"]
    assert spelled.splitlines()[8:] == data.splitlines()[8:]  # #ifdef's name and the code stay
    facts = scan_where_the_grammar_fails(code)
    assert {"AVX_Data", "Plain", "orx"} <= set(defs_by_qual(facts))


def test_string_literals_in_conditions_are_read_as_one_identifier():
    # Hedley, as nlohmann's single-header json vendors it: `JSON_HEDLEY_HAS_WARNING("-Wc++98-compat")`
    # in conditions, nested and continued; the grammar's conditions take no string (236 ERROR nodes there)
    code = ('#if defined(__cplusplus)\n'
            '#  if ACME_HAS_WARNING("-Wc++98-compat") && __has_warning("-Wcast-qual")\n'
            '#    define ACME_CAST(T, e) (const_cast<T>(e))\n'
            '#  endif\n'
            '#elif \\\n  ACME_HAS_WARNING("say \\"hi\\"") || \\\n  ACME_GCC_VERSION_CHECK(4,6,0)\n'
            'struct Plain { int x; };\n'
            '#endif\n'
            'const char* kName = "-Wc++98-compat";\n'
            '#define ACME_TEXT "if (\\"x\\")"\n'
            'int widen(int a) { return a; }\n')
    data, spelled = _rewritten(spell_conditions, code)
    lines = spelled.splitlines()
    assert lines[1] == b"#  if ACME_HAS_WARNING(________________) && __has_warning(_____________)"
    assert lines[5] == b'  ACME_HAS_WARNING(____________) || \\'
    assert lines[7:] == data.splitlines()[7:]  # strings in code and in a definition stay
    facts = scan_where_the_grammar_fails(code)
    assert {"Plain", "widen"} <= set(defs_by_qual(facts))
    # a header's name as a macro's whole argument (fmt's `FMT_HAS_INCLUDE(<fcntl.h>)`), not a comparison
    header = b"#if (ACME_HAS_INCLUDE(<fcntl.h>) || defined(__APPLE__)) && (X < 3) && (Y > 2)\nint f();\n#endif\n"
    assert spell_conditions(header).splitlines()[0] == \
        b"#if (ACME_HAS_INCLUDE(_________) || defined(__APPLE__)) && (X < 3) && (Y > 2)"
    assert scan_where_the_grammar_fails(header.decode()).defs[0].qual == "f"


def test_power_and_z_vector_types_are_read_as_one_type_name():
    # vLLM's VSX and s390x CPU types, ggml's POWER9 quantization branch: `__vector float` and `vector float`,
    # which the grammar does not know (an ERROR node each, or a parameter `float` of type `__vector`)
    code = ("namespace vec_op {\n"
            "struct FP32Vec4 {\n"
            "  __vector float reg;\n"
            "  explicit FP32Vec4(__vector float data) : reg(data) {}\n"
            "  explicit FP32Vec4(__vector signed short data);\n"
            "};\n"
            "void quantize(const float* x, int nb) {\n"
            "  for (int i = 0; i < nb; i++) {\n"
            "    vector float srcv[8];\n"
            "    vector bool int mask = vec_cmpgt(srcv[0], srcv[1]);\n"
            "    store(srcv, mask);\n"
            "  }\n"
            "}\n"
            "std::vector<float> widen(vector_like vector) { return convert(vector); }\n"
            "}  // namespace vec_op\n")
    data, written = _rewritten(write_vector_types, code)
    assert b"__vector_float reg;" in written and b"vector_bool_int mask" in written
    assert b"std::vector<float> widen(vector_like vector) { return convert(vector); }" in written  # as written
    facts = scan_where_the_grammar_fails(code)
    constructors = [d for d in facts.defs if d.qual == "vec_op::FP32Vec4::FP32Vec4"]
    assert [[(p.name, p.type) for p in d.params] for d in constructors] == [
        [("data", "__vector_float")], [("data", "__vector_signed_short")]]
    assert ("vec_op::quantize", "store") in {(caller, callee) for caller, callee, _line in each_call(facts.calls)}


def test_a_loop_pragma_macro_before_a_for_is_blanked_and_the_loop_parses():
    # lmdeploy's turbomind kernels: `PRAGMA_UNROLL` alone on its line before each loop made the loop an
    # ERROR (the name read as a statement missing its `;`) in 39 of its files
    code = ('#define PRAGMA_UNROLL _Pragma("unroll")\n'
            "__device__ float sum(const float* v) {\n  float s = 0;\n  PRAGMA_UNROLL\n"
            "  for (int i = 0; i < 4; ++i) {\n    s += add(v[i]);\n  }\n  return s;\n}\n")
    facts = scan(code, Language.CUDA)
    assert facts.errors == 0 and "sum" in defs_by_qual(facts)
    assert scan_cpp(ParsedFile(Language.CUDA, code.encode(), _parse_as_written(code.encode(), Language.CUDA))).errors > 0


def test_using_typename_of_a_dependent_base_parses():
    code = ("template <class T> struct Impl : Base<T> {\n  using typename Base<T>::FragS;\n  using\n"
            "      typename Base<T>::template Rebind<int>::Type;\n  using X = typename Base<T>::Y;\n"
            "  void run() { step(); }\n};\n")
    data = code.encode()
    rewritten = drop_unread_typename(data)
    assert len(rewritten) == len(data) and rewritten.count(b"typename") == 1  # the alias's keyword stays
    assert rewritten.splitlines()[1] == b"  using          Base<T>::FragS;"
    facts = scan(code)
    assert facts.errors == 0 and "Impl::run" in defs_by_qual(facts)
    assert scan_cpp(ParsedFile(Language.CPP, data, _parse_as_written(data))).errors > 0


def test_a_dependent_type_made_into_a_value_parses():
    # CuTe's and CUTLASS's kernels (flashinfer, flash-attention): `typename KT::TileShape{}` in an
    # expression made an ERROR node of the statement around it, and hid the definitions after it
    code = ("template <class KT> struct Runner {\n"
            "  static constexpr int N = size<0>(typename KT::TileShape{});\n"
            "  auto args() { return typename KT::Kernel::template Args<int, Int<4>>{1, 2}; }\n"
            "  void run() { auto p = typename KT::Params(3); launch(p, typename KT::Shape{}); }\n"
            "  typename KT::Params params;\n"
            "};\n"
            "template <typename T, typename U = typename T::X> void after(typename T::Y (y));\n")
    data = code.encode()
    rewritten = drop_unread_typename(data)
    assert _keeps_places(rewritten, data)
    # the keywords of types where a declaration stands stay: the member, the template parameters, `(y)`
    assert rewritten.count(b"typename") == 5
    assert rewritten.splitlines()[1] == b"  static constexpr int N = size<0>(         KT::TileShape{});"
    facts = scan(code, Language.CUDA)
    assert facts.errors == 0 and {"Runner::args", "Runner::run", "after"} <= set(defs_by_qual(facts))
    assert scan_cpp(ParsedFile(Language.CUDA, data, _parse_as_written(data, Language.CUDA))).errors > 0


def test_jni_and_cuda_alignment_macros_defined_outside_the_system_are_blanked():
    code = ("JNIEXPORT jlong JNICALL Java_com_whisper_init(JNIEnv* env, jobject thiz) { return 0; }\n"
            "typedef struct __CUDA_ALIGN__(8) { float x, y; } pair2;\n"
            "static __dpct_inline__ int get_int(const void* x) { return 0; }\n")
    facts = scan(code)
    assert facts.errors == 0 and {"Java_com_whisper_init", "get_int"} <= set(defs_by_qual(facts))


def test_ascend_c_qualifiers_are_blanked():
    # Ascend C (NPU kernels: vllm-ascend, torch_npu's ops) qualifies functions and pointers with its
    # compiler's keywords; read as written, each declaration around one is an ERROR node
    code = ("__BLOCK_LOCAL__ __inline__ uint32_t counter;\n"
            "template <typename T> class KernelAdd {\n public:\n"
            "  __aicore__ inline void Init(__gm__ uint8_t* x, __gm__ uint8_t* y) { xGm = x; }\n"
            "  __aicore__ inline void Process() { Compute(0); }\n"
            "  __simd_vf__ void Compute(__ubuf__ T* buf, __local_mem__ T* out, __ssbuf__ T* s);\n"
            "  __gm__ uint8_t* xGm;\n};\n"
            "extern \"C\" __global__ __aicore__ void add_custom(__gm__ uint8_t* x) { KernelAdd<float> op; }\n"
            "__simd_callee__ __force_inline__ float Twice(float v) { return v + v; }\n"
            "__simt_vf__ void Lane(__gm__ float* p) {}\n")
    data = code.encode()
    facts = scan(code)
    assert facts.errors == 0
    assert {"KernelAdd::Init", "KernelAdd::Process", "KernelAdd::Compute", "add_custom", "Twice",
            "Lane"} <= set(defs_by_qual(facts))
    assert scan_cpp(ParsedFile(Language.CPP, data, _parse_as_written(data))).errors > 0


def test_a_static_assert_macro_in_a_class_body_is_blanked_with_its_arguments():
    # DeepEP: `EP_STATIC_ASSERT(N == 8, "...");` at class scope was an ERROR that took the class's
    # methods out of it (they became free functions `destroy`, `sync`, ...)
    code = ("#define EP_STATIC_ASSERT(cond, reason) static_assert(cond, reason)\n"
            "#define CHECKED(x) do_check(x)\n"
            "namespace ep {\nstruct Buffer {\n"
            "  EP_STATIC_ASSERT(kPeers == 8, \"The number of maximum peers (NVLink) must be 8\");\n public:\n"
            "  Buffer(int rank) { EP_STATIC_ASSERT(sizeof(int) == 4, \"int\"); }\n  void destroy();\n};\n}\n")
    facts = scan(code)
    assert facts.errors == 0 and facts.defines == ("EP_STATIC_ASSERT(",)  # CHECKED is no assertion
    assert {"ep::Buffer::Buffer", "ep::Buffer::destroy"} <= set(defs_by_qual(facts))
    # MXNet's STATIC_ASSERT_CUDNN_VERSION_GE: the body begins on the line after the `#define`
    code = ("#define STATIC_ASSERT_CUDNN_VERSION_GE(min_version) \\\n  static_assert( \\\n"
            "      CUDNN_VERSION >= min_version, \\\n      \"cuDNN too old\" QUOTEVALUE(min_version) \" or later.\")\n"
            "template <typename T>\nclass CuDNNAlgo {\n  STATIC_ASSERT_CUDNN_VERSION_GE(7000);\n public:\n"
            "  void Set(int a);\n};\n")
    facts = scan(code)
    assert facts.errors == 0 and facts.defines == ("STATIC_ASSERT_CUDNN_VERSION_GE(",)
    assert "CuDNNAlgo::Set" in defs_by_qual(facts)


def test_a_kernel_after_a_function_like_launch_bounds_macro_is_a_kernel():
    # FlashInfer's sampling kernels: `__global__ LB(BLOCK_THREADS) void K(...)` read as a declaration
    # `LB(BLOCK_THREADS)` made the first a plain function without its template and lost the second
    code = ("#if defined(X)\n#define LB(n) __launch_bounds__(n)\n#else\n#define LB(n)\n#endif\n"
            "namespace s {\ntemplate <int B, typename T>\n__global__ LB(B) void First(T* x, int d) {\n  x[0] = d;\n}\n"
            "__global__ LB(128) void Second(int* x) { x[0] = 1; }\n}\n")
    facts = scan(code, Language.CUDA)
    found = {qual: (d.kind, d.line, "template" in d.tags) for qual, d in defs_by_qual(facts).items()}
    assert found == {"s": ("namespace", 6, False), "s::First": ("kernel", 8, True), "s::Second": ("kernel", 11, False)}


def test_an_ascend_c_core_condition_after_if_is_parenthesized():
    # Ascend C: `if ASCEND_IS_AIV {` (the macro is a parenthesised condition in CANN's headers), in
    # Catlass's functions (`CATLASS_DEVICE`, an attribute macro of its headers)
    code = ("template <typename T> class Kernel {\n public:\n"
            "  CATLASS_DEVICE void Process() {\n"
            "    if ASCEND_IS_AIV {\n      Vector();\n    } else if  ASCEND_IS_AIC\t{\n      Cube();\n    }\n"
            "    if ASCEND_IS_NOT_AIV{ Skip(); }\n  }\n"
            "  CATLASS_DEVICE\n  ~Kernel() {}\n  CATLASS_HOST_DEVICE void Vector() {}\n};\n")
    data = code.encode()
    rewritten = parenthesize_conditions(data)
    assert len(rewritten) == len(data)
    assert b"    if(ASCEND_IS_AIV){" in rewritten and b"else if( ASCEND_IS_AIC){" in rewritten
    assert b"if ASCEND_IS_NOT_AIV{" in rewritten  # no blank to spare: as written
    facts = scan(code.replace("    if ASCEND_IS_NOT_AIV{ Skip(); }\n", ""))
    assert facts.errors == 0 and {"Kernel::Process", "Kernel::~Kernel", "Kernel::Vector"} <= set(defs_by_qual(facts))
    assert {c for c, _ in dict(facts.calls)["Kernel::Process"]} == {"Vector", "Cube"}


def test_a_call_operator_named_with_template_arguments_stays_in_its_class():
    # Catlass's kernels specialize a member `operator()` template per core type; read as written,
    # the class's members moved out of it
    code = ("namespace gemm::kernel {\ntemplate <class Mmad> class Kernel {\n public:\n"
            "  template <int CORE = 0> void operator()(Params const &params);\n"
            "  template <>\n  void operator()<AscendC::AIC>(Params const &params) { Gmm(params); }\n"
            "  template <>\n  void operator() < Core<AscendC::AIV> > (Params const &params) { Combine(params); }\n"
            "  void Gmm(Params const &params) { op(params); }\n"
            "  void Combine(Params const &params) {}\n};\n}\n")
    data = code.encode()
    rewritten = drop_operator_call_template_arguments(data)
    assert len(rewritten) == len(data) and b"operator()<AscendC" not in rewritten
    assert b"operator()" + b" " * len(b"<AscendC::AIC>") + b"(Params" in rewritten
    assert drop_operator_call_template_arguments(b"bool operator()(int a) const { return a < b; }") == \
        b"bool operator()(int a) const { return a < b; }"
    facts = scan(code)
    assert facts.errors == 0
    assert {"gemm::kernel::Kernel::Gmm", "gemm::kernel::Kernel::Combine"} <= set(defs_by_qual(facts))


def _parse_as_written(data: bytes, language: Language = Language.CPP):
    from extractor.cpp.parse import _parser  # the grammar without archdiff's rewrites

    return _parser(language).parse(data)


def test_function_behind_an_export_macro_defined_in_the_same_file_is_found():
    facts = scan(
        '#define MY_API __attribute__((visibility("default")))\n'
        'struct Error;\n'
        'extern "C" {\n'
        'MY_API Error* MY_ServerNew(int** server, int options);\n'
        'MY_API Error* MY_ServerStop(int* server) { return nullptr; }\n'
        '}\n')
    defs = defs_by_qual(facts)
    assert defs["MY_ServerNew"].kind == "function"
    assert "declaration" in defs["MY_ServerNew"].tags
    assert defs["MY_ServerStop"].line == 5
    assert "declaration" not in defs["MY_ServerStop"].tags
    assert facts.errors == 0


def test_without_blanking_an_exported_class_is_invisible():
    # the control for the blanking: the raw grammar reads `class MY_API2 Logger {` as something
    # else, without so much as an ERROR node
    data = b"class MY_API2 Logger {\n public:\n  void Log();\n};\n"
    facts = scan_cpp(ParsedFile(Language.CPP, data, parse_source(data, Language.CPP)))
    assert "Logger" not in defs_by_qual(facts) and facts.errors == 0
    blanked = scan_cpp(ParsedFile(Language.CPP, data, parse_source(data, Language.CPP, blank=["MY_API2"])))
    assert defs_by_qual(blanked)["Logger"].kind == "class"
    assert "Logger::Log" in defs_by_qual(blanked)


def test_both_branches_of_an_if_are_scanned():
    facts = scan("namespace n {\n#ifdef GPU\nvoid OnGpu() {}\n#elif defined(X)\nvoid OnX() {}\n"
                 "#else\nvoid OnHost() {}\n#endif\n}\n")
    assert {"n::OnGpu", "n::OnX", "n::OnHost"} <= set(defs_by_qual(facts))


def test_kernels_device_functions_templates_and_launches():
    facts = scan(
        "namespace k {\n"
        "__device__ __forceinline__ float Scale(float v) { return v * 2; }\n"
        "template <typename T>\n"
        "__global__ void Fill(T* x) { x[0] = Scale(1); }\n"
        "__global__ void __launch_bounds__(128) Copy(float* x) {}\n"
        "void Launch(float* x) {\n"
        "  Fill<float><<<1, 32, 0, 0>>>(x);\n"
        "  Copy<<<2, 128>>>(x);\n"
        "}\n"
        "}\n", Language.CUDA)
    defs = defs_by_qual(facts)
    assert defs["k::Scale"].kind == "function" and "device" in defs["k::Scale"].tags
    assert defs["k::Fill"].kind == "kernel" and "template" in defs["k::Fill"].tags
    assert defs["k::Copy"].kind == "kernel"
    assert facts.launches == (("k::Launch", (("Copy", 8), ("Fill", 7))),)
    assert ("k::Fill", "Scale", 4) in each_call(facts.calls)


def test_device_qualifiers_in_a_cpp_header_are_read_before_blanking():
    facts = scan("__host__ __device__ inline int Twice(int x) { return 2 * x; }\n")
    assert defs_by_qual(facts)["Twice"].tags == ("device", "host")
    assert facts.errors == 0


def test_out_of_line_definitions_keep_their_written_qualifier_and_scope():
    facts = scan("namespace a { namespace b {\nvoid C::D::f(int) {}\n} }\n"
                 "void a::b::C::g() {}\n")
    defs = defs_by_qual(facts)
    assert defs["a::b::C::D::f"].scope == (("a", "namespace"), ("b", "namespace"), ("C", ""), ("D", ""))
    assert defs["a::b::C::g"].scope == (("a", ""), ("b", ""), ("C", ""))


def test_local_types_errors_and_doc_comments():
    facts = scan(
        "// Adds things.\n// Second line.\n"
        "int Add(int a) {\n  struct Op { int operator()(int x) const { return x; } };\n"
        "  return Op()(a);\n}\n"
        "int Broken( {\n"
        "int After() { return 1; }\n")
    defs = defs_by_qual(facts)
    assert defs["Add"].doc == "Adds things."
    assert defs["Add::Op"].kind == "struct"
    assert "Add::Op::operator()" in defs
    assert facts.errors >= 1
    assert "After" in defs


def test_torch_registrations_are_read_with_their_namespace():
    facts = scan(
        "TORCH_LIBRARY_EXPAND(CONCAT(TORCH_EXTENSION_NAME, _cache_ops), cache_ops) {\n"
        '  cache_ops.def("swap(Tensor a) -> ()");\n'
        '  cache_ops.impl("swap", torch::kCUDA, &swap_blocks);\n'
        "}\n"
        "TORCH_LIBRARY(myns, m) {\n"
        '  m.def("twice.out(Tensor x) -> Tensor", &ns::twice);\n'
        "}\n"
        "TORCH_LIBRARY_IMPL(myns, CPU, m) {\n"
        '  m.impl("twice", TORCH_FN(twice_cpu));\n'
        "}\n")
    ops = [(o.kind, o.op, o.ns, o.ns_macro, o.ns_suffix, o.fn, o.dispatch, o.line) for o in facts.torch_ops]
    assert ops == [
        ("def", "swap", "", "TORCH_EXTENSION_NAME", "_cache_ops", "", "", 2),
        ("impl", "swap", "", "TORCH_EXTENSION_NAME", "_cache_ops", "swap_blocks", "torch::kCUDA", 3),
        ("def", "twice", "myns", "", "", "ns::twice", "", 6),
        ("impl", "twice", "myns", "", "", "twice_cpu", "CPU", 9),
    ]
    assert facts.torch_ops[2].overload == "out"
    # registration blocks are not definitions of functions named TORCH_LIBRARY...
    assert not [d for d in facts.defs if d.qual.startswith("TORCH_LIBRARY")]


def test_an_operator_named_with_its_namespace_belongs_to_that_namespace():
    # torchao: `m.impl("torchao::da8w4_linear_cpu", &fn)`; a `TORCH_LIBRARY_IMPL(_, ...)` block must
    # name each operator so
    facts = scan(
        "TORCH_LIBRARY_FRAGMENT(TORCH_EXTENSION_NAME, m) {\n"
        '  m.def("myns::scaled_mm.out(Tensor a) -> Tensor");\n'
        "}\n"
        "TORCH_LIBRARY_IMPL(myns, CPU, m) {\n"
        '  m.impl("myns::scaled_mm.out", &scaled_mm_cpu);\n'
        "}\n"
        "TORCH_LIBRARY_IMPL(_, Meta, m) {\n"
        '  m.impl("other::gather", TORCH_FN(gather_meta));\n'
        "}\n")
    ops = [(o.kind, o.op, o.overload, o.ns, o.ns_macro, o.fn, o.dispatch) for o in facts.torch_ops]
    assert ops == [
        ("def", "scaled_mm", "out", "myns", "", "", ""),
        ("impl", "scaled_mm", "out", "myns", "", "scaled_mm_cpu", "CPU"),
        ("impl", "gather", "", "other", "", "gather_meta", "Meta"),
    ]
    assert facts.torch_ops[0].schema is not None and facts.torch_ops[0].schema.returns


@pytest.mark.parametrize(("data", "truncated"), [
    (b"", False),
    (b"\xff\xfe\x00garbage{{{((( <<<>>> #if\n", False),
    (b"namespace a {" * 3000 + b"void f() {}" + b"}" * 3000, True),
    (b"#if A\n" * 2000 + b"void g() {}\n" + b"#endif\n" * 2000, True),
])
def test_odd_input_never_raises_and_stays_encodable(data, truncated):
    for language in (Language.CPP, Language.CUDA):
        facts = scan_cpp(ParsedFile(language, data, parse_source(data, language)))
        # what a worker sends back decodes to the same typed facts
        assert msgspec.msgpack.decode(msgspec.msgpack.encode(facts), type=CppFacts) == facts
        assert facts.truncated is truncated  # said, not silently dropped


def test_pybind_module_registrations():
    facts = scan(
        "PYBIND11_MODULE(backend_utils, module) {\n"
        '  module.def("serialize", &ns::Serialize, py::arg("x"));\n'
        '  py::class_<ns::Tensor, std::shared_ptr<ns::Tensor>>(module, "Tensor")\n'
        '      .def("as_numpy", &ns::Tensor::AsNumpy)\n'
        '      .def("infer", py::overload_cast<int, bool>(&ns::Tensor::Infer, py::const_))\n'
        '      .def("size", [](ns::Tensor& t) { return t.Size(); });\n'
        "}\n")
    got = [(b.kind, b.owner, b.name, b.target, b.line) for b in facts.pybind]
    assert got == [
        ("def", "", "serialize", "ns::Serialize", 2),
        ("class", "", "Tensor", "ns::Tensor", 3),
        ("method", "Tensor", "as_numpy", "ns::Tensor::AsNumpy", 4),
        ("method", "Tensor", "infer", "ns::Tensor::Infer", 5),
        ("method", "Tensor", "size", "<lambda>", 6),
    ]
    # a call on the lambda's parameter of a named class is that class's method
    assert facts.pybind[-1].lambda_calls == ("ns::Tensor::Size",)


def test_a_lambda_s_calls_that_start_together_come_inner_first():
    # Triton's pb_stub.cc: `py::module_::import("asyncio").attr(...)` holds two calls at one byte;
    # tree-sitter's order for the tie changed with what the process had parsed before, and a
    # lambda's binding goes to the first of its calls that resolves
    source = ('PYBIND11_MODULE(utils, module) {\n'
              '  py::class_<ns::Request>(module, "Request")\n'
              '      .def("run", [](ns::Request& r) {\n'
              '        return py::module_::import("asyncio").attr("run")(ns::Start(r).Wait());\n'
              '      });\n'
              '}\n')
    calls = scan(source).pybind[-1].lambda_calls
    # (calls on what a call returns, `...import("asyncio").attr`, `ns::Start(r).Wait`, never resolve: left out)
    assert calls == ('py::module_::import', 'ns::Start')
    for _ in range(3):  # the same after other files, in one process
        scan(source.replace("asyncio", "trio") + "int f() { return g(h(1)).k(); }\n")
        assert scan(source).pybind[-1].lambda_calls == calls


def _first_uses_searched(data, bodies, macros):
    """The search _first_in_bodies replaced: per macro and body, the first whole word in the body."""
    out = {}
    for macro in macros:
        word = re.compile(rb"\b" + re.escape(macro.encode()) + rb"\b")
        found = [(i, data.count(b"\n", 0, m.start()) + 1) for i, (start, end, _q) in enumerate(bodies)
                 if (m := word.search(data, start, end))]
        if found:
            out[macro] = found
    return out


@hypothesis.given(hypothesis.strategies.lists(hypothesis.strategies.sampled_from(
    ["{", "}", "CALL_A", "CALL_AB", "xCALL_A", "3CALL_A", "CALL_A_", " ", "\n", "(", ";"]), max_size=60))
@hypothesis.example(["{", "{", "CALL_A", "}", "}"])  # a use in a nested body is the outer one's too
@hypothesis.example(["{", "\n", "{", "}", "{", "\n", "}", "CALL_A", "}", "{", "CALL_A", "}"])  # after siblings
@hypothesis.example(["{", "{", "{", "}", "}", "\n", "CALL_AB", "CALL_A", "}"])
def test_macro_uses_are_found_as_a_search_per_body_finds_them(pieces):
    from extractor.cpp.scan import _first_in_bodies

    data = "".join(pieces).encode()
    # bodies as a scan finds them: each {...} span, nested or apart, sorted
    bodies, open_ = [], []
    for i, byte in enumerate(data):
        if byte == ord("{"):
            open_.append(i)
        elif byte == ord("}") and open_:
            bodies.append((open_.pop(), i + 1, f"f{i}"))
    bodies.sort()
    macros = ["CALL_A", "CALL_AB"]
    assert _first_in_bodies(data, bodies, macros) == _first_uses_searched(data, bodies, macros)


_PIECES = ("API", "API_X", "x", "#", "  # ", "define", " ", "\t", "\n", "\r\n", "\\\n", "\\\r\n", "(", "é", "1API")


@hypothesis.settings(max_examples=400, deadline=None)
@hypothesis.given(hypothesis.strategies.lists(hypothesis.strategies.sampled_from(_PIECES), max_size=30))
def test_word_hashes_rule_out_exactly_the_words_used_only_in_directives(pieces):
    # the graph step skips a file whose word hashes lack a macro, so the hashes must keep every
    # word used_outside_directives finds (continued directive lines and CRLF ends included)
    data = "".join(pieces).encode()
    stored = hashed_words(word_hashes(data))
    for word in ("API", "API_X", "x", "define"):
        assert (word_hash(word) in stored) == bool(used_outside_directives(data, [word])), word


def test_word_hashes_skip_preprocessor_lines_and_their_continuations():
    data = b"#define EXPORT \\\n  __attribute__((used))\nEXPORT void f();\n# if USED_IN_IF\n#endif\n"
    stored = hashed_words(word_hashes(data))
    assert word_hash("EXPORT") in stored and word_hash("f") in stored
    assert word_hash("USED_IN_IF") not in stored and word_hash("__attribute__") not in stored


NAMESPACE_MACROS = (
    "#define ABI_BEGIN inline namespace ABI_NAME {\n"  # an inline namespace named by another macro
    "#define TRTLLM_NAMESPACE_BEGIN \\\n  namespace tensorrt_llm { \\\n  ABI_BEGIN\n"
    "#define TRTLLM_NAMESPACE_END } } /* tensorrt_llm */\n"
    "#define PROTOBUF_NAMESPACE_OPEN namespace google { namespace protobuf {\n"
    "#define PROTOBUF_NAMESPACE_CLOSE } }\n"
    "#define PYBIND11_NAMESPACE_BEGIN(name) namespace name {\n"
    "#define PYBIND11_NAMESPACE_END(name) }\n"
    "#if A\n#define SOMETIMES namespace a {\n#else\n#define SOMETIMES int\n#endif\n"
    "#define NOT_ONE namespace {\n")


def test_macros_that_open_and_close_namespaces_are_read():
    from extractor.cpp.parse import namespace_macros

    assert namespace_macros(NAMESPACE_MACROS.encode()) == {
        "ABI_BEGIN": "=", "TRTLLM_NAMESPACE_BEGIN": "=tensorrt_llm", "TRTLLM_NAMESPACE_END": "}",
        "PROTOBUF_NAMESPACE_OPEN": "=google::protobuf", "PROTOBUF_NAMESPACE_CLOSE": "}",
        "PYBIND11_NAMESPACE_BEGIN": "(", "PYBIND11_NAMESPACE_END": "}"}


def test_a_namespace_macro_defined_as_nothing_in_another_branch_is_read_as_the_namespace():
    """Abseil opens an inline namespace, or nothing, by an option (`ABSL_NAMESPACE_BEGIN`); left as written, the
    grammar read the macro as a type: grpc's vendored Abseil had `absl::string_viewClippedSubstr` and functions
    returning `ABSL_NAMESPACE_BEGIN`. One that opens a named namespace or nothing changes names: not read."""
    from extractor.cpp.parse import namespace_macros

    config = ("#if OPTION == 0\n#define LIB_NAMESPACE_BEGIN\n#define LIB_NAMESPACE_END  // nothing\n"
              "#elif OPTION == 1\n#define LIB_NAMESPACE_BEGIN \\\n  inline namespace NS_NAME {\n"
              "#define LIB_NAMESPACE_END }  // inline\n"
              "#endif\n#if A\n#define HALF namespace a {\n#else\n#define HALF\n#endif\n")
    assert namespace_macros(config.encode()) == {"LIB_NAMESPACE_BEGIN": "=", "LIB_NAMESPACE_END": "}"}
    used = ("namespace absl {\nLIB_NAMESPACE_BEGIN\nclass string_view {};\n"
            "string_view ClippedSubstr(string_view s);\nLIB_NAMESPACE_END\n}  // namespace absl\n")
    facts = scan(config + used)
    assert facts.errors == 0
    assert {"absl::string_view", "absl::ClippedSubstr"} <= set(defs_by_qual(facts))
    assert defs_by_qual(facts)["absl::ClippedSubstr"].returns == "string_view"


def test_definitions_inside_namespace_macros_are_named_as_if_written_out():
    # tree-sitter read `PROTOBUF_NAMESPACE_OPEN` as a return type and the namespace's body as a
    # function's: every definition inside was lost (nlohmann's json.hpp, protobuf, pybind11, fmt)
    used = ("TRTLLM_NAMESPACE_BEGIN\nnamespace kernels {\nstruct Params { int a; };\n"
            "void run(Params p) { helper(p); }\n}\nTRTLLM_NAMESPACE_END\n"
            "PYBIND11_NAMESPACE_BEGIN(detail)\nstruct Caster {};\nPYBIND11_NAMESPACE_END(detail)\n"
            "PROTOBUF_NAMESPACE_OPEN\nclass Message { void Clear(); };\nvoid Message::Clear() {}\n"
            "PROTOBUF_NAMESPACE_CLOSE\n")
    written = ("namespace tensorrt_llm {\nnamespace kernels {\nstruct Params { int a; };\n"
               "void run(Params p) { helper(p); }\n}\n}\n"
               "namespace detail {\nstruct Caster {};\n}\n"
               "namespace google::protobuf {\nclass Message { void Clear(); };\nvoid Message::Clear() {}\n}\n")
    pad = "\n" * NAMESPACE_MACROS.count("\n")  # the same lines
    facts, expected = scan(NAMESPACE_MACROS + used), scan(pad + written)
    assert facts.errors == 0 and facts.defs == expected.defs and facts.calls == expected.calls
    assert {"tensorrt_llm::kernels::Params", "detail::Caster",
            "google::protobuf::Message::Clear"} <= set(defs_by_qual(facts))
    unbalanced = scan(NAMESPACE_MACROS + "PROTOBUF_NAMESPACE_OPEN\nclass Message {};\n")  # no close: as written
    assert "google::protobuf::Message" not in defs_by_qual(unbalanced)
    assert scan(pad + used).errors > 0  # the control: without the definitions, as before


def test_namespace_macros_an_include_defines_are_written_out_in_its_includers(tmp_path):
    from extractor.cpp import extract_cpp_graph
    from extractor.cpp.standalone import scan_trees

    (tmp_path / "config.h").write_text(NAMESPACE_MACROS)
    (tmp_path / "message.h").write_text('#include "config.h"\nPROTOBUF_NAMESPACE_OPEN\nclass Message {};\n'
                                        "PROTOBUF_NAMESPACE_CLOSE\n")
    graph = extract_cpp_graph(scan_trees({"": tmp_path}))
    assert "cpp:google::protobuf::Message" in {n.id for n in graph.nodes}


EXTENDED_LAMBDAS = """\
namespace q {
__device__ float scale(float x) { return x * 2.f; }
__device__ void store(float* out, float v) { *out = v; }
[[nodiscard]] __device__ int kept(int x) { return x; }

__global__ void quant_kernel(float* out) {
  apply(out, [=] __device__(float* dst, float src) {
    store(dst, scale(src));
  });
  apply(out, [&]__host__ __device__(float* dst, float src) { store(dst, src); });
  done(out);
}
}
"""


def test_an_extended_lambdas_execution_space_is_no_parse_error():
    """nvcc's extended lambdas (`[=] __device__ (T& dst) {...}`: vLLM's fp8 quantization, ThunderKittens'
    `apply(dst, src, [val]__device__(...) {...})`) are read as lambdas; a function's own `__device__` after an
    attribute's `]` is no lambda's and stays."""
    data = EXTENDED_LAMBDAS.encode()
    rewritten = blank_lambda_qualifiers(data)
    assert _keeps_places(rewritten, data)
    assert rewritten.count(b"__device__") == data.count(b"__device__") - 2
    facts = scan(EXTENDED_LAMBDAS, Language.CUDA)
    assert facts.errors == 0
    assert defs_by_qual(facts)["q::kept"].kind == "function"
    assert {(callee, at) for _caller, callee, at in each_call(facts.calls)} >= {
        ("store", 8), ("scale", 8), ("store", 10), ("done", 11)}


def test_an_explicit_instantiation_declaration_is_no_parse_error():
    """`extern template ...;` (Abseil's str_format/arg.h declares 50 of them) was an ERROR node each, and took
    the declaration after it along: the grammar reads the instantiation without its `extern`."""
    code = ("namespace fmt {\n"
            "template <typename T> bool Convert(T v) { return v != 0; }\n"
            "extern template bool Convert<char>(char v);\n"
            "extern template bool Convert<signed char>(signed char v);\n"
            "  extern template class Holder<int>;\n"
            "// extern template is said in a comment, as written\n"
            "int After(int x) { return Convert(x); }\n"
            "}  // namespace fmt\n")
    facts = scan(code)
    assert facts.errors == 0
    assert [(d.qual, d.line) for d in facts.defs] == [("fmt", 1), ("fmt::Convert", 2), ("fmt::After", 7)]
    assert facts.calls == (("fmt::After", (("Convert", 7),)),)
    rewritten = drop_extern_of_templates(code.encode())
    assert _keeps_places(rewritten, code.encode()) and b"// extern template is said" in rewritten
    instantiations = re.sub(r"(?m)^( *)extern template", r"\1template", code)  # the control: no `extern`
    assert scan(instantiations).defs == facts.defs


def test_macros_that_give_c_linkage_are_written_out_as_it(tmp_path):
    """`#define BEGIN_C_DECLS extern "C" {` (nlohmann's JSON_HEDLEY_BEGIN_C_DECLS, Abseil's
    ABSL_INTERNAL_BEGIN_EXTERN_C), nothing for a C compiler, and `extern "C"` before one declaration (stb's
    STBIWDEF): read as written, the grammar took the macro for a type, and the functions lost their C
    linkage, by which ctypes and cgo bindings are found."""
    from extractor.cpp import extract_cpp_graph
    from extractor.cpp.parse import C_BLOCK, C_PREFIX, namespace_macros
    from extractor.cpp.standalone import scan_trees

    decls = ('#ifdef __cplusplus\n#define LIB_BEGIN_C_DECLS extern "C" {\n#define LIB_END_C_DECLS }\n'
             '#define LIB_C_DECL extern "C"\n#else\n#define LIB_BEGIN_C_DECLS\n#define LIB_END_C_DECLS\n'
             "#define LIB_C_DECL\n#endif\n#if A\n#define HALF_C extern \"C\"\n#else\n#define HALF_C static\n#endif\n")
    assert namespace_macros(decls.encode()) == {"LIB_BEGIN_C_DECLS": C_BLOCK, "LIB_END_C_DECLS": "}",
                                               "LIB_C_DECL": C_PREFIX}
    (tmp_path / "decls.h").write_text(decls)
    (tmp_path / "api.h").write_text('#include "decls.h"\nLIB_BEGIN_C_DECLS\nint lib_open(const char* path);\n'
                                    "LIB_END_C_DECLS\nLIB_C_DECL int lib_close(int fd);\nint lib_tell(int fd);\n")
    graph = extract_cpp_graph(scan_trees({"": tmp_path}))
    assert {"cpp:lib_open", "cpp:lib_close"} <= graph.shared.c_linkage
    assert "cpp:lib_tell" not in graph.shared.c_linkage  # after the block, as written
    assert graph.stats.get("error_nodes", 0) == 0


def test_the_class_of_a_pointer_to_member_in_a_declarator_is_no_parse_error():
    # the grammar reads `void (Widget::*cb)(int)` in a parameter only: as a class's member or a typedef, the
    # `Widget::` is an ERROR node and the rest a pointer named as written; nothing is missing
    code = ("namespace ns {\n"
            "class Widget;\n"
            "typedef void (Widget::*Handler)(int);\n"
            "typedef int (ns::Table<int, char>::*Getter)() const;\n"
            "class Dispatcher {\n"
            " public:\n"
            "  void (Widget::*handler_)(int);\n"
            "  void after(int y) { helper(y); }\n"
            "  int helper(int z);\n"
            "};\n"
            "void each(void (Widget::*cb)(int));\n"
            "}  // namespace ns\n")
    facts = scan(code)
    assert facts.errors == 0
    assert {"ns::Dispatcher::after", "ns::Dispatcher::helper", "ns::each"} <= set(defs_by_qual(facts))
    assert "ns::Dispatcher::handler_" not in defs_by_qual(facts)  # a field, no method
    tree = _parse_as_written(code.encode())
    errors, stack = [], [tree.root_node]
    while stack:
        node = stack.pop()
        errors += [node.text.strip()] if node.type == "ERROR" else []
        stack.extend(node.children)
    # the control: the grammar makes them, the classes and the pointed-to function's `const`
    assert sorted(errors) == [b"Widget::", b"Widget::", b"const", b"ns::Table<int, char>::"]
