"""Per-file facts of a Go file: package clause, imports, declarations, interface checks, calls, cgo.

Output is JSON data that does not depend on the file's path (it is cached by content hash): names
are as written, qualified within the package (``Server``, ``Server.Handle``); the graph step knows
the file's import path (from go.mod) and resolves imports and calls across the system.

Calls are recorded as written with one normalisation: inside a method, a call on the receiver
(``s.helper()`` in ``func (s *Server) ...``) is ``self.helper``, because that is the only
receiver whose type the scanner knows. cgo: ``import "C"`` marks the file, the comment right
before it (the preamble) is C code whose ``#include`` lines and function definitions are kept,
and ``//export Name`` lines name Go functions exported to C.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from extractor.native.comments import leading_comment
from extractor.go.parse import capture_nodes
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


def scan_go(parsed: ParsedFile) -> dict[str, Any]:
    """Facts of one Go file (see module docstring); never raises on odd input."""
    root = parsed.tree.root_node
    facts: dict[str, Any] = {"package": "", "package_line": 0, "imports": [], "defs": [], "checks": []}
    bodies: list[tuple[int, int, str, str]] = []  # start, end, caller qual, receiver name
    previous = None
    for child in root.named_children:
        t = child.type
        if t == "package_clause":
            name = _child_of_type(child, "package_identifier")
            if name is not None:
                facts["package"] = _text(name)
                facts["package_line"] = child.start_point[0] + 1
                facts["doc"] = _doc_comment(child)
        elif t == "import_declaration":
            _visit_import(child, previous, facts)
        elif t == "function_declaration":
            _visit_function(child, facts, bodies, None)
        elif t == "method_declaration":
            _visit_function(child, facts, bodies, child.child_by_field_name("receiver"))
        elif t == "type_declaration":
            for spec in child.named_children:
                _visit_type(spec, facts)
        elif t == "var_declaration":
            _visit_checks(child, facts)
        previous = child
    facts["calls"], errors = _calls(root, bodies)
    exports = [[m.group(1).decode(), parsed.data.count(b"\n", 0, m.start()) + 1]
               for m in _EXPORT.finditer(parsed.data)]
    if exports:
        facts["exports"] = exports
    facts["errors"] = len(errors)
    facts["error_lines"] = sorted({e.start_point[0] + 1 for e in errors})[:_MAX_ERROR_LINES]
    return facts


def _visit_import(node: Any, previous: Any, facts: dict[str, Any]) -> None:
    for spec in _descendants(node, "import_spec"):
        path = spec.child_by_field_name("path")
        if path is None:
            continue
        target = _text(path).strip('"`')
        alias_node = spec.child_by_field_name("name")
        alias = _text(alias_node) if alias_node is not None else ""
        line = spec.start_point[0] + 1
        facts["imports"].append([target, alias, line])
        if target == "C":
            facts["cgo"] = _cgo_preamble(previous, node)


def _cgo_preamble(comment: Any, import_node: Any) -> dict[str, Any]:
    """The C code in the comment immediately before `import "C"` (no blank line between)."""
    info: dict[str, Any] = {"line": import_node.start_point[0] + 1, "includes": [], "functions": []}
    if comment is None or comment.type != "comment" or comment.end_point[0] < import_node.start_point[0] - 1:
        return info
    text = _text(comment)
    if text.startswith("//"):
        # a run of line comments is several nodes: take them all, walking back
        lines, node = [], comment
        while node is not None and node.type == "comment" and _text(node).startswith("//"):
            lines.insert(0, (node.start_point[0] + 1, _text(node)[2:]))
            prev = node.prev_named_sibling
            if prev is None or prev.end_point[0] < node.start_point[0] - 1:
                break
            node = prev
        first = lines[0][0]
        body = "\n".join(t for _, t in lines)
    else:
        first = comment.start_point[0] + 1
        body = text[2:-2] if text.endswith("*/") else text[2:]
    for m in _INCLUDE.finditer(body):
        info["includes"].append([m.group(1), first + body.count("\n", 0, m.start())])
    for m in _C_FUNCTION.finditer(body):
        info["functions"].append([m.group(1), first + body.count("\n", 0, m.start(1))])
    return info


def _visit_function(node: Any, facts: dict[str, Any], bodies: list, receiver: Any) -> None:
    name = node.child_by_field_name("name")
    if name is None:
        return
    short = _text(name)
    record: dict[str, Any] = {"kind": "function", "qual": short}
    recv_name = ""
    if receiver is not None:
        recv_type, recv_name, pointer = _receiver(receiver)
        if not recv_type:
            return
        record.update(kind="method", qual=f"{recv_type}.{short}", receiver=("*" if pointer else "") + recv_type)
    record.update(line=name.start_point[0] + 1, start=node.start_point[0] + 1, end=node.end_point[0] + 1)
    params = node.child_by_field_name("parameters")
    if params is not None:
        record["params"] = _params(params)
    result = node.child_by_field_name("result")
    if result is not None:
        record["returns"] = _clip(_SPACES.sub(" ", _text(result)))
    if node.child_by_field_name("type_parameters") is not None:
        record["tags"] = ["generic"]
    doc = _doc_comment(node)
    if doc:
        record["doc"] = doc
    facts["defs"].append(record)
    body = node.child_by_field_name("body")
    if body is not None:
        bodies.append((body.start_byte, body.end_byte, record["qual"], recv_name))


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


def _visit_type(spec: Any, facts: dict[str, Any]) -> None:
    name = spec.child_by_field_name("name")
    if name is None:
        return
    type_node = spec.child_by_field_name("type")
    record: dict[str, Any] = {"qual": _text(name), "line": name.start_point[0] + 1,
                              "start": spec.start_point[0] + 1, "end": spec.end_point[0] + 1}
    if spec.type == "type_alias":
        record["kind"] = "alias"
        record["target"] = _clip(_text(type_node)) if type_node is not None else ""
    elif type_node is not None and type_node.type == "struct_type":
        record["kind"] = "struct"
        embeds = []
        for field in _descendants(type_node, "field_declaration"):
            if field.child_by_field_name("name") is None:  # an embedded type
                ftype = field.child_by_field_name("type")
                if ftype is not None:
                    embeds.append(_type_text(ftype))
        if embeds:
            record["embeds"] = embeds
    elif type_node is not None and type_node.type == "interface_type":
        record["kind"] = "interface"
        embeds, methods = [], []
        for elem in type_node.named_children:
            if elem.type == "type_elem":
                embeds.extend(_type_text(c) for c in elem.named_children)
            elif elem.type == "method_elem":
                mname = elem.child_by_field_name("name")
                if mname is not None:
                    methods.append([_text(mname), mname.start_point[0] + 1])
        if embeds:
            record["embeds"] = [e for e in embeds if e]
        if methods:
            record["methods"] = methods
    else:
        record["kind"] = "type"
        record["underlying"] = type_node.type.removesuffix("_type") if type_node is not None else ""
    if spec.child_by_field_name("type_parameters") is not None:
        record["tags"] = ["generic"]
    doc = _doc_comment(spec if spec.prev_named_sibling is not None else spec.parent)
    if doc:
        record["doc"] = doc
    facts["defs"].append(record)


def _visit_checks(node: Any, facts: dict[str, Any]) -> None:
    """`var _ I = (*T)(nil)`, `var _ I = T{}`, `var _ I = &T{}`: T is checked to satisfy I."""
    for spec in _descendants(node, "var_spec"):
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
            facts["checks"].append([_type_text(iface), concrete, spec.start_point[0] + 1])


def _checked_type(expr: Any) -> str:
    text = _SPACES.sub("", _text(expr))
    m = re.fullmatch(r"\(\*([\w.]+)(?:\[[^\]]*\])?\)\(nil\)|&?([\w.]+)(?:\[[^\]]*\])?\{\}|\(\*?([\w.]+)\)\(nil\)", text)
    if not m:
        return ""
    return next(g for g in m.groups() if g)


def _calls(root: Any, bodies: list[tuple[int, int, str, str]]) -> tuple[list[list[Any]], list[Any]]:
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
    return [list(c) for c in sorted(calls)], found.get("error", [])


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


def _descendants(node: Any, kind: str) -> list[Any]:
    out, stack = [], [node]
    while stack:
        current = stack.pop()
        if current.type == kind:
            out.append(current)
            continue
        stack.extend(reversed(current.named_children))
    return out


def _type_text(node: Any) -> str:
    """`*pkg.T[X]` -> `pkg.T`: the named type, for embedding and interface checks."""
    text = _SPACES.sub("", _text(node)).lstrip("*")
    return re.sub(r"\[.*\]$", "", text)


def _params(node: Any) -> list[list[str]]:
    """[name, type] per parameter: `a, b int` gives two; an unnamed parameter has name ""."""
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
            out.append([_text(name) if name is not None else "", shown])
    return out


def _doc_comment(node: Any) -> str:
    """First line of the `//` comment block right above a declaration (directives passed over)."""
    return leading_comment(node, _text, "/*", ("go:", "+build", "export "))
