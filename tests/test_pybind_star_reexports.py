"""A Python module that star-imports a pybind11 extension module and its submodule re-exports the
names they register (rtp-llm's `rtp_llm/ops/compute_ops.py`: `from librtp_compute_ops import *`,
`from librtp_compute_ops.rtp_llm_ops import *`, then `compute_ops.per_tensor_quant_fp8(...)`
elsewhere). The mini-repo is written here."""

from __future__ import annotations

import pytest

from tests.native_support import written_bundle

FILES = {
    "csrc/ops.cc": """
        #include <pybind11/pybind11.h>
        namespace py = pybind11;
        namespace mini {
        void quant(int x) {}
        void norm(int x) {}
        void clear() {}
        class TopK { public: explicit TopK(int k) {} };
        void register_ops(py::module& ops) {
            ops.def("quant", &quant);
            ops.def("norm", &norm);
        }
        PYBIND11_MODULE(libmini_ops, m) {
            m.def("clear", &clear);
            py::class_<TopK>(m, "TopK").def(py::init<int>());
            py::module sub = m.def_submodule("kernels", "the kernels");
            register_ops(sub);
        }
        }  // namespace mini
        """,
    "pkg/__init__.py": "",
    "pkg/compute_ops.py": """
        import logging

        from libmini_ops import *
        from libmini_ops.kernels import *
        """,
    "pkg/model.py": """
        import pkg.compute_ops as compute_ops
        from pkg import compute_ops as ops


        def forward(x):
            compute_ops.quant(x)
            ops.norm(x)
            compute_ops.clear()
            compute_ops.missing(x)
            return compute_ops.TopK(4)
        """,
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("pybind_star_reexports")
    return written_bundle(root / "src", FILES)


def test_names_star_imported_from_an_extension_module_bind_through_the_module_that_imports_them(bundle):
    binds = sorted((e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds")
    assert binds == [
        # the first star import's names: the Python step's, as before
        ("py:pkg.model.forward", "cpp:mini::TopK", 10),
        ("py:pkg.model.forward", "cpp:mini::clear", 8),
        # the submodule's, star-imported second, through either name of the module
        ("py:pkg.model.forward", "cpp:mini::norm", 7),
        ("py:pkg.model.forward", "cpp:mini::quant", 6),
    ]
