"""Registrations read inside `TORCH_LIBRARY*(ns, m) { ... }` and `PYBIND11_MODULE(mod, m) { ... }`
blocks: which torch operator or Python name is bound to which C++ function (as written; the graph
step resolves the names), with the operator's schema parsed into parameters and a return type."""

from __future__ import annotations

import re
from typing import Any

from extractor.cpp.facts import OpSchema, PybindFact, SchemaParam, TorchOpFact
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
                        language: Language) -> list[TorchOpFact]:
    """`m.def(...)`/`m.impl(...)` calls on the block's variable, one fact each."""
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
        first = string_value(call_args[0]) if call_args else None
        if first is None:
            continue
        op = first.split("(", 1)[0].strip()
        name, _, overload = op.partition(".")
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
        found.append(TorchOpFact(kind, name, overload, line(call_args[0]), dispatch, fn, scope, ns, ns_macro,
                                 ns_suffix, schema, lambda_calls))
    return found


def pybind_registrations(module: str, var: str, body: Any, scope: str, language: Language
                         ) -> list[PybindFact]:
    """`m.def("name", &fn)`, `py::class_<T>(m, "Name")` and its `.def("meth", &T::meth)` calls; and
    a call that hands the module on (`register_translator(m)`: a ``module`` fact, ``target`` the
    function as written), whose registrations belong to this module too."""
    found = []
    calls = capture_nodes(body, language, _CALLS).get("c", ())
    for call in calls:
        fn = call.child_by_field_name("function")
        if fn is not None and fn.type in ("identifier", "qualified_identifier") and \
                any(text(arg) == var for arg in call_arguments(call)):
            callee = callee_text(fn)
            if callee and not callee.startswith(("py::", "pybind11::")):
                found.append(PybindFact("module", module, "", callee, line(call), scope))
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
        if owner is not None and text(owner) == var:
            found.append(PybindFact("def", module, name, target, line(call), scope, lambda_calls=wrapped))
            continue
        cls = _pybind_class(owner)
        if cls is not None:
            found.append(PybindFact("method", module, name, target, line(field), scope, owner=cls[1],
                                    lambda_calls=wrapped))
    for call in calls:
        fn = call.child_by_field_name("function")
        if fn is not None and fn.type != "field_expression":
            cls = _pybind_class(call)  # the `py::class_<T>(m, "Name")` call itself
            if cls is not None:
                found.append(PybindFact("class", module, cls[1], cls[0], line(call), scope))
    return found


def lambda_callees(node: Any, language: Language) -> list[str]:
    found = capture_nodes(node, language, _CALLEES).get("callee", ())
    # Calls that start together (``py::module_::import("asyncio").attr(...)``: the import's, then
    # the attribute's) in the order they run, inner first: tree-sitter's order for such a tie
    # changed with what the process had parsed before (Triton's pb_stub.cc, scanned alone and
    # after other files), and a lambda's target is its first call resolved
    names = [callee_text(fn) for fn in sorted(found, key=lambda n: (n.start_byte, n.end_byte))
             if fn.type in CALLEE_TYPES]
    return [n for n in names if n][:10]


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


def _pybind_class(node: Any) -> tuple[str, str] | None:
    """(C++ type, Python name) for `py::class_<T, ...>(m, "Name")` at the root of a `.def` chain."""
    while node is not None and node.type == "call_expression":
        fn = node.child_by_field_name("function")
        if fn is None:
            return None
        if fn.type == "field_expression":
            node = fn.child_by_field_name("argument")
            continue
        written = SPACES.sub("", text(fn))
        m = re.match(r"(?:py|pybind11)::(?:class_|enum_)<(.*)>$", written)
        args = call_arguments(node)
        name = string_value(args[1]) if m and len(args) >= 2 else None
        if m is None or name is None:
            return None
        return split_args(m.group(1))[0], name
    return None
