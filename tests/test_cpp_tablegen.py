"""Includes of C++ that TableGen generates at build time (MLIR dialects: Triton's `Ops.h.inc`) are
said, with the `.td` file each comes from; the `.td` files themselves are a language not read."""

from __future__ import annotations

from extractor.context import ExtractOptions
from extractor.cpp.tablegen import TableGenOutput, tablegen_outputs
from extractor.run.pipeline import extract_system

DIALECT = {
    "include/toy/IR/CMakeLists.txt": """set(LLVM_TARGET_DEFINITIONS ToyOps.td)
mlir_tablegen(Ops.h.inc -gen-op-decls)
mlir_tablegen(Ops.cpp.inc -gen-op-defs)
# mlir_tablegen(Old.h.inc -gen-op-decls)
set(LLVM_TARGET_DEFINITIONS ${CMAKE_CURRENT_SOURCE_DIR}/ToyDialect.td)
mlir_tablegen(Dialect.h.inc -gen-dialect-decls)
add_public_tablegen_target(ToyTableGen)
""",
    "include/toy/IR/ToyOps.td": "def Toy_AddOp : Toy_Op<\"add\"> {}\n",
    "include/toy/IR/ToyDialect.td": "def Toy_Dialect : Dialect {}\n",
    "include/toy/IR/Dialect.h": """#pragma once
#include "toy/IR/Dialect.h.inc"
#define GET_OP_CLASSES
#include "toy/IR/Ops.h.inc"
#include "toy/IR/Missing.h.inc"
namespace toy { int fold(int x); }
""",
    "lib/Target/CMakeLists.txt": ("set(LLVM_TARGET_DEFINITIONS Toy.td)\n"
                                  "tablegen(LLVM ToyGenInstrInfo.inc -gen-instr-info)\n"),
    "lib/Target/Toy.td": "include \"llvm/Target/Target.td\"\n",
    "lib/Target/InstrInfo.cpp": '#include "ToyGenInstrInfo.inc"\nint info() { return 0; }\n',
}


def test_the_cmake_rules_say_what_each_output_is_generated_from():
    assert tablegen_outputs(DIALECT_CMAKE) == [
        TableGenOutput("include/toy/IR/Dialect.h.inc", "include/toy/IR/ToyDialect.td",
                       "include/toy/IR/CMakeLists.txt", 6),
        TableGenOutput("include/toy/IR/Ops.cpp.inc", "include/toy/IR/ToyOps.td", "include/toy/IR/CMakeLists.txt", 3),
        TableGenOutput("include/toy/IR/Ops.h.inc", "include/toy/IR/ToyOps.td", "include/toy/IR/CMakeLists.txt", 2),
        TableGenOutput("lib/Target/ToyGenInstrInfo.inc", "lib/Target/Toy.td", "lib/Target/CMakeLists.txt", 2)]


DIALECT_CMAKE = [(path, text) for path, text in sorted(DIALECT.items()) if path.endswith("CMakeLists.txt")]


def test_includes_of_tablegen_outputs_are_said_with_their_td_file(tmp_path):
    for rel, code in DIALECT.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code)
    bundle = extract_system([str(tmp_path)], options=ExtractOptions(jobs=1, cache_dir=None,
                                                                    probe_structs=False)).bundle
    said = {(d["path"], d["line"]): d["message"] for d in bundle["diagnostics"] if d["code"] == "tablegen-generated"}
    assert set(said) == {("include/toy/IR/Dialect.h", 2), ("lib/Target/InstrInfo.cpp", 1)}
    message = said["include/toy/IR/Dialect.h", 2]
    assert "Dialect.h.inc (line 2) from include/toy/IR/ToyDialect.td (include/toy/IR/CMakeLists.txt:6)" in message
    assert "Ops.h.inc (line 4) from include/toy/IR/ToyOps.td (include/toy/IR/CMakeLists.txt:2)" in message
    assert "Missing.h.inc" not in message  # no rule makes it: an unresolved include, as before
    cpp = bundle["stats"]["cpp"]
    assert (cpp["includes_tablegen_generated"], cpp["includes_unresolved_quoted"]) == (3, 1)
    [unread] = [d for d in bundle["diagnostics"] if d["code"] == "language-not-read"]
    assert unread["message"].startswith("3 TableGen files not read")
