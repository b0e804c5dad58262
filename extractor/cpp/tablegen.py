"""Headers that TableGen generates at build time, said where C++ includes them.

An MLIR or LLVM project declares its dialects' operations, types, attributes and passes in
TableGen (`.td`) files; the build turns each into C++ that the project's own sources include
(`#define GET_OP_CLASSES` then `#include "triton/Dialect/Triton/IR/Ops.h.inc"`). archdiff reads no
TableGen, and the generated file is no file of the tree, so what it declares is missing from the
graph. The CMake rules say which `.td` file each output comes from:

    set(LLVM_TARGET_DEFINITIONS TritonOps.td)
    mlir_tablegen(Ops.h.inc -gen-op-decls)      # MLIR's helper: the output first
    tablegen(LLVM X86GenInstrInfo.inc -gen-instr-info)  # LLVM's: a project, then the output

Each output is placed in its CMake file's directory (the build mirrors the source tree there) and an
include that resolves to one, as headers do, is said: the file, the line, the output and the `.td`
it comes from (Triton: 94 includes in 42 files, 28 `.td` files)."""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Iterable

from extractor.cpp.includes import IncludeResolver

_DEFINITIONS = re.compile(r"set\s*\(\s*LLVM_TARGET_DEFINITIONS\s+([^\s)]+)\s*\)", re.IGNORECASE)
_MLIR_TABLEGEN = re.compile(r"\bmlir_tablegen\s*\(\s*([^\s)]+)", re.IGNORECASE)
_TABLEGEN = re.compile(r"(?<![\w-])tablegen\s*\(\s*\w+\s+([^\s)]+)", re.IGNORECASE)
_SOURCE_DIR = re.compile(r"\$\{(?:CMAKE_CURRENT_SOURCE_DIR|CMAKE_CURRENT_LIST_DIR)\}/")


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class TableGenOutput:
    """One file a CMake rule makes TableGen generate: where the build puts it (the CMake file's
    directory), the `.td` file it comes from (as the tree holds it; as written when the path is
    computed), and the rule's place."""

    path: str  # `include/triton/Dialect/Triton/IR/Ops.h.inc`
    definitions: str  # `include/triton/Dialect/Triton/IR/TritonOps.td`
    cmake: str  # `include/triton/Dialect/Triton/IR/CMakeLists.txt`
    line: int


def tablegen_outputs(cmake_files: Iterable[tuple[str, str]]) -> list[TableGenOutput]:
    """The outputs the CMake files' `mlir_tablegen`/`tablegen` rules declare, each with the
    `LLVM_TARGET_DEFINITIONS` set before it in the same file (an output with none is left out)."""
    found = []
    for where, text in cmake_files:
        if "tablegen" not in text.lower():
            continue
        directory = posixpath.dirname(where)
        definitions = ""
        for number, line in enumerate(text.splitlines(), start=1):
            code = line.split("#", 1)[0]
            m = _DEFINITIONS.search(code)
            if m is not None:
                written = _SOURCE_DIR.sub("", m.group(1).strip('"'))
                definitions = written if "$" in written else posixpath.normpath(posixpath.join(directory, written))
            out = _MLIR_TABLEGEN.search(code) or _TABLEGEN.search(code)
            if out is not None and definitions and "$" not in out.group(1):
                found.append(TableGenOutput(posixpath.normpath(posixpath.join(directory, out.group(1).strip('"'))),
                                            definitions, where, number))
    return sorted(set(found))


class TableGenIndex:
    """The outputs, looked up by an include target as a header would be (the includer's directory
    first, then the nearest by path suffix)."""

    def __init__(self, outputs: Iterable[TableGenOutput]) -> None:
        self.by_path: dict[str, TableGenOutput] = {}
        for out in sorted(outputs):
            self.by_path.setdefault(out.path, out)  # two rules making one file: the first by place
        self.resolver = IncludeResolver(sorted(self.by_path))

    def resolve(self, includer: str, target: str) -> TableGenOutput | None:
        hit = self.resolver.resolve(includer, target) if self.by_path else ""
        return self.by_path.get(hit) if hit else None
