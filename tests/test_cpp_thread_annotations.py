"""Clang's thread-safety annotations and attributes as Abseil and TensorFlow spell them, defined in
headers outside the analysed system (``absl/base/thread_annotations.h``, ``tsl/platform/macros.h``).

After a member (``int n_ TF_GUARDED_BY(mu_);``) the grammar read a method named ``TF_GUARDED_BY``;
after a method's parameters (``Status Load() TF_LOCKS_EXCLUDED(mu_);``) an ERROR that could close the
class and the namespace early, so that the definitions after it landed in the wrong scope. A small
handwritten server header in those shapes (TensorFlow Serving: 21 files with such ERRORs).
"""

from __future__ import annotations

from extractor.cpp.parse import parse_source
from extractor.model import Language

from tests.cpp_support import cpp_graph

HEADER = """\
#pragma once
#include "absl/base/thread_annotations.h"

namespace serving {

class Harness {
 public:
  Status Load() TF_LOCKS_EXCLUDED(mu_);
  std::unique_ptr<Subscription> Subscribe(const Callback& callback)
      TF_LOCKS_EXCLUDED(mu_) TF_MUST_USE_RESULT;
  void Unload() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  struct Options {
    ABSL_DEPRECATED("Use always_present.")
    bool fail_if_missing = false;
  };

 private:
  mutable mutex mu_;
  int state_ TF_GUARDED_BY(mu_);
  Function f_ ABSL_GUARDED_BY(mu_);
};

class Registry {
 public:
  static Registry* Get();
};

}  // namespace serving
"""

SOURCE = """\
#include "harness.h"

namespace serving {

bool Init() {
  static const bool once ABSL_ATTRIBUTE_UNUSED = [&]() { return true; }();
  return once;
}

Status Harness::Load() {
  Unload();
  return Status();
}

}  // namespace serving
"""


def _errors(code: str) -> list[int]:
    tree = parse_source(code.encode(), Language.CPP)
    lines: list[int] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            lines.append(node.start_point[0] + 1)
        stack.extend(node.children)
    return sorted(lines)


def test_annotated_members_and_methods_parse():
    assert _errors(HEADER) == []
    assert _errors(SOURCE) == []


def test_no_annotation_is_a_method_and_the_classes_keep_their_scope(tmp_path):
    graph = cpp_graph(tmp_path, {"harness.h": HEADER, "harness.cc": SOURCE})
    ids = {n.id for n in graph.nodes}
    assert not [i for i in ids if "GUARDED_BY" in i or "LOCKS_EXCLUDED" in i or "LOCKS_REQUIRED" in i]
    assert {"cpp:serving::Harness::Load", "cpp:serving::Harness::Subscribe", "cpp:serving::Harness::Unload",
            "cpp:serving::Harness::Options", "cpp:serving::Registry", "cpp:serving::Registry::Get",
            "cpp:serving::Init"} <= ids
