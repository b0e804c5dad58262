"""ctypes (and cffi's ``dlopen``): Python calls of a loaded library's functions bound by C name to
the system's C/C++ functions (fixtures/ctypes_lib: the idioms of bitsandbytes, llama-cpp-python
and vLLM's CUDA wrappers, written small), and the C linkage the C++ step reads for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from extractor import cpp, python
from extractor.bindings.python_cpp import _as_binding, _ctypes_bindings
from extractor.bindings.python_ctypes import CtypesBinding
from extractor.model import Language

from tests.conftest import FIXTURES
from tests.cpp_support import cpp_graph
from tests.native_support import fixture_bundle, scanned_context

FIXTURE = FIXTURES / "ctypes_lib"
_LANGUAGES = {".py": Language.PYTHON, ".c": Language.CPP, ".cpp": Language.CPP, ".h": Language.CPP}


@pytest.fixture(scope="module")
def bundle() -> dict:
    return fixture_bundle("ctypes_lib")


@pytest.fixture(scope="module")
def records() -> dict[tuple[str, int, str], CtypesBinding]:
    """The step's binding records, by (path, line, form): the Python and C++ steps run on the
    fixture in this process, then the bindings step's ctypes part."""
    ctx = scanned_context(FIXTURE, "vecops", _LANGUAGES)
    found = _ctypes_bindings(ctx, python.STEP.extract(ctx), cpp.STEP.extract(ctx))
    return {(b.path, b.line, b.form): b for b in found.bindings}


def test_the_cpp_step_reads_c_linkage_and_leaves_the_nodes_as_they_were(tmp_path: Path):
    graph = cpp_graph(tmp_path, {
        "api.h": '#ifdef __cplusplus\nextern "C" {\n#endif\nint api_open(int flags);\n'
                 '#ifdef __cplusplus\n}\n#endif\n',
        "api.cpp": '#include "api.h"\n'
                   'int api_open(int flags) { return flags; }\n'  # C linkage from the header's declaration
                   'extern "C" void api_close(void) {}\n'
                   'namespace impl { extern "C" int api_poll(void) { return 0; } }\n'
                   'void helper(int) {}\n'  # C++ linkage
                   'static int only_here(void) { return 1; }\n'
                   'static int twice(int) { return 0; }\n'
                   'int twice(void) { return 1; }\n'  # one of its definitions has a symbol
                   'extern "C++" { void cxx_only(); }\n',
        "legacy.c": "int c_sum(int a, int b) { return a + b; }\nstatic int c_hidden(void) { return 0; }\n",
    })
    assert graph.shared.c_linkage == {"cpp:api_open", "cpp:api_close", "cpp:impl::api_poll", "cpp:c_sum"}
    assert graph.shared.internal == {"cpp:only_here", "cpp:c_hidden"}
    assert not any("c-linkage" in n.tags for n in graph.nodes)  # said in the shared set, not on the node


def test_calls_declarations_and_decorated_stubs_bind_to_the_c_functions(bundle):
    binds = sorted((e["source"], e["target"], e["path"], e["line"]) for e in bundle["graph"]["edges"]
                   if e["kind"] == "binds")
    assert binds == [
        ("py:vecops.abi.abi_version", "cpp:vecops_version", "vecops/abi.py", 11),  # cffi's dlopen
        ("py:vecops.api", "cpp:vec_add", "vecops/api.py", 10),  # `_lib.vec_add.argtypes = ...`, module variable
        ("py:vecops.api", "cpp:vec_add", "vecops/api.py", 11),  # `.restype`
        ("py:vecops.api.add", "cpp:vec_add", "vecops/api.py", 22),
        ("py:vecops.api.vec_dot", "cpp:vec_dot", "vecops/api.py", 16),  # the stub the decorator replaces
        ("py:vecops.api.version", "cpp:vecops_version", "vecops/api.py", 26),
        ("py:vecops.fast.dot", "cpp:vec_dot", "vecops/fast.py", 8),  # through the wrapper's __getattr__
        ("py:vecops.lazy.version", "cpp:vecops_version", "vecops/lazy.py", 20),  # `_function("vecops_version")`
        ("py:vecops.native.describe", "cpp:vecops_version", "vecops/native.py", 26),  # a parameter `lib: ctypes.CDLL`
        ("py:vecops.native.describe", "cpp:vecops_version", "vecops/native.py", 27),
        ("py:vecops.ring.Ring.checksum", "cpp:checksum", "vecops/ring.py", 17),  # defined in a C file
        ("py:vecops.ring.Ring.push", "cpp:ring_push", "vecops/ring.py", 14),  # not the static namesake
        ("py:vecops.ring.Ring.scale", "cpp:scale_inplace", "vecops/ring.py", 20),  # linkage assumed
        ("py:vecops.session.Client.version", "cpp:vecops_version", "vecops/session.py", 22),  # tuple, typed param
    ]


def test_outside_and_ambiguous_functions_are_counted_never_bound(bundle):
    stats = {k: v for k, v in bundle["stats"]["bindings"].items() if k.startswith(("ctypes_", "cffi_"))}
    assert stats == {
        "cffi_calls_bound": 2, "cffi_libraries_loaded": 2, "cffi_libraries_named": 1, "cffi_library_inferred": 1,
        "ctypes_calls_bound": 7, "ctypes_names_bound": 5,
        "ctypes_calls_ambiguous": 1,  # reset_stats: two backends export it
        # the CUDA runtime's: a call, and the two functions of its table
        "ctypes_calls_outside": 1, "ctypes_names_outside": 2, "ctypes_functions_outside": 2,
        # "libvecops.so" twice, find_library("cudart"); the loader helper's path is computed
        "ctypes_libraries_loaded": 4, "ctypes_libraries_named": 3,
        "ctypes_linkage_assumed": 1,  # scale_inplace: no extern "C" seen
        "ctypes_library_inferred": 10,  # the bound places whose load computes the library's path
    }
    assert ["vecops/ring.py", 23, "ctypes-ambiguous"] in [[d["path"], d["line"], d["code"]]
                                                           for d in bundle["diagnostics"]]


def test_the_records_say_the_mechanism_where_the_library_was_loaded_and_that_it_was_inferred(records):
    push = records["vecops/ring.py", 14, "call"]
    assert (push.mechanism, push.loaded_at, push.library, push.linkage) == ("ctypes", "vecops/_loader.py:11", "", "c")
    assert _as_binding(push).namespace == "inferred"  # the C name, not the library file, decides
    wrapped = records["vecops/fast.py", 8, "call"]
    assert (wrapped.loaded_at, wrapped.library) == ("vecops/native.py:17", "libvecops.so")
    entry = records["vecops/cuda.py", 16, "table"]
    assert (entry.caller, entry.name, entry.target, entry.candidates) == \
        ("py:vecops.cuda.CudaRuntime", "cudaDeviceSynchronize", "", 0)
    assert records["vecops/ring.py", 23, "call"].candidates == 2
    assert records["vecops/api.py", 16, "decorator"].callee == "vec_dot"
    # the wrapper's own attribute is no C function
    assert not any(b.name == "compiled_with_simd" for b in records.values())
