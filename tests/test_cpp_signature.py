"""C/C++ parameters and return types as data, and torch operator schemas."""

from __future__ import annotations

import pytest

from extractor.cpp.facts import Definition, Param
from extractor.cpp.parse import parse_source
from extractor.cpp.scan import scan_cpp
from extractor.cpp.signature import parse_schema
from extractor.model import Language, ParsedFile


def first_def(code: str, language: Language = Language.CPP) -> Definition:
    data = code.encode()
    facts = scan_cpp(ParsedFile(language, data, parse_source(data, language)))
    return [d for d in facts.defs if d.kind in ("function", "kernel")][0]


@pytest.mark.parametrize(("code", "params", "returns"), [
    ("void f(const torch::Tensor &input, int64_t n = 4) {}",
     [["input", "const torch::Tensor&", None], ["n", "int64_t", "4"]], "void"),
    ("static inline const std::vector<int>& g(std::optional<at::Tensor> const& bias = std::nullopt);",
     [["bias", "std::optional<at::Tensor> const&", "std::nullopt"]], "const std::vector<int>&"),
    ("int h(void) { return 0; }", [], "int"),
    ("auto k(int) -> std::vector<int> { return {}; }", [["", "int", None]], "std::vector<int>"),
    ("int printf_like(const char* fmt, ...);", [["fmt", "const char*", None], ["...", "...", None]], "int"),
    ("template <typename... Args> void pack(Args&&... args) {}", [["args", "Args&&...", None]], "void"),
    ("void cb(int (*fn)(int), double out[3]) {}", [["fn", "int(*)(int)", None], ["out", "double[3]", None]],
     "void"),
    ("unsigned long long* const p(int a);", [["a", "int", None]], "unsigned long long* const"),
    ("__global__ void __launch_bounds__(256) kern(const float* __restrict__ a, int n) {}",
     [["a", "const float*", None], ["n", "int", None]], "void"),
])
def test_parameters_and_return_types(code, params, returns):
    language = Language.CUDA if "__global__" in code else Language.CPP
    d = first_def(code, language)
    assert [[p.name, p.type, p.default] for p in d.params] == params
    assert d.returns == returns


def test_an_unnamed_pointer_parameter_with_a_default_is_no_parse_error():
    # RocksDB's `virtual Status Get(..., uint64_t* = nullptr, bool /*is_retry*/ = false)`: the grammar leaves
    # the `*` an ERROR node, and the file was said to have parse errors; the parameters were read right
    data = b"class A {\n public:\n  virtual Status Get(Options& o, uint64_t* = nullptr, int& = x, char** = 0);\n};\n"
    facts = scan_cpp(ParsedFile(Language.CPP, data, parse_source(data, Language.CPP)))
    assert [(p.type, p.default) for p in facts.defs[1].params] == [
        ("Options&", None), ("uint64_t*", "nullptr"), ("int&", "x"), ("char**", "0")]
    assert facts.errors == 0


def test_constructors_have_no_return_type_and_members_keep_access():
    data = b"class C {\n public:\n  C(int x);\n private:\n  void hidden();\n protected:\n  int guarded() const;\n};\n"
    defs = {d.qual: d for d in scan_cpp(ParsedFile(Language.CPP, data, parse_source(data, Language.CPP))).defs}
    assert defs["C::C"].returns == "" and defs["C::C"].params == (Param("x", "int", None),)
    assert "private" in defs["C::hidden"].tags and "protected" in defs["C::guarded"].tags
    assert not {"private", "protected"} & set(defs["C::C"].tags)


def test_nullability_qualifiers_and_macros_for_them_are_no_names():
    # folly's FOLLY_NULLABLE is Clang's `_Nullable` or nothing: read as written, it was the parameter's name
    data = (b"#if defined(__clang__)\n#define FOLLY_NULLABLE _Nullable\n#else\n#define FOLLY_NULLABLE\n#endif\n"
            b"void f(int * _Nonnull p, Printer* FOLLY_NULLABLE printer);\n")
    facts = scan_cpp(ParsedFile(Language.CPP, data, parse_source(data, Language.CPP)))
    assert [(p.name, p.type) for p in facts.defs[0].params] == [("p", "int*"), ("printer", "Printer*")]
    assert facts.errors == 0 and facts.defines == ("FOLLY_NULLABLE",)


def test_a_name_in_parentheses_after_a_typedef_names_the_function():
    # Catch2's `static constexpr result_type (max)() {` (so that Windows' max macro does not expand): the
    # grammar reads a function `result_type` of a parameter of type `max`; a function named by a macro,
    # `URI_FUNC(Parse)(...)`, keeps the name as written
    data = (b"class Pcg {\n public:\n  using result_type = unsigned;\n"
            b"  static constexpr result_type (max)() { return 1; }\n  result_type (next)(int n);\n};\n"
            b"int URI_FUNC(Parse)(const char* first) { return 0; }\n")
    defs = {d.qual: d for d in scan_cpp(ParsedFile(Language.CPP, data, parse_source(data, Language.CPP))).defs}
    assert set(defs) == {"Pcg", "Pcg::max", "Pcg::next", "URI_FUNC(Parse)"}
    assert (defs["Pcg::max"].returns, defs["Pcg::max"].params) == ("result_type", ())
    assert (defs["Pcg::next"].returns, defs["Pcg::next"].params) == ("result_type", (Param("n", "int", None),))


def test_a_macro_the_file_does_not_know_before_a_name_is_not_the_names_scope():
    # jemalloc's `void JEMALLOC_NOTHROW je_sdallocx_impl(...)` where JEMALLOC_NOTHROW comes from a header the
    # file does not reach: the grammar invents a `::` and read the function `JEMALLOC_NOTHROWje_sdallocx_impl`;
    # a real qualified name keeps its scope
    data = (b"static inline void JEMALLOC_NOTHROW\nje_sdallocx_impl(void *ptr, int flags) {\n  free(ptr);\n}\n"
            b"void Arena::reset(int n) {}\n"
            # zstd's export macro unknown to the file: the grammar takes it for the type
            b"ZSTDLIB_API ZSTD_bounds ZSTD_cParam_getBounds(ZSTD_cParameter cParam);\n")
    defs = {d.qual: d for d in scan_cpp(ParsedFile(Language.CPP, data, parse_source(data, Language.CPP))).defs}
    assert set(defs) == {"je_sdallocx_impl", "Arena::reset", "ZSTD_cParam_getBounds"}
    assert [p.name for p in defs["je_sdallocx_impl"].params] == ["ptr", "flags"]
    assert (defs["je_sdallocx_impl"].returns, defs["ZSTD_cParam_getBounds"].returns) == ("void", "ZSTD_bounds")


def test_pointers_to_functions_declare_no_function():
    # Triton's CudaDriverHelper keeps driver entry points found by dlsym as data members; a pointer to a
    # function was recorded as a method named `(*cu_init_fn_)`
    data = (b"namespace n {\nclass DriverHelper {\n public:\n  void Load();\n"
            b"  CUresult (*cu_init_fn_)(unsigned int);\n  void (Other::*handler_)(int) const;\n};\n"
            b"extern void* (*mallocx)(size_t, int);\nint (*table[4])(int);\ntypedef int (*cb_t)(int);\n"
            b"static auto (*getOps() noexcept)(int) { return nullptr; }\nint (isalpha)(int c);\n}\n")
    facts = scan_cpp(ParsedFile(Language.CPP, data, parse_source(data, Language.CPP)))
    defs = {d.qual: d for d in facts.defs}
    assert set(defs) == {"n", "n::DriverHelper", "n::DriverHelper::Load", "n::getOps", "n::isalpha"}
    assert defs["n::getOps"].returns == "auto(*)(int)" and defs["n::getOps"].params == ()
    assert defs["n::isalpha"].returns == "int" and defs["n::isalpha"].params == (Param("c", "int", None),)
    assert [(f.name, f.type) for f in facts.fields] == [("cu_init_fn_", "CUresult(*)(unsigned int)")]
    assert [(a.name, a.type) for a in facts.type_aliases] == [("cb_t", "int(*)(int)")]


@pytest.mark.parametrize(("schema", "expected"), [
    ("rms_norm(Tensor! result, Tensor input, Tensor weight, float epsilon) -> ()",
     {"name": "rms_norm", "overload": "", "returns": "()",
      "params": [["result", "Tensor!", None, False], ["input", "Tensor", None, False],
                 ["weight", "Tensor", None, False], ["epsilon", "float", None, False]]}),
    ("machete_mm(Tensor A, Tensor B, *, ScalarType? out_type=None, int[] size=[1, 1]) -> Tensor",
     {"name": "machete_mm", "overload": "", "returns": "Tensor",
      "params": [["A", "Tensor", None, False], ["B", "Tensor", None, False],
                 ["out_type", "ScalarType?", "None", True], ["size", "int[]", "[1, 1]", True]]}),
    ("_C::topk.out(Tensor(a!) out, SymInt k) -> (Tensor, Tensor)",
     {"name": "topk", "overload": "out", "returns": "(Tensor, Tensor)",
      "params": [["out", "Tensor(a!)", None, False], ["k", "SymInt", None, False]]}),
])
def test_torch_schemas_parse_into_parameters(schema, expected):
    assert parse_schema(schema) == expected


def test_a_string_that_is_not_a_schema_is_none():
    assert parse_schema("just_a_name") is None
