"""pybind11 shapes of a compiler's IR builder (Triton's python/src): submodules handed to the
functions that fill them by rvalue reference, and methods bound as lambdas that call the bound
object's own methods through their first parameter."""

from __future__ import annotations

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system

from tests.cpp_support import cpp_graph

BUILDER = {
    "src/main.cc": """#include <pybind11/pybind11.h>
namespace py = pybind11;
void init_ir(pybind11::module &&m);
void init_prof(pybind11::module &&m);
PYBIND11_MODULE(libc, m) {
  init_ir(m.def_submodule("ir"));
  init_prof(std::move(m.def_submodule("tools").def_submodule("prof")));
}
""",
    "src/ir.cc": """#include <pybind11/pybind11.h>
namespace py = pybind11;
namespace {
class Builder {
public:
  template <typename OpTy, typename... Args> OpTy create(Args &&...args);
  void setInsertionPointToEnd(Block &block);
};
}
int dump_all(int x) { return x; }
void init_ir(py::module &&m) {
  m.def("dump_all", &dump_all);
  py::class_<Builder>(m, "builder", py::module_local())
      .def("create_cat",
           [](Builder &self, Value &lhs, Value &rhs) -> Value {
             auto a = lhs.getType(); auto b = rhs.getType(); auto c = a.getShape(); auto d = b.getShape();
             auto e = c.size(); auto f = d.size(); auto g = a.getElementType(); auto h = b.getElementType();
             auto i = lhs.getDefiningOp(); auto j = rhs.getDefiningOp(); auto k = i.getLoc();
             return self.create<CatOp>(lhs, rhs);
           })
      .def("set_insertion_point_to_end",
           [](Builder *self, Block &block) { self->setInsertionPointToEnd(block); })
      .def("get_type", [](Value &v) { return v.getType(); });
  py::class_<Block>(m, "block").def("erase", [](Block &self) { self.erase(); });
}
""",
    "src/prof.cc": """#include <pybind11/pybind11.h>
int start_session(int x) { return x; }
void init_prof(pybind11::module &&m) { m.def("start", &start_session); }
""",
}


def test_submodules_handed_on_the_spot_by_rvalue_reference_register_there(tmp_path):
    cpp = cpp_graph(tmp_path, BUILDER)
    found = {b.python_name: b.target for b in cpp.shared.pybind_bindings}
    assert found["libc.ir.dump_all"] == "cpp:dump_all"
    assert found["libc.tools.prof.start"] == "cpp:start_session"  # a submodule's submodule, moved


def test_a_lambda_binds_to_the_method_it_calls_on_its_typed_parameter(tmp_path):
    cpp = cpp_graph(tmp_path, BUILDER)
    found = {b.python_name: b.target for b in cpp.shared.pybind_bindings}
    builder = "cpp:(anonymous namespace@src/ir.cc)::Builder"
    assert found["libc.ir.builder"] == builder
    # eleven calls on other objects come first: none takes the place of the one on `self`
    assert found["libc.ir.builder.create_cat"] == builder + "::create"
    assert found["libc.ir.builder.set_insertion_point_to_end"] == builder + "::setInsertionPointToEnd"
    # `v` is a Value, a class the system does not define; `self` a Block, no class of the system either
    assert found["libc.ir.builder.get_type"] == ""
    assert found["libc.ir.block.erase"] == ""


def test_python_calls_through_the_builder_bind_and_calls_of_outside_functions_are_counted(tmp_path):
    for rel, code in {**BUILDER, "pkg/__init__.py": "", "pkg/gen.py": """from pkg._C.libc import ir


class Generator:
    def __init__(self, context):
        self.builder = ir.builder(context)

    def visit_cat(self, a, b):
        return self.builder.create_cat(a, b)


def erase(block: ir.block):
    block.erase()


def cat(a, b, builder: ir.builder):
    builder.get_type(a)
    return builder.create_cat(a, b)
"""}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code)
    bundle = extract_system([str(tmp_path)], options=ExtractOptions(jobs=1, cache_dir=None,
                                                                    probe_structs=False)).bundle
    builder = "cpp:(anonymous namespace@src/ir.cc)::Builder"
    binds = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    assert binds == {("py:pkg.gen.Generator.__init__", builder, 6),
                     ("py:pkg.gen.Generator.visit_cat", builder + "::create", 9),
                     ("py:pkg.gen.cat", builder + "::create", 18)}
    # `block.erase()` and `builder.get_type(a)` reach bindings of functions the system does not define
    assert bundle["stats"]["bindings"]["pybind_calls_to_functions_outside"] == 2


PASSES = {
    "src/passes.h": """#define ADD_PASS_WRAPPER_0(name, builder)                                      \\
  m.def(name, [](mlir::PassManager &pm) { pm.addPass(builder()); })

#define ADD_PASS_WRAPPER_1(name, builder, ty0)                                 \\
  m.def(name,                                                                  \\
        [](mlir::PassManager &pm, ty0 val0) { pm.addPass(builder(val0)); })
""",
    "src/passes.cc": """#include <pybind11/pybind11.h>
#include "passes.h"
namespace py = pybind11;
namespace mlir { namespace triton {
std::unique_ptr<Pass> createCombineOpsPass() { return nullptr; }
std::unique_ptr<Pass> createPipelinePass(int stages) { return nullptr; }
} }
void init_passes_ttir(py::module &&m) {
  using namespace mlir::triton;
  ADD_PASS_WRAPPER_0("add_combine", createCombineOpsPass);
  ADD_PASS_WRAPPER_1("add_pipeline",
                     createPipelinePass, int);
  ADD_PASS_WRAPPER_0("add_cse", createCSEPass);
}
PYBIND11_MODULE(libp, m) {
  init_passes_ttir(m.def_submodule("ttir"));
  ADD_PASS_WRAPPER_0("add_top", mlir::triton::createCombineOpsPass);
}
""",
}


def test_bindings_a_registering_macro_of_the_system_writes_are_read_where_it_is_used(tmp_path):
    # Triton's python/src/passes.h: one macro per arity, used once per pass in functions given the module
    cpp = cpp_graph(tmp_path, PASSES)
    found = {b.python_name: (b.target, b.line) for b in cpp.shared.pybind_bindings}
    assert found == {
        # the function's own `using namespace` names the pass
        "libp.ttir.add_combine": ("cpp:mlir::triton::createCombineOpsPass", 10),
        "libp.ttir.add_pipeline": ("cpp:mlir::triton::createPipelinePass", 11),
        "libp.ttir.add_cse": ("", 13),  # MLIR's own pass: no function of the system
        "libp.add_top": ("cpp:mlir::triton::createCombineOpsPass", 17)}


BACKENDS = {
    "src/main.cc": """#include <pybind11/pybind11.h>
#define INIT_BACKEND(name) init_triton_##name(m.def_submodule(#name));
void init_triton_nvidia(pybind11::module &&m);
PYBIND11_MODULE(libt, m) {
  FOR_EACH_P(INIT_BACKEND, TRITON_BACKENDS_TUPLE)
}
""",
    "backends/nvidia/triton_nvidia.cc": """#include <pybind11/pybind11.h>
namespace py = pybind11;
int cuda_arch() { return 90; }
void init_triton_nvidia(py::module &&m) {
  m.def("cuda_arch", &cuda_arch);
  m.def("ptx_version", [](int x) { return x; });
}
""",
}


def test_a_function_given_a_module_that_no_block_reaches_is_said(tmp_path):
    # Triton's backends are initialised through a macro over a list the build gives: their module is not known
    cpp = cpp_graph(tmp_path, BACKENDS)
    assert not cpp.shared.pybind_bindings
    [said] = [d for d in cpp.diagnostics if d.code == "pybind-helper-unreached"]
    assert (said.path, said.line) == ("backends/nvidia/triton_nvidia.cc", 5)
    assert said.message.startswith("init_triton_nvidia registers 2 binding(s) on the module it is given")


# a helper of the file's own (an anonymous namespace) given the module by another helper
LOCAL_HELPER = {
    "src/module.cc": """#include <pybind11/pybind11.h>
#include "defs.h"
PYBIND11_MODULE(libops, m) {
  ops::registerDefs(m);
}
""",
    "src/defs.h": """#pragma once
#include <pybind11/pybind11.h>
namespace ops {
void registerDefs(pybind11::module& m);
}
""",
    "src/defs.cc": """#include "defs.h"
namespace ops {
enum class Kind { LINEAR, FULL };
int cache_size(int n) { return n; }
namespace {

void registerKind(pybind11::module& m) {
  pybind11::enum_<Kind>(m, "Kind").value("LINEAR", Kind::LINEAR).value("FULL", Kind::FULL);
}

}  // namespace

void registerDefs(pybind11::module& m) {
  registerKind(m);
  m.def("cache_size", &cache_size);
}
}  // namespace ops
""",
}


def test_a_helper_in_an_anonymous_namespace_registers_on_the_module_it_is_handed(tmp_path):
    cpp = cpp_graph(tmp_path, LOCAL_HELPER)
    found = {b.python_name: (b.path, b.line) for b in cpp.shared.pybind_bindings}
    assert found == {"libops.cache_size": ("src/defs.cc", 15), "libops.Kind": ("src/defs.cc", 8)}
    assert not [d for d in cpp.diagnostics if d.code == "pybind-helper-unreached"]
