"""Functions a library exports to TVM FFI by a name of its own (`TVM_FFI_DLL_EXPORT_TYPED_FUNC(run,
fn)`, read by the C++ step as mechanism "tvm-ffi-export"), called from Python as attributes of the
module `tvm_ffi.load_module` loads (FlashInfer's JIT modules: `gen_x_module().build_and_load()`,
whose base class's `build_and_load` returns what an abstract `load` of a subclass loads), bound by
the bindings step as ctypes' functions are, by the exported name."""

from __future__ import annotations

import pytest

from tests.native_support import written_bundle

FILES = {
    "csrc/topk_binding.cu": """\
        namespace ops {
        void radix_topk(int x) {}
        }  // namespace ops

        void plan_impl(int x) {}
        void run_a(int x) {}

        TVM_FFI_DLL_EXPORT_TYPED_FUNC(radix_topk, ops::radix_topk);
        TVM_FFI_DLL_EXPORT_TYPED_FUNC(plan, plan_impl);
        TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, run_a);
        """,
    "csrc/other_binding.cu": """\
        void run_b(int x) {}
        TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, run_b);
        TVM_FFI_DLL_EXPORT_TYPED_FUNC(lost, not_defined_here);
        """,
    "pkg/__init__.py": "",
    "pkg/jit/__init__.py": "",
    "pkg/jit/core.py": """\
        import abc

        import tvm_ffi


        class JitSpec(abc.ABC):
            @abc.abstractmethod
            def load(self):
                ...

            def try_load(self):
                return None

            def build_and_load(self):
                cached = self.try_load()
                if cached is not None:
                    return cached
                return self.load()


        class JitSpecNvcc(JitSpec):
            def load(self):
                return tvm_ffi.load_module(self.path)


        def gen_jit_spec(name, sources):
            spec = JitSpecNvcc()
            return spec
        """,
    # no loader named here: what gen_jit_spec returns is read from the annotation
    "pkg/jit/topk.py": """\
        from .core import JitSpec, gen_jit_spec


        def gen_topk_module() -> JitSpec:
            return gen_jit_spec("topk", ["topk_binding.cu"])
        """,
    "pkg/topk.py": """\
        import functools

        from .jit.topk import gen_topk_module


        @functools.cache
        def get_topk_module():
            module = gen_topk_module().build_and_load()

            def radix_topk(x):
                module.radix_topk(x)
                return module.run(x)

            return radix_topk


        def get_plan_module():
            return gen_topk_module().build_and_load()
        """,
    "pkg/user.py": """\
        from .topk import get_plan_module


        def plan(x):
            get_plan_module().plan(x)
            get_plan_module().lost(x)
            get_plan_module().missing(x)
            return get_plan_module().get_function("plan")
        """,
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return written_bundle(tmp_path_factory.mktemp("tvm_ffi_modules"), FILES)


def test_the_cpp_step_reads_each_export_with_its_function(bundle):
    cpp = bundle["stats"]["cpp"]
    assert (cpp["tvm_ffi_exports"], cpp["tvm_ffi_exports_resolved"]) == (5, 4)


def test_calls_of_a_loaded_module_bind_to_the_exported_function(bundle):
    binds = sorted((e["source"], e["target"], e["path"], e["line"]) for e in bundle["graph"]["edges"]
                   if e["kind"] == "binds")
    assert binds == [
        # a closure's call of the module its enclosing def loaded through a method of a base class
        ("py:pkg.topk.get_topk_module.<locals>.radix_topk", "cpp:ops::radix_topk", "pkg/topk.py", 11),
        # a call of what an imported helper returns, in a file that loads nothing itself
        ("py:pkg.user.plan", "cpp:plan_impl", "pkg/user.py", 5),
    ]


def test_ambiguous_unresolved_and_missing_names_are_counted_and_said_never_bound(bundle):
    stats = bundle["stats"]["bindings"]
    assert {k: v for k, v in stats.items() if k.startswith("tvm_ffi_module")} == {
        "tvm_ffi_module_calls_ambiguous": 1,  # run: two libraries export it
        "tvm_ffi_module_calls_bound": 2,
        "tvm_ffi_module_calls_outside": 1,  # missing: exported by none (get_function is the module's own)
        "tvm_ffi_module_calls_unresolved": 1,  # lost: its function is not defined in the system
        "tvm_ffi_module_functions_outside": 1,
        "tvm_ffi_module_libraries_loaded": 1,
        "tvm_ffi_module_library_inferred": 2,
    }
    said = [(d["path"], d["line"], d["message"]) for d in bundle["diagnostics"]
            if d["code"] == "tvm-ffi-module-ambiguous"]
    assert said == [("pkg/topk.py", 12, "module.run names the function the library exports as run, which 2 "
                                        "functions of the system could be: not bound")]
