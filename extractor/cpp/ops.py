"""Registrations resolved to nodes: torch operators (`ops.def`/`ops.impl`) and pybind11 and
nanobind bindings.

A torch operator's schema (`ops.def("rms_norm(Tensor! out, Tensor input, float eps) -> ()")`) is
the API Python calls, and it differs from the C++ function behind it (`void rms_norm(torch::Tensor&
out, ...)`). So each defined operator is a node of its own, ``torchop:<namespace>::<op>[.overload]``
(kind ``function``, tag ``torch-op``), with the schema's parameters (positional-or-keyword,
keyword-only after `*`) and return type; the C++ functions registered as its implementation have
an ``implements`` edge to it. A namespace given by a build macro keeps the macro's name:
``torchop:<TORCH_EXTENSION_NAME>::rms_norm``, ``torchop:<TORCH_EXTENSION_NAME>_cache_ops::swap_blocks``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

import msgspec

from extractor.cpp.facts import (HELPER_MODULE, PARAMETER, PYBIND_BLOCK, CppFacts, MacroUse, PybindFact,
                                 RegistrationMacro, SchemaParam, TorchOpFact)
from extractor.cpp.names import split_args
from extractor.cpp.parse import macro_config, parse_source
from extractor.cpp.registrations import TVM_FFI_STATIC, pybind_registrations, torch_registrations
from extractor.cpp.scan import ANONYMOUS_NAMESPACE
from extractor.cpp.symbols import SymbolTable
from extractor.cpp.tfops import TENSORFLOW_OP
from extractor.model import (Diagnostic, Edge, EdgeKind, Language, Location, Node, NodeKind, Parameter, ParamKind,
                             Severity, Signature)
from extractor.naming import file_id, id_name

OP_PREFIX = "torchop:"


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class OpRegistration:
    """A torch operator registered in C++: `ops.def("name(...) -> ...")`, `ops.impl("name", &fn)`."""

    path: str
    line: int
    kind: str  # "def" or "impl"
    op: str
    namespace: str  # "" when it is a build-time macro such as TORCH_EXTENSION_NAME
    namespace_macro: str  # "TORCH_EXTENSION_NAME" or ""
    namespace_suffix: str  # "_cache_ops" for CONCAT(TORCH_EXTENSION_NAME, _cache_ops)
    overload: str = ""
    dispatch: str = ""
    function: str = ""  # the C++ function as written (`paged_attention_v1`), "" for schema-only
    target: str = ""  # its node id when resolved
    # "kernel-yaml": an entry of a kernel YAML file (extractor.cpp.kernelyaml), which registers with a
    # runtime of the system's own (ExecuTorch's), not with PyTorch's dispatcher; "" for a C++ registration
    via: str = ""

    @property
    def library(self) -> str:
        """The operator namespace as written: `_C`, or `<TORCH_EXTENSION_NAME>_cache_ops`."""
        return self.namespace or f"<{self.namespace_macro}>{self.namespace_suffix}"


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class PyBinding:
    """A pybind11 (or nanobind) binding: `m.def("name", &fn)`, `py::class_<T>(m, "Name")` and its methods."""

    path: str
    line: int
    kind: str  # "def", "class" or "method"
    module: str  # dotted for a submodule: `core.fft`
    name: str  # the Python name
    owner: str = ""  # Python class name for methods
    function: str = ""  # C++ name as written
    target: str = ""  # node id when resolved
    mechanism: str = "pybind11"  # or "nanobind", "paddle-op", "tvm-ffi", "tvm-ffi-export"
    # the file of the module block whose module a function given that module registers on ("":
    # the binding's own file): a module the build names is named by that block's file
    block: str = ""

    @property
    def python_name(self) -> str:
        return ".".join(p for p in (self.module, self.owner, self.name) if p)


_BUILD_MACRO = re.compile(r"[A-Z][A-Z0-9_]*")  # TORCH_EXTENSION_NAME: no Python module is spelled so


def pybind_macro_registrations(facts: Mapping[str, CppFacts]) -> dict[str, CppFacts]:
    """``facts`` with the pybind11 registrations of the system's registering macros written in where
    a module block or a function given the module uses them (Triton's python/src/passes.h: `#define
    ADD_PASS_WRAPPER_0(name, builder) m.def(name, [](mlir::PassManager &pm) { pm.addPass(builder()); })`,
    used as `ADD_PASS_WRAPPER_0("add_cse", createCSEPass);` in `void init_triton_passes_common(py::module
    &&m)`), each at the line of the use. A macro defined with two different bodies is not expanded."""
    macros = _defined_once(facts)
    out = dict(facts)
    for path in sorted(facts):
        found: list[PybindFact] = []
        for use in facts[path].macro_uses:
            registering = macros.get(use.macro) if use.block == PYBIND_BLOCK else None
            if registering is None or len(registering.params) != len(use.args) or len(use.block_args) != 2:
                continue
            body = _expanded_body(registering, use.args, ";")
            if body is None:
                continue
            module, var = use.block_args
            found.extend(msgspec.structs.replace(f, line=use.line)
                         for f in pybind_registrations(module, var, body, use.scope, Language.CPP)
                         if f.kind != "module")
        if found:
            out[path] = msgspec.structs.replace(facts[path], pybind=(*facts[path].pybind, *found))
    return out


def resolve_registrations(facts: Mapping[str, CppFacts], table: SymbolTable
                          ) -> tuple[list[OpRegistration], list[PyBinding], list[Diagnostic]]:
    """The torch operators and Python bindings the files register, resolved; and a diagnostic for
    each function given a pybind11 module that no module block reaches (its bindings belong to no
    module archdiff knows of)."""
    ops, bindings = [], []
    facts = _localised_helpers(pybind_macro_registrations(facts))
    given = _modules_given(facts, table)
    expanded = macro_registrations(facts)
    keyed = _tvm_ffi_type_keys(facts, table)
    for path in sorted(facts):
        for op in (*facts[path].torch_ops, *expanded.get(path, ())):
            if op.fn == "<lambda>":
                fn, target = table.resolve_lambda(path, op.scope, op.lambda_calls)
            else:
                fn, target = op.fn, table.resolve_reference(op.scope, op.fn, path)
            ops.append(OpRegistration(path, op.line, op.kind, op.op, op.ns, op.ns_macro,
                                      op.ns_suffix, op.overload, op.dispatch, fn, target))
        for b in facts[path].pybind:
            fn = b.target
            if b.kind == "module":
                continue
            if b.kind == TVM_FFI_STATIC:
                bindings.extend(_tvm_ffi_static(b, path, table, keyed))
                continue
            if b.kind == "class":
                target = _bound_class(b.scope, fn, path, facts[path], table)
            elif fn == "<lambda>":
                fn, target = table.resolve_lambda(path, b.scope, b.lambda_calls)
            else:
                target = table.resolve_reference(b.scope, fn, path)
                if not target and b.mechanism == TENSORFLOW_OP and fn.endswith("::Compute"):
                    # an AsyncOpKernel runs the op in ComputeAsync (TensorFlow Serving's RemotePredictOp)
                    target = table.resolve_reference(b.scope, fn + "Async", path)
                    fn = fn + "Async" if target else fn
            helper, dot, sub = b.module.partition(".")  # `@init_fft.fft`: the submodule `fft` of what init_fft is given
            if not b.module.startswith(HELPER_MODULE):
                modules = [(b.module, "")]
            elif _given_by_parameter(b):
                bindings.extend(_written_in(b, path, table, [(m + dot + sub, block, call)
                                                             for m, block, call in given.get(helper, ())]))
                continue
            else:
                modules = sorted({(m + dot + sub, block) for m, block, _call in given.get(helper, ())})
            for module, block in modules:
                bindings.append(PyBinding(path, b.line, b.kind, module, b.name, b.owner, fn, target, b.mechanism,
                                          _block_naming(module, block, path)))
    return sorted(ops), sorted(bindings), _reached_by_no_block(facts, given)


def _localised_helpers(facts: Mapping[str, CppFacts]) -> Mapping[str, CppFacts]:
    """``facts`` with each function given a module that lives in an anonymous namespace marked as its
    file's (``@ns::(anonymous namespace#3)::register_x``): two files' same-named helpers are two
    functions (rtp-llm's OpDefs.cc: `namespace { void registerCacheGroupType(py::module& m) {...} }`,
    called by the file's registering function). The mark holds no dot, which would start a submodule;
    :func:`_helper_node` reads it back as the file's anonymous namespace."""
    out = dict(facts)
    for index, path in enumerate(sorted(facts)):
        pybind = facts[path].pybind
        if any(b.module.startswith(HELPER_MODULE) and ANONYMOUS_NAMESPACE in b.module for b in pybind):
            mark = f"(anonymous namespace#{index})"
            out[path] = msgspec.structs.replace(facts[path], pybind=tuple(
                msgspec.structs.replace(b, module=b.module.replace(ANONYMOUS_NAMESPACE, mark))
                if b.module.startswith(HELPER_MODULE) else b for b in pybind))
    return out


_HELPER_MARK = re.compile(r"\(anonymous namespace#\d+\)")


def _helper_node(helper: str, path: str, table: SymbolTable) -> str:
    """The node of the function a placeholder (HELPER_MODULE + its name) names, read in its own file."""
    name = helper[len(HELPER_MODULE):]
    if "(anonymous namespace#" in name:  # defined in that file
        return table.id_of(path, _HELPER_MARK.sub(ANONYMOUS_NAMESPACE, name))
    return table.resolve_reference("", name, path)


def _reached_by_no_block(facts: Mapping[str, CppFacts], given: Mapping[str, object]) -> list[Diagnostic]:
    """Functions that register bindings on a module they are given, whose module no block hands
    them (called through a macro, as Triton's backends are: `FOR_EACH_P(INIT_BACKEND,
    TRITON_BACKENDS_TUPLE)`, from outside the tree, or not at all): one diagnostic each."""
    unreached: dict[tuple[str, str], list[int]] = {}
    for path in sorted(facts):
        for b in facts[path].pybind:
            helper = b.module.partition(".")[0]
            if b.kind != "module" and helper.startswith(HELPER_MODULE) and helper not in given:
                function = _HELPER_MARK.sub(ANONYMOUS_NAMESPACE, helper[len(HELPER_MODULE):])
                unreached.setdefault((path, function), []).append(b.line)
    return [Diagnostic(path, min(lines), "pybind-helper-unreached",
                       f"{function} registers {len(lines)} binding(s) on the module it is given, and no module "
                       "block of the system hands it one that archdiff reads (a call through a macro, from "
                       "outside the tree, or none): they are bound to no Python module", Severity.INFO)
            for (path, function), lines in sorted(unreached.items())]


def _bound_class(scope: str, written: str, path: str, facts: CppFacts, table: SymbolTable) -> str:
    """The class node a binding's class names, "" when the system defines none; through a type alias
    of the binding's file (`using TensorMap = core::TensorMap; py::bind_map<TensorMap>(m, ...)`) in its
    scope or the innermost enclosing one."""
    target = table.resolve_type(scope, written, path)
    if id_name(target) in table.types:
        return target
    aliases = sorted((a for a in facts.type_aliases if a.name == written and a.type
                      and (not a.scope or scope == a.scope or scope.startswith(a.scope + "::"))),
                     key=lambda a: (-len(a.scope), a.line))
    if aliases:
        target = table.resolve_type(aliases[0].scope, aliases[0].type, path)
        if id_name(target) in table.types:
            return target
    return ""


def _tvm_ffi_type_keys(facts: Mapping[str, CppFacts], table: SymbolTable) -> dict[str, tuple[str, str]]:
    """The node of each class that declares a TVM FFI type key -> the key's prefix and last part;
    a class given two keys has none (which one Python names is not known)."""
    keys: dict[str, set[tuple[str, str]]] = {}
    for path in sorted(facts):
        for b in facts[path].pybind:
            if b.kind == "class" and b.mechanism == "tvm-ffi":
                node = table.resolve_type(b.scope, b.target, path)
                if id_name(node) in table.types:
                    keys.setdefault(node, set()).add((b.module, b.name))
    return {node: next(iter(found)) for node, found in keys.items() if len(found) == 1}


def _tvm_ffi_static(b: PybindFact, path: str, table: SymbolTable, keyed: Mapping[str, tuple[str, str]]
                    ) -> list[PyBinding]:
    """A static method a TVM FFI class's registry defines, a method of the Python class its type key
    names (`_ffi_api.Grammar.from_ebnf`); none when the class declares no key the system holds."""
    node = table.resolve_type(b.scope, b.template_args[0], path) if b.template_args else ""
    if node not in keyed:
        return []
    module, owner = keyed[node]
    if b.target == "<lambda>":
        fn, target = table.resolve_lambda(path, b.scope, b.lambda_calls)
    else:
        fn, target = b.target, table.resolve_reference(b.scope, b.target, path)
    return [PyBinding(path, b.line, "method", module, b.name, owner, fn, target, b.mechanism)]


def _block_naming(module: str, block: str, path: str) -> str:
    """The block's file, for a module the build names (:func:`named_by_build`); "" otherwise."""
    return block if block != path and _BUILD_MACRO.fullmatch(module.partition(".")[0]) else ""


def _given_by_parameter(b: PybindFact) -> bool:
    return any(part.startswith(PARAMETER) for part in (b.name, b.owner, b.target))


def _written_in(b: PybindFact, helper_path: str, table: SymbolTable,
                calls: list[tuple[str, str, _HandingCall]]) -> list[PyBinding]:
    """A helper's registration named by its parameters, once per call that hands it a module, with
    that call's arguments written in, at the call's line (`bind_config<core::NormConfig>(m,
    "NormConfig")`: the class NormConfig of that type). A call whose argument is no string
    literal (or no template argument) gives none: nothing is guessed."""
    out = []
    for module, block, (args, template_args, scope, path, line) in calls:
        def given(part: str) -> str | None:
            if not part.startswith(PARAMETER):
                return part
            index, values = (part[2:], template_args) if part[1:2] == "T" else (part[1:], args)
            value = values[int(index)] if index.isdigit() and int(index) < len(values) else None
            return value or None
        name, owner, fn = given(b.name), given(b.owner), given(b.target)
        if name is None or owner is None or fn is None:
            continue
        if b.kind == "class":
            target = table.resolve_type(scope, fn, path)
            target = target if id_name(target) in table.types else ""
        else:
            target = table.resolve_reference(b.scope, fn, helper_path) if fn != "<lambda>" else ""
        out.append(PyBinding(path, line, b.kind, module, name, owner, fn, target, b.mechanism,
                             _block_naming(module, block, path)))
    return out


# a call that hands a helper a module: its arguments (string literals' values), template arguments,
# scope, file and line (PybindFact.args, .template_args)
_HandingCall = tuple[tuple[str | None, ...], tuple[str, ...], str, str, int]


def _modules_given(facts: Mapping[str, CppFacts], table: SymbolTable
                   ) -> dict[str, list[tuple[str, str, _HandingCall]]]:
    """HELPER_MODULE + qualified name of a function that registers bindings on a module it is
    given -> the modules it is given, each with the file of the block that holds it: by a
    PYBIND11_MODULE (NB_MODULE) block that calls it with its module or a submodule of it, or by
    such a function in turn. A function no block reaches has none (its registrations are not
    bindings of any module the build defines)."""
    placeholders: dict[str, str] = {}  # the placeholder a function's own registrations carry -> its node id
    for path in sorted(facts):
        for b in facts[path].pybind:
            helper = b.module.partition(".")[0]
            if helper.startswith(HELPER_MODULE) and helper not in placeholders:
                placeholders[helper] = _helper_node(helper, path, table)
    helpers = {node: placeholder for placeholder, node in placeholders.items() if node}
    # a block's module (with the block's file) or a placeholder (file "") -> (the submodule it hands
    # on, "" or `.sub`; the placeholder handed it; the call that hands it)
    handed: dict[tuple[str, str], set[tuple[str, str, _HandingCall]]] = {}
    for path in sorted(facts):
        for b in facts[path].pybind:
            if b.kind == "module":
                node = table.resolve_reference(b.scope, b.target, path)
                if node in helpers:
                    top, dot, sub = b.module.partition(".")
                    key = (top, "" if top.startswith(HELPER_MODULE) else path)
                    call = (b.args, b.template_args, b.scope, path, b.line)
                    handed.setdefault(key, set()).add((dot + sub, helpers[node], call))
    given: dict[str, set[tuple[str, str, _HandingCall]]] = {}
    for module, block in sorted(k for k in handed if not k[0].startswith(HELPER_MODULE)):
        stack = sorted((module + sub, helper, call) for sub, helper, call in handed[module, block])
        while stack:
            held, helper, call = stack.pop()
            if (held, block, call) not in given.setdefault(helper, set()):
                given[helper].add((held, block, call))
                stack.extend(sorted((held + sub, inner, inner_call)
                                    for sub, inner, inner_call in handed.get((helper, ""), ())))
    return {helper: sorted(modules) for helper, modules in given.items()}


def macro_registrations(facts: Mapping[str, CppFacts]) -> dict[str, list[TorchOpFact]]:
    """The operators registered through a macro of the system, by the file of the block that calls it.

    intel-extension-for-pytorch registers with `IPEX_OP_REGISTER_DISPATCH("op", fn, key);` in its
    blocks, a header's macro whose body is `m.impl(TORCH_SELECTIVE_NAME("torch_ipex::" NAME), key,
    Func);`, and opens blocks with `IPEX_LIBRARY_FRAGMENT() { ... }`, a header's macro whose body is
    `TORCH_LIBRARY_FRAGMENT(torch_ipex, m)`. No preprocessor is run; such a macro's body is
    expanded here, one level, with the use's arguments (`#x` and `##` as the preprocessor reads them),
    and the block's registrations read from the result, at the use's line. A macro defined with
    different bodies in different files (an `#if` chooses one) is not expanded."""
    macros = _defined_once(facts)
    uses = [(path, use) for path in sorted(facts) for use in facts[path].macro_uses
            if macros.get(use.macro) is not None]
    if not uses:
        return {}
    cfg = macro_config()
    libraries, impls = frozenset(cfg["torch_library"]), frozenset(cfg["torch_library_impl"])
    wrappers = frozenset(cfg["torch_op_name_wrapper"])
    out: dict[str, list[TorchOpFact]] = {}
    for path, use in uses:
        block = _block_of(use, macros, libraries | impls)
        registering = macros[use.macro]
        if block is None or registering is None or len(registering.params) != len(use.args):
            continue
        body = _expanded_body(registering, use.args)
        if body is None:
            continue
        found = torch_registrations(list(block[1]), block[0] in impls, body, use.scope, Language.CPP, wrappers)
        out.setdefault(path, []).extend(msgspec.structs.replace(f, line=use.line) for f in found)
    return out


def _block_of(use: MacroUse, macros: Mapping[str, RegistrationMacro | None], known: frozenset[str]
              ) -> tuple[str, tuple[str, ...]] | None:
    """(torch library block macro, its arguments) of the block a use stands in: written as one, or a
    macro of the system whose body is one (`#define LIB() TORCH_LIBRARY_FRAGMENT(ns, m)`)."""
    if use.block in known:
        return use.block, use.block_args
    opening = macros.get(use.block)
    if opening is None or len(opening.params) != len(use.block_args):
        return None
    written = _substituted(opening, use.block_args).strip()
    head, paren, rest = written.partition("(")
    if not paren or head.strip() not in known or not rest.rstrip().endswith(")"):
        return None
    return head.strip(), tuple(split_args(rest.rstrip()[:-1]))


# a string literal (left as written), a paste (`##`, before a stringize `#` is looked for), or a word
_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|##|(#\s*)?\b([A-Za-z_]\w*)\b')


def _defined_once(facts: Mapping[str, CppFacts]) -> dict[str, RegistrationMacro | None]:
    """The system's registering macros by name; None for a name defined with other parameters or
    another body somewhere (an `#if` chooses one): such a macro is not expanded."""
    macros: dict[str, RegistrationMacro | None] = {}
    for path in sorted(facts):
        for macro in facts[path].registration_macros:
            known = macros.get(macro.name, macro)
            macros[macro.name] = macro if known is not None and known.body == macro.body \
                and known.params == macro.params else None
    return macros


def _expanded_body(macro: RegistrationMacro, args: tuple[str, ...], end: str = "") -> Any | None:
    """The parsed body of a function whose one statement is ``macro``'s use with ``args`` (``end``
    closes it: a `;` where the use is a call), or None."""
    code = "void registration_macro() {\n" + _substituted(macro, args) + end + "\n}\n"
    tree = parse_source(code.encode(), Language.CPP)
    definition = tree.root_node.named_children[0] if tree.root_node.named_children else None
    return definition.child_by_field_name("body") if definition is not None else None


def _substituted(macro: RegistrationMacro, args: tuple[str, ...]) -> str:
    """``macro``'s body with its parameters replaced by ``args``: `#p` made a string, `a ## b` pasted;
    string literals left as they are."""
    values = dict(zip(macro.params, args))

    def one(m: re.Match[str]) -> str:
        word = m.group(2)
        if word is None or word not in values:
            return m.group(0)
        return f'"{values[word]}"' if m.group(1) else values[word]

    return re.sub(r"\s*##\s*", "", _TOKEN.sub(one, macro.body))


def op_nodes(facts: Mapping[str, CppFacts], ops: list[OpRegistration]) -> tuple[list[Node], list[Edge]]:
    """One node per operator schema defined in C++, and the edges: its file contains it, each
    registered implementation implements it."""
    schemas: dict[str, list[tuple[str, TorchOpFact]]] = {}
    for path in sorted(facts):
        for e in facts[path].torch_ops:
            if e.kind == "def" and e.schema is not None:
                library = e.ns or f"<{e.ns_macro}>{e.ns_suffix}"
                qual = f"{library}::{e.op}" + (f".{e.overload}" if e.overload else "")
                schemas.setdefault(OP_PREFIX + qual, []).append((path, e))
    nodes, edges = [], []
    for node_id, defs in sorted(schemas.items()):
        path, first = defs[0]
        assert first.schema is not None  # only defined operators with a schema are collected above
        qual = node_id[len(OP_PREFIX):]
        shapes: dict[tuple[Parameter | str, ...], tuple[str, TorchOpFact]] = {}
        for p, e in defs:
            if e.schema is not None:
                shapes.setdefault(_params(e.schema.params) + (e.schema.returns,), (p, e))
        overloads: tuple[Signature, ...] = ()
        if len(shapes) > 1:
            overloads = tuple(sorted((Signature(_params(e.schema.params), e.schema.returns, p, e.line)
                                      for p, e in shapes.values() if e.schema is not None),
                                     key=lambda s: (s.path, s.line)))
        sites = tuple(sorted({Location(p, e.line) for p, e in defs[1:]} - {Location(path, first.line)}))
        nodes.append(Node(node_id, NodeKind.FUNCTION, qual.rsplit("::", 1)[-1], qual, "cpp", path,
                          first.line, "", first.schema.text[:200], ("torch-op",),
                          params=_params(first.schema.params), returns=first.schema.returns,
                          overloads=overloads, sites=sites, api=f"public: torch op {qual}"))
        for p, e in defs:
            edges.append(Edge(file_id(p), node_id, EdgeKind.CONTAINS, p, e.line))
    known = {n.id for n in nodes}
    for r in ops:
        if r.target and (r.kind == "impl" or r.function):
            node_id = OP_PREFIX + f"{r.library}::{r.op}" + (f".{r.overload}" if r.overload else "")
            if node_id in known:
                edges.append(Edge(r.target, node_id, EdgeKind.IMPLEMENTS, r.path, r.line))
    return nodes, edges


def _params(raw: tuple[SchemaParam, ...]) -> tuple[Parameter, ...]:
    return tuple(Parameter(p.name, ParamKind.KEYWORD_ONLY if p.keyword_only else ParamKind.POSITIONAL_OR_KEYWORD,
                           p.type, p.default) for p in raw)
