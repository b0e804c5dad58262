"""Command-line flags defined at namespace scope with Abseil's or gflags' macros (`ABSL_FLAG(type, name,
default, help);`, `DEFINE_int32(name, default, help);`): read as declarations they broke the parse of the
file around them (a bogus function `ABSL_FLAG`, the functions after them lost: sentencepiece's
compile_charsmap_main.cc). They are blanked with their arguments, as attribute macros are."""

from __future__ import annotations

from pathlib import Path

from tests.cpp_support import cpp_graph

TOOL = r'''
#include <string>
#include "absl/flags/flag.h"

ABSL_FLAG(std::string, output, "", "output filename");
DEFINE_int32(threads, 4, "worker threads");
ABSL_FLAG(bool, output_precompiled_header, false,
          "make a header file");

namespace tool {
namespace {
std::string ToHexData(const std::string& data) { return data; }
}  // namespace
std::string MakeHeader(const std::string& data) { return ToHexData(data); }
}  // namespace tool

int main(int argc, char** argv) { return tool::MakeHeader("x").size(); }
'''


def test_flag_macros_at_namespace_scope_leave_the_definitions_around_them(tmp_path: Path):
    graph = cpp_graph(tmp_path, {"tool_main.cc": TOOL.lstrip("\n")})
    names = {n.id for n in graph.nodes if n.kind.value == "function"}
    assert names == {"cpp:tool::(anonymous namespace@tool_main.cc)::ToHexData", "cpp:tool::MakeHeader", "cpp:main"}
    assert not [d for d in graph.diagnostics if d.code == "parse-errors"]
