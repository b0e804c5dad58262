"""ctypes (and cffi's ``dlopen``): Python calls of a loaded library's functions bound by C name to
the system's C/C++ functions (fixtures/ctypes_lib: the idioms of bitsandbytes, llama-cpp-python
and vLLM's CUDA wrappers, written small), and the C linkage the C++ step reads for it."""

from __future__ import annotations

from pathlib import Path

from tests.cpp_support import cpp_graph


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
