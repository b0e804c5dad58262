"""C and C++ let a class, struct, union or enum share its name with a function of the same scope
(POSIX's `struct stat` and `stat()`, llama.cpp's `enum llama_vocab_type` and `llama_vocab_type(vocab)`,
ggml's `enum ggml_backend_dev_type` and `ggml_backend_dev_type(dev)`). The function is what the name
names; the type is reached through its elaborated name, which is its node's id (`cpp:struct stat`).
Merged into one node, the function was lost inside the type's, and its calls bound nothing."""

from __future__ import annotations

from pathlib import Path

from extractor.model import EdgeKind, NodeKind
from tests.cpp_support import cpp_graph, edges
from tests.native_support import written_bundle

HEADER = r'''
struct stat { int size; };
int stat(const char *path, struct stat *out);

enum llama_vocab_type { LLAMA_VOCAB_TYPE_NONE, LLAMA_VOCAB_TYPE_SPM };
enum llama_vocab_type llama_vocab_type(const struct llama_vocab *vocab);

struct plain { int x; };
'''

SOURCE = r'''
#include "api.h"

int stat(const char *path, struct stat *out) { out->size = 1; return 0; }

enum llama_vocab_type llama_vocab_type(const struct llama_vocab *vocab) { return LLAMA_VOCAB_TYPE_SPM; }

int use(struct plain *p) {
    struct stat s;
    return stat("x", &s) + (int) llama_vocab_type(0) + p->x;
}
'''

CPP = r'''
namespace io {
class Reader {
public:
    int read(int n) { return n; }
};
int Reader(int fd);
int open(int fd) {
    class Reader r;
    return r.read(fd) + Reader(fd);
}
}
'''


def test_a_type_and_a_function_of_one_name_are_two_nodes(tmp_path: Path):
    graph = cpp_graph(tmp_path, {"api.h": HEADER.lstrip("\n"), "api.c": SOURCE.lstrip("\n")})
    nodes = {n.id: n for n in graph.nodes}
    assert nodes["cpp:stat"].kind is NodeKind.FUNCTION and nodes["cpp:stat"].path == "api.c"
    assert nodes["cpp:struct stat"].kind is NodeKind.STRUCT and nodes["cpp:struct stat"].name == "struct stat"
    assert nodes["cpp:llama_vocab_type"].kind is NodeKind.FUNCTION
    assert nodes["cpp:enum llama_vocab_type"].kind is NodeKind.ENUM
    assert nodes["cpp:plain"].kind is NodeKind.STRUCT  # a type no function shares its name with keeps its id
    calls = edges(graph, EdgeKind.CALLS)
    assert {("cpp:use", "cpp:stat"), ("cpp:use", "cpp:llama_vocab_type")} <= calls
    uses = edges(graph, EdgeKind.USES)
    assert ("cpp:stat", "cpp:struct stat") in uses  # the parameter's type, through its elaborated name
    assert ("cpp:use", "cpp:plain") in uses
    assert ("file:api.h", "cpp:struct stat") in edges(graph, EdgeKind.CONTAINS)


def test_members_of_a_class_a_function_shares_its_name_with(tmp_path: Path):
    graph = cpp_graph(tmp_path, {"reader.cpp": CPP.lstrip("\n")})
    nodes = {n.id: n for n in graph.nodes}
    assert nodes["cpp:class io::Reader"].kind is NodeKind.CLASS and nodes["cpp:class io::Reader"].name == "class Reader"
    assert nodes["cpp:io::Reader"].kind is NodeKind.FUNCTION
    assert ("cpp:class io::Reader", "cpp:io::Reader::read") in edges(graph, EdgeKind.CONTAINS)
    calls = edges(graph, EdgeKind.CALLS)
    assert {("cpp:io::open", "cpp:io::Reader"), ("cpp:io::open", "cpp:io::Reader::read")} <= calls


def test_ctypes_binds_the_function_and_the_structure_of_one_name(tmp_path: Path):
    # llama-cpp-python calls `llama_vocab_type` through ctypes; its node was the enum's, and the call
    # was said "shadowed" and bound nothing
    files = {
        "llama.h": '''
            #pragma once
            #ifdef __cplusplus
            extern "C" {
            #endif
            enum llama_vocab_type { LLAMA_VOCAB_TYPE_NONE, LLAMA_VOCAB_TYPE_SPM };
            struct llama_stat { int size; };
            enum llama_vocab_type llama_vocab_type(const struct llama_vocab *vocab);
            int llama_stat(struct llama_stat *out);
            #ifdef __cplusplus
            }
            #endif
        ''',
        "llama.cpp": '''
            #include "llama.h"
            enum llama_vocab_type llama_vocab_type(const struct llama_vocab *vocab) { return LLAMA_VOCAB_TYPE_SPM; }
            int llama_stat(struct llama_stat *out) { return out->size; }
        ''',
        "llama_cpp/__init__.py": "",
        "llama_cpp/native.py": '''
            import ctypes

            lib = ctypes.CDLL("./libllama.so")


            class llama_stat(ctypes.Structure):
                _fields_ = [("size", ctypes.c_int)]


            def vocab_type(vocab):
                return lib.llama_vocab_type(vocab) + lib.llama_stat(ctypes.byref(llama_stat()))
        ''',
    }
    bundle = written_bundle(tmp_path, files)
    binds = sorted((e["source"], e["target"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds")
    assert binds == [("py:llama_cpp.native.llama_stat", "cpp:struct llama_stat"),
                     ("py:llama_cpp.native.vocab_type", "cpp:llama_stat"),
                     ("py:llama_cpp.native.vocab_type", "cpp:llama_vocab_type")]
