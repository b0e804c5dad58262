"""ctypes Structure classes: the Python mirror of a C struct of the same name binds to it
(koboldcpp's `class load_model_inputs(ctypes.Structure)` for expose.h's `struct load_model_inputs`,
handed to the library's `load_model`)."""

from __future__ import annotations

from pathlib import Path

from tests.native_support import written_bundle


FILES = {
    "expose.h": '''
        #pragma once
        struct load_model_inputs {
            const int threads;
            const char* model_filename;
        };
        typedef union number { int i; float f; } number;
        namespace detail { struct opaque_state { int x; }; }
        struct star_info { int a; };
        namespace a { struct twice { int x; }; }
        namespace b { struct twice { int y; }; }
        extern "C" bool load_model(const load_model_inputs inputs);
    ''',
    "expose.cpp": '''
        #include "expose.h"
        extern "C" bool load_model(const load_model_inputs inputs) { return inputs.threads > 0; }
    ''',
    "runner/__init__.py": "",
    "runner/star.py": '''
        from ctypes import *


        class star_info(Structure):
            _fields_ = [("a", c_int)]
    ''',
    "runner/native.py": '''
        import ctypes
        from ctypes import Structure, Union


        class load_model_inputs(ctypes.Structure):
            _fields_ = [("threads", ctypes.c_int), ("model_filename", ctypes.c_char_p)]


        class number(Union):
            _fields_ = [("i", ctypes.c_int), ("f", ctypes.c_float)]


        class opaque_state(Structure):
            pass


        class twice(Structure):
            pass


        class Base(ctypes.Structure):
            pass


        class settings(Base):
            _fields_ = [("level", ctypes.c_int)]


        class Plain:
            pass


        handle = ctypes.CDLL("./koboldcpp.so")
        handle.load_model.argtypes = [load_model_inputs]
    ''',
}


def _bundle(root: Path) -> dict:
    return written_bundle(root, FILES)


def test_structure_classes_bind_to_the_structs_of_their_names(tmp_path: Path):
    bundle = _bundle(tmp_path)
    binds = sorted((e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds")
    assert binds == [
        ("py:runner.native", "cpp:load_model", 34),  # the library's function, as before
        ("py:runner.native.load_model_inputs", "cpp:load_model_inputs", 5),
        ("py:runner.native.number", "cpp:number", 9),  # a Union, imported bare
        ("py:runner.native.opaque_state", "cpp:detail::opaque_state", 13),  # the only one of its name
        ("py:runner.star.star_info", "cpp:star_info", 4),  # `from ctypes import *`
    ]  # twice: two of its name; settings: none of its name; Plain: no ctypes base; Base: a base
    # without fields (pynvml's _PrintableStructure) mirrors nothing
    stats = bundle["stats"]["bindings"]
    assert (stats["ctypes_structures_bound"], stats["ctypes_structures_ambiguous"],
            stats["ctypes_structures_outside"]) == (4, 1, 1)
    [said] = [d for d in bundle["diagnostics"] if d["code"] == "ctypes-ambiguous"]
    assert (said["path"], said["line"]) == ("runner/native.py", 17) and "twice" in said["message"]
    assert "ctypes_functions_outside" not in stats  # a struct is no function of a library
