"""Per-file facts of a Python module, for the symbol graph and its API (run in workers, cached).

One walk of the stdlib ``ast`` records, path-free (the facts are cached by content hash):

- ``defs``: classes, functions and methods with their ``__qualname__``, docstring line, tags,
  bases, decorators (dotted names as written), and for functions the parameters as records
  ``[name, kind, annotation, default]`` (kind: the index in :data:`PARAM_KINDS`; annotation and
  default as ``ast.unparse`` source text, never truncated; default ``None`` when there is none)
  and the return annotation. Classes keep their keywords (``kw_only=True``, ``total=False``) and
  each decorator's keyword arguments (``@dataclass(kw_only=True)``): the generated-constructor
  rules need them.
- ``attrs``: names bound by assignment at module level, in class bodies, and on ``self`` in
  ``__init__``/``__post_init__``/``__attrs_post_init__``, with annotation and value kind; class-body
  values keep their source text and, when they are calls, callee and arguments (``field(...)``).
- ``all``: the module's ``__all__`` when it is built from string literals (``=``, ``+=``,
  ``.extend``, ``.append``), and the other modules' ``__all__`` it adds (``all_refs``).
- ``imports``, ``aliases``, ``calls`` and ``types`` for name resolution (see ``extractor.python.graph``).
- Classes made by a call (``X = NamedTuple("X", [...])``, ``namedtuple``, ``TypedDict``) as ``defs`` of
  kind class tagged ``functional``, their fields as class-body ``attrs`` (:mod:`extractor.python.forms`).

A definition inside ``if``/``try``/``for``/``with``/``match`` at module or class level is marked
conditional: of two definitions of one name, a later unconditional one replaces the earlier (Python
runs both); a conditional one never does (which branch runs is not known statically).
"""

from __future__ import annotations

import ast
from typing import Any

from extractor.model import ParsedFile
from extractor.python.expr import (call_summary, doc_line, dotted, parameters, source_text, target_names,
                             type_name, value_kind)
from extractor.python.forms import FunctionalClass, functional_class
from extractor.python.visit import FastNodeVisitor

METHOD_TAGS = {"property": "property", "cached_property": "property", "staticmethod": "staticmethod",
                "classmethod": "classmethod", "abstractmethod": "abstract", "overload": "overload"}
# Methods whose ``self.x = ...`` assignments define the instance's attributes.
INIT_METHODS = frozenset({"__init__", "__post_init__", "__attrs_post_init__"})
# Where an attribute is bound: module level, class body, or on the instance.
MODULE, CLASS, INSTANCE = "m", "c", "i"


def _string_list(expr: ast.expr | None) -> tuple[list[str], list[str]] | None:
    """The names of an ``__all__`` value: string literals and ``other.__all__`` references."""
    if isinstance(expr, (ast.List, ast.Tuple)):
        names, refs = [], []
        for elt in expr.elts:
            if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                names.append(elt.value)
            elif isinstance(elt, ast.Starred) and (inner := _string_list(elt.value)) is not None:
                names += inner[0]
                refs += inner[1]
            else:
                return None
        return names, refs
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        left, right = _string_list(expr.left), _string_list(expr.right)
        if left is None or right is None:
            return None
        return left[0] + right[0], left[1] + right[1]
    if isinstance(expr, ast.Attribute) and expr.attr == "__all__":
        ref = dotted(expr.value)
        return ([], [ref]) if ref else None
    return None


class _Scanner(FastNodeVisitor):
    """Collects definitions, attributes, imports, aliases and call sites of one module."""

    def __init__(self) -> None:
        self.defs: list[list[Any]] = []
        self.attrs: list[list[Any]] = []
        self.imports: list[list[Any]] = []
        self.aliases: list[list[Any]] = []
        self.calls: list[list[Any]] = []
        # [scope, name, type, line]: what a local name or ``self.X`` holds, where the code says so
        # (an annotation, or a class instantiated into it); type "" for an untyped parameter, which
        # still shadows any module-level name of the same spelling.
        self.types: list[list[Any]] = []
        self.all_names: list[str] | None = None
        self.all_refs: list[str] = []
        self.scope = ""  # qualname of the innermost def; "" at module level
        self.scope_kind = "module"
        self.conditional = 0  # depth of if/try/for/with/match around the current statement, in this scope
        self.init_class = ""  # the class whose __init__-like method is being walked
        self._param_types: dict[str, str] = {}

    # definitions ---------------------------------------------------------------------------------
    def _child_qual(self, name: str) -> str:
        if self.scope_kind == "module":
            return name
        if self.scope_kind == "class":
            return f"{self.scope}.{name}"
        return f"{self.scope}.<locals>.{name}"

    def _more(self) -> dict[str, Any]:
        return {"cond": 1} if self.conditional else {}

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for expr in (*node.decorator_list, *node.args.defaults, *node.args.kw_defaults):
            if expr is not None:
                self.visit(expr)
        qual = self._child_qual(node.name)
        kind = "method" if self.scope_kind == "class" else "function"
        tags = ["async"] if isinstance(node, ast.AsyncFunctionDef) else []
        decorators = []
        for deco in node.decorator_list:
            name = dotted(deco.func if isinstance(deco, ast.Call) else deco) or ""
            decorators.append(name)
            last = name.rsplit(".", 1)[-1]
            if last in METHOD_TAGS:
                tags.append(METHOD_TAGS[last])
            elif last in ("setter", "getter", "deleter"):
                tags.append("property")
        if node.decorator_list:
            tags.append("decorated")
        if self.scope_kind == "function":
            tags.append("nested")
        sig = [parameters(node.args), source_text(node.returns)]
        self.defs.append([kind, qual, node.lineno, doc_line(node.body), sorted(set(tags)), [], decorators, sig,
                          self._more()])
        args = node.args
        params: dict[str, str] = {}
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a)):
            typed = type_name(arg.annotation) if arg.annotation is not None and arg not in (args.vararg,
                                                                                            args.kwarg) else ""
            params[arg.arg] = typed or ""
            self.types.append([qual, arg.arg, params[arg.arg], node.lineno])
        saved = self._param_types, self.init_class
        self._param_types = params
        self.init_class = self.scope if self.scope_kind == "class" and node.name in INIT_METHODS else ""
        self._enter(qual, "function", node.body)
        self._param_types, self.init_class = saved

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
            self.visit(expr)
        qual = self._child_qual(node.name)
        bases = []
        for base in node.bases:
            base = base.value if isinstance(base, ast.Subscript) else base
            bases.append(dotted(base) or "")
        tags = []
        decorators = []
        decorator_keywords = []
        for deco in node.decorator_list:
            name = dotted(deco.func if isinstance(deco, ast.Call) else deco) or ""
            decorators.append(name)
            decorator_keywords.append(call_summary(deco)[1] if isinstance(deco, ast.Call) else {})
            if name.rsplit(".", 1)[-1] == "dataclass":
                tags.append("dataclass")
        if node.decorator_list:
            tags.append("decorated")
        if self.scope_kind == "function":
            tags.append("nested")
        more = self._more()
        keywords = {k.arg: source_text(k.value) for k in node.keywords if k.arg is not None}
        if keywords:
            more["kw"] = keywords
        if any(decorator_keywords):
            more["dkw"] = decorator_keywords
        self.defs.append(["class", qual, node.lineno, doc_line(node.body), sorted(set(tags)), bases, decorators,
                          None, more])
        saved = self.init_class
        self.init_class = ""
        self._enter(qual, "class", node.body)
        self.init_class = saved

    def _enter(self, qual: str, kind: str, body: list[ast.stmt]) -> None:
        saved = self.scope, self.scope_kind, self.conditional
        self.scope, self.scope_kind, self.conditional = qual, kind, 0
        for stmt in body:
            self.visit(stmt)
        self.scope, self.scope_kind, self.conditional = saved

    def _visit_compound(self, node: ast.stmt) -> None:
        self.conditional += 1
        self.generic_visit(node)
        self.conditional -= 1

    visit_If = visit_Try = visit_For = visit_AsyncFor = visit_While = _visit_compound
    visit_With = visit_AsyncWith = visit_Match = _visit_compound
    if hasattr(ast, "TryStar"):
        visit_TryStar = _visit_compound

    # imports and aliases ---------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imports.append([self.scope, node.lineno, alias.name, 0, "", alias.asname or ""])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            self.imports.append([self.scope, node.lineno, node.module or "", node.level, alias.name,
                                 alias.asname or ""])

    # attributes ------------------------------------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        if self.scope_kind != "function" and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call) \
                and (made := functional_class(dotted(node.value.func) or "", node.value)) is not None:
            self._functional_class(node.targets[0].id, made, node.lineno)
            self.generic_visit(node)
            return
        if self.scope_kind != "function" and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = dotted(node.value)
            if value and "super()" not in value:
                self.aliases.append([self.scope, node.targets[0].id, value, node.lineno])
        if self.scope_kind == "function":
            if len(node.targets) == 1:
                self._record_type(node.targets[0], None, node.value, node.lineno)
            if self.init_class:
                for target in node.targets:
                    self._instance_attr(target, None, node.value, node.lineno)
        else:
            for target in node.targets:
                for name in target_names(target):
                    self._attr(name, None, node.value, node.lineno)
                if isinstance(target, ast.Name) and target.id == "__all__" and self.scope_kind == "module":
                    self._set_all(node.value, replace=True)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if self.scope_kind == "function":
            self._record_type(node.target, node.annotation, node.value, node.lineno)
            if self.init_class:
                self._instance_attr(node.target, node.annotation, node.value, node.lineno)
        elif isinstance(node.target, ast.Name):
            self._attr(node.target.id, node.annotation, node.value, node.lineno)
            if node.target.id == "__all__" and self.scope_kind == "module":
                self._set_all(node.value, replace=True)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if self.scope_kind == "module" and isinstance(node.target, ast.Name) and node.target.id == "__all__" \
                and isinstance(node.op, ast.Add):
            self._set_all(node.value, replace=False)
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        call = node.value
        if self.scope_kind == "module" and isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                and dotted(call.func.value) == "__all__" and len(call.args) == 1:
            if call.func.attr == "extend":
                self._set_all(call.args[0], replace=False)
            elif call.func.attr == "append" and isinstance(call.args[0], ast.Constant) \
                    and isinstance(call.args[0].value, str):
                self.all_names = [*(self.all_names or []), call.args[0].value]
        self.generic_visit(node)

    def _functional_class(self, name: str, made: FunctionalClass, line: int) -> None:
        """``X = NamedTuple("X", [...])``: a class as the class syntax would give, fields as its bindings."""
        qual = self._child_qual(name)
        more = self._more()
        if made.keywords:
            more["kw"] = {k: source_text(v) for k, v in made.keywords.items()}
        self.defs.append(["class", qual, line, "", ["functional"], [made.base], [], None, more])
        for field in made.fields:
            default = source_text(field.default) if field.default is not None else ""
            self.attrs.append([qual, field.name, line, CLASS, source_text(field.annotation), value_kind(field.default),
                               default, None, 0])

    def _set_all(self, value: ast.expr | None, *, replace: bool) -> None:
        found = _string_list(value)
        if found is None:
            return  # computed in a way a static reader cannot follow: treated as absent
        names, refs = found
        self.all_names = names if replace or self.all_names is None else [*self.all_names, *names]
        self.all_refs = refs if replace else [*self.all_refs, *refs]

    def _attr(self, name: str, annotation: ast.expr | None, value: ast.expr | None, line: int) -> None:
        where = MODULE if self.scope_kind == "module" else CLASS
        text, call = "", None
        if where == CLASS:  # a field's default and its field(...) arguments feed the generated constructors
            call = call_summary(value)
            if value is not None and (annotation is not None or call is not None):
                text = source_text(value)
        self.attrs.append([self.scope, name, line, where, source_text(annotation), value_kind(value), text, call,
                           1 if self.conditional else 0])

    def _instance_attr(self, target: ast.expr, annotation: ast.expr | None, value: ast.expr | None,
                       line: int) -> None:
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            self.attrs.append([self.init_class, target.attr, line, INSTANCE, source_text(annotation), value_kind(value),
                               "", None, 1])
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._instance_attr(elt, None, None, line)

    def _record_type(self, target: ast.expr, annotation: ast.expr | None, value: ast.expr | None,
                     line: int) -> None:
        if isinstance(target, ast.Name):
            name = target.id
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            name = f"self.{target.attr}"
        else:
            return
        typed = type_name(annotation) if annotation is not None else ""
        if not typed and isinstance(value, ast.Call):
            typed = dotted(value.func) or ""  # x = Cls(...): kept only if Cls turns out to be a class
        elif not typed and isinstance(value, ast.Name) and name.startswith("self."):
            typed = self._param_types.get(value.id, "")  # self.x = x, x an annotated parameter
        if typed and "super()" not in typed:
            self.types.append([self.scope, name, typed, line])

    # calls -----------------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        self.calls.append([self.scope, node.lineno, dotted(node.func) or ""])
        self.generic_visit(node)


def scan_python(parsed: ParsedFile) -> dict[str, Any]:
    if not isinstance(parsed.tree, ast.Module):
        from extractor.python.scan_libcst import scan_libcst  # only for syntax newer than the running ast

        return scan_libcst(parsed.tree)
    scanner = _Scanner()
    for stmt in parsed.tree.body:
        scanner.visit(stmt)
    facts = {"doc": doc_line(parsed.tree.body), "defs": scanner.defs, "attrs": scanner.attrs,
             "imports": scanner.imports, "aliases": scanner.aliases, "calls": scanner.calls, "types": scanner.types}
    if scanner.all_names is not None:
        facts["all"] = scanner.all_names
    if scanner.all_refs:
        facts["all_refs"] = scanner.all_refs
    return facts
