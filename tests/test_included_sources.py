"""Source fragments a translation unit includes (`.inc`, `.ipp`, `.tcc`) are C/C++ files of the
system: rwkv.cpp defines the functions its header declares for ctypes in `rwkv_*.inc` files, which
were not listed at all (no node, no diagnostic; the Python calls counted as outside)."""

from __future__ import annotations

from pathlib import Path

from tests.native_support import written_bundle


FILES = {
    "lib.h": '''
        #pragma once
        #ifdef __cplusplus
        extern "C" {
        #endif
        bool lib_eval(int n);
        int lib_size(void);
        #ifdef __cplusplus
        }
        #endif
    ''',
    "lib.cpp": '''
        #include "lib.h"
        #include "lib_eval.inc"
        #include "lib_size.ipp"
    ''',
    "lib_eval.inc": '''
        bool lib_eval(int n) { return n > 0; }
    ''',
    "lib_size.ipp": '''
        int lib_size(void) { return 4; }
    ''',
    "py/native.py": '''
        import ctypes

        lib = ctypes.CDLL("liblib.so")


        def run(n):
            return lib.lib_eval(n) and lib.lib_size()
    ''',
}


def test_included_fragments_are_read_and_their_functions_bound(tmp_path: Path):
    bundle = written_bundle(tmp_path, FILES)
    nodes = {n["id"]: n for n in bundle["graph"]["nodes"]}
    assert (nodes["cpp:lib_eval"]["path"], nodes["cpp:lib_size"]["path"]) == ("lib_eval.inc", "lib_size.ipp")
    includes = {(e["source"], e["target"]) for e in bundle["graph"]["edges"] if e["kind"] == "includes"}
    assert ("file:lib.cpp", "file:lib_eval.inc") in includes
    binds = sorted((e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds")
    assert binds == [("cpp:lib_eval", 7), ("cpp:lib_size", 7)]
