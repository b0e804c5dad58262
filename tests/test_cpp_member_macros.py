"""Class members declared by the system's own macros, written out where a class body uses them.

Servers declare their options' accessors through a macro a common header defines (xLLM's
``PROPERTY(T, name)``, ScaleLLM's ``DEFINE_ARG``), and their weights' fields through another
(``DEFINE_WEIGHT(name)``). Unexpanded, the uses are no members, every ``options.model_path()``
finds no method, and a use written ``PROPERTY(int, n) = 0;`` breaks the parse of the class around
it. A small handwritten tree in those shapes: the macros in one header, used by classes in others,
one with a default, one over two lines, one macro defined two ways (written out nowhere), and a
copy-forbidding macro that declares nothing of its own (left as it was).
"""

from __future__ import annotations

from extractor.cpp.includes import write_out_member_macros
from extractor.model import EdgeKind
from extractor.native.macros import MacroDefinition

from tests.cpp_support import cpp_graph, edges

MACROS = """
#pragma once
#include <utility>

#define PROPERTY(T, property)                                        \\
 public:                                                             \\
  [[nodiscard]] const T& property() const& noexcept {                \\
    return property##_;                                              \\
  }                                                                  \\
  auto property(const T& value) & -> decltype(*this) {               \\
    property##_ = value;                                             \\
    return *this;                                                    \\
  }                                                                  \\
                                                                     \\
  T property##_

#define DEFINE_WEIGHT(name) \\
  Tensor name##_;           \\
  bool name##_is_loaded_ = false;

#define DISALLOW_COPY(TypeName) TypeName(const TypeName&) = delete
"""

FILES = {
    "src/common/macros.h": MACROS,
    "src/runtime/options.h": """
#pragma once
#include <string>
#include "common/macros.h"

namespace serve {

class Tensor {
 public:
  long size(int dim) const;
};

struct Options {
  PROPERTY(std::string, model_path);

  PROPERTY(int, max_seqs) = 256;

  PROPERTY(std::string,
           backend) = "cuda";

  DISALLOW_COPY(Options);
};

class Linear {
 public:
  long rows() const { return weight_.size(0); }

 private:
  DEFINE_WEIGHT(weight);
};

}  // namespace serve
""",
    "src/runtime/engine.cpp": """
#include "runtime/options.h"

namespace serve {

int Start(const Options& options) {
  auto path = options.model_path();
  return options.max_seqs() + options.backend().size();
}

}  // namespace serve
""",
}
NS = "cpp:serve::"


def test_accessors_a_macro_declares_are_members_at_the_uses_line(tmp_path):
    graph = cpp_graph(tmp_path, FILES)
    members = {n.id.removeprefix(NS): (n.path, n.line, "macro-expanded" in n.tags)
               for n in graph.nodes if n.id.startswith(NS + "Options::")}
    assert members == {"Options::model_path": ("src/runtime/options.h", 14, True),
                       "Options::max_seqs": ("src/runtime/options.h", 16, True),
                       "Options::backend": ("src/runtime/options.h", 18, True)}
    calls = edges(graph, EdgeKind.CALLS)
    assert {(NS + "Start", NS + "Options::" + name) for name in ("model_path", "max_seqs", "backend")} <= calls
    # the field a weight macro declares types the member call on it
    assert (NS + "Linear::rows", NS + "Tensor::size") in calls
    assert graph.stats["member_macro_uses_written_out"] == 4
    assert graph.stats.get("member_calls_no_method", 0) == 0


def test_lines_after_a_use_keep_their_numbers_and_the_rest_is_said(tmp_path):
    graph = cpp_graph(tmp_path, FILES)
    linear = next(n for n in graph.nodes if n.id == NS + "Linear::rows")
    assert (linear.path, linear.line) == ("src/runtime/options.h", 26)
    assert not any(d.code == "parse-errors" for d in graph.diagnostics)
    # a macro declaring nothing of its own stays a class-body macro's use, said
    said = [d for d in graph.diagnostics if d.code == "class-macro"]
    assert [(d.path, d.line) for d in said] == [("src/runtime/options.h", 21)]
    assert "DISALLOW_COPY(...) at line(s) 21" in said[0].message


def test_a_macro_defined_two_ways_is_written_out_nowhere(tmp_path):
    files = dict(FILES)
    files["vendor/other/macros.h"] = MACROS.replace("T property##_", "T property##__")
    graph = cpp_graph(tmp_path, files)
    assert not any(n.id.startswith(NS + "Options::") for n in graph.nodes)
    assert graph.stats["member_macro_uses_written_out"] == 1  # the weight macro's, defined once
    said = next(d for d in graph.diagnostics if d.code == "class-macro")
    assert "PROPERTY(...) at line(s) 14" in said.message


def test_a_use_is_written_on_its_first_line_and_arguments_that_do_not_fit_are_left():
    prop = MacroDefinition("PROP", 1, ("T", "name"), "public: T name() const { return name##_; } T name##_")
    data = b"struct S {\n  PROP(std::vector<\n            int>, table) = {};\n  PROP(int);\n  int after;\n};\n"
    written, lines = write_out_member_macros(data, {"PROP": prop})
    assert lines == [2]
    assert written.splitlines()[1:4] == [
        b"  public: std::vector< int> table() const { return table_; } std::vector< int> table_",
        b" = {};",
        b"  PROP(int);"]
    assert written.count(b"\n") == data.count(b"\n")


OPS_FILES = {
    "core/ops.h": """
#pragma once
#include <string>
#include <vector>

#define DECLARE_BACKWARD()                                   \\
  virtual std::vector<int> backward(const std::vector<int>& grads) \\
      override;

#define OP_NAME(OP)                          \\
  const char* name() const override {        \\
    return #OP;                              \\
  }

namespace lib::ops {

class Op {
 public:
  virtual ~Op() = default;
  virtual std::vector<int> backward(const std::vector<int>& grads) = 0;
  virtual const char* name() const = 0;
  void run(int n);
};

class Exp : public Op {
 public:
  void run(int n);

  DECLARE_BACKWARD()
  OP_NAME(Exp)
};

class Log : public Op {
 public:
  DECLARE_BACKWARD()
  OP_NAME(Log)
};

}  // namespace lib::ops
""",
    "core/ops.cpp": """
#include "core/ops.h"

namespace lib::ops {

std::vector<int> Exp::backward(const std::vector<int>& grads) { return grads; }

std::string describe(const Exp& op) { return op.name(); }

}  // namespace lib::ops
""",
}


def test_virtual_functions_and_overrides_a_macro_declares_are_members(tmp_path):
    """Operator libraries declare each operator class's overrides through macros used on their own
    lines without a `;` (``DECLARE_BACKWARD()`` then ``OP_NAME(Exp)``): unexpanded, tree-sitter read
    the whole header as one ERROR, and every class after the first lost its namespace and its methods."""
    graph = cpp_graph(tmp_path, OPS_FILES)
    ns = "cpp:lib::ops::"
    members = {n.id.removeprefix(ns): (n.path, n.line, "macro-expanded" in n.tags)
               for n in graph.nodes if n.id.startswith((ns + "Exp::", ns + "Log::"))}
    header = "core/ops.h"
    assert members == {"Exp::run": (header, 27, False), "Exp::name": (header, 30, True),
                       "Exp::backward": ("core/ops.cpp", 6, True),  # at its definition
                       "Log::backward": (header, 35, True), "Log::name": (header, 36, True)}
    assert {n.id for n in graph.nodes if n.kind.value == "class"} == {ns + "Op", ns + "Exp", ns + "Log"}
    assert not any(d.code in ("parse-errors", "class-macro") for d in graph.diagnostics)
    assert (ns + "describe", ns + "Exp::name") in edges(graph, EdgeKind.CALLS)


TEST_HARNESS = """
#define TCONCAT(a, b, c) TCONCAT1(a, b, c)
#define TCONCAT1(a, b, c) a##b##c

#define TEST(base, name)                                                       \\
  class TCONCAT(base, _Test_, name) {                                          \\
   public:                                                                     \\
    void _Run();                                                               \\
    static void _RunIt() {                                                     \\
      TCONCAT(base, _Test_, name) t;                                           \\
      t._Run();                                                                \\
    }                                                                          \\
  };                                                                           \\
  bool TCONCAT(base, _Test_ignored_, name) =                                   \\
      lib::test::RegisterTest(#base, #name, &TCONCAT(base, _Test_, name)::_RunIt); \\
  void TCONCAT(base, _Test_, name)::_Run()
"""


def test_a_test_macro_whose_body_has_an_access_label_is_not_written_out_where_it_breaks_the_parse(tmp_path):
    """sentencepiece's own test harness: `TEST(Suite, Name) { ... }` expands to a class (so its body has
    `public:`) and a function head named through another macro. Written out, each test file of the
    system got a score of ERROR nodes and functions named `_Run` outside any class; read as written, each
    use is the test gtest's shape makes of it, its body's calls that test's."""
    graph = cpp_graph(tmp_path, {
        "testharness.h": TEST_HARNESS,
        "model_test.cc": ('#include "testharness.h"\n\nnamespace lib {\nnamespace {\n\n'
                          "int MakeModel() { return 3; }\n\n"
                          "TEST(ModelTest, EncodeTest) {\n  int model = MakeModel();\n  (void)model;\n}\n\n"
                          "TEST(ModelTest, DecodeTest) {\n  MakeModel();\n}\n\n}  // namespace\n}  // namespace lib\n"),
    })
    anonymous = "cpp:lib::(anonymous namespace@model_test.cc)"
    assert {(caller, callee) for caller, callee in edges(graph, EdgeKind.CALLS)} == {
        (f"{anonymous}::ModelTest_EncodeTest_Test::TestBody", f"{anonymous}::MakeModel"),
        (f"{anonymous}::ModelTest_DecodeTest_Test::TestBody", f"{anonymous}::MakeModel")}
    assert not [n.id for n in graph.nodes if n.name in ("_Run", "_RunIt")]
    assert graph.stats.get("error_nodes", 0) == 0
    assert "member_macro_uses_written_out" not in graph.stats


CONFIG_FILES = {
    "core/config.h": """
#pragma once
#include <string>

namespace eng::core {

#define ENG_CONFIG_PROPERTY(                         \\
    constName, keyStr, CppType, defaultVal, desc)    \\
  struct constName##Property {                       \\
    using type = CppType;                            \\
    static constexpr const char* key = keyStr;       \\
    static constexpr auto defaultValue = defaultVal; \\
  };                                                 \\
  static constexpr const char* constName = keyStr;

#define ENG_CONFIG(                                                  \\
    constName, accessorName, keyStr, CppType, defaultVal, desc)      \\
  ENG_CONFIG_PROPERTY(constName, keyStr, CppType, defaultVal, desc)  \\
  CppType accessorName() const {                                     \\
    return get<CppType>(constName, defaultVal);                      \\
  }

class QueryConfig {
 public:
  /// Maximum memory a query may use.
  ENG_CONFIG(
      kMaxMemory,
      maxMemory,
      "query_max_memory",
      long,
      1'000'000,
      "Maximum memory a query may use.")

  ENG_CONFIG_PROPERTY(kSessionZone, "session_zone", std::string, "", "The zone.")

  ENG_CONFIG(kBatchRows, batchRows, "batch_rows", int, 10'000, "Rows (and bytes) per batch.")

  template <typename T>
  T get(const char* key, T fallback) const;

  bool spillEnabled() const { return spill_; }

 private:
  bool spill_{false};
};

}  // namespace eng::core
""",
    "core/plan.cpp": """
#include "core/config.h"

namespace eng::core {

long budget(const QueryConfig& config) { return config.maxMemory() / config.batchRows(); }

}  // namespace eng::core
""",
}


def test_a_config_class_of_macros_clang_format_wrote_and_that_use_each_other(tmp_path):
    """Velox's query configuration: `#define VELOX_QUERY_CONFIG(  \\` / `    constName, ...)  \\`, parameters
    on a continued line as clang-format writes long ones; its body uses another macro whose body declares
    a struct named by pasting; arguments with digit separators (`100'000`). Read as written, the class was
    134 ERROR nodes, its 150 accessors functions of the namespace or none, and their calls bound nowhere."""
    graph = cpp_graph(tmp_path, CONFIG_FILES)
    prefix = "cpp:eng::core::QueryConfig::"
    members = sorted((n.id.removeprefix(prefix), n.line) for n in graph.nodes if n.id.startswith(prefix))
    assert members == [("batchRows", 36), ("get", 39), ("kBatchRowsProperty", 36), ("kMaxMemoryProperty", 26),
                       ("kSessionZoneProperty", 34), ("maxMemory", 26), ("spillEnabled", 41)]
    assert not [d for d in graph.diagnostics if d.code in ("parse-errors", "macro-definitions")]
    calls = edges(graph, EdgeKind.CALLS)
    assert {("cpp:eng::core::budget", prefix + "maxMemory"), ("cpp:eng::core::budget", prefix + "batchRows")} <= calls
    assert graph.stats["member_macro_uses_written_out"] == 3


def test_digit_separators_begin_no_character_literal_in_a_use_s_arguments():
    """`100'000` is a number (C++14); read as a literal's opening quote, it ran to the next `'` and took the
    use's other arguments and its closing parenthesis with it."""
    from extractor.native.macros import arguments

    text = "X(k, 100'000, ')', 0x7F'FF, 1e-3, u8'a') rest"
    assert arguments(text, 2) == (("k", "100'000", "')'", "0x7F'FF", "1e-3", "u8'a'"), text.index(" rest"))
    prop = MacroDefinition("P", 1, ("name", "value"), "static constexpr long name = value;")
    written, _lines = write_out_member_macros(b"struct S {\n  P(kLimit, 1'000'000)\n};\n", {"P": prop})
    assert written.splitlines()[1] == b"  static constexpr long kLimit = 1'000'000;"
