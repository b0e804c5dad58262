"""Declarations a macro wraps in attributes, and function-like macros that expand to attributes.

C libraries mark deprecated functions of their public header with a macro of their own, defined per
compiler: ggml's ``GGML_DEPRECATED(func, hint)`` is ``func __attribute__((deprecated(hint)))``,
``__declspec(deprecated(hint)) func`` or ``func``, and whisper.cpp, llama.cpp and every system that
vendors them declare their old entry points that way. Read as written, each use is an ERROR to
the grammar (ggml.h: 157 ERROR nodes), the declaration inside it is lost, and the function it
declares is reported as "not in a public header" although it is. A format-checking attribute
written as a macro with arguments (``GGML_ATTRIBUTE_FORMAT(3, 4)``) makes the declaration after it
a statement with a missing ``;``. A small handwritten library in those shapes.
"""

from __future__ import annotations

import pytest

from extractor.cpp import scan_cpp
from extractor.cpp.parse import DECLARATION_WRAPPER, attribute_macros, parse_source, unwrap_declarations
from extractor.model import Language, ParsedFile

from tests.cpp_support import cpp_graph

HEADER = """\
#pragma once
#include <stddef.h>

#ifdef __GNUC__
#    define LIB_DEPRECATED(func, hint) func __attribute__((deprecated(hint)))
#elif defined(_MSC_VER)
#    define LIB_DEPRECATED(func, hint) __declspec(deprecated(hint)) func
#else
#    define LIB_DEPRECATED(func, hint) func
#endif

#if defined(_MSC_VER)
#    define LIB_FORMAT(...)
#else
#    define LIB_FORMAT(...) __attribute__((format(printf, __VA_ARGS__)))
#endif

#define LIB_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

    struct lib_context;

    LIB_API struct lib_context * lib_init_with_params(const char * path, int flags);

    LIB_DEPRECATED(
        LIB_API struct lib_context * lib_init(const char * path), // lib_init_with_params(path, 0)
        "use lib_init_with_params() instead"
    );

    LIB_DEPRECATED(LIB_API size_t lib_size(
            const struct lib_context * ctx,
            int                        kind),
        "use lib_nbytes(ctx, kind, 1) instead, it (rounds) up");

    LIB_FORMAT(2, 3)
    LIB_API void lib_log(struct lib_context * ctx, const char * fmt, ...);

    LIB_API void lib_free(struct lib_context * ctx);

#ifdef __cplusplus
}
#endif
"""

SOURCE = """\
#include "lib.h"

struct lib_context { int flags; };

struct lib_context * lib_init_with_params(const char * path, int flags) { return 0; }
struct lib_context * lib_init(const char * path) { return lib_init_with_params(path, 0); }
size_t lib_size(const struct lib_context * ctx, int kind) { return 0; }
void lib_log(struct lib_context * ctx, const char * fmt, ...) {}
void lib_free(struct lib_context * ctx) { lib_log(ctx, "%s", "bye"); }
"""


def _errors(tree) -> list[int]:
    found, stack = [], [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            found.append(node.start_point[0] + 1)
        stack.extend(node.children)
    return found


@pytest.mark.parametrize(("code", "expected"), [
    (HEADER, ["LIB_API", "LIB_DEPRECATED" + DECLARATION_WRAPPER, "LIB_FORMAT("]),
    # the C++ attribute, and a wrapper of one parameter
    ("#define OLD(decl) [[deprecated]] decl\n", ["OLD" + DECLARATION_WRAPPER]),
    # the identity is what the preprocessor would write
    ("#define F(x) x\n", ["F" + DECLARATION_WRAPPER]),
    # a second parameter outside an attribute, or the first twice: not a wrapper
    ("#define G(f, h) f h\n", []),
    ("#define TWICE(f) f f\n", []),
    ("#define PAREN(x) (x)\n", []),
    # defined as a wrapper in one branch and as something else in another: read as written
    ("#if A\n#define W(f, h) f\n#else\n#define W(f, h) check(f)\n#endif\n", []),
    # an empty function-like macro, and one of attributes only: blanked with their arguments
    ("#define GUARD(name)\n#define ALIGNED(n) __attribute__((aligned(n)))\n", ["ALIGNED(", "GUARD("]),
    # continued lines, a pragma with parentheses of its own, and a body that uses another such macro
    # (nlohmann's deprecation attribute inside its diagnostic-suppressing wrapper)
    ('#define PUSH __pragma(warning(push))\n#define POP _Pragma("pop")\n'
     "#define WRAP_(x) \\\n  PUSH \\\n  x \\\n  POP\n"
     '#define DEP_FOR(since, use) WRAP_([[deprecated("use " #use)]])\n',
     ["DEP_FOR(", "POP", "PUSH", "WRAP_" + DECLARATION_WRAPPER]),
    # ... unless the file defines a function of that name in another branch (ggml's OpenCL dump_tensor)
    ("#ifdef DEBUG\nstatic void dump(const int * t) {\n}\n#else\n#define dump(t)\n#endif\n", []),
    # a body continued on the next line is not read here
    ("#define LONG(name) \\\n  record(#name);\n", []),
])
def test_function_like_macros_read_by_their_definitions(code, expected):
    assert attribute_macros(code.encode()) == expected


def test_a_wrapped_declaration_is_unwrapped_in_place():
    text = b'  OLD(int f(int a, /* ) */ int b), "use g(a, b)");\n  OLD(int h(void));\n'
    out = unwrap_declarations(text, frozenset({"OLD"}))
    assert out == b'      int f(int a, /* ) */ int b)                ;\n      int h(void) ;\n'
    # inside a directive, and a use whose parenthesis does not close: as written
    kept = b"#define X OLD(int f())\nOLD(int g(\n"
    assert unwrap_declarations(kept, frozenset({"OLD"})) == kept


def test_the_header_parses_without_errors():
    # only the `}` of `extern "C" {` in its own `#ifdef __cplusplus` group, as in every such header
    assert _errors(parse_source(HEADER.encode(), Language.CPP)) == [43]


def test_deprecated_functions_are_declared_in_the_public_header(tmp_path):
    graph = cpp_graph(tmp_path, {"include/lib.h": HEADER, "src/lib.c": SOURCE})
    nodes = {n.id: n for n in graph.nodes}
    for name in ("lib_init", "lib_size", "lib_log", "lib_init_with_params", "lib_free"):
        assert nodes[f"cpp:{name}"].api == "public: public header include/lib.h", name


def test_a_wrapper_an_included_header_defines_unwraps_in_its_includer(tmp_path):
    # ggml's wrapper is defined in ggml.h and used in the headers that include it: the includer's
    # second scan looked the wrapper up by `NAME(decl)`, a word no file has, and never blanked it
    graph = cpp_graph(tmp_path, {"include/lib.h": HEADER, "include/ext.h": (
        '#pragma once\n#include "lib.h"\n'
        'LIB_DEPRECATED(LIB_API int ext_open(const char * path), "use ext_open_with(path, 0)");\n'
        'LIB_DEPRECATED(\n    int ext_size(int kind),\n    "use ext_nbytes(kind)");\n'
        'LIB_API int ext_nbytes(int kind);\n')})
    nodes = {n.id: n for n in graph.nodes}
    assert (nodes["cpp:ext_open"].path, nodes["cpp:ext_open"].line) == ("include/ext.h", 3)
    assert (nodes["cpp:ext_size"].path, nodes["cpp:ext_size"].line) == ("include/ext.h", 5)
    assert "include/ext.h" not in {d.path for d in graph.diagnostics if d.code == "parse-errors"}


def test_a_string_literal_a_macro_continues_is_no_parse_error():
    # `"%" PRIu64 "\n"` and Mooncake's `"not available" LOC_MARK`: one literal to the preprocessor, an
    # ERROR around the first literal to the grammar, and nothing lost; a real error still counts
    code = (b'#include <inttypes.h>\n'
            b'void report(long n) {\n'
            b'    printf("%s: %" PRIu64 " of %d\\n", __func__, n, total(n));\n'
            b'    fail("connection not available" LOC_MARK);\n'
            b'    int broken = ( ;\n'
            b'}\n'
            # MXNet's operators: a raw literal that ADD_FILELINE ("Defined in " __FILE__ ...) continues
            b'NNVM_REGISTER_OP(_npi_stack)\n.describe(R"code(Stacks arrays.\n)code" ADD_FILELINE)\n.set_num_inputs(0);\n')
    facts = scan_cpp(ParsedFile(Language.CPP, code, parse_source(code, Language.CPP)))
    assert facts.error_lines == (5,)
    assert {callee for _scope, calls in facts.calls for callee, _line in calls} >= {"printf", "total", "fail"}


def test_a_header_condition_and_calling_conventions_parse():
    # `#if __has_include(<...>)` (C++17): the grammar's conditions take no header name, and the
    # whole `#if` with its #includes was an ERROR; OpenCL's and Vulkan's calling conventions are
    # `__stdcall` on Windows and nothing elsewhere
    code = (b'#if __has_include(<jsoncpp/json/json.h>)\n#include <jsoncpp/json/json.h>\n'
            b'#elif __has_include("json/json.h")\n#include "json/json.h"\n#endif\n'
            b'#if defined(_WIN32)\n#define CL_API_CALL __stdcall\n#else\n#define CL_API_CALL\n#endif\n'
            b'typedef int (CL_API_CALL *clGetIDs_fn)(unsigned int n);\n'
            b'int CL_API_CALL clGetIDs(unsigned int n);\n')
    facts = scan_cpp(ParsedFile(Language.CPP, code, parse_source(code, Language.CPP)))
    assert facts.errors == 0
    included = [(target, line) for target, _system, line in facts.includes]
    assert included == [("jsoncpp/json/json.h", 2), ("json/json.h", 4)]
    assert "CL_API_CALL" in attribute_macros(code)


def test_alignment_macros_before_a_class_name_are_attributes(tmp_path):
    """RocksDB's `#define ALIGN_AS(n) alignas(n)` (or nothing, by platform) before a class's name:
    `class ALIGN_AS(CACHE_LINE_SIZE) LRUCacheShard final : ...` lost the class and its members; so did an
    object-like `alignas(64)` macro before a struct's name, in the file that defines them and in its includers."""
    graph = cpp_graph(tmp_path, {
        "port/port.h": ("#ifdef OS_WIN\n#define ALIGN_AS(n) /*empty*/\n#else\n#define ALIGN_AS(n) alignas(n)\n#endif\n"
                        "#define CACHE_ALIGNED alignas(64)\n"),
        "cache/lru_cache.h": ('#include "port/port.h"\nnamespace rocksdb {\n'
                              "class ALIGN_AS(CACHE_LINE_SIZE) LRUCacheShard final : public CacheShardBase {\n"
                              " public:\n  void Insert(int k);\n};\nstruct CACHE_ALIGNED Stats { int hits; };\n}\n"),
    })
    ids = {n.id for n in graph.nodes}
    assert {"cpp:rocksdb::LRUCacheShard", "cpp:rocksdb::LRUCacheShard::Insert", "cpp:rocksdb::Stats"} <= ids
    assert attribute_macros(b"#define ALIGN_AS(n) alignas(n)\n#define CACHE_ALIGNED alignas(64)\n") == [
        "ALIGN_AS(", "CACHE_ALIGNED"]
    assert graph.stats.get("error_nodes", 0) == 0


def test_exception_specifications_and_virt_specifiers_by_compiler_are_attributes(tmp_path):
    """Catch 1.x's single header (vendored by Thrift and many others): `#define CATCH_NOEXCEPT noexcept` or
    `throw()` by compiler, `#define CATCH_NOEXCEPT_IS(x) noexcept(x)` or nothing, `#define CATCH_OVERRIDE
    override` or nothing. Left as written, `virtual ~NotImplementedException() CATCH_NOEXCEPT {}` and each
    `... const CATCH_OVERRIDE {` were ERROR nodes (227 in the header), the members after them lost."""
    header = ("#if defined(CATCH_CONFIG_CPP11_NOEXCEPT)\n#  define CATCH_NOEXCEPT noexcept\n"
              "#  define CATCH_NOEXCEPT_IS(x) noexcept(x)\n#else\n#  define CATCH_NOEXCEPT throw()\n"
              "#  define CATCH_NOEXCEPT_IS(x)\n#endif\n"
              "#ifdef CATCH_CONFIG_CPP11_OVERRIDE\n#  define CATCH_OVERRIDE override\n#  define CATCH_FINAL final\n"
              "#else\n#  define CATCH_OVERRIDE\n#  define CATCH_FINAL\n#endif\n"
              "namespace Catch {\nclass NotImplemented : public std::exception {\n public:\n"
              "  virtual ~NotImplemented() CATCH_NOEXCEPT {}\n"
              "  virtual const char* what() const CATCH_NOEXCEPT_IS(true);\n  void raise() { describe(); }\n};\n"
              "struct Matcher CATCH_FINAL : MatcherBase {\n"
              "  virtual bool match(int arg) const CATCH_OVERRIDE { return check(arg); }\n"
              "  virtual std::string toString() const CATCH_OVERRIDE { return render(); }\n};\n}\n")
    assert {"CATCH_NOEXCEPT", "CATCH_NOEXCEPT_IS(", "CATCH_OVERRIDE", "CATCH_FINAL"} <= set(
        attribute_macros(header.encode()))
    graph = cpp_graph(tmp_path, {"include/catch.hpp": header})
    ids = {n.id for n in graph.nodes}
    assert {"cpp:Catch::NotImplemented::~NotImplemented", "cpp:Catch::NotImplemented::raise",
            "cpp:Catch::Matcher::match", "cpp:Catch::Matcher::toString"} <= ids
    assert graph.stats.get("error_nodes", 0) == 0
    # an exception specification is no call of a function `noexcept`, nor a throw an expression a macro stands for
    assert attribute_macros(b"#define RAISE(e) throw(e)\n#define NOTHING_THROWN throw (std::bad_alloc)\n") == []
