"""Cross-language `binds` edges: a Python call site to the C++ function behind it (and a torch
operator to the Python function registered as it: :mod:`extractor.bindings.python_ops`; a function
of a shared library loaded with ctypes to the C function of that name:
:mod:`extractor.bindings.python_ctypes`; a TVM FFI global looked up by name to the function C++
registers under it: :mod:`extractor.bindings.python_tvm_ffi`).

Three mechanisms are read, all from the C++ step's registrations:

- torch custom ops. Python calls `torch.ops.<ns>.<op>(...)` (optionally `.default` or another
  overload); C++ registers the schema with `ops.def("<op>(...) -> ...")` and the implementation with
  `ops.impl("<op>", [dispatch,] &fn)` / `m.impl` inside `TORCH_LIBRARY[_EXPAND|_IMPL](<ns>, ...)` (or
  the stable ABI's `STABLE_TORCH_LIBRARY[_FRAGMENT|_IMPL]`, the function boxed as `TORCH_BOX(&fn)`). The
  edge goes to every function registered as an implementation of that op (CUDA and CPU builds may
  register different ones); a `def` that also names a function (`m.def("op(...)", &fn)`) counts as
  one. A `def` with no implementation anywhere gives no edge (there is no C++ function to point at)
  and is counted in the stats.
- pybind11. `m.def("name", &fn)` inside `PYBIND11_MODULE(<module>, m)` binds Python uses of
  `<...>.<module>.name`; `py::class_<T>(m, "Name")` binds `<...>.<module>.Name` to class T and
  `.def("meth", &T::meth)` binds `<...>.<module>.Name.meth`. A binding given as a lambda points at
  the function the lambda wraps (the C++ step picks the first system function it calls that is
  defined outside the binding file); `py::overload_cast<...>(&f)` points at f. Properties and
  fields (`def_readwrite`, `def_property`) are not read: Python reads them as attributes, never
  calls them.
- nanobind (mechanism "nanobind": MLX, TensorRT-LLM), written as pybind11 is: `NB_MODULE(<module>,
  m)`, `nb::class_`/`nb::enum_`, `.def`/`.def_static`, `nb::overload_cast`, lambdas, with the
  namespace as the file names it (`nb`, `nanobind`, its own alias). nanobind code also keeps
  modules and classes in variables and chains `.def` on a module, and these are read for it
  (not for pybind11, whose evidence stays as it was): a submodule (`auto fft =
  m.def_submodule("fft")`, also in a function handed the module) binds `<...>.<module>.fft.name`;
  `auto cls = nb::class_<T>(m, "Name"); cls.def("meth", ...)` binds the methods. `def_rw`,
  `def_ro` and `def_prop_*` are attributes, as pybind11's are; `nb::init<...>` names nothing.
  A lambda's target is pybind11's, except that a function it calls named as the binding comes
  first, and the file's namespace aliases are written out (`m.def("add", [](...) { auto [a, b] =
  to_arrays(a_, b_); return mx::add(a, b, s); })` with `namespace mx = mlx::core;` points at
  `mlx::core::add`, not at the helper `to_arrays` of another binding file: MLX, 200 more targets).

Module names from the build. A torch C++ extension names its pybind11 module with the build's
macro (`PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)`: flash-attention, exllamav2, apex), whose value
is the extension's name in the build script: `CUDAExtension(name="flash_attn_2_cuda",
sources=["csrc/flash_attn/flash_api.cpp", ...])` in a setup.py, or torch's
`cpp_extension.load(name=..., sources=[...])`. This step's scanner reads such calls (names and
sources as string constants, module-level constants or `os.path.join`s of them); a module block in
a file that the sources of one extension list takes that extension's last name; else, when exactly
one extension's sources are all computed and no block writes its name, that one (said). One whose
module is an upper-case macro that no build script of the system explains stays unbound, and says so.
Python reaches such a module by an import statement, or by a name a call binds to it: apex loads
``fused_layer_norm_cuda = importlib.import_module("fused_layer_norm_cuda")`` on first use, under
``global``, and a test builds ``syncbn = cpp_extension.load(name="syncbn", sources=[...])``
(:class:`ModuleLoad`); and it hands a module's function on without calling it there
(``multi_tensor_applier(amp_C.multi_tensor_scale, ...)``, ``self.op = amp_C.multi_tensor_adam``):
that binds as a call of the scope that names it, as an operator reference does (below).

References. Python also reaches an operator without calling it on the spot: `self.op =
torch.ops._C.gelu_fast` (called later through `self.op`). Such references are read by this step's
own scanner (an attribute chain `torch.ops.<ns>.<op>` that is not the callee of a call, found in
the module's shared index, :mod:`extractor.python.index`) and bound like calls, from the function
(or class body, or module) that holds them; a call `self.op(...)` in a method of the same class
is bound too, from that method.

Namespaces. Many builds name the library with a macro (`TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME,
ops)`, `CONCAT(TORCH_EXTENSION_NAME, _cache_ops)`) whose value only the build knows. Such a
registration matches a Python namespace that ends with its suffix (any namespace when the suffix is
empty, except PyTorch's own), by op name, when no registration that writes the namespace out
implements the op (a namespace written out in one build may be the macro's value in another).
When the same op name is registered by several such libraries, the extension's
stem (`_moe_C` -> `moe`) is matched against the directories of the registering files: a file under
`moe/` belongs to `_moe_C`; for a stem-less namespace (`_C`), files under another extension's stem
directory are set aside. Each edge's record says whether the namespace was read or inferred.
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import msgspec

from extractor import cpp, naming, python
from extractor.context import Context, SourceFile
from extractor.cpp.ops import OpRegistration, PyBinding
from extractor.model import (Contribution, Diagnostic, Edge, EdgeKind, Language, NodeKind, ParsedFile, Severity,
                             Step)
from extractor.bindings.cmake_defines import BuildDefinition, cmake_definitions, defined_for
from extractor.bindings.python_ctypes import (EXPORTED_BY, CtypesBinding, CtypesFacts, CtypesFile, CtypesResult,
                                              bind_ctypes, scan_ctypes)
from extractor.bindings.python_ops import (OpRegistrations, PyOpFile, PythonOp, PythonOps, python_registrations,
                                           scan_registrations)
from extractor.cpp.swig import SwigModule, low_level_module, swig_diagnostic
from extractor.cpp.tfops import TENSORFLOW_OP
from extractor.cpp.torchclasses import MODULE as TORCH_CLASSES, TORCHSCRIPT
from extractor.bindings.python_tvm_ffi import TvmFfiBinding, TvmFfiFacts, TvmFfiFile, TvmFfiResult, bind_tvm_ffi, \
    scan_tvm_ffi
from extractor.python.expr import name_chain
from extractor.python.facts import Call
from extractor.python.graph import CallSite
from extractor.python.index import PARAMETER, RETURNS, module_index

_TORCH_OPS = "torch.ops."
# PyTorch's own operator namespaces: never a library named by a build macro of the system.
# (quantized_decomposed: torch.ao's `Library("quantized_decomposed", "DEF")`, which ExecuTorch's kernels implement)
_TORCH_NAMESPACES = frozenset({"aten", "prim", "prims", "higher_order", "quantized", "quantized_decomposed", "c10d",
                               "_c10d_functional", "_c10d_functional_autograd", "_quantized",
                               "profiler", "_test", "inductor", "symm_mem", "mkldnn", "onednn"})


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Binding:
    """One Python call site bound to one C++ function (or class), or to the Python function
    registered as the torch operator it calls."""

    path: str  # the Python call site
    line: int
    caller: str
    callee: str  # as Python wrote it: `torch.ops._C.rms_norm`
    target: str  # C++ node id (a Python one for "torch-op-python")
    # "torch-op", "torch-op-python", "pybind11", "nanobind", "paddle-op", "ctypes", "cffi", "tvm-ffi",
    # "tvm-ffi-python" or "swig" (extractor.bindings.swig)
    mechanism: str
    # "csrc/torch_bindings.cpp:120", "vllm/attention/layer.py:496"; ctypes: the call loading the library
    registered_at: str
    dispatch: str  # "torch::kCUDA", "Meta", "" (any) for torch ops; "" for the others
    # "read" (literal in C++), "inferred" (from a build macro) or "" for pybind11 and nanobind; ctypes:
    # "inferred" (which library file holds the function is not read: its C name decides); TVM FFI:
    # "read" (the global's name is a literal on both sides); ``callee`` is then that name
    namespace: str


@dataclasses.dataclass(frozen=True, slots=True)
class BindingsShared:
    """What the binding step shares with later steps: every binding it made."""

    bindings: tuple[Binding, ...]


def extract_bindings(ctx: Context) -> Contribution[BindingsShared]:
    """The pipeline entry: call sites of the Python step (and the operator references this step's
    scanner found) x registrations of the C++ step."""
    py_result, cpp_result = ctx.result_if_run(python.STEP), ctx.result_if_run(cpp.STEP)
    py_shared = py_result.shared if py_result is not None else None
    cpp_shared = cpp_result.shared if cpp_result is not None else None
    call_sites = py_shared.call_sites if py_shared is not None else ()
    call_sites += tuple(_reference_sites(ctx, py_result))
    ops = cpp_shared.op_registrations if cpp_shared is not None else ()
    pybind = cpp_shared.pybind_bindings if cpp_shared is not None else ()
    # TVM FFI globals are named by a dotted string, not by a module Python imports: bound apart
    tvm_globals = tuple(b for b in pybind if b.mechanism == "tvm-ffi")
    # functions a library exports to TVM FFI, and TensorFlow ops' kernels, are attributes of the module
    # Python loads (tvm_ffi.load_module, tf.load_op_library): bound as ctypes' are
    exports = tuple(b for b in pybind if b.mechanism in ("tvm-ffi-export", TENSORFLOW_OP))
    pybind = tuple(b for b in pybind if b.mechanism not in ("tvm-ffi", "tvm-ffi-export", TENSORFLOW_OP))
    unnamed: list[Diagnostic] = []
    if pybind:
        # TorchScript's classes are named by torch, `torch.classes.<ns>.<Name>`: no build names their module
        torch_classes = tuple(b for b in pybind if b.mechanism == TORCHSCRIPT)
        pybind, unnamed = named_by_build(tuple(b for b in pybind if b.mechanism != TORCHSCRIPT),
                                         _extension_sources(ctx),
                                         lambda macros: cmake_definitions(((s.root, s.label) for s in ctx.sources),
                                                                          macros), _computed_extensions(ctx))
        # calls of names imported from a pybind11 module: the Python step found no module there; and
        # methods called on an instance of a TorchScript class (`self.op = torch.classes.ns.Op(...)`)
        index = PyBindIndex(pybind + torch_classes)
        call_sites += native_call_sites(ctx, {TORCH_CLASSES} if torch_classes else set(),
                                        frozenset(b.module.partition(".")[0] for b in pybind if b.target),
                                        lambda dotted: bool(index.lookup(dotted)),
                                        lambda dotted: any(b.kind != "class" for b in index.lookup(dotted)))
        pybind += torch_classes
    python_ops = _python_registrations(ctx, py_result)
    bound = bind_call_sites(call_sites, ops, pybind, python_ops.ops)
    if pybind:
        bound = _with_bound_bases(ctx, bound, pybind, py_shared.nodes if py_shared is not None else {})
    libraries = _ctypes_bindings(ctx, py_result, cpp_result, exports)
    globals_ = _tvm_ffi_bindings(ctx, py_result, tvm_globals)
    earlier = bound.shared.bindings if bound.shared is not None else ()
    paddle, paddle_stats = _paddle_ops_by_name(ctx, py_result, pybind, earlier)
    generated, generated_stats = _tensorflow_generated_ops(ctx, py_result, exports, earlier)
    by_name = paddle + generated  # bound by an op's name, no module read
    swig_notes = _swig_notes(ctx, cpp_shared.swig_modules if cpp_shared is not None else (),
                             tuple(b for b in pybind if b.mechanism == "swig"),
                             bound.shared.bindings if bound.shared else ())
    stats = dict(sorted({**bound.stats, **python_ops.stats, **libraries.stats, **globals_.stats,
                         **paddle_stats, **generated_stats}.items()))
    diagnostics = tuple(sorted((*bound.diagnostics, *unnamed, *python_ops.diagnostics, *libraries.diagnostics,
                                *swig_notes, *_absent_sources(ctx))))
    if libraries.edges or globals_.edges or by_name:
        bindings = tuple(sorted({*earlier, *(_as_binding(b) for b in libraries.bindings if b.target),
                                 *map(_global_as_binding, globals_.bindings), *by_name}))
        edges = tuple(sorted({*bound.edges, *libraries.edges, *globals_.edges,
                              *(Edge(b.caller, b.target, EdgeKind.BINDS, b.path, b.line) for b in by_name)}))
        stats["binds_edges"] = sum(e.kind is EdgeKind.BINDS for e in edges)  # not a bound base's `inherits`
        bound = dataclasses.replace(bound, edges=edges, shared=BindingsShared(bindings))
    return dataclasses.replace(bound, diagnostics=diagnostics, stats=stats)


def _swig_notes(ctx: Context, modules: tuple[SwigModule, ...], bindings: tuple[PyBinding, ...],
                bound: tuple[Binding, ...]) -> list[Diagnostic]:
    """One diagnostic per module of the system's SWIG interface files (extractor.cpp.swig): what it
    binds, the Python calls that reach it (or where it is imported, when none does), what of it is
    not read."""
    if not modules:
        return []
    # the low-level module's flat names (`_swigvs.FlatIndex_add`, extractor.cpp.swig) are its module's
    proxy_of = {low_level_module(m.module): m.module for m in modules}
    by_module: dict[str, list[PyBinding]] = collections.defaultdict(list)
    for b in bindings:
        by_module[b.module].append(b)  # the proxy's names: what the module's diagnostic counts
    module_at = {f"{b.path}:{b.line}": proxy_of.get(b.module, b.module) for b in bindings}
    sites = {(b.path, b.line, b.caller, b.callee, module_at.get(b.registered_at, "")) for b in bound
             if b.mechanism == "swig"}
    calls = collections.Counter(site[-1] for site in sites)
    quiet = {m.module for m in modules if not calls[m.module]}
    imported_at: dict[str, list[str]] = collections.defaultdict(list)  # `import x.NAME`, `from x import NAME`
    for f, facts in ctx.facts("python", Language.PYTHON) if quiet else ():
        for imp in facts.imports:
            name = imp.name if imp.name in quiet else imp.module.rpartition(".")[2]
            if name in quiet:
                imported_at[name].append(f"{f.path}:{imp.line}")
    return [swig_diagnostic(m, by_module[m.module], calls[m.module], imported_at[m.module]) for m in modules]


def _paddle_ops_by_name(ctx: Context, python: Contribution[Any] | None, registrations: tuple[PyBinding, ...],
                        bound: tuple[Binding, ...]) -> tuple[list[Binding], dict[str, int]]:
    """Python calls of Paddle operators that no module name the build reads binds, bound by the
    operator's name (namespace "inferred").

    Paddle keeps its custom operators in one registry per process, by name (a second registration
    of a name fails), and the module a build makes of them is often reached under another name:
    a package that copies the module's functions into its own namespace at import time
    (FastDeploy's ``import_custom_ops(PACKAGE, ".fastdeploy_ops", globals())``, then ``from
    fastdeploy.model_executor.ops.gpu import append_attention``), a meta-path hook that builds the
    module on first use (Paddle3D's ``from paddle3d.ops import iou3d_nms``), or a build whose
    sources are computed. So a call binds when, through its file's imports, it names
    ``<package>.<...>.<op>``: ``<package>`` one of the system's own Python packages, the whole
    name no definition (nor re-export) of the system's Python, and ``<op>`` a registered operator,
    to each kernel registered under that name (CPU and GPU builds register their own)."""
    by_name: dict[str, list[PyBinding]] = collections.defaultdict(list)
    for b in registrations:
        if b.mechanism == "paddle-op" and b.target:
            by_name[b.name].append(b)
    shared = python.shared if python is not None else None
    if not by_name or shared is None:
        return [], {}
    nodes, reexported = shared.nodes, shared.reexported
    done = {(b.path, b.line, b.caller) for b in bound if b.mechanism == "paddle-op"}
    found: list[Binding] = []
    calls = 0
    for f, call, dotted in _imported_calls(ctx):
        package, _, op = dotted.rpartition(".")
        node, top = naming.py_id(dotted), nodes.get(naming.py_id(package.partition(".")[0]))
        # a package of the system is a module node (one outside it is an "external" node)
        if op not in by_name or top is None or top.kind is not NodeKind.MODULE or node in nodes \
                or node in reexported:
            continue
        caller = naming.py_id(f"{f.module}.{call.scope}" if call.scope else f.module)
        if (f.path, call.line, caller) in done:
            continue
        calls += 1
        found.extend(Binding(f.path, call.line, caller, dotted, b.target, "paddle-op", f"{b.path}:{b.line}", "",
                             "inferred") for b in by_name[op])
    return sorted(set(found)), ({"paddle_op_calls_inferred": calls} if calls else {})


def _imported_calls(ctx: Context) -> Iterator[tuple[SourceFile, Any, str]]:
    """(file, call, the dotted name it calls) of every Python call whose head is a name the file
    imports (``gen_x_op.op(...)`` -> ``pkg.ops.gen_x_op.op``)."""
    imported = ctx.once(imported_by_path)
    for f, facts in ctx.facts("python", Language.PYTHON):
        names = imported.get(f.path, {})
        for call in facts.calls:
            head, _, rest = call.callee.partition(".")
            if head in names:
                yield f, call, names[head] + (f".{rest}" if rest else "")


_GENERATED_OP_MODULE = re.compile(r"gen_\w+")


def _tensorflow_generated_ops(ctx: Context, python: Contribution[Any] | None, exports: tuple[PyBinding, ...],
                              bound: tuple[Binding, ...]) -> tuple[list[Binding], dict[str, int]]:
    """Python calls of TensorFlow ops through the wrapper module the build generates for an op
    library, bound to the op's kernel (``Compute``, :mod:`extractor.cpp.tfops`; namespace "inferred").

    Bazel's ``tf_gen_op_wrapper_py`` (and TensorFlow's own ``gen_*_ops``) writes a module
    ``gen_<name>_op(s).py`` with one function per op the library registers, named in snake case
    (TensorFlow Serving's ``gen_remote_predict_op.tf_serving_remote_predict`` for
    ``REGISTER_OP("TfServingRemotePredict")``). No such file is in the tree: a call binds when, through
    its file's imports, it names ``<package>.<...>.gen_<x>.<op>``, ``<package>`` the top package of one of
    the system's Python modules, the module no module of the system, and ``<op>`` an op it registers a
    kernel for."""
    by_name: dict[str, list[PyBinding]] = collections.defaultdict(list)
    for b in exports:
        if b.mechanism == TENSORFLOW_OP and b.target:
            by_name[b.name].append(b)
    shared = python.shared if python is not None else None
    if not by_name or shared is None:
        return [], {}
    nodes = shared.nodes
    # the packages the system's modules are in (a Bazel tree's have no __init__.py: no package node)
    packages = {n.id[len("py:"):].partition(".")[0] for n in nodes.values() if n.kind is NodeKind.MODULE
                and n.id.startswith("py:")}
    done = {(b.path, b.line, b.caller) for b in bound if b.mechanism == TENSORFLOW_OP}
    found: list[Binding] = []
    calls = 0
    for f, call, dotted in _imported_calls(ctx):
        module, _, op = dotted.rpartition(".")
        if op not in by_name or not _GENERATED_OP_MODULE.fullmatch(module.rpartition(".")[2]) \
                or module.partition(".")[0] not in packages or naming.py_id(module) in nodes:
            continue
        caller = naming.py_id(f"{f.module}.{call.scope}" if call.scope else f.module)
        if (f.path, call.line, caller) in done:
            continue
        calls += 1
        found.extend(Binding(f.path, call.line, caller, dotted, b.target, TENSORFLOW_OP, f"{b.path}:{b.line}",
                             "", "inferred") for b in by_name[op])
    return sorted(set(found)), ({"tensorflow_op_calls_generated": calls} if calls else {})


def _with_bound_bases(ctx: Context, bound: Contribution[BindingsShared], pybind: tuple[PyBinding, ...],
                      nodes: Mapping[str, Any]) -> Contribution[BindingsShared]:
    """``inherits`` edges from a Python class to the C++ class a native module binds as its base
    (chatglm.cpp's ``class Pipeline(_C.Pipeline)`` for ``py::class_<Pipeline>(m, "Pipeline")``):
    the Python step finds no module there (an extension has no ``.py`` file) and leaves the base
    unresolved. The base is read through the file's imports, then as a binding's Python name; and
    through a module of the system that re-exports it, by name or by a star import (rtp-llm's
    ``from rtp_llm.ops import ModelConfig as CppModelConfig``, where ``rtp_llm/ops/__init__.py`` imports
    it from the extension module ``libth_transformer_config``)."""
    files = [(f, facts.bases) for f, facts in ctx.facts("bindings", Language.PYTHON) if facts and facts.bases]
    if not files:
        return bound
    index = PyBindIndex(pybind)
    imported = ctx.once(imported_by_path)
    python_files = list(ctx.facts("python", Language.PYTHON))
    reexported = {f"{f.module}.{local}": dotted for f, _facts in python_files
                  for local, dotted in imported.get(f.path, {}).items() if index.lookup(dotted)}
    system = {f.module for f, _facts in python_files}
    extensions = {b.module.partition(".")[0] for b in pybind if b.target}
    starred = _star_sources([(f, facts, {}) for f, facts in python_files],
                            lambda dotted: dotted.partition(".")[0] in extensions and dotted not in system)
    edges, stats = [], collections.Counter[str]()
    for f, bases in files:
        names = imported.get(f.path, {})
        for base in bases:
            head, dot, rest = base.base.partition(".")
            source = f"py:{f.module}.{base.qualname}"
            if head not in names or source not in nodes:
                continue
            dotted = names[head] + dot + rest
            if not index.lookup(dotted):
                dotted = _through_star_imports(_through_reexport(dotted, reexported), starred,
                                               lambda name: bool(index.lookup(name)))
            for b in index.lookup(dotted):
                if b.kind == "class":
                    edges.append(Edge(source, b.target, EdgeKind.INHERITS, f.path, base.line))
                    stats[f"{'pybind' if b.mechanism == 'pybind11' else b.mechanism}_bases_bound"] += 1
    if not edges:
        return bound
    return dataclasses.replace(bound, edges=tuple(sorted({*bound.edges, *edges})),
                               stats=dict(sorted({**bound.stats, **stats}.items())))


def _tvm_ffi_bindings(ctx: Context, python: Contribution[Any] | None, registrations: tuple[PyBinding, ...]
                      ) -> TvmFfiResult:
    """Python's uses of TVM FFI globals bound to the functions C++ (or Python) registers under
    their names (:mod:`extractor.bindings.python_tvm_ffi`)."""
    scanned = {f.path: facts.tvm_ffi for f, facts in ctx.facts("bindings", Language.PYTHON)
               if facts is not None and facts.tvm_ffi is not None}
    if not (scanned or registrations) or python is None or python.shared is None:
        return TvmFfiResult((), (), {})
    imported = ctx.once(imported_by_path)
    files = [TvmFfiFile(f.module, f.path, scanned.get(f.path), facts.calls, imported[f.path])
             for f, facts in ctx.facts("python", Language.PYTHON) if f.path in imported]
    return bind_tvm_ffi(files, registrations, python.shared.nodes)


def _global_as_binding(b: TvmFfiBinding) -> Binding:
    """A TVM FFI binding as the step shares it: the global's name is read on both sides."""
    return Binding(b.path, b.line, b.caller, b.name, b.target, b.mechanism, b.registered_at, "", "read")


def _ctypes_bindings(ctx: Context, python: Contribution[Any] | None, native: Contribution[Any] | None,
                     exports: tuple[PyBinding, ...] = ()) -> CtypesResult:
    """The functions of libraries loaded through ctypes (or cffi's dlopen, or TVM FFI's load_module:
    ``exports``, the functions C++ exports to it) bound to the system's C/C++
    (:mod:`extractor.bindings.python_ctypes`)."""
    scanned = {f.path: facts.ctypes for f, facts in ctx.facts("bindings", Language.PYTHON)
               if facts is not None and facts.ctypes is not None}
    if not scanned or python is None or python.shared is None:
        return CtypesResult((), (), (), {})
    imported = ctx.once(imported_by_path)
    files = [CtypesFile(f.module, f.path, scanned.get(f.path), facts.calls, facts.types, imported[f.path])
             for f, facts in ctx.facts("python", Language.PYTHON) if f.path in imported]
    c_nodes = native.nodes if native is not None else ()
    shared = native.shared if native is not None else None
    c_linkage, internal = (shared.c_linkage, shared.internal) if shared is not None else (frozenset(), frozenset())
    exported: dict[str, dict[str, list[str]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for b in exports:
        # by the mechanism of the library that holds it; "" for a function the C++ step did not find
        exported[EXPORTED_BY.get(b.mechanism, b.mechanism)][b.name].append(b.target)
    return bind_ctypes(files, python.shared.nodes, python.edges, c_nodes, c_linkage, internal, exported)


def _as_binding(b: CtypesBinding) -> Binding:
    """A ctypes binding as the step shares it: the library is inferred from the function's name."""
    return Binding(b.path, b.line, b.caller, b.callee, b.target, b.mechanism, b.loaded_at, "", "inferred")


def _python_registrations(ctx: Context, python: Contribution[Any] | None) -> PythonOps:
    """The operators the system's Python registers (:mod:`extractor.bindings.python_ops`)."""
    scanned = [(f, facts.registrations) for f, facts in ctx.facts("bindings", Language.PYTHON)
               if facts.registrations is not None]
    shared = python.shared if python is not None else None
    if not scanned or shared is None:
        return PythonOps((), (), {})
    imported = ctx.once(imported_by_path)
    files = [PyOpFile(f.module, f.path, registrations, imported[f.path])
             for f, registrations in scanned if f.path in imported]
    return python_registrations(files, shared.nodes, shared.reexported)


_BUILD_MACRO = re.compile(r"[A-Z][A-Z0-9_]*")  # TORCH_EXTENSION_NAME: no Python module is spelled so


def named_by_build(pybind: tuple[PyBinding, ...], extensions: dict[str, set[str]],
                   read_cmake: Callable[[frozenset[str]], list[BuildDefinition]] | None = None,
                   computed: Mapping[str, str] | None = None) -> tuple[tuple[PyBinding, ...], list[Diagnostic]]:
    """``pybind`` with the module of each block in a file that one extension's sources list (and of
    each function the block gives its module) renamed to that extension's last name (``extensions``:
    file path -> the last names of the extensions that list it), when it is written otherwise (a
    build macro); else to the value the system's CMake files (or Makefiles) give the macro for that file
    (``read_cmake``: the definitions of some macros, :mod:`extractor.bindings.cmake_defines`); else,
    when exactly one extension of the build scripts has sources the scanner cannot read and a name
    no block writes out (``computed``: last name -> "path:line" of each extension whose sources are
    computed: TransformerEngine's ``CppExtension(name="transformer_engine_torch",
    sources=all_files_in_dir(...))``), to that name, said (``pybind-module-inferred``); and a
    diagnostic for each file whose module is a build macro that no build script explains."""
    named: list[PyBinding] = []
    unexplained: dict[str, tuple[int, str, str]] = {}
    inferred: dict[str, tuple[int, str, str, str]] = {}  # path -> (line, macro, mechanism, extension)
    macros = frozenset(top for b in pybind if _BUILD_MACRO.fullmatch(top := b.module.partition(".")[0]))
    definitions = read_cmake(macros) if read_cmake is not None and macros else []
    written = {b.module.partition(".")[0] for b in pybind}
    candidates = sorted(set(computed or ()) - written)
    only = candidates[0] if len(candidates) == 1 else ""
    for b in pybind:
        # a function given the module registers on the module of the block that gave it
        names = extensions.get(b.block or b.path, set())
        top, dot, sub = b.module.partition(".")  # a submodule's (nanobind's `core.fft`) is below the extension's
        if len(names) == 1 and top not in names:
            b = dataclasses.replace(b, module=next(iter(names)) + dot + sub)
        elif top not in names and _BUILD_MACRO.fullmatch(top):
            found = defined_for(b.block or b.path, top, definitions)
            if found is not None:
                b = dataclasses.replace(b, module=found.value.rpartition(".")[2] + dot + sub)
            elif only and b.mechanism != "paddle-op":
                inferred[b.path] = min(inferred.get(b.path, (b.line, top, b.mechanism, only)),
                                       (b.line, top, b.mechanism, only))
                b = dataclasses.replace(b, module=only + dot + sub)
            else:
                unexplained[b.path] = min(unexplained.get(b.path, (b.line, top, b.mechanism)),
                                          (b.line, top, b.mechanism))
        named.append(b)
    diagnostics = [Diagnostic(path, line, "pybind-module-unnamed", _unnamed_message(mechanism, macro), Severity.INFO)
                   for path, (line, macro, mechanism) in sorted(unexplained.items())]
    diagnostics += [Diagnostic(path, line, "pybind-module-inferred",
                               f"the {mechanism} module of these bindings is named by the build macro {macro}, and no "
                               "Extension(...) or cpp_extension.load(...) of the system's build scripts lists this "
                               "file among its sources, nor does a CMake file or Makefile above it define the macro: "
                               f"taken to be {extension}, the only extension whose sources are computed "
                               f"({computed_at}) and whose name no module block writes out", Severity.INFO)
                    for path, (line, macro, mechanism, extension) in sorted(inferred.items())
                    for computed_at in [(computed or {}).get(extension, "")]]
    return tuple(named), diagnostics


def _unnamed_message(mechanism: str, macro: str) -> str:
    if mechanism == "paddle-op":
        return (f"these Paddle operators are functions of the module the build names ({macro}), and no "
                "setup(name=..., ext_modules=...), Extension(...) or cpp_extension.load(...) of the system's "
                "build scripts lists this file among its sources: a Python call binds to them by the operator's "
                "name alone (namespace \"inferred\"), where it names something of the system's packages that "
                "its Python does not define")
    return (f"the {mechanism} module of these bindings is named by the build macro {macro}, and "
            "no Extension(...) or cpp_extension.load(...) of the system's build scripts lists "
            "this file among its sources, nor does a CMake file or Makefile above it define the macro: "
            "Python calls into it are not bound")


def _absent_sources(ctx: Context) -> list[Diagnostic]:
    """One diagnostic per extension a build script declares with sources that are not in the tree:
    files a generator writes before the build (AutoGPTQ's ``cQIGen`` from ``backend.cpp``, which its
    ``generate.py`` writes), or kept elsewhere. What they register is never read, so Python's calls
    into the extension bind nowhere: said at the declaration, not left a silent miss."""
    out = []
    for f, facts in ctx.facts("bindings", Language.PYTHON):
        if facts is None or not facts.extensions:
            continue
        root = ctx.source_root(f)
        folder = posixpath.dirname(f.rel)
        for build in facts.extensions:
            listed = [posixpath.normpath(posixpath.join(folder, source)) for source in build.sources
                      if not posixpath.isabs(source)]
            missing = [source for source in listed if not source.startswith("../") and not (root / source).is_file()]
            if missing:
                shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
                out.append(Diagnostic(
                    f.path, build.line, "extension-source-absent",
                    f"extension {build.name} is built from {len(listed)} source file(s), {len(missing)} not in the "
                    f"tree ({shown}): written by the build (a generator run first) or kept elsewhere; what they "
                    f"register is not read, and Python calls into {build.name} bind nowhere", Severity.INFO))
    return out


def _computed_extensions(ctx: Context) -> dict[str, str]:
    """The last name of each extension the system's build scripts declare without a source the
    scanner can read (a list computed at run time) -> "path:line" of its declaration."""
    out: dict[str, str] = {}
    for f, facts in ctx.facts("bindings", Language.PYTHON):
        for build in facts.extensions if facts is not None else ():
            if not build.sources:
                out.setdefault(build.name.rpartition(".")[2], f"{f.path}:{build.line}")
    return out


def _extension_sources(ctx: Context) -> dict[str, set[str]]:
    """Each source file the system's build scripts list -> the last names of the extensions they
    build from it (paths relative to the script's directory, as the build reads them)."""
    out: dict[str, set[str]] = collections.defaultdict(set)
    for f, facts in ctx.facts("bindings", Language.PYTHON):
        if facts is None:
            continue
        folder = posixpath.dirname(f.path)
        for build in facts.extensions:
            for source in build.sources:
                out[posixpath.normpath(posixpath.join(folder, source))].add(build.name.rpartition(".")[2])
    return out


def bind_call_sites(call_sites: Iterable[Any], ops: Iterable[OpRegistration],
                    pybind: Iterable[PyBinding], python_ops: Iterable[PythonOp] = ()) -> Contribution[BindingsShared]:
    """`binds` edges from ``call_sites`` (CallSite-shaped: caller, callee, path, line).

    An operator that Python registers (``python_ops``) binds to its Python function; when C++
    registers it too, a C++ implementation under the namespace as written keeps its edge beside
    the Python one (both run, by dispatch key), while one matched only through a build macro's
    namespace gives way to the Python registration, which names the namespace itself."""
    # each site once; in no order, since every list this returns is sorted
    sites = {CallSite(s.caller, s.callee, s.path, s.line) if not isinstance(s, CallSite) else s for s in call_sites}
    torch_index = _TorchOpIndex(tuple(ops), sites)
    in_python: dict[tuple[str, str], list[PythonOp]] = collections.defaultdict(list)
    for python_op in python_ops:
        in_python[python_op.namespace, python_op.op].append(python_op)
    py_index = PyBindIndex(tuple(pybind))
    # a binding of a function the system does not define (a lambda that calls only MLIR's, a method of
    # a library's class: `py::class_<mlir::Block>(m, "block").def("get_parent", &Block::getParent)`):
    # the calls that reach it are counted, not bound
    outside = PyBindIndex(tuple(pybind), resolved=False)
    bindings: list[Binding] = []
    stats: collections.Counter[str] = collections.Counter()
    diagnostics: list[Diagnostic] = []
    for site in sites:
        if site.callee.startswith(_TORCH_OPS):
            parts = site.callee[len(_TORCH_OPS):].split(".")
            if len(parts) < 2 or "(" in parts[0] or "(" in parts[1]:
                continue  # ``out = torch.ops.ns.op(...)`` then ``out.reshape(...)``: a method of what it returned
            stats["torch_op_calls"] += 1
            ns, op = parts[0], parts[1]
            found, how = torch_index.lookup(ns, op)
            python_found = [p for p in in_python.get((ns, op), ()) if p.target]
            if (ns, op) in in_python and not python_found and how != "read":
                stats["torch_op_calls_python_function_unresolved"] += 1  # registered, its function not found
                continue
            if python_found:
                stats["torch_op_calls_bound_python"] += 1
                for p in python_found:
                    bindings.append(Binding(site.path, site.line, site.caller, site.callee, p.target,
                                            "torch-op-python", f"{p.path}:{p.line}", p.dispatch, "read"))
                if how != "read":
                    continue  # no C++ implementation under this namespace as written
            if not found and how == "unregistered" and ns in _TORCH_NAMESPACES:
                stats["torch_op_calls_torch_own"] += 1  # PyTorch's own operator (aten.mm): a call into torch
                continue
            if not found:
                stats["torch_op_calls_unregistered" if how == "unregistered" else
                      "torch_op_calls_without_impl"] += 1
                unresolved = torch_index.unresolved_kernels.get((ns, op)) if how == "no-impl" else None
                if unresolved is not None:
                    diagnostics.append(Diagnostic(
                        site.path, site.line, "binding-without-impl",
                        f"torch.ops.{ns}.{op} is registered by a kernel YAML ({unresolved.path}:{unresolved.line}) "
                        f"whose kernel function {unresolved.function} the system does not define", Severity.INFO))
                elif how == "no-impl":
                    diagnostics.append(Diagnostic(
                        site.path, site.line, "binding-without-impl",
                        f"torch.ops.{ns}.{op} is declared in C++ (ops.def) but no implementation "
                        "function is registered for it", Severity.INFO))
                else:
                    diagnostics.append(Diagnostic(
                        site.path, site.line, "torch-op-unregistered",
                        f"the system registers no operator torch.ops.{ns}.{op} that archdiff reads (torch's own, "
                        "another library's, or one registered in a way not read): the call binds nowhere",
                        Severity.INFO))
                continue
            stats["torch_op_calls_bound"] += 1
            for reg in found:
                bindings.append(Binding(site.path, site.line, site.caller, site.callee, reg.target,
                                        "torch-op", f"{reg.path}:{reg.line}", reg.dispatch, how))
        else:
            named = py_index.lookup(site.callee)
            for b in named:
                mechanism = b.mechanism.replace("-", "_")  # paddle-op: paddle_op_calls_bound
                stats["pybind_calls_bound" if b.mechanism == "pybind11" else f"{mechanism}_calls_bound"] += 1
                bindings.append(Binding(site.path, site.line, site.caller, site.callee, b.target,
                                        b.mechanism, f"{b.path}:{b.line}", "", ""))
            for b in outside.lookup(site.callee) if not named else ():
                mechanism = b.mechanism.replace("-", "_")
                stats["pybind_calls_to_functions_outside" if b.mechanism == "pybind11"
                      else f"{mechanism}_calls_to_functions_outside"] += 1
                break
    bindings = sorted(set(bindings))
    edges = sorted({Edge(b.caller, b.target, EdgeKind.BINDS, b.path, b.line) for b in bindings})
    stats["binds_edges"] = len(edges)
    stats["torch_ops_registered"] = len(torch_index.ops)
    return Contribution(edges=tuple(edges), diagnostics=tuple(sorted(diagnostics)),
                        stats=dict(sorted(stats.items())), shared=BindingsShared(tuple(bindings)))


class _TorchOpIndex:
    def __init__(self, ops: tuple[OpRegistration, ...], sites: Iterable[CallSite]) -> None:
        # a kernel YAML's kernel of PyTorch's own operator is another runtime's (ExecuTorch's), which no
        # Python call reaches: PyTorch's operator stays PyTorch's own
        ops = tuple(r for r in ops if not (r.via and r.namespace in _TORCH_NAMESPACES))
        self.ops = {(r.namespace or f"<{r.namespace_macro}>{r.namespace_suffix}", r.op) for r in ops}
        # implementations: impl registrations, or defs that name a function
        self.impls = [r for r in ops if r.target and (r.kind == "impl" or r.function)]
        # a kernel YAML's registrations whose function is not found, by operator: the first by place
        self.unresolved_kernels: dict[tuple[str, str], OpRegistration] = {}
        for r in sorted(ops):
            if r.via and not r.target:
                self.unresolved_kernels.setdefault((r.namespace, r.op), r)
        self.defined = {(r.namespace, r.namespace_suffix, r.namespace_macro, r.op) for r in ops}
        python_namespaces = {s.callee[len(_TORCH_OPS):].split(".")[0] for s in sites
                             if s.callee.startswith(_TORCH_OPS)}
        suffixes = {r.namespace_suffix for r in ops if r.namespace_suffix}
        self.stems = {_stem(ns, suffixes) for ns in python_namespaces} - {""}
        self.suffixes = suffixes

    def lookup(self, ns: str, op: str) -> tuple[list[OpRegistration], str]:
        literal = [r for r in self.impls if r.namespace == ns and r.op == op]
        if literal:
            return literal, "read"
        if ns in _TORCH_NAMESPACES:
            inferred = []  # torch's own namespaces are no build macro's
        else:
            # A namespace written out may be a macro's too: vLLM 0.34 writes `_C` out in its CUDA
            # build (STABLE_TORCH_LIBRARY_FRAGMENT(_C, ops)) and names it TORCH_EXTENSION_NAME in
            # its CPU build. An op no block written out implements is looked up among the macros'.
            inferred = [r for r in self.impls if not r.namespace and r.op == op
                        and ns.endswith(r.namespace_suffix) and ns != r.namespace_suffix]
        if inferred:
            # the longest matching suffix wins: `_C_cache_ops` is the `_cache_ops` library, not `_C`
            longest = max(len(r.namespace_suffix) for r in inferred)
            inferred = [r for r in inferred if len(r.namespace_suffix) == longest]
            return self._by_directory(ns, inferred), "inferred"
        declared = any(op == d[3] and (d[0] == ns or (not d[0] and ns.endswith(d[1])))
                       for d in self.defined)
        return [], "no-impl" if declared else "unregistered"

    def _by_directory(self, ns: str, regs: list[OpRegistration]) -> list[OpRegistration]:
        if len({r.target for r in regs}) <= 1:
            return regs
        stem = _stem(ns, self.suffixes)
        if stem:
            mine = [r for r in regs if stem in r.path.split("/")[:-1]]
        else:
            mine = [r for r in regs if not self.stems & set(r.path.split("/")[:-1])]
        return mine or regs


def _stem(ns: str, suffixes: set[str]) -> str:
    """`_moe_C` -> `moe`, `_C` -> ``, `_C_cache_ops` -> `` (library suffixes removed)."""
    for suffix in sorted(suffixes, key=len, reverse=True):
        if ns.endswith(suffix) and ns != suffix:
            ns = ns[: -len(suffix)]
            break
    core = ns.strip("_")
    if core.endswith("_C"):
        core = core[:-2]
    elif core == "C":
        core = ""
    return core.strip("_")


class PyBindIndex:
    """Python-visible names of native bindings (pybind11 here, PyO3 in :mod:`extractor.bindings.ffi`),
    looked up by the dotted callee of a Python call site."""

    def __init__(self, bindings: tuple[PyBinding, ...], resolved: bool = True) -> None:
        """The bindings whose C++ function the system defines (``resolved``), else the others."""
        self.by_key: dict[tuple[str, ...], list[PyBinding]] = collections.defaultdict(list)
        for b in bindings:
            if bool(b.target) != resolved:
                continue
            # a submodule's names (nanobind's `core.fft`) are keyed by each of its module's names
            module = tuple(b.module.split("."))
            key = (*module, b.owner, b.name) if b.kind == "method" else (*module, b.name)
            self.by_key[key].append(b)
        self.modules = frozenset(key[0] for key in self.by_key)
        self.longest = max(map(len, self.by_key), default=0)  # 3 without submodules: module, class, method

    def lookup(self, callee: str) -> list[PyBinding]:
        """The bindings ``callee`` calls. ``Name()`` in it is an instance of the class ``Name``
        (``ext.Engine().step``: the Python graph's call of a method on a value it knows the class
        of): a method of the class binds, the class itself (its constructor) does not."""
        parts = callee.split(".")
        instance = max((i for i, part in enumerate(parts) if part.endswith("()")), default=-1)
        if instance >= 0:
            parts = [part.removesuffix("()") for part in parts]
        for i, part in enumerate(parts):
            if part not in self.modules:  # every key starts with a module name: most parts are none
                continue
            for n in range(self.longest - 1, 0, -1):  # the longest key first: a method before its class
                key = (part, *parts[i + 1:i + 1 + n])
                if len(key) == n + 1 and i + n > instance and key in self.by_key:
                    return self.by_key[key]
        return []


def native_call_sites(ctx: Any, extension_modules: set[str], named: frozenset[str] = frozenset(),
                      registered: Callable[[str], bool] | None = None,
                      referenced: Callable[[str], bool] | None = None) -> tuple[CallSite, ...]:
    """Python calls of names imported from a native extension module of the system.

    The Python step resolves calls against the system's own Python modules; an extension module
    (``fastok._native``) has no ``.py`` file, so a call of ``Tokenizer`` imported from it is a name
    that module "lacks" there and gives no call site. Here the file's imports are read again and
    a call whose head was imported from (or below) an extension module becomes a call site: one of
    ``extension_modules`` (dotted), or a module whose last name is one of ``named`` (a pybind11
    module knows only that: ``PYBIND11_MODULE(_ext, m)``) and that is no Python module of the system.
    So does a method called on a name the code says holds one class of such a module (a local
    assigned ``Tokenizer(..)``, a parameter annotated ``Tokenizer``, a ``self.X`` assigned in any
    method of the class), as ``fastok._native.Tokenizer().encode``: the Python graph gives that
    form for an extension module outside the system's packages, and :meth:`PyBindIndex.lookup`
    binds it to the method only.

    With ``referenced`` (is a dotted name a function of an extension module?), a function of an
    extension module named through the file's imports without being called where it stands is a
    call site too, of the scope that names it: apex hands ``amp_C.multi_tensor_scale`` to
    ``multi_tensor_applier``, which calls it (``self.op = amp_C.multi_tensor_adam`` then
    ``multi_tensor_applier(self.op, ...)``). A class so named (``isinstance(x, _C.Engine)``) is not.
    """
    out: list[CallSite] = []
    files = list(ctx.facts("python", Language.PYTHON))
    system = {f.module for f, _facts in files} if named else set()

    def native(dotted: str) -> bool:
        return any(dotted.startswith(m + ".") for m in extension_modules) or \
            bool(named and _below_named_extension(dotted, named, system))

    def extension(dotted: str) -> bool:  # the extension module itself
        return dotted in extension_modules or \
            bool(named and dotted.rpartition(".")[2] in named and dotted not in system)

    # each file's names bound by its imports; and the names a module re-exports from an extension
    # module (a package's `from ._ext import Translator`, called as `ctranslate2.Translator`), or
    # bound to the module itself (xgrammar's `from . import xgrammar_bindings as _core`, which
    # other modules import as `from .base import _core`)
    imported = ctx.once(imported_by_path)
    bindings = [(f, facts, imported[f.path]) for f, facts in files]
    reexported = {f"{f.module}.{local}": dotted for f, _facts, bound in bindings
                  for local, dotted in bound.items() if native(dotted) or extension(dotted)}
    # a module that star-imports extension modules (rtp-llm's `compute_ops`: `from librtp_compute_ops import *`,
    # `from librtp_compute_ops.rtp_llm_ops import *`) re-exports each name they register; the last import wins
    starred = _star_sources(bindings, lambda dotted: native(dotted) or extension(dotted)) if registered else {}
    def native_class(type_texts: set[str], bound: dict[str, str]) -> str | None:
        """The class of an extension module that a name's recorded types name, when they name that
        one class only (``None`` aside): a name the code also gives a Python class (or anything
        else) could hold either, and its calls are not bound by a guess."""
        found = set()
        for text in type_texts:
            if text in ("None", "NoneType"):
                continue
            head, _, rest = text.partition(".")
            dotted = bound[head] + (rest if rest.startswith("()") else f".{rest}" if rest else "") if head in bound else ""
            dotted = dotted if not dotted or native(dotted) else _through_reexport(dotted, reexported)
            if not dotted or not native(dotted):
                return None
            found.add(dotted)
        return found.pop() if len(found) == 1 else None

    attributes = {f.path: facts.attributes for f, facts in ctx.facts("bindings", Language.PYTHON)
                  if facts and facts.attributes} if referenced is not None else {}
    for f, facts, bound in bindings:
        module = f.module  # one naming for every step (extractor.naming)
        held = _held_types(facts) if facts.types else {}
        for call in (*facts.calls, *attributes.get(f.path, ())):
            scope, line = call.scope, call.line
            callee = call.callee if isinstance(call, Call) else call.dotted
            if not isinstance(call, Call) and callee.partition(".")[0] not in bound:
                continue  # a name the file's imports bind only: its class's methods are called, not named
            head, _, rest = callee.partition(".")
            if not callee:
                continue
            if head.endswith("()") and head[:-2] in bound:  # `Matcher().accept(..)`: a method of an instance
                head, rest = head[:-2], "()." + rest
            if head not in bound:
                # a method called on a value of an extension class: `tok = Tokenizer(..)` or
                # `tok: Tokenizer` then `tok.encode(..)`; `self.tok = Tokenizer(..)` then `self.tok.encode(..)`
                name, method = (f"self.{rest.partition('.')[0]}", rest.partition(".")[2]) if head == "self" \
                    else (head, rest)
                where = scope.rpartition(".")[0] if head == "self" else scope
                cls = native_class(held.get((where, name), set()), bound) if method else None
                if cls is not None:
                    caller = f"py:{module}.{scope}" if scope else f"py:{module}"
                    out.append(CallSite(caller, f"{cls}().{method}", f.path, line))
                continue
            dotted = bound[head] + (rest if rest.startswith("()") else f".{rest}" if rest else "")
            if not native(dotted):
                dotted = _through_reexport(dotted, reexported)
                if not native(dotted) and starred and registered is not None:
                    dotted = _through_star_imports(dotted, starred, registered)
                if not native(dotted):
                    continue
            if not isinstance(call, Call) and referenced is not None and not referenced(dotted):
                continue
            caller = f"py:{module}.{scope}" if scope else f"py:{module}"
            out.append(CallSite(caller, dotted, f.path, line))
    return tuple(out)


def _star_sources(bindings: list[tuple[Any, Any, dict[str, str]]], native: Callable[[str], bool]
                  ) -> dict[str, list[str]]:
    """A module of the system -> the extension modules it star-imports at module level, in the
    order its lines run."""
    found: dict[str, list[tuple[int, str]]] = {}
    for f, facts, _bound in bindings:
        package = f.module if f.rel.endswith("__init__.py") else f.module.rpartition(".")[0]
        for imported in facts.imports:
            if imported.name != "*" or imported.scope or imported.typing_only:
                continue
            target = imported.module
            if imported.level:
                target = naming.resolve_relative(package, target, imported.level) or target
            if native(target):
                found.setdefault(f.module, []).append((imported.line, target))
    return {module: [target for _line, target in sorted(sources)] for module, sources in found.items()}


def _through_star_imports(dotted: str, starred: Mapping[str, list[str]], registered: Callable[[str], bool]) -> str:
    """``dotted`` (``pkg.ops.f``) as the extension module that ``pkg.ops`` star-imports last among
    those that register its name (``ext.sub.f``); itself when none does."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        sources = starred.get(".".join(parts[:cut]))
        if sources:
            rest = ".".join(parts[cut:])
            return next((f"{source}.{rest}" for source in reversed(sources) if registered(f"{source}.{rest}")),
                        dotted)
    return dotted


def _held_types(facts: Any) -> dict[tuple[str, str], set[str]]:
    """The classes the code says a name holds (an annotation, or a class instantiated into it), by
    (function, name) for locals and parameters and by (class, ``self.X``) for attributes, which any
    method of the class reads."""
    held: dict[tuple[str, str], set[str]] = {}
    for typed in facts.types:
        if typed.type:
            where = typed.scope.rpartition(".")[0] if typed.name.startswith("self.") else typed.scope
            held.setdefault((where, typed.name), set()).add(typed.type)
    return held


def imported_by_path(ctx: Context) -> dict[str, dict[str, str]]:
    """Each Python file's names bound by its imports, by path, and those bound to a module by a
    call that imports it (:class:`ModuleLoad`), where no import binds the name; computed once per
    system (``ctx.once``) for the steps that resolve calls through them (this one, twice, and ffi)."""
    loads = {f.path: facts.loads for f, facts in ctx.facts("bindings", Language.PYTHON) if facts and facts.loads}
    out = {}
    for f, facts in ctx.facts("python", Language.PYTHON):
        names = _imported_names(f, facts)
        for load in loads.get(f.path, ()):
            names.setdefault(load.name, load.module)
        out[f.path] = names
    return out


def _imported_names(f: Any, facts: Any) -> dict[str, str]:
    """Local name -> the dotted name a file's imports bind it to (star imports left out)."""
    package = f.module if f.rel.endswith("__init__.py") else f.module.rpartition(".")[0]
    bound: dict[str, str] = {}
    for imported in facts.imports:
        target, level, name, asname = imported.module, imported.level, imported.name, imported.asname
        if level:
            target = naming.resolve_relative(package, target, level) or target
        dotted = f"{target}.{name}" if name else target
        if name == "*":
            continue
        local = asname or (name if name else target.split(".")[0])
        bound[local] = dotted if (name or asname) else target.split(".")[0]
    return bound


def _through_reexport(dotted: str, reexported: dict[str, str]) -> str:
    """``dotted`` with its longest prefix that a module re-exports from an extension module
    replaced by what it names there; itself when none is."""
    parts = dotted.split(".")
    for cut in range(len(parts), 1, -1):
        target = reexported.get(".".join(parts[:cut]))
        if target is not None:
            return ".".join([target, *parts[cut:]])
    return dotted


def _below_named_extension(dotted: str, named: frozenset[str], system: set[str]) -> bool:
    """``dotted`` names something inside a module whose last name is one of ``named`` and which is
    not a Python module of the system (``ctranslate2._ext.set_log_level``)."""
    parts = dotted.split(".")
    return any(parts[i] in named and ".".join(parts[:i + 1]) not in system for i in range(len(parts) - 1))


def _reference_sites(ctx: Context, python: Contribution[Any] | None) -> list[CallSite]:
    """`torch.ops.<ns>.<op>` references of every Python file, as call sites of their scope."""
    files = [(f, facts) for f, facts in ctx.facts("bindings", Language.PYTHON) if facts]
    if not files:
        return []
    known = python.shared.nodes if python is not None and python.shared is not None else {}
    sites = []
    for f, facts in files:
        module = f"py:{f.module}"
        for ref in facts.references:
            caller = f"{module}.{ref.scope}" if ref.scope else module
            # a scope the Python step has no node for (a lambda, a comprehension): its module
            sites.append(CallSite(caller if caller in known or not known else module, ref.dotted, f.path, ref.line))
    return sites


class OpReference(msgspec.Struct, frozen=True, array_like=True, order=True):
    """An operator named without being called where it stands (``self.op = torch.ops._C.gelu_fast``), or a
    function of an imported module called through an attribute holding the module (``self.ext.f(...)``)."""

    scope: str  # the qualname of the def it is written in (header included); "" at module level
    line: int
    dotted: str  # "torch.ops._C.gelu_fast"


class ExtensionBuild(msgspec.Struct, frozen=True, array_like=True, order=True):
    """A compiled extension a build script declares: ``CUDAExtension(name="flash_attn_2_cuda", sources=[...])``."""

    line: int
    name: str  # dotted, as the build names it
    sources: tuple[str, ...]  # those the scanner could read, relative to the script's directory


class ClassBase(msgspec.Struct, frozen=True, array_like=True, order=True):
    """A class statement's base written through an imported name (``class Pipeline(_C.Pipeline)``):
    it may be a class a native extension module binds."""

    qualname: str
    line: int
    base: str  # dotted, as written


class ModuleLoad(msgspec.Struct, frozen=True, array_like=True, order=True):
    """A name bound to a module by a call that imports or builds it, which Python then uses as the
    module: ``ext = importlib.import_module("fused_layer_norm_cuda")`` (also in a function, under
    ``global ext``: apex), ``ext = __import__("ext")``, ``ext = cpp_extension.load(name="ext",
    sources=[...])``."""

    line: int
    name: str  # the local name
    module: str  # dotted, as the call names it


class OpReferences(msgspec.Struct, frozen=True):
    references: tuple[OpReference, ...]  # sorted
    extensions: tuple[ExtensionBuild, ...] = ()  # sorted
    registrations: OpRegistrations | None = None  # operators registered in Python (extractor.bindings.python_ops)
    ctypes: CtypesFacts | None = None  # libraries loaded and their functions named (extractor.bindings.python_ctypes)
    tvm_ffi: TvmFfiFacts | None = None  # TVM FFI globals looked up and registered (extractor.bindings.python_tvm_ffi)
    bases: tuple[ClassBase, ...] = ()  # sorted
    loads: tuple[ModuleLoad, ...] = ()  # sorted
    # attribute chains on a name the file's imports (or loads) bind, not called where they stand
    # (``multi_tensor_applier(amp_C.multi_tensor_scale, ...)``): a native module's function handed on
    attributes: tuple[OpReference, ...] = ()  # sorted


def scan_op_references(parsed: ParsedFile) -> OpReferences | None:
    """Per-file scanner: attribute chains ``torch.ops.<ns>.<op>[...]`` that are not called where they
    stand, the extensions a build script declares with their sources, the operators Python
    registers, and the shared libraries loaded through ctypes with the functions named on them."""
    data = parsed.data
    operators = b"torch.ops." in data
    builds = b"Extension(" in data or (b"load(" in data and b"sources" in data)
    # a registration needs torch.library or a forwarder, and a forwarder is defined or imported
    registers = b"def " in data or b"import" in data
    if not (operators or builds or registers) or not isinstance(parsed.tree, ast.Module):
        return None
    index = module_index(parsed.tree)
    found = _operator_references(index) if operators else []
    if b"self." in data and b"import" in data:
        found.extend(_calls_through_held_modules(index))
    extensions = extension_builds(index) if builds else ()
    registrations = scan_registrations(index) if registers else None
    libraries = scan_ctypes(index, data)
    globals_ = scan_tvm_ffi(index, data)
    bases = _imported_bases(index) if b"class " in data else ()
    loads = _module_loads(index) if b"import_module(" in data or b"__import__(" in data or b"load(" in data \
        or b"load_inline(" in data else ()
    attributes = _imported_attributes(index, loads) if b"import" in data else ()
    if not (found or extensions or registrations or libraries or globals_ or bases or loads or attributes):
        return None
    return OpReferences(tuple(sorted(found)), extensions, registrations, libraries, globals_, bases, loads,
                        attributes)


_IMPORTING_CALLS = frozenset({"import_module", "importlib.import_module", "__import__"})


def _module_loads(index: Any) -> tuple[ModuleLoad, ...]:
    """The names bound, anywhere in the module, to what an import call (``importlib.import_module``,
    ``__import__``) or torch's JIT build (``cpp_extension.load(name=...)``, ``load_inline``) returns:
    a module, named by a string constant. A relative name (``import_module(".x", __package__)``) is
    not read; ``__import__("a.b")`` returns ``a``."""
    constants = _module_constants(index.tree)
    found = []
    for node in (*index.of(ast.Assign), *index.of(ast.AnnAssign)):
        call = node.value
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not isinstance(call, ast.Call) or len(targets) != 1 or not isinstance(targets[0], ast.Name):
            continue
        callee = name_chain(call.func) or ""
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        if callee in _IMPORTING_CALLS:
            module = _string(call.args[0] if call.args else keywords.get("name"), constants)
            if module and callee == "__import__":
                module = module.partition(".")[0]
        elif callee in _LOADING_CALLS and ({"sources", "cpp_sources"} & keywords.keys() or len(call.args) > 1):
            module = _string(call.args[0] if call.args else keywords.get("name"), constants)
        else:
            continue
        if module and all(part.isidentifier() for part in module.split(".")):
            found.append(ModuleLoad(node.lineno, targets[0].id, module))
    return tuple(sorted(found))


_ANNOTATION_PARTS = (PARAMETER, RETURNS)


def _imported_attributes(index: Any, loads: tuple[ModuleLoad, ...]) -> tuple[OpReference, ...]:
    """Attribute chains read (not called, not assigned, not in an annotation) on a name that an
    import of the module binds, in any scope, or that ``loads`` binds; each in the scope whose code
    runs it. Most name a library's attribute (``torch.float16``): the driver keeps those that name a
    function of the system's native modules. ``torch.ops.`` chains are operator references.

    The chains are found from their head, not by reading every attribute (most are ``self.x``): an
    Attribute's one child, its value, is the node after it in pre-order, so a chain's innermost link
    is an Attribute followed by its head Name, and its outer links are the Attributes just before
    that one. A Call's first child is its callee: a chain after a Call is called, and only its inner
    chain, if it has one, is read (``torch.cuda`` of ``torch.cuda.synchronize()``)."""
    heads = {alias.asname or alias.name.partition(".")[0] for node in index.of(ast.Import) for alias in node.names}
    heads |= {alias.asname or alias.name for node in index.of(ast.ImportFrom) for alias in node.names}
    heads |= {load.name for load in loads}
    heads.discard("*")
    if not heads:
        return ()
    nodes = index.nodes
    annotated: set[int] | None = None  # positions in a variable's annotation, found once a chain needs them
    found = []
    for innermost in index.positions(ast.Attribute):
        head = nodes[innermost + 1]
        if head.__class__ is not ast.Name or head.id not in heads:
            continue
        outer = innermost
        while nodes[outer - 1].__class__ is ast.Attribute:
            outer -= 1
        if nodes[outer - 1].__class__ is ast.Call:  # the Python step reports the callee as a call site
            outer += 1
            if outer > innermost:
                continue
        node = nodes[outer]
        if not isinstance(node.ctx, ast.Load):
            continue
        if annotated is None:
            annotated = _variable_annotations(index)
        site = index.site(outer)
        # in an annotation: a variable's, or a parameter's or a return's (the def header's parts that hold
        # only annotations, besides the parameters themselves)
        if outer in annotated or site.part in _ANNOTATION_PARTS:
            continue
        dotted = name_chain(node)
        if dotted is not None and not dotted.startswith(_TORCH_OPS):
            found.append(OpReference(site.scope.qualname, node.lineno, dotted))
    return tuple(sorted(found))


def _variable_annotations(index: Any) -> set[int]:
    """The positions of the nodes in the annotations of the module's annotated assignments
    (``x: torch.Tensor = ...``): an AnnAssign's first child is its target, the next its annotation."""
    found: set[int] = set()
    for position in index.positions(ast.AnnAssign):
        start = index.subtree_end(position + 1)
        found.update(range(start, index.subtree_end(start)))
    return found


def _imported_bases(index: Any) -> tuple[ClassBase, ...]:
    """The bases of the module's classes written through a name its imports bind."""
    imported = {alias.asname or alias.name.partition(".")[0] for node in index.of(ast.Import) for alias in node.names}
    imported |= {alias.asname or alias.name for node in index.of(ast.ImportFrom) for alias in node.names}
    found = []
    for scope in index.scopes.values():
        if scope.kind != "class":
            continue
        for base in scope.node.bases:
            dotted = name_chain(base)
            if dotted is not None and dotted.partition(".")[0] in imported:
                found.append(ClassBase(scope.qualname, scope.node.lineno, dotted))
    return tuple(sorted(found))


# setuptools', torch's, Paddle's and pybind11's extension classes; torch's and Paddle's JIT builds,
# given their sources
_EXTENSION_CLASSES = frozenset({"Extension", "CppExtension", "CUDAExtension", "SyclExtension", "Pybind11Extension"})
_LOAD_CALLS = frozenset({"load", "cpp_extension.load", "torch.utils.cpp_extension.load",
                         "paddle.utils.cpp_extension.load"})
# torch's JIT builds, whose result is the module built
_LOADING_CALLS = _LOAD_CALLS | {"load_inline", "cpp_extension.load_inline", "torch.utils.cpp_extension.load_inline"}


def extension_builds(index: Any) -> tuple[ExtensionBuild, ...]:
    """The extensions the module's calls declare, their name and sources read where they are string
    constants, module-level constants, ``os.path.join``s or sums of them. An extension class given
    no name takes the name of the ``setup(name=..., ext_modules=...)`` it is handed to: Paddle's
    ``CUDAExtension(sources=[...])`` has none of its own, the module is named by the setup."""
    constants = _module_constants(index.tree)
    setup_names = _named_by_setup(index, constants)
    out = []
    for call in index.of(ast.Call):
        callee = name_chain(call.func)
        if callee is None:
            continue
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        declares = callee.rpartition(".")[2] in _EXTENSION_CLASSES or (callee in _LOAD_CALLS and "sources" in keywords)
        if not declares:
            continue
        name = _string(call.args[0] if call.args else keywords.get("name"), constants) \
            if call.args or "name" in keywords else setup_names.get(id(call))
        sources = _strings(call.args[1] if len(call.args) > 1 else keywords.get("sources"), constants)
        if isinstance(name, str) and name:  # sources none read: computed (said so by the driver)
            out.append(ExtensionBuild(call.lineno, name, tuple(sources)))
    return tuple(sorted(out))


def _named_by_setup(index: Any, constants: dict[str, Any]) -> dict[int, str]:
    """The id of each call written in the ``ext_modules`` of a ``setup(name="x", ...)`` call (alone,
    or in a list or tuple) -> that name."""
    named: dict[int, str] = {}
    for call in index.of(ast.Call):
        if (name_chain(call.func) or "").rpartition(".")[2] != "setup":
            continue
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        name, modules = _string(keywords.get("name"), constants), keywords.get("ext_modules")
        if not name or modules is None:
            continue
        for node in modules.elts if isinstance(modules, (ast.List, ast.Tuple)) else [modules]:
            if isinstance(node, ast.Call):
                named[id(node)] = name
    return named


def _module_constants(tree: ast.Module) -> dict[str, str | list[str]]:
    """Names the module binds once, outside any def, to a string or a list of strings; a list
    with what ``x.extend([...])``, ``x.append(...)`` and ``x += [...]`` add to it (DeepEP's
    ``sources``), in any branch: each is a file the build may list."""
    values: dict[str, str | list[str] | None] = {}
    pending = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            pending[:0] = [*node.body, *getattr(node, "orelse", ()), *getattr(node, "finalbody", ())]
            continue
        added = _added_to_list(node, values)
        if added is not None:
            name, extended = added
            values[name] = extended
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, assigned = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, assigned = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name):
            value = _strings(assigned, values) if isinstance(assigned, (ast.List, ast.Tuple)) \
                else _string(assigned, values)
            values[target.id] = None if target.id in values else value  # bound twice: no constant
    return {name: value for name, value in values.items() if value}


def _added_to_list(node: ast.stmt, values: dict[str, Any]) -> tuple[str, list[str]] | None:
    """(name, its strings with the ones added) for a statement that adds to a list constant of ``values``."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name):
        name, strings = node.target.id, _strings(node.value, values)
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and len(node.value.args) == 1 \
            and not node.value.keywords and isinstance(node.value.func, ast.Attribute) \
            and isinstance(node.value.func.value, ast.Name) and node.value.func.attr in ("extend", "append"):
        name, arg = node.value.func.value.id, node.value.args[0]
        one = _string(arg, values) if node.value.func.attr == "append" else None
        strings = ([] if one is None else [one]) if node.value.func.attr == "append" else _strings(arg, values)
    else:
        return None
    current = values.get(name)
    return (name, [*current, *strings]) if isinstance(current, list) else None


def _string(node: ast.AST | None, constants: dict[str, Any]) -> str | None:
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name):
        value = constants.get(node.id)
        return value if isinstance(value, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _string(node.left, constants), _string(node.right, constants)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.Call) and name_chain(node.func) in ("os.path.join", "path.join", "join") \
            and node.args and not node.keywords:
        parts = [_string(arg, constants) for arg in node.args]
        return posixpath.join(*parts) if all(p is not None for p in parts) else None  # type: ignore[arg-type]
    return None


def _strings(node: ast.AST | None, constants: dict[str, Any]) -> list[str]:
    """The strings of a list (or tuple) the scanner can read; those it cannot are left out."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return [text for text in (_string(item, constants) for item in node.elts) if text is not None]
    if isinstance(node, ast.Name):
        value = constants.get(node.id)
        return list(value) if isinstance(value, list) else []
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _strings(node.left, constants) + _strings(node.right, constants)
    return []


def _operator_references(index: Any) -> list[OpReference]:
    """Attribute chains ``torch.ops.<ns>.<op>[...]`` not called where they stand, and calls of
    attributes holding one."""
    callees = {id(call.func) for call in index.of(ast.Call)}  # the Python step reports these as call sites
    found: list[OpReference] = []
    inside: set[int] = set()  # a chain's inner links: part of the chain, not chains of their own
    for position, node in zip(index.positions(ast.Attribute), index.of(ast.Attribute)):
        if id(node) in inside:
            continue
        dotted = name_chain(node)
        if dotted is not None and dotted.startswith(_TORCH_OPS) and dotted.count(".") >= 3:
            if id(node) not in callees:
                found.append(OpReference(index.site(position).owner.qualname, node.lineno, dotted))
            inner = node.value
            while isinstance(inner, ast.Attribute):
                inside.add(id(inner))
                inner = inner.value
    found.extend(_calls_through_attributes(index))
    return found


def _calls_through_held_modules(index: Any) -> list[OpReference]:
    """``self.ext.f(...)`` in a method of a class whose methods set ``self.ext`` to a name an import
    of the module binds (``self.ext = ext_64``, ``self.ext = ext_64 if wide else ext_256``): the call
    reaches ``f`` of each module so held, a reference of the calling method at the call's line
    (dotted as the import names it: ``ext_64.f``). AutoGPTQ's quantized linear layers pick one of two
    compiled extensions in ``__init__`` and call it in ``forward``. Whether the name is an extension
    module is the driver's question: a reference that names no binding binds nothing."""
    imported: dict[str, set[str]] = collections.defaultdict(set)
    for node in index.of(ast.Import):
        for alias in node.names:
            imported[alias.asname or alias.name.partition(".")[0]].add(alias.name if alias.asname
                                                                        else alias.name.partition(".")[0])
    for node in index.of(ast.ImportFrom):
        for alias in node.names:
            if alias.name != "*":
                prefix = "." * node.level + (f"{node.module}." if node.module else "")
                imported[alias.asname or alias.name].add(prefix + alias.name)
    if not imported:
        return []
    held: dict[tuple[str, str], set[str]] = collections.defaultdict(set)  # (class, attribute) -> modules
    for position, assign in zip(index.positions(ast.Assign), index.of(ast.Assign)):
        value = assign.value
        names: list[ast.expr]
        if value.__class__ is ast.Name:
            names = [value]
        elif value.__class__ is ast.IfExp:
            names = [value.body, value.orelse]
        else:
            continue  # most values are calls: told at once, without a list and a generator per value
        if not all(isinstance(name, ast.Name) and name.id in imported for name in names):
            continue
        modules = {dotted for name in names if isinstance(name, ast.Name) for dotted in imported[name.id]}
        owner = _class_of_method(index.site(position).owner)
        for target in assign.targets:
            if owner and (attribute := _self_attribute(target)):
                held[(owner, attribute)].update(modules)
    if not held:
        return []
    found = []
    for position, call in zip(index.positions(ast.Call), index.of(ast.Call)):
        func = call.func
        if not isinstance(func, ast.Attribute) or not (attribute := _self_attribute(func.value)):
            continue
        scope = index.site(position).owner
        for dotted in sorted(held.get((_class_of_method(scope), attribute), ())):
            found.append(OpReference(scope.qualname, call.lineno, f"{dotted}.{func.attr}"))
    return found


def _calls_through_attributes(index: Any) -> list[OpReference]:
    """``self.op(...)`` in a method of a class whose methods set ``self.op = torch.ops.<ns>.<op>``:
    the call runs the operator, so it is a reference of the calling method too, at the call's
    line (vLLM's activation layers name the operator in ``__init__`` and call it in
    ``forward_cuda``). Only the class's own methods are followed, not subclasses'."""
    held: dict[tuple[str, str], set[str]] = collections.defaultdict(set)  # (class, attribute) -> operators
    for position, assign in zip(index.positions(ast.Assign), index.of(ast.Assign)):
        dotted = name_chain(assign.value) if isinstance(assign.value, ast.Attribute) else None
        if dotted is None or not dotted.startswith(_TORCH_OPS) or dotted.count(".") < 3:
            continue
        owner = _class_of_method(index.site(position).owner)
        for target in assign.targets:
            if owner and (attribute := _self_attribute(target)):
                held[(owner, attribute)].add(dotted)
    if not held:
        return []
    found = []
    for position, call in zip(index.positions(ast.Call), index.of(ast.Call)):
        attribute = _self_attribute(call.func)
        scope = index.site(position).owner
        for dotted in sorted(held.get((_class_of_method(scope), attribute), ())) if attribute else ():
            found.append(OpReference(scope.qualname, call.lineno, dotted))
    return found


def _self_attribute(node: ast.AST) -> str:
    """``attr`` of ``self.attr``, else ""."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return ""


def _class_of_method(scope: Any) -> str:
    """The qualname of the class a function scope is a method of, else ""."""
    parent = scope.parent
    return parent.qualname if scope.kind == "function" and parent is not None and parent.kind == "class" else ""


# version 3: typed facts (OpReferences); 4: calls through ``self.<attribute>`` holding an operator;
# 5: the extensions build scripts declare; 6: operators registered in Python; 7: sources added to a
# list (`sources.extend([...])`); 8: ctypes libraries; 9: TVM FFI globals looked up and registered;
# 10: an extension class without a name named by the `setup(name=..., ext_modules=...)` it is given to;
# 11 (a branch's 10-12 beside it): module aliases of torch.library's registering functions and their
# decorators applied in a call, ctypes Structure classes (CtypesFacts.structures), classes' bases written
# through imports (OpReferences.bases), a pybind11 class as a Python class's base; 14: a method called on an
# extension class's instance made in the call (`Matcher().accept(..)`, the Python step's chained callees);
# 15: TVM FFI modules loaded (`tvm_ffi.load_module`) among ctypes' libraries, files with a call of a name
# ending in `load` scanned, a method called on what a call returns (`make_spec().build_and_load()`); 16: an
# alias of torch.library's registering functions bound in a branch at module level (`if ...:`, `try:`);
# 17: an extension whose sources none are read is recorded (ExtensionBuild.sources empty); 18: an operator's
# name made of the module's string constants (`f"{_LIB}::prepare"`, `_LIB + "::op"`); 19: calls through
# ``self.<attribute>`` holding an imported module (`self.ext = ext_64`, then `self.ext.f(...)`); 20 (a branch's 19
# beside it): names bound to a module by an import call or a JIT build (OpReferences.loads), attributes read on
# imported names (.attributes); 21: TensorFlow's load_op_library among the ctypes loaders
STEP = Step(name="bindings", extract=extract_bindings, scanners={Language.PYTHON: scan_op_references},
            version="21", requires=(python.STEP, cpp.STEP), forkable=True)
