"""Calls through objects (`x.m()`, `x->m()`) resolved through the type x is declared with
(extractor/cpp/members.py), on the handwritten server of fixtures/cpp_member_calls: members held by
`std::unique_ptr`, `std::shared_ptr`, a raw pointer and a reference, parameters, locals (typed, `auto`
made by a factory or `new`, `auto` from a function's result), a virtual method declared only in a base,
chains, type aliases; and the calls that must stay unresolved, each counted by its reason.
"""

from __future__ import annotations

import pytest

from extractor.cpp import extract_cpp_graph
from extractor.cpp.standalone import scan_trees
from extractor.model import Contribution, EdgeKind

from tests.conftest import ROOT

FIXTURE = ROOT / "fixtures" / "cpp_member_calls"
SERVER = "src/server.cc"
HANDLE, START, STOP = "cpp:engine::Server::Handle", "cpp:engine::Server::Start", "cpp:engine::Server::Stop"


@pytest.fixture(scope="module")
def graph() -> Contribution:
    return extract_cpp_graph(scan_trees({"": FIXTURE}))


def calls(graph: Contribution) -> set[tuple[str, str, str, int]]:
    return {(e.source, e.target, e.path, e.line) for e in graph.edges if e.kind is EdgeKind.CALLS}


def test_members_held_by_unique_ptr_shared_ptr_pointer_and_reference(graph):
    assert {(HANDLE, "cpp:engine::Model::Load", SERVER, 18),  # std::unique_ptr<Model> model_
            (HANDLE, "cpp:engine::Cache::Get", SERVER, 15),  # Cache* cache_
            (HANDLE, "cpp:engine::Stats::Count", SERVER, 17),  # Stats& stats_
            } <= calls(graph)


def test_a_method_declared_only_in_a_base_is_the_bases(graph):
    # std::shared_ptr<Model> shared_; shared_->Log(...): Log is Backend's; Model's own Init is Model's
    assert (HANDLE, "cpp:engine::Backend::Log", SERVER, 19) in calls(graph)
    assert (START, "cpp:engine::Model::Init", SERVER, 27) in calls(graph)
    assert not [c for c in calls(graph) if c[1] == "cpp:engine::Backend::Init"]


def test_parameters_and_typed_locals(graph):
    assert {(HANDLE, "cpp:engine::Request::AddInput", SERVER, 14),  # Request* request (parameter)
            (HANDLE, "cpp:engine::Request::Id", SERVER, 15),
            (HANDLE, "cpp:engine::Request::AddInput", SERVER, 16),  # Request* cached = ...
            (START, "cpp:engine::Model::Init", SERVER, 27),  # Model* found = ...
            (STOP, "cpp:engine::Request::Id", SERVER, 50),  # for (const Request& r : ...)
            (STOP, "cpp:engine::Runner::Run", SERVER, 52),  # [](Runner* runner) { runner->Run(1); }
            } <= calls(graph)


def test_auto_locals_made_by_a_factory_new_or_a_functions_result(graph):
    assert {(START, "cpp:engine::Model::Load", SERVER, 29),  # auto owned = std::make_unique<Model>()
            (START, "cpp:engine::Model::Load", SERVER, 31),  # auto* made = new Model()
            (START, "cpp:engine::Status::IsOk", SERVER, 33),  # auto status = model_->Init()
            } <= calls(graph)


def test_a_local_hides_a_member_in_its_block_only(graph):
    assert {(STOP, "cpp:engine::Request::Id", SERVER, 55),  # { Request* model_; model_->Id(); }
            (STOP, "cpp:engine::Model::Load", SERVER, 57),  # after the block: the member again
            } <= calls(graph)


def test_chains_and_type_aliases(graph):
    assert {(START, "cpp:engine::Model::runner", SERVER, 34),
            (START, "cpp:engine::Runner::Run", SERVER, 34),  # model_->runner()->Run(2): Runner* runner()
            (START, "cpp:engine::Model::Load", SERVER, 35),
        (START, "cpp:engine::Model::Load", SERVER, 38),  # g_default->Load()  # ModelPtr aliased_ (std::shared_ptr<Model>)
            } <= calls(graph)
    # `using Queue = std::deque<int>;` in Server hides engine::Queue: pending_.Push is no Queue::Push
    assert not [c for c in calls(graph) if c[1] == "cpp:engine::Queue::Push"]


def test_what_is_not_declared_stays_unresolved_and_counted(graph):
    targets = {c[1] for c in calls(graph)}
    assert not targets & {"cpp:engine::Resettable::Reset", "cpp:engine::Clearable::Reset"}  # two bases
    assert {k: v for k, v in graph.stats.items() if k.startswith("member_calls_")} == {
        "member_calls_resolved": 20,  # g_default->Load() too: a namespace's variable
        "member_calls_ambiguous": 1,  # both->Reset(): Resettable's and Clearable's
        "member_calls_external_type": 4,  # model_.reset(), pending_.Push(3), name.size(), runner_.get()
        "member_calls_no_method": 1,  # cache_->Missing()
        "member_calls_template_type": 1,  # template <typename Model> ... m->Load()
    }


def test_every_calls_edge(graph):
    assert calls(graph) == {
        (HANDLE, "cpp:engine::Request::AddInput", SERVER, 14),
        (HANDLE, "cpp:engine::Cache::Get", SERVER, 15),
        (HANDLE, "cpp:engine::Request::Id", SERVER, 15),
        (HANDLE, "cpp:engine::Request::AddInput", SERVER, 16),
        (HANDLE, "cpp:engine::Stats::Count", SERVER, 17),
        (HANDLE, "cpp:engine::Model::Load", SERVER, 18),
        (HANDLE, "cpp:engine::Backend::Log", SERVER, 19),
        (HANDLE, "cpp:engine::Server::Stop", SERVER, 20),  # this->Stop()
        (START, "cpp:engine::Find", SERVER, 26),
        (START, "cpp:engine::Model::Init", SERVER, 27),
        (START, "cpp:engine::Model::Load", SERVER, 29),
        (START, "cpp:engine::Model::Load", SERVER, 31),
        (START, "cpp:engine::Model::Init", SERVER, 32),
        (START, "cpp:engine::Status::IsOk", SERVER, 33),
        (START, "cpp:engine::Model::runner", SERVER, 34),
        (START, "cpp:engine::Runner::Run", SERVER, 34),
        (START, "cpp:engine::Model::Load", SERVER, 35),
        (START, "cpp:engine::Model::Load", SERVER, 38),  # g_default->Load()
        (STOP, "cpp:engine::Request::Id", SERVER, 50),
        (STOP, "cpp:engine::Runner::Run", SERVER, 52),
        (STOP, "cpp:engine::Request::Id", SERVER, 55),
        (STOP, "cpp:engine::Model::Load", SERVER, 57),
    }
    assert graph.stats["calls_resolved"] == 22


def test_this_looks_in_the_callers_class_and_its_bases_only(tmp_path):
    from tests.cpp_support import cpp_graph
    graph = cpp_graph(tmp_path, {"a.cc": """
namespace ns {
void Close();
struct Base { void Close(); };
struct Derived : Base { void Run(); };
void Derived::Run() { this->Close(); }
}
"""})
    assert {(s, t) for s, t, _p, _l in calls(graph)} == {("cpp:ns::Derived::Run", "cpp:ns::Base::Close")}


def test_a_plain_name_a_method_calls_is_its_bases_before_the_namespaces(tmp_path):
    """`Name()` in a method whose class does not declare it: a base's method (Triton's backends call
    `Model()`, `Name()` of BackendModelInstance so), before a namespace's function of that name, as C++
    looks it up; the class's own member first; in a class template the namespace's (a dependent base is
    not looked in); two bases declaring it: not guessed."""
    from tests.cpp_support import cpp_graph
    graph = cpp_graph(tmp_path, {"a.cc": """
namespace ns {
void Close();
void Flush();
struct Base { void Close(); void Name(); void Flush(); };
struct Other { void Name(); };
struct Derived : Base { void Run(); void Flush(); };
void Derived::Run() { Close(); Name(); Flush(); }
struct Both : Base, Other { void Run(); };
void Both::Run() { Name(); }
template <typename T> struct Tpl : Base { void Run() { Close(); Name(); } };
void Free() { Close(); }
}
"""})
    assert {(s, t) for s, t, _p, _l in calls(graph)} == {
        ("cpp:ns::Derived::Run", "cpp:ns::Base::Close"),  # the base's, not ns::Close
        ("cpp:ns::Derived::Run", "cpp:ns::Base::Name"),  # only the base declares it
        ("cpp:ns::Derived::Run", "cpp:ns::Derived::Flush"),  # its own
        ("cpp:ns::Tpl::Run", "cpp:ns::Close"),  # a class template: the namespace's
        ("cpp:ns::Tpl::Run", "cpp:ns::Base::Name"),  # nothing else declares it
        ("cpp:ns::Free", "cpp:ns::Close"),
    }  # Both::Run's Name(): Base's and Other's, ambiguous
    assert graph.stats["base_method_calls"] == 3


def test_a_range_for_auto_variable_is_an_element_of_what_it_ranges_over(tmp_path):
    """`for (auto& m : models_)` over a container of handles.yaml: the element type is the container's
    first argument (through a handle), a map's a pair whose `.second` is the value (Triton's
    `for (auto& entry : backend_map_) entry.second->Name()`); over anything else it stays unknown."""
    from tests.cpp_support import cpp_graph
    graph = cpp_graph(tmp_path, {"a.cc": """
#include <map>
#include <memory>
#include <string>
#include <vector>
namespace ns {
struct Model { void Load(); };
struct Backend { const std::string& Name(); };
class Server {
 public:
  void Run();
 private:
  std::vector<std::unique_ptr<Model>> models_;
  std::map<std::string, std::shared_ptr<Backend>> backends_;
  Model* registry_;
};
void Server::Run() {
  for (auto& m : models_) { m->Load(); }
  for (const auto& entry : backends_) { entry.second->Name(); entry.first.size(); }
  for (auto& x : registry_) { x.Load(); }
  for (const auto& pair : backends_) {
    auto backend = pair.second;  // pair is no call's object: read because backend is initialized from it
    backend->Name();
  }
}
}
"""})
    assert {(s, t) for s, t, _p, _l in calls(graph)} == {
        ("cpp:ns::Server::Run", "cpp:ns::Model::Load"),  # an element of models_: a unique_ptr<Model>
        ("cpp:ns::Server::Run", "cpp:ns::Backend::Name"),  # entry.second: a shared_ptr<Backend>
    }
    assert graph.stats["member_calls_resolved"] == 3  # and `backend`, initialized from pair.second
    assert graph.stats["member_calls_external_type"] == 1  # entry.first.size(): std::string's
    assert graph.stats["member_calls_unknown_type"] == 1  # x: ranges over a pointer, no container


def test_what_a_catch_clause_catches_is_typed(tmp_path):
    """`catch (const BackendException& ex) { ex.Describe(); }`: the parameter is a variable of the
    clause's block (Triton's `pb_exception.what()`); outside the clause the name is not it."""
    from tests.cpp_support import cpp_graph
    graph = cpp_graph(tmp_path, {"a.cc": """
namespace ns {
struct BackendException { const char* Describe() const; };
struct Other { void Describe(); };
void Run();
void Handle() {
  try {
    Run();
  } catch (const BackendException& ex) {
    ex.Describe();
  }
  ex.Describe();
}
}
"""})
    assert {(s, t, line) for s, t, _p, line in calls(graph)} == {
        ("cpp:ns::Handle", "cpp:ns::Run", 8),
        ("cpp:ns::Handle", "cpp:ns::BackendException::Describe", 10),
    }  # line 12: no `ex` in scope there


def test_an_element_taken_by_subscript(tmp_path):
    """`v[i].m()`, `m[k]->m()`, `p[i].m()` and `auto& x = v[i];`: a vector's element, a map's mapped
    value (not a pair), what a pointer points at; a set has no `operator[]`."""
    from tests.cpp_support import cpp_graph
    graph = cpp_graph(tmp_path, {"a.cc": """
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>
namespace ns {
struct Model { void Load(); };
struct Queue { bool Empty(); };
void Run(std::vector<Model>& models, std::map<std::string, std::unique_ptr<Queue>>& queues, Model* raw,
         std::set<Model>& bag) {
  models[0].Load();
  queues["a"]->Empty();
  raw[1].Load();
  auto& first = models[0];
  first.Load();
  bag[0].Load();
}
}
"""})
    assert {(t, line) for _s, t, _p, line in calls(graph)} == {
        ("cpp:ns::Model::Load", 12), ("cpp:ns::Queue::Empty", 13), ("cpp:ns::Model::Load", 14),
        ("cpp:ns::Model::Load", 16),
    }  # line 17: std::set has no operator[]
    assert graph.stats["member_calls_unknown_type"] == 1


def test_iterators_and_element_accessors_of_the_standard_containers(tmp_path):
    """`m.find(k)` and `v.begin()` give iterators whose `->` reaches the element (a map's a pair:
    `it->second`), `v.front()`, `v.back()` and `v.at(i)` an element, `m.at(k)` a map's mapped value;
    `.find` on anything else is the class's own method."""
    from tests.cpp_support import cpp_graph
    graph = cpp_graph(tmp_path, {"a.cc": """
#include <map>
#include <memory>
#include <string>
#include <vector>
namespace ns {
struct Model { void Load(); };
struct Index { Model* find(int k); };
void Run(std::map<std::string, std::shared_ptr<Model>>& by_name, std::vector<Model>& models, Index& index) {
  auto it = by_name.find("a");
  it->second->Load();
  models.begin()->Load();
  models.front().Load();
  models.back().Load();
  models.at(0).Load();
  by_name.at("b")->Load();
  index.find(1)->Load();
}
}
"""})
    assert {line for _s, t, _p, line in calls(graph) if t == "cpp:ns::Model::Load"} == {11, 12, 13, 14, 15, 16, 17}
    assert ("cpp:ns::Run", "cpp:ns::Index::find", "a.cc", 17) in calls(graph)


def test_dereferences_and_casts(tmp_path):
    """`(*p)->m()` through a pointer to a handle (Triton's `(*response)->AddParameter(...)`), `(*p).m()`,
    and the type a cast writes out: `static_cast<T*>(x)->m()`, `std::static_pointer_cast<T>(x)->m()`."""
    from tests.cpp_support import cpp_graph
    graph = cpp_graph(tmp_path, {"a.cc": """
#include <memory>
namespace ns {
struct Response { void AddParameter(); };
struct Memory { void AddBuffer(); };
void Run(std::unique_ptr<Response>* response, Response* raw, void* opaque, std::shared_ptr<void> data) {
  (*response)->AddParameter();
  std::unique_ptr<Response>* local = response;
  (*local)->AddParameter();
  (*raw).AddParameter();
  static_cast<Memory*>(opaque)->AddBuffer();
  std::static_pointer_cast<Memory>(data)->AddBuffer();
  static_cast<Memory*>(opaque).AddBuffer();
}
}
"""})
    assert {(t, line) for _s, t, _p, line in calls(graph)} == {
        ("cpp:ns::Response::AddParameter", 7), ("cpp:ns::Response::AddParameter", 9),
        ("cpp:ns::Response::AddParameter", 10), ("cpp:ns::Memory::AddBuffer", 11), ("cpp:ns::Memory::AddBuffer", 12),
    }  # line 13: `.` on a pointer


def test_a_namespace_variable_is_typed_where_its_name_is_seen(tmp_path):
    """`gLogger_.Log()` on a namespace's variable, declared in a header another file includes; a
    file-local one (anonymous namespace, `static` in a source file) only in its own file; `vllm::kU4.id()`
    qualified, an `auto` one from its initializer; a local or a field of the same name hides it."""
    from tests.cpp_support import cpp_graph
    graph = cpp_graph(tmp_path, {
        "log.h": """
namespace ns {
class Logger { public: void Log(); };
struct ScalarType { int id() const; static ScalarType uint(int bits); };
extern Logger gLogger_;
inline constexpr auto kU4 = ScalarType::uint(4);
static Logger tracer;
}
""",
        "a.cc": """
#include "log.h"
namespace ns {
namespace { Logger hidden; }
static Logger quiet;
Logger gLogger_;
struct Other { void Log(); };
void Run() {
  gLogger_.Log();
  hidden.Log();
  quiet.Log();
  ns::kU4.id();
}
void Shadow() { Other gLogger_; gLogger_.Log(); }
}
""",
        "b.cc": """
#include "log.h"
namespace ns {
void Elsewhere() { gLogger_.Log(); hidden.Log(); quiet.Log(); tracer.Log(); }
}
namespace other {
void Use() { ns::kU4.id(); }  // the initializer is read in ns, not here
}
"""})
    assert {(s, t, p, line) for s, t, p, line in calls(graph) if "Log" in t or "id" in t} == {
        ("cpp:ns::Run", "cpp:ns::Logger::Log", "a.cc", 9),
        ("cpp:ns::Run", "cpp:ns::Logger::Log", "a.cc", 10),
        ("cpp:ns::Run", "cpp:ns::Logger::Log", "a.cc", 11),
        ("cpp:ns::Run", "cpp:ns::ScalarType::id", "a.cc", 12),
        ("cpp:ns::Shadow", "cpp:ns::Other::Log", "a.cc", 14),
        ("cpp:ns::Elsewhere", "cpp:ns::Logger::Log", "b.cc", 4),
        ("cpp:other::Use", "cpp:ns::ScalarType::id", "b.cc", 7),
    }  # b.cc's hidden and quiet are a.cc's own; a header's static (tracer) is every includer's
    assert graph.stats["member_calls_resolved"] == 8


def test_a_result_two_overloads_may_give_is_ambiguous_in_every_process():
    """`pop(*stack, n)` fits `std::vector<Value> pop(Stack&, size_t)` and the variadic
    `void pop(Stack&, Types&...)` (torch's torch::jit::pop): neither type is known to be a class, so
    they are not one type, and the call on the result's element stays ambiguous. The choice was a
    set's arbitrary pop, which the process's hash seed decides (tests/test_hash_seeds.py runs the
    fixtures under two seeds)."""
    graph = extract_cpp_graph(scan_trees({"": ROOT / "fixtures" / "cpp_overload_results"}))
    assert calls(graph) == {("cpp:rt::Rule", "cpp:rt::pop", "src/rule.cc", 4)}
    assert graph.stats["member_calls_ambiguous"] == 1 and "member_calls_resolved" not in graph.stats
