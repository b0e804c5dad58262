"""A function the system defines and a test defines again (a stub or a mock of a C API, as Triton's
core/src/test/repo_agent_test.cc defines `TRITONSERVER_ErrorNew` beside core/src/tritonserver.cc):
one node, located at the system's own definition, not at the test's, whichever path sorts first. The
report's most depended-upon symbols and every edge's target are shown where the node lives."""

from __future__ import annotations

from extractor.model import EdgeKind
from tests.cpp_support import cpp_graph, edges

HEADER = """#pragma once
struct Error;
Error* ErrorNew(int code, const char* msg);
void Report(int code);
"""

SOURCE = """#include "api.h"
struct Error { int code; };
Error* ErrorNew(int code, const char* msg) { return new Error{code}; }
void Report(int code) { ErrorNew(code, "failed"); }
"""

TEST = """#include "../src/api.h"
struct Error { int code; };
Error* ErrorNew(int code, const char* msg) { return nullptr; }
int main() { Report(1); return 0; }
"""


def test_a_function_a_test_defines_again_lives_at_the_systems_definition(tmp_path):
    graph = cpp_graph(tmp_path, {"core/src/api.h": HEADER, "core/src/api.cc": SOURCE,
                                 "core/src/test/api_stub_test.cc": TEST, "core/aaa_test.cc": TEST})
    node = next(n for n in graph.nodes if n.id == "cpp:ErrorNew")
    assert (node.path, node.line) == ("core/src/api.cc", 3)
    assert sorted((s.path, s.line) for s in node.sites) == [("core/aaa_test.cc", 3),
                                                            ("core/src/test/api_stub_test.cc", 3)]
    assert ("cpp:Report", "cpp:ErrorNew") in edges(graph, EdgeKind.CALLS)


def test_a_function_only_tests_define_stays_at_the_first_of_them(tmp_path):
    graph = cpp_graph(tmp_path, {"src/api.h": HEADER, "tests/b_test.cc": TEST, "tests/a_test.cc": TEST})
    node = next(n for n in graph.nodes if n.id == "cpp:ErrorNew")
    assert (node.path, node.line) == ("tests/a_test.cc", 3)
