"""Tree-sitter captures in document order: the per-file facts of C/C++/CUDA, Rust and Go are the
same bytes from one parse of a file to the next (py-tree-sitter's ``QueryCursor.captures`` lists a
capture's nodes in an order that changes between parses of the same bytes)."""

from __future__ import annotations

from typing import Any

import msgspec

from extractor.cpp.facts import CppFacts
from extractor.cpp.parse import capture_nodes, parse_raw
from extractor.go.parse import capture_nodes as go_captures, parse_source as parse_go
from extractor.model import Language
from extractor.run import scan
from extractor.run.facts import decode_result
from extractor.rust.parse import capture_nodes as rust_captures, parse_source as parse_rust
from extractor.steps import STEPS


def _cpp_source(functions: int) -> bytes:
    """A C++ file of many small functions whose calls nest (``f(g(h(x)))``, ``f(x)(y)``: two calls
    that start at one byte) and read strings."""
    parts = ['#include <string>\n#include "util.h"\nnamespace demo {\n']
    for i in range(functions):
        parts.append(f"int helper_{i}(int x) {{ return x + {i}; }}\n"
                     f"std::string run_{i}(int y) {{\n"
                     f"  int z = helper_{i}(helper_{i}(y));\n"
                     f'  log_line("run_{i}", z);\n'
                     f"  chain(z)(y);\n"
                     f"  return std::to_string(z);\n}}\n")
    parts.append("}  // namespace demo\n")
    return "".join(parts).encode()


def _preorder(node: Any, kinds: set[str]) -> list[tuple[int, int, str]]:
    """(start, end, type) of the nodes of ``kinds`` under ``node``, in a pre-order walk."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if current.type in kinds:
            found.append((current.start_byte, current.end_byte, current.type))
        stack.extend(reversed(current.children))
    return found


def _spans(nodes: list[Any]) -> list[tuple[int, int, str]]:
    return [(node.start_byte, node.end_byte, node.type) for node in nodes]


def test_cpp_captures_come_in_the_order_a_walk_of_the_tree_meets_them():
    data = _cpp_source(60)
    for _ in range(4):  # every parse: the disorder differed from one parse to the next
        root = parse_raw(data, Language.CPP).root_node
        found = capture_nodes(root, Language.CPP, "(call_expression) @call (string_literal) @text")
        assert _spans(found["call"]) == _preorder(root, {"call_expression"})
        assert _spans(found["text"]) == _preorder(root, {"string_literal"})
        assert len(found["call"]) == 60 * 6  # helper twice, log_line, chain twice, std::to_string


def test_nodes_of_one_span_come_outer_first():
    """``int x;`` alone: the translation unit and its declaration share one span; the walk meets
    the enclosing node first, and so must the capture list."""
    root = parse_raw(b"int x;", Language.CPP).root_node
    assert (root.start_byte, root.end_byte) == (root.children[0].start_byte, root.children[0].end_byte)
    for _ in range(4):
        found = capture_nodes(root, Language.CPP, "(_) @node")
        assert _spans(found["node"]) == _preorder(root, {"translation_unit", "declaration", "primitive_type",
                                                         "identifier"})


def test_rust_and_go_captures_come_in_document_order():
    rust = "".join(f"fn f{i}() {{ g(h({i})); k(); }}\n" for i in range(80)).encode()
    go = ("package p\n" + "".join(f"func f{i}() {{ g(h({i})); k() }}\n" for i in range(80))).encode()
    for _ in range(3):
        root = parse_rust(rust).root_node
        assert _spans(rust_captures(root, "(call_expression) @c")["c"]) == _preorder(root, {"call_expression"})
        root = parse_go(go).root_node
        assert _spans(go_captures(root, "(call_expression) @c")["c"]) == _preorder(root, {"call_expression"})


def _cuda_source(kernels: int) -> bytes:
    """Kernels handed to a launcher (``launch(reduce_3<float>, ...)``, ``launch(&reduce_3, ...)``):
    facts kept in the order the captures came (a function's kernel arguments)."""
    parts = [f"template <typename T> __global__ void reduce_{i}(T* x) {{ x[0] = {i}; }}\n" for i in range(kernels)]
    parts.append("void launch_all(float* x) {\n")
    parts += [f"  kernel_launch(reduce_{i}<float>, x, {i});\n  kernel_launch(&reduce_{i}, x, 0);\n"
              for i in range(kernels)]
    parts.append("}\n")
    return "".join(parts).encode()


def test_a_files_facts_are_the_same_bytes_from_one_parse_to_the_next():
    """The disorder follows the process's memory: the same file scanned again after other files
    (as a worker does) gave its kernel arguments in another order."""
    scan._init_worker(tuple(STEPS))
    cuda = _cuda_source(30)
    results = set()
    for round in range(6):
        results.add(scan.scan_file("cuda", cuda))
        for size in range(round * 7 + 1):  # other files in between, of other sizes
            scan.scan_file("cpp", _cpp_source(size))
    assert len(results) == 1
    facts = msgspec.msgpack.decode(bytes(decode_result(results.pop()).facts["cpp"]), type=CppFacts)
    assert len(facts.kernel_args) == 60
