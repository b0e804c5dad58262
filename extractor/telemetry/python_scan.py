"""Per-file scanner for prometheus_client metric constructions in Python (stdlib ``ast``).

The scanner only collects: imports, classes (bases and class attributes that hold a class), and
every call that could construct a metric, with its arguments already evaluated as far as the file
allows. Whether ``self._gauge_cls(...)`` or ``MyCounter(...)`` really is a prometheus_client metric
needs the other files (class hierarchy, imports), so :mod:`extractor.telemetry.metrics` decides.
Facts are path-free (cached by content hash): relative imports keep their level.
"""

from __future__ import annotations

import ast
from typing import Any

from extractor.model import ParsedFile
from extractor.pyvisit import FastNodeVisitor

METRIC_CLASS_NAMES = frozenset({"Counter", "Gauge", "Histogram", "Summary", "Info", "Enum"})

# prometheus_client's positional order: (name, documentation, labelnames, namespace, subsystem, unit)
_POSITIONAL = ("name", "documentation", "labelnames", "namespace", "subsystem", "unit")


class Unresolved(Exception):
    """An expression whose value the file alone does not give."""


def scan_python_metrics(parsed: ParsedFile) -> dict[str, Any] | None:
    tree = parsed.tree
    if not isinstance(tree, ast.Module):  # handed another tree (libcst): read the bytes ourselves
        try:
            tree = ast.parse(parsed.data)
        except (SyntaxError, ValueError):
            return None
    collector = _Collector(tree)
    collector.visit(tree)
    if not (collector.constructions or collector.classes or collector.imports):
        return None  # imports alone still matter: a package __init__ re-exporting a metric class
    return {
        "imports": collector.imports,
        "classes": collector.classes,
        "constructions": collector.constructions,
    }


class _Scope:
    """Assignments visible to an expression: the enclosing function's, its class's, the module's.

    Each table is computed on first use: most candidate calls pass literals and never look.
    """

    def __init__(self, function, cls, module):
        self._sources = {"function": function, "cls": cls, "module": module}
        self._tables: dict[str, dict[str, list[ast.expr]]] = {}

    def _table(self, key: str) -> dict[str, list[ast.expr]]:
        if key not in self._tables:
            self._tables[key] = self._sources[key]()
        return self._tables[key]

    @property
    def function(self) -> dict[str, list[ast.expr]]:
        return self._table("function")

    @property
    def cls(self) -> dict[str, list[ast.expr]]:
        return self._table("cls")

    @property
    def module(self) -> dict[str, list[ast.expr]]:
        return self._table("module")


def _assignments(body_owner: ast.AST, *, self_attrs: bool) -> dict[str, list[ast.expr]]:
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

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Assign):
                for target in child.targets:
                    add(target, child.value)
            elif isinstance(child, ast.AnnAssign) and child.value is not None:
                add(child.target, child.value)
            walk(child)

    walk(body_owner)
    return found


def _class_self_assignments(cls: ast.ClassDef) -> dict[str, list[ast.expr]]:
    """Class-body names plus ``self.x = ...`` from every method, keyed ``x`` and ``self.x``."""
    found = _assignments(cls, self_attrs=False)
    merged: dict[str, list[ast.expr]] = {f"self.{k}": list(v) for k, v in found.items()}
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(item):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                                and target.value.id == "self"):
                            merged.setdefault("self." + target.attr, []).append(node.value)
    return merged


def dotted(expr: ast.expr) -> str | None:
    """``a.b.c`` for Name/Attribute chains, else None."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
        return ".".join(reversed(parts))
    return None


class _Lazy:
    def __init__(self, compute):
        self._compute = compute
        self._value = None

    def get(self) -> dict[str, list[ast.expr]]:
        if self._value is None:
            self._value = self._compute()
        return self._value


class _Collector(FastNodeVisitor):
    def __init__(self, tree: ast.Module):
        self.imports: dict[str, dict[str, Any]] = {}
        self.classes: list[dict[str, Any]] = []
        self.constructions: list[dict[str, Any]] = []
        self._tree = tree
        self._module_assigns: dict[str, list[ast.expr]] | None = None
        # Scopes are computed only when a candidate call needs them: most functions have none,
        # and walking every body for assignments would double the scanner's cost.
        self._class_stack: list[tuple[str, _Lazy]] = []
        self._function_stack: list[_Lazy] = []

    # -- imports (module level and nested alike: a late import still binds the name) ----------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.imports[alias.asname] = {"module": alias.name, "level": 0, "name": ""}
            else:
                head = alias.name.split(".")[0]
                self.imports[head] = {"module": head, "level": 0, "name": ""}

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                continue
            self.imports[alias.asname or alias.name] = {
                "module": node.module or "", "level": node.level, "name": alias.name}

    # -- classes ------------------------------------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        qual = ".".join([c for c, _ in self._class_stack] + [node.name])
        attrs: dict[str, str] = {}
        for item in node.body:
            targets: list[ast.expr] = []
            value: ast.expr | None = None
            if isinstance(item, ast.Assign):
                targets, value = item.targets, item.value
            elif isinstance(item, ast.AnnAssign) and item.value is not None:
                targets, value = [item.target], item.value
            for target in targets:
                if isinstance(target, ast.Name) and value is not None:
                    text = dotted(value)
                    if text:
                        attrs[target.id] = text
        self.classes.append({
            "name": qual,
            "line": node.lineno,
            "bases": [b for b in (dotted(base) for base in node.bases) if b],
            "attrs": attrs,
        })
        self._class_stack.append((qual, _Lazy(lambda: _class_self_assignments(node))))
        saved, self._function_stack = self._function_stack, []
        self.generic_visit(node)
        self._function_stack = saved
        self._class_stack.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._function_stack.append(_Lazy(lambda: _assignments(node, self_attrs=True)))
        self.generic_visit(node)
        self._function_stack.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    # -- calls --------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        callee = dotted(node.func)
        if not callee or not _could_construct_metric(callee, node):
            return
        functions = list(self._function_stack)
        cls_name, cls_lazy = self._class_stack[-1] if self._class_stack else ("", None)

        def function_table() -> dict[str, list[ast.expr]]:
            merged: dict[str, list[ast.expr]] = {}
            for lazy in functions:  # closures see their enclosing functions' names
                for k, v in lazy.get().items():
                    merged.setdefault(k, []).extend(v)
            return merged

        def module_table() -> dict[str, list[ast.expr]]:
            if self._module_assigns is None:
                self._module_assigns = _assignments(self._tree, self_attrs=False)
            return self._module_assigns

        scope = _Scope(function_table, cls_lazy.get if cls_lazy else dict, module_table)
        self.constructions.append(_read_construction(node, callee, cls_name, scope))


def _could_construct_metric(callee: str, node: ast.Call) -> bool:
    """Cheap shape test; the extract step decides by resolving the callee.

    prometheus_client requires both a name and a documentation string, so a call with fewer
    than two of them cannot construct a metric.
    """
    keywords = {k.arg for k in node.keywords}
    if "documentation" not in keywords and len(node.args) < 2:
        return False
    if len(node.args) == 0 and "name" not in keywords:
        return False
    head, _, last = callee.rpartition(".")
    if head in ("self", "cls") or head.startswith(("self.", "cls.")):
        return True
    return last[:1].isupper() and not last.endswith(("Error", "Exception", "Warning"))


def _read_construction(node: ast.Call, callee: str, cls_name: str, scope: _Scope) -> dict[str, Any]:
    args: dict[str, ast.expr] = {}
    for i, arg in enumerate(node.args):
        if isinstance(arg, ast.Starred):
            break
        if i < len(_POSITIONAL):
            args[_POSITIONAL[i]] = arg
    for kw in node.keywords:
        if kw.arg:
            args[kw.arg] = kw.value
    fact: dict[str, Any] = {"callee": callee, "class": cls_name, "line": node.lineno}
    if "name" in args:
        fact["name"] = _read_strings(args["name"], scope)
    if "documentation" in args:
        fact["help"] = _read_strings(args["documentation"], scope)
    for key in ("namespace", "subsystem", "unit"):
        if key in args:
            fact[key] = _read_strings(args[key], scope)
    if "labelnames" in args:
        fact["labels"] = _read_labels(args["labelnames"], scope)
    if "buckets" in args:
        fact["buckets"] = _read_numbers(args["buckets"], scope)
    if "states" in args:
        fact["states"] = _read_labels(args["states"], scope)
    return fact


# -- evaluation of argument expressions ------------------------------------------------------

def _lookup(expr: ast.expr, scope: _Scope) -> list[ast.expr]:
    text = dotted(expr)
    if text is None:
        raise Unresolved(ast.unparse(expr))
    if isinstance(expr, ast.Name):
        for table in (scope.function, scope.module):
            if text in table:
                return table[text]
    elif text.startswith(("self.", "cls.")) and text.count(".") == 1:
        key = "self." + text.split(".", 1)[1]
        for table in (scope.function, scope.cls):
            if key in table:
                return table[key]
    raise Unresolved(text)


def _string_values(expr: ast.expr, scope: _Scope, depth: int = 0) -> list[tuple[str, bool]]:
    """Every string the expression can be, each with a flag saying whether it is a pattern."""
    if depth > 8:
        raise Unresolved(ast.unparse(expr))
    if isinstance(expr, ast.Constant):
        if isinstance(expr.value, str):
            return [(expr.value, False)]
        if expr.value is None:
            return []  # ``name = None`` before the branches that assign the real names
        raise Unresolved(ast.unparse(expr))
    if isinstance(expr, ast.JoinedStr):
        out = ""
        for part in expr.values:
            if isinstance(part, ast.Constant):
                out += str(part.value)
            elif isinstance(part, ast.FormattedValue):
                try:
                    values = _string_values(part.value, scope, depth + 1)
                except Unresolved:
                    values = []
                if len(values) == 1 and not values[0][1]:
                    out += values[0][0]
                else:
                    out += "{" + ast.unparse(part.value) + "}"
        return [(out, "{" in out and out != _constant_only(expr))]
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        left = _string_values_or_pattern(expr.left, scope, depth)
        right = _string_values_or_pattern(expr.right, scope, depth)
        return [(a + b, fa or fb) for a, fa in left for b, fb in right]
    if isinstance(expr, (ast.Name, ast.Attribute)):
        results: list[tuple[str, bool]] = []
        for value in _lookup(expr, scope):
            if value is expr:
                continue
            results.extend(_string_values(value, scope, depth + 1))
        return results
    if isinstance(expr, ast.IfExp):
        return (_string_values(expr.body, scope, depth + 1)
                + _string_values(expr.orelse, scope, depth + 1))
    raise Unresolved(ast.unparse(expr))


def _constant_only(expr: ast.JoinedStr) -> str:
    return "".join(str(p.value) for p in expr.values if isinstance(p, ast.Constant))


def _string_values_or_pattern(expr: ast.expr, scope: _Scope, depth: int) -> list[tuple[str, bool]]:
    try:
        values = _string_values(expr, scope, depth + 1)
        if values:
            return values
    except Unresolved:
        pass
    return [("{" + ast.unparse(expr) + "}", True)]


def _read_strings(expr: ast.expr, scope: _Scope) -> dict[str, Any]:
    try:
        values = _string_values(expr, scope)
    except Unresolved as err:
        return {"values": [], "unresolved": str(err)}
    seen: dict[str, bool] = {}
    for value, dynamic in values:
        seen[value] = seen.get(value, False) or dynamic
    return {"values": [[v, d] for v, d in seen.items()]}


def _sequence_values(expr: ast.expr, scope: _Scope, depth: int = 0) -> list[ast.expr]:
    """Element expressions of a list/tuple literal, through names and ``+`` concatenation."""
    if depth > 8:
        raise Unresolved(ast.unparse(expr))
    if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
        return list(expr.elts)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _sequence_values(expr.left, scope, depth + 1) + _sequence_values(expr.right, scope, depth + 1)
    if isinstance(expr, ast.Call) and dotted(expr.func) in ("list", "tuple") and len(expr.args) == 1:
        return _sequence_values(expr.args[0], scope, depth + 1)
    if isinstance(expr, (ast.Name, ast.Attribute)):
        candidates = [v for v in _lookup(expr, scope) if v is not expr]
        if len(candidates) >= 1:
            # the last assignment is the one that reaches a straight-line construction
            return _sequence_values(candidates[-1], scope, depth + 1)
    raise Unresolved(ast.unparse(expr))


def _read_labels(expr: ast.expr, scope: _Scope) -> dict[str, Any]:
    try:
        elements = _sequence_values(expr, scope)
    except Unresolved as err:
        return {"values": [], "resolved": False, "unresolved": str(err)}
    labels: list[str] = []
    resolved = True
    for element in elements:
        try:
            values = _string_values(element, scope)
        except Unresolved:
            resolved = False
            continue
        if len(values) == 1 and not values[0][1]:
            labels.append(values[0][0])
        else:
            resolved = False
    return {"values": labels, "resolved": resolved}


def _number(expr: ast.expr) -> float:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        return float(expr.value)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return -_number(expr.operand)
    text = ast.unparse(expr)
    if text in ("float('inf')", 'float("inf")', "math.inf", "INF", "prometheus_client.utils.INF"):
        return float("inf")
    raise Unresolved(text)


def _read_numbers(expr: ast.expr, scope: _Scope) -> dict[str, Any]:
    try:
        values = [_number(e) for e in _sequence_values(expr, scope)]
    except Unresolved as err:
        return {"values": [], "resolved": False, "unresolved": str(err)}
    # JSON has no infinity: keep it as the string the exposition format uses.
    return {"values": ["+Inf" if v == float("inf") else v for v in values], "resolved": True}
