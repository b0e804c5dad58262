"""A Python class whose base is a class a pybind11 module binds (chatglm.cpp's
``class Pipeline(_C.Pipeline)`` over ``py::class_<Pipeline>(m, "Pipeline")``) inherits the C++
class: the Python step finds no module there and left the base unresolved, with no edge."""

from __future__ import annotations

from pathlib import Path

from tests.native_support import written_bundle


FILES = {
    "pipeline.h": '''
        #pragma once
        namespace glm {
        class Pipeline { public: explicit Pipeline(int n); int generate(int x); };
        class Tokenizer { public: int encode(int x); };
        Pipeline* make_pipeline(int n);
        }
    ''',
    "pybind.cpp": '''
        #include <pybind11/pybind11.h>
        #include "pipeline.h"
        namespace py = pybind11;
        namespace glm {
        Pipeline::Pipeline(int n) {}
        int Pipeline::generate(int x) { return x; }
        int Tokenizer::encode(int x) { return x; }
        Pipeline* make_pipeline(int n) { return new Pipeline(n); }
        }
        PYBIND11_MODULE(_C, m) {
            py::class_<glm::Pipeline>(m, "Pipeline").def(py::init<int>()).def("generate", &glm::Pipeline::generate);
            py::class_<glm::Tokenizer>(m, "Tokenizer").def("encode", &glm::Tokenizer::encode);
            m.def("make_pipeline", &glm::make_pipeline);
        }
    ''',
    "glm/__init__.py": '''
        import glm._C as _C
        from glm._C import Tokenizer as NativeTokenizer
        from pydantic import BaseModel


        class Pipeline(_C.Pipeline):
            pass


        class Tokenizer(NativeTokenizer):
            pass


        class Settings(BaseModel):
            pass


        class Made(_C.make_pipeline):
            pass
    ''',
}


def test_a_python_class_inherits_the_cpp_class_a_pybind_module_binds_as_its_base(tmp_path: Path):
    bundle = written_bundle(tmp_path, FILES)
    inherits = sorted((e["source"], e["target"], e["path"], e["line"]) for e in bundle["graph"]["edges"]
                      if e["kind"] == "inherits" and e["source"].startswith("py:glm."))
    assert inherits == [
        ("py:glm.Pipeline", "cpp:glm::Pipeline", "glm/__init__.py", 6),
        ("py:glm.Settings", "py:pydantic.BaseModel", "glm/__init__.py", 14),  # as before
        ("py:glm.Tokenizer", "cpp:glm::Tokenizer", "glm/__init__.py", 10),  # imported under another name
    ]  # Made: make_pipeline is a function the module binds, no class
    stats = bundle["stats"]["bindings"]
    assert stats["pybind_bases_bound"] == 2
    assert stats["binds_edges"] == len([e for e in bundle["graph"]["edges"] if e["kind"] == "binds"])
