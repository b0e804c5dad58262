"""Source fragments a translation unit includes (`.inc`, `.ipp`, `.tcc`) are C/C++ files of the
system: rwkv.cpp defines the functions its header declares for ctypes in `rwkv_*.inc` files, which
were not listed at all (no node, no diagnostic; the Python calls counted as outside)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system

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
    for rel, text in FILES.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    bundle = extract_system([str(tmp_path)], options=ExtractOptions(jobs=1, cache_dir=None,
                                                                    probe_structs=False)).bundle
    nodes = {n["id"]: n for n in bundle["graph"]["nodes"]}
    assert (nodes["cpp:lib_eval"]["path"], nodes["cpp:lib_size"]["path"]) == ("lib_eval.inc", "lib_size.ipp")
    includes = {(e["source"], e["target"]) for e in bundle["graph"]["edges"] if e["kind"] == "includes"}
    assert ("file:lib.cpp", "file:lib_eval.inc") in includes
    binds = sorted((e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds")
    assert binds == [("cpp:lib_eval", 7), ("cpp:lib_size", 7)]
