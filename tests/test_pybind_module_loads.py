"""A torch extension's module reached other than by an import statement or a call where it stands
(apex's shapes): bound to a name by ``importlib.import_module("ext")`` under ``global`` in the function
that loads it on first use, or by ``cpp_extension.load(name="ext", sources=[...])``; and a function of
it handed on without being called there (``multi_tensor_applier(amp_C.multi_tensor_scale, ...)``,
``self.op = amp_C.multi_tensor_adam``), which the code it is handed to calls. The mini-repo is
written here."""

from __future__ import annotations

import pytest

from tests.native_support import written_bundle

FILES = {
    "setup.py": """
        from setuptools import setup
        from torch.utils.cpp_extension import CUDAExtension

        setup(name="mini", ext_modules=[
            CUDAExtension(name="fused_ext", sources=["csrc/fused.cpp"]),
            CUDAExtension(name="multi_ext", sources=["csrc/multi.cpp"]),
        ])
        """,
    "csrc/fused.cpp": """
        #include <torch/extension.h>
        void layer_norm(int x) {}
        void rms_norm(int x) {}
        PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
            m.def("forward", &layer_norm);
            m.def("rms", &rms_norm);
        }
        """,
    "csrc/multi.cpp": """
        #include <torch/extension.h>
        namespace py = pybind11;
        void multi_scale(int x) {}
        void multi_adam(int x) {}
        struct Engine { void step() {} };
        PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
            m.def("multi_scale", &multi_scale);
            m.def("multi_adam", &multi_adam);
            py::class_<Engine>(m, "Engine").def("step", &Engine::step);
        }
        """,
    "csrc/jit.cpp": """
        #include <torch/extension.h>
        void jit_run(int x) {}
        PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("run", &jit_run); }
        """,
    "pkg/__init__.py": "",
    "pkg/apply.py": """
        def applier(op, *args):
            return op(*args)
        """,
    "pkg/norm.py": """
        import importlib

        fused_ext = None


        class LayerNorm:
            @staticmethod
            def forward(x):
                global fused_ext
                if fused_ext is None:
                    fused_ext = importlib.import_module("fused_ext")
                return fused_ext.forward(x)


        def rms(x):
            return fused_ext.rms(x)
        """,
    "pkg/optim.py": """
        import torch

        from pkg.apply import applier


        class Adam:
            def __init__(self):
                import multi_ext
                self.op = multi_ext.multi_adam
                self.dtype = torch.float16

            def clip(self, xs):
                import multi_ext
                return applier(multi_ext.multi_scale, xs)

            def check(self, engine: "multi_ext.Engine", other) -> bool:
                import multi_ext
                return isinstance(other, multi_ext.Engine)
        """,
    "pkg/jit.py": """
        from torch.utils.cpp_extension import load

        jit = load(name="jit_ext", sources=["../csrc/jit.cpp"])


        def go(x):
            return jit.run(x)
        """,
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("pybind_module_loads")
    return written_bundle(root / "src", FILES)


def _binds(bundle: dict) -> list[tuple[str, str, int]]:
    return sorted((e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds")


def test_a_module_bound_by_import_module_or_a_jit_load_binds_its_calls(bundle):
    binds = _binds(bundle)
    # importlib.import_module under `global`: the name is the module's in every function of the file
    assert ("py:pkg.norm.LayerNorm.forward", "cpp:layer_norm", 12) in binds
    assert ("py:pkg.norm.rms", "cpp:rms_norm", 16) in binds
    # torch's JIT build returns the module it builds
    assert ("py:pkg.jit.go", "cpp:jit_run", 7) in binds


def test_a_function_of_an_extension_handed_on_binds_where_it_is_named(bundle):
    binds = [b for b in _binds(bundle) if b[0].startswith("py:pkg.optim.")]
    # a class named (isinstance, an annotation) binds nothing; a library's attribute neither
    assert binds == [
        ("py:pkg.optim.Adam.__init__", "cpp:multi_adam", 9),
        ("py:pkg.optim.Adam.clip", "cpp:multi_scale", 14),
    ]
