"""Names looked up through `using namespace X;` and `using X::f;`, the way C++ finds them.

Small trees written into a temp dir, in the shapes real systems have: a nanobind module whose
registrations follow `using namespace grammar;` (xgrammar's bindings), a pybind11 module after a
directive in a header it includes, kernels' files that call their namespace's helpers from the
global namespace (vLLM's `using namespace vllm;`), directives of namespaces outside the system
(CUTLASS's `cute` without its headers) and two directives that make a name ambiguous.
"""

from __future__ import annotations

from extractor.model import Contribution, EdgeKind

from tests.cpp_support import cpp_graph, edges

GRAMMAR = {
    "cpp/grammar.h": """
#pragma once
namespace grammar {
struct Grammar { int rules; };
Grammar CompileGrammar(const char* text);
int count_rules(const Grammar& g);
namespace detail { void normalize(Grammar& g); }
}
""",
    "cpp/grammar.cc": """
#include "grammar.h"
namespace grammar {
Grammar CompileGrammar(const char* text) { return Grammar{0}; }
int count_rules(const Grammar& g) { return g.rules; }
namespace detail { void normalize(Grammar& g) {} }
}
""",
    "cpp/nanobind/bind.cc": """
#include <nanobind/nanobind.h>
#include "../grammar.h"
namespace nb = nanobind;
using namespace grammar;
NB_MODULE(xgr_core, m) {
    nb::class_<Grammar>(m, "Grammar");
    m.def("compile", &CompileGrammar);
}
int rules_of(const char* text) {
    Grammar g = CompileGrammar(text);
    detail::normalize(g);
    return count_rules(g);
}
""",
}


def targets_of(graph: Contribution, source: str) -> set[str]:
    return {target for s, target in edges(graph, EdgeKind.CALLS) if s == source}


def test_calls_and_nanobind_targets_through_a_file_scope_directive(tmp_path):
    graph = cpp_graph(tmp_path, GRAMMAR)
    assert targets_of(graph, "cpp:rules_of") == {
        "cpp:grammar::CompileGrammar", "cpp:grammar::count_rules", "cpp:grammar::detail::normalize"}
    assert {b.python_name: b.target for b in graph.shared.pybind_bindings} == {
        "xgr_core.Grammar": "cpp:grammar::Grammar", "xgr_core.compile": "cpp:grammar::CompileGrammar"}
    assert ("cpp:rules_of", "cpp:grammar::Grammar") not in edges(graph, EdgeKind.USES)  # a local variable's type


def test_a_directive_in_a_header_is_seen_by_its_includers_only(tmp_path):
    graph = cpp_graph(tmp_path, {**GRAMMAR,
                               "cpp/prelude.h": '#include "grammar.h"\nusing namespace grammar;\n',
                               "cpp/python/module.cc": """
#include <pybind11/pybind11.h>
#include "../prelude.h"
PYBIND11_MODULE(_grammar, m) { m.def("count", &count_rules); }
void uses_signature(const Grammar& g) {}
""",
                               "cpp/other.cc": '#include "grammar.h"\n'
                                               'int plain() { return count_rules(grammar::Grammar{}); }\n'})
    assert {b.python_name: b.target for b in graph.shared.pybind_bindings
            if b.module == "_grammar"} == {"_grammar.count": "cpp:grammar::count_rules"}
    assert ("cpp:uses_signature", "cpp:grammar::Grammar") in edges(graph, EdgeKind.USES)
    assert targets_of(graph, "cpp:plain") == set()  # other.cc includes grammar.h, not prelude.h


def test_a_directive_in_a_namespace_or_a_function_is_not_seen_outside_it(tmp_path):
    graph = cpp_graph(tmp_path, {**GRAMMAR, "cpp/tools.cc": """
#include "grammar.h"
namespace tools {
using namespace grammar;
int inside() { return count_rules(Grammar{}); }
}
int outside() { return count_rules(grammar::Grammar{}); }
int with_local() {
    using namespace grammar;
    return count_rules(Grammar{});
}
int after_local() { return count_rules(grammar::Grammar{}); }
"""})
    assert targets_of(graph, "cpp:tools::inside") == {"cpp:grammar::count_rules"}
    assert targets_of(graph, "cpp:with_local") == {"cpp:grammar::count_rules"}
    assert targets_of(graph, "cpp:outside") == set()
    assert targets_of(graph, "cpp:after_local") == set()


def test_a_name_the_enclosing_scopes_declare_wins_over_a_directive(tmp_path):
    graph = cpp_graph(tmp_path, {**GRAMMAR, "cpp/kernels/reduce.cu": """
#include "../grammar.h"
namespace grammar { __device__ float warp_sum(float v) { return v; } }
namespace kernels {
__device__ float warp_sum(float v) { return v * 2; }
}
using namespace grammar;
namespace kernels {
__global__ void reduce(float* out) { out[0] = warp_sum(out[0]); }
}
__global__ void reduce_plain(float* out) { out[0] = warp_sum(out[0]); }
"""})
    assert targets_of(graph, "cpp:kernels::reduce") == {"cpp:kernels::warp_sum"}
    assert targets_of(graph, "cpp:reduce_plain") == {"cpp:grammar::warp_sum"}


def test_two_directives_that_make_a_name_ambiguous_leave_it_unresolved_and_counted(tmp_path):
    graph = cpp_graph(tmp_path, {
        "csrc/cache.h": "namespace cache_v1 { void evict(); void only_v1(); }\nnamespace cache_v2 { void evict(); }\n",
        "csrc/flush.cc": """
#include "cache.h"
using namespace cache_v1;
using namespace cache_v2;
void flush() { evict(); only_v1(); }
""",
    })
    assert targets_of(graph, "cpp:flush") == {"cpp:cache_v1::only_v1"}
    assert graph.stats["calls_unresolved_ambiguous_using"] == 1


def test_a_directive_of_a_namespace_outside_the_system_resolves_nothing(tmp_path):
    # `cute` is CUTLASS's, whose headers are not given; the system's `other::cute` is another namespace
    graph = cpp_graph(tmp_path, {**GRAMMAR, "csrc/layout.cu": """
#include <cute/tensor.hpp>
#include "../cpp/grammar.h"
namespace other { namespace cute { void make_layout(int n) {} } }
using namespace cute;
using namespace grammar;
__global__ void gemm(float* out) { make_layout(4); count_rules(Grammar{}); }
"""})
    assert targets_of(graph, "cpp:gemm") == {"cpp:grammar::count_rules"}
    assert "calls_unresolved_ambiguous_using" not in graph.stats


def test_a_using_declaration_names_one_function(tmp_path):
    graph = cpp_graph(tmp_path, {**GRAMMAR, "cpp/picked.cc": """
#include "grammar.h"
using grammar::count_rules;
namespace tools {
using grammar::detail::normalize;
void tidy(grammar::Grammar& g) { normalize(g); }
}
int counted() { return count_rules(grammar::Grammar{}); }
grammar::Grammar compiled() { return CompileGrammar("root"); }
void not_here(grammar::Grammar& g) { normalize(g); }
"""})
    assert targets_of(graph, "cpp:counted") == {"cpp:grammar::count_rules"}
    assert targets_of(graph, "cpp:tools::tidy") == {"cpp:grammar::detail::normalize"}
    assert targets_of(graph, "cpp:compiled") == set()  # CompileGrammar is not declared here
    assert targets_of(graph, "cpp:not_here") == set()


PER_PLATFORM = {
    # rtp-llm's models_py/bindings: each platform's header defines the registering function, one in
    # namespace torch_ext (cuda/), one in the caller's own namespace (rocm/); the cuda file includes its
    # header and sees torch_ext's through a directive of a header that one includes
    # (a directive of the caller's own namespace too: what it nominates there the file cannot see either)
    "ops/common.h": "#pragma once\n#include <pybind11/pybind11.h>\nnamespace torch_ext { struct Params {}; }\n"
                    "namespace engine { void log(); }\nusing namespace torch_ext;\nusing namespace engine;\n",
    "ops/cuda/attn.hpp": """#pragma once
#include "../common.h"
namespace torch_ext {
void register_attn(pybind11::module& m) { pybind11::class_<Params>(m, "Params"); }
}
""",
    "ops/rocm/attn.hpp": """#pragma once
#include <pybind11/pybind11.h>
namespace engine {
int paged(int x) { return x; }
void register_attn(pybind11::module& m) { m.def("paged", &paged); }
}
""",
    "ops/cuda/register.cc": """#include "attn.hpp"
namespace engine {
void register_ops(pybind11::module& m) { register_attn(m); }
}
""",
    "ops/rocm/register.cc": """#include "attn.hpp"
namespace engine {
void register_ops(pybind11::module& m) { register_attn(m); }
}
""",
    "ops/module.cc": """#include <pybind11/pybind11.h>
namespace engine { void register_ops(pybind11::module& m); }
PYBIND11_MODULE(_compute, m) { engine::register_ops(m); }
""",
    # a name the file's own namespace declares in a header it includes still wins over the directive
    "ops/cuda/other.cc": """#include "attn.hpp"
#include "../rocm/attn.hpp"
namespace engine {
void register_twice(pybind11::module& m) { register_attn(m); }
}
""",
}


def test_a_name_declared_only_where_the_file_cannot_see_gives_way_to_the_directive_it_sees(tmp_path):
    graph = cpp_graph(tmp_path, PER_PLATFORM)
    calls = {(e.source, e.target, e.path) for e in graph.edges if e.kind is EdgeKind.CALLS}
    assert ("cpp:engine::register_ops", "cpp:torch_ext::register_attn", "ops/cuda/register.cc") in calls
    assert ("cpp:engine::register_ops", "cpp:engine::register_attn", "ops/rocm/register.cc") in calls
    assert ("cpp:engine::register_twice", "cpp:engine::register_attn", "ops/cuda/other.cc") in calls
    assert ("cpp:engine::register_ops", "cpp:engine::register_attn", "ops/cuda/register.cc") not in calls
    # so the class the cuda header registers is the module's too
    assert {b.python_name: b.target for b in graph.shared.pybind_bindings} == {
        "_compute.Params": "cpp:torch_ext::Params", "_compute.paged": "cpp:engine::paged"}
