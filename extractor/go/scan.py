"""Per-file facts of a Go file: package clause, imports, declarations, interface checks, calls, cgo.

Output is a :class:`extractor.go.facts.GoFacts` that does not depend on the file's path (it is
cached by content hash): names are as written, qualified within the package (``Server``, ``Server.Handle``); the graph step knows
the file's import path (from go.mod) and resolves imports and calls across the system.

Calls are recorded as written with one normalisation: inside a method, a call on the receiver
(``s.helper()`` in ``func (s *Server) ...``) is ``self.helper``, and one on a receiver's field
(``s.store.Get()``) ``self.store.Get``. A call on a field of another name keeps it
(``req.Body.Close()`` is ``req.Body.Close``): the graph step knows the caller's parameters' types
and the structs' fields'. Any other call on an expression is ``?.name``. cgo: ``import "C"`` marks
the file, the comment right before it (the preamble) is C code whose ``#include`` lines and function
definitions are kept, and ``//export Name`` lines name Go functions exported to C.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from extractor.go.facts import GoCgo, GoDefinition, GoFacts
from extractor.native.calls import CallSites, group_calls
from extractor.native.comments import leading_comment
from extractor.go.parse import capture_nodes, descendants
from extractor.model import ParsedFile

_CALL_QUERY = "(call_expression function: (_) @callee) (ERROR) @error"
_SPACES = re.compile(r"\s+")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^">]+)[">]', re.M)
# a C function definition in the preamble: `static inline int name(args) {`
_C_FUNCTION = re.compile(r"^[ \t]*(?:(?:static|inline|extern|const|unsigned|signed|struct)\s+)*[A-Za-z_]\w*[\s*]+"
                         r"([A-Za-z_]\w*)\s*\([^;{)]*\)\s*\{", re.M)
_EXPORT = re.compile(rb"^//export\s+(\w+)", re.M)
_MAX_ERROR_LINES = 20
_MAX_TEXT = 300


class _File:
    """What the walk over a file's top-level declarations collects."""

    def __init__(self) -> None:
        self.imports: list[tuple[str, str, int]] = []
        self.defs: list[GoDefinition] = []
        self.checks: list[tuple[str, str, int]] = []
        self.cgo: GoCgo | None = None
        self.bodies: list[tuple[int, int, str, str]] = []  # start, end, caller qual, receiver name


def scan_go(parsed: ParsedFile) -> GoFacts:
    """Facts of one Go file (see module docstring); never raises on odd input."""
    root = parsed.tree.root_node
    found = _File()
    package, package_line, doc = "", 0, ""
    previous = None
    for child in root.named_children:
        t = child.type
        if t == "package_clause":
            name = _child_of_type(child, "package_identifier")
            if name is not None:
                package, package_line, doc = _text(name), child.start_point[0] + 1, _doc_comment(child)
        elif t == "import_declaration":
            _visit_import(child, previous, found)
        elif t == "function_declaration":
            _visit_function(child, found, None)
        elif t == "method_declaration":
            _visit_function(child, found, child.child_by_field_name("receiver"))
        elif t == "type_declaration":
            for spec in child.named_children:
                _visit_type(spec, found)
        elif t == "var_declaration":
            _visit_checks(child, found)
        previous = child
    calls, errors = _calls(root, found.bodies)
    exports = tuple((m.group(1).decode(), parsed.data.count(b"\n", 0, m.start()) + 1)
                    for m in _EXPORT.finditer(parsed.data))
    return GoFacts(package, package_line, doc, tuple(found.imports), tuple(found.defs), tuple(found.checks), calls,
                   found.cgo, exports, len(errors),
                   tuple(sorted({e.start_point[0] + 1 for e in errors})[:_MAX_ERROR_LINES]))


def _visit_import(node: Any, previous: Any, found: _File) -> None:
    for spec in descendants(node, "import_spec"):
        path = spec.child_by_field_name("path")
        if path is None:
            continue
        target = _text(path).strip('"`')
        alias_node = spec.child_by_field_name("name")
        alias = _text(alias_node) if alias_node is not None else ""
        line = spec.start_point[0] + 1
        found.imports.append((target, alias, line))
        if target == "C":
            found.cgo = _cgo_preamble(previous, node)


def _cgo_preamble(comment: Any, import_node: Any) -> GoCgo:
    """The C code in the comments immediately before `import "C"` (no blank line between): the whole
    comment group, as cgo reads it, so `//` lines and a `/* */` block after them are one preamble."""
    line = import_node.start_point[0] + 1
    if comment is None or comment.type != "comment" or comment.end_point[0] < import_node.start_point[0] - 1:
        return GoCgo(line)
    group: list[Any] = []  # the group's comments, walking back while no blank line separates them
    node = comment
    while node is not None and node.type == "comment":
        group.insert(0, node)
        prev = node.prev_named_sibling
        if prev is None or prev.end_point[0] < node.start_point[0] - 1:
            break
        node = prev
    first = group[0].start_point[0] + 1
    lines: dict[int, str] = {}  # by line number, so that a match's line is counted in the joined text
    for c in group:
        text = _text(c)
        body = text[2:] if text.startswith("//") else text[2:-2] if text.endswith("*/") else text[2:]
        for i, part in enumerate(body.split("\n")):
            lines[c.start_point[0] + 1 + i] = part
    body = "\n".join(lines.get(n, "") for n in range(first, max(lines) + 1))
    includes = tuple((m.group(1), first + body.count("\n", 0, m.start())) for m in _INCLUDE.finditer(body))
    functions = tuple((m.group(1), first + body.count("\n", 0, m.start(1))) for m in _C_FUNCTION.finditer(body))
    return GoCgo(line, includes, functions)


def _visit_function(node: Any, found: _File, receiver: Any) -> None:
    name = node.child_by_field_name("name")
    if name is None:
        return
    kind, qual, recv_name, recv_written = "function", _text(name), "", ""
    if receiver is not None:
        recv_type, recv_name, pointer = _receiver(receiver)
        if not recv_type:
            return
        kind, qual, recv_written = "method", f"{recv_type}.{qual}", ("*" if pointer else "") + recv_type
    params = node.child_by_field_name("parameters")
    result = node.child_by_field_name("result")
    body = node.child_by_field_name("body")
    found.defs.append(GoDefinition(
        kind, qual, name.start_point[0] + 1, node.start_point[0] + 1, node.end_point[0] + 1,
        tags=("generic",) if node.child_by_field_name("type_parameters") is not None else (),
        doc=_doc_comment(node), receiver=recv_written, params=_params(params) if params is not None else None,
        returns=_clip(_SPACES.sub(" ", _text(result))) if result is not None else "",
        locals=_locals(body) if body is not None else ()))
    if body is not None:
        found.bodies.append((body.start_byte, body.end_byte, qual, recv_name))


def _locals(body: Any) -> tuple[tuple[str, str], ...]:
    """The locals of a body whose type the declaration states (GoDefinition.locals), by name."""
    found: dict[str, set[str]] = {}
    for decl in capture_nodes(body, "(short_var_declaration) @decl (var_spec) @decl").get("decl", ()):
        if decl.type == "var_spec":
            names = decl.children_by_field_name("name")
            declared = decl.child_by_field_name("type")
            value = decl.child_by_field_name("value")
            values = value.named_children if value is not None else []
            for i, n in enumerate(names):
                written = _SPACES.sub("", _text(declared)) if declared is not None else \
                    _local_type(values[i]) if len(values) == len(names) else ""
                found.setdefault(_text(n), set()).add(written)
            continue
        left, right = decl.child_by_field_name("left"), decl.child_by_field_name("right")
        names = left.named_children if left is not None else []
        values = right.named_children if right is not None else []
        if len(names) == len(values):
            pairs = list(zip(names, values))
        elif len(values) == 1 and values[0].type == "call_expression":  # `x, err := F(...)`: its first result
            pairs = [(names[0], values[0])]
        else:
            pairs = []
        for n, v in pairs:
            if n.type == "identifier":
                found.setdefault(_text(n), set()).add(_local_type(v))
    return tuple(sorted((name, next(iter(types))) for name, types in found.items()
                        if len(types) == 1 and next(iter(types)) and name != "_"))


def _local_type(value: Any) -> str:
    """The type a value's expression states: `&T{}`, `T{}`, `new(T)`, or "call:F" for `F(...)`."""
    if value.type == "unary_expression" and _text(value).startswith("&") and value.named_child_count:
        value = value.named_children[-1]
    if value.type == "composite_literal":
        kind = value.child_by_field_name("type")
        named = kind is not None and kind.type in ("type_identifier", "qualified_type", "generic_type")
        return _SPACES.sub("", _text(kind)) if named else ""
    if value.type == "call_expression":
        fn = value.child_by_field_name("function")
        args = value.child_by_field_name("arguments")
        if fn is not None and _text(fn) == "new" and args is not None and args.named_child_count == 1:
            return _SPACES.sub("", _text(args.named_children[0]))
        if fn is not None and (fn.type == "identifier" or (fn.type == "selector_expression" and re.fullmatch(
                r"\w+\.\w+", _text(fn)))):
            return "call:" + _text(fn)
    return ""


def _receiver(params: Any) -> tuple[str, str, bool]:
    """(type name, receiver variable, pointer?) of `(s *Server[T])`."""
    for decl in params.named_children:
        if decl.type != "parameter_declaration":
            continue
        type_node = decl.child_by_field_name("type")
        name = decl.child_by_field_name("name")
        pointer = False
        while type_node is not None and type_node.type in ("pointer_type", "parenthesized_type"):
            pointer = pointer or type_node.type == "pointer_type"
            type_node = type_node.named_children[0] if type_node.named_child_count else None
        if type_node is None:
            return "", "", False
        if type_node.type == "generic_type":
            type_node = type_node.child_by_field_name("type")
        return (_text(type_node) if type_node is not None else ""), (_text(name) if name is not None else ""), pointer
    return "", "", False


def _visit_type(spec: Any, found: _File) -> None:
    name = spec.child_by_field_name("name")
    if name is None:
        return
    type_node = spec.child_by_field_name("type")
    embeds: list[str] = []
    methods: list[tuple[str, int]] = []
    fields: list[tuple[str, int, str, bool]] = []
    target = underlying = ""
    if spec.type == "type_alias":
        kind = "alias"
        target = _clip(_text(type_node)) if type_node is not None else ""
    elif type_node is not None and type_node.type == "struct_type":
        kind = "struct"
        for field in descendants(type_node, "field_declaration"):
            if field.child_by_field_name("name") is None:  # an embedded type
                ftype = field.child_by_field_name("type")
                if ftype is not None:
                    embeds.append(_type_text(ftype))
        fields = _struct_fields(type_node)
    elif type_node is not None and type_node.type == "interface_type":
        kind = "interface"
        for elem in type_node.named_children:
            if elem.type == "type_elem":
                embeds.extend(e for e in (_type_text(c) for c in elem.named_children) if e)
            elif elem.type == "method_elem":
                mname = elem.child_by_field_name("name")
                if mname is not None:
                    methods.append((_text(mname), mname.start_point[0] + 1))
    else:
        kind = "type"
        underlying = type_node.type.removesuffix("_type") if type_node is not None else ""
    found.defs.append(GoDefinition(
        kind, _text(name), name.start_point[0] + 1, spec.start_point[0] + 1, spec.end_point[0] + 1,
        tags=("generic",) if spec.child_by_field_name("type_parameters") is not None else (),
        doc=_doc_comment(spec if spec.prev_named_sibling is not None else spec.parent),
        embeds=tuple(embeds), methods=tuple(methods), underlying=underlying, target=target, fields=tuple(fields)))


def _struct_fields(struct: Any) -> list[tuple[str, int, str, bool]]:
    """The struct's own fields (not those of a struct type nested in one), each name of `A, B int`."""
    body = _child_of_type(struct, "field_declaration_list")
    out: list[tuple[str, int, str, bool]] = []
    for field in body.named_children if body is not None else ():
        if field.type != "field_declaration":
            continue
        ftype = field.child_by_field_name("type")
        shown = _clip(_SPACES.sub(" ", _text(ftype))) if ftype is not None else ""
        names = field.children_by_field_name("name")
        for name in names:
            out.append((_text(name), name.start_point[0] + 1, shown, False))
        if not names and ftype is not None:
            if any(c.type == "*" for c in field.children):  # `*T` embeds: the star is the field's token
                shown = "*" + shown
            out.append((_type_text(ftype).rsplit(".", 1)[-1], ftype.start_point[0] + 1, shown, True))
    return out


def _visit_checks(node: Any, found: _File) -> None:
    """`var _ I = (*T)(nil)`, `var _ I = T{}`, `var _ I = &T{}`: T is checked to satisfy I."""
    for spec in descendants(node, "var_spec"):
        names = spec.children_by_field_name("name")
        iface = spec.child_by_field_name("type")
        value = spec.child_by_field_name("value")
        if len(names) != 1 or _text(names[0]) != "_" or iface is None or value is None:
            continue
        values = value.named_children if value.type == "expression_list" else [value]
        if not values:
            continue
        concrete = _checked_type(values[0])
        if concrete:
            found.checks.append((_type_text(iface), concrete, spec.start_point[0] + 1))


def _checked_type(expr: Any) -> str:
    text = _SPACES.sub("", _text(expr))
    m = re.fullmatch(r"\(\*([\w.]+)(?:\[[^\]]*\])?\)\(nil\)|&?([\w.]+)(?:\[[^\]]*\])?\{\}|\(\*?([\w.]+)\)\(nil\)", text)
    if not m:
        return ""
    return next(g for g in m.groups() if g)


def _calls(root: Any, bodies: list[tuple[int, int, str, str]]) -> tuple[CallSites, list[Any]]:
    found = capture_nodes(root, _CALL_QUERY)
    bodies.sort()
    starts = [b[0] for b in bodies]
    calls: set[tuple[str, str, int]] = set()
    for fn in found.get("callee", ()):
        i = bisect.bisect_right(starts, fn.start_byte) - 1
        if i < 0 or fn.end_byte > bodies[i][1]:
            continue
        callee = _callee(fn, bodies[i][3])
        if callee:
            calls.add((bodies[i][2], callee, fn.start_point[0] + 1))
    return group_calls(calls), found.get("error", [])


def _callee(fn: Any, receiver: str) -> str:
    t = fn.type
    if t == "identifier":
        return _text(fn)
    if t == "generic_type" or t == "index_expression":  # f[T](x)
        inner = fn.child_by_field_name("type") or fn.child_by_field_name("operand")
        return _callee(inner, receiver) if inner is not None else ""
    if t == "selector_expression":
        operand = fn.child_by_field_name("operand")
        field = fn.child_by_field_name("field")
        if operand is None or field is None:
            return ""
        if operand.type == "identifier":
            head = _text(operand)
            return f"self.{_text(field)}" if receiver and head == receiver else f"{head}.{_text(field)}"
        inner, member = operand.child_by_field_name("operand"), operand.child_by_field_name("field")
        if operand.type == "selector_expression" and inner is not None and member is not None \
                and inner.type == "identifier":  # x.f.m()
            head = _text(inner)
            head = "self" if receiver and head == receiver else head
            return f"{head}.{_text(member)}.{_text(field)}"
        return f"?.{_text(field)}"
    return ""


# -- helpers -------------------------------------------------------------------------------------

def _text(node: Any) -> str:
    return node.text.decode("utf-8", errors="replace")


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[:_MAX_TEXT - 3] + "..."


def _child_of_type(node: Any, kind: str) -> Any:
    for child in node.children:
        if child.type == kind:
            return child
    return None


def _type_text(node: Any) -> str:
    """`*pkg.T[X]` -> `pkg.T`: the named type, for embedding and interface checks."""
    text = _SPACES.sub("", _text(node)).lstrip("*")
    return re.sub(r"\[.*\]$", "", text)


def _params(node: Any) -> tuple[tuple[str, str], ...]:
    """(name, type) per parameter: `a, b int` gives two; an unnamed parameter has name ""."""
    out = []
    for decl in node.named_children:
        if decl.type not in ("parameter_declaration", "variadic_parameter_declaration"):
            continue
        ptype = decl.child_by_field_name("type")
        shown = _clip(_SPACES.sub(" ", _text(ptype))) if ptype is not None else ""
        if decl.type == "variadic_parameter_declaration":
            shown = "..." + shown
        names = decl.children_by_field_name("name")
        for name in names or [None]:
            out.append((_text(name) if name is not None else "", shown))
    return tuple(out)


def _doc_comment(node: Any) -> str:
    """First line of the `//` comment block right above a declaration (directives passed over)."""
    return leading_comment(node, _text, "/*", ("go:", "+build", "export "))
