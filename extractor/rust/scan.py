"""Per-file facts of a Rust file: items, `use` paths, trait impls, calls, PyO3 and FFI attributes.

The scanner walks the item levels of the tree (the file, inline `mod` blocks, `impl` and `trait`
bodies, `extern` blocks, function bodies for nested items) and finds call sites with one query
over the file. Output is JSON data that does not depend on the file's path (it is cached by
content hash): names are as written in the file, qualified within the file's own module
(``inner::Foo::new``); the graph step knows which crate and module the file is and resolves them.

Attributes are kept only where later steps read them: PyO3's (``pyclass``, ``pyfunction``,
``pymethods``, ``pymodule``, ``pyo3``, ``new``, ``getter``/``setter``, ...) and the FFI ones
(``no_mangle``, ``export_name``). A ``#[pymodule]`` function's body is read for what it adds
(``add_class::<T>()``, ``wrap_pyfunction!(f)``, ``wrap_pymodule!(m)``): those are macro token
trees, which the grammar does not parse, so they are matched as text.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from extractor.model import ParsedFile
from extractor.rust.parse import capture_nodes

# One query pass for everything below the item levels: calls, parse errors, and items anywhere
# (inside `if` blocks, closures, match arms) for those the item walk did not reach.
_FILE_QUERY = ("(call_expression function: (_) @callee) (ERROR) @error "
               "[(function_item) (struct_item) (enum_item) (union_item) (trait_item) (impl_item) (mod_item)] @item")
_TYPE_ITEMS = {"struct_item": "struct", "enum_item": "enum", "union_item": "union", "trait_item": "trait"}
_KEPT_ATTRS = re.compile(r"(?:pyo3::)?(?:py\w+|pyo3|new|getter|setter|staticmethod|classmethod|classattr|"
                         r"no_mangle|export_name|unsafe)\b")
_SPACES = re.compile(r"\s+")
_GENERIC_ARGS = re.compile(r"::<.*?>")
_ADDS = re.compile(
    rb"add_class\s*::\s*<\s*(?P<cls>[\w:]+)\s*>|wrap_pyfunction(?:_bound)?!\s*\(\s*(?P<fn>[\w:]+)"
    rb"|wrap_pymodule!\s*\(\s*(?P<mod>[\w:]+)|PyModule::new(?:_bound)?\s*\(\s*\w+\s*,\s*\"(?P<sub>[\w.]+)\"")
_MAX_ERROR_LINES = 20
_MAX_TEXT = 300


def scan_rust(parsed: ParsedFile) -> dict[str, Any]:
    """Facts of one Rust file (see module docstring); never raises on odd input."""
    scanner = _Scanner(parsed.data)
    try:
        scanner.visit_items(parsed.tree.root_node, (), None)
    except RecursionError:
        scanner.truncated = True
    return scanner.finish(parsed.tree.root_node)


class _Scanner:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.defs: list[dict[str, Any]] = []
        self.uses: list[list[Any]] = []
        self.impls: list[list[Any]] = []
        self.bodies: list[tuple[int, int, str]] = []
        self.visited: set[int] = set()
        self.truncated = False

    # -- items -----------------------------------------------------------------------------------

    def visit_items(self, node: Any, scope: tuple[str, ...], owner: dict[str, Any] | None,
                    abi: str = "") -> None:
        """Items directly under ``node``; ``scope`` is the path inside the file's module, ``owner``
        the enclosing impl/trait (its type and trait as written), ``abi`` an extern block's."""
        attrs: list[str] = []
        for child in node.named_children:
            t = child.type
            if t == "attribute_item":
                text = _attribute(child)
                if text:
                    attrs.append(text)
                continue
            if t in ("line_comment", "block_comment", "inner_attribute_item"):
                continue
            kept, attrs = attrs, []
            self.visit_item(child, scope, owner, kept, abi)

    def visit_item(self, child: Any, scope: tuple[str, ...], owner: dict[str, Any] | None, attrs: list[str],
                   abi: str) -> None:
        self.visited.add(child.start_byte)
        t = child.type
        if t == "function_item" or t == "function_signature_item":
            self.visit_function(child, scope, owner, attrs, abi)
        elif t in _TYPE_ITEMS:
            self.visit_type(child, scope, attrs)
        elif t == "mod_item":
            self.visit_mod(child, scope, attrs)
        elif t == "impl_item":
            self.visit_impl(child, scope, attrs)
        elif t == "use_declaration":
            self.visit_use(child, scope, attrs)
        elif t == "foreign_mod_item":
            body = child.child_by_field_name("body") or _child_of_type(child, "declaration_list")
            if body is not None:
                self.visit_items(body, scope, None, abi=_abi(child))

    def visit_function(self, node: Any, scope: tuple[str, ...], owner: dict[str, Any] | None,
                       attrs: list[str], abi: str) -> None:
        name = node.child_by_field_name("name")
        if name is None:
            return
        short = _ident(name)
        qual = (*scope, short)
        tags = []
        modifiers = _child_of_type(node, "function_modifiers")
        mods = _text(modifiers) if modifiers is not None else ""
        if "async" in mods.split():
            tags.append("async")
        if "unsafe" in mods.split():
            tags.append("unsafe")
        extern = _abi(modifiers) if modifiers is not None and "extern" in mods else ""
        if abi:
            tags.append("foreign")  # declared in an `extern "C" { }` block: defined elsewhere
            extern = abi
        if node.type == "function_signature_item" and not abi:
            tags.append("declaration")  # a trait method without a default body
        record = self.add_def("method" if owner is not None else "function", qual, node, name, attrs, tags)
        if extern:
            record["abi"] = extern
        params = node.child_by_field_name("parameters")
        if params is not None:
            record["params"] = _params(params)
        ret = node.child_by_field_name("return_type")
        if ret is not None:
            record["returns"] = _clip(_SPACES.sub(" ", _text(ret)))
        if owner is not None:
            record["owner"] = owner
        if _visibility(node):
            record["pub"] = True
        body = node.child_by_field_name("body")
        if body is not None:
            self.bodies.append((body.start_byte, body.end_byte, "::".join(qual)))
            if any(a.startswith(("pymodule", "pyo3::pymodule")) for a in attrs):
                record["adds"] = self.module_adds(body)
            # nested items (fn/struct/impl inside a function) are definitions too
            self.visit_items(body, qual, None)

    def module_adds(self, body: Any) -> list[list[Any]]:
        adds = []
        for m in _ADDS.finditer(self.data, body.start_byte, body.end_byte):
            kind = m.lastgroup or ""
            line = self.data.count(b"\n", 0, m.start()) + 1
            adds.append([kind, m.group(kind).decode("utf-8", "replace"), line])
        return adds

    def visit_type(self, node: Any, scope: tuple[str, ...], attrs: list[str]) -> None:
        name = node.child_by_field_name("name")
        if name is None:
            return
        kind = _TYPE_ITEMS[node.type]
        qual = (*scope, _ident(name))
        record = self.add_def(kind, qual, node, name, attrs, [])
        if _visibility(node):
            record["pub"] = True
        if kind == "trait":
            bounds = node.child_by_field_name("bounds")
            if bounds is not None:
                record["bases"] = [_type_name(b) for b in bounds.named_children if _type_name(b)]
            body = node.child_by_field_name("body")
            if body is not None:
                self.visit_items(body, qual, {"type": "::".join(qual), "trait": "", "in_trait": True})

    def visit_mod(self, node: Any, scope: tuple[str, ...], attrs: list[str]) -> None:
        name = node.child_by_field_name("name")
        if name is None:
            return
        qual = (*scope, _ident(name))
        body = node.child_by_field_name("body")
        record = self.add_def("module", qual, node, name, attrs, [] if body is not None else ["declaration"])
        if _visibility(node):
            record["pub"] = True
        if body is not None:
            self.visit_items(body, qual, None)

    def visit_impl(self, node: Any, scope: tuple[str, ...], attrs: list[str]) -> None:
        type_node = node.child_by_field_name("type")
        if type_node is None:
            return
        written = _type_name(type_node)
        trait_node = node.child_by_field_name("trait")
        trait = _type_name(trait_node) if trait_node is not None else ""
        line = type_node.start_point[0] + 1
        if trait:
            self.impls.append([written, trait, line, "::".join(scope)])
        body = node.child_by_field_name("body")
        if body is None or not written:
            return
        owner = {"type": written, "trait": trait, "line": line}
        if attrs:
            owner["attrs"] = attrs
        # methods are named after the type as written (`Foo` for `impl<T> Foo<T>`); the graph
        # step resolves that name to the type's node
        self.visit_items(body, (*scope, *written.split("::")), owner)

    def visit_use(self, node: Any, scope: tuple[str, ...], attrs: list[str]) -> None:
        arg = node.child_by_field_name("argument")
        if arg is None:
            return
        line = node.start_point[0] + 1
        public = _visibility(node)
        for path, alias in use_paths(arg, ""):
            entry = [path, alias, line, "::".join(scope)]
            if public or attrs:
                entry.append({"pub": public, **({"attrs": attrs} if attrs else {})})
            self.uses.append(entry)

    # -- records ---------------------------------------------------------------------------------

    def add_def(self, kind: str, qual: tuple[str, ...], node: Any, name: Any, attrs: list[str],
                tags: list[str]) -> dict[str, Any]:
        record: dict[str, Any] = {"kind": kind, "qual": "::".join(qual), "line": name.start_point[0] + 1,
                                  "start": node.start_point[0] + 1, "end": node.end_point[0] + 1}
        if tags:
            record["tags"] = sorted(set(tags))
        if attrs:
            record["attrs"] = attrs
        doc = _doc_comment(node)
        if doc:
            record["doc"] = doc
        self.defs.append(record)
        return record

    def visit_nested_items(self, items: list[Any]) -> None:
        """Items in nested blocks of function bodies, scoped under the innermost function."""
        for item in sorted(items, key=lambda n: n.start_byte):
            if item.start_byte in self.visited:
                continue
            holders = [b for b in self.bodies if b[0] <= item.start_byte and item.end_byte <= b[1]]
            if not holders:
                continue
            scope = tuple(max(holders, key=lambda b: b[0])[2].split("::"))
            attrs = []
            prev = item.prev_named_sibling
            while prev is not None and prev.type == "attribute_item":
                text = _attribute(prev)
                if text:
                    attrs.insert(0, text)
                prev = prev.prev_named_sibling
            self.visit_item(item, scope, None, attrs, "")

    def finish(self, root: Any) -> dict[str, Any]:
        found = capture_nodes(root, _FILE_QUERY)
        if not self.truncated:
            self.visit_nested_items(found.get("item", []))
        self.bodies.sort()
        starts = [b[0] for b in self.bodies]
        calls: set[tuple[str, str, int]] = set()
        for fn in found.get("callee", ()):
            i = bisect.bisect_right(starts, fn.start_byte) - 1
            # the innermost body holding the call: nested functions come after their parent
            while i >= 0 and fn.end_byte > self.bodies[i][1]:
                i -= 1
            if i < 0:
                continue
            callee = _callee(fn)
            if callee:
                calls.add((self.bodies[i][2], callee, fn.start_point[0] + 1))
        errors = found.get("error", ())
        return {
            "defs": self.defs,
            "uses": self.uses,
            "impls": self.impls,
            "calls": [list(c) for c in sorted(calls)],
            "errors": len(errors),
            "error_lines": sorted({e.start_point[0] + 1 for e in errors})[:_MAX_ERROR_LINES],
            "truncated": self.truncated,
        }


# -- helpers -------------------------------------------------------------------------------------

def _text(node: Any) -> str:
    return node.text.decode("utf-8", errors="replace")


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[:_MAX_TEXT - 3] + "..."


def _ident(node: Any) -> str:
    return _text(node).removeprefix("r#")


def _child_of_type(node: Any, kind: str) -> Any:
    for child in node.children:
        if child.type == kind:
            return child
    return None


def _visibility(node: Any) -> bool:
    vis = _child_of_type(node, "visibility_modifier")
    return vis is not None and _text(vis) == "pub"


def _abi(node: Any) -> str:
    ext = node if node.type == "extern_modifier" else _child_of_type(node, "extern_modifier")
    if ext is None:
        return ""
    m = re.search(r'"([^"]*)"', _text(ext))
    return m.group(1) if m else "C"  # `extern { }` and `extern fn` default to the C ABI


def _attribute(node: Any) -> str:
    attr = _child_of_type(node, "attribute")
    text = _SPACES.sub(" ", _text(attr)) if attr is not None else ""
    return _clip(text) if _KEPT_ATTRS.match(text) else ""


def _doc_comment(node: Any) -> str:
    """The first line of the `///` block or `/** */` before the item (attributes may sit between)."""
    prev = node.prev_named_sibling
    while prev is not None and prev.type == "attribute_item":
        prev = prev.prev_named_sibling
    first = ""
    while prev is not None and prev.type in ("line_comment", "block_comment"):
        text = _text(prev)
        if not (text.startswith("///") or text.startswith("/**")):
            break
        first = text
        prev = prev.prev_named_sibling
    for line in first.splitlines():
        line = line.strip().lstrip("/*!").strip().rstrip("*/").strip()
        if line:
            return line[:200]
    return ""


def _type_name(node: Any) -> str:
    """`Foo<T>` -> `Foo`, `crate::a::Foo<T>` -> `crate::a::Foo`, `&mut dyn Tr` -> `Tr`."""
    t = node.type
    if t in ("type_identifier", "identifier", "primitive_type"):
        return _text(node)
    if t == "scoped_type_identifier" or t == "scoped_identifier":
        path = node.child_by_field_name("path")
        name = node.child_by_field_name("name")
        head = _type_name(path) if path is not None else ""
        tail = _text(name) if name is not None else ""
        return f"{head}::{tail}" if head else tail
    if t == "generic_type":
        inner = node.child_by_field_name("type")
        return _type_name(inner) if inner is not None else ""
    if t in ("reference_type", "pointer_type", "dynamic_type", "abstract_type"):
        for child in node.named_children:
            name = _type_name(child)
            if name:
                return name
    if t in ("self", "crate", "super"):
        return _text(node)
    return ""


def _params(node: Any) -> list[list[str]]:
    """[name, type] per parameter; `self` keeps its form (`&mut self`) as the type."""
    out = []
    for child in node.named_children:
        if child.type == "self_parameter":
            out.append(["self", _SPACES.sub(" ", _text(child))])
        elif child.type == "parameter":
            pattern = child.child_by_field_name("pattern")
            ptype = child.child_by_field_name("type")
            out.append([_SPACES.sub(" ", _text(pattern)) if pattern is not None else "_",
                        _clip(_SPACES.sub(" ", _text(ptype))) if ptype is not None else ""])
        elif child.type == "variadic_parameter":
            out.append(["...", "..."])
    return out


def use_paths(node: Any, prefix: str = "") -> list[tuple[str, str]]:
    """Flatten a use tree: `a::{b, c::d as e, f::*}` -> [("a::b",""), ("a::c::d","e"), ("a::f::*","")]."""
    t = node.type
    join = (lambda rest: f"{prefix}::{rest}" if prefix and rest else prefix or rest)
    if t in ("identifier", "scoped_identifier", "crate", "self", "super", "metavariable"):
        return [(join(_path_text(node)), "")]
    if t == "use_as_clause":
        path = node.child_by_field_name("path")
        alias = node.child_by_field_name("alias")
        return [(join(_path_text(path)) if path is not None else prefix, _text(alias) if alias is not None else "")]
    if t == "use_wildcard":
        inner = node.named_children[0] if node.named_child_count else None
        base = join(_path_text(inner)) if inner is not None else prefix
        return [(f"{base}::*" if base else "*", "")]
    if t == "scoped_use_list":
        path = node.child_by_field_name("path")
        base = join(_path_text(path)) if path is not None else prefix
        lst = node.child_by_field_name("list")
        return use_paths(lst, base) if lst is not None else []
    if t == "use_list":
        out = []
        for child in node.named_children:
            out.extend(use_paths(child, prefix))
        return out
    return []


def _path_text(node: Any) -> str:
    return _SPACES.sub("", _text(node)).removeprefix("::")


def _callee(fn: Any) -> str:
    """The called path as written: `foo`, `a::b::foo`, `Type::new`, `self.m`, `x.m` (receiver
    other than self: `?.m`); generic arguments dropped; "" for closures and other expressions."""
    t = fn.type
    if t == "generic_function":
        inner = fn.child_by_field_name("function")
        return _callee(inner) if inner is not None else ""
    if t == "identifier":
        return _text(fn)
    if t == "scoped_identifier":
        text = _text(fn)
        if len(text) > 200:
            return ""
        if " " in text or "\n" in text:
            text = _SPACES.sub("", text)
        return _GENERIC_ARGS.sub("", text) if "<" in text else text
    if t == "field_expression":
        field = fn.child_by_field_name("field")
        value = fn.child_by_field_name("value")
        if field is None or value is None:
            return ""
        receiver = "self" if value.type == "self" else "?"
        return f"{receiver}.{_text(field)}"
    return ""
