"""Clang's thread-safety annotations, as the header its documentation gives is copied into systems.

Mooncake's store (and LevelDB, RocksDB and others before it) copies the header: one macro that is
`__attribute__((x))` under Clang and nothing elsewhere, and the annotations defined through it,
written after a member's parameters and before its body (`void lock() ACQUIRE() { ... }`) or after
its `const`. Two readings lost them: a use followed by the member's body was taken for a function
of the macro's name, defined in the file (ggml defines a function and a macro of one name in two
branches), so the macro was not blanked; and a macro defined as nothing but another macro's use
(`#define NO_THREAD_SAFETY_ANALYSIS ANNOTATE__(no_thread_safety_analysis)`) was judged before that
one was known. Each use was an ERROR node, and a class's members after it could be lost."""

from __future__ import annotations

from extractor.cpp.parse import attribute_macros, defines_function
from extractor.model import EdgeKind

from tests.cpp_support import cpp_graph, edges

LOCKS = """#pragma once
#include <mutex>

// the annotations are checked by Clang only; other compilers see nothing
#if defined(__clang__)
#define ANNOTATE__(x) __attribute__((x))
#else
#define ANNOTATE__(x)  // nothing
#endif

#define CAPABILITY(x) ANNOTATE__(capability(x))
#define SCOPED_CAPABILITY ANNOTATE__(scoped_lockable)
#define GUARDED_BY(x) ANNOTATE__(guarded_by(x))
#define ACQUIRE(...) \\
    ANNOTATE__(acquire_capability(__VA_ARGS__))
#define RELEASE(...) \\
    ANNOTATE__(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) ANNOTATE__(try_acquire_capability(__VA_ARGS__))
#define NO_THREAD_SAFETY_ANALYSIS \\
    ANNOTATE__(no_thread_safety_analysis)

namespace store {

class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  const Mutex& operator!() const { return *this; }

 private:
  std::mutex mu_;
};

class SCOPED_CAPABILITY Guard {
 public:
  explicit Guard(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu->lock(); }
  ~Guard() RELEASE() { mu_->unlock(); }

 private:
  Mutex* mu_;
};

}  // namespace store
"""

SERVICE = """#pragma once
#include "base/locks.h"

namespace store {

class MasterService {
 public:
  bool Exists(int key) const NO_THREAD_SAFETY_ANALYSIS {
    return lookup(key) != nullptr;
  }

  void Evict(int key) NO_THREAD_SAFETY_ANALYSIS {
    Guard guard(&mu_);
    drop(key);
  }

  int Count() const { return count_; }

 private:
  void* lookup(int key) const;
  void drop(int key);
  Mutex mu_;
  int count_ GUARDED_BY(mu_) = 0;
};

}  // namespace store
"""

FILES = {"base/locks.h": LOCKS, "store/master_service.h": SERVICE}


def test_the_annotations_are_attribute_macros_those_defined_through_another_too():
    macros = set(attribute_macros(LOCKS.encode()))
    assert {"ANNOTATE__(", "CAPABILITY(", "GUARDED_BY(", "ACQUIRE(", "RELEASE(", "TRY_ACQUIRE(",
            "SCOPED_CAPABILITY", "NO_THREAD_SAFETY_ANALYSIS"} <= macros


def test_a_use_between_a_declarator_and_its_body_defines_no_function():
    assert not defines_function(b"void lock() ACQUIRE() { mu_.lock(); }", b"ACQUIRE")
    assert not defines_function(b"bool f() const\n    TRY_ACQUIRE(true) {", b"TRY_ACQUIRE")
    # ggml: a function of the macro's name, defined in another branch, is one
    assert defines_function(b"#define dump(t)\n#else\nstatic void dump(int t) {\n}", b"dump")
    assert defines_function(b"int& dump(int t) {", b"dump")


def test_members_annotated_so_are_their_classes_and_bind(tmp_path):
    graph = cpp_graph(tmp_path, FILES)
    assert graph.stats.get("error_nodes", 0) == 0
    members = {n.id.removeprefix("cpp:store::") for n in graph.nodes if n.id.startswith("cpp:store::")
               and n.kind.value in ("method", "function")}
    assert {"Mutex::lock", "Mutex::unlock", "Mutex::try_lock", "Guard::Guard", "Guard::~Guard",
            "MasterService::Exists", "MasterService::Evict", "MasterService::Count"} <= members
    calls = edges(graph, EdgeKind.CALLS)
    assert ("cpp:store::MasterService::Exists", "cpp:store::MasterService::lookup") in calls
    assert ("cpp:store::MasterService::Evict", "cpp:store::MasterService::drop") in calls
    assert ("cpp:store::Guard::Guard", "cpp:store::Mutex::lock") in calls
