"""A macro's use in a class body is no member of the macro's name.

tree-sitter reads `DISALLOW_COPY_AND_ASSIGN(Engine);` inside `class Engine` as the declaration of a
method DISALLOW_COPY_AND_ASSIGN taking an `Engine`: taken as written, every Google-style class has a
method of that name (Triton r25.08: 29 of them, and 11 DESTRUCTOR_WITH_LOG), public API of the
headers it is in, that `uses` its own class. A small handwritten tree in the shapes such classes
have: the copy-forbidding macros of Chromium and Qt, gtest's FRIEND_TEST, beside the members C++
does write without a return type (constructors, destructors, conversion functions), an operator, a
real method with a macro-like name, and a macro that defines a member with a body.
"""

from __future__ import annotations

import pytest

from extractor.model import EdgeKind, NodeKind

from tests.cpp_support import cpp_graph, edges

ENGINE = {
    "include/engine/engine.h": """
#pragma once
namespace engine {

struct Config { int threads = 1; };

class Engine {
 public:
  explicit Engine(const Config& config);
  ~Engine();
  Engine& operator=(Engine&& other);
  explicit operator bool() const;
  int GET_SIZE() const;
  void Attach(Config* config);
  FRIEND_TEST(EngineTest, Starts);

 private:
  DISALLOW_COPY_AND_ASSIGN(Engine);
  Q_DISABLE_COPY(Engine);
  RELEASE_WITH_LOG(Engine, Config) { flush(); }
  int size_ = 0;
};

// a class named as macros are: its constructor keeps the class's name
struct RGB {
  RGB(int red, Config config);
  DISALLOW_COPY_AND_ASSIGN(RGB);
};

void flush();

}  // namespace engine
""",
}
NS = "cpp:engine::"


def test_a_macro_use_in_a_class_body_is_no_member_and_uses_nothing(tmp_path):
    graph = cpp_graph(tmp_path, ENGINE)
    members = {n.id.removeprefix(NS + "Engine::"): n.kind for n in graph.nodes if n.id.startswith(NS + "Engine::")}
    # constructor, destructor, operators, a conversion function and an ALL_CAPS method with a return type stay
    assert members == {"Engine": NodeKind.METHOD, "~Engine": NodeKind.METHOD, "operator=": NodeKind.METHOD,
                       "operator bool": NodeKind.METHOD, "GET_SIZE": NodeKind.METHOD, "Attach": NodeKind.METHOD,
                       "RELEASE_WITH_LOG": NodeKind.METHOD}
    assert {n.id for n in graph.nodes if n.id.startswith(NS + "RGB")} == {NS + "RGB", NS + "RGB::RGB"}
    uses = edges(graph, EdgeKind.USES)
    assert not {source for source, _ in uses if "DISALLOW" in source or "Q_DISABLE" in source or "FRIEND" in source}
    # the members' own signatures still name the types they use
    assert {(NS + "Engine::Engine", NS + "Config"), (NS + "Engine::Attach", NS + "Config"),
            (NS + "RGB::RGB", NS + "Config")} <= uses


def test_each_file_says_its_macro_uses_once_with_names_and_lines(tmp_path):
    graph = cpp_graph(tmp_path, ENGINE)
    said = [d for d in graph.diagnostics if d.code == "class-macro"]
    assert [(d.path, d.line) for d in said] == [("include/engine/engine.h", 15)]
    assert ("DISALLOW_COPY_AND_ASSIGN(...) at line(s) 18, 27; FRIEND_TEST(...) at line(s) 15; "
            "Q_DISABLE_COPY(...) at line(s) 19 in class bodies") in said[0].message
    assert graph.stats["class_macro_uses"] == 4
    # evidence of a system without such uses stays as it was: no key, no diagnostic
    quiet = cpp_graph(tmp_path / "quiet", {"a.h": "struct A { A(); int SIZE() const; };\nFREE_MACRO(A);\n"})
    assert not {k for k in quiet.stats if k.startswith("class_macro")}
    assert not {d.code for d in quiet.diagnostics if d.code.startswith("class-macro")}


def test_a_macro_use_with_a_body_stays_a_member_with_its_calls_and_is_said(tmp_path):
    graph = cpp_graph(tmp_path, ENGINE)
    member = NS + "Engine::RELEASE_WITH_LOG"
    assert (member, NS + "flush") in edges(graph, EdgeKind.CALLS)
    said = [d for d in graph.diagnostics if d.code == "class-macro-body"]
    assert [(d.path, d.line) for d in said] == [("include/engine/engine.h", 20)]
    assert said[0].message.startswith("RELEASE_WITH_LOG(...) at line(s) 20 in class bodies")
    assert graph.stats["class_macro_bodies"] == 1


@pytest.mark.compilers
def test_ctags_lists_a_prototype_for_each_use_and_the_comparison_lists_each_with_its_reason(tmp_path):
    from bench.cpp_vs_ctags import measure_recall

    cpp_graph(tmp_path, ENGINE)
    result = measure_recall(tmp_path)
    # ctags names the macro with a body a function, in the class, and archdiff keeps that member
    assert result["recall"] == 1.0, result["missing"]
    assert [(u.path, u.line, u.name) for u in result["macro_uses"]] == [
        ("include/engine/engine.h", 15, "FRIEND_TEST"),
        ("include/engine/engine.h", 18, "DISALLOW_COPY_AND_ASSIGN"),
        ("include/engine/engine.h", 19, "Q_DISABLE_COPY"),
        ("include/engine/engine.h", 27, "DISALLOW_COPY_AND_ASSIGN"),
    ]
    assert "macro's use in a class body" in result["macro_uses"][0].reason()
