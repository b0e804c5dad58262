"""pybind11's stl_bind (`py::bind_map<Map, Holder>(m, "Name")`, `py::bind_vector<Vec>(m, "Name")`)
and nanobind's `nb::bind_vector`/`nb::bind_map` make a Python class of their first template argument,
as `py::class_` does (lmdeploy's `py::bind_map<TensorMap, std::shared_ptr<TensorMap>>(m,
"TensorMap")`). The mini-repo is written here."""

from __future__ import annotations

import pytest

from tests.native_support import written_bundle

FILES = {
    "src/core/tensor.h": """
        #pragma once
        #include <string>
        #include <unordered_map>
        #include <vector>
        namespace mini::core {
        struct Tensor {};
        class TensorMap : public std::unordered_map<std::string, Tensor> {};
        class Shapes : public std::vector<int> {};
        }  // namespace mini::core
        """,
    "src/python/bind.cpp": """
        #include <pybind11/pybind11.h>
        #include <pybind11/stl_bind.h>
        #include "../core/tensor.h"
        namespace py = pybind11;
        using TensorMap = mini::core::TensorMap;
        PYBIND11_MAKE_OPAQUE(TensorMap);

        PYBIND11_MODULE(_mini, m) {
            py::bind_map<TensorMap, std::shared_ptr<TensorMap>>(m, "TensorMap");
            py::bind_vector<mini::core::Shapes>(m, "Shapes")
                .def("total", [](const mini::core::Shapes& s) { return 0; });
            // a standard container: no class of the system's, nothing bound
            py::bind_vector<std::vector<int>>(m, "IntVector");
        }
        """,
    "pkg/__init__.py": "",
    "pkg/run.py": """
        import _mini


        def inputs():
            shapes = _mini.Shapes()
            ints = _mini.IntVector()
            return _mini.TensorMap(), shapes, ints
        """,
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("pybind_stl_bind")
    return written_bundle(root / "src", FILES)


def test_stl_bind_classes_bind_to_their_cpp_type(bundle):
    binds = sorted((e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds")
    assert binds == [("py:pkg.run.inputs", "cpp:mini::core::Shapes", 5),
                     ("py:pkg.run.inputs", "cpp:mini::core::TensorMap", 7)]
