"""Per-file facts for concept detection and layering from Rust and Go, in the fields the Python and
C++ scanners fill (:class:`extractor.concepts.facts.ConceptFacts`, see :mod:`extractor.concepts.scan`):

  imports  [path, "", 0, line]   Rust ``use`` paths as written (``tokio::sync::mpsc``, groups
                                 expanded), Go import paths (``google.golang.org/grpc``)
  names    [path, line]          paths the code calls, with the head resolved through the imports:
                                 Rust ``mpsc::channel`` -> ``tokio::sync::mpsc::channel``; Go
                                 ``grpc.NewServer`` -> ``google.golang.org/grpc.NewServer``
  calls    [method, line]        method calls on values (``.send``, ``.recv``, ``.lock``)
  strings  [text, line]          short one-word string literals
  routes   [text, line]          Go HTTP routes registered with a literal path: ``mux.HandleFunc("/x", h)``
                                 -> "ANY /x", ``"POST /x"`` patterns, ``r.POST("/x", h)`` -> "POST /x";
                                 Rust routers' ``.route("/x", get(h).post(h2))`` (axum; actix-web's
                                 ``web::post().to(h)``) -> "GET|POST /x"
  defs     [name, kind, line, []]  structs, enums, traits/interfaces, functions (not methods)
"""

from __future__ import annotations

import re
from typing import Any

from extractor.concepts.facts import ConceptFacts, Definition, Import
from extractor.model import Language, ParsedFile
from extractor.go.parse import capture_nodes as go_captures
from extractor.rust.parse import capture_nodes as rust_captures
from extractor.rust.scan import use_paths

_MAX_STRING = 80
_RUST_DEFS = {"struct_item": "struct", "enum_item": "enum", "trait_item": "trait", "function_item": "function"}


# The nodes each language's facts come from, found by one query in C: walking every node of the
# tree in Python cost twice the parse (mistral.rs: 3.6 CPU s against 1.9).
_RUST_QUERY = """
(use_declaration) @use
(call_expression) @call
(macro_invocation) @macro
[(string_literal) (raw_string_literal)] @string
[(struct_item) (enum_item) (trait_item) (function_item)] @def
"""
_GO_QUERY = """
(import_spec) @use
(call_expression) @call
[(interpreted_string_literal) (raw_string_literal)] @string
[(function_declaration) (type_spec)] @def
"""
_NESTING = frozenset(("impl_item", "function_item", "mod_item"))  # a Rust item inside two is not a definition


def scan_native(parsed: ParsedFile) -> ConceptFacts | None:
    root = getattr(parsed.tree, "root_node", None)
    if root is None:
        return None
    rust = parsed.language is Language.RUST
    found = rust_captures(root, _RUST_QUERY) if rust else go_captures(root, _GO_QUERY)
    imports: set[tuple[str, str, int, int]] = set()
    aliases: dict[str, str] = {}
    names: set[tuple[str, int]] = set()
    calls: set[tuple[str, int]] = set()
    strings: set[tuple[str, int]] = set()
    routes: set[tuple[str, int]] = set()
    defs: list[tuple[str, str, int, list[str]]] = []
    for node in _in_order(found.get("use", ())):
        line = node.start_point[0] + 1
        if rust:
            arg = node.child_by_field_name("argument")
            for path, alias in use_paths(arg) if arg is not None else ():
                imports.add((path, "", 0, line))
                last = path.rsplit("::", 1)[-1]
                if last not in ("*", "self"):
                    aliases[alias or last] = path
            continue
        path = node.child_by_field_name("path")
        alias = node.child_by_field_name("name")
        if path is not None:
            target = _text(path).strip('"`')
            imports.add((target, "", 0, line))
            local = _text(alias) if alias is not None else target.rsplit("/", 1)[-1]
            aliases[local] = target
    for node in found.get("call", ()):
        fn = node.child_by_field_name("function")
        if fn is None:
            continue
        line = node.start_point[0] + 1
        if fn.type in ("field_expression", "selector_expression"):
            field = fn.child_by_field_name("field")
            operand = fn.child_by_field_name("value" if rust else "operand")
            client = operand is not None and aliases.get(_text(operand)) == "net/http"  # http.Get(url): a request
            route = (_rust_route(node) if rust else _go_route(field, node, client)) if field is not None else None
            if route is not None:  # a chained `.route(...)`: the line it is written on, not the chain's first
                routes.add((route, field.start_point[0] + 1 if rust else line))
            if not rust and operand is not None and operand.type == "identifier":
                names.add((f"{_text(operand)}.{_text(field)}", line))  # resolved below
            elif field is not None:
                calls.add((_text(field), line))
        elif fn.type in ("scoped_identifier", "identifier"):
            names.add((_text(fn).replace(" ", ""), line))
    for node in found.get("macro", ()):
        macro = node.child_by_field_name("macro")
        if macro is not None:
            names.add((_text(macro).replace(" ", "") + "!", node.start_point[0] + 1))
    for node in found.get("string", ()):
        if not rust and node.parent is not None and node.parent.type == "import_spec":
            continue  # an import's path is an import, not a string the code uses
        text = _text(node)[1:-1]
        if 3 <= len(text) <= _MAX_STRING and not any(c.isspace() for c in text):
            strings.add((text, node.start_point[0] + 1))
    for node in _in_order(found.get("def", ())):
        kind = node.type
        name = node.child_by_field_name("name")
        if name is None:
            continue
        if rust:
            if _nesting(node) > 1:
                continue
            what = _RUST_DEFS[kind]
        else:
            value = node.child_by_field_name("type")
            what = "function" if kind == "function_declaration" else (
                "struct" if value is not None and value.type == "struct_type" else
                "interface" if value is not None and value.type == "interface_type" else "type")
        defs.append((_text(name), what, node.start_point[0] + 1, []))
    return ConceptFacts(
        imports=tuple(Import(*t) for t in sorted(imports)), names=tuple(sorted(resolve_names(names, aliases, rust))),
        calls=tuple(sorted(calls)), strings=tuple(sorted(strings)), routes=tuple(sorted(routes)),
        defs=tuple(Definition(q, k, ln, tuple(b)) for q, k, ln, b in sorted(defs, key=lambda d: (d[2], d[0]))))


# Go's net/http (a ServeMux's or the package's Handle/HandleFunc; Go 1.22 patterns may lead with a
# method, "POST /v1/x") and the routers shaped like gin, echo and chi (`r.GET("/x", h)`)
_GO_HANDLES = frozenset({"Handle", "HandleFunc"})
_GO_VERBS = frozenset({"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "Any", "Get", "Post", "Put",
                       "Delete", "Patch"})
_GO_PATTERN = re.compile(r"(?:([A-Z]+) )?(/\S*)")


def _go_route(field: Any, call: Any, client: bool) -> str | None:
    """The route a Go call registers with a literal path ("POST /v1/completions"), if it is one: a
    router's verb method takes the path and a handler (net/http's own Get/Post are requests)."""
    name = _text(field)
    if name not in _GO_HANDLES and (name not in _GO_VERBS or client):
        return None
    args = call.child_by_field_name("arguments")
    given = [a for a in args.named_children if a.type != "comment"] if args is not None else []
    first = given[0] if len(given) >= 2 else None
    if first is None or first.type not in ("interpreted_string_literal", "raw_string_literal"):
        return None
    found = _GO_PATTERN.fullmatch(_text(first)[1:-1])
    if found is None or len(found.group(2)) > _MAX_STRING:
        return None
    if name in _GO_HANDLES:
        return f"{found.group(1) or 'ANY'} {found.group(2)}"
    return None if found.group(1) else f"{'ANY' if name == 'Any' else name.upper()} {found.group(2)}"


# axum's method routers (`get(h)`, `axum::routing::post(h)`, chained `get(a).post(b)`) and actix-web's routes
# (`web::get().to(h)`), the second argument of a router's `.route("/path", ...)`
_RUST_VERBS = frozenset({"get", "post", "put", "delete", "patch", "head", "options", "trace"})


def _rust_route(call: Any) -> str | None:
    """The route a Rust router's ``.route("/x", get(h).post(h2))`` registers ("GET|POST /x"); None
    when the path is no literal or no method of the second argument is read."""
    fn = call.child_by_field_name("function")
    if fn.child_by_field_name("field") is None or _text(fn.child_by_field_name("field")) != "route":
        return None
    args = call.child_by_field_name("arguments")
    given = [a for a in args.named_children if a.type not in ("line_comment", "block_comment")] \
        if args is not None else []
    if len(given) != 2 or given[0].type != "string_literal":
        return None
    path = _text(given[0])[1:-1]
    if not path.startswith("/") or len(path) > _MAX_STRING or any(c.isspace() for c in path):
        return None
    methods: set[str] = set()
    node = given[1]
    for _ in range(16):  # a chain of method routers, innermost last
        if node.type != "call_expression":
            break
        inner = node.child_by_field_name("function")
        if inner.type == "field_expression":
            name = _text(inner.child_by_field_name("field"))
            node = inner.child_by_field_name("value")
        elif inner.type in ("identifier", "scoped_identifier"):
            name = _text(inner).rsplit("::", 1)[-1]
            node = None
        else:
            break
        if name in _RUST_VERBS:
            methods.add(name.upper())
        if node is None:
            break
    return f"{'|'.join(sorted(methods))} {path}" if methods else None


def resolve_names(names: set[tuple[str, int]], aliases: dict[str, str], rust: bool) -> set[tuple[str, int]]:
    """Called names with their head resolved through the imports' aliases."""
    sep = "::" if rust else "."
    resolved = set()
    for name, line in names:
        head, dot, rest = name.partition(sep)
        if head in aliases:
            resolved.add((aliases[head] + (dot + rest if rest else ""), line))
        elif rust or not dot:  # a Go selector on a variable says nothing of what it calls
            resolved.add((name, line))
    return resolved


def _in_order(nodes: Any) -> list[Any]:
    """Nodes in the order a walk of the tree meets them: by start, an enclosing node first."""
    return sorted(nodes, key=lambda node: (node.start_byte, -node.end_byte))


def _nesting(node: Any) -> int:
    """How many impl, function and mod items enclose ``node`` (counted up to 2)."""
    count = 0
    parent = node.parent
    while parent is not None and count < 2:
        count += parent.type in _NESTING
        parent = parent.parent
    return count


def _text(node: Any) -> str:
    return node.text.decode("utf-8", errors="replace")
