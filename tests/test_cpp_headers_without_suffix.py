"""C/C++ headers whose names have no suffix are read, found by their first line of code.

Eigen (vendored by TensorFlow, PaddlePaddle, FastDeploy and many more) names its public headers
`Eigen/Core`, `Eigen/Dense`: `Eigen/Core` includes the library's macros first and then every file of it,
which include nothing themselves. Unread, no file of Eigen saw `EIGEN_STRONG_INLINE` or
`EIGEN_DEVICE_FUNC` as the attribute macros they are: an ERROR node at each use (140 files of
FastDeploy's copy), and functions named with their return type joined to them (`Packet4fpadd`). A
file with no suffix is a header when its first lines after its comments are an include guard, `#pragma
once` or an `#include`, written as code writes them: no shell script, Makefile, licence or note."""

from __future__ import annotations

from pathlib import Path

from extractor.acquire.inventory import SNIFFED_BYTES, list_files, list_unpacked
from extractor.context import SourceTree
from extractor.model import Language

from tests.cpp_support import cpp_graph

FILES = {
    "mathlib/Core": ("// This file is part of mathlib, a small linear algebra library.\n"
                     "/* Its public header: the macros first, then the library. */\n"
                     "#ifndef MATHLIB_CORE_H\n#define MATHLIB_CORE_H\n"
                     '#include "src/util/Macros.h"\n#include "src/Core/Packet.h"\n#endif\n'),
    "mathlib/src/util/Macros.h": ("#pragma once\n#if defined(_MSC_VER)\n#define ML_STRONG_INLINE __forceinline\n"
                                  "#else\n#define ML_STRONG_INLINE inline\n#endif\n"
                                  "#if defined(__CUDACC__)\n#define ML_DEVICE_FUNC __host__ __device__\n"
                                  "#else\n#define ML_DEVICE_FUNC\n#endif\n"),
    "mathlib/src/Core/Packet.h": ("namespace mathlib {\nnamespace internal {\n"
                                  "template <typename Packet>\n"
                                  "ML_DEVICE_FUNC ML_STRONG_INLINE Packet padd(const Packet& a, const Packet& b) {\n"
                                  "  return add_impl(a, b);\n}\n"
                                  "template <>\nML_STRONG_INLINE Packet4f padd<Packet4f>(const Packet4f& a, "
                                  "const Packet4f& b) {\n  return vaddq_f32(a, b);\n}\n"
                                  "}  // namespace internal\n}  // namespace mathlib\n"),
    "LICENSE": "Mozilla Public License Version 2.0\n",
    "scripts/build": "#!/bin/sh\n# include the flags\nmake\n",
    "scripts/Makefile": "# include the flags\n#include <x.h> is how a test includes\nall:\n\tcc -o x x.c\n",
    "docs/notes": "#define is how a macro is made\n#ifndef is its test\n",
    "docs/guarded": "#ifndef NOTE_H\n# define the note\n",
}


def _write(root: Path) -> None:
    for rel, code in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(code)


def test_a_header_named_without_a_suffix_is_read_as_cpp_and_nothing_else_is(tmp_path):
    _write(tmp_path)
    entries, _ = list_files(SourceTree("", str(tmp_path), "dir", tmp_path))
    assert {(e.rel, e.language) for e in entries} == {
        ("mathlib/Core", Language.CPP), ("mathlib/src/util/Macros.h", Language.CPP),
        ("mathlib/src/Core/Packet.h", Language.CPP)}
    # an archive streamed while it is unpacked lists the same files, from the heads of its members
    sizes = {rel: len(code.encode()) for rel, code in FILES.items()}
    heads = {rel: code.encode()[:SNIFFED_BYTES] for rel, code in FILES.items()}
    assert list_unpacked(SourceTree("", "x.tar.gz", "archive", tmp_path), sizes, heads.__getitem__)[0] == entries


def test_the_files_it_includes_see_its_macros(tmp_path):
    graph = cpp_graph(tmp_path, {rel: code for rel, code in FILES.items() if rel.startswith("mathlib/")})
    assert not {d.path for d in graph.diagnostics if d.code == "parse-errors"}
    functions = {n.id: n for n in graph.nodes if n.kind.value == "function"}
    assert set(functions) == {"cpp:mathlib::internal::padd"}
    assert len(functions["cpp:mathlib::internal::padd"].overloads) == 2  # the template and its specialisation
