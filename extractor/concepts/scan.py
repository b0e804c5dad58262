"""Per-file facts for concept detection and layering: what a file imports, includes, calls and defines.

Scanners run in worker processes and are cached by content hash, so they never look at the file's
path: relative imports are recorded with their level and resolved later by the extractor, which knows
the module name. Every fact carries the 1-based line it was seen on, so a concept or a role can
point a reader at the exact place.

Python facts (from the stdlib ``ast``):
  imports  [module, name, level, line]   ``from a.b import c`` -> ["a.b", "c", 0, n]; ``import a.b`` -> ["a.b", "", 0, n]
  typing_imports  the same, for imports under ``if TYPE_CHECKING:`` (annotations only: not a
                  dependency at run time, so no evidence of a mechanism or a role); only when any
  names    [dotted, line]   chains whose head is an imported name, resolved through the imports:
                            ``from heapq import heappush; heappush(h, x)`` -> "heapq.heappush"
                            (relative heads keep their dots: ".block_pool.BlockPool")
  calls    [method, line]   ``x.pin_memory()`` where ``x`` is not an import -> "pin_memory"
  invokes  [dotted, line]   imported names called: ``app = FastAPI()`` -> "fastapi.FastAPI" (a name
                            used only in an annotation is in ``names``, not here)
  keywords [arg=value, line]  ``pin_memory=True``; non-constant values are shown as ``arg=...``
  attrs    [attr, line]     first access of every attribute name (``self.max_num_batched_tokens``)
  strings  [text, line]     short one-word string constants ("/dev/shm", "text/event-stream")
  defs     [qualname, kind, line, [bases]]  classes ("class") and functions ("function")
C++/CUDA facts (from tree-sitter) use the same keys where they make sense (no ``keywords``/``attrs``):
  includes [header, line]; names = called and used qualified names without template arguments
  ("std::priority_queue", "cudaIpcGetMemHandle"); calls = ``obj.method()``/``obj->method()`` names;
  defs kinds are "class", "struct", "function", "kernel" (a ``__global__`` function);
  c_api    [line, n]  an ``extern "C"`` block that declares n function prototypes (a C API that
                      other programs link against); only when any
"""

from __future__ import annotations

import ast
from typing import Any

from extractor.model import ParsedFile
from extractor.python.visit import FastNodeVisitor

_MAX_STRING = 80


def scan_python(parsed: ParsedFile) -> dict[str, Any] | None:
    tree = parsed.tree
    if not isinstance(tree, ast.Module):
        # The pipeline hands the stdlib tree; anything else (no tree, a libcst module) is re-parsed
        # here rather than silently yielding no facts.
        try:
            tree = ast.parse(parsed.data)
        except (SyntaxError, ValueError):
            return None
    visitor = _PythonFacts()
    visitor.visit(tree)
    return visitor.finish()


class _PythonFacts(FastNodeVisitor):
    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.imports: set[tuple[str, str, int, int]] = set()
        self.typing_imports: set[tuple[str, str, int, int]] = set()
        self.invokes: set[tuple[str, int]] = set()
        self.names: set[tuple[str, int]] = set()
        self.calls: set[tuple[str, int]] = set()
        self.keywords: set[tuple[str, int]] = set()
        self.attrs: dict[str, int] = {}
        self.strings: set[tuple[str, int]] = set()
        self.defs: list[tuple[str, str, int, list[str]]] = []
        self.scope: list[str] = []
        self.docstrings: set[int] = set()

    # Imports are collected in a first pass (``finish`` is called after a full visit, but names
    # used before a function-level import still resolve: aliases are gathered eagerly below).
    def visit_Module(self, node: ast.Module) -> None:
        typing_only = {id(n) for sub in ast.walk(node) if isinstance(sub, ast.If) and _is_type_checking(sub.test)
                       for inner in sub.body for n in ast.walk(inner) if isinstance(n, (ast.Import, ast.ImportFrom))}
        for sub in ast.walk(node):
            imports = self.typing_imports if id(sub) in typing_only else self.imports
            if isinstance(sub, ast.Import):
                for alias in sub.names:
                    imports.add((alias.name, "", 0, sub.lineno))
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        head = alias.name.split(".")[0]
                        self.aliases.setdefault(head, head)
            elif isinstance(sub, ast.ImportFrom):
                module = sub.module or ""
                prefix = "." * sub.level + module
                for alias in sub.names:
                    imports.add((module, alias.name, sub.level, sub.lineno))
                    if alias.name == "*":
                        continue
                    target = f"{prefix}.{alias.name}" if module else prefix + alias.name
                    self.aliases[alias.asname or alias.name] = target
            elif isinstance(sub, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                body = sub.body
                if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                    self.docstrings.add(id(body[0].value))
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        qualname = ".".join([*self.scope, node.name])
        bases = [b for b in (self.resolve(base) for base in node.bases) if b]
        self.defs.append((qualname, "class", node.lineno, bases))
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        qualname = ".".join([*self.scope, node.name])
        self.defs.append((qualname, "function", node.lineno, []))
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        invoked = self.resolve(func) if isinstance(func, ast.Attribute) else (
            self.aliases.get(func.id) if isinstance(func, ast.Name) else None)
        if invoked is not None:
            self.invokes.add((invoked, node.lineno))
        elif isinstance(func, ast.Attribute):
            self.calls.add((func.attr, node.lineno))
        for kw in node.keywords:
            if kw.arg is None:
                continue
            value = kw.value
            if isinstance(value, ast.Constant) and isinstance(value.value, (bool, int, float, str, type(None))):
                shown = repr(value.value) if isinstance(value.value, str) else str(value.value)
                if len(shown) > _MAX_STRING:
                    shown = "..."
            else:
                shown = "..."
            self.keywords.add((f"{kw.arg}={shown}", kw.value.lineno))
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        resolved = self.resolve(node)
        if resolved is not None:
            self.names.add((resolved, node.lineno))
            return  # the maximal chain is recorded; its prefixes are not
        self.attrs.setdefault(node.attr, node.lineno)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in self.aliases and isinstance(node.ctx, ast.Load):
            self.names.add((self.aliases[node.id], node.lineno))

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if (isinstance(value, str) and 3 <= len(value) <= _MAX_STRING and id(node) not in self.docstrings
                and not any(c.isspace() for c in value)):
            self.strings.add((value, node.lineno))

    def resolve(self, node: ast.expr) -> str | None:
        """Dotted name of an attribute chain whose head is an imported name, else None."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.aliases:
            return ".".join([self.aliases[node.id], *reversed(parts)])
        return None

    def finish(self) -> dict[str, Any]:
        facts = {
            "imports": [list(t) for t in sorted(self.imports)],
            "names": [list(t) for t in sorted(self.names)],
            "calls": [list(t) for t in sorted(self.calls)],
            "invokes": [list(t) for t in sorted(self.invokes)],
            "keywords": [list(t) for t in sorted(self.keywords)],
            "attrs": [[k, v] for k, v in sorted(self.attrs.items())],
            "strings": [list(t) for t in sorted(self.strings)],
            "defs": [[q, k, line, bases] for q, k, line, bases in sorted(self.defs, key=lambda d: (d[2], d[0]))],
        }
        if self.typing_imports:
            facts["typing_imports"] = [list(t) for t in sorted(self.typing_imports)]
        return facts


def _is_type_checking(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` / ``if typing.TYPE_CHECKING:`` (also ``t.TYPE_CHECKING``)."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


# --- C++ / CUDA -----------------------------------------------------------------------------------

_CLASS_TYPES = {"class_specifier": "class", "struct_specifier": "struct"}


def scan_cpp(parsed: ParsedFile) -> dict[str, Any] | None:
    tree = parsed.tree
    root = getattr(tree, "root_node", None)
    if root is None:
        return None
    includes: set[tuple[str, int]] = set()
    names: set[tuple[str, int]] = set()
    calls: set[tuple[str, int]] = set()
    strings: set[tuple[str, int]] = set()
    defs: list[tuple[str, str, int, list[str]]] = []
    c_api: list[tuple[int, int]] = []
    # An explicit stack instead of recursion: generated sources nest deep enough to hit the limit.
    stack = [(root, ())]
    while stack:
        node, scope = stack.pop()
        kind = node.type
        line = node.start_point[0] + 1
        child_scope = scope
        if kind == "preproc_include":
            path = node.child_by_field_name("path")
            if path is not None:
                includes.add((_text(path).strip('"<>'), line))
            continue
        if kind == "linkage_specification":
            value, body = node.child_by_field_name("value"), node.child_by_field_name("body")
            if value is not None and _text(value) == '"C"' and body is not None:
                declared = sum(1 for c in body.named_children
                               if c.type == "declaration" and _function_declarator(c) is not None)
                if declared:
                    c_api.append((line, declared))
        if kind == "namespace_definition":
            name = node.child_by_field_name("name")
            child_scope = (*scope, _text(name)) if name is not None else scope
        elif kind in _CLASS_TYPES and node.child_by_field_name("body") is not None:
            name = node.child_by_field_name("name")
            if name is not None:
                bases = []
                for child in node.children:
                    if child.type == "base_class_clause":
                        bases = [_plain_name(c) for c in child.named_children if c.type != "access_specifier"]
                qualname = "::".join([*scope, _plain_name(name)])
                # the name's line, not the specifier's: "template <...>" may come first
                defs.append((qualname, _CLASS_TYPES[kind], _name_line(name), [b for b in bases if b]))
                child_scope = (*scope, _plain_name(name))
        elif kind == "function_definition":
            declarator = _function_declarator(node)
            if declarator is not None:
                name = declarator.child_by_field_name("declarator")
                if name is not None:
                    is_kernel = any(c.type == "__global__" or _text(c) == "__global__" for c in node.children
                                    if c.type != "compound_statement")
                    qualname = "::".join([*scope, _plain_name(name)])
                    defs.append((qualname, "kernel" if is_kernel else "function", _name_line(name), []))
        elif kind == "call_expression":
            func = node.child_by_field_name("function")
            if func is not None:
                if func.type == "field_expression":
                    field = func.child_by_field_name("field")
                    if field is not None:
                        calls.add((_text(field), line))
                else:
                    name = _plain_name(func)
                    if name:
                        names.add((name, line))
        elif kind == "qualified_identifier":
            names.add((_plain_name(node), line))
            continue  # its parts are not separate names
        elif kind == "type_identifier":
            names.add((_text(node), line))
        elif kind == "string_literal":
            text = "".join(_text(c) for c in node.named_children if c.type == "string_content")
            if 3 <= len(text) <= _MAX_STRING and not any(c.isspace() for c in text):
                strings.add((text, line))
            continue
        stack.extend((child, child_scope) for child in reversed(node.children))
    facts = {
        "includes": [list(t) for t in sorted(includes)],
        "names": [list(t) for t in sorted(names)],
        "calls": [list(t) for t in sorted(calls)],
        "strings": [list(t) for t in sorted(strings)],
        "defs": [[q, k, line, bases] for q, k, line, bases in sorted(defs, key=lambda d: (d[2], d[0]))],
    }
    if c_api:
        facts["c_api"] = [list(t) for t in sorted(c_api)]
    return facts


def _text(node: Any) -> str:
    return node.text.decode("utf-8", errors="replace")


def _name_line(node: Any) -> int:
    """Line of the last part of a (qualified) name: the line a reader looks for."""
    while node.type == "qualified_identifier" and node.child_by_field_name("name") is not None:
        node = node.child_by_field_name("name")
    return node.start_point[0] + 1


def _function_declarator(node: Any) -> Any:
    declarator = node.child_by_field_name("declarator")
    # pointer/reference declarators wrap the function declarator (``T* f()``, ``T& f()``)
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def _plain_name(node: Any) -> str:
    """``a::b::f<int>`` -> ``a::b::f``; ``B<int>`` -> ``B``; other nodes: their text."""
    kind = node.type
    if kind == "qualified_identifier":
        scope = node.child_by_field_name("scope")
        name = node.child_by_field_name("name")
        head = _plain_name(scope) if scope is not None else ""
        tail = _plain_name(name) if name is not None else ""
        return f"{head}::{tail}"
    if kind in ("template_type", "template_function", "template_method"):
        name = node.child_by_field_name("name")
        return _plain_name(name) if name is not None else ""
    if kind in ("identifier", "type_identifier", "namespace_identifier", "field_identifier",
                "destructor_name", "operator_name", "primitive_type"):
        return _text(node)
    return ""
