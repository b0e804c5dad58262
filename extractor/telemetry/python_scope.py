"""Compiling argument expressions into symbolic values (:mod:`.pysym`) within what one file shows:
the enclosing function's assignments and parameters (and its enclosing functions', for closures),
the class's ``self.x`` assignments, and the module's assignments.

Parameters stay open references: ``["param", n]`` for the enclosing function's own, ``["attr", n]``
for a parameter of the class's ``__init__`` that reaches another method through ``self.x``. A
parameter of any other method read through ``self`` is unknown: no call site can bind it.
Assignment tables are built on first use; most recorded calls pass literals and never look.
"""

from __future__ import annotations

import ast
import builtins
import sys
from collections.abc import Callable, Iterator

from extractor.python.expr import name_chain, unparse
from extractor.telemetry import python_symbols as pysym
from extractor.telemetry.python_symbols import Sym

MAX_DEPTH = 8
# A value of more nodes than this (its lists and dicts expanded, as the facts' encoding and any reader expand
# them) is unknown: ncnn's tests chain `x = F.interpolate(x, ...)` 25 times in one body, so `x` reads as any of
# 25 calls whose first argument is `x` again, down to MAX_DEPTH: values of billions of nodes once expanded
# (4.8 GB and 31 CPU s for one 7 KB file). vLLM's largest is 15,673 nodes (molmo.py), 99.9% are under 1,024.
MAX_VALUE_NODES = 4096
_INFINITY_TEXTS = frozenset({"float('inf')", 'float("inf")', "math.inf", "INF", "prometheus_client.utils.INF"})
_PASS_THROUGH_CALLS = frozenset({"list", "tuple", "str"})
_STDLIB = frozenset(sys.stdlib_module_names)
_BUILTINS = frozenset(dir(builtins))
# methods that change a list, dict or set in place: after one, the name no longer holds what was assigned
_IN_PLACE = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse",
                       "update", "setdefault", "popitem", "add", "discard", "difference_update",
                       "intersection_update", "symmetric_difference_update"})


class InPlace(ast.expr):
    """A change in place of what a name holds (``buckets.append(v)``, ``labels += extra``,
    ``table[k] = v``), kept in an assignment table beside the assignments: its value is unknown.

    The tables are flow-insensitive (a name is any of the values assigned to it), so without it a
    list built by appending read as the empty list it starts as: LightLLM's duration buckets
    (``buckets = []`` then ``buckets.append(value)`` in a loop) were a histogram with no buckets,
    marked resolved."""

    _fields = ()

    def __init__(self, statement: ast.stmt) -> None:
        super().__init__()
        self.statement = statement

    @property
    def text(self) -> str:
        """The statement's text, made when a value reads it (most tables are never read)."""
        return _unparse(self.statement)


def assignments(owner: ast.AST, *, self_attrs: bool) -> dict[str, list[ast.expr]]:
    """name (or ``self.x``) -> every expression assigned to it, in source order.

    Walks nested blocks (if/for/try/with) but not nested functions or classes, whose names are
    not visible here.
    """
    found: dict[str, list[ast.expr]] = {}

    def add(target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            found.setdefault(target.id, []).append(value)
        elif (self_attrs and isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
              and target.value.id in ("self", "cls")):
            found.setdefault("self." + target.attr, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
            if len(target.elts) == len(value.elts):
                for t, v in zip(target.elts, value.elts):
                    add(t, v)

    for statement in statements(owner):
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                add(target, statement.value)
                if isinstance(target, ast.Subscript):
                    add(target.value, InPlace(statement))
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            add(statement.target, statement.value)
        elif isinstance(statement, ast.AugAssign):
            add(statement.target, InPlace(statement))
        changed = changed_in_place(statement)
        if changed is not None:
            add(changed, InPlace(statement))
    return found


def changed_in_place(statement: ast.stmt) -> ast.expr | None:
    """What ``x.append(v)`` (or another method of _IN_PLACE), as a statement or an assignment's
    value, changes: ``x``."""
    value = statement.value if isinstance(statement, (ast.Expr, ast.Assign)) else None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _IN_PLACE:
        return value.func.value
    return None


_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
# The statements that hold blocks, and which of _BLOCK_FIELDS they have (in that order).
_BLOCKS = {cls: tuple(f for f in _BLOCK_FIELDS if f in cls._fields)
           for cls in (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match,
                       *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))}
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def statements(owner: ast.AST) -> Iterator[ast.stmt]:
    """Every statement of ``owner``'s body and nested blocks (if/for/while/with/try/match), not of
    nested functions or classes. Assignments are statements: walking only statements, not every
    expression node, made the assignment tables five times cheaper. (A block's statements come
    after those of the blocks that follow it: handlers, finally, else, then the body.)"""
    stack = list(reversed(getattr(owner, "body", [])))
    while stack:
        statement = stack.pop()
        cls = statement.__class__
        if cls in _DEFS:
            continue
        yield statement
        fields = _BLOCKS.get(cls)
        if fields is None:
            continue
        for field in fields:
            block = getattr(statement, field)
            if block:
                for child in reversed(block):
                    if isinstance(child, (ast.ExceptHandler, ast.match_case)):
                        stack.extend(reversed(child.body))
                    else:
                        stack.append(child)


def parameters(function: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> list[list[str]]:
    """``[[name, kind], ...]`` with kind pos/kwonly/var/kw; a method's ``self``/``cls`` left out."""
    args = function.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    static = any(name_chain(d) == "staticmethod" for d in function.decorator_list)
    if in_class and not static and positional:
        positional = positional[1:]
    out = [[name, "pos"] for name in positional]
    if args.vararg:
        out.append([args.vararg.arg, "var"])
    out.extend([a.arg, "kwonly"] for a in args.kwonlyargs)
    if args.kwarg:
        out.append([args.kwarg.arg, "kw"])
    return out


class ClassScope:
    """A class's methods and its body assignments, shared by the frames of its methods."""

    def __init__(self, node: ast.ClassDef, module: "ModuleScope"):
        self.node = node
        self.module = module
        self.methods = {item.name: item for item in node.body
                        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self._body: dict[str, list[ast.expr]] | None = None
        self._method_frames: dict[str, Frame] = {}
        self._self_sets: dict[str, list[tuple[ast.expr, str]]] | None = None
        self._forwarded: frozenset[str] | None = None

    def body(self) -> dict[str, list[ast.expr]]:
        if self._body is None:
            self._body = assignments(self.node, self_attrs=False)
        return self._body

    def self_sets(self) -> dict[str, list[tuple[ast.expr, str]]]:
        """``x`` -> (value, method name) for every ``self.x = value`` in the class's methods."""
        if self._self_sets is None:
            found: dict[str, list[tuple[ast.expr, str]]] = {}
            for name, method in self.methods.items():
                for node in statements(method):
                    changed = changed_in_place(node) if not isinstance(node, ast.AugAssign) else node.target
                    if (isinstance(changed, ast.Attribute) and isinstance(changed.value, ast.Name)
                            and changed.value.id == "self"):
                        found.setdefault(changed.attr, []).append((InPlace(node), name))
                    if isinstance(node, (ast.Assign, ast.AnnAssign)):
                        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                        for target in targets:
                            if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                                    and target.value.id == "self" and node.value is not None):
                                found.setdefault(target.attr, []).append((node.value, name))
            self._self_sets = found
        return self._self_sets

    def forwarded_attrs(self) -> frozenset[str]:
        """``x`` for every ``self.x = <expression reading a parameter>`` in ``__init__`` (only
        ``__init__`` is walked: this is asked for many classes whose other methods never matter)."""
        if self._forwarded is None:
            init = self.methods.get("__init__")
            found: set[str] = set()
            if init is not None:
                params = self.init_params()
                for node in statements(init):
                    if isinstance(node, ast.Assign) and _reads_any(node.value, params):
                        found.update(t.attr for t in node.targets if isinstance(t, ast.Attribute)
                                     and isinstance(t.value, ast.Name) and t.value.id == "self")
            self._forwarded = frozenset(found)
        return self._forwarded

    def method_frame(self, name: str) -> Frame:
        """The frame of method ``name`` seen from another method (``__init__``'s parameters are
        ``attr`` references, any other method's unknown), one per method, so what it compiled is
        kept for the next read through ``self``."""
        frame = self._method_frames.get(name)
        if frame is None:
            frame = self._method_frames[name] = Frame(self.module, (self.methods[name],), self,
                                                      "attr" if name == "__init__" else None)
        return frame

    def init_params(self) -> set[str]:
        init = self.methods.get("__init__")
        return {name for name, _ in parameters(init, True)} if init is not None else set()


def _reads_any(value: ast.expr, names: set[str]) -> bool:
    """Whether ``value`` reads one of ``names`` (a plain name, the most frequent value, is told
    without a walk)."""
    if value.__class__ is ast.Name:
        return value.id in names
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(value))


class ModuleScope:
    def __init__(self, tree: ast.Module):
        self.tree = tree
        self._table: dict[str, list[ast.expr]] | None = None
        self._strings: frozenset[str] | None = None
        self._frame: Frame | None = None
        self._outside: tuple[frozenset[str], frozenset[str], frozenset[str]] | None = None
        self._stars = False  # a `from m import *` of the analysed code or a library (outside())

    def frame(self) -> Frame:
        """The module's own frame (no function, no class), one per module, so what it compiled
        is kept for the next read of a module-level name."""
        if self._frame is None:
            self._frame = Frame(self)
        return self._frame

    def string_names(self) -> frozenset[str]:
        """Names a top-level statement assigns a string constant (``PREFIX = "app"``): a cheap
        look, without the full assignment table."""
        if self._strings is None:
            self._strings = frozenset(
                t.id for node in self.tree.body if isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                for t in node.targets if isinstance(t, ast.Name))
        return self._strings

    def table(self) -> dict[str, list[ast.expr]]:
        if self._table is None:
            self._table = assignments(self.tree, self_attrs=False)
        return self._table

    def outside(self) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        """What a name read here may stand for that the extract step reads in another module or
        definition: the names the module's top level imports (a standard-library module's left
        out: nothing of the analysed code), its classes, and its functions."""
        if self._outside is None:
            imported: set[str] = set()
            classes: set[str] = set()
            functions: set[str] = set()
            for node in statements(self.tree):
                if isinstance(node, ast.Import):
                    imported.update((a.asname or a.name).split(".")[0] for a in node.names
                                    if a.name.split(".")[0] not in _STDLIB)
                elif isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0]
                                                           not in _STDLIB):
                    imported.update(a.asname or a.name for a in node.names if a.name != "*")
                    self._stars = self._stars or any(a.name == "*" for a in node.names)
            for node in self.tree.body:
                if isinstance(node, ast.ClassDef):
                    classes.add(node.name)
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    functions.add(node.name)
            self._outside = frozenset(imported), frozenset(classes), frozenset(functions)
        return self._outside

    def imports(self, name: str) -> bool:
        """Whether ``name`` may be imported: by name, or (not a builtin, not private) through a star
        import, which the extract step follows into the module it names."""
        imported = self.outside()[0]
        return name in imported or (self._stars and not name.startswith("_") and name not in _BUILTINS)


def _defined_outside(head: str, frame: "Frame", callable_: bool) -> bool:
    """Whether ``head`` (a dotted name's first part) names what the module imports, or one of its
    classes (or, for a callee, functions), and nothing of the frame or the module assigns it."""
    _, classes, functions = frame.module.outside()
    if not (frame.module.imports(head) or head in classes or (callable_ and head in functions)):
        return False
    if head in frame.params or (frame.functions and head in frame.table()):
        return False
    return head not in frame.module.table()


class Frame:
    """Where an expression is read: a function (or none, at module level) of a class (or none).

    ``param_tag`` says what the function's parameters become: ``"param"`` for the function whose
    call is recorded, ``"attr"`` for ``__init__`` seen from another method, None (unknown) for
    any other method seen through ``self``.
    """

    def __init__(self, module: ModuleScope, functions: tuple[ast.FunctionDef | ast.AsyncFunctionDef, ...] = (),
                 cls: ClassScope | None = None, param_tag: str | None = "param"):
        self.module = module
        self.functions = functions
        self.cls = cls
        self.param_tag = param_tag
        self._table: dict[str, list[ast.expr]] | None = None
        # (id of an expression, depth) -> its value read here: see compile_expr
        self.compiled: dict[tuple[int, int], Sym] = {}
        self.nodes: dict[int, tuple[object, int]] = {}  # see _nodes
        innermost = functions[-1] if functions else None
        in_class = cls is not None and innermost is not None and innermost in cls.methods.values()
        self.params = {n for n, _ in parameters(innermost, in_class)} if innermost is not None else set()

    def table(self) -> dict[str, list[ast.expr]]:
        if self._table is None:
            merged: dict[str, list[ast.expr]] = {}
            for function in self.functions:  # closures see their enclosing functions' names
                for k, v in assignments(function, self_attrs=True).items():
                    merged.setdefault(k, []).extend(v)
            self._table = merged
        return self._table

    def method_frame(self, method_name: str) -> "Frame":
        assert self.cls is not None
        method = self.cls.methods[method_name]
        current = self.functions[-1] if self.functions else None
        if method is current:
            return self
        return self.cls.method_frame(method_name)

    def self_attr_from_init_param(self, attr: str) -> bool:
        """Whether ``self.attr`` is set in ``__init__`` from one of its parameters (a forwarding)."""
        return self.cls is not None and attr in self.cls.forwarded_attrs()


def compile_expr(expr: ast.expr, frame: Frame, depth: int = 0) -> Sym:
    """The symbolic value of ``expr`` read in ``frame``.

    A name is read through every value assigned to it in the frame, each of those through its
    own names, down to MAX_DEPTH: a function that assigns a few names many times each from one
    another (litellm's ``get_llm_provider``: 30 assignments of a handful of names in one body)
    makes that tree exponential, 18.7 million reads for 125 arguments, 19 CPU s for one file.
    Each expression's value at each depth is therefore computed once per frame (the frame keeps
    it, keyed by the node's id, which the tree keeps alive): the same values, computed in time
    linear in the frame's assignments times MAX_DEPTH. Values are never changed once built
    (:mod:`.python_symbols` builds new lists), so sharing one between readers is safe.

    Shared, a value can still stand for a tree too large to expand (MAX_VALUE_NODES): such a value
    is ``["unk", text]``, as one past MAX_DEPTH is."""
    key = (id(expr), depth)
    value = frame.compiled.get(key)
    if value is None:
        value = _compile(expr, frame, depth)
        if _nodes(value, frame.nodes) > MAX_VALUE_NODES:
            value = pysym.unk(_text(expr))
        frame.compiled[key] = value
    return value


def _nodes(value: object, known: dict[int, tuple[object, int]]) -> int:
    """How many lists and dicts ``value`` holds, itself included, each counted as often as it is
    reached; ``known`` keeps each one's count (with the object, so that its id stays its own)."""
    if not isinstance(value, (list, dict)):
        return 0
    seen = known.get(id(value))
    if seen is not None and seen[0] is value:
        return seen[1]
    count = 1 + sum(_nodes(item, known) for item in (value.values() if isinstance(value, dict) else value))
    known[id(value)] = (value, count)
    return count


def _compile(expr: ast.expr, frame: Frame, depth: int) -> Sym:
    if expr.__class__ is InPlace:
        return pysym.unk(expr.text)
    if depth > MAX_DEPTH:
        return pysym.unk(_text(expr))
    if expr.__class__ is ast.Name:  # the most frequent argument, tested first
        return _name(expr, frame, depth)
    if isinstance(expr, ast.Constant):
        value = expr.value
        if isinstance(value, (str, int, float, bool)) or value is None:
            return pysym.lit(value)
        return pysym.unk(_text(expr))
    if isinstance(expr, ast.JoinedStr):
        parts: list[Sym] = []
        for part in expr.values:
            if isinstance(part, ast.Constant):
                parts.append(pysym.lit(str(part.value)))
            elif isinstance(part, ast.FormattedValue):
                parts.append(compile_expr(part.value, frame, depth + 1))
        return ["fmt", parts]
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return ["add", compile_expr(expr.left, frame, depth + 1), compile_expr(expr.right, frame, depth + 1)]
    if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
        return ["seq", [["star", compile_expr(e.value, frame, depth + 1)] if isinstance(e, ast.Starred)
                        else compile_expr(e, frame, depth + 1) for e in expr.elts]]
    if isinstance(expr, ast.IfExp):
        return pysym.alt([compile_expr(expr.body, frame, depth + 1), compile_expr(expr.orelse, frame, depth + 1)])
    if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.Or):
        return pysym.alt([compile_expr(v, frame, depth + 1) for v in expr.values])
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) and isinstance(expr.operand, ast.Constant) \
            and isinstance(expr.operand.value, (int, float)) and not isinstance(expr.operand.value, bool):
        return pysym.lit(-expr.operand.value)
    if isinstance(expr, ast.Call):
        if _is_float_inf(expr):
            return pysym.lit("+Inf")
        callee = name_chain(expr.func)
        if callee in _PASS_THROUGH_CALLS and len(expr.args) == 1 and not expr.keywords:
            return compile_expr(expr.args[0], frame, depth + 1)
        if callee and _defined_outside(callee.partition(".")[0], frame, True) \
                and not any(isinstance(a, ast.Starred) for a in expr.args) and all(k.arg for k in expr.keywords):
            return ["call", _text(expr), callee, [compile_expr(a, frame, depth + 1) for a in expr.args],
                    {k.arg: compile_expr(k.value, frame, depth + 1) for k in expr.keywords if k.arg}]
        return pysym.unk(_text(expr))
    if isinstance(expr, ast.Name):
        return _name(expr, frame, depth)
    if isinstance(expr, ast.Attribute):
        text = name_chain(expr)
        if text in _INFINITY_TEXTS:
            return pysym.lit("+Inf")
        if text and text.startswith(("self.", "cls.")) and text.count(".") == 1:
            return _self_attr(expr, text.split(".", 1)[1], frame, depth)
        if text and not _defined_outside(text.partition(".")[0], frame, False):
            text = _through_alias(text, frame)
        if text and _defined_outside(text.partition(".")[0], frame, False):
            return ["ext", text]
    return pysym.unk(_text(expr))


def _through_alias(text: str, frame: Frame) -> str:
    """``ECM.HITS`` where the frame (or the module) binds ``ECM = EmbeddingCacheMetrics`` once and
    nowhere else: the attribute of what the alias names, when that is a class of the module or an
    imported name; ``text`` itself otherwise."""
    head, _dot, rest = text.partition(".")
    if not rest or head in frame.params:
        return text
    values = frame.table().get(head, []) if frame.functions else []
    if not values and not (frame.functions and head in frame.table()):
        values = frame.module.table().get(head, [])
    if len(values) != 1 or not isinstance(values[0], (ast.Name, ast.Attribute)):
        return text
    target = name_chain(values[0])
    if not target or target.partition(".")[0] == head or not _defined_outside(target.partition(".")[0], frame, False):
        return text
    return f"{target}.{rest}"


def _values(exprs: list[ast.expr], skip: ast.expr, read: Callable[[ast.expr], Sym]) -> list[Sym]:
    """The values assigned, each read; only the change when the name is also changed in place (the
    readers take the last known alternative, which would be one of the values assigned)."""
    changed = next((value for value in exprs if value.__class__ is InPlace), None)
    if changed is not None:
        return [read(changed)]
    return [read(value) for value in exprs if value is not skip]


def _name(expr: ast.Name, frame: Frame, depth: int) -> Sym:
    name = expr.id
    options: list[Sym] = []
    if frame.functions:
        options = _values(frame.table().get(name, []), expr, lambda v: compile_expr(v, frame, depth + 1))
        if name in frame.params and not (options and options[0][0] == "unk"):
            options.append([frame.param_tag, name] if frame.param_tag else pysym.unk(name))
    if not options:
        module_frame = frame.module.frame() if frame.functions or frame.cls else frame
        options = _values(frame.module.table().get(name, []), expr,
                          lambda v: compile_expr(v, module_frame, depth + 1))
    if not options and frame.module.imports(name):
        return ["ext", name]
    return pysym.alt(options) if options else pysym.unk(name)


def _self_attr(expr: ast.Attribute, attr: str, frame: Frame, depth: int) -> Sym:
    key = "self." + attr
    if frame.functions and key in frame.table():
        return pysym.alt(_values(frame.table()[key], expr, lambda v: compile_expr(v, frame, depth + 1)))
    if frame.cls is None:
        return pysym.unk(_text(expr))
    sets = frame.cls.self_sets().get(attr, ())
    changed = [(value, method) for value, method in sets if value.__class__ is InPlace]
    options = [compile_expr(value, frame.method_frame(method), depth + 1) for value, method in changed[:1] or sets]
    if not options and attr in frame.cls.body():
        module_frame = frame.module.frame()
        options = _values(frame.cls.body()[attr], expr, lambda v: compile_expr(v, module_frame, depth + 1))
    return pysym.alt(options) if options else pysym.unk(_text(expr))


def _is_float_inf(call: ast.Call) -> bool:
    """``float('inf')`` (or ``"inf"``): the one call among _INFINITY_TEXTS, told without unparsing
    every call argument the scanner reads."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "float" and len(call.args) == 1 and not call.keywords):
        return False
    arg = call.args[0]
    return isinstance(arg, ast.Constant) and arg.value == "inf" and isinstance(arg.value, str) and arg.kind is None


def _text(expr: ast.expr) -> str:
    """A short text for an unknown value, for reasons in the evidence. ``ast.unparse`` only for
    small expressions: it was a third of the scanner's time when used on every unknown."""
    name = name_chain(expr)
    if name:
        return name
    if isinstance(expr, ast.Call):
        return f"{name_chain(expr.func) or type(expr.func).__name__}(...)" if len(expr.args) + len(expr.keywords) > 2 \
            else _unparse(expr)
    if isinstance(expr, ast.Subscript):
        return f"{name_chain(expr.value) or '...'}[...]"
    if isinstance(expr, ast.Constant):
        return repr(expr.value)[:pysym.MAX_UNKNOWN_TEXT]
    return _unparse(expr) if isinstance(expr, (ast.UnaryOp, ast.BinOp)) else type(expr).__name__


def _unparse(expr: ast.AST) -> str:
    try:
        return unparse(expr)[:pysym.MAX_UNKNOWN_TEXT]
    except (ValueError, AttributeError):  # a libcst-converted tree can miss a field unparse wants
        return type(expr).__name__


def compile_shallow(expr: ast.expr, frame: Frame, depth: int = 0) -> Sym:
    """The value of an argument of a call recorded only because it forwards a parameter: the
    parameters, constants and their concatenations are read, anything else is unknown without a
    look at the assignment tables (most such calls make no metric, and there are many)."""
    if isinstance(expr, ast.Constant):
        return compile_expr(expr, frame)
    if isinstance(expr, ast.Name):
        if expr.id in frame.params:
            return [frame.param_tag, expr.id] if frame.param_tag else pysym.unk(expr.id)
        return pysym.unk(expr.id)
    if depth < 3 and isinstance(expr, ast.JoinedStr):
        return ["fmt", [pysym.lit(str(p.value)) if isinstance(p, ast.Constant) else
                        compile_shallow(p.value, frame, depth + 1) for p in expr.values
                        if isinstance(p, (ast.Constant, ast.FormattedValue))]]
    if depth < 3 and isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return ["add", compile_shallow(expr.left, frame, depth + 1), compile_shallow(expr.right, frame, depth + 1)]
    if depth < 3 and isinstance(expr, (ast.List, ast.Tuple)):
        return ["seq", [["star", compile_shallow(e.value, frame, depth + 1)] if isinstance(e, ast.Starred)
                        else compile_shallow(e, frame, depth + 1) for e in expr.elts]]
    text = name_chain(expr)
    if text and text.startswith("self.") and text.count(".") == 1 and frame.self_attr_from_init_param(text[5:]):
        return compile_expr(expr, frame)
    return ["unk", ""]
