"""TVM FFI global functions: registered in C++ by dotted name (read by the C++ step, mechanism
"tvm-ffi") (fixtures/tvm_ffi_mini: the shapes of mlc-llm, TVM and FlashInfer's tvm_ffi, written small)."""

from __future__ import annotations

import pytest

from extractor.cpp import extract_cpp_graph
from extractor.cpp.standalone import scan_trees
from extractor.model import Contribution

from tests.conftest import FIXTURES

FIXTURE = FIXTURES / "tvm_ffi_mini"


@pytest.fixture(scope="module")
def graph() -> Contribution:
    return extract_cpp_graph(scan_trees({"": FIXTURE / "csrc"}))


def test_each_registration_shape_is_read_with_its_name_line_and_function(graph):
    found = {b.python_name: (b.target, b.path, b.line, b.function) for b in graph.shared.pybind_bindings
             if b.mechanism == "tvm-ffi"}
    assert found == {
        "tiny.serve.create_engine": ("cpp:tiny::serve::CreateEngine", "engine.cc", 23, "CreateEngine"),
        "tiny.serve.EngineStep": ("cpp:tiny::serve::Engine::Step", "engine.cc", 24, "Engine::Step"),
        # a member given its class as a template argument
        "tiny.serve.EngineAbort": ("cpp:tiny::serve::Engine::Abort", "engine.cc", 25, "Engine::Abort"),
        "tiny.serve.version": ("cpp:tiny::serve::Version", "engine.cc", 26, "Version"),
        # a packed lambda: the function it calls, as pybind11's lambdas
        "tiny.serve.ResetAll": ("cpp:tiny::serve::Reset", "engine.cc", 27, "<lambda> -> Reset"),
        "tiny.serve.Reset": ("cpp:tiny::serve::Reset", "engine.cc", 33, "Reset"),
        "tiny.serve.ResetTwice": ("cpp:tiny::serve::Reset", "engine.cc", 34, "<lambda> -> Reset"),
        "tiny.serve.Packed": ("cpp:tiny::serve::Reset", "engine.cc", 35, "<lambda> -> Reset"),
        "tiny.serve.EngineAbortMethod": ("cpp:tiny::serve::Engine::Abort", "engine.cc", 36, "Engine::Abort"),
        "tiny.serve.Flush": ("cpp:tiny::serve::Flush", "engine.cc", 41, "<lambda> -> Flush"),
        # `TVM_FFI_STATIC_INIT_BLOCK({ ... });`: the block is the macro's argument
        "tiny.tok.Encode": ("cpp:tiny::Encode", "tokenizer.cc", 10, "Encode"),
        "tiny.tok.Decode": ("cpp:tiny::Decode", "tokenizer.cc", 10, "Decode"),
        # a function the system does not define: read, bound to no node
        "tiny.tok.Normalize": ("", "tokenizer.cc", 17, "thirdparty::Normalize"),
        "tiny.tok.Count": ("cpp:tiny::Count", "tokenizer.cc", 17, "Count"),
    }
    assert {k: v for k, v in graph.stats.items() if "tvm" in k or "pybind" in k} == {
        "pybind_bindings": 0, "tvm_ffi_globals": 14, "tvm_ffi_globals_resolved": 13}


def test_the_static_init_block_is_no_function_and_the_functions_after_it_stay(graph):
    functions = {n.id for n in graph.nodes if n.kind.value in ("function", "method")}
    assert functions == {"cpp:tiny::serve::CreateEngine", "cpp:tiny::serve::Engine::Step",
                         "cpp:tiny::serve::Engine::Abort", "cpp:tiny::serve::Version", "cpp:tiny::serve::Reset",
                         "cpp:tiny::serve::Flush", "cpp:tiny::Encode", "cpp:tiny::Decode", "cpp:tiny::Count"}
    # the lambdas' calls are the bindings' targets, as in a PYBIND11_MODULE block: no caller of its own
    assert not [e for e in graph.edges if e.kind.value == "calls"]
    api = {n.id: n.api for n in graph.nodes}
    assert api["cpp:tiny::serve::Engine::Abort"] == "public: tvm-ffi tiny.serve.EngineAbort"
    assert api["cpp:tiny::Count"] == "public: tvm-ffi tiny.tok.Count"
