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


REEXPORTED = {
    # rtp-llm's shape: top-level extension modules, re-exported by the package's `ops` by name and by
    # a star import; the classes that extend their classes import them from there
    "csrc/config.cpp": '''
        #include <pybind11/pybind11.h>
        namespace py = pybind11;
        namespace eng {
        struct ModelConfig { int layers = 0; };
        struct ParamsBase { int size = 0; };
        }
        PYBIND11_MODULE(libeng_config, m) {
            py::class_<eng::ModelConfig>(m, "ModelConfig").def(py::init<>());
        }
        PYBIND11_MODULE(libeng_ops, m) {
            py::class_<eng::ParamsBase>(m, "ParamsBase").def(py::init<>());
        }
    ''',
    "eng/__init__.py": "",
    "eng/ops/__init__.py": "from libeng_config import ModelConfig\n",
    "eng/ops/compute.py": "from libeng_ops import *\n",
    "eng/config.py": '''
        from eng.ops import ModelConfig as CppModelConfig


        class ModelConfig(CppModelConfig):
            pass
    ''',
    "eng/attention.py": '''
        from eng.ops.compute import ParamsBase


        class FMHAParams(ParamsBase):
            pass
    ''',
}


def test_a_base_re_exported_by_a_module_of_the_system_is_the_cpp_class_too(tmp_path: Path):
    bundle = written_bundle(tmp_path, REEXPORTED)
    inherits = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "inherits"}
    assert ("py:eng.config.ModelConfig", "cpp:eng::ModelConfig", 4) in inherits
    assert ("py:eng.attention.FMHAParams", "cpp:eng::ParamsBase", 4) in inherits
    assert bundle["stats"]["bindings"]["pybind_bases_bound"] == 2
