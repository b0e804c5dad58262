"""Conversion functions: `operator float() const`, `explicit operator bool() const`, `operator T*()`.

The grammar reads a conversion function's name as an `operator_cast` that holds its parameters, not a
function declarator, and the scan recorded none: oneDNN's `bfloat16_t::operator float` (its number types
each convert so), every `operator bool` of a handle or a status. universal-ctags records them (`operator
float`); they were 152 of the 411 ctags definitions the evidence lacked on oneDNN. A conversion to a
qualified type (`operator std::string()`) is still not recorded: its name's `::` would read as a scope's."""

from __future__ import annotations

from extractor.cpp.scan import scan_source
from extractor.model import EdgeKind, Language
from tests.cpp_support import cpp_graph, edges

NUMBERS = {
    "src/common/bfloat16.hpp": """#pragma once
#include <cstdint>
#include <string>

namespace dnnl::impl {

struct bfloat16_t {
    uint16_t raw_bits_;
    bfloat16_t() = default;
    operator float() const;
    explicit operator bool() const { return is_nonzero(raw_bits_); }
    template <typename T>
    operator T*() const { return reinterpret_cast<T*>(address()); }
    operator const char*() const;
    operator std::string() const { return describe(); }
    const void* address() const;
};

}  // namespace dnnl::impl
""",
    "src/common/bfloat16.cpp": """#include "common/bfloat16.hpp"

namespace dnnl::impl {

bfloat16_t::operator float() const {
    return widen(raw_bits_);
}

float sum(const bfloat16_t& a, const bfloat16_t& b) { return float(a) + float(b); }

}  // namespace dnnl::impl
""",
}
CLASS = "cpp:dnnl::impl::bfloat16_t::"


def test_conversion_functions_are_members_defined_where_they_are(tmp_path):
    graph = cpp_graph(tmp_path, NUMBERS)
    members = {n.id.removeprefix(CLASS): (n.path, n.line, n.returns) for n in graph.nodes if n.id.startswith(CLASS)}
    assert members == {
        "bfloat16_t": ("src/common/bfloat16.hpp", 9, ""),
        "operator float": ("src/common/bfloat16.cpp", 5, "float"),  # where it is defined, not declared
        "operator bool": ("src/common/bfloat16.hpp", 11, "bool"),
        "operator T*": ("src/common/bfloat16.hpp", 13, "T*"),
        "operator const char*": ("src/common/bfloat16.hpp", 14, "const char*"),
        "address": ("src/common/bfloat16.hpp", 16, "const void*"),
    }
    calls = edges(graph, EdgeKind.CALLS)
    assert (CLASS + "operator T*", CLASS + "address") in calls  # a call in its body is its
    # a conversion is no function of the type's name: `float(a)` calls none of them
    assert not {(caller, callee) for caller, callee in calls if callee.startswith(CLASS + "operator")}


def test_a_conversion_function_is_read_from_the_file_alone():
    facts = scan_source(b"struct S {\n  operator float() const { return widen(bits); }\n};\n", Language.CPP)
    assert [(d.qual, d.kind, d.returns) for d in facts.defs] == [
        ("S", "struct", ""), ("S::operator float", "function", "float")]

