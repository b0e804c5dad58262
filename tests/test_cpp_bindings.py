"""`binds` edges from Python call sites to C++ registrations (hand-built call sites)."""

from __future__ import annotations

import pytest

from extractor.bindings.python_cpp import CallSite, bind_call_sites, extract_bindings
from extractor.context import Context, ExtractOptions
from extractor.cpp import extract_cpp_graph
from extractor.cpp.standalone import scan_trees
from extractor.model import Contribution, EdgeKind
from extractor.python.graph import PythonShared

from tests.conftest import FIXTURES
from tests.cpp_support import cpp_graph


@pytest.fixture(scope="module")
def torch_cpp() -> Contribution:
    return extract_cpp_graph(scan_trees({"": FIXTURES / "torch_ops_like"}))


def site(callee: str, caller: str = "py:pkg._custom_ops.f", line: int = 1) -> CallSite:
    return CallSite(caller, callee, "pkg/_custom_ops.py", line)


def targets(result: Contribution, callee: str) -> set[str]:
    return {b.target for b in result.shared.bindings if b.callee == callee}


def bind(cpp: Contribution, *sites: CallSite) -> Contribution:
    return bind_call_sites(sites, cpp.shared.op_registrations, cpp.shared.pybind_bindings)


@pytest.mark.parametrize(("callee", "expected"), [
    ("torch.ops._C.paged_attention_v1", {"cpp:paged_attention_v1"}),
    ("torch.ops._C.rms_norm", {"cpp:rms_norm"}),
    # the library suffix picks the `_cache_ops` library
    ("torch.ops._C_cache_ops.reshape_and_cache", {"cpp:reshape_and_cache"}),
    ("torch.ops._C_cache_ops.swap_blocks", {"cpp:swap_blocks"}),
    # def in the bindings file, impl registered from a kernel file with TORCH_LIBRARY_IMPL_EXPAND
    ("torch.ops._C.gemm_schema_only", {"cpp:gemm_schema_only"}),
    ("torch.ops._C.gemm_schema_only.default", {"cpp:gemm_schema_only"}),
    # the same op name in two extensions: the directory of the registration decides
    ("torch.ops._moe_C.shuffle_rows", {"cpp:moe_shuffle_rows"}),
    ("torch.ops._C.shuffle_rows", {"cpp:shuffle_rows"}),
    ("torch.ops._moe_C.topk_softmax", {"cpp:topk_softmax"}),
    # a literal namespace, implementation given to def()
    ("torch.ops.my_ext.twice", {"cpp:custom::twice"}),
    # not registered in this system, or the wrong library
    ("torch.ops._C.not_registered", set()),
    ("torch.ops.aten.mm", set()),
    ("torch.ops._C.reshape_and_cache", set()),
    # a namespace written out does not rule out a build macro's library of the same name (vLLM 0.34
    # writes `_C` out in its CUDA build and names it TORCH_EXTENSION_NAME in its CPU build): an op it
    # does not implement itself is looked up among the macro's (the record says "inferred")
    ("torch.ops.my_ext.rms_norm", {"cpp:rms_norm"}),
    ("torch.ops.my_ext.not_registered", set()),
])
def test_torch_op_calls_bind_to_the_registered_implementation(torch_cpp, callee, expected):
    result = bind(torch_cpp, site(callee), site("torch.ops._moe_C.topk_softmax", line=2))
    assert targets(result, callee) == expected


def test_edges_go_from_the_calling_function_and_say_how_they_were_found(torch_cpp):
    result = bind(torch_cpp,
                  site("torch.ops._C_cache_ops.reshape_and_cache", "py:pkg.attn.Backend.forward", 40),
                  site("torch.ops.my_ext.twice", "py:pkg.ext.twice", 7),
                  site("torch.ops._C.unknown_op", "py:pkg.ext.g", 9))
    edges = {(e.source, e.target, e.kind, e.line) for e in result.edges}
    assert edges == {("py:pkg.attn.Backend.forward", "cpp:reshape_and_cache", EdgeKind.BINDS, 40),
                     ("py:pkg.ext.twice", "cpp:custom::twice", EdgeKind.BINDS, 7)}
    how = {b.callee: (b.namespace, b.registered_at, b.dispatch) for b in result.shared.bindings}
    assert how["torch.ops._C_cache_ops.reshape_and_cache"] == ("inferred", "csrc/torch_bindings.cpp:37",
                                                               "torch::kCUDA")
    assert how["torch.ops.my_ext.twice"] == ("read", "csrc/custom/literal_ns.cpp:12", "")
    assert result.stats["torch_op_calls"] == 3
    assert result.stats["torch_op_calls_bound"] == 2
    assert result.stats["torch_op_calls_unregistered"] == 1
    unregistered = [d for d in result.diagnostics if d.code == "torch-op-unregistered"]
    assert len(unregistered) == 1 and unregistered[0].line > 0  # said where it is, not only counted


def test_a_call_of_pytorchs_own_operator_is_a_call_into_torch(torch_cpp):
    # torch.ops.aten.slice in a compilation pass: PyTorch implements it, no diagnostic says it binds
    # nowhere (vLLM 0.10.2: 41 of 72 such diagnostics were aten, symm_mem and higher_order calls)
    result = bind(torch_cpp, site("torch.ops.aten.slice", "py:pkg.passes.f", 3),
                  site("torch.ops.symm_mem.two_shot_all_reduce_", "py:pkg.comm.g", 5),
                  site("torch.ops._C.unknown_op", "py:pkg.ext.g", 9))
    assert result.stats["torch_op_calls_torch_own"] == 2
    assert result.stats["torch_op_calls_unregistered"] == 1
    said = [(d.path, d.line) for d in result.diagnostics if d.code == "torch-op-unregistered"]
    assert len(said) == 1 and said[0][1] == 9


def test_the_bound_cpp_function_leads_on_to_its_kernel(torch_cpp):
    result = bind(torch_cpp, site("torch.ops._C.paged_attention_v1"))
    (target,) = targets(result, "torch.ops._C.paged_attention_v1")
    launches = {(e.source, e.target) for e in torch_cpp.edges if e.kind is EdgeKind.LAUNCHES}
    # the launch is written inside a macro that the function invokes
    assert (target, "cpp:vllm_like::paged_attention_v1_kernel") in launches


def test_pybind11_module_functions_classes_and_methods():
    cpp = extract_cpp_graph(scan_trees({
        "server": FIXTURES / "triton_like" / "server", "core": FIXTURES / "triton_like" / "core"}))
    sites = [CallSite("py:tritonfrontend.app.main", callee, "tritonfrontend/app.py", n)
             for n, callee in enumerate([
                 "tritonfrontend._c.tritonfrontend_bindings.version",
                 "tritonfrontend._c.tritonfrontend_bindings.TritonFrontendHttp",
                 "tritonfrontend._c.tritonfrontend_bindings.TritonFrontendHttp.start",
                 "tritonfrontend._c.other_module.version",
             ], start=1)]
    result = bind(cpp, *sites)
    assert {(e.target, e.line) for e in result.edges} == {
        ("cpp:triton::server::python::FrontendVersion", 1),
        ("cpp:triton::server::HTTPServer", 2),
        ("cpp:triton::server::HTTPServer::Start", 3)}


def test_extract_bindings_reads_earlier_steps_from_the_context(torch_cpp):
    python = Contribution(shared=PythonShared((site("torch.ops._C.rms_norm", "py:pkg.layers.norm"),)))
    ctx = Context("x", "1", (), (), ExtractOptions(), results={"python": python, "cpp": torch_cpp})
    result = extract_bindings(ctx)
    assert [(e.source, e.target) for e in result.edges] == [("py:pkg.layers.norm", "cpp:rms_norm")]
    empty = extract_bindings(Context("x", "1", (), (), ExtractOptions(), results={}))
    assert empty.edges == ()


def test_operator_schemas_are_nodes_their_implementations_implement(torch_cpp):
    from extractor.model import ParamKind

    by_id = {n.id: n for n in torch_cpp.nodes}
    op = by_id["torchop:<TORCH_EXTENSION_NAME>_cache_ops::swap_blocks"]
    assert (op.path, op.line, op.returns) == ("csrc/torch_bindings.cpp", 31, "()")  # the line naming it
    assert [(p.name, p.annotation, p.kind) for p in op.params] == [
        ("src", "Tensor", ParamKind.POSITIONAL_OR_KEYWORD), ("dst", "Tensor!", ParamKind.POSITIONAL_OR_KEYWORD),
        ("block_mapping", "Tensor", ParamKind.POSITIONAL_OR_KEYWORD)]
    assert op.api == "public: torch op <TORCH_EXTENSION_NAME>_cache_ops::swap_blocks"
    implements = {(e.source, e.target) for e in torch_cpp.edges if e.kind is EdgeKind.IMPLEMENTS}
    assert ("cpp:swap_blocks", op.id) in implements
    # registered from another file with TORCH_LIBRARY_IMPL_EXPAND
    assert ("cpp:gemm_schema_only", "torchop:<TORCH_EXTENSION_NAME>::gemm_schema_only") in implements
    # the C++ function keeps its own C++ signature and says why it is public
    fn = by_id["cpp:swap_blocks"]
    assert [p.annotation for p in fn.params] == ["torch::Tensor&", "torch::Tensor&", "const torch::Tensor&"]
    assert fn.api == "public: torch op <TORCH_EXTENSION_NAME>_cache_ops::swap_blocks"
    assert by_id["torchop:my_ext::twice"].returns == "Tensor"


SPLIT_MODULE = {
    "python/cpp/module.cc": """
#include <pybind11/pybind11.h>
namespace py = pybind11;
namespace ct { namespace python {
void register_translator(py::module& m);
void register_logging(const py::module& mod);
} }
PYBIND11_MODULE(_ext, m) {
  m.def("contains_model", &ct::contains_model);
  ct::python::register_translator(m);
  ct::python::register_logging(m);
}
""",
    "python/cpp/translator.cc": """
#include <pybind11/pybind11.h>
namespace py = pybind11;
namespace ct { namespace python {
class TranslatorWrapper {
 public:
  int translate_batch(int n) { return n; }
};
void register_results(pybind11::module_ &results);
void register_translator(py::module& m) {
  py::class_<TranslatorWrapper>(m, "Translator")
    .def("translate_batch", &TranslatorWrapper::translate_batch);
  register_results(m);
}
} }
""",
    "python/cpp/results.cc": """
#include <pybind11/pybind11.h>
namespace ct { namespace python {
int score(int x) { return x; }
void register_results(pybind11::module_ &results) { results.def("score", &score); }
} }
""",
    "python/cpp/logging.cc": """
#include <pybind11/pybind11.h>
namespace py = pybind11;
namespace ct {
void set_log_level(int level) {}
int contains_model(int path) { return path; }
namespace python {
void register_logging(const py::module& mod) { mod.def("set_log_level", &ct::set_log_level); }
void register_unused(py::module& m) { m.def("unused", &ct::set_log_level); }
void stub_setup(py::module& sys) { sys.attr("path"); }
} }
""",
}


def test_pybind11_registrations_split_over_functions_given_the_module(tmp_path):
    # CTranslate2's python/cpp: PYBIND11_MODULE hands its module to register_* functions in other
    # files, and those to others; what they register is the block's module's
    for rel, code in SPLIT_MODULE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code)
    cpp = extract_cpp_graph(scan_trees({"": tmp_path}))
    assert {b.python_name: b.target for b in cpp.shared.pybind_bindings} == {
        "_ext.contains_model": "cpp:ct::contains_model",
        "_ext.Translator": "cpp:ct::python::TranslatorWrapper",
        "_ext.Translator.translate_batch": "cpp:ct::python::TranslatorWrapper::translate_batch",
        "_ext.score": "cpp:ct::python::score",  # handed on twice
        "_ext.set_log_level": "cpp:ct::set_log_level"}  # register_unused is called by no block
    sites = [CallSite("py:ct.api.main", callee, "ct/api.py", n)
             for n, callee in enumerate(["ct._ext.Translator", "ct._ext.score", "ct._ext.unused"], start=1)]
    assert {(e.target, e.line) for e in bind(cpp, *sites).edges} == {
        ("cpp:ct::python::TranslatorWrapper", 1), ("cpp:ct::python::score", 2)}
    by_id = {n.id: n for n in cpp.nodes}
    assert by_id["cpp:ct::python::TranslatorWrapper"].api == "public: pybind11 _ext.Translator"
    assert by_id["cpp:ct::python::register_unused"].api.startswith("internal")


HELPER_TEMPLATES = {
    # lmdeploy's turbomind bind.cpp: a template helper registers a class named by its parameter, of
    # its template parameter's type; the block calls it once per class
    "csrc/bind.cpp": """#include <pybind11/pybind11.h>
namespace py = pybind11;
namespace tm { namespace core {
struct ModuleConfig {};
struct NormConfig : ModuleConfig { float eps = 0; };
struct FfnConfig : ModuleConfig { int inter = 0; };
} }
namespace core = tm::core;

template<typename Config>
void bind_config(py::module_& m, const char* name)
{
    py::class_<Config, core::ModuleConfig> cls(m, name);
    cls.def(py::init<>());
    cls.def("clone", [](const Config& c) { return Config(c); });
}

template<typename T>
void bind_named(py::module_& m, const std::string& name)
{
    py::class_<T>(m, name.c_str());
}

PYBIND11_MODULE(_tm, m)
{
    bind_config<core::NormConfig>(m, "NormConfig");
    bind_config<tm::core::FfnConfig>(m, "FfnConfig");
    bind_named<core::NormConfig>(m, kNormName);
    auto& p = dynamic_cast<py::module_&>(m);
}
""",
}


def test_classes_a_template_helper_registers_under_its_parameters_names(tmp_path):
    for rel, code in HELPER_TEMPLATES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code)
    cpp = extract_cpp_graph(scan_trees({"": tmp_path}))
    found = {(b.python_name, b.kind): (b.target, b.line) for b in cpp.shared.pybind_bindings}
    # each at the line of the call that names it, its type as that call's scope reads it
    assert found == {("_tm.NormConfig", "class"): ("cpp:tm::core::NormConfig", 26),
                     ("_tm.FfnConfig", "class"): ("cpp:tm::core::FfnConfig", 27),
                     ("_tm.NormConfig.clone", "method"): ("", 26),
                     ("_tm.FfnConfig.clone", "method"): ("", 27)}
    # bind_named's name is no string literal at its call (`kNormName`), and `name.c_str()` no name:
    # nothing is guessed
    sites = [CallSite("py:tm.api.main", callee, "tm/api.py", n)
             for n, callee in enumerate(["tm._tm.NormConfig", "tm._tm.FfnConfig"], start=1)]
    assert {(e.target, e.line) for e in bind(cpp, *sites).edges} == {
        ("cpp:tm::core::NormConfig", 1), ("cpp:tm::core::FfnConfig", 2)}


def test_python_calls_of_names_imported_from_a_pybind11_module_of_the_system(tmp_path):
    # CTranslate2 and Triton's tritonserver: the package imports from its compiled module
    # (`from ct import _ext`, `from ct._ext import Translator as T`), which has no .py file: the
    # Python step finds no module there, and the calls are bound from the imports, read again
    from extractor.context import ExtractOptions
    from extractor.run.pipeline import extract_system

    for rel, code in SPLIT_MODULE.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(code)
    pkg = tmp_path / "src" / "python" / "ct"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from ct._ext import Translator as T\n\ndef make():\n    return T()\n")
    (pkg / "log.py").write_text("from ct import _ext\n\n\ndef quiet():\n    _ext.set_log_level(0)\n    _ext.unused()\n")
    # xgrammar's shape: one module binds the extension module under another name, others import it from there
    (pkg / "base.py").write_text("from ct import _ext as _core\n")
    (pkg / "user.py").write_text("from ct.base import _core\n\n\ndef score():\n    return _core.score(1)\n")
    # the package re-exports T: a caller reaches the binding through it
    (tmp_path / "src" / "python" / "app.py").write_text("import ct\nfrom ct import T\n\n\ndef run():\n    ct.T()\n    T()\n")
    bundle = extract_system([str(tmp_path / "src")], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c")).bundle
    binds = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    assert binds == {("py:ct.make", "cpp:ct::python::TranslatorWrapper", 4),
                     ("py:ct.log.quiet", "cpp:ct::set_log_level", 5),
                     ("py:app.run", "cpp:ct::python::TranslatorWrapper", 6),  # ct.T, re-exported
                     ("py:app.run", "cpp:ct::python::TranslatorWrapper", 7),  # T imported from the package
                     ("py:ct.user.score", "cpp:ct::python::score", 5)}  # the module, under the name base gives it


BUILT_EXTENSIONS = {
    # flash-attention's shape: the module is the build's macro, its name is in setup.py
    "setup.py": ("import os\nfrom torch.utils.cpp_extension import CUDAExtension\n"
                 "SOURCES = ['csrc/flash_api.cpp', os.path.join('csrc', 'kernels.cu')]\n"
                 "ext_modules = [CUDAExtension(name='flash_attn_2_cuda', sources=SOURCES + ['csrc/extra.cu'])]\n"),
    "csrc/flash_api.cpp": ("#include <torch/extension.h>\n"
                           "std::vector<at::Tensor> mha_fwd(at::Tensor q) { return {q}; }\n"
                           "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n  m.def(\"fwd\", &mha_fwd, \"Forward\");\n}\n"),
    # exllamav2's shape: a setup.py of its own beside the sources, the name a constant, and the
    # package's module holding the extension that its other modules import
    "exl/ext/setup.py": ("from torch.utils import cpp_extension\nextension_name = 'exl_ext'\n"
                         "setup(ext_modules=[cpp_extension.CUDAExtension(extension_name, ['bindings.cpp'])])\n"),
    "exl/ext/bindings.cpp": ("int make_q_matrix(int rows) { return rows; }\n"
                             "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
                             "  m.def(\"make_q_matrix\", &make_q_matrix);\n}\n"),
    "exl/__init__.py": "",
    "exl/ext.py": "try:\n    import exl_ext\nexcept ImportError:\n    exl_ext = None\next_c = exl_ext\n",
    "exl/model.py": ("from exl.ext import exl_ext as ext_c\n\n\n"
                     "def load(rows):\n    return ext_c.make_q_matrix(rows)\n"),
    "flash_attn/__init__.py": "",
    "flash_attn/interface.py": ("import flash_attn_2_cuda as flash_attn_gpu\n\n\n"
                                "def forward(q):\n    return flash_attn_gpu.fwd(q)\n"),
    # no build script lists this one: its module stays the macro, and the run says so
    "other/api.cpp": ("int twice(int x) { return 2 * x; }\n"
                      "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n  m.def(\"twice\", &twice);\n}\n"),
}


def test_a_pybind11_module_named_by_the_build_macro_takes_the_extensions_name_from_the_build_script(tmp_path):
    from extractor.bindings.python_cpp import extension_builds
    from extractor.python.index import module_index
    from extractor.run.pipeline import extract_system
    import ast

    for rel, code in BUILT_EXTENSIONS.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code)
    [build] = extension_builds(module_index(ast.parse(BUILT_EXTENSIONS["setup.py"])))
    assert (build.name, build.sources) == ("flash_attn_2_cuda",
                                           ("csrc/flash_api.cpp", "csrc/kernels.cu", "csrc/extra.cu"))
    bundle = extract_system([str(tmp_path)], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c")).bundle
    binds = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    assert binds == {("py:flash_attn.interface.forward", "cpp:mha_fwd", 5),
                     ("py:exl.model.load", "cpp:make_q_matrix", 5)}
    [unnamed] = [d for d in bundle["diagnostics"] if d["code"] == "pybind-module-unnamed"]
    assert (unnamed["path"], unnamed["line"]) == ("other/api.cpp", 3)  # its first binding
    assert "TORCH_EXTENSION_NAME" in unnamed["message"]


STABLE_ABI = {  # PyTorch's stable ABI (torch/csrc/stable/library.h): STABLE_ blocks, impls boxed by TORCH_BOX
    "csrc/ops.h": "#pragma once\nvoid fused_gelu(int64_t out, int64_t x);\nvoid block_copy(int64_t src);\n",
    "csrc/gelu.cu": '#include "ops.h"\nvoid fused_gelu(int64_t out, int64_t x) {}\n',
    "csrc/copy.cpp": '#include "ops.h"\nvoid block_copy(int64_t src) {}\n',
    # the CPU build names the same library with the build's macro
    "csrc/cpu/cpu_bindings.cpp": """void cpu_gelu(int64_t out, int64_t x) {}

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("cpu_gelu(Tensor! out, Tensor x) -> ()");
  ops.impl("cpu_gelu", torch::kCPU, &cpu_gelu);
}
""",
    "csrc/bindings.cpp": """#include "ops.h"

STABLE_TORCH_LIBRARY_FRAGMENT(_kern, ops) {
  ops.def("fused_gelu(Tensor! out, Tensor x) -> ()");
}

STABLE_TORCH_LIBRARY_IMPL(_kern, CUDA, ops) {
  ops.impl("fused_gelu", TORCH_BOX(&fused_gelu));
}

STABLE_TORCH_LIBRARY(_kern_copy, m) {
  m.def("block_copy(Tensor src) -> ()");
  m.impl("block_copy", TORCH_BOX(block_copy));
}
""",
}


def test_stable_abi_registrations_bind_like_torch_library_ones(tmp_path):
    cpp = cpp_graph(tmp_path, STABLE_ABI)
    # the blocks register operators; they are no functions of the graph
    assert not [n.id for n in cpp.nodes if "STABLE_TORCH_LIBRARY" in n.id]
    result = bind(cpp, site("torch.ops._kern.fused_gelu", line=3), site("torch.ops._kern_copy.block_copy", line=4),
                  site("torch.ops._kern.cpu_gelu", line=5))
    assert {(e.target, e.line) for e in result.edges} == {("cpp:fused_gelu", 3), ("cpp:block_copy", 4),
                                                           ("cpp:cpu_gelu", 5)}
    how = {b.callee: (b.namespace, b.registered_at, b.dispatch) for b in result.shared.bindings}
    assert how["torch.ops._kern.fused_gelu"] == ("read", "csrc/bindings.cpp:8", "CUDA")
    assert how["torch.ops._kern_copy.block_copy"] == ("read", "csrc/bindings.cpp:13", "")
    # `_kern` is written out, but not by the CPU build's block: its op is the macro's, inferred
    assert how["torch.ops._kern.cpu_gelu"] == ("inferred", "csrc/cpu/cpu_bindings.cpp:5", "torch::kCPU")


HELD_IN_VARIABLES = {  # Triton python_backend's shape: a pybind11 class held in a variable, then its methods
    "src/log.h": "namespace be {\nclass Logger {\n public:\n  void Info(int m);\n  void Warn(int m);\n};\n}\n",
    "src/log.cc": '#include "log.h"\nnamespace be {\nvoid Logger::Info(int m) {}\nvoid Logger::Warn(int m) {}\n}\n',
    "src/utils.cc": """#include "log.h"

PYBIND11_EMBEDDED_MODULE(be_utils, module) {
  py::class_<be::Logger> logger(module, "Logger");
  logger.def("info", &be::Logger::Info);
  auto extra = module.def_submodule("extra");
  py::class_<be::Logger>(extra, "Other").def("warn", &be::Logger::Warn);
}
""",
}


def test_pybind11_classes_and_submodules_held_in_variables(tmp_path):
    cpp = cpp_graph(tmp_path, HELD_IN_VARIABLES)
    assert {(b.python_name, b.target, b.line) for b in cpp.shared.pybind_bindings} == {
        ("be_utils.Logger", "cpp:be::Logger", 4), ("be_utils.Logger.info", "cpp:be::Logger::Info", 5),
        ("be_utils.extra.Other", "cpp:be::Logger", 7), ("be_utils.extra.Other.warn", "cpp:be::Logger::Warn", 7)}
    by_id = {n.id: n for n in cpp.nodes}
    assert by_id["cpp:be::Logger::Info"].api == "public: pybind11 be_utils.Logger.info"


def test_an_operator_named_with_its_namespace_binds_under_that_namespace(tmp_path):
    # torchao's shape: the schema is defined in Python, the C++ implementations name the namespace
    cpp = cpp_graph(tmp_path, {"csrc/linear.cpp": """namespace ao {
at::Tensor linear_cpu(at::Tensor x) { return x; }
}
TORCH_LIBRARY_IMPL(torchao, CPU, m) {
  m.impl("torchao::linear_cpu", &ao::linear_cpu);
}
TORCH_LIBRARY_IMPL(_, Meta, m) {
  m.impl("torchao::linear_meta", &ao::linear_cpu);
}
"""})
    result = bind(cpp, site("torch.ops.torchao.linear_cpu.default", line=3),
                  site("torch.ops.torchao.linear_meta", line=4))
    assert {(e.target, e.line) for e in result.edges} == {("cpp:ao::linear_cpu", 3), ("cpp:ao::linear_cpu", 4)}
    assert {b.namespace for b in result.shared.bindings} == {"read"}


SOURCES_ADDED_TO = {
    # DeepEP's shape: the sources list grows by extend/append/+=, and the module block hands its
    # module to functions in headers, whose registrations are that module's
    "setup.py": ("import setuptools\nfrom torch.utils.cpp_extension import CUDAExtension\n"
                 "if __name__ == '__main__':\n"
                 "    sources = ['csrc/api.cpp']\n"
                 "    sources.extend(['csrc/kernels.cu'])\n"
                 "    sources.append('csrc/more.cu')\n"
                 "    sources += ['csrc/last.cu']\n"
                 "    setuptools.setup(ext_modules=[CUDAExtension(name='pkg._C', sources=sources)])\n"),
    "csrc/jit/api.hpp": ("#include <pybind11/pybind11.h>\nnamespace pkg::jit {\nint init(int x) { return x; }\n"
                         "static void register_apis(pybind11::module_& m) {\n  m.def(\"init_jit\", &init);\n}\n}\n"),
    "csrc/api.cpp": ("#include \"jit/api.hpp\"\n"
                     "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n  pkg::jit::register_apis(m);\n}\n"),
    # another extension's block hands the same function its module: a module of its own
    "other/setup.py": ("from torch.utils.cpp_extension import CppExtension\n"
                       "ext = CppExtension('other_ext', ['bind.cpp'])\n"),
    "other/bind.cpp": ("#include \"../csrc/jit/api.hpp\"\n"
                       "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n  pkg::jit::register_apis(m);\n}\n"),
    "pkg/__init__.py": "import pkg._C as _C\n\n\ndef start():\n    _C.init_jit(1)\n",
    "user.py": "import other_ext\n\n\ndef start():\n    other_ext.init_jit(2)\n",
}


def test_sources_added_to_a_list_and_registrations_of_functions_given_a_module_the_build_names(tmp_path):
    from extractor.bindings.python_cpp import extension_builds
    from extractor.python.index import module_index
    from extractor.run.pipeline import extract_system
    import ast

    for rel, code in SOURCES_ADDED_TO.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code)
    [build] = extension_builds(module_index(ast.parse(SOURCES_ADDED_TO["setup.py"])))
    assert build.sources == ("csrc/api.cpp", "csrc/kernels.cu", "csrc/more.cu", "csrc/last.cu")
    bundle = extract_system([str(tmp_path)], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c")).bundle
    binds = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    assert binds == {("py:pkg.start", "cpp:pkg::jit::init", 5), ("py:user.start", "cpp:pkg::jit::init", 5)}
    assert not [d for d in bundle["diagnostics"] if d["code"] == "pybind-module-unnamed"]


CMAKE_DEFINED = {
    # a project's own CMake function: the module's name a compile definition among its options, a
    # registration split over a function the module block hands its module
    "pkg/CMakeLists.txt": ("include(py_ext)\n"
                           "py_ext(\n  NAME\n    _C\n  COPTS\n    -DPY_MODULE_NAME=_C  # the module\n"
                           "  SRCS\n    csrc/module.cpp\n    csrc/handler.cpp\n)\n"),
    "pkg/csrc/handler.cpp": ("#include <pybind11/pybind11.h>\nint run(int x) { return x; }\n"
                             "void init_handler(pybind11::module_& m) {\n  m.def(\"run\", &run);\n}\n"),
    "pkg/csrc/module.cpp": ("#include <pybind11/pybind11.h>\nextern void init_handler(pybind11::module_& m);\n"
                            "int version() { return 1; }\n"
                            "PYBIND11_MODULE(PY_MODULE_NAME, m) {\n  m.def(\"version\", &version);\n"
                            "  init_handler(m);\n}\n"),
    "pkg/__init__.py": "from pkg._C import run, version\n\n\ndef start():\n    return run(version())\n",
    # two targets of one CMakeLists.txt define the macro each its way: the one naming the file decides
    "tools/CMakeLists.txt": ("add_library(fast_ext MODULE fast.cpp)\n"
                             "target_compile_definitions(fast_ext PRIVATE MOD_NAME=fast_ext)\n"
                             "add_library(slow_ext MODULE slow.cpp)\n"
                             "target_compile_definitions(slow_ext PRIVATE MOD_NAME=slow_ext OTHER=1)\n"
                             "add_library(both MODULE fast.cpp slow.cpp)\n"),
    "tools/fast.cpp": ("#include <pybind11/pybind11.h>\nint go() { return 1; }\n"
                       "PYBIND11_MODULE(MOD_NAME, m) {\n  m.def(\"go\", &go);\n}\n"),
    "tools/slow.cpp": ("#include <pybind11/pybind11.h>\nint crawl() { return 0; }\n"
                       "PYBIND11_MODULE(MOD_NAME, m) {\n  m.def(\"crawl\", &crawl);\n}\n"),
    "tools/user.py": ("import fast_ext\nimport slow_ext\n\n\ndef use():\n    fast_ext.go()\n"
                      "    slow_ext.crawl()\n"),
    # a CMake file beside, not above, the source: no value for it
    "cmake/ext.cmake": "add_definitions(-DLOST_NAME=lost)\n",
    "lost/api.cpp": ("#include <pybind11/pybind11.h>\nint twice(int x) { return 2 * x; }\n"
                     "PYBIND11_MODULE(LOST_NAME, m) {\n  m.def(\"twice\", &twice);\n}\n"),
}


def test_a_pybind11_module_named_by_a_compile_definition_of_the_cmake_build(tmp_path):
    from extractor.run.pipeline import extract_system

    for rel, code in CMAKE_DEFINED.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code)
    bundle = extract_system([str(tmp_path)], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c")).bundle
    binds = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    assert binds == {("py:pkg.start", "cpp:run", 5), ("py:pkg.start", "cpp:version", 5),
                     ("py:user.use", "cpp:go", 6), ("py:user.use", "cpp:crawl", 7)}
    [unnamed] = [d for d in bundle["diagnostics"] if d["code"] == "pybind-module-unnamed"]
    assert (unnamed["path"], unnamed["line"]) == ("lost/api.cpp", 4)


MAKE_DEFINED = {
    # a kernel directory's Makefile includes a shared one that defines the macro (ThunderKittens' shape)
    "kernels/common.mk": ("# shared flags\nNVCCFLAGS += -std=c++20\n"
                          "ifeq ($(CONFIG),pytorch)\nNVCCFLAGS += -DTORCH_EXTENSION_NAME=_C\nendif\n"),
    "kernels/norm/Makefile": "SRC := norm.cu\nCONFIG := pytorch\ninclude ../common.mk\n",
    "kernels/norm/norm.cu": ("#include <torch/extension.h>\nvoid fused_norm(int x) {}\n"
                             "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n  m.def(\"fused_norm\", &fused_norm);\n}\n"),
    "kernels/norm/bench.py": "from _C import fused_norm\n\n\ndef run():\n    fused_norm(1)\n",
    # an included file beside, not above, the source: the Makefile that includes it applies it
    "build/flags.mk": "CXXFLAGS += -DEXT_NAME=rope_ext # the module\n",
    "ops/Makefile": "include ../build/flags.mk\n",
    "ops/rope.cpp": ("#include <pybind11/pybind11.h>\nint rotate(int x) { return x; }\n"
                     "PYBIND11_MODULE(EXT_NAME, m) {\n  m.def(\"rotate\", &rotate);\n}\n"),
    "ops/use.py": "import rope_ext\n\n\ndef go():\n    rope_ext.rotate(2)\n",
    # a value a variable gives is not known
    "var/Makefile": "NAME := var_ext\nCXXFLAGS += -DVAR_NAME=$(NAME)\n",
    "var/api.cpp": ("#include <pybind11/pybind11.h>\nint half(int x) { return x / 2; }\n"
                    "PYBIND11_MODULE(VAR_NAME, m) {\n  m.def(\"half\", &half);\n}\n"),
}


def test_a_pybind11_module_named_by_a_compile_definition_of_a_makefile(tmp_path):
    from extractor.run.pipeline import extract_system

    for rel, code in MAKE_DEFINED.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code)
    bundle = extract_system([str(tmp_path)], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c")).bundle
    binds = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    assert binds == {("py:bench.run", "cpp:fused_norm", 5), ("py:use.go", "cpp:rotate", 5)}
    [unnamed] = [d for d in bundle["diagnostics"] if d["code"] == "pybind-module-unnamed"]
    assert (unnamed["path"], unnamed["line"]) == ("var/api.cpp", 4)
    assert "CMake file or Makefile above it" in unnamed["message"]


def test_a_method_of_what_an_operator_returned_is_no_operator_call(torch_cpp):
    """``out = torch.ops._C.rms_norm(...)`` then ``out.reshape(...)``: the Python graph names the second
    callee ``torch.ops._C.rms_norm().reshape``, a tensor's method, which neither binds nor is unregistered."""
    result = bind(torch_cpp, site("torch.ops._C.rms_norm", line=5), site("torch.ops._C.rms_norm().reshape", line=6),
                  site("torch.ops.aten._weight_int4pack_mm().reshape", line=7))
    assert {(e.target, e.line) for e in result.edges} == {("cpp:rms_norm", 5)}
    assert result.stats["torch_op_calls"] == 1
    assert not [d for d in result.diagnostics if d.code == "torch-op-unregistered"]


COMPUTED_SOURCES = {  # TransformerEngine's shape: the extension's sources are a directory's files, listed at run time
    "build_tools/utils.py": """import os
from pathlib import Path


def all_files_in_dir(path, name_extension=None):
    return [Path(d, n) for d, _, names in os.walk(path) for n in names if n.endswith(name_extension)]
""",
    "build_tools/pytorch.py": """from pathlib import Path

from torch.utils.cpp_extension import CppExtension

from .utils import all_files_in_dir


def setup_pytorch_extension(csrc_source_files):
    sources = all_files_in_dir(Path(csrc_source_files), name_extension="cpp")
    return CppExtension(name="engine_torch", sources=[str(src) for src in sources])
""",
    # the JAX extension's sources are computed too, but its block writes its name out
    "build_tools/jax.py": """from pybind11.setup_helpers import Pybind11Extension

from .utils import all_files_in_dir


def setup_jax_extension(extensions_dir):
    sources = all_files_in_dir(extensions_dir, name_extension="cpp")
    return Pybind11Extension("engine_jax", sources=[str(path) for path in sources])
""",
    "engine/pytorch/csrc/extensions/pybind.cpp": """void gemm(int x) {}
void register_ep(pybind11::module_& m);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("gemm", &gemm);
  register_ep(m);
}
""",
    "engine/pytorch/csrc/extensions/ep.cpp": """void ep_init(int x) {}

void register_ep(pybind11::module_& m) {
  m.def("ep_init", &ep_init);
}
""",
    "engine/jax/csrc/pybind.cpp": """void quantize(int x) {}

PYBIND11_MODULE(engine_jax, m) {
  m.def("quantize", &quantize);
}
""",
    "engine/__init__.py": "",
    "engine/linear.py": """import engine_jax
import engine_torch as tex


def forward(x):
    tex.gemm(x)
    tex.ep_init(x)
    return engine_jax.quantize(x)
""",
}


def test_the_only_extension_with_computed_sources_names_the_blocks_the_build_macro_names(tmp_path):
    from extractor.run.pipeline import extract_system

    for rel, code in COMPUTED_SOURCES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code)
    bundle = extract_system([str(tmp_path)], options=ExtractOptions(jobs=1, cache_dir=None,
                                                                    probe_structs=False)).bundle
    binds = sorted((e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds")
    assert binds == [("py:engine.linear.forward", "cpp:ep_init", 7), ("py:engine.linear.forward", "cpp:gemm", 6),
                     ("py:engine.linear.forward", "cpp:quantize", 8)]
    said = {(d["path"], d["line"], d["code"]) for d in bundle["diagnostics"] if d["code"].startswith("pybind-module")}
    assert said == {("engine/pytorch/csrc/extensions/ep.cpp", 4, "pybind-module-inferred"),
                    ("engine/pytorch/csrc/extensions/pybind.cpp", 5, "pybind-module-inferred")}
    [message] = {d["message"] for d in bundle["diagnostics"] if d["code"] == "pybind-module-inferred"}
    assert "taken to be engine_torch, the only extension whose sources are computed (build_tools/pytorch.py:10)" \
        in message


def test_two_extensions_with_computed_sources_name_no_block(tmp_path):
    from extractor.run.pipeline import extract_system

    files = dict(COMPUTED_SOURCES)
    files["engine/jax/csrc/pybind.cpp"] = files["engine/jax/csrc/pybind.cpp"].replace("engine_jax", "OTHER_MACRO")
    for rel, code in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code)
    bundle = extract_system([str(tmp_path)], options=ExtractOptions(jobs=1, cache_dir=None,
                                                                    probe_structs=False)).bundle
    assert not [e for e in bundle["graph"]["edges"] if e["kind"] == "binds"]
    assert {d["code"] for d in bundle["diagnostics"] if d["code"].startswith("pybind-module")} == \
        {"pybind-module-unnamed"}


HELD_MODULES = {
    # AutoGPTQ's shape: two extensions built from one source tree, a layer holding one of them in an
    # attribute (picked by a condition) and calling it through the attribute
    "setup.py": ("from torch.utils.cpp_extension import CUDAExtension\n"
                 "ext_modules = [CUDAExtension('q_ext_64', ['csrc/q64.cpp']),\n"
                 "               CUDAExtension('q_ext_256', ['csrc/q256.cpp'])]\n"),
    "csrc/q64.cpp": ("void matmul64(int n) {}\n"
                     "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n  m.def(\"matmul\", &matmul64);\n}\n"),
    "csrc/q256.cpp": ("void matmul256(int n) {}\n"
                      "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n  m.def(\"matmul\", &matmul256);\n}\n"),
    "q/__init__.py": "",
    "q/linear.py": ("import math\ntry:\n    import q_ext_64\n    import q_ext_256\nexcept ImportError:\n"
                    "    q_ext_64 = q_ext_256 = None\n\n\n"
                    "class Linear:\n"
                    "    def __init__(self, wide):\n"
                    "        self.ext = q_ext_256 if wide else q_ext_64\n"
                    "        self.math = math\n\n"
                    "    def forward(self, n):\n"
                    "        self.math.floor(n)\n"
                    "        return self.ext.matmul(n)\n\n\n"
                    "class Other:\n"
                    "    def forward(self, n):\n"
                    "        return self.ext.matmul(n)\n"),
}


def test_calls_through_an_attribute_holding_an_extension_module_bind_to_each_module_held(tmp_path):
    from tests.native_support import written_bundle

    bundle = written_bundle(tmp_path, HELD_MODULES)
    binds = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    # either module may be held: both bind; `self.math` holds a module no extension registers, and
    # another class's `self.ext` is not this one's
    assert binds == {("py:q.linear.Linear.forward", "cpp:matmul64", 16),
                     ("py:q.linear.Linear.forward", "cpp:matmul256", 16)}


def test_an_extension_built_from_sources_the_tree_lacks_is_said(tmp_path):
    # AutoGPTQ's cQIGen: its backend.cpp is written by a generator before the build
    from extractor.run.pipeline import extract_system

    files = {"setup.py": ("from torch.utils.cpp_extension import CppExtension\n"
                          "ext_modules = [CppExtension('gen_ext', ['gen/backend.cpp', 'gen/kept.cpp']),\n"
                          "               CppExtension('whole_ext', ['gen/kept.cpp', '/opt/abs.cpp'])]\n"),
             "gen/kept.cpp": "void kept() {}\n",
             "q/__init__.py": "import gen_ext\n\n\ndef run():\n    gen_ext.forward(1)\n"}
    for rel, code in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code)
    bundle = extract_system([str(tmp_path)], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c")).bundle
    [absent] = [d for d in bundle["diagnostics"] if d["code"] == "extension-source-absent"]
    assert (absent["path"], absent["line"]) == ("setup.py", 2)
    assert "gen_ext" in absent["message"] and "gen/backend.cpp" in absent["message"]
    assert "kept.cpp" not in absent["message"]


FILE_LOCAL_HELPERS = {
    # rtp-llm's models_py/bindings/OpDefs.cc: the registering function a block calls hands its module
    # on to a helper of its file's anonymous namespace; another file has a helper of the same name
    "csrc/module.cc": """#include <pybind11/pybind11.h>
namespace py = pybind11;
namespace ext { void register_defs(py::module& m); void register_more(py::module& m); }
PYBIND11_MODULE(_ops, m) {
    ext::register_defs(m);
    py::module sub = m.def_submodule("more");
    ext::register_more(sub);
}
""",
    "csrc/defs.cc": """#include <pybind11/pybind11.h>
namespace ext {
enum class Kind { A };
int size_of(int x) { return x; }
namespace {
void register_enums(pybind11::module& m) { pybind11::enum_<Kind>(m, "Kind"); }
}  // namespace
void register_defs(pybind11::module& m) {
    register_enums(m);
    m.def("size_of", &size_of);
}
}
""",
    "csrc/more.cc": """#include <pybind11/pybind11.h>
namespace ext {
int twice(int x) { return 2 * x; }
namespace {
void register_enums(pybind11::module& m) { m.def("twice", &twice); }
}
void register_more(pybind11::module& m) { register_enums(m); }
}
""",
}


def test_helpers_of_an_anonymous_namespace_register_on_the_module_their_file_hands_them(tmp_path):
    cpp = cpp_graph(tmp_path, FILE_LOCAL_HELPERS)
    assert {(b.python_name, b.target) for b in cpp.shared.pybind_bindings} == {
        ("_ops.Kind", "cpp:ext::Kind"), ("_ops.size_of", "cpp:ext::size_of"),
        ("_ops.more.twice", "cpp:ext::twice")}
    assert not [d for d in cpp.diagnostics if d.code == "pybind-helper-unreached"]
