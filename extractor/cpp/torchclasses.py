"""TorchScript custom classes: a C++ class registered with torch so Python makes and calls it as
``torch.classes.<namespace>.<Name>`` (mechanism "torchscript").

Three spellings register one, each followed by a chain of its methods:

- ``torch::class_<T>("ns", "Name")`` (or ``torch::jit::class_``), usually the initializer of a static
  at namespace level: ``torch.classes.ns.Name``;
- the one-argument form of older releases, ``torch::jit::class_<T>("Name")``: ``torch.classes.Name``;
- ``m.class_<T>("Name")`` inside a ``TORCH_LIBRARY(ns, m)`` block (or another block macro of
  macros.yaml's ``torch_library``): ``torch.classes.ns.Name``; a namespace the build names (an
  upper-case macro) is not read.

``.def("name", &T::method)`` and ``.def_static("name", &fn)`` links are its methods; ``.def(torch::init<...>())``
(the constructor: Python's call of the class) and ``.def_pickle`` name none, and a lambda is not
followed (its target is not read).

Read from the text, not the tree: FasterTransformer writes the two spellings as the branches of one
conditional group in the middle of the initializer (``static auto x =`` / ``#ifdef LEGACY_THS`` /
``torch::jit::class_<T>("FasterTransformerDecoding")`` / ``#else`` / ``torch::jit::class_<T>(
"FasterTransformer", "Decoding")`` / ``#endif`` / ``.def(...)...;``), which tree-sitter reads as ERROR
nodes. Here each branch registers the class, and the chain after the group is each one's: Python
code calls both names (`if legacy: torch.classes.FasterTransformerDecoding(...)`). The namespace
around the registration (which the method references are resolved from) is read from the tree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from extractor.cpp.facts import PybindFact
from extractor.cpp.names import SPACES, clean_name, split_top_level
from extractor.cpp.parse import blank_span

TORCHSCRIPT = "torchscript"
MODULE = "torch.classes"
MARKER = b"class_"

# `torch::class_<`, `torch::jit::class_<`, `m.class_<` (group 1: the library block's variable)
_START = re.compile(rb"(?:\btorch\s*::\s*(?:jit\s*::\s*)?|\b([A-Za-z_]\w*)\s*\.\s*)class_\s*<")
_COMMENT = re.compile(rb"//[^\n]*|/\*.*?\*/", re.S)
_DIRECTIVE = re.compile(rb"#[ \t]*(\w*)[^\n]*(?:\\\n[^\n]*)*")
_LINK = re.compile(rb"\.\s*(\w+)\s*\(")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_REFERENCE = re.compile(r"&?((?:::)?[A-Za-z_]\w*(?:::~?[A-Za-z_]\w*)*)")
_GROUP_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|endif)\b[^\n]*", re.M)
_METHOD_LINKS = frozenset({"def", "def_static"})


def torch_class_registrations(data: bytes, root: Any, library_macros: Iterable[str]) -> list[PybindFact]:
    """The classes the file registers with TorchScript, and their methods: a "class" fact each
    (``target`` the class as written) and a "method" fact per method link (``owner`` the class's
    Python name), ``module`` ``torch.classes[.<ns>]``."""
    code = _COMMENT.sub(lambda m: blank_span(m.group(0)), data)
    blocks = _library_blocks(code, library_macros)
    found: list[PybindFact] = []
    for m in _START.finditer(code):
        closing = closing_bracket(code, m.end() - 1, b"<", b">")
        opening = _skip_spaces(code, closing)
        if closing < 0 or code[opening:opening + 1] != b"(":
            continue
        end = closing_bracket(code, opening, b"(", b")")
        if end < 0:
            continue
        cls = SPACES.sub("", code[m.end():closing - 1].decode(errors="replace"))
        strings = [_string(arg) for arg in split_top_level(code[opening + 1:end - 1].decode(errors="replace"))]
        if m.group(1) is not None:  # `m.class_<T>("Name")` in a library block
            namespace = _block_namespace(blocks, m.group(1).decode(), m.start())
            module = f"{MODULE}.{namespace}" if namespace else ""
            name = strings[0] if len(strings) == 1 else None
        elif len(strings) == 2 and strings[0]:
            module, name = f"{MODULE}.{strings[0]}", strings[1]
        else:
            module, name = MODULE, strings[0] if len(strings) == 1 else None
        if not module or not name:
            continue
        scope = namespace_at(root, m.start())
        line = data.count(b"\n", 0, m.start()) + 1
        found.append(PybindFact("class", module, name, cls, line, scope, mechanism=TORCHSCRIPT))
        found.extend(PybindFact("method", module, method, target, at, scope, owner=name, mechanism=TORCHSCRIPT)
                     for method, target, at in _methods(code, end))
    return found


def _methods(code: bytes, pos: int) -> list[tuple[str, str, int]]:
    """(Python name, function as written, line) of each method link of the chain from ``pos``, read
    over the conditional directives between its links; an `#else` or `#elif` met is the other branch
    of the group the registration stands in, passed over up to its `#endif`."""
    found: list[tuple[str, str, int]] = []
    while True:
        pos = _skip_spaces(code, pos)
        directive = _DIRECTIVE.match(code, pos)
        if directive is not None:
            pos = _group_end(code, directive.end()) if directive.group(1) in (b"else", b"elif") else directive.end()
            continue
        link = _LINK.match(code, pos)
        if link is None:
            return found
        end = closing_bracket(code, link.end() - 1, b"(", b")")
        if end < 0:
            return found
        if link.group(1).decode() in _METHOD_LINKS:
            args = split_top_level(code[link.end():end - 1].decode(errors="replace"))
            name = _string(args[0]) if len(args) >= 2 else None
            reference = _REFERENCE.fullmatch(SPACES.sub("", args[1])) if name else None
            if name and reference is not None:
                found.append((name, clean_name(reference.group(1)), code.count(b"\n", 0, link.start()) + 1))
        pos = end


def _skip_spaces(code: bytes, pos: int) -> int:
    while code[pos:pos + 1] in (b" ", b"\t", b"\r", b"\n"):
        pos += 1
    return pos


def _group_end(code: bytes, pos: int) -> int:
    """Where the line of the `#endif` that closes the group open at ``pos`` ends."""
    depth = 0
    for m in _GROUP_DIRECTIVE.finditer(code, pos):
        if m.group(1) != b"endif":
            depth += 1
        elif depth == 0:
            return m.end()
        else:
            depth -= 1
    return len(code)


def closing_bracket(code: bytes, pos: int, opening: bytes, closing: bytes) -> int:
    """The position after the bracket that closes the one at ``pos`` (string literals skipped); -1
    when it is not closed, or ``pos`` holds no such bracket."""
    if code[pos:pos + 1] != opening:
        return -1
    depth, i, n = 0, pos, len(code)
    while i < n:
        c = code[i:i + 1]
        if c == b'"':
            i += 1
            while i < n and code[i:i + 1] != b'"':
                i += 2 if code[i:i + 1] == b"\\" else 1
        elif c == opening:
            depth += 1
        elif c == closing:
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == b";" or (c == b"{" and opening == b"<"):
            return -1
        i += 1
    return -1


def _string(argument: str) -> str | None:
    m = _STRING.fullmatch(argument.strip())
    return m.group(1) if m is not None else None


def _library_blocks(code: bytes, macros: Iterable[str]) -> list[tuple[int, str, str]]:
    """(position, variable, namespace) of each library block the file opens, in order; the
    namespace "" when the build names it (an upper-case macro)."""
    names = sorted(macros)
    if not names:
        return []
    alternatives = b"|".join(re.escape(n.encode()) for n in names)
    pattern = re.compile(rb"\b(?:" + alternatives + rb")\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)")
    return [(m.start(), m.group(2).decode(), "" if re.fullmatch(rb"[A-Z][A-Z0-9_]*", m.group(1)) else
             m.group(1).decode()) for m in pattern.finditer(code)]


def _block_namespace(blocks: list[tuple[int, str, str]], var: str, pos: int) -> str:
    """The namespace of the last library block of variable ``var`` opened before ``pos``; "" if none."""
    namespace = ""
    for start, name, ns in blocks:
        if start > pos:
            break
        if name == var:
            namespace = ns
    return namespace


def namespace_at(root: Any, pos: int) -> str:
    """The named namespaces around byte ``pos`` of the tree, outermost first, joined with `::`."""
    node = root.descendant_for_byte_range(pos, pos) if root is not None else None
    names = []
    while node is not None:
        if node.type == "namespace_definition":
            named = node.child_by_field_name("name")
            if named is not None:
                names.append(SPACES.sub("", named.text.decode(errors="replace")))
        node = node.parent
    return "::".join(reversed(names))
