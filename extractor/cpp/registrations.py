"""Registrations read inside `TORCH_LIBRARY*(ns, m) { ... }`, `PYBIND11_MODULE(mod, m) { ... }` and
nanobind's `NB_MODULE(mod, m) { ... }` blocks: which torch operator or Python name is bound to which
C++ function (as written; the graph step resolves the names), with the operator's schema parsed
into parameters and a return type. nanobind's API is pybind11's (`nb::class_`, `.def`,
`nb::overload_cast`), so one reader serves both, told which library it reads. TVM FFI global
functions (`TVM_REGISTER_GLOBAL("a.b.c").set_body_typed(fn)`, `refl::GlobalDef().def("a.b.c", fn)`)
(and the functions a library exports to TVM FFI by a name of its own:
`TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, fn)`) and Paddle custom operators
(`PD_BUILD_OP(name).SetKernelFn(PD_KERNEL(fn))`) stand outside any such block and are read over
the whole file (:func:`tvm_ffi_registrations`, :func:`paddle_op_registrations`)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from typing import Any

from extractor.cpp.facts import MacroUse, OpSchema, PybindFact, SchemaParam, TorchOpFact
from extractor.cpp.names import CALLEE_TYPES, SPACES, callee_text, clean_name, line, split_args, text
from extractor.cpp.parse import capture_nodes
from extractor.cpp.signature import parse_schema
from extractor.model import Language

_CALLS = "(call_expression) @c"
_CALLEES = "(call_expression function: (_) @callee)"
# what wraps a registered function: TORCH_FN(fn), torch::dispatch(key, fn), the stable ABI's TORCH_BOX(fn)
_WRAPPERS = re.compile(r"(?:\w+::)*(?:TORCH_FN|TORCH_BOX|dispatch|make_boxed_from_unboxed_functor)"
                       r"\((?:[^,()]*,)?(.*)\)")


def torch_registrations(macro_args: list[str], impl_block: bool, body: Any, scope: str,
                        language: Language, name_wrappers: frozenset[str] = frozenset()) -> list[TorchOpFact]:
    """`m.def(...)`/`m.impl(...)` calls on the block's variable, one fact each; an operator's schema or
    name given through one of ``name_wrappers`` (`TORCH_SELECTIVE_SCHEMA("...")`, `torch::schema("...",
    alias)`, by last name) is read as the string it is given."""
    ns_arg = macro_args[0]
    ns, ns_macro, ns_suffix = "", "", ""
    m = re.fullmatch(r"CONCAT\((\w+),(\w+)\)", ns_arg)
    if m:
        ns_macro, ns_suffix = m.group(1), m.group(2)
    elif re.fullmatch(r"[A-Z][A-Z0-9_]*", ns_arg):
        ns_macro = ns_arg
    else:
        ns = ns_arg
    var = macro_args[-1]
    block_dispatch = macro_args[1] if impl_block and len(macro_args) >= 3 else ""
    found = []
    for call in capture_nodes(body, language, _CALLS).get("c", ()):
        fn = call.child_by_field_name("function")
        if fn is None or fn.type != "field_expression":
            continue
        field = fn.child_by_field_name("field")
        target = fn.child_by_field_name("argument")
        if field is None or target is None or text(target) != var:
            continue
        kind = text(field)
        if kind not in ("def", "impl"):
            continue
        call_args = call_arguments(call)
        named = _unwrapped(call_args[0], name_wrappers) if call_args else None
        first = string_value(named) if named is not None else None
        if first is None or named is None:
            continue
        op = first.split("(", 1)[0].strip()
        name, _, overload = op.partition(".")
        # the operator may be named with its namespace (`m.impl("torchao::da8w4_linear_cpu", ...)`; in
        # a `TORCH_LIBRARY_IMPL(_, CPU, m)` block it must be): the name says which library it is
        qualifier, _, unqualified = name.rpartition("::")
        op_ns, op_macro, op_suffix = (qualifier, "", "") if qualifier else (ns, ns_macro, ns_suffix)
        name = unqualified if qualifier else name
        schema = None
        if kind == "def" and "(" in first:
            parsed = parse_schema(first)
            if parsed is not None:
                schema = OpSchema(SPACES.sub(" ", first).strip(), tuple(SchemaParam(*p) for p in parsed["params"]),
                                  parsed["returns"])
        fn, dispatch = "", block_dispatch
        lambda_calls: tuple[str, ...] = ()
        if len(call_args) >= 2:
            fn = function_ref(call_args[-1])
            if fn == "<lambda>":
                lambda_calls = tuple(lambda_callees(call_args[-1], language))
            if kind == "impl" and len(call_args) >= 3:
                dispatch = SPACES.sub("", text(call_args[1]))
        # the line that names the operator (`ops.def(` often stands alone on the line before)
        found.append(TorchOpFact(kind, name, overload, line(named), dispatch, fn, scope, op_ns, op_macro,
                                 op_suffix, schema, lambda_calls))
    return found


def registry_op_registrations(root: Any, language: Language, registries: frozenset[str], links: frozenset[str]
                              ) -> list[TorchOpFact]:
    """Operators registered with TorchScript's registry object, wherever it is made (usually a static
    at namespace level): `torch::RegisterOperators("ns::op", &fn)` and the links of its chain,
    `torch::RegisterOperators().op("ns::op(Tensor x) -> Tensor", &fn)` (``registries`` and ``links``
    by last name), one "def" fact each with its function. The registry knows no library block: a name
    that does not say its namespace is left out (nothing is guessed)."""
    found = []
    for call in capture_nodes(root, language, _CALLS).get("c", ()):
        fn = call.child_by_field_name("function")
        if fn is None:
            continue
        if fn.type == "field_expression":
            field, inner = fn.child_by_field_name("field"), fn.child_by_field_name("argument")
            if field is None or inner is None or _method_name(field) not in links \
                    or not _rooted_at(inner, registries, links):
                continue
        elif SPACES.sub("", text(fn)).rpartition("::")[2] not in registries:
            continue
        args = call_arguments(call)
        first = string_value(args[0]) if len(args) >= 2 else None
        if not first:
            continue
        qualifier, _, name = first.split("(", 1)[0].strip().rpartition("::")
        if not qualifier or not name:
            continue
        name, _, overload = name.partition(".")
        schema = None
        if "(" in first:
            parsed = parse_schema(first)
            if parsed is not None:
                schema = OpSchema(SPACES.sub(" ", first).strip(), tuple(SchemaParam(*p) for p in parsed["params"]),
                                  parsed["returns"])
        ref = function_ref(args[1])
        if not ref:
            continue
        lambda_calls = tuple(lambda_callees(args[1], language)) if ref == "<lambda>" else ()
        found.append(TorchOpFact("def", name, overload, line(args[0]), "", ref, _namespace_of(call), qualifier,
                                 "", "", schema, lambda_calls))
    return found


def _rooted_at(node: Any, registries: frozenset[str], links: frozenset[str]) -> bool:
    """Whether ``node`` is a chain of ``links`` calls rooted at a call of one of ``registries``."""
    while node.type == "call_expression":
        fn = node.child_by_field_name("function")
        if fn is None:
            return False
        if fn.type != "field_expression":
            return SPACES.sub("", text(fn)).rpartition("::")[2] in registries
        field, node = fn.child_by_field_name("field"), fn.child_by_field_name("argument")
        if field is None or node is None or _method_name(field) not in links:
            return False
    return False


_MACRO_SPELLING = re.compile(r"[A-Z][A-Z0-9_]*")


def block_macro_uses(body: Any, scope: str, block: str, block_args: tuple[str, ...]) -> list[MacroUse]:
    """The statements of a registration block that call a macro (`REGISTER_OP("op", fn);`, a name
    spelled as macros are), with the block they stand in: what they register is known only once the
    graph step has the macro's definition, which may be in a header (extractor.cpp.ops)."""
    found = []
    for statement in body.named_children if body is not None else ():
        call = statement.named_children[0] if statement.type == "expression_statement" \
            and statement.named_children else None
        fn = call.child_by_field_name("function") if call is not None and call.type == "call_expression" else None
        if fn is not None and fn.type == "identifier" and _MACRO_SPELLING.fullmatch(text(fn)):
            args = tuple(SPACES.sub(" ", text(a)).strip() for a in call_arguments(call))
            found.append(MacroUse(text(fn), args, line(call), scope, block, block_args))
    return found


def _unwrapped(node: Any, wrappers: frozenset[str]) -> Any:
    """The first argument of a call of one of ``wrappers`` (by last name), else ``node``."""
    if node.type != "call_expression" or not wrappers:
        return node
    fn = node.child_by_field_name("function")
    if fn is None or SPACES.sub("", text(fn)).rpartition("::")[2] not in wrappers:
        return node
    args = call_arguments(node)
    return args[0] if args else node


@dataclasses.dataclass(frozen=True, slots=True)
class BindingLibrary:
    """How one Python binding library's registrations are written."""

    name: str  # the mechanism a binding through it carries: "pybind11", "nanobind"
    namespaces: frozenset[str]  # its namespace as code writes it: `py`, `pybind11`; a file's aliases added

    def spells(self, written: str) -> bool:
        """Whether ``written`` (spaces removed) is a name in the library's namespace."""
        return any(written.startswith(ns + "::") for ns in self.namespaces)


PYBIND11 = BindingLibrary("pybind11", frozenset({"py", "pybind11"}))
NANOBIND = BindingLibrary("nanobind", frozenset({"nb", "nanobind"}))
_NAMESPACE_ALIAS = re.compile(rb"\bnamespace\s+(\w+)\s*=\s*((?:::\s*)?\w+(?:\s*::\s*\w+)*)\s*;")


def nanobind_in(data: bytes) -> BindingLibrary:
    """nanobind as the file writes it: with the aliases it gives its namespace (`namespace nb =
    nanobind;` is the documented one; `namespace py = nanobind;` is written too). The file's other
    aliases (`namespace mx = mlx::core;`) are the symbol table's, as every name's
    (:mod:`extractor.cpp.aliases`)."""
    if b"namespace" not in data:
        return NANOBIND
    found: dict[str, set[str]] = {}
    for m in _NAMESPACE_ALIAS.finditer(data):
        found.setdefault(m.group(1).decode(), set()).add(SPACES.sub("", m.group(2).decode()).lstrip(":"))
    ours = frozenset(alias for alias, targets in found.items() if targets == {"nanobind"})
    return dataclasses.replace(NANOBIND, namespaces=NANOBIND.namespaces | ours)


# a class binding: (C++ type, Python name, the Python module it is defined in)
_Class = tuple[str, str, str]


def pybind_registrations(module: str, var: str, body: Any, scope: str, language: Language,
                         library: BindingLibrary = PYBIND11, given: Mapping[str, str] | None = None
                         ) -> list[PybindFact]:
    """`m.def("name", &fn)`, `py::class_<T>(m, "Name")` and its `.def("meth", &T::meth)` calls; and
    a call that hands the module on (`register_translator(m)`: a ``module`` fact, ``target`` the
    function as written), whose registrations belong to this module too. Submodules
    (`m.def_submodule("sub")`: module ``<module>.sub``), modules and classes held in variables
    (`auto cls = py::class_<T>(m, "T"); cls.def(...)`, Triton python_backend's Logger) and `.def`
    chains on a module are read as well. A lambda's callee named as the binding comes first (`m.def("add",
    [](...) { auto [a, b] = to_arrays(a_, b_); return mx::add(a, b); })`: MLX's helpers, called
    first, live in other files).

    In a helper given the module, ``given`` maps its parameters' and template parameters' names to
    their placeholders (PARAMETER + index): a class named by a parameter and of a template
    parameter's type (lmdeploy's ``template<typename Config> void bind_config(py::module_& m, const
    char* name) { py::class_<Config, Base> cls(m, name); ... }``) is recorded with them, and the
    graph step writes in each call's arguments (``bind_config<core::NormConfig>(m, "NormConfig")``,
    whose template and string arguments the ``module`` fact keeps)."""
    found = []
    modules = {var: module}  # variable -> the Python module it holds
    classes: dict[str, _Class] = {}  # variable -> the class binding it holds
    found.extend(_held_in_variables(body, scope, language, library, modules, classes, given or {}))
    calls = capture_nodes(body, language, _CALLS).get("c", ())
    for call in calls:
        fn = call.child_by_field_name("function")
        if fn is not None and fn.type in ("identifier", "qualified_identifier", "template_function"):
            call_args = call_arguments(call)
            handed = next((held for held in (_module_argument(arg, modules) for arg in call_args) if held), None)
            if handed is not None:
                callee = callee_text(fn)
                if callee and not library.spells(callee) and callee not in _CASTS:
                    arguments = fn.child_by_field_name("arguments") if fn.type == "template_function" else None
                    found.append(PybindFact(
                        "module", handed, "", callee, line(call), scope, mechanism=library.name,
                        args=tuple(string_value(arg) for arg in call_args) if arguments is not None else (),
                        template_args=tuple(split_args(SPACES.sub("", text(arguments))[1:-1]))
                        if arguments is not None else ()))
                continue
        if fn is None or fn.type != "field_expression":
            continue
        field = fn.child_by_field_name("field")
        if field is None or text(field) not in ("def", "def_static"):
            continue
        call_args = call_arguments(call)
        name = string_value(call_args[0]) if len(call_args) >= 2 else None
        if name is None:
            continue
        owner = fn.child_by_field_name("argument")
        target = function_ref(call_args[1])
        # a lambda wraps the real function: keep what it calls, the graph step picks one
        wrapped = tuple(lambda_callees(call_args[1], language)) if target == "<lambda>" else ()
        if wrapped:
            wrapped = _named_first(wrapped, name)
        held = _registered_on(owner, module, modules, classes, library, given or {}) if owner is not None else None
        if isinstance(held, str):
            # the `.def` line (of a chain's links, not the chain's first)
            found.append(PybindFact("def", held, name, target, line(field), scope, lambda_calls=wrapped,
                                    mechanism=library.name))
        elif held is not None:
            found.append(PybindFact("method", held[2], name, target, line(field), scope, owner=held[1],
                                    lambda_calls=wrapped, mechanism=library.name))
    for call in calls:
        fn = call.child_by_field_name("function")
        if fn is not None and fn.type != "field_expression":
            cls = _class_call(call, module, modules, library, given or {})  # the `py::class_<T>(m, "Name")` call
            if cls is not None:
                found.append(PybindFact("class", cls[2], cls[1], cls[0], line(call), scope, mechanism=library.name))
    return found


def _registered_on(node: Any, module: str, modules: dict[str, str], classes: dict[str, _Class],
                   library: BindingLibrary, given: Mapping[str, str]) -> str | _Class | None:
    """What a `.def` called on ``node`` registers on: a Python module (its name), a class binding,
    or None. A chain of calls is followed to its root: `py::class_<T>(m, "Name").def(...)`, a
    variable (`cls.def(...)`, `m.def(...).def(...)`) or a submodule (`m.def_submodule("sub")`)."""
    while node.type == "call_expression":
        fn = node.child_by_field_name("function")
        if fn is None:
            return None
        if fn.type != "field_expression":
            return _class_call(node, module, modules, library, given)
        field, inner = fn.child_by_field_name("field"), fn.child_by_field_name("argument")
        if inner is None:
            return None
        if field is not None and text(field) == "def_submodule":
            parent = _registered_on(inner, module, modules, classes, library, given)
            args = call_arguments(node)
            name = string_value(args[0]) if args else None
            return f"{parent}.{name}" if isinstance(parent, str) and name else None
        node = inner
    if node.type == "identifier":
        written = text(node)
        return modules.get(written) or classes.get(written)
    return None


def _module_argument(node: Any, modules: Mapping[str, str]) -> str | None:
    """The Python module an argument is: a variable holding one (`register(m)`), or a submodule made
    on the spot (Triton's `init_triton_ir(m.def_submodule("ir"))`, also nested, and moved:
    `initProton(std::move(m.def_submodule("proton")))`); None otherwise."""
    if node.type == "identifier":
        return modules.get(text(node))
    fn = node.child_by_field_name("function") if node.type == "call_expression" else None
    if fn is not None and SPACES.sub("", text(fn)) in ("std::move", "move"):
        args = call_arguments(node)
        return _module_argument(args[0], modules) if len(args) == 1 else None
    if fn is None or fn.type != "field_expression":
        return None
    field, inner = fn.child_by_field_name("field"), fn.child_by_field_name("argument")
    args = call_arguments(node)
    name = string_value(args[0]) if args and field is not None and text(field) == "def_submodule" else None
    parent = _module_argument(inner, modules) if name and inner is not None else None
    return f"{parent}.{name}" if parent else None


def _class_call(node: Any, module: str, modules: dict[str, str], library: BindingLibrary,
                given: Mapping[str, str]) -> _Class | None:
    """The class binding a call `py::class_<T, ...>(m, "Name")` (or `enum_`) makes: its module is
    the one it is given (the block's, or a submodule)."""
    fn = node.child_by_field_name("function")
    if fn is None:
        return None
    return _class_of(SPACES.sub("", text(fn)), call_arguments(node), module, modules, library, given)


def _class_of(written: str, args: list[Any], module: str, modules: dict[str, str], library: BindingLibrary,
              given: Mapping[str, str]) -> _Class | None:
    """(C++ type, Python name, module) of `py::class_<T, ...>` (``written``) made with ``args``; a
    helper's parameters (``given``) as their placeholders."""
    m = _CLASS_TYPE.match(written) if library.spells(written) else None
    if m is None or len(args) < 2:
        return None
    name = string_value(args[1])
    if name is None and args[1].type in ("identifier", "parameter_declaration"):
        name = given.get(text(args[1]))
    if name is None:
        return None
    cls = split_args(m.group(1))[0]
    return given.get(cls, cls), name, modules.get(text(args[0]), module)


def _named_first(callees: tuple[str, ...], name: str) -> tuple[str, ...]:
    """``callees`` with those named as the binding (`add` for `add` or `__add__`) first."""
    names = {name, name.strip("_")}
    return tuple(sorted(callees, key=lambda c: c.rsplit("::", 1)[-1] not in names))


_CASTS = frozenset({"static_cast", "dynamic_cast", "reinterpret_cast", "const_cast"})  # no function given a module
# stl_bind's `py::bind_vector<std::vector<T>>(m, "Name")` and `py::bind_map<Map, Holder>(m, "Name")` (nanobind's
# `nb::bind_vector`, `nb::bind_map`) make a class of their first template argument, as `py::class_` does
_CLASS_TYPE = re.compile(r"\w+::(?:class_|enum_|bind_vector|bind_map)<(.*)>$")
_DECLARATORS = "(init_declarator) @d (declaration declarator: (function_declarator) @f)"


def _held_in_variables(body: Any, scope: str, language: Language, library: BindingLibrary,
                       modules: dict[str, str], classes: dict[str, _Class],
                       given: Mapping[str, str]) -> list[PybindFact]:
    """Fill ``modules`` and ``classes`` with the variables the block declares, in source order
    (`auto sub = m.def_submodule("sub")`, `nb::module_ sub = ...`, `auto cls = nb::class_<T>(m,
    "T")`); and return the class facts of those constructed in place (`nb::class_<T> cls(m, "T");`),
    which no call expression shows."""
    found = []
    module = next(iter(modules.values()))
    captured = capture_nodes(body, language, _DECLARATORS)
    # `py::class_<Config> cls(m, name);` with names for arguments reads as the declaration of a function
    # cls taking a parameter of type m and one of type name (C++'s most vexing parse): its arguments
    declared = [*captured.get("d", ()), *(f for f in captured.get("f", ()) if _constructed(f))]
    for decl in sorted(declared, key=lambda n: n.start_byte):
        name = decl.child_by_field_name("declarator")
        value = decl.child_by_field_name("value" if decl.type == "init_declarator" else "parameters")
        if name is None or value is None or name.type != "identifier":
            continue
        held: str | _Class | None = None
        if value.type == "call_expression":
            held = _registered_on(value, module, modules, classes, library, given)
        elif value.type in ("argument_list", "parameter_list") and decl.parent is not None:
            kind = decl.parent.child_by_field_name("type")
            args = [a for a in value.named_children if a.type != "comment"]
            held = _class_of(SPACES.sub("", text(kind)), args, module, modules, library, given) \
                if kind is not None else None
            if held is not None:
                found.append(PybindFact("class", held[2], held[1], held[0], line(decl), scope,
                                        mechanism=library.name))
        if isinstance(held, str):
            modules[text(name)] = held
        elif held is not None:
            classes[text(name)] = held
    return found


def _constructed(declarator: Any) -> bool:
    """Whether a function declarator's parameters are all bare names: arguments, in a function body
    (`py::class_<Config> cls(m, name);`), not types."""
    params = declarator.child_by_field_name("parameters")
    named = [p for p in params.named_children if p.type != "comment"] if params is not None else []
    return bool(named) and all(p.type == "parameter_declaration" and p.named_child_count == 1
                               and p.named_children[0].type == "type_identifier" for p in named)


def lambda_callees(node: Any, language: Language) -> list[str]:
    found = capture_nodes(node, language, _CALLEES).get("callee", ())
    # Calls that start together (``py::module_::import("asyncio").attr(...)``: the import's, then
    # the attribute's) in the order they run, inner first: tree-sitter's order for such a tie
    # changed with what the process had parsed before (Triton's pb_stub.cc, scanned alone and
    # after other files), and a lambda's target is its first call resolved
    names = [callee_text(fn) for fn in sorted(found, key=lambda n: (n.start_byte, n.end_byte))
             if fn.type in CALLEE_TYPES]
    typed = _parameter_classes(node)
    # a call on any other object (`lhs.getType()`) names nothing the symbol table resolves: left out
    # before the first ten are kept, so that it takes no place of one that can be
    names = [_through_parameter(n, typed) for n in names if n]
    return [n for n in names if n.startswith("this->") or ("." not in n and "->" not in n)][:10]


# `self.create`, `self->create`: a method called on a named object, as callee_text writes it
_OBJECT_CALL = re.compile(r"(\w+)(?:\.|->)(~?\w+)")
_CLASS_NAME = re.compile(r"(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*")  # no template arguments


def _parameter_classes(node: Any) -> dict[str, str]:
    """A lambda's parameters whose declared type names a class, by name (`TritonOpBuilder &self`,
    `const ns::Engine* e`; not `auto`, a template's type or a built-in one): a binding lambda takes
    the bound object as one (`[](TritonOpBuilder &self, Value &v) { return self.create<LoadOp>(v); }`)."""
    if node.type != "lambda_expression":
        return {}
    declarator = node.child_by_field_name("declarator")
    params = declarator.child_by_field_name("parameters") if declarator is not None else None
    typed = {}
    for p in params.named_children if params is not None else ():
        kind, name = p.child_by_field_name("type"), p.child_by_field_name("declarator")
        while name is not None and name.type in ("reference_declarator", "pointer_declarator"):
            name = name.named_children[-1] if name.named_child_count else None
        if p.type != "parameter_declaration" or kind is None or name is None or name.type != "identifier" \
                or kind.type not in ("type_identifier", "qualified_identifier"):
            continue
        written = SPACES.sub("", text(kind))
        if _CLASS_NAME.fullmatch(written):
            typed[text(name)] = written
    return typed


def _through_parameter(callee: str, typed: Mapping[str, str]) -> str:
    """``callee`` with a call on a parameter of a known class written as that class's member
    (`self.create` -> `TritonOpBuilder::create`), which the symbol table can resolve."""
    m = _OBJECT_CALL.fullmatch(callee) if typed else None
    return f"{typed[m.group(1)]}::{m.group(2)}" if m is not None and m.group(1) in typed else callee


def call_arguments(call: Any) -> list[Any]:
    args = call.child_by_field_name("arguments")
    return [a for a in args.named_children if a.type != "comment"] if args is not None else []


def string_value(node: Any) -> str | None:
    if node.type == "string_literal":
        return "".join(text(c) for c in node.named_children if c.type in ("string_content", "escape_sequence"))
    if node.type == "concatenated_string":
        parts = [string_value(c) for c in node.named_children if c.type in ("string_literal", "raw_string_literal")]
        return "".join(p for p in parts if p is not None)
    if node.type == "raw_string_literal":
        content = node.child_by_field_name("content") if hasattr(node, "child_by_field_name") else None
        return text(content) if content is not None else None
    return None


def function_ref(node: Any) -> str:
    """`&fn`, `TORCH_FN(fn)`, `TORCH_BOX(&fn)`, `torch::dispatch(k, &fn)`, `&ns::Class::method` -> the
    function name; "" for what names no function (a tag list `{at::Tag::x}`, a string)."""
    if node.type == "lambda_expression":
        return "<lambda>"
    if node.type in ("initializer_list", "string_literal", "concatenated_string", "number_literal"):
        return ""
    written = SPACES.sub("", text(node))
    m = re.fullmatch(r"(?:\w+::)*overload_cast<.*>\(&?([\w:~]+(?:<[^()]*>)?)(?:,[^()]*)?\)", written)
    if m:
        return clean_name(m.group(1))
    while (m := _WRAPPERS.fullmatch(written)) is not None:
        written = m.group(1)
    written = written.lstrip("&").strip("()")
    written = re.sub(r"^(?:static_cast|reinterpret_cast)<.*>\(&?(.*)\)$", r"\1", written)
    return clean_name(written.lstrip("&"))


# the blocks whose names are namespaces of what they hold
_NAMESPACE_NODES = frozenset({"namespace_definition"})


@dataclasses.dataclass(frozen=True)
class TvmFfiNames:
    """The names TVM FFI registrations are written with (macros.yaml)."""

    macros: frozenset[str]  # given the global's name: `TVM_REGISTER_GLOBAL("name")`
    bodies: frozenset[str]  # called on a macro's result with the function: `.set_body_typed(fn)`
    registries: frozenset[str]  # the reflection registry: `refl::GlobalDef()`
    defs: frozenset[str]  # called on a registry with the name and the function: `.def("name", fn)`
    # given a name and the function, export it from the library: `TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, fn)`
    exports: frozenset[str] = frozenset()

    @property
    def markers(self) -> tuple[bytes, ...]:
        """Bytes a file holds when it registers anything (the scanner's filter)."""
        return tuple(sorted(name.encode() for name in (*self.macros, *self.registries, *self.exports)))


def tvm_ffi_registrations(root: Any, language: Language, names: TvmFfiNames) -> list[PybindFact]:
    """TVM FFI global functions, one "def" fact each (mechanism "tvm-ffi", ``module`` the dotted
    name's prefix and ``name`` its last part: `mlc.serve` and `create_engine` for
    "mlc.serve.create_engine"), read anywhere in the file: `MACRO("name").set_body_typed(fn)` and
    `refl::GlobalDef().def("name", fn).def_packed("other", g).def_method("m", &C::m)` (``names``).
    ``scope`` is the namespace the registration is written in, where its function is looked up."""
    found = _library_exports(root, language, names.exports) if names.exports else []
    for call, method, inner, args in _method_calls(root, language):
        if inner.type != "call_expression":
            continue
        if method in names.defs and len(args) >= 2 and _registry_chain(inner, names):
            name_node, target = args[0], args[1]
        elif method in names.bodies and args and (named := _macro_name_argument(inner, names.macros)) is not None:
            name_node, target = named, args[0]
        else:
            continue
        name = string_value(name_node)
        if not name:
            continue
        ref = function_ref(target)
        wrapped = tuple(lambda_callees(target, language)) if ref == "<lambda>" else ()
        prefix, _, short = name.rpartition(".")
        found.append(PybindFact("def", prefix, short, ref, line(name_node), _namespace_of(call),
                                lambda_calls=_named_first(wrapped, short) if wrapped else (), mechanism="tvm-ffi"))
    return found


def _library_exports(root: Any, language: Language, macros: frozenset[str]) -> list[PybindFact]:
    """`TVM_FFI_DLL_EXPORT_TYPED_FUNC(name, fn);`: ``fn`` exported from the shared library it is
    built into as ``name``, one "def" fact each (mechanism "tvm-ffi-export", no module: which library
    file holds it is the build's), the function as written; ``scope`` the namespace around."""
    found = []
    for call in capture_nodes(root, language, _CALLS).get("c", ()):
        fn = call.child_by_field_name("function")
        if fn is None or fn.type != "identifier" or text(fn) not in macros:
            continue
        args = call_arguments(call)
        if len(args) != 2 or args[0].type != "identifier":
            continue
        ref = function_ref(args[1])
        if ref and ref != "<lambda>":
            found.append(PybindFact("def", "", text(args[0]), ref, line(args[0]), _namespace_of(call),
                                    mechanism="tvm-ffi-export"))
    return found


@dataclasses.dataclass(frozen=True)
class TvmFfiObjectNames:
    """The names TVM FFI object types are written with (macros.yaml)."""

    declarations: frozenset[str]  # in the class body, given its type key and the class: `..._FINAL("a.C", CObj, B)`
    registries: frozenset[str]  # the reflection registry of a class: `refl::ObjectDef<CObj>()`
    statics: frozenset[str]  # called on it with a static method's name and function: `.def_static("name", fn)`
    links: frozenset[str]  # the other links its chain may hold: `.def(...)`, `.def_ro(...)`

    @property
    def markers(self) -> tuple[bytes, ...]:
        return tuple(sorted(name.encode() for name in (*self.declarations, *self.registries)))


# the statics of a class registered with ObjectDef<T>: module "", the class as written in ``template_args``
TVM_FFI_STATIC = "static"


def tvm_ffi_object_registrations(root: Any, data: bytes, language: Language, names: TvmFfiObjectNames
                                 ) -> list[PybindFact]:
    """TVM FFI object types: a "class" fact for each type key a class declares
    (`TVM_FFI_DECLARE_OBJECT_INFO_FINAL("xgrammar.Grammar", GrammarObj, ffi::Object)`: ``module``
    the key's prefix, ``name`` its last part, ``target`` the class), and a TVM_FFI_STATIC fact for
    each static method its registry defines (`refl::ObjectDef<GrammarObj>().def_static("from_ebnf",
    fn)`: the class in ``template_args``), which the graph step names by the class's key."""
    found = []
    if names.declarations:
        declared = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names.declarations))
                              + rb')\s*\(\s*"([\w.]+)"\s*,\s*((?:::)?\w+(?:\s*::\s*\w+)*)\s*,')
        for m in declared.finditer(data):
            prefix, _, short = m.group(1).decode().rpartition(".")
            node = root.descendant_for_byte_range(m.start(), m.start())
            if prefix and node is not None:
                found.append(PybindFact("class", prefix, short, SPACES.sub("", m.group(2).decode()),
                                        data.count(b"\n", 0, m.start()) + 1, _namespace_of(node),
                                        mechanism="tvm-ffi"))
    for call, method, inner, args in _method_calls(root, language):
        if method not in names.statics or len(args) < 2:
            continue
        owner = _object_registry(inner, names)
        name = string_value(args[0])
        ref = function_ref(args[1])
        if owner and name and ref:
            wrapped = tuple(lambda_callees(args[1], language)) if ref == "<lambda>" else ()
            found.append(PybindFact(TVM_FFI_STATIC, "", name, ref, line(args[0]), _namespace_of(call),
                                    lambda_calls=_named_first(wrapped, name) if wrapped else (),
                                    mechanism="tvm-ffi", template_args=(owner,)))
    return found


def _object_registry(node: Any, names: TvmFfiObjectNames) -> str:
    """The class of the registry (`refl::ObjectDef<CObj>()`) a chain of links starting at ``node``
    is rooted at, as written; "" when it is rooted at none."""
    links = names.links | names.statics
    while node.type == "call_expression":
        fn = node.child_by_field_name("function")
        if fn is None:
            return ""
        if fn.type != "field_expression":
            written = SPACES.sub("", text(fn))
            m = re.fullmatch(r"(?:\w+::)*(\w+)<(.+)>", written)
            return m.group(2) if m is not None and m.group(1) in names.registries else ""
        field, node = fn.child_by_field_name("field"), fn.child_by_field_name("argument")
        if field is None or node is None or _method_name(field) not in links:
            return ""
    return ""


@dataclasses.dataclass(frozen=True)
class PaddleOpNames:
    """The names Paddle custom operators are written with (macros.yaml)."""

    macros: frozenset[str]  # given the operator's name: `PD_BUILD_OP(name)`
    kernel_setters: frozenset[str]  # a link of the macro's chain given the kernel: `.SetKernelFn(...)`
    kernels: frozenset[str]  # what wraps the kernel function there: `PD_KERNEL(fn)`
    module: str  # the macro the build names the extension module with: `PADDLE_EXTENSION_NAME`

    @property
    def markers(self) -> tuple[bytes, ...]:
        """Bytes a file holds when it registers an operator (the scanner's filter)."""
        return tuple(sorted(name.encode() for name in self.macros))


def paddle_op_registrations(root: Any, language: Language, names: PaddleOpNames) -> list[PybindFact]:
    """Paddle custom operators, one "def" fact each (mechanism "paddle-op", ``module`` the build's
    macro, :attr:`PaddleOpNames.module`, as a pybind11 module named by the build is): the chain
    `PD_BUILD_OP(name)....SetKernelFn(PD_KERNEL(fn))...`, wherever it stands, the kernel link at any
    place in the chain. ``scope`` is the namespace the chain is written in."""
    found = []
    for call, method, inner, args in _method_calls(root, language):
        if method not in names.kernel_setters or len(args) != 1:
            continue
        named = _chain_root_argument(inner, names.macros)
        if named is None or named.type != "identifier":
            continue
        kernel = args[0]
        wrapper = kernel.child_by_field_name("function") if kernel.type == "call_expression" else None
        if wrapper is not None and text(wrapper) in names.kernels:
            wrapped = call_arguments(kernel)
            kernel = wrapped[0] if len(wrapped) == 1 else kernel
        ref = function_ref(kernel)
        if ref and ref != "<lambda>":
            found.append(PybindFact("def", names.module, text(named), ref, line(named), _namespace_of(call),
                                    mechanism="paddle-op"))
    return found


def _method_calls(root: Any, language: Language) -> Iterator[tuple[Any, str, Any, list[Any]]]:
    """(the call, the method's name, the object it is called on, the arguments) of every call of a
    method under ``root``, `inner.method(args)`: the links of registration chains."""
    for call in capture_nodes(root, language, _CALLS).get("c", ()):
        fn = call.child_by_field_name("function")
        if fn is None or fn.type != "field_expression":
            continue
        field, inner = fn.child_by_field_name("field"), fn.child_by_field_name("argument")
        if field is not None and inner is not None:
            yield call, _method_name(field), inner, call_arguments(call)


def _chain_root_argument(node: Any, macros: frozenset[str]) -> Any:
    """The argument of the call of one of ``macros`` that a chain of member calls (`.Inputs(...)`
    links) starting at ``node`` is rooted at, else None."""
    while node.type == "call_expression":
        fn = node.child_by_field_name("function")
        if fn is not None and fn.type == "field_expression":
            node = fn.child_by_field_name("argument")
            if node is None:
                return None
            continue
        return _macro_name_argument(node, macros)
    return None


def _registry_chain(node: Any, names: TvmFfiNames) -> bool:
    """Whether ``node`` is a chain of calls (`.def(...)` links) rooted at a call of a registry
    (`refl::GlobalDef()`, `GlobalDef()`)."""
    while node.type == "call_expression":
        fn = node.child_by_field_name("function")
        if fn is None:
            return False
        if fn.type != "field_expression":
            return SPACES.sub("", text(fn)).rpartition("::")[2] in names.registries
        field, node = fn.child_by_field_name("field"), fn.child_by_field_name("argument")
        if field is None or node is None or _method_name(field) not in names.defs:
            return False
    return False


def _method_name(field: Any) -> str:
    """The name of a called member, its template arguments left out (`set_body_method<Module>`)."""
    if field.type == "template_method":
        name = field.child_by_field_name("name")
        return text(name) if name is not None else ""
    return text(field)


def _macro_name_argument(node: Any, macros: frozenset[str]) -> Any:
    """The first argument of a call of one of ``macros`` (`TVM_REGISTER_GLOBAL("name")`), else None."""
    fn = node.child_by_field_name("function")
    if fn is None or fn.type != "identifier" or text(fn) not in macros:
        return None
    args = call_arguments(node)
    return args[0] if args else None


def _namespace_of(node: Any) -> str:
    """The named namespaces around ``node``, outermost first, joined with `::`."""
    names = []
    parent = node.parent
    while parent is not None:
        if parent.type in _NAMESPACE_NODES:
            named = parent.child_by_field_name("name")
            if named is not None:
                names.append(SPACES.sub("", text(named)))
        parent = parent.parent
    return "::".join(reversed(names))
