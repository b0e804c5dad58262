"""The C/C++/CUDA graph of a handwritten multi-repository system (fixtures/triton_like)."""

from __future__ import annotations

import json

import hypothesis
import pytest

from extractor.cpp import build_cpp_graph, extract_cpp_graph, scan_cpp
from extractor.cpp.includes import IncludeResolver, defined_through_includes, system_attribute_aliases
from extractor.cpp.parse import parse_source
from extractor.cpp.standalone import scan_trees
from extractor.model import Contribution, EdgeKind, Language, NodeKind, ParsedFile, Severity, to_jsonable

from tests.conftest import FIXTURES
from tests.cpp_support import cpp_graph

TRITON_LIKE = FIXTURES / "triton_like"
REPOS = {"common": TRITON_LIKE / "common", "core": TRITON_LIKE / "core", "server": TRITON_LIKE / "server"}


@pytest.fixture(scope="module")
def graph() -> Contribution:
    return extract_cpp_graph(scan_trees(REPOS, name="triton-like"))


def node(graph: Contribution, node_id: str):
    hits = [n for n in graph.nodes if n.id == node_id]
    assert hits, f"no node {node_id}"
    return hits[0]


def edges(graph: Contribution, kind: EdgeKind) -> set[tuple[str, str]]:
    return {(e.source, e.target) for e in graph.edges if e.kind is kind}


def test_includes_resolve_across_repositories(graph):
    includes = edges(graph, EdgeKind.INCLUDES)
    # core -> common, by the include path "triton/common/logging.h"
    assert ("file:core/src/dynamic_batch_scheduler.h", "file:common/include/triton/common/logging.h") in includes
    # server -> core's public header
    assert ("file:server/src/http_server.h", "file:core/include/triton/core/tritonserver.h") in includes
    # relative to the including file first
    assert ("file:server/src/grpc/grpc_server.h", "file:server/src/shared_memory_manager.h") in includes
    assert ("file:core/src/server.cc", "file:core/src/server.h") in includes
    # system headers are counted, never nodes
    assert graph.stats["includes_unresolved_angle"] > 0
    assert not [n for n in graph.nodes if n.id.startswith("file:") and n.name in ("string", "memory")]
    # Quoted includes of libraries and generated code outside the system stay unresolved and
    # counted: metrics.h's five prometheus-cpp headers and metrics.cc's model_config.pb.h.
    assert graph.stats.get("includes_unresolved_quoted", 0) == 6


def test_extern_c_api_behind_export_macro_is_a_node_at_its_definition(graph):
    new = node(graph, "cpp:TRITONSERVER_ServerNew")
    assert new.kind is NodeKind.FUNCTION
    assert (new.path, new.line) == ("core/src/tritonserver.cc", 20)
    assert "declaration" not in new.tags
    assert new.doc == "Create a server from options. The caller owns the returned server."  # header's
    for api in ("TRITONSERVER_ServerDelete", "TRITONSERVER_ServerIsReady", "TRITONSERVER_ErrorMessage"):
        assert node(graph, f"cpp:{api}").path == "core/src/tritonserver.cc"
    # declaration and definition are one node, both sites kept
    sites = [(s.path, s.is_definition) for s in graph.shared.definition_sites if s.node == new.id]
    assert sorted(sites) == [("core/include/triton/core/tritonserver.h", False), ("core/src/tritonserver.cc", True)]


def test_export_macro_defined_in_an_included_header_needs_the_second_pass(graph):
    sink = node(graph, "cpp:triton::core::LogSink")
    assert (sink.path, sink.line, sink.kind) == ("core/src/log_sink.h", 11, NodeKind.CLASS)
    assert ("cpp:triton::core::LogSink", "cpp:triton::core::LogSink::Write") in edges(graph, EdgeKind.CONTAINS)
    assert ("cpp:triton::core::LogSink::Write", "cpp:triton::common::LogMessage") in edges(graph, EdgeKind.CALLS)
    assert graph.stats["files_rescanned_for_macros"] >= 2  # log_sink.h and common/src/logging.cc
    logger = node(graph, "cpp:triton::common::GlobalLogger")
    assert (logger.path, logger.line, logger.kind) == ("common/src/logging.cc", 31, NodeKind.FUNCTION)
    # the control: the header alone, without the macro from the other repository, shows no class
    data = (TRITON_LIKE / "core/src/log_sink.h").read_bytes()
    alone = scan_cpp(ParsedFile(Language.CPP, data, parse_source(data, Language.CPP)))
    assert "triton::core::LogSink" not in {d.qual for d in alone.defs}


def test_out_of_line_methods_are_attached_to_their_class(graph):
    contains = edges(graph, EdgeKind.CONTAINS)
    cls = "cpp:triton::core::DynamicBatchScheduler"
    for method in ("Create", "Enqueue", "GetDynamicBatch", "~DynamicBatchScheduler", "DynamicBatchScheduler",
                   "BatcherThread"):  # BatcherThread is defined as triton::core::...::BatcherThread at global scope
        m = node(graph, f"{cls}::{method}")
        assert m.kind is NodeKind.METHOD
        assert m.path == "core/src/dynamic_batch_scheduler.cc"
        assert (cls, m.id) in contains
    # a namespace-relative qualifier reaches the class through the enclosing namespaces
    assert node(graph, "cpp:triton::server::HTTPAPIServer::HandleInfer").kind is NodeKind.METHOD
    assert ("cpp:triton::core", cls) in contains
    assert ("file:core/src/dynamic_batch_scheduler.h", cls) in contains


def test_both_branches_of_ifdef_are_nodes(graph):
    cls = "cpp:triton::core::DynamicBatchScheduler"
    assert node(graph, f"{cls}::PinBatchBuffers").line == 89
    assert node(graph, f"{cls}::CopyBatchOnHost").line == 95
    assert node(graph, "cpp:triton::server::SharedMemoryManager::RegisterCUDASharedMemory").path == \
        "server/src/shared_memory_manager.cc"


def test_inheritance_resolves_known_bases_and_marks_external_ones(graph):
    inherits = edges(graph, EdgeKind.INHERITS)
    assert ("cpp:triton::core::DynamicBatchScheduler", "cpp:triton::core::Scheduler") in inherits
    assert ("cpp:triton::server::HTTPAPIServer", "cpp:triton::server::HTTPServer") in inherits
    assert ("cpp:triton::server::grpc::InferHandler", "cpp:triton::server::grpc::HandlerBase") in inherits
    assert ("cpp:triton::server::grpc::InferHandler", "cpp:std::enable_shared_from_this") in inherits
    assert node(graph, "cpp:std::enable_shared_from_this").kind is NodeKind.EXTERNAL


def test_an_external_base_written_unqualified_is_the_one_an_enclosing_namespace_qualifies(tmp_path):
    """A backend inherits the framework's classes from headers outside the system, one file writing
    `triton::backend::BackendModel`, the other `BackendModelInstance` inside a nested namespace: C++
    finds the framework's, never a global class of that name."""
    graph = cpp_graph(tmp_path, {
        "src/model_state.h": "namespace triton::backend::torch {\n"
                             "class ModelState : public triton::backend::BackendModel {};\n"
                             "class Other : public triton::backend::BackendModelInstance {};\n}\n",
        "src/instance_state.h": "namespace triton { namespace backend { namespace torch {\n"
                                "class InstanceState : public BackendModelInstance {};\n"
                                "class Plain : public BackendModel {};\n"
                                "class Global : public ::Unknown {};\n"
                                "class Lone : public Unknown {};\n}}}\n",
        "src/unknown.h": "namespace triton { class Elsewhere : public ::triton::backend::Unknown {}; }\n"})
    inherits = edges(graph, EdgeKind.INHERITS)
    ns = "cpp:triton::backend::torch"
    assert {(f"{ns}::InstanceState", "cpp:triton::backend::BackendModelInstance"),
            (f"{ns}::Plain", "cpp:triton::backend::BackendModel"),
            (f"{ns}::Global", "cpp:Unknown"),  # `::Unknown` names the global namespace's
            (f"{ns}::Lone", "cpp:triton::backend::Unknown")} <= inherits
    assert not [n for n in graph.nodes if n.id in ("cpp:BackendModelInstance", "cpp:BackendModel")]


def test_kernels_device_functions_and_launches(graph):
    gather = node(graph, "cpp:triton::core::GatherRowsKernel")  # behind __launch_bounds__(256)
    scatter = node(graph, "cpp:triton::core::ScatterRowsKernel")
    assert gather.kind is scatter.kind is NodeKind.KERNEL
    assert "template" in scatter.tags and "kernel" in scatter.tags
    assert gather.language == "cuda"
    assert "device" in node(graph, "cpp:triton::core::ScaleElement").tags
    launches = {(e.source, e.target, e.line) for e in graph.edges if e.kind is EdgeKind.LAUNCHES}
    assert launches == {("cpp:triton::core::LaunchGatherRows", "cpp:triton::core::GatherRowsKernel", 39),
                        ("cpp:triton::core::LaunchGatherRows", "cpp:triton::core::ScatterRowsKernel", 40)}


def test_calls_resolve_through_namespaces_and_across_repositories(graph):
    calls = edges(graph, EdgeKind.CALLS)
    assert ("cpp:triton::core::InferenceServer::Init", "cpp:triton::core::DynamicBatchScheduler::Create") in calls
    assert ("cpp:triton::core::InferenceServer::Init", "cpp:triton::common::LogMessage") in calls
    assert ("cpp:triton::server::HTTPAPIServer::HandleServerReady", "cpp:TRITONSERVER_ServerIsReady") in calls
    # a helper of the file's anonymous namespace: its id names the file
    assert ("cpp:triton::server::SharedMemoryManager::RegisterSystemSharedMemory",
            "cpp:triton::server::(anonymous namespace@server/src/shared_memory_manager.cc)::OpenSharedMemoryRegion"
            ) in calls
    # a call through a member resolves through the member's declared type (`std::unique_ptr<InferHandler>
    # infer_handler_;`), to that class's method, not its base's
    assert [c for c in calls if c[1].endswith("::Process") and c[0].endswith("Server::Start")] == [
        ("cpp:triton::server::grpc::Server::Start", "cpp:triton::server::grpc::InferHandler::Process")]


def test_node_kinds_and_file_nodes(graph):
    kinds = {n.kind for n in graph.nodes}
    assert kinds >= {NodeKind.FILE, NodeKind.NAMESPACE, NodeKind.CLASS, NodeKind.STRUCT, NodeKind.ENUM,
                     NodeKind.FUNCTION, NodeKind.METHOD, NodeKind.KERNEL, NodeKind.EXTERNAL}
    files = {n.id for n in graph.nodes if n.kind is NodeKind.FILE}
    assert len(files) == graph.stats["files"] == 23  # 21 C++/CUDA files + the telemetry metrics.cc/.h
    assert "file:core/src/cuda_memory_kernels.cu" in files
    assert node(graph, "cpp:triton::server::SharedMemoryManager::SharedMemoryInfo").kind is NodeKind.STRUCT
    assert node(graph, "cpp:triton::common::LogLevel").kind is NodeKind.ENUM


def test_an_ifdef_inside_an_expression_is_read_and_macro_definitions_become_diagnostics(graph):
    # the usage string assembled across an `#ifdef ... #else` in the middle of an expression: read with its
    # first branch (parse.keep_first_of_opening_branches), no parse error
    assert not [d for d in graph.diagnostics if d.code == "parse-errors"]
    assert graph.stats.get("error_nodes", 0) == 0
    assert node(graph, "cpp:triton::server::UsageText").line == 15
    # DECLARE_OPTION_ACCESSOR(http_port) defines option_http_port, read from its expansion: nothing to say
    assert not [d for d in graph.diagnostics if d.code == "macro-definitions"]
    accessor = node(graph, "cpp:option_http_port")
    assert (accessor.line, "macro-expanded" in accessor.tags) == (10, True)
    assert "cpp:option_http_port" in graph.shared.internal  # `static` in the macro's body
    # what follows the unparsable region is still a node
    assert node(graph, "cpp:triton::server::ParseCommandLine").line == 28


def test_pybind_registrations_resolve_to_cpp_symbols(graph):
    got = {(b.kind, b.owner, b.name, b.target) for b in graph.shared.pybind_bindings}
    assert got == {
        ("def", "", "version", "cpp:triton::server::python::FrontendVersion"),
        # a lambda binds to what it wraps, not to the error-check helper beside it
        ("def", "", "server_ready", "cpp:TRITONSERVER_ServerIsReady"),
        # an enum bound under its typedef name
        ("class", "", "FrontendKind", "cpp:triton::server::python::frontend_kind_enum"),
        ("class", "", "TritonFrontendHttp", "cpp:triton::server::HTTPServer"),
        ("method", "TritonFrontendHttp", "start", "cpp:triton::server::HTTPServer::Start"),
        ("method", "TritonFrontendHttp", "stop", "cpp:triton::server::HTTPServer::Stop"),
    }


def test_graph_is_deterministic_whatever_the_file_order(graph):
    ctx = scan_trees(REPOS, name="triton-like")
    files = [(f.path, f.language, f.facts["cpp"], ctx.abs_path(f)) for f in ctx.files]
    again = build_cpp_graph(reversed(files))
    dump = lambda c: json.dumps(to_jsonable(c), sort_keys=True)  # noqa: E731
    assert dump(again) == dump(graph)
    assert list(graph.nodes) == sorted(graph.nodes) and list(graph.edges) == sorted(graph.edges)
    assert len(set(graph.edges)) == len(graph.edges)  # each edge once


def test_the_work_split_over_forked_children_gives_the_same_graph(graph, monkeypatch):
    """The files scanned again with their includes' macros, the call sites and the types the
    signatures use are split over forked children: the graph (calls, launches and uses edges,
    stats) is the one a single process builds, and the files went to the children as tasks."""
    from extractor.cpp import includes

    ctx = scan_trees(REPOS, name="triton-like")
    files = [(f.path, f.language, f.facts["cpp"], ctx.abs_path(f)) for f in ctx.files]
    real, rounds = includes.fork_map, []

    def spy(work, tasks, jobs, meanwhile=None):
        rounds.append(([t.path for t in tasks], jobs))
        return real(work, tasks, jobs, meanwhile)

    monkeypatch.setattr(includes, "fork_map", spy)
    forked = build_cpp_graph(files, jobs=3)
    dump = lambda c: json.dumps(to_jsonable(c), sort_keys=True)  # noqa: E731
    assert dump(forked) == dump(graph)
    (looked_at, jobs), = rounds
    assert jobs == 3 and {"core/src/log_sink.h", "common/src/logging.cc"} <= set(looked_at)
    assert forked.stats["files_rescanned_for_macros"] >= 2


def _walked(defined, includes, path):
    """The macros ``path``'s includes define, by walking them from ``path`` (the plain way)."""
    seen, stack, found = {path}, list(includes.get(path, ())), set()
    while stack:
        inc = stack.pop()
        if inc not in seen:
            seen.add(inc)
            found |= defined.get(inc, set())
            stack.extend(includes.get(inc, ()))
    return found - defined.get(path, set())


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(hypothesis.strategies.dictionaries(
    hypothesis.strategies.sampled_from("abcdefgh"),
    hypothesis.strategies.tuples(hypothesis.strategies.sets(hypothesis.strategies.sampled_from("MNOPQ")),
                                 hypothesis.strategies.lists(hypothesis.strategies.sampled_from("abcdefghij")))))
def test_macros_through_includes_equal_a_walk_from_each_file_cycles_included(graph):
    defined = {path: set(macros) for path, (macros, _) in graph.items()}
    includes = {path: targets for path, (_, targets) in graph.items()}
    reachable = defined_through_includes(defined, includes)
    for path in graph:
        assert reachable[path] - defined[path] == _walked(defined, includes, path)


_PATH = hypothesis.strategies.lists(hypothesis.strategies.sampled_from(["a", "b", "x.h", "y.h"]), min_size=1,
                                    max_size=4).map("/".join)


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(hypothesis.strategies.sets(_PATH, min_size=1, max_size=12),
                  hypothesis.strategies.lists(hypothesis.strategies.tuples(hypothesis.strategies.integers(0, 11),
                                                                           _PATH), max_size=30))
# a top-level file and a directory of the same name (`a` and `a/a`) once shared a key
@hypothesis.example({"a", "a/a", "a/a/a", "a/b", "b"}, [(0, "b"), (1, "b")])
# two files of one directory, one named like a directory of a candidate (`x.h/b` beside `x.h/b/x.h`): the
# directory's files once took the nearest to the first file's path, not to their directory
@hypothesis.example({"x.h/a", "x.h/b", "x.h", "a", "b", "a/a", "x.h/b/x.h"}, [(4, "x.h"), (5, "x.h")])
def test_include_resolution_shared_by_a_directory_equals_resolving_each_include_alone(paths, includes):
    # the resolver remembers a target per includer's directory; a file that is a candidate of
    # its own include (`b/x.h` written in `a/b/x.h`) must still find itself
    ordered = sorted(paths)
    shared = IncludeResolver(ordered)
    for index, target in includes:
        includer = ordered[index % len(ordered)]
        assert shared.resolve(includer, target) == IncludeResolver(ordered)._resolve(includer, target)


def test_a_static_assert_macro_an_include_defines_is_blanked_in_its_includers(tmp_path):
    graph = cpp_graph(tmp_path, {
        "include/common/exception.cuh": ("#pragma once\n"
                                         "#define EP_STATIC_ASSERT(cond, reason) static_assert(cond, reason)\n"),
        "csrc/config.hpp": "#pragma once\n#include \"../include/common/exception.cuh\"\n",
        "csrc/buffer.hpp": ("#include \"config.hpp\"\nnamespace ep::legacy {\nstruct Buffer {\n"
                            "  EP_STATIC_ASSERT(kPeers == 8, \"The number of maximum peers must be 8\");\n"
                            " public:\n  void destroy() {}\n"
                            "  int rank() const { return 0; }\n};\n}\n"),
    })
    ids = {n.id for n in graph.nodes}
    assert {"cpp:ep::legacy::Buffer::destroy", "cpp:ep::legacy::Buffer::rank"} <= ids
    assert not {"cpp:destroy", "cpp:rank"} & ids


def test_a_keyword_a_header_defines_for_old_compilers_stays_in_the_signatures(tmp_path):
    """zlib's zconf.h defines `const` away for compilers before ANSI C; blanked as an attribute macro, it
    went missing from every signature of the files that include it (grpc's vendored zlib:
    `deflateSetDictionary(z_streamp, Bytef*, uInt)`), and each such file was parsed a second time."""
    graph = cpp_graph(tmp_path, {
        "zlib/zconf.h": "#ifndef STDC\n#  define const\n#endif\n#define local static\n#define ZEXPORT\n",
        "zlib/deflate.c": ('#include "zconf.h"\n'
                           "local int shift(const unsigned char *window);\n"
                           "int ZEXPORT deflateSetDictionary(void *strm, const unsigned char *dictionary) {\n"
                           "  return shift(dictionary);\n}\n"),
    })
    setter = node(graph, "cpp:deflateSetDictionary")
    assert [p.annotation for p in setter.params] == ["void*", "const unsigned char*"]
    assert ("cpp:deflateSetDictionary", "cpp:shift") in edges(graph, EdgeKind.CALLS)  # `local` still blanked
    assert [p.annotation for p in node(graph, "cpp:shift").params] == ["const unsigned char*"]


def test_parse_errors_become_diagnostics_by_file_said_by_how_many(tmp_path):
    # a builtin that takes a type where the grammar takes an expression: one ERROR node per use
    cast = "  v = __builtin_bit_cast(int, x);\n"
    graph = cpp_graph(tmp_path, {"one.cc": "void f(float x) {\n  int v;\n" + cast + "}\n",
                                 "four.cc": "void g(float x) {\n  int v;\n" + cast * 4 + "}\n"})
    errors = {d.path: d for d in graph.diagnostics if d.code == "parse-errors"}
    assert {p: (d.line, d.severity) for p, d in errors.items()} == {"one.cc": (3, Severity.INFO),
                                                                    "four.cc": (3, Severity.WARNING)}
    assert errors["four.cc"].message.startswith("4 ERROR node(s) in the syntax tree (lines 3, 4, 5, 6)")
    assert graph.stats["error_nodes"] == 5 and graph.stats["files_with_parse_errors"] == 2


def test_the_parse_that_recovers_a_conditional_region_blanks_the_includes_macros_too(tmp_path):
    """An `#ifdef` inside an expression (zlib's `s->status = #ifdef GZIP ... #endif INIT_STATE;`) makes the
    rest of the file an error region, which a variant without the directives recovers. The variant was
    parsed without the macros the file's includes define: `local` read as a type made a function
    `block_statedeflate_fast` returning `local` beside the real `deflate_fast` (grpc's vendored zlib).
    (A group of one branch there is now read through before the parse, `join_conditional_blocks`, and so
    are two branches that are pieces of the expression, `keep_first_of_opening_branches`: the fixture's
    second branches end a statement and begin another, which still takes the variant.)"""
    graph = cpp_graph(tmp_path, {
        "zlib/zutil.h": "#ifndef local\n#  define local static\n#endif\n",
        "zlib/deflate.c": ('#include "zutil.h"\n'
                           "typedef enum { need_more, block_done } block_state;\n"
                           "local block_state deflate_fast(int flush);\n"
                           "int reset(state *s) {\n"
                           "    s->status =\n"
                           "#ifdef GZIP\n"
                           "        s->wrap == 2 ? GZIP_STATE :\n"
                           "#else\n"
                           "        s->wrap == 3 ? RAW_STATE : INIT_STATE; s->mode =\n"
                           "#endif\n"
                           "        INIT_STATE;\n"
                           "    s->adler =\n"
                           "#ifdef GZIP\n"
                           "        s->wrap == 2 ? crc32(0L, Z_NULL, 0) :\n"
                           "#else\n"
                           "        s->wrap == 3 ? 0 : 1; s->check =\n"
                           "#endif\n"
                           "        adler32(0L, Z_NULL, 0);\n"
                           "    return 0;\n"
                           "}\n"
                           "local block_state deflate_fast(int flush) {\n"
                           "    return flush ? block_done : need_more;\n"
                           "}\n"),
    })
    functions = {n.id for n in graph.nodes if n.kind is NodeKind.FUNCTION}
    assert functions == {"cpp:reset", "cpp:deflate_fast"}
    assert node(graph, "cpp:deflate_fast").line == 21  # the definition, the declaration its other site
    assert "recovered" in node(graph, "cpp:reset").tags  # the variant was taken


def test_an_export_macro_defined_as_another_headers_attribute_macro_is_blanked(tmp_path):
    """c-ares's `CARES_EXTERN` is nothing for a static build and `CARES_SYMBOL_SCOPE_EXTERN` otherwise, a
    visibility attribute that another header defines; read per file it was no attribute macro, and every
    declaration of ares.h after it was an ERROR (64 of them in grpc's vendored copy). A name that the
    system defines as anything else keeps an alias as written."""
    graph = cpp_graph(tmp_path, {
        "include/lib_build.h": '#define LIB_SYMBOL_SCOPE_EXTERN __attribute__ ((__visibility__ ("default")))\n'
                               "#define LIB_SOCKET int\n",
        "include/lib.h": ('#include "lib_build.h"\n'
                          "#ifdef LIB_STATICLIB\n#  define LIB_EXTERN\n"
                          "#else\n#  define LIB_EXTERN LIB_SYMBOL_SCOPE_EXTERN\n"
                          "#endif\n#define LIB_SOCKET_T LIB_SOCKET\n"
                          "LIB_EXTERN int lib_init(int flags);\n"
                          "LIB_EXTERN void lib_cleanup(void);\n"),
        "src/lib.c": ('#include "lib.h"\n'
                      "LIB_EXTERN int lib_init(int flags) { return flags; }\n"
                      "LIB_EXTERN void lib_cleanup(void) { lib_init(0); }\n"
                      "LIB_SOCKET_T lib_socket(void) { return 3; }\n"),
    })
    for name, line in (("lib_init", 8), ("lib_cleanup", 9)):
        function = node(graph, f"cpp:{name}")
        assert (function.path, function.kind) == ("src/lib.c", NodeKind.FUNCTION)
        sites = [(s.path, s.line) for s in graph.shared.definition_sites if s.node == function.id]
        assert ("include/lib.h", line) in sites
    assert ("cpp:lib_cleanup", "cpp:lib_init") in edges(graph, EdgeKind.CALLS)
    assert graph.stats.get("error_nodes", 0) == 0
    assert node(graph, "cpp:lib_socket").returns == "LIB_SOCKET_T"  # a type's alias: as written


def test_a_macro_defined_as_a_use_of_another_headers_attribute_macro_is_blanked(tmp_path):
    """jemalloc's `#define JEMALLOC_ALWAYS_INLINE JEMALLOC_ATTR(always_inline) static inline` and DuckDB's
    `#define DUCKDB_GUARDED_BY(x) DUCKDB_THREAD_ANNOTATION_ATTRIBUTE(guarded_by(x))` use a function-like
    attribute macro that another header defines: read per file they were no attribute macros, and each
    use was an ERROR (jemalloc in DuckDB: 150 in 30 files). A use of a macro the system defines as
    anything else keeps the alias as written."""
    graph = cpp_graph(tmp_path, {
        "include/macros.h": ("#ifdef __GNUC__\n#  define LIB_ATTR(s) __attribute__((s))\n#else\n#  define LIB_ATTR(s)\n"
                             "#endif\n#define LIB_ANNOTATE(x) __attribute__((x))\n#define LIB_CAST(t, v) ((t)(v))\n"),
        "include/internal.h": ('#include "macros.h"\n'
                               "#define LIB_ALWAYS_INLINE LIB_ATTR(always_inline) static inline\n"
                               "#define LIB_GUARDED_BY(x) LIB_ANNOTATE(guarded_by(x))\n"
                               "#define LIB_AS_INT(v) LIB_CAST(int, v)\n"),
        "src/arena.c": ('#include "internal.h"\n'
                        "struct arena { int lock; int count LIB_GUARDED_BY(lock); };\n"
                        "LIB_ALWAYS_INLINE void *\narena_alloc(struct arena *a, int n) { return arena_grow(a, n); }\n"
                        "int arena_size(struct arena *a) { return LIB_AS_INT(a->count); }\n"),
    })
    alloc = node(graph, "cpp:arena_alloc")
    assert (alloc.line, alloc.returns, [p.annotation for p in alloc.params]) == (4, "void*", ["struct arena*", "int"])
    assert graph.stats.get("error_nodes", 0) == 0
    facts = {path: scan_cpp(ParsedFile(Language.CPP, (tmp_path / path).read_bytes(),
                                       parse_source((tmp_path / path).read_bytes(), Language.CPP)))
             for path in ("include/macros.h", "include/internal.h")}
    # LIB_CAST is no attribute macro: LIB_AS_INT stays as written
    assert system_attribute_aliases(facts) == {"LIB_ALWAYS_INLINE", "LIB_GUARDED_BY("}


def test_a_file_written_to_be_included_sees_the_macros_every_includer_sees(tmp_path):
    """glm's `func_common.inl` is included at the end of `func_common.hpp` and writes `GLM_FUNC_QUALIFIER`
    before each definition, a macro of `setup.hpp` that it does not include itself: read without it, each
    definition was a function named with its return type (`glm::vecacos`, MNN's copy: 245 of them). A macro
    that only some of a file's includers see stays as written there."""
    graph = cpp_graph(tmp_path, {
        "lib/setup.hpp": "#define LIB_FUNC_DECL\n#define LIB_FUNC_QUALIFIER inline\n",
        "lib/other.hpp": "#define LIB_ONLY_HERE __attribute__((cold))\n",
        "lib/func.hpp": ('#include "setup.hpp"\nnamespace lib {\n'
                         "template <typename T, qualifier Q>\n"
                         "LIB_FUNC_DECL vec<2, T, Q> twice(vec<2, T, Q> const& x);\n}\n"
                         '#include "func.inl"\n'),
        "lib/func.inl": ("namespace lib {\n"
                         "template <typename T, qualifier Q>\n"
                         "LIB_FUNC_QUALIFIER vec<2, T, Q> halve(vec<2, T, Q> const& x) { return x; }\n"
                         "template <typename T, qualifier Q>\n"
                         "LIB_FUNC_QUALIFIER vec<2, T, Q> twice(vec<2, T, Q> const& x) {\n"
                         "  return halve(x);\n}\n}\n"),
        "lib/alone.inl": "LIB_ONLY_HERE\nint cold_path(int x) { return x; }\n",
        "lib/a.cpp": '#include "other.hpp"\n#include "alone.inl"\n',
        "lib/b.cpp": '#include "setup.hpp"\n#include "alone.inl"\n',
    })
    twice = node(graph, "cpp:lib::twice")
    assert (twice.path, twice.line) == ("lib/func.inl", 5)  # the definition; the declaration its other site
    assert ("cpp:lib::twice", "cpp:lib::halve") in edges(graph, EdgeKind.CALLS)
    assert not [n.id for n in graph.nodes if n.id.startswith("cpp:lib::vec")]
    # b.cpp does not see LIB_ONLY_HERE: left as written (the grammar reads it as part of the function's type)
    assert node(graph, "cpp:cold_path").returns == "LIB_ONLY_HERE int"
    alone = cpp_graph(tmp_path / "one", {"other.hpp": "#define LIB_ONLY_HERE __attribute__((cold))\n",
                                         "alone.inl": "LIB_ONLY_HERE\nint cold_path(int x) { return x; }\n",
                                         "a.cpp": '#include "other.hpp"\n#include "alone.inl"\n'})
    assert node(alone, "cpp:cold_path").returns == "int"  # its one includer sees it: blanked


def test_a_macro_that_opens_a_lambda_is_read_as_that_lambda(tmp_path):
    """folly's `SCOPE_EXIT { ... };` is `auto X = ScopeGuardOnExit() + [&]() noexcept { ... };`: read as
    written, the use was an ERROR node that, in a class's method, took the class's later members out of it
    (100 of the 101 folly files that use one had parse errors). Written as the lambda it opens, in the file
    that defines the macro and in its includers."""
    graph = cpp_graph(tmp_path, {
        "include/guard.h": ("#define SCOPE_EXIT                                        \\\n"
                            "  auto FB_ANONYMOUS_VARIABLE(SCOPE_EXIT_STATE) = \\\n"
                            "      ::folly::detail::ScopeGuardOnExit() + [&]() noexcept\n"
                            "#define defer auto DEFER_(__LINE__) = defer_dummy{} * [ & ]( )  // Go's\n"
                            "void release();\n"),
        "src/executor.cpp": ('#include "guard.h"\n'
                             "namespace pool {\nclass Executor {\n public:\n  void start() {\n"
                             "    workers_.emplace_back([this] {\n      SCOPE_EXIT {\n        release();\n"
                             "      };\n      this->work();\n    });\n  }\n"
                             "  ~Executor() { defer { release(); }; }\n  void work() {}\n};\n}\n"),
    })
    methods = {n.id for n in graph.nodes if n.kind is NodeKind.METHOD}
    assert methods == {"cpp:pool::Executor::start", "cpp:pool::Executor::~Executor", "cpp:pool::Executor::work"}
    assert {("cpp:pool::Executor::start", "cpp:release"), ("cpp:pool::Executor::~Executor", "cpp:release"),
            ("cpp:pool::Executor::start", "cpp:pool::Executor::work")} <= edges(graph, EdgeKind.CALLS)
    assert graph.stats.get("error_nodes", 0) == 0


def test_a_macro_that_assigns_an_argument_is_read_as_that_assignment(tmp_path):
    """Arrow's `ARROW_ASSIGN_OR_RAISE(auto reader, Open(path));` declares a variable in a macro's argument,
    which is no expression: tree-sitter made an ERROR node of it, and often of the rest of the file (Arrow's
    hash_aggregate_test.cc: 1,655 ERROR nodes, its tests' namespace lost). The macro hands its parameters to
    an `_IMPL` macro that assigns the first the value of the second; each use is written as that
    assignment, in place, in the file that defines the macro and in its includers. A macro that assigns
    from nothing it is given (`RESET(x)`) is no such macro."""
    graph = cpp_graph(tmp_path, {
        "arrow/result.h": ("#define ARROW_ASSIGN_OR_RAISE_IMPL(result_name, lhs, rexpr) \\\n"
                           "  auto&& result_name = (rexpr);                          \\\n"
                           "  ARROW_RETURN_IF_(!(result_name).ok(), (result_name).status()); \\\n"
                           "  lhs = std::move(result_name).ValueUnsafe();\n"
                           "#define ARROW_ASSIGN_OR_RAISE(lhs, rexpr) \\\n"
                           "  ARROW_ASSIGN_OR_RAISE_IMPL(ARROW_CONCAT(_error_or_value, __COUNTER__), lhs, rexpr);\n"
                           "#define RESET(x) x = 0\n"),
        "arrow/io.cc": ('#include "arrow/result.h"\nnamespace arrow {\nclass Reader {\n public:\n'
                        "  Status ReadAll();\n};\nResult<Reader*> Open(const char* path, char sep);\n"
                        "Result<int> Parse(const char* json);\nStatus Load(const char* path) {\n"
                        "  ARROW_ASSIGN_OR_RAISE(Reader* reader, Open(path, ','));\n"
                        "  ARROW_ASSIGN_OR_RAISE(auto status,\n                        reader->ReadAll())\n"
                        # a raw literal's commas and parentheses are its own
                        '  ARROW_ASSIGN_OR_RAISE(auto json, Parse(R"({"a": [1, 2], "b": "("})"));\n'
                        "  return status;\n}\n}  // namespace arrow\nvoid after_namespace() {}\n"),
    })
    assert {("cpp:arrow::Load", "cpp:arrow::Open"), ("cpp:arrow::Load", "cpp:arrow::Reader::ReadAll"),
            ("cpp:arrow::Load", "cpp:arrow::Parse")} <= edges(graph, EdgeKind.CALLS)
    assert node(graph, "cpp:after_namespace").line == 17
    assert graph.stats.get("error_nodes", 0) == 0


def test_a_macro_that_names_a_type_by_pasting_is_written_as_that_type(tmp_path):
    """BoringSSL's and OpenSSL's `STACK_OF(X509)` is `struct stack_st_X509`: read as written, a function with
    such a parameter was no definition at all, and no ERROR node said so (grpc's vendored BoringSSL: 786 uses
    in 97 files). Written as the type it pastes, in the file that defines the macro and in its includers."""
    graph = cpp_graph(tmp_path, {
        "include/stack.h": "#define STACK_OF(type) struct stack_st_##type\n"
                           "#define OTHER_OF(type) type##_list  /* a second, pasted after */\n"
                           "#ifdef OLD_COMPILER\n#define noexcept(a) noexcept_##a\n#endif\n"  # a keyword: as written
                           "void sk_free(STACK_OF(void) *sk);\n",
        "include/x509.h": ('#include "stack.h"\n'
                           "int X509_add(STACK_OF(X509) *sk, X509 *x);\n"
                           "STACK_OF(X509) *X509_chain(OTHER_OF(cert) *certs);\n"),
        "src/x509.c": ('#include "x509.h"\n'
                       "static void free_all(STACK_OF(X509) *sk) { sk_free(sk); }\n"
                       "void X509_free(X509* x) noexcept(true) { free_all(0); }\n"
                       "int X509_add(STACK_OF(X509) *sk, X509 *x) {\n  free_all(sk);\n  return 1;\n}\n"),
    })
    add = node(graph, "cpp:X509_add")
    assert (add.path, add.line) == ("src/x509.c", 4)
    assert [p.annotation for p in add.params] == ["stack_st_X509*", "X509*"]
    assert [p.annotation for p in node(graph, "cpp:X509_chain").params] == ["cert_list*"]
    assert node(graph, "cpp:X509_chain").returns == "stack_st_X509*"
    assert [p.annotation for p in node(graph, "cpp:sk_free").params] == ["stack_st_void*"]
    assert {("cpp:X509_add", "cpp:free_all"), ("cpp:free_all", "cpp:sk_free")} <= edges(graph, EdgeKind.CALLS)
    assert ("cpp:X509_free", "cpp:free_all") in edges(graph, EdgeKind.CALLS)
    assert graph.stats.get("error_nodes", 0) == 0  # `noexcept(true)` as written, not `noexcept_true`
