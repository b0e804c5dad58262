"""Test bodies written with a framework's macros are the classes and methods the macros expand to.

tree-sitter reads `TEST_F(ArenaTest, Grow) { ... }` as a function named TEST_F: taken as written,
every test body of a namespace would be one node `TEST_F` holding all their calls (Triton's
core/src/test/memory_test.cc: 14 bodies, one node). Small trees written into a temp dir in the
shapes real test suites have: a fixture class beside its tests, tests in an anonymous namespace
(Triton's), parameterised and typed tests, Boost.Test cases, Catch2 cases and a macro no table knows.
"""

from __future__ import annotations

import pytest

from extractor.cpp.testmacros import load_test_macros
from extractor.errors import UserInputError
from extractor.model import EdgeKind, NodeKind

from tests.cpp_support import cpp_graph, edges

ENGINE = {
    "src/arena.h": """
#pragma once
namespace engine {
int allocated();
void grow(int arena);
void release(int arena);
bool fits(int size);
int make_arena(int size);
}
""",
    "src/test/arena_test.cc": """
#include <gtest/gtest.h>
#include "arena.h"

namespace engine { namespace test {

class ArenaTest : public ::testing::Test {
 protected:
  void SetUp() override { arena_ = make_arena(64); }
  int arena_ = 0;
};

class SizesTest : public ::testing::TestWithParam<int> {};

TEST(Arena, Empty)
{
  EXPECT_EQ(0, engine::allocated());
}

// growing twice keeps the first block
TEST_F(ArenaTest, Grow)
{
  engine::grow(arena_);
}

TEST_F(ArenaTest, Release)
{
  engine::release(arena_);
}

TEST_P(SizesTest, Fits) { engine::fits(GetParam()); }

}}  // namespace engine::test
""",
    # Triton's shape: the fixture and its tests in an anonymous namespace
    "src/test/pool_test.cc": """
#include <gtest/gtest.h>
#include "arena.h"
namespace {
class PoolTest : public ::testing::Test {};
TEST_F(PoolTest, Grow) { engine::grow(1); }
TEST_F(PoolTest, Release) { engine::release(2); }
}  // namespace
""",
}
NS = "cpp:engine::test::"


def test_each_test_body_is_the_class_and_testbody_method_gtest_names(tmp_path):
    graph = cpp_graph(tmp_path, ENGINE)
    nodes = {n.id: n for n in graph.nodes}
    for test, line in (("Arena_Empty_Test", 15), ("ArenaTest_Grow_Test", 21), ("ArenaTest_Release_Test", 26),
                       ("SizesTest_Fits_Test", 31)):
        cls, body = nodes[NS + test], nodes[f"{NS}{test}::TestBody"]
        assert (cls.kind, cls.path, cls.line) == (NodeKind.CLASS, "src/test/arena_test.cc", line)
        assert (body.kind, body.path, body.line) == (NodeKind.METHOD, "src/test/arena_test.cc", line)
        assert "test" in cls.tags and "test" in body.tags
        assert (cls.id, body.id) in edges(graph, EdgeKind.CONTAINS)
    assert nodes[f"{NS}ArenaTest_Grow_Test"].doc == "growing twice keeps the first block"
    # TEST and TEST_F declare TestBody private, TEST_P public
    assert "private" in nodes[f"{NS}ArenaTest_Grow_Test::TestBody"].tags
    assert "private" not in nodes[f"{NS}SizesTest_Fits_Test::TestBody"].tags
    assert not {name for name in nodes if name.rsplit("::", 1)[-1] in ("TEST", "TEST_F", "TEST_P")}
    assert graph.stats["test_bodies"] == 6


def test_a_test_class_inherits_its_fixture_or_testing_test(tmp_path):
    graph = cpp_graph(tmp_path, ENGINE)
    inherits = edges(graph, EdgeKind.INHERITS)
    assert {(NS + "Arena_Empty_Test", "cpp:testing::Test"), (NS + "ArenaTest_Grow_Test", NS + "ArenaTest"),
            (NS + "ArenaTest_Release_Test", NS + "ArenaTest"),
            (NS + "SizesTest_Fits_Test", NS + "SizesTest")} <= inherits
    local = "cpp:(anonymous namespace@src/test/pool_test.cc)::"
    assert (local + "PoolTest_Grow_Test", local + "PoolTest") in inherits
    assert {n.kind for n in graph.nodes if n.id == "cpp:testing::Test"} == {NodeKind.EXTERNAL}


def test_each_body_calls_what_it_calls_and_nothing_of_the_others(tmp_path):
    calls = edges(cpp_graph(tmp_path, ENGINE), EdgeKind.CALLS)
    local = "cpp:(anonymous namespace@src/test/pool_test.cc)::"

    def called(source: str) -> set[str]:
        return {target for caller, target in calls if caller == source}

    assert called(NS + "Arena_Empty_Test::TestBody") == {"cpp:engine::allocated"}
    assert called(NS + "ArenaTest_Grow_Test::TestBody") == {"cpp:engine::grow"}
    assert called(NS + "ArenaTest_Release_Test::TestBody") == {"cpp:engine::release"}
    assert called(NS + "SizesTest_Fits_Test::TestBody") == {"cpp:engine::fits"}
    assert called(local + "PoolTest_Grow_Test::TestBody") == {"cpp:engine::grow"}
    assert called(local + "PoolTest_Release_Test::TestBody") == {"cpp:engine::release"}


TYPED_AND_BOOST = {
    "test/typed_test.cc": """
#include <gtest/gtest.h>
template <typename T> class QueueTest : public ::testing::Test {};
TYPED_TEST_SUITE(QueueTest, Types);
TYPED_TEST(QueueTest, Push) { push_one(); }
TYPED_TEST_SUITE_P(StackTest);
TYPED_TEST_P(StackTest, Pop) { pop_one(); }
REGISTER_TYPED_TEST_SUITE_P(StackTest, Pop);
void push_one() {}
void pop_one() {}
""",
    "test/boost_test.cc": """
#include <boost/test/unit_test.hpp>
struct Connection { int port = 80; };
void open_port(int port) {}
void close_all() {}
BOOST_AUTO_TEST_CASE(closes)
{
  close_all();
}
BOOST_FIXTURE_TEST_CASE(opens, Connection) { open_port(port); }
BOOST_AUTO_TEST_CASE(skipped, *boost::unit_test::disabled()) { close_all(); }
""",
}


def test_typed_tests_are_class_templates_and_boost_cases_are_structs_with_test_method(tmp_path):
    graph = cpp_graph(tmp_path, TYPED_AND_BOOST)
    kinds = {n.id: (n.kind, "template" in n.tags) for n in graph.nodes}
    assert kinds["cpp:QueueTest_Push_Test"] == (NodeKind.CLASS, True)
    # TYPED_TEST_P: the test's own name, in a namespace named after the suite
    assert kinds["cpp:gtest_suite_StackTest_::Pop"] == (NodeKind.CLASS, True)
    assert kinds["cpp:gtest_suite_StackTest_"] == (NodeKind.NAMESPACE, False)
    assert kinds["cpp:closes"] == kinds["cpp:opens"] == kinds["cpp:skipped"] == (NodeKind.STRUCT, False)
    assert {("cpp:QueueTest_Push_Test", "cpp:QueueTest"), ("cpp:gtest_suite_StackTest_::Pop", "cpp:StackTest"),
            ("cpp:opens", "cpp:Connection")} <= edges(graph, EdgeKind.INHERITS)
    calls = edges(graph, EdgeKind.CALLS)
    assert {("cpp:QueueTest_Push_Test::TestBody", "cpp:push_one"), ("cpp:gtest_suite_StackTest_::Pop::TestBody",
                                                                      "cpp:pop_one"),
            ("cpp:closes::test_method", "cpp:close_all"), ("cpp:opens::test_method", "cpp:open_port"),
            ("cpp:skipped::test_method", "cpp:close_all")} <= calls
    # the macros that only declare or register make no node
    assert not {n.id for n in graph.nodes if "TYPED_TEST" in n.id or "BOOST" in n.id}


def test_bodies_no_tool_can_name_and_unknown_macros_are_said_not_merged_silently(tmp_path):
    graph = cpp_graph(tmp_path, {
        "test/catch_test.cc": """
#include <catch2/catch_test_macros.hpp>
void flush() {}
TEST_CASE("flushes", "[io]") { flush(); }
TEST_CASE("flushes twice") { flush(); flush(); }
""",
        "test/custom_test.cc": """
namespace suite {
CHECK_CASE(Cache, Hit) { lookup(); }
CHECK_CASE(Cache, Miss) { insert(); }
}
void lookup() {}
""",
    })
    said = {(d.code, d.path, d.line) for d in graph.diagnostics}
    assert ("test-body-unnamed", "test/catch_test.cc", 4) in said
    assert graph.stats["test_bodies_unnamed"] == 2
    assert not {n.id for n in graph.nodes if "TEST_CASE" in n.id}
    # a macro no table expands stays one node, as written, and is said with every line it is at
    assert ("macro-body", "test/custom_test.cc", 3) in said
    message = next(d.message for d in graph.diagnostics if d.code == "macro-body")
    assert "CHECK_CASE" in message and "3, 4" in message
    assert graph.stats["macro_bodies"] == 2
    assert "cpp:suite::CHECK_CASE" in {n.id for n in graph.nodes}


def test_a_placeholder_that_names_no_argument_is_one_line_naming_the_macro(tmp_path):
    rules = tmp_path / "testmacros.yaml"
    rules.write_text("expand:\n  MY_TEST:\n    framework: mine\n    args: [suite, name]\n"
                     "    class: '{suite}_{nmae}'\n    method: Run\n")
    with pytest.raises(UserInputError, match=r"testmacros.yaml: expand.MY_TEST: \{nmae\} is none of its args"):
        load_test_macros(rules)


@pytest.mark.compilers
def test_ctags_names_the_macro_and_the_comparison_lists_each_body_with_archdiffs_name(tmp_path):
    from bench.cpp_vs_ctags import measure_recall

    cpp_graph(tmp_path, ENGINE)
    result = measure_recall(tmp_path)
    assert result["recall"] == 1.0, result["missing"]
    assert [(e.path, e.line, e.ctags_name, e.archdiff_name) for e in result["expanded"]] == [
        ("src/test/arena_test.cc", 15, "TEST", "Arena_Empty_Test::TestBody"),
        ("src/test/arena_test.cc", 21, "TEST_F", "ArenaTest_Grow_Test::TestBody"),
        ("src/test/arena_test.cc", 26, "TEST_F", "ArenaTest_Release_Test::TestBody"),
        ("src/test/arena_test.cc", 31, "TEST_P", "SizesTest_Fits_Test::TestBody"),
        ("src/test/pool_test.cc", 6, "TEST_F", "PoolTest_Grow_Test::TestBody"),
        ("src/test/pool_test.cc", 7, "TEST_F", "PoolTest_Release_Test::TestBody"),
    ]
    assert "googletest test body" in result["expanded"][0].reason()


def test_a_boost_case_is_named_inside_its_suite(tmp_path):
    graph = cpp_graph(tmp_path, {"test/suites_test.cc": """
#include <boost/test/unit_test.hpp>
struct Server { int port = 80; };
void start(int port) {}
void stop() {}
BOOST_AUTO_TEST_SUITE(startup)
BOOST_AUTO_TEST_CASE(runs) { start(1); }
BOOST_AUTO_TEST_SUITE_END()
BOOST_FIXTURE_TEST_SUITE(shutdown, Server)
BOOST_AUTO_TEST_CASE(runs) { stop(); }
BOOST_AUTO_TEST_SUITE_END()
"""})
    # one case name in two suites: two structs, each with its own calls
    calls = edges(graph, EdgeKind.CALLS)
    assert {(source, target) for source, target in calls if source.endswith("::test_method")} == {
        ("cpp:startup::runs::test_method", "cpp:start"), ("cpp:shutdown::runs::test_method", "cpp:stop")}
    kinds = {n.id: n.kind for n in graph.nodes}
    assert kinds["cpp:startup"] is kinds["cpp:shutdown"] is NodeKind.NAMESPACE
