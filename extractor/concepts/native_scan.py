"""Per-file facts for concept detection and layering from Rust and Go, in the fields the Python and
C++ scanners fill (:class:`extractor.concepts.facts.ConceptFacts`, see :mod:`extractor.concepts.scan`):

  imports  [path, "", 0, line]   Rust ``use`` paths as written (``tokio::sync::mpsc``, groups
                                 expanded), Go import paths (``google.golang.org/grpc``)
  names    [path, line]          paths the code calls, with the head resolved through the imports:
                                 Rust ``mpsc::channel`` -> ``tokio::sync::mpsc::channel``; Go
                                 ``grpc.NewServer`` -> ``google.golang.org/grpc.NewServer``
  calls    [method, line]        method calls on values (``.send``, ``.recv``, ``.lock``)
  strings  [text, line]          short one-word string literals
  defs     [name, kind, line, []]  structs, enums, traits/interfaces, functions (not methods)
"""

from __future__ import annotations

from typing import Any

from extractor.concepts.facts import ConceptFacts, Definition, Import
from extractor.model import Language, ParsedFile
from extractor.rust.scan import use_paths

_MAX_STRING = 80
_RUST_DEFS = {"struct_item": "struct", "enum_item": "enum", "trait_item": "trait", "function_item": "function"}


def scan_native(parsed: ParsedFile) -> ConceptFacts | None:
    root = getattr(parsed.tree, "root_node", None)
    if root is None:
        return None
    rust = parsed.language is Language.RUST
    imports: set[tuple[str, str, int, int]] = set()
    aliases: dict[str, str] = {}
    names: set[tuple[str, int]] = set()
    calls: set[tuple[str, int]] = set()
    strings: set[tuple[str, int]] = set()
    defs: list[tuple[str, str, int, list[str]]] = []
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        kind = node.type
        line = node.start_point[0] + 1
        if rust and kind == "use_declaration":
            arg = node.child_by_field_name("argument")
            if arg is not None:
                for path, alias in use_paths(arg):
                    imports.add((path, "", 0, line))
                    last = path.rsplit("::", 1)[-1]
                    if last not in ("*", "self"):
                        aliases[alias or last] = path
            continue
        if not rust and kind == "import_spec":
            path = node.child_by_field_name("path")
            alias = node.child_by_field_name("name")
            if path is not None:
                target = _text(path).strip('"`')
                imports.add((target, "", 0, line))
                local = _text(alias) if alias is not None else target.rsplit("/", 1)[-1]
                aliases[local] = target
            continue
        if kind == "call_expression":
            fn = node.child_by_field_name("function")
            if fn is not None:
                if fn.type in ("field_expression", "selector_expression"):
                    field = fn.child_by_field_name("field")
                    operand = fn.child_by_field_name("value" if rust else "operand")
                    if not rust and operand is not None and operand.type == "identifier":
                        names.add((f"{_text(operand)}.{_text(field)}", line))  # resolved below
                    elif field is not None:
                        calls.add((_text(field), line))
                elif fn.type in ("scoped_identifier", "identifier"):
                    names.add((_text(fn).replace(" ", ""), line))
        elif kind == "macro_invocation" and rust:
            macro = node.child_by_field_name("macro")
            if macro is not None:
                names.add((_text(macro).replace(" ", "") + "!", line))
        elif kind in ("string_literal", "interpreted_string_literal", "raw_string_literal"):
            text = _text(node)[1:-1]
            if 3 <= len(text) <= _MAX_STRING and not any(c.isspace() for c in text):
                strings.add((text, line))
            continue
        elif rust and kind in _RUST_DEFS and depth <= 1:
            name = node.child_by_field_name("name")
            if name is not None:
                defs.append((_text(name), _RUST_DEFS[kind], line, []))
        elif not rust and kind in ("function_declaration", "type_spec"):
            name = node.child_by_field_name("name")
            value = node.child_by_field_name("type")
            if name is not None:
                what = "function" if kind == "function_declaration" else (
                    "struct" if value is not None and value.type == "struct_type" else
                    "interface" if value is not None and value.type == "interface_type" else "type")
                defs.append((_text(name), what, line, []))
        inner = depth + (1 if kind in ("impl_item", "function_item", "mod_item") else 0)
        stack.extend((child, inner) for child in reversed(node.named_children))
    sep = "::" if rust else "."
    resolved = set()
    for name, line in names:
        head, dot, rest = name.partition(sep)
        if head in aliases:
            resolved.add((aliases[head] + (dot + rest if rest else ""), line))
        elif rust or not dot:  # a Go selector on a variable says nothing of what it calls
            resolved.add((name, line))
    return ConceptFacts(
        imports=tuple(Import(*t) for t in sorted(imports)), names=tuple(sorted(resolved)),
        calls=tuple(sorted(calls)), strings=tuple(sorted(strings)),
        defs=tuple(Definition(q, k, ln, tuple(b)) for q, k, ln, b in sorted(defs, key=lambda d: (d[2], d[0]))))


def _text(node: Any) -> str:
    return node.text.decode("utf-8", errors="replace")
