"""Per-file facts of a Python module, for the symbol graph and its API (run in workers, cached).

The facts (:class:`extractor.python.facts.PythonFacts`) are path-free (cached by content hash):

- ``defs``: classes, functions and methods with their ``__qualname__``, docstring line, tags,
  bases, decorators (dotted names as written), and for functions the parameters (kind: the index in
  :data:`PARAM_KINDS`; annotation and default as ``ast.unparse`` source text, never truncated;
  default ``None`` when there is none) and the return annotation. Classes keep their keywords
  (``kw_only=True``, ``total=False``) and each decorator's keyword arguments
  (``@dataclass(kw_only=True)``): the generated-constructor rules need them.
- ``attrs``: names bound by assignment at module level, in class bodies, and on ``self`` in
  ``__init__``/``__post_init__``/``__attrs_post_init__``, with annotation and value kind; class-body
  values keep their source text and, when they are calls, callee and arguments (``field(...)``).
- ``all_names``: the module's ``__all__`` when it is built from string literals (``=``, ``+=``,
  ``.extend``, ``.append``), and the other modules' ``__all__`` it adds (``all_refs``).
- ``imports``, ``aliases``, ``calls`` and ``types`` for name resolution (see ``extractor.python.graph``).
- Classes made by a call (``X = NamedTuple("X", [...])``, ``namedtuple``, ``TypedDict``) as ``defs`` of
  kind class tagged ``functional``, their fields as class-body ``attrs`` (:mod:`extractor.python.forms`).

A definition inside ``if``/``try``/``for``/``with``/``match`` at module or class level is marked
conditional: of two definitions of one name, a later unconditional one replaces the earlier (Python
runs both); a conditional one never does (which branch runs is not known statically).

Everything but the calls is read from statements, by a recursion over statement lists only (a
sixth of the nodes); the calls come from the module's shared index (:mod:`extractor.python.index`),
which the other kinds' scanners read too, so the whole tree is walked once for all of them.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import re
from collections.abc import Callable
from typing import Any

from extractor.model import ParsedFile
from extractor.python.expr import (CHAINED, SUBSCRIPTED, call_summary, display_signature, doc_line, dotted, parameters,
                                   source_text, target_names, to_params, type_name, value_kind)
from extractor.python.facts import (METHOD_TAGS, CLASS, INSTANCE, MODULE, Alias, Attribute, Call, Definition, Import, LocalType,
                                    KernelArgument, NameBinding, PythonFacts)
from extractor.python.forms import FunctionalClass, functional_class
from extractor.python.index import BASE, DECORATOR, DEFAULT, KEYWORD, KW_DEFAULT, ModuleIndex, module_index

# Methods whose ``self.x = ...`` assignments define the instance's attributes.
INIT_METHODS = frozenset({"__init__", "__post_init__", "__attrs_post_init__"})

# Statements whose blocks run conditionally, and the fields holding those blocks, in field order.
_COMPOUND: dict[type, tuple[str, ...]] = {
    ast.If: ("body", "orelse"), ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"), ast.With: ("body",), ast.AsyncWith: ("body",),
    ast.Try: ("body", "handlers", "orelse", "finalbody"), ast.Match: ("cases",),
}
if hasattr(ast, "TryStar"):
    _COMPOUND[ast.TryStar] = ("body", "handlers", "orelse", "finalbody")
# A def's header parts whose calls the graph keeps, in the order the def runs them (annotations
# are left out: they name types, they call nothing at run time worth an edge).
_HEADER_ORDER = {DECORATOR: 0, DEFAULT: 1, KW_DEFAULT: 2, BASE: 1, KEYWORD: 2}


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


class _Statements:
    """Collects definitions, attributes, imports, aliases, local types and ``__all__`` of one
    module, from its statements in source order."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self._bodies: _FunctionBodies | None = None  # made at the first function that names a local
        self.defs: list[Definition] = []
        self.attrs: list[Attribute] = []
        self.imports: list[Import] = []
        self.aliases: list[Alias] = []
        self.bindings: list[NameBinding] = []
        self.types: list[LocalType] = []
        self.held: list[LocalType] = []
        self.all_names: list[str] | None = None
        self.all_refs: list[str] = []
        self.scope = ""  # qualname of the innermost def; "" at module level
        self.scope_kind = "module"
        self.conditional = 0  # depth of if/try/for/with/match around the current statement, in this scope
        self.typing_only = 0  # depth of ``if TYPE_CHECKING:`` bodies around the current statement
        self.init_class = ""  # the class whose __init__-like method is being walked
        self._param_types: dict[str, str] = {}
        self.local_aliases: list[Alias] = []
        self._aliased = False  # the function being walked assigns a local a name (scan._function_aliases)

    def block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            handler = _HANDLERS.get(stmt.__class__)
            if handler is not None:
                handler(self, stmt)

    def _compound(self, node: ast.stmt) -> None:
        self.conditional += 1
        for field in _COMPOUND[node.__class__]:
            if field in ("handlers", "cases"):  # an except handler or a match case holds a block of its own
                for clause in getattr(node, field):
                    self.block(clause.body)
            elif field == "body" and isinstance(node, ast.If) and _type_checking(node.test):
                self.typing_only += 1
                self.block(node.body)
                self.typing_only -= 1
            else:
                self.block(getattr(node, field))
        self.conditional -= 1

    def _loop_or_with(self, node: ast.For | ast.AsyncFor | ast.With | ast.AsyncWith) -> None:
        """A ``for``/``with`` target at module level binds a module-level name, then its blocks run."""
        if self.scope_kind == "module":
            form = "with" if isinstance(node, (ast.With, ast.AsyncWith)) else "for"
            targets = [node.target] if isinstance(node, (ast.For, ast.AsyncFor)) else \
                [item.optional_vars for item in node.items if item.optional_vars is not None]
            for target in targets:
                for name in target_names(target):
                    self.bindings.append(NameBinding(name, node.lineno, form))
        self._compound(node)

    def _global(self, node: ast.Global) -> None:
        if self.scope_kind != "module":  # at module level the statement binds nothing
            for name in node.names:
                self.bindings.append(NameBinding(name, node.lineno, "global"))

    def _import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imports.append(Import(self.scope, node.lineno, alias.name, 0, "", alias.asname or "",
                                       bool(self.typing_only)))

    def _import_from(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            self.imports.append(Import(self.scope, node.lineno, node.module or "", node.level, alias.name,
                                       alias.asname or "", bool(self.typing_only)))

    # definitions ---------------------------------------------------------------------------------
    def _child_qual(self, name: str) -> str:
        if self.scope_kind == "module":
            return name
        if self.scope_kind == "class":
            return f"{self.scope}.{name}"
        return f"{self.scope}.<locals>.{name}"

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
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
        given, returns = parameters(node.args), source_text(node.returns)
        self.defs.append(Definition(kind, qual, node.lineno, doc_line(node.body), tuple(sorted(set(tags))), (),
                                    tuple(decorators), given, returns, bool(self.conditional),
                                    signature=display_signature(to_params(given), returns)))
        args = node.args
        params: dict[str, str] = {}
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a)):
            typed = type_name(arg.annotation) if arg.annotation is not None and arg not in (args.vararg,
                                                                                            args.kwarg) else ""
            params[arg.arg] = typed or ""
            self.types.append(LocalType(qual, arg.arg, params[arg.arg], node.lineno))
        saved = self._param_types, self.init_class, self._aliased
        self._param_types, self._aliased = params, False
        self.init_class = self.scope if self.scope_kind == "class" and node.name in INIT_METHODS else ""
        self._enter(qual, "function", node.body)
        if self._aliased:
            if self._bodies is None:
                self._bodies = _FunctionBodies(self.index)
            self.local_aliases.extend(_function_aliases(qual, node, self._bodies.locals_of(node)))
        self._param_types, self.init_class, self._aliased = saved

    def _class(self, node: ast.ClassDef) -> None:
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
            summary = call_summary(deco) if isinstance(deco, ast.Call) else None
            decorator_keywords.append(summary.keywords if summary is not None else {})
            if name.rsplit(".", 1)[-1] == "dataclass":
                tags.append("dataclass")
        if node.decorator_list:
            tags.append("decorated")
        if self.scope_kind == "function":
            tags.append("nested")
        keywords = {k.arg: source_text(k.value) for k in node.keywords if k.arg is not None}
        self.defs.append(Definition("class", qual, node.lineno, doc_line(node.body), tuple(sorted(set(tags))),
                                    tuple(bases), tuple(decorators), conditional=bool(self.conditional),
                                    keywords=keywords,
                                    decorator_keywords=tuple(decorator_keywords) if any(decorator_keywords) else ()))
        saved = self.init_class
        self.init_class = ""
        self._enter(qual, "class", node.body)
        self.init_class = saved

    def _enter(self, qual: str, kind: str, body: list[ast.stmt]) -> None:
        saved = self.scope, self.scope_kind, self.conditional
        self.scope, self.scope_kind, self.conditional = qual, kind, 0
        self.block(body)
        self.scope, self.scope_kind, self.conditional = saved

    # attributes ------------------------------------------------------------------------------------
    def _assign(self, node: ast.Assign) -> None:
        if self.scope_kind != "function" and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call) \
                and (made := functional_class(dotted(node.value.func) or "", node.value)) is not None:
            self._functional_class(node.targets[0].id, made, node.lineno)
            return
        if self.scope_kind != "function" and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = dotted(node.value)
            if value and "super()" not in value:
                self.aliases.append(Alias(self.scope, node.targets[0].id, value, node.lineno))
        if self.scope_kind == "function":
            if len(node.targets) == 1:
                self._record_type(node.targets[0], None, node.value, node.lineno)
                if isinstance(node.targets[0], ast.Name) and isinstance(node.value, _NAMING):
                    self._aliased = True
            if self.init_class:
                for target in node.targets:
                    self._instance_attr(target, None, node.value, node.lineno)
        else:
            if self.scope_kind == "module" and len(node.targets) == 1:
                self._record_held(node.targets[0], None, node.value, node.lineno)
            for target in node.targets:
                for name in target_names(target):
                    self._attr(name, None, node.value, node.lineno)
                if isinstance(target, ast.Name) and target.id == "__all__" and self.scope_kind == "module":
                    self._set_all(node.value, replace=True)

    def _ann_assign(self, node: ast.AnnAssign) -> None:
        if self.scope_kind == "function":
            self._record_type(node.target, node.annotation, node.value, node.lineno)
            if self.init_class:
                self._instance_attr(node.target, node.annotation, node.value, node.lineno)
        elif isinstance(node.target, ast.Name):
            if self.scope_kind == "module":
                self._record_held(node.target, node.annotation, node.value, node.lineno)
            self._attr(node.target.id, node.annotation, node.value, node.lineno)
            if node.target.id == "__all__" and self.scope_kind == "module":
                self._set_all(node.value, replace=True)

    def _aug_assign(self, node: ast.AugAssign) -> None:
        if self.scope_kind == "module" and isinstance(node.target, ast.Name) and node.target.id == "__all__" \
                and isinstance(node.op, ast.Add):
            self._set_all(node.value, replace=False)

    def _expr(self, node: ast.Expr) -> None:
        call = node.value
        if self.scope_kind == "module" and isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                and dotted(call.func.value) == "__all__" and len(call.args) == 1:
            if call.func.attr == "extend":
                self._set_all(call.args[0], replace=False)
            elif call.func.attr == "append" and isinstance(call.args[0], ast.Constant) \
                    and isinstance(call.args[0].value, str):
                self.all_names = [*(self.all_names or []), call.args[0].value]

    def _functional_class(self, name: str, made: FunctionalClass, line: int) -> None:
        """``X = NamedTuple("X", [...])``: a class as the class syntax would give, fields as its bindings."""
        qual = self._child_qual(name)
        keywords = {k: source_text(v) for k, v in made.keywords.items()}
        self.defs.append(Definition("class", qual, line, "", ("functional",), (made.base,), (),
                                    conditional=bool(self.conditional), keywords=keywords))
        for field in made.fields:
            default = source_text(field.default) if field.default is not None else ""
            self.attrs.append(Attribute(qual, field.name, line, CLASS, source_text(field.annotation),
                                        value_kind(field.default), default, None, False))

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
        self.attrs.append(Attribute(self.scope, name, line, where, source_text(annotation), value_kind(value), text,
                                    call, bool(self.conditional)))

    def _instance_attr(self, target: ast.expr, annotation: ast.expr | None, value: ast.expr | None,
                       line: int) -> None:
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            self.attrs.append(Attribute(self.init_class, target.attr, line, INSTANCE, source_text(annotation),
                                        value_kind(value), "", None, True))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._instance_attr(elt, None, None, line)

    def _record_held(self, target: ast.expr, annotation: ast.expr | None, value: ast.expr | None,
                     line: int) -> None:
        """What a module-level name is assigned, when the code says (as :meth:`_record_type` reads it)."""
        if isinstance(target, ast.Name):
            typed = _declared_type(annotation, value)
            if typed and "super()" not in typed:
                self.held.append(LocalType("", target.id, typed, line))

    def _record_type(self, target: ast.expr, annotation: ast.expr | None, value: ast.expr | None,
                     line: int) -> None:
        if isinstance(target, ast.Name):
            name = target.id
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            name = f"self.{target.attr}"
        else:
            return
        typed = _declared_type(annotation, value)
        if not typed and isinstance(value, ast.Name) and name.startswith("self."):
            typed = self._param_types.get(value.id, "")  # self.x = x, x an annotated parameter
        if typed and "super()" not in typed:
            self.types.append(LocalType(self.scope, name, typed, line))


def _declared_type(annotation: ast.expr | None, value: ast.expr | None) -> str:
    """The class an assignment says its target holds: its annotation's, else the one it calls
    (``x = Cls(...)``: kept only if ``Cls`` turns out to be a class); "" when it says none."""
    typed = type_name(annotation) if annotation is not None else ""
    if not typed and isinstance(value, ast.Call):
        typed = dotted(value.func) or ""
    return typed


# What each statement gives (the others only hold calls, which come from the index).
_NAMING = (ast.Name, ast.Attribute, ast.IfExp)  # what may give a local a name (scan._named_values)


def _function_aliases(qual: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, found: _Locals) -> list[Alias]:
    """The locals of ``fn`` that every binding in its body gives a name (dotted, or either of two by a
    condition; ``None`` gives nothing), each with the names so given: ``merge_fn = k16`` in one branch
    and ``merge_fn = k32`` in another, then ``merge_fn[grid](...)`` launches either (flash-linear-
    attention's Triton launchers). A parameter, or a name any other statement binds (a call's result,
    a loop's target, an import, a ``global``), holds what the code does not say: none. ``found`` is
    what the index says of the body (:class:`_FunctionBodies`)."""
    other = found.other | {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs,
                                           *(a for a in (fn.args.vararg, fn.args.kwarg) if a))}
    values = found.values
    return [Alias(qual, name, value, line) for name in sorted(values.keys() - other)
            for value, line in sorted(set(values[name]), key=lambda item: (item[1], item[0]))]


def _bind_other(node: ast.AST, other: set[str]) -> None:
    """Into ``other`` the names a statement or clause other than an assignment binds."""
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        other.update(node.names)
    elif isinstance(node, ast.alias):
        other.add(node.asname or node.name.partition(".")[0])
    elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
        other.add(node.name)
    elif isinstance(node, ast.MatchMapping) and node.rest:
        other.add(node.rest)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        other.add(node.name)


@dataclasses.dataclass(slots=True)
class _Locals:
    """The names one function's body gives its locals (not in its nested defs and lambdas):
    ``values`` those each assignment of one local to a name gives it, ``other`` those bound any
    other way."""

    values: dict[str, list[tuple[str, int]]] = dataclasses.field(default_factory=dict)
    other: set[str] = dataclasses.field(default_factory=set)


# Nodes that bind a name other than by assignment
_BINDERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Global, ast.Nonlocal, ast.alias,
            ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping)
_Spans = list[tuple[int, int]]  # runs of pre-order positions, ``(start, end)``, end excluded; ascending


class _FunctionBodies:
    """The :class:`_Locals` of a function's body, read from the module's index: the nodes that
    bind, in the spans of positions a walk of the body would cover (the tests hold that walk).

    Exact because the index draws the walk's borders: a node of a function's body outside its nested
    defs runs in that function's scope with no header (a nested def's decorators, defaults and
    annotations are its header; its body another scope), and the walk skips the same nodes; the
    insides of a lambda, which run in the function's scope but which the walk skips, are the
    lambda's subtree, a run of pre-order positions; so is an assignment that gives a name, which the
    walk skips whole (its target, and the test of ``f = a if c else b``, which may bind names: ``c``
    a comprehension or an assignment expression). The spans are the body's runs less those subtrees.
    The nodes that bind but an assignment's target are names stored (``ctx`` not ``Load``) and the
    :data:`_BINDERS`, read from the module's positions of them once, by bisection per span."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self.runs: dict[ast.AST, _Spans] = {}  # a function's def -> its body's runs
        for start, end, site in index.site_runs():
            if site.header is None and site.scope.kind == "function":
                self.runs.setdefault(site.scope.node, []).append((start, end))
        self._lambdas = self._lambda_subtrees()

    def locals_of(self, fn: ast.AST) -> _Locals:
        found = _Locals()
        index = self.index
        spans = _less(self.runs.get(fn, []), self._lambdas)
        naming: _Spans = []  # the subtrees of the assignments that give a name, which the walk skips
        for position in _within(index.positions(ast.Assign), spans):
            node = index.nodes[position]
            assert isinstance(node, ast.Assign)
            target = node.targets[0]
            if len(node.targets) == 1 and isinstance(target, ast.Name):
                given = _named_values(node.value, target.id)
                if given is not None:
                    found.values.setdefault(target.id, []).extend((value, node.lineno) for value in given)
                    naming.append((position, index.subtree_end(position)))
        if not found.values:
            return found  # no local is given a name: what else binds cannot matter
        spans = _less(spans, naming)
        found.other.update([name.id for name in self._nodes(ast.Name, spans)  # type: ignore[attr-defined]
                            if name.ctx.__class__ is not ast.Load])  # type: ignore[attr-defined]
        for binder in _BINDERS:
            for node in self._nodes(binder, spans):
                _bind_other(node, found.other)
        return found

    def _nodes(self, node_type: type, spans: _Spans) -> list[ast.AST]:
        """The nodes of ``node_type`` in ``spans``."""
        return list(map(self.index.nodes.__getitem__, _within(self.index.positions(node_type), spans)))

    def _lambda_subtrees(self) -> _Spans:
        """Each outermost lambda's subtree."""
        spans: _Spans = []
        for start in self.index.positions(ast.Lambda):
            if spans and start < spans[-1][1]:
                continue  # in an earlier lambda
            spans.append((start, self.index.subtree_end(start)))
        return spans


def _less(spans: _Spans, holes: _Spans) -> _Spans:
    """``spans`` without the positions in ``holes`` (ascending, disjoint; one may cross several spans)."""
    if not holes or not spans:
        return spans
    out: _Spans = []
    i = bisect.bisect_right(holes, (spans[0][0], -1)) - 1  # the last hole that starts before the first span
    i = max(i, 0)
    for start, end in spans:
        while i < len(holes) and holes[i][1] <= start:
            i += 1
        j = i
        while j < len(holes) and holes[j][0] < end:
            if holes[j][0] > start:
                out.append((start, holes[j][0]))
            start = max(start, holes[j][1])
            j += 1
        if start < end:
            out.append((start, end))
    return out


def _within(positions: list[int], spans: _Spans) -> list[int]:
    """The ``positions`` (ascending) in ``spans``, as slices of them."""
    out: list[int] = []
    if positions:
        for start, end in spans:
            out += positions[bisect.bisect_left(positions, start):bisect.bisect_left(positions, end)]
    return out


def _named_values(value: ast.expr, name: str) -> list[str] | None:
    """The dotted names an assignment to ``name`` gives it (``k``, ``mod.k``, ``a if c else b``; ``None``
    none), or None when it gives anything else (or a name read through itself: ``fn = fn.inner``)."""
    if isinstance(value, ast.IfExp):
        body, orelse = _named_values(value.body, name), _named_values(value.orelse, name)
        return body + orelse if body is not None and orelse is not None else None
    if isinstance(value, ast.Constant) and value.value is None:
        return []
    text = dotted(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
    if not text or text.partition(".")[0] in (name, "super()"):
        return None
    return [text]


_HANDLERS: dict[type, Callable[[_Statements, Any], None]] = {
    ast.Assign: _Statements._assign, ast.AnnAssign: _Statements._ann_assign,
    ast.AugAssign: _Statements._aug_assign, ast.Expr: _Statements._expr,
    ast.FunctionDef: _Statements._function, ast.AsyncFunctionDef: _Statements._function,
    ast.ClassDef: _Statements._class, ast.Import: _Statements._import, ast.ImportFrom: _Statements._import_from,
    **{compound: _Statements._compound for compound in _COMPOUND},
    ast.For: _Statements._loop_or_with, ast.AsyncFor: _Statements._loop_or_with,
    ast.With: _Statements._loop_or_with, ast.AsyncWith: _Statements._loop_or_with, ast.Global: _Statements._global,
}


def _type_checking(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` / ``if typing.TYPE_CHECKING:``: a block only type checkers run."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


_RAY_REMOTE = "ray.remote"


def _ray_remote(func: ast.expr) -> str:
    """``X.remote`` for Ray's remote calls written through calls: ``X.options(...).remote(...)``,
    ``ray.remote(X).remote(...)`` and ``ray.remote(num_gpus=1)(X).options(...).remote(...)`` (an
    actor made from class ``X``); "" for any other callee that is no dotted name."""
    if not (isinstance(func, ast.Attribute) and func.attr == "remote"):
        return ""
    made = func.value
    while isinstance(made, ast.Call) and isinstance(made.func, ast.Attribute) and made.func.attr == "options":
        made = made.func.value
    if isinstance(made, ast.Call) and len(made.args) == 1 and not made.keywords and (
            dotted(made.func) == _RAY_REMOTE
            or isinstance(made.func, ast.Call) and dotted(made.func.func) == _RAY_REMOTE and not made.func.args):
        made = made.args[0]
    name = dotted(made)
    return f"{name}.remote" if name else ""


_MAX_CHAINED = 3  # calls in one chain whose results are called on


def _chained(func: ast.expr, depth: int = 0) -> str:
    """``f(...).m`` as ``f().m``, ``a.b(...).c(...).d`` as ``a.b().c().d`` (a method of what a call
    returns, which the graph step reads from the class called or the function's return
    annotation); "" for any other callee that is no dotted name."""
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not parts or not isinstance(func, ast.Call) or depth >= _MAX_CHAINED:
        return ""
    inner = dotted(func.func) or _chained(func.func, depth + 1)
    return f"{inner}{CHAINED}{'.'.join(reversed(parts))}" if inner else ""


def _subscripted(func: ast.expr) -> str:
    """``X[]`` for a call of an item of a dotted name, ``X[grid](...)``: a Triton (or Numba) kernel
    launched over a grid, a generic class made (``Box[int]()``); the graph step decides which; "" for
    any other callee."""
    if isinstance(func, ast.Subscript):
        value = func.value
        # PyTorch's `torch.library.wrap_triton(kernel)[grid](...)` (formerly capture_triton) launches the kernel
        if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords \
                and (dotted(value.func) or "").rpartition(".")[2] in _TRITON_WRAPPERS:
            value = value.args[0]
        inner = dotted(value)
        return f"{inner}{SUBSCRIPTED}" if inner else ""
    return ""


_TRITON_WRAPPERS = frozenset({"wrap_triton", "capture_triton"})


def _calls(index: ModuleIndex) -> list[Call]:
    """Every call but those in annotations, with the scope it runs in, in the order a def runs its
    code: a def's decorators, then its defaults (or a class's bases and keywords), then its body."""
    positions = index.positions(ast.Call)
    calls: list[Call] = []
    kept: list[int] = []  # the position of each call kept
    in_headers: dict[int, tuple[int, int, int]] = {}  # index in calls -> where the def runs it
    for position, node, site in zip(positions, index.of(ast.Call), index.sites(positions)):
        if site.header is not None:
            order = _HEADER_ORDER.get(site.part)
            if order is None:
                continue  # in an annotation
            in_headers[len(calls)] = (site.header.position, order, position)
        func = node.func
        callee = func.id if isinstance(func, ast.Name) else (dotted(func) or _ray_remote(func) or _chained(func)
                                                             or _subscripted(func))
        calls.append(Call(site.scope.qualname, node.lineno, callee))
        kept.append(position)
    if not in_headers:
        return calls
    keys = [in_headers.get(i) or (p,) for i, p in enumerate(kept)]
    return [call for _key, call in sorted(zip(keys, calls), key=lambda item: item[0])]


def scan_python(parsed: ParsedFile) -> PythonFacts:
    if not isinstance(parsed.tree, ast.Module):
        from extractor.python.scan_libcst import scan_libcst  # only for syntax newer than the running ast

        return scan_libcst(parsed.tree)
    index = module_index(parsed.tree)
    statements = _Statements(index)
    statements.block(parsed.tree.body)
    imports = statements.imports + lazy_imports(parsed.tree.body)
    calls = _calls(index)
    return PythonFacts(
        doc=doc_line(parsed.tree.body), defs=tuple(statements.defs), attrs=tuple(statements.attrs),
        imports=tuple(imports), aliases=tuple(statements.aliases), bindings=tuple(statements.bindings),
        calls=tuple(calls), types=tuple(statements.types),
        kernel_arguments=tuple(_kernel_arguments(index, statements.defs, statements.local_aliases)),
        held=tuple(statements.held), local_aliases=tuple(statements.local_aliases),
        all_names=tuple(statements.all_names) if statements.all_names is not None else None,
        all_refs=tuple(statements.all_refs))


def _kernel_arguments(index: ModuleIndex, defs: list[Definition], aliases: list[Alias]) -> list[KernelArgument]:
    """The calls that hand a decorated module-level function of this module (a Triton or Numba
    kernel: ``@triton.jit``) to another by its bare name, or through a local that holds such
    functions (``aliases``: :func:`_function_aliases`), as an argument: a launcher of the system may
    run it (:func:`extractor.python.graph.module_calls`)."""
    kernels = {d.qualname for d in defs if d.kind == "function" and d.decorators and "." not in d.qualname}
    if not kernels:
        return []
    held: dict[tuple[str, str], list[str]] = {}  # a local that holds kernels (`fn = k16 if c else k32`): each
    for alias in aliases:
        if alias.value in kernels:
            held.setdefault((alias.scope, alias.name), []).append(alias.value)
    named = kernels.union(name for _scope, name in held)  # what an argument must be named to hand one
    found: list[KernelArgument] = []
    for position, node in zip(index.positions(ast.Call), index.of(ast.Call)):
        # plain loops, not comprehensions: this runs for every call of most modules, and few take a kernel
        given: list[tuple[int, str, ast.Name]] = []
        for i, arg in enumerate(node.args):
            if isinstance(arg, ast.Name) and arg.id in named:
                given.append((i, "", arg))
        for k in node.keywords:
            if k.arg and isinstance(k.value, ast.Name) and k.value.id in named:
                given.append((-1, k.arg, k.value))
        if not given:
            continue
        scope = index.site(position).scope.qualname
        for where, keyword, arg in given:
            names = [arg.id] if arg.id in kernels else held.get((scope, arg.id), [])
            callee = dotted(node.func) if names else None
            found.extend(KernelArgument(scope, node.lineno, callee, where, keyword, name) for name in names if callee)
    return found


_IMPORTERS = frozenset({"import_module", "__import__"})
_MODULE_PATH = re.compile(r"^\.*[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$|^\.+$")


def lazy_imports(body: list[ast.stmt]) -> list[Import]:
    """The names a module imports on first access (PEP 562): those its ``__getattr__`` imports when
    asked for them by name, and a module-level table whose entries name a module, read by the
    module's ``__getattr__`` or handed to a lazy module
    (``_LazyModule(__name__, ..., table)``, transformers' shape), each entry a ``from module import
    name`` at its line. ``{"KimiConfig": "pkg.configs.kimi"}`` (a name: the module that defines it)
    and ``{"configuration_kimi": ["KimiConfig", ...]}`` (a submodule: the names it defines) are read;
    a table of any other shape is not, and the module then binds those names nowhere, as before."""
    tables: dict[str, ast.Dict] = {}
    users: set[str] = set()
    out: list[Import] = []
    prefix = ""  # what the import writes before a table's module: `import_module(f".{module}", __name__)`
    for stmt in body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(stmt.value, ast.Dict):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            tables.update((t.id, stmt.value) for t in targets if isinstance(t, ast.Name))
        elif isinstance(stmt, ast.FunctionDef) and stmt.name == "__getattr__":
            inside = list(ast.walk(stmt))
            # `if name == "store": from .triton_store import store`: an import of a name the function tests for
            asked = {n.value for n in inside if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            out.extend(Import("", n.lineno, n.module or "", n.level, a.name, a.asname or "")
                       for n in inside if isinstance(n, ast.ImportFrom)
                       for a in n.names if (a.asname or a.name) in asked)
            importing = [n for n in inside if isinstance(n, ast.Call) and n.args
                         and (dotted(n.func) or "").rsplit(".", 1)[-1] in _IMPORTERS]
            if len(importing) == 1:  # a __getattr__ that imports (not one that renames or warns)
                users.update(n.id for n in inside if isinstance(n, ast.Name))
                prefix = _written_before(importing[0].args[0])
        elif isinstance(stmt, (ast.Assign, ast.Expr)) and isinstance(stmt.value, ast.Call) \
                and (dotted(stmt.value.func) or "").rsplit(".", 1)[-1] == "_LazyModule":
            users.update(n.id for a in stmt.value.args for n in ast.walk(a) if isinstance(n, ast.Name))
    for name in sorted(users & tables.keys()):
        for key, value in zip(tables[name].keys, tables[name].values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                continue
            if isinstance(value, ast.Constant) and isinstance(value.value, str) \
                    and _MODULE_PATH.match(prefix + value.value):
                out.append(_from_import(prefix + value.value, key.value, key.lineno))
            elif isinstance(value, (ast.List, ast.Tuple)) and _MODULE_PATH.match(key.value):
                out.extend(_from_import("." + key.value, item.value, item.lineno) for item in value.elts
                           if isinstance(item, ast.Constant) and isinstance(item.value, str)
                           and item.value.isidentifier())
    return out


def _written_before(argument: ast.expr) -> str:
    """The text an import's module argument puts before the value it reads: ``"."`` of
    ``f".{module}"`` or ``"." + module``; "" when it reads the value as it is."""
    first: ast.expr | None = None
    if isinstance(argument, ast.JoinedStr) and argument.values:
        first = argument.values[0]
    elif isinstance(argument, ast.BinOp) and isinstance(argument.op, ast.Add):
        first = argument.left
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""


def _from_import(module: str, name: str, line: int) -> Import:
    level = len(module) - len(module.lstrip("."))
    return Import("", line, module[level:], level, name, "")
