"""Per-file facts of a C/C++/CUDA file: definitions, includes, calls, launches, registrations.

The scanner walks only the declaration levels of the tree (translation unit, namespaces, class
bodies, linkage blocks, preprocessor branches, ERROR regions) in Python and finds call sites with a
tree-sitter query, so it stays within a small factor of the parse itself. Code under both branches
of an ``#if`` is visited: tree-sitter keeps both in the tree. Output is JSON data that does not
depend on the file's path (it is cached by content hash); names are as written in the file, and the
graph step resolves them across files.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from extractor.comments import leading_comment
from extractor.cpp.parse import attribute_macros, capture_nodes, macro_config, parse_source
from extractor.model import Language, ParsedFile

_CONTAINERS = frozenset({
    "translation_unit", "declaration_list", "preproc_if", "preproc_ifdef", "preproc_else",
    "preproc_elif", "preproc_elifdef", "ERROR"})
_TYPE_KINDS = {"class_specifier": "class", "struct_specifier": "struct",
               "union_specifier": "union", "enum_specifier": "enum"}
_DECLARATOR_WRAPPERS = frozenset({
    "pointer_declarator", "reference_declarator", "attributed_declarator",
    "parenthesized_declarator", "pointer_type_declarator", "reference_type_declarator"})
_CUDA_QUALIFIER = re.compile(rb"\b__(global|device|host)__\b")
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
_SPACES = re.compile(r"\s+")
_SIMPLE_NAME = re.compile(r"~?\w+(?:::~?\w+)*")
_FILE_QUERY = ("(call_expression function: (_) @callee) (ERROR) @error "
               "[(class_specifier body: (_)) (struct_specifier body: (_)) (union_specifier body: (_))] @type")
# the CUDA grammar's `kernel<<<grid, block>>>(args)`: a call with a kernel_call_syntax child
_CUDA_FILE_QUERY = _FILE_QUERY + " (call_expression function: (_) @kernel (kernel_call_syntax))"
_CALLEE_TYPES = frozenset({"identifier", "qualified_identifier", "template_function", "field_expression"})
_MAX_ERROR_LINES = 20
_CONDITIONAL_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|else|endif)\b[^\n]*", re.M)
_MACRO_LAUNCH = re.compile(rb"((?:\w+::)*\w+)\s*(?:<[^;{}]*?>)?\s*<<<")
# a function or class body inside a macro: `) {` or `struct X {` (not a do { } while (0) block)
_NOT_A_NAME = rb"(?!(?:else|if|while|for|switch|return|do|case|constexpr|sizeof)\b)"
_MACRO_DEFINITION = re.compile(
    rb"^\s*(?:template\s*<[^{;]*>\s*)?(?:(?:class|struct)\s+\w+[^;{]*\{"
    rb"|(?:(?:static|inline|__\w+__)\s+)*" + _NOT_A_NAME + rb"[\w:<>]+[\s*&]+" + _NOT_A_NAME
    + rb"[\w#]+\s*\([^;{]*\)\s*(?:const\s*)?\{)")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def scan_cpp(parsed: ParsedFile) -> dict[str, Any]:
    """Facts of one C/C++/CUDA file (see module docstring); never raises on odd input."""
    scanner = _Scanner(parsed)
    try:
        scanner.visit_items(parsed.tree.root_node, ())
    except RecursionError:
        # absurd nesting (thousands of namespaces or #if levels): keep what was read, say so
        scanner.truncated = True
    facts = scanner.finish()
    if scanner.conditional_error_spans and not scanner.truncated:
        _rescan_without_conditionals(parsed, scanner.conditional_error_spans, facts)
    return facts


def _rescan_without_conditionals(parsed: ParsedFile, spans: list[tuple[int, int]],
                                 facts: dict[str, Any]) -> None:
    """An `#if` in the middle of an expression (a string concatenation inside `asm(...)`, an
    initializer) can turn the rest of a file into one ERROR region. Parse a variant where the
    conditional directives inside those regions are blanked (both branches kept, as for the rest
    of the file) and take the definitions only it sees, tagged `recovered`."""
    data = bytearray(parsed.data)
    for start, end in spans:
        for m in _CONDITIONAL_DIRECTIVE.finditer(parsed.data, start, end):
            data[m.start():m.end()] = b" " * (m.end() - m.start())
    variant = bytes(data)
    other = _Scanner(ParsedFile(parsed.language, variant, parse_source(variant, parsed.language)))
    try:
        other.visit_items(other.tree.root_node, ())
    except RecursionError:
        return
    alt = other.finish()
    if alt["errors"] >= facts["errors"]:
        return
    known = {(d["qual"], d["line"]) for d in facts["defs"]}
    for d in alt["defs"]:
        if (d["qual"], d["line"]) not in known:
            d["tags"] = sorted(set(d.get("tags", ())) | {"recovered"})
            facts["defs"].append(d)
    for key in ("calls", "launches"):
        facts[key] = sorted({tuple(c) for c in facts[key]} | {tuple(c) for c in alt[key]})
        facts[key] = [list(c) for c in facts[key]]


class _Scanner:
    def __init__(self, parsed: ParsedFile) -> None:
        self.data = parsed.data
        self.language = parsed.language
        self.tree = parsed.tree
        cfg = macro_config()
        self.library_macros = frozenset(cfg["torch_library"])
        self.impl_macros = frozenset(cfg["torch_library_impl"])
        self.pybind_macros = frozenset(cfg["pybind_module"])
        self.defs: list[dict[str, Any]] = []
        self.includes: list[list[Any]] = []
        self.bodies: list[tuple[int, int, str]] = []  # (start_byte, end_byte, qualified caller)
        self.torch_ops: list[dict[str, Any]] = []
        self.pybind: list[dict[str, Any]] = []
        self.macro_blocks: list[list[Any]] = []
        self.macro_launches: dict[str, list[str]] = {}
        self.seen_types: set[int] = set()
        self.truncated = False
        self.conditional_error_spans: list[tuple[int, int]] = []

    # -- walking declaration levels ------------------------------------------------------------

    def visit_items(self, node: Any, scope: tuple[tuple[str, str], ...], template: bool = False) -> None:
        if node.type == "ERROR":
            self.visit_error_region(node, scope)
        for child in node.named_children:
            t = child.type
            if t in _CONTAINERS:
                self.visit_items(child, scope)
            elif t == "namespace_definition":
                self.visit_namespace(child, scope)
            elif t == "function_definition":
                self.visit_function(child, scope, template)
            elif t in ("declaration", "field_declaration", "type_definition"):
                self.visit_declaration(child, scope, template)
            elif t in _TYPE_KINDS:
                self.visit_type(child, scope, template, None)
            elif t == "template_declaration":
                self.visit_items(child, scope, template=True)
            elif t == "linkage_specification":
                body = child.child_by_field_name("body")
                if body is not None:
                    if body.type == "declaration_list":
                        self.visit_items(body, scope)
                    else:
                        self.visit_items(child, scope)
            elif t == "preproc_include":
                self.visit_include(child)
            elif t == "preproc_function_def":
                self.visit_macro(child)

    def visit_error_region(self, node: Any, scope: tuple[tuple[str, str], ...]) -> None:
        """Inside an ERROR node tree-sitter leaves the pieces of a definition side by side:
        `[qualifiers] type function_declarator { ...`. A declarator followed by a body is a
        function definition whose header parsed, even if its body did not."""
        children = node.children
        for i, child in enumerate(children[:-1]):
            if child.type != "function_declarator" or children[i + 1].type not in ("{", "compound_statement"):
                continue
            name_node = child.child_by_field_name("declarator")
            written = _clean_name(_text(name_node)) if name_node is not None else ""
            if not written or written in self.library_macros or written in self.impl_macros:
                continue
            header_start = children[i - 1].start_byte if i else child.start_byte
            for j in range(i - 1, -1, -1):  # back to the end of the previous statement
                if children[j].type in (";", "}", "compound_statement", "function_definition",
                                        "declaration", "ERROR", "comment"):
                    break
                header_start = children[j].start_byte
            quals = set(m.group(1).decode() for m in
                        _CUDA_QUALIFIER.finditer(self.data[header_start:child.start_byte]))
            kind = "kernel" if "global" in quals else "function"
            inner = scope + tuple((p, "") for p in written.split("::"))
            self.add_def(kind, inner, child, name_node, tags=sorted(q for q in quals if q != "global"),
                         signature=_signature(child), in_class=_in_class(scope), error_region=True)
            body = children[i + 1]
            if body.type == "compound_statement":
                self.bodies.append((body.start_byte, body.end_byte, _join(inner)))

    def visit_namespace(self, node: Any, scope: tuple[tuple[str, str], ...]) -> None:
        name = node.child_by_field_name("name")
        inner = scope
        if name is not None:  # anonymous namespaces are transparent: members keep the outer scope
            for part in _text(name).split("::"):
                part = part.strip()
                if part and part != "inline":
                    inner = inner + ((part, "namespace"),)
            if inner != scope:
                self.add_def("namespace", inner, node, name, doc_node=node)
        body = node.child_by_field_name("body")
        if body is not None:
            self.visit_items(body, inner)

    def visit_type(self, spec: Any, scope: tuple[tuple[str, str], ...], template: bool,
                   typedef_name: str | None) -> None:
        body = spec.child_by_field_name("body")
        if body is None:
            return  # a forward declaration or an elaborated type, not a definition
        self.seen_types.add(spec.start_byte)
        name_node = spec.child_by_field_name("name")
        kind = _TYPE_KINDS[spec.type]
        if name_node is not None:
            written = _clean_name(_text(name_node))
        elif typedef_name:
            written = typedef_name
        else:
            return  # anonymous aggregate: its members are fields of the enclosing one
        inner = scope + tuple((p, kind) for p in written.split("::"))
        bases = []
        for child in spec.named_children:
            if child.type == "base_class_clause":
                bases = [_SPACES.sub(" ", _text(b)) for b in child.named_children
                         if b.type not in ("access_specifier", "virtual")]
        extra: dict[str, Any] = {"bases": bases} if bases else {}
        self.add_def(kind, inner, spec, name_node or spec, template=template, **extra)
        if typedef_name and name_node is not None and typedef_name != written:
            # `typedef enum X_enum {...} X;`: code (and bindings) name it X
            self.defs[-1]["aliases"] = [typedef_name]
        if kind != "enum":
            self.visit_items(body, inner)

    def visit_function(self, node: Any, scope: tuple[tuple[str, str], ...], template: bool) -> None:
        fdecl = _function_declarator(node.child_by_field_name("declarator"))
        if fdecl is None:
            return
        name_node = fdecl.child_by_field_name("declarator")
        if name_node is None:
            return
        raw = _text(name_node)
        if raw in self.library_macros or raw in self.impl_macros or raw in self.pybind_macros:
            self.visit_registration(raw, fdecl, node.child_by_field_name("body"), _join(scope))
            return
        written = _clean_name(raw)
        if not written:
            return
        quals = self.cuda_qualifiers(node, fdecl)
        kind = "kernel" if "global" in quals else "function"
        tags = sorted(q for q in quals if q != "global")
        inner = scope + tuple((p, "") for p in written.split("::"))
        qual = _join(inner)
        self.add_def(kind, inner, node, name_node, template=template, tags=tags,
                     signature=_signature(fdecl), is_def=True, in_class=_in_class(scope))
        body = node.child_by_field_name("body")
        if body is not None:
            self.bodies.append((body.start_byte, body.end_byte, qual))

    def cuda_qualifiers(self, node: Any, fdecl: Any) -> set[str]:
        """`global`/`device`/`host` from the original bytes before the declarator: in files
        parsed with the C++ grammar they were blanked, so the tree no longer shows them and the
        node itself may start after them."""
        prev = node.prev_sibling
        if prev is not None:
            start = prev.end_byte
        else:  # the root node starts at its first token, after any blanked qualifiers
            parent = node.parent
            start = parent.start_byte if parent is not None and parent.parent is not None else 0
        return {m.group(1).decode() for m in _CUDA_QUALIFIER.finditer(self.data, start, fdecl.start_byte)}

    def visit_declaration(self, node: Any, scope: tuple[tuple[str, str], ...], template: bool) -> None:
        type_node = node.child_by_field_name("type")
        declarators = node.children_by_field_name("declarator")
        if type_node is not None and type_node.type in _TYPE_KINDS:
            typedef_name = None
            if node.type == "type_definition" and declarators and declarators[0].type in (
                    "type_identifier", "primitive_type"):
                typedef_name = _text(declarators[0])
            self.visit_type(type_node, scope, template, typedef_name)
        if node.type == "type_definition":
            return
        in_class = _in_class(scope)
        for decl in declarators:
            body = None
            if decl.type == "init_declarator":
                # `void f(args) { ... }` after a statement that lacks its `;` parses as a
                # declaration initialised with a brace list: it is the definition of f
                value = decl.child_by_field_name("value")
                inner_decl = decl.child_by_field_name("declarator")
                if value is None or value.type != "initializer_list" or inner_decl is None \
                        or inner_decl.type != "function_declarator":
                    continue
                decl, body = inner_decl, value
            fdecl = _function_declarator(decl)
            if fdecl is None:
                continue
            name_node = fdecl.child_by_field_name("declarator")
            if name_node is None:
                continue
            written = _clean_name(_text(name_node))
            # `MACRO(args);` at namespace scope parses as a declaration without a type; only
            # constructors, destructors and out-of-class qualified names may lack one.
            if not written or (type_node is None and not in_class and "::" not in written):
                continue
            quals = self.cuda_qualifiers(node, fdecl)
            kind = "kernel" if "global" in quals else "function"
            inner = scope + tuple((p, "") for p in written.split("::"))
            self.add_def(kind, inner, node, name_node, template=template,
                         tags=sorted(q for q in quals if q != "global"),
                         signature=_signature(fdecl), is_def=body is not None, in_class=in_class,
                         error_region=body is not None)
            if body is not None:
                self.bodies.append((body.start_byte, body.end_byte, _join(inner)))

    def visit_include(self, node: Any) -> None:
        path = node.child_by_field_name("path")
        if path is None:
            return
        text = _text(path).strip()
        if text.startswith("<") and text.endswith(">"):
            self.includes.append([text[1:-1].strip(), True, _line(node)])
        elif text.startswith('"'):
            self.includes.append([text.strip('"').strip(), False, _line(node)])

    def visit_macro(self, node: Any) -> None:
        """Function-like macros are not expanded, so record what their bodies would hide: kernel
        launches (attributed to the functions that invoke the macro) and whole definitions."""
        value = node.child_by_field_name("value")
        name = node.child_by_field_name("name")
        if value is None or name is None:
            return
        body = value.text.replace(b"\\\n", b"  ").replace(b"\\\r\n", b"   ")
        if b"<<<" in body:
            kernels = sorted({_clean_name(m.group(1).decode()) for m in _MACRO_LAUNCH.finditer(body)})
            if kernels:
                self.macro_launches[_text(name)] = kernels
        if _MACRO_DEFINITION.search(body):
            self.macro_blocks.append([_text(name), _line(node)])

    # -- registrations -------------------------------------------------------------------------

    def visit_registration(self, macro: str, fdecl: Any, body: Any, scope: str) -> None:
        params = fdecl.child_by_field_name("parameters")
        args = _split_args(_text(params)[1:-1]) if params is not None else []
        if body is None or not args:
            return
        if macro in self.pybind_macros:
            self.visit_pybind(args[0], args[-1], body, scope)
            return
        ns_arg = args[0]
        ns = {"ns": "", "ns_macro": "", "ns_suffix": ""}
        m = re.fullmatch(r"CONCAT\((\w+),(\w+)\)", ns_arg)
        if m:
            ns.update(ns_macro=m.group(1), ns_suffix=m.group(2))
        elif re.fullmatch(r"[A-Z][A-Z0-9_]*", ns_arg):
            ns.update(ns_macro=ns_arg)
        else:
            ns.update(ns=ns_arg)
        var = args[-1]
        dispatch = args[1] if macro in self.impl_macros and len(args) >= 3 else ""
        for call in capture_nodes(body, self.language, "(call_expression) @c").get("c", ()):
            fn = call.child_by_field_name("function")
            if fn is None or fn.type != "field_expression":
                continue
            field = fn.child_by_field_name("field")
            target = fn.child_by_field_name("argument")
            if field is None or target is None or _text(target) != var:
                continue
            kind = _text(field)
            if kind not in ("def", "impl"):
                continue
            call_args = _call_args(call)
            if not call_args or _string_value(call_args[0]) is None:
                continue
            op = _string_value(call_args[0]).split("(", 1)[0].strip()
            name, _, overload = op.partition(".")
            entry = {"kind": kind, "op": name, "overload": overload, "line": _line(call),
                     "dispatch": dispatch, "fn": "", "scope": scope, **ns}
            if len(call_args) >= 2:
                entry["fn"] = _function_ref(call_args[-1])
                if kind == "impl" and len(call_args) >= 3:
                    entry["dispatch"] = _SPACES.sub("", _text(call_args[1]))
            self.torch_ops.append(entry)

    def lambda_callees(self, node: Any) -> list[str]:
        found = capture_nodes(node, self.language, "(call_expression function: (_) @callee)").get("callee", ())
        names = [_callee_text(fn) for fn in sorted(found, key=lambda n: n.start_byte)
                 if fn.type in _CALLEE_TYPES]
        return [n for n in names if n][:10]

    def visit_pybind(self, module: str, var: str, body: Any, scope: str) -> None:
        for call in capture_nodes(body, self.language, "(call_expression) @c").get("c", ()):
            fn = call.child_by_field_name("function")
            if fn is None or fn.type != "field_expression":
                continue
            field = fn.child_by_field_name("field")
            if field is None or _text(field) not in ("def", "def_static"):
                continue
            call_args = _call_args(call)
            if len(call_args) < 2 or _string_value(call_args[0]) is None:
                continue
            owner = fn.child_by_field_name("argument")
            name = _string_value(call_args[0])
            target = _function_ref(call_args[1])
            # a lambda wraps the real function: keep what it calls, the graph step picks one
            wrapped = self.lambda_callees(call_args[1]) if target == "<lambda>" else []
            if owner is not None and _text(owner) == var:
                self.pybind.append({"kind": "def", "module": module, "name": name,
                                    "target": target, "line": _line(call), "scope": scope,
                                    "lambda_calls": wrapped})
                continue
            cls = _pybind_class(owner)
            if cls is not None:
                self.pybind.append({"kind": "method", "module": module, "class": cls[1],
                                    "name": name, "target": target, "line": _line(field),
                                    "scope": scope, "lambda_calls": wrapped})
        for call in capture_nodes(body, self.language, "(call_expression) @c").get("c", ()):
            fn = call.child_by_field_name("function")
            if fn is not None and fn.type != "field_expression":
                cls = _pybind_class(call)  # the `py::class_<T>(m, "Name")` call itself
                if cls is not None:
                    self.pybind.append({"kind": "class", "module": module, "name": cls[1],
                                        "target": cls[0], "line": _line(call), "scope": scope})

    # -- records -------------------------------------------------------------------------------

    def add_def(self, kind: str, scope: tuple[tuple[str, str], ...], node: Any, name_node: Any, *,
                template: bool = False, tags: list[str] | None = None, signature: str = "",
                is_def: bool = True, in_class: bool = False, doc_node: Any = None,
                bases: list[str] | None = None, error_region: bool = False) -> None:
        record: dict[str, Any] = {
            "kind": kind,
            "qual": _join(scope),
            "scope": [[n, k] for n, k in scope[:-1]],
            "line": name_node.start_point[0] + 1,
            "start": node.start_point[0] + 1,
            "end": node.end_point[0] + 1,
        }
        all_tags = list(tags or ())
        if template:
            all_tags.append("template")
        if not is_def:
            all_tags.append("declaration")
        if in_class:
            all_tags.append("member")
        if error_region:
            all_tags.append("recovered")
        if all_tags:
            record["tags"] = sorted(set(all_tags))
        if signature:
            record["signature"] = signature
        if bases:
            record["bases"] = bases
        doc = _leading_comment(node if not template or node.parent is None or
                               node.parent.type != "template_declaration" else node.parent)
        if doc:
            record["doc"] = doc
        self.defs.append(record)

    def visit_local_types(self, found: list[Any]) -> None:
        """Classes and structs defined inside function bodies (functors, configs): ctags lists
        them and so do we, scoped under their function."""
        if not self.bodies:
            return
        ordered = sorted(self.bodies)
        starts = [b[0] for b in ordered]
        for spec in sorted(found, key=lambda n: n.start_byte):
            if spec.start_byte in self.seen_types:
                continue
            i = bisect.bisect_right(starts, spec.start_byte) - 1
            if i < 0 or spec.end_byte > ordered[i][1]:
                continue
            scope = tuple((p, "function") for p in ordered[i][2].split("::"))
            self.visit_type(spec, scope, False, None)

    def finish(self) -> dict[str, Any]:
        # one query pass over the whole file for everything below declaration level
        found = capture_nodes(self.tree.root_node, self.language,
                              _CUDA_FILE_QUERY if self.language is Language.CUDA else _FILE_QUERY)
        self.visit_local_types(found.get("type", []))
        calls: list[list[Any]] = []
        launches: list[list[Any]] = []
        self.bodies.sort()
        starts = [b[0] for b in self.bodies]
        kernels = {n.start_byte for n in found.get("kernel", ())}
        bodies = self.bodies
        for fn in found.get("callee", ()):
            if fn.type not in _CALLEE_TYPES:
                continue
            start = fn.start_byte
            i = bisect.bisect_right(starts, start) - 1
            if i < 0 or fn.end_byte > bodies[i][1]:
                continue
            callee = _callee_text(fn)
            if not callee:
                continue
            entry = [bodies[i][2], callee, fn.start_point[0] + 1]
            (launches if start in kernels else calls).append(entry)
        errors = found.get("error", ())
        for e in errors:
            if e.end_point[0] - e.start_point[0] >= 5 and _CONDITIONAL_DIRECTIVE.search(
                    self.data, e.start_byte, e.end_byte):
                self.conditional_error_spans.append((e.start_byte, e.end_byte))
        error_lines = sorted({e.start_point[0] + 1 for e in errors})
        for macro, kernels in sorted(self.macro_launches.items()):
            # a launch inside a macro counts for each function whose body names the macro, called
            # or handed to a dispatch macro as an argument
            word = re.compile(rb"\b" + re.escape(macro.encode()) + rb"\b")
            for start, end, qual in self.bodies:
                m = word.search(self.data, start, end)
                if m:
                    line = self.data.count(b"\n", 0, m.start()) + 1
                    launches.extend([qual, k, line] for k in kernels)
        calls.sort()
        launches.sort()
        self.torch_ops.sort(key=lambda e: (e["line"], e["kind"], e["op"]))
        self.pybind.sort(key=lambda e: (e["line"], e["kind"], e["name"]))
        return {
            "defs": self.defs,
            "includes": self.includes,
            "calls": calls,
            "launches": launches,
            "torch_ops": self.torch_ops,
            "pybind": self.pybind,
            "defines": attribute_macros(self.data),
            "macro_blocks": self.macro_blocks,
            "truncated": self.truncated,
            "errors": len(errors),
            "error_lines": error_lines[:_MAX_ERROR_LINES],
        }


# -- helpers -----------------------------------------------------------------------------------

def _text(node: Any) -> str:
    return node.text.decode("utf-8", errors="replace")


def _line(node: Any) -> int:
    return node.start_point[0] + 1


def _join(scope: tuple[tuple[str, str], ...]) -> str:
    return "::".join(n for n, _ in scope)


def _in_class(scope: tuple[tuple[str, str], ...]) -> bool:
    return bool(scope) and scope[-1][1] in ("class", "struct", "union")


def _function_declarator(node: Any) -> Any:
    while node is not None:
        if node.type == "function_declarator":
            return node
        if node.type in _DECLARATOR_WRAPPERS:
            node = node.child_by_field_name("declarator") or (
                node.named_children[-1] if node.named_child_count else None)
        elif node.type == "qualified_identifier":
            # `Error* f(...)` mis-split as `Error::*f` when a macro was left: follow the name
            node = node.child_by_field_name("name")
        else:
            return None
    return None


def _clean_name(raw: str) -> str:
    """`Foo<T>::bar`, `operator ()`, `~ Foo` -> `Foo::bar`, `operator()`, `~Foo`."""
    if _SIMPLE_NAME.fullmatch(raw):
        return raw
    op = ""
    at = raw.find("operator")
    if at >= 0 and (at == 0 or not (raw[at - 1].isalnum() or raw[at - 1] == "_")):
        raw, op = raw[:at], _SPACES.sub(" ", raw[at:].strip())
        # `operator new`, `operator bool` keep one space; symbol operators lose theirs
        op = op if re.fullmatch(r"operator [A-Za-z_][\w:]*", op) else op.replace(" ", "")
    while True:
        stripped = _TEMPLATE_ARGS.sub("", raw)
        if stripped == raw:
            break
        raw = stripped
    parts = [p for p in raw.replace(" ", "").replace("\n", "").replace("\t", "").split("::") if p]
    if op:
        parts.append(op)
    return "::".join(parts)


def _signature(fdecl: Any) -> str:
    params = fdecl.child_by_field_name("parameters")
    sig = _SPACES.sub(" ", _COMMENT.sub(" ", _text(params))) if params is not None else ""
    return sig if len(sig) <= 200 else sig[:197] + "..."


def _leading_comment(node: Any) -> str:
    return leading_comment(node, _text, "/*!<")


def _split_args(text: str) -> list[str]:
    args, depth, cur = [], 0, []
    for c in text:
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth -= 1
        if c == "," and depth == 0:
            args.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    args.append("".join(cur))
    return [_SPACES.sub("", a) for a in args if a.strip()]


def _call_args(call: Any) -> list[Any]:
    args = call.child_by_field_name("arguments")
    return [a for a in args.named_children if a.type != "comment"] if args is not None else []


def _string_value(node: Any) -> str | None:
    if node.type == "string_literal":
        return "".join(_text(c) for c in node.named_children if c.type == "string_content")
    if node.type == "concatenated_string":
        parts = [_string_value(c) for c in node.named_children if c.type == "string_literal"]
        return "".join(p for p in parts if p is not None)
    if node.type == "raw_string_literal":
        content = node.child_by_field_name("content") if hasattr(node, "child_by_field_name") else None
        return _text(content) if content is not None else None
    return None


def _function_ref(node: Any) -> str:
    """`&fn`, `TORCH_FN(fn)`, `torch::dispatch(k, &fn)`, `&Class::method` -> the function name."""
    if node.type == "lambda_expression":
        return "<lambda>"
    text = _SPACES.sub("", _text(node))
    m = re.fullmatch(r"(?:\w+::)*overload_cast<.*>\(&?([\w:~]+(?:<[^()]*>)?)(?:,[^()]*)?\)", text)
    if m:
        return _clean_name(m.group(1))
    m = re.fullmatch(r"(?:\w+::)*(?:TORCH_FN|dispatch|make_boxed_from_unboxed_functor)\((?:[^,]*,)?(.*)\)", text)
    if m:
        text = m.group(1)
    text = text.lstrip("&").strip("()")
    text = re.sub(r"^(?:static_cast|reinterpret_cast)<.*>\(&?(.*)\)$", r"\1", text)
    return _clean_name(text.lstrip("&"))


def _pybind_class(node: Any) -> tuple[str, str] | None:
    """(C++ type, Python name) for `py::class_<T, ...>(m, "Name")` at the root of a `.def` chain."""
    while node is not None and node.type == "call_expression":
        fn = node.child_by_field_name("function")
        if fn is None:
            return None
        if fn.type == "field_expression":
            node = fn.child_by_field_name("argument")
            continue
        text = _SPACES.sub("", _text(fn))
        m = re.match(r"(?:py|pybind11)::(?:class_|enum_)<(.*)>$", text)
        args = _call_args(node)
        if not m or len(args) < 2 or _string_value(args[1]) is None:
            return None
        return _split_args(m.group(1))[0], _string_value(args[1])
    return None


def _callee_text(fn: Any) -> str:
    t = fn.type
    if t in ("identifier", "qualified_identifier", "template_function", "field_expression"):
        text = _text(fn)
        if len(text) > 200:
            return ""
        if t == "field_expression":
            field = fn.child_by_field_name("field")
            arg = fn.child_by_field_name("argument")
            op = "->" if b"->" in fn.text else "."
            if field is None:
                return ""
            return (_SPACES.sub("", _text(arg)) if arg is not None and len(arg.text) < 60 else "?") \
                + op + _clean_name(_text(field))
        return _clean_name(text)
    return ""
