"""TVM FFI global functions: registered in C++ by dotted name (read by the C++ step, mechanism
"tvm-ffi") and looked up from Python by that name, bound by the bindings step
(fixtures/tvm_ffi_mini: the shapes of mlc-llm, TVM and FlashInfer's tvm_ffi, written small)."""

from __future__ import annotations

from pathlib import Path

import pytest

from extractor import cpp, python
from extractor.bindings.python_cpp import _global_as_binding, _tvm_ffi_bindings
from extractor.context import ExtractOptions
from extractor.cpp import extract_cpp_graph
from extractor.cpp.standalone import scan_trees
from extractor.model import Contribution, Language
from extractor.run.pipeline import extract_system

from tests.conftest import FIXTURES
from tests.native_support import fixture_bundle, scanned_context

FIXTURE = FIXTURES / "tvm_ffi_mini"
_LANGUAGES = {".py": Language.PYTHON, ".cc": Language.CPP}


@pytest.fixture(scope="module")
def graph() -> Contribution:
    return extract_cpp_graph(scan_trees({"": FIXTURE / "csrc"}))


@pytest.fixture(scope="module")
def bundle() -> dict:
    return fixture_bundle("tvm_ffi_mini")


def binds(bundle: dict) -> list[tuple[str, str, str, int]]:
    return sorted((e["source"], e["target"], e["path"], e["line"]) for e in bundle["graph"]["edges"]
                  if e["kind"] == "binds")


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


def test_python_lookups_and_api_modules_bind_to_the_registered_functions(bundle):
    assert binds(bundle) == [
        # a lookup kept in a module variable: the lookup, its calls in the module and from an importer
        ("py:tinyserve.engine", "cpp:tiny::serve::Engine::Abort", "tinyserve/engine.py", 7),
        # the API module's attribute handed to a TVM object's constructor: the line naming it
        ("py:tinyserve.engine.Engine.__init__", "cpp:tiny::serve::CreateEngine", "tinyserve/engine.py", 35),
        # a lookup kept in an attribute of self, and its call in another method of the class
        ("py:tinyserve.engine.Engine.__init__", "cpp:tiny::serve::Reset", "tinyserve/engine.py", 38),
        ("py:tinyserve.engine.Engine.packed", "cpp:tiny::serve::Reset", "tinyserve/engine.py", 41),
        ("py:tinyserve.engine.abort", "cpp:tiny::serve::Engine::Abort", "tinyserve/engine.py", 24),
        # a global Python registers (@tvm.register_func), looked up from Python
        ("py:tinyserve.engine.call_back", "py:tinyserve.engine.callback", "tinyserve/engine.py", 65),
        # tvm.get_global_func(...)(n): looked up and called at once
        ("py:tinyserve.engine.create", "cpp:tiny::serve::CreateEngine", "tinyserve/engine.py", 11),
        # `_ffi_api.X(...)` of a module that ran tvm._ffi._init_api("tiny.serve", __name__)
        ("py:tinyserve.engine.reset", "cpp:tiny::serve::Reset", "tinyserve/engine.py", 28),
        ("py:tinyserve.engine.reset", "cpp:tiny::serve::Reset", "tinyserve/engine.py", 29),
        # tvm.ffi.get_global_func kept in a local, and the local's call
        ("py:tinyserve.engine.step", "cpp:tiny::serve::Engine::Step", "tinyserve/engine.py", 15),
        ("py:tinyserve.engine.step", "cpp:tiny::serve::Engine::Step", "tinyserve/engine.py", 16),
        # `from tvm_ffi import get_global_func`
        ("py:tinyserve.engine.version", "cpp:tiny::serve::Version", "tinyserve/engine.py", 20),
        # `from tvm.ffi import _init_api; _init_api("tvm.tiny.serve", __name__)`: "tvm." dropped;
        # the attribute imported by name
        ("py:tinyserve.legacy.flush.flush_all", "cpp:tiny::serve::Flush", "tinyserve/legacy/flush.py", 5),
        ("py:tinyserve.tok.count.abort_from_elsewhere", "cpp:tiny::serve::Engine::Abort",
         "tinyserve/tok/count.py", 10),
        ("py:tinyserve.tok.count.count", "cpp:tiny::Count", "tinyserve/tok/count.py", 6),
        # tvm_ffi.init_ffi_api("tiny.tok", __name__), reached by `from . import _ffi_api`
        ("py:tinyserve.tok.tokenizer.decode", "cpp:tiny::Decode", "tinyserve/tok/tokenizer.py", 9),
        ("py:tinyserve.tok.tokenizer.encode", "cpp:tiny::Encode", "tinyserve/tok/tokenizer.py", 5),
    ]


def test_names_without_a_registration_are_counted_and_bind_to_nothing(bundle):
    stats = {k: v for k, v in bundle["stats"]["bindings"].items() if k.startswith("tvm_ffi")}
    assert stats == {
        "tvm_ffi_api_modules": 3, "tvm_ffi_bound": 17, "tvm_ffi_lookups": 8, "tvm_ffi_python_globals": 1,
        # vm.builtin.reshape (TVM's own), tiny.serve.Missing, _ffi_api.NotRegistered
        "tvm_ffi_unregistered": 3,
        "tvm_ffi_target_unresolved": 1,  # tiny.tok.Normalize: registered with a function defined elsewhere
    }
    sources = {source for source, *_rest in binds(bundle)}
    for caller in ("engine.elsewhere", "engine.missing", "engine.not_tvm", "tok.tokenizer.normalize",
                   "tok.tokenizer.missing", "spelled.reset"):
        assert f"py:tinyserve.{caller}" not in sources, caller
    # `tiny.serve.Reset(0)` is no module's: the globals are no pybind11-like bindings of a module "tiny"
    assert not [key for key in bundle["stats"]["bindings"] if key.endswith("_calls_bound")]


def test_a_tvm_looking_name_binds_to_nothing_without_its_registration(tmp_path: Path):
    """The same Python beside C++ that registers nothing under the names (its functions defined all
    the same): no edge, every use counted."""
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "engine.cc").write_text(
        "namespace tiny { namespace serve {\nint CreateEngine(int n) { return n; }\nvoid Reset(int x) {}\n}}\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "_ffi_api.py").write_text('import tvm_ffi\n\ntvm_ffi.init_ffi_api("tiny.serve", __name__)\n')
    (tmp_path / "app" / "main.py").write_text(
        "import tvm\nfrom . import _ffi_api\n\n\ndef run():\n"
        '    tvm.get_global_func("tiny.serve.create_engine")(1)\n    _ffi_api.Reset(0)\n')
    bundle = extract_system([str(tmp_path)], options=ExtractOptions(jobs=1, cache_dir=None,
                                                                    probe_structs=False)).bundle
    assert binds(bundle) == []
    stats = bundle["stats"]["bindings"]
    assert (stats["tvm_ffi_unregistered"], stats["tvm_ffi_lookups"], stats["tvm_ffi_api_modules"]) == (2, 1, 1)


def test_the_records_say_the_mechanism_where_the_global_is_registered_and_its_name():
    ctx = scanned_context(FIXTURE, "tinyserve", _LANGUAGES)
    registered = cpp.STEP.extract(ctx).shared.pybind_bindings
    found = _tvm_ffi_bindings(ctx, python.STEP.extract(ctx), registered)
    records = {(b.path, b.line): _global_as_binding(b) for b in found.bindings}
    step = records["tinyserve/engine.py", 16]
    assert (step.callee, step.mechanism, step.registered_at, step.namespace) == (
        "tiny.serve.EngineStep", "tvm-ffi", "csrc/engine.cc:24", "read")
    callback = records["tinyserve/engine.py", 65]
    assert (callback.target, callback.mechanism, callback.registered_at) == (
        "py:tinyserve.engine.callback", "tvm-ffi-python", "tinyserve/engine.py:59")
