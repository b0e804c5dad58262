"""Per-file facts of a Rust file: items, `use` paths, trait impls, calls, PyO3 and FFI attributes.

The scanner walks the item levels of the tree (the file, inline `mod` blocks, `impl` and `trait`
bodies, `extern` blocks, function bodies for nested items) and finds call sites with one query
over the file. Output is a :class:`extractor.rust.facts.RustFacts` that does not depend on the
file's path (it is cached by content hash): names are as written in the file, qualified within the
file's own module (``inner::Foo::new``); the graph step knows which crate and module the file is
and resolves them.

Attributes are kept only where later steps read them: PyO3's (``pyclass``, ``pyfunction``,
``pymethods``, ``pymodule``, ``pyo3``, ``new``, ``getter``/``setter``, ...) and the FFI ones
(``no_mangle``, ``export_name``; the ``cxx`` crate's ``cxx::bridge``, ``cxx_name``, ``namespace``; napi-rs's
``napi``).
A ``#[pymodule]`` function's body is read for what it adds (``add_class::<T>()``,
``wrap_pyfunction!(f)``, ``wrap_pymodule!(m)``): those are macro token trees, which the grammar does
not parse, so they are matched as text.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

import msgspec

from extractor.model import ParsedFile
from extractor.native.calls import group_calls
from extractor.rust.facts import RustAdd, RustDefinition, RustFacts, RustOwner, RustUse
from extractor.rust.parse import capture_nodes

# One query pass for everything below the item levels: calls, parse errors, and items anywhere
# (inside `if` blocks, closures, match arms) for those the item walk did not reach.
_FILE_QUERY = ("(call_expression function: (_) @callee) (ERROR) @error "
               "[(function_item) (struct_item) (enum_item) (union_item) (trait_item) (impl_item) (mod_item)] @item")
_TYPE_ITEMS = {"struct_item": "struct", "enum_item": "enum", "union_item": "union", "trait_item": "trait"}
_KEPT_ATTRS = re.compile(r"(?:pyo3::)?(?:py\w+|pyo3|new|getter|setter|staticmethod|classmethod|classattr|"
                         r"no_mangle|export_name|unsafe|cxx::bridge|cxx_name|namespace|napi)\b")
_SPACES = re.compile(r"\s+")
_GENERIC_ARGS = re.compile(r"::<.*?>")
_ADDS = re.compile(
    rb"add_class\s*::\s*<\s*(?P<cls>[\w:]+)\s*>|wrap_pyfunction(?:_bound)?!\s*\(\s*(?P<fn>[\w:]+)"
    rb"|wrap_pymodule!\s*\(\s*(?P<mod>[\w:]+)|PyModule::new(?:_bound)?\s*\(\s*\w+\s*,\s*\"(?P<sub>[\w.]+)\"")
_MAX_ERROR_LINES = 20
_MAX_TEXT = 300


def scan_rust(parsed: ParsedFile) -> RustFacts:
    """Facts of one Rust file (see module docstring); never raises on odd input."""
    scanner = _Scanner(parsed.data)
    try:
        scanner.visit_items(parsed.tree.root_node, (), None)
    except RecursionError:
        scanner.truncated = True
    facts = scanner.finish(parsed.tree.root_node)
    data = parsed.data
    if b"include_proto!" in data or b"OUT_DIR" in data:
        protos = tuple(((m.group(1) or m.group(2)).decode(), data.count(b"\n", 0, m.start()) + 1)
                       for m in _PROTO_INCLUDE.finditer(data))
        if protos:
            return msgspec.structs.replace(facts, protos=protos)
    return facts


# The code prost and tonic generate for a protobuf package, included: the package's name
_PROTO_INCLUDE = re.compile(rb'\binclude_proto!\s*\(\s*"([\w.]+)"\s*\)|\binclude!\s*\(\s*concat!\s*\('
                            rb'\s*env!\s*\(\s*"OUT_DIR"\s*\)\s*,\s*"/([\w.]+)\.rs"\s*\)\s*\)')


class _Scanner:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.defs: list[RustDefinition] = []
        self.uses: list[RustUse] = []
        self.impls: list[tuple[str, str, int, str]] = []
        self.bodies: list[tuple[int, int, str]] = []
        self.visited: set[int] = set()
        self.truncated = False

    # -- items -----------------------------------------------------------------------------------

    def visit_items(self, node: Any, scope: tuple[str, ...], owner: RustOwner | None, abi: str = "") -> None:
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

    def visit_item(self, child: Any, scope: tuple[str, ...], owner: RustOwner | None, attrs: list[str],
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

    def visit_function(self, node: Any, scope: tuple[str, ...], owner: RustOwner | None,
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
        params = node.child_by_field_name("parameters")
        ret = node.child_by_field_name("return_type")
        body = node.child_by_field_name("body")
        adds: tuple[RustAdd, ...] = ()
        if body is not None and any(a.startswith(("pymodule", "pyo3::pymodule")) for a in attrs):
            adds = self.module_adds(body)
        self.add_def("method" if owner is not None else "function", qual, node, name, attrs, tags,
                     abi=extern, params=_params(params) if params is not None else (),
                     returns=_clip(_SPACES.sub(" ", _text(ret))) if ret is not None else "",
                     owner=owner, public=_visibility(node), adds=adds)
        if body is not None:
            self.bodies.append((body.start_byte, body.end_byte, "::".join(qual)))
            # nested items (fn/struct/impl inside a function) are definitions too
            self.visit_items(body, qual, None)

    def module_adds(self, body: Any) -> tuple[RustAdd, ...]:
        adds = []
        for m in _ADDS.finditer(self.data, body.start_byte, body.end_byte):
            kind = m.lastgroup or ""
            line = self.data.count(b"\n", 0, m.start()) + 1
            adds.append(RustAdd(kind, m.group(kind).decode("utf-8", "replace"), line))
        return tuple(adds)

    def visit_type(self, node: Any, scope: tuple[str, ...], attrs: list[str]) -> None:
        name = node.child_by_field_name("name")
        if name is None:
            return
        kind = _TYPE_ITEMS[node.type]
        qual = (*scope, _ident(name))
        bounds = node.child_by_field_name("bounds") if kind == "trait" else None
        bases = tuple(_type_name(b) for b in bounds.named_children if _type_name(b)) if bounds is not None else ()
        self.add_def(kind, qual, node, name, attrs, [], public=_visibility(node), bases=bases)
        if kind in ("struct", "union", "enum"):
            self.visit_members(node, qual, _visibility(node))
        if kind == "trait":
            body = node.child_by_field_name("body")
            if body is not None:
                self.visit_items(body, qual, RustOwner("::".join(qual), in_trait=True))

    def visit_members(self, node: Any, qual: tuple[str, ...], enum_public: bool) -> None:
        """Named fields of a struct or union, variants of an enum (a variant is as visible as its
        enum). Tuple fields and a struct variant's own fields have no names ctags gives: not kept."""
        body = node.child_by_field_name("body")
        if body is None or body.type not in ("field_declaration_list", "enum_variant_list"):
            return
        for child in body.named_children:
            name = child.child_by_field_name("name")
            if name is None or child.type not in ("field_declaration", "enum_variant"):
                continue
            if child.type == "enum_variant":
                self.add_def("variant", (*qual, _ident(name)), child, name, [], [], public=enum_public)
                continue
            ftype = child.child_by_field_name("type")
            self.add_def("field", (*qual, _ident(name)), child, name, [], [], public=_visibility(child),
                         returns=_clip(_SPACES.sub(" ", _text(ftype))) if ftype is not None else "")

    def visit_mod(self, node: Any, scope: tuple[str, ...], attrs: list[str]) -> None:
        name = node.child_by_field_name("name")
        if name is None:
            return
        qual = (*scope, _ident(name))
        body = node.child_by_field_name("body")
        self.add_def("module", qual, node, name, attrs, [] if body is not None else ["declaration"],
                     public=_visibility(node))
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
        if written:
            self.impls.append((written, trait, line, "::".join(scope)))
        body = node.child_by_field_name("body")
        if body is None or not written:
            return
        owner = RustOwner(written, trait, line, tuple(attrs))
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
            self.uses.append(RustUse(path, alias, line, "::".join(scope), public, tuple(attrs)))

    # -- records ---------------------------------------------------------------------------------

    def add_def(self, kind: str, qual: tuple[str, ...], node: Any, name: Any, attrs: list[str],
                tags: list[str], *, abi: str = "", params: tuple[tuple[str, str], ...] = (), returns: str = "",
                owner: RustOwner | None = None, public: bool = False, adds: tuple[RustAdd, ...] = (),
                bases: tuple[str, ...] = ()) -> None:
        self.defs.append(RustDefinition(kind, "::".join(qual), name.start_point[0] + 1, node.start_point[0] + 1,
                                        node.end_point[0] + 1, tuple(sorted(set(tags))), tuple(attrs),
                                        _doc_comment(node), abi, params, returns, owner, public, adds, bases))

    def visit_nested_items(self, items: list[Any]) -> None:
        """Items in nested blocks of function bodies, scoped under the innermost function."""
        for item in sorted(items, key=lambda n: n.start_byte):
            if item.start_byte in self.visited:
                continue
            holders = [b for b in self.bodies if b[0] <= item.start_byte and item.end_byte <= b[1]]
            if not holders:
                continue
            scope = tuple(max(holders, key=lambda b: b[0])[2].split("::"))
            attrs: list[str] = []
            prev = item.prev_named_sibling
            while prev is not None and prev.type == "attribute_item":
                text = _attribute(prev)
                if text:
                    attrs.insert(0, text)
                prev = prev.prev_named_sibling
            self.visit_item(item, scope, None, attrs, "")

    def finish(self, root: Any) -> RustFacts:
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
        return RustFacts(tuple(self.defs), tuple(self.uses), tuple(self.impls), group_calls(calls), len(errors),
                         tuple(sorted({e.start_point[0] + 1 for e in errors})[:_MAX_ERROR_LINES]), self.truncated)


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


def _params(node: Any) -> tuple[tuple[str, str], ...]:
    """(name, type) per parameter; `self` keeps its form (`&mut self`) as the type."""
    out = []
    for child in node.named_children:
        if child.type == "self_parameter":
            out.append(("self", _SPACES.sub(" ", _text(child))))
        elif child.type == "parameter":
            pattern = child.child_by_field_name("pattern")
            ptype = child.child_by_field_name("type")
            out.append((_SPACES.sub(" ", _text(pattern)) if pattern is not None else "_",
                        _clip(_SPACES.sub(" ", _text(ptype))) if ptype is not None else ""))
        elif child.type == "variadic_parameter":
            out.append(("...", "..."))
    return tuple(out)


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
