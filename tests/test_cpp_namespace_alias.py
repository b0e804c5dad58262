"""Names written through a namespace alias (`namespace eg = engine;`) resolve to what the alias names.

Small trees written into a temp dir, in the shapes real systems have: an engine whose Python
bindings and callers name it through a short alias (lmdeploy's `namespace ft = turbomind;` in its
bind.cpp), aliases that a header declares for every file including it (TensorRT-LLM's `tle`, `tr`),
aliases of aliases, aliases of namespaces outside the system, and aliases that disagree.
"""

from __future__ import annotations

from extractor.bindings.python_cpp import CallSite, bind_call_sites
from extractor.model import EdgeKind

from tests.cpp_support import cpp_graph, edges

ENGINE = {
    "src/engine/session.h": """
#pragma once
namespace engine {
struct RequestState { int id; };
class BaseModel { public: virtual ~BaseModel() {} };
int compute(int x);
namespace runtime { namespace buffers { void allocate(int n); } }
}
// for every file that includes this header
namespace eg = engine;
""",
    "src/engine/session.cc": """
#include "session.h"
namespace engine {
int compute(int x) { return x; }
namespace runtime { namespace buffers { void allocate(int n) {} } }
}
""",
    "src/engine/model.cc": """
#include "session.h"
class Llama : public eg::BaseModel {};
int step(const eg::RequestState& state) { return eg::compute(state.id); }
""",
    "src/python/bind.cpp": """
#include <pybind11/pybind11.h>
#include "engine/session.h"
namespace py = pybind11;
namespace fx = engine;
PYBIND11_MODULE(_engine, m) {
    py::class_<fx::RequestState>(m, "RequestState").def(py::init());
    m.def("compute", &fx::compute);
}
""",
    "src/tools/nested.cc": """
namespace engine { int compute(int x); }
namespace tools {
namespace inner = engine;
int inside() { return inner::compute(1); }
}
int outside() { return inner::compute(2); }
""",
    "src/tools/chain.cc": """
#include "engine/session.h"
namespace rt = eg::runtime;
namespace bufs = rt::buffers;
namespace tools {
void grow() { bufs::allocate(8); }
void local_only() {
    namespace b2 = ::engine::runtime::buffers;
    b2::allocate(16);
}
void not_local() { b2::allocate(32); }
namespace {
namespace hidden = engine;
}
int through_anonymous() { return hidden::compute(3); }
}
""",
}


def test_a_call_a_base_class_and_a_signature_name_the_aliased_namespace(tmp_path):
    graph = cpp_graph(tmp_path, ENGINE)
    assert ("cpp:step", "cpp:engine::compute") in edges(graph, EdgeKind.CALLS)
    assert ("cpp:Llama", "cpp:engine::BaseModel") in edges(graph, EdgeKind.INHERITS)
    assert ("cpp:step", "cpp:engine::RequestState") in edges(graph, EdgeKind.USES)


def test_pybind11_targets_through_an_alias_bind_python_calls(tmp_path):
    graph = cpp_graph(tmp_path, ENGINE)
    assert {b.python_name: b.target for b in graph.shared.pybind_bindings} == {
        "_engine.RequestState": "cpp:engine::RequestState", "_engine.compute": "cpp:engine::compute"}
    sites = [CallSite("py:pkg.runner.run", "pkg.lib._engine.RequestState", "pkg/runner.py", 12),
             CallSite("py:pkg.runner.run", "pkg.lib._engine.compute", "pkg/runner.py", 13)]
    bound = bind_call_sites(sites, graph.shared.op_registrations, graph.shared.pybind_bindings)
    assert {(e.target, e.line) for e in bound.edges if e.kind is EdgeKind.BINDS} == {
        ("cpp:engine::RequestState", 12), ("cpp:engine::compute", 13)}


def test_an_alias_is_seen_in_its_scope_and_nested_ones_only(tmp_path):
    calls = edges(cpp_graph(tmp_path, ENGINE), EdgeKind.CALLS)
    assert ("cpp:tools::inside", "cpp:engine::compute") in calls
    assert not {target for source, target in calls if source == "cpp:outside"}
    # in a function body: that function's alone
    assert ("cpp:tools::local_only", "cpp:engine::runtime::buffers::allocate") in calls
    assert not {target for source, target in calls if source == "cpp:tools::not_local"}
    # in an anonymous namespace: seen by the enclosing namespace, as the namespace's members are
    assert ("cpp:tools::through_anonymous", "cpp:engine::compute") in calls


def test_an_alias_of_an_alias_declared_in_an_included_header(tmp_path):
    calls = edges(cpp_graph(tmp_path, ENGINE), EdgeKind.CALLS)
    assert ("cpp:tools::grow", "cpp:engine::runtime::buffers::allocate") in calls


def test_an_alias_is_not_seen_by_files_that_do_not_include_its_header(tmp_path):
    graph = cpp_graph(tmp_path, {**ENGINE, "src/other/free.cc": """
namespace engine { int compute(int x); }
int unrelated() { return eg::compute(4); }
namespace eg { int compute(int x) { return -x; } }
"""})
    # this file's `eg` is a namespace of its own, not the header's alias
    assert ("cpp:unrelated", "cpp:eg::compute") in edges(graph, EdgeKind.CALLS)
    assert ("cpp:step", "cpp:engine::compute") in edges(graph, EdgeKind.CALLS)


def test_an_alias_of_a_namespace_outside_the_system_names_nothing_of_it(tmp_path):
    # `cg` is the system's own namespace in one file and cooperative_groups in another: a call
    # through the alias is not one to the system's `cg::sync`
    graph = cpp_graph(tmp_path, {
        "csrc/sync.cc": "namespace cg { void sync() {} }\nvoid direct() { cg::sync(); }\n",
        "csrc/reduce.cu": """
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void reduce_kernel(float* out) { cg::sync(); cg::this_thread_block(); }
"""})
    calls = edges(graph, EdgeKind.CALLS)
    assert ("cpp:direct", "cpp:cg::sync") in calls
    assert not {target for source, target in calls if source == "cpp:reduce_kernel"}


def test_aliases_that_disagree_leave_the_name_unresolved_and_are_counted(tmp_path):
    graph = cpp_graph(tmp_path, {
        "src/cache/v1.h": "namespace engine::cache_v1 { void evict(); }\nnamespace kv = engine::cache_v1;\n",
        "src/cache/v2.h": "namespace engine::cache_v2 { void evict(); }\nnamespace kv = engine::cache_v2;\n",
        "src/cache/both.cc": '#include "v1.h"\n#include "v2.h"\nvoid flush_both() { kv::evict(); }\n',
        "src/cache/one.cc": '#include "v1.h"\nvoid flush_one() { kv::evict(); }\n',
        "src/cache/branches.cc": """
namespace engine { namespace cache_v1 { void evict(); } namespace cache_v2 { void evict(); } }
#ifdef USE_V2
namespace kv2 = engine::cache_v2;
#else
namespace kv2 = engine::cache_v1;
#endif
void flush_branch() { kv2::evict(); }
namespace tools {
namespace kv2 = engine::cache_v2;  // nearer than the file's: no conflict
void flush_nested() { kv2::evict(); }
}
"""})
    calls = edges(graph, EdgeKind.CALLS)
    assert ("cpp:flush_one", "cpp:engine::cache_v1::evict") in calls
    assert ("cpp:tools::flush_nested", "cpp:engine::cache_v2::evict") in calls
    assert not {target for source, target in calls if source in ("cpp:flush_both", "cpp:flush_branch")}
    # both.cc sees two `kv` at file scope, branches.cc two `kv2`
    assert graph.stats["namespace_alias_conflicts"] == 2
    assert graph.stats["calls_unresolved_alias_conflict"] == 2


def test_a_type_written_from_the_global_scope_is_never_an_enclosing_namespaces(tmp_path):
    """`::grpc::Server` inside `namespace app`, which has a `grpc::Server` of its own, names the global
    one (Triton's frontends write `std::unique_ptr<::grpc::Server>` inside `triton::server`)."""
    graph = cpp_graph(tmp_path, {"a.h": """namespace grpc { class Server {}; }
namespace app {
namespace grpc { class Server {}; }
class Holder : public ::grpc::Server {};
class Other : public grpc::Server {};
class User { void f(::grpc::Server& s); void g(grpc::Server& s); };
}
"""})
    assert edges(graph, EdgeKind.INHERITS) == {("cpp:app::Holder", "cpp:grpc::Server"),
                                               ("cpp:app::Other", "cpp:app::grpc::Server")}
    assert edges(graph, EdgeKind.USES) == {("cpp:app::User::f", "cpp:grpc::Server"),
                                           ("cpp:app::User::g", "cpp:app::grpc::Server")}
