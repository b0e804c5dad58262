"""Per-file scanner for metric constructions in Python (stdlib ``ast``).

The scanner only collects: imports, classes (bases, class attributes that hold a class, method
names), and the calls that could make a metric, each with its arguments compiled into symbolic
values (:mod:`.pyscope`). Which calls really are metrics needs the other files: the class that
``self._gauge_cls`` names may be set in a subclass elsewhere, and a factory (a function or class
whose parameters flow into a constructor) may be called from any module. So the extract step
(:mod:`.metrics`, :mod:`.factories`) decides. Facts are path-free (cached by content hash):
relative imports keep their level.

A call is recorded when its callee could be a constructor or a factory (not a builtin, not a
method of a standard-library module or of an arbitrary local object) and it passes something a
metric could be made from: a name-like string, a parameter of the enclosing function (a
forwarding), or ``*args``/``**kwargs``. On vLLM 0.10.2 that is 17,000 of 71,000 calls; two thirds
of them only forward a parameter and are read shallowly (:func:`.pyscope.compile_shallow`).
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
from typing import Any

from extractor.model import ParsedFile
from extractor.python.visit import FastNodeVisitor
from extractor.telemetry import python_symbols as pysym
from extractor.telemetry.python_libscan import scan_library_uses
from extractor.telemetry.python_scope import (ClassScope, Frame, ModuleScope, compile_expr, compile_shallow, dotted,
                                        parameters)

# OpenTelemetry instruments are made by methods of a meter object, not by importable classes.
OTEL_CREATE_METHODS = frozenset({
    "create_counter", "create_up_down_counter", "create_histogram", "create_gauge",
    "create_observable_counter", "create_observable_gauge", "create_observable_up_down_counter",
})
_BUILTINS = frozenset(dir(builtins))
_STDLIB = frozenset(sys.stdlib_module_names)
# Prometheus names, and OpenTelemetry's (dots allowed: the exporter turns them into underscores).
_NAME_LIKE = re.compile(r"^[A-Za-z_:][A-Za-z0-9_:.]*$")
_NAME_PART = re.compile(r"^[A-Za-z0-9_:.]*$")
_DOC_KEYWORDS = frozenset({"documentation", "description"})


def scan_python_metrics(parsed: ParsedFile) -> dict[str, Any] | None:
    tree = parsed.tree
    if not isinstance(tree, ast.Module):  # handed another tree (libcst): read the bytes ourselves
        try:
            tree = ast.parse(parsed.data)
        except (SyntaxError, ValueError):
            return None
    collector = _Collector(tree)
    collector.visit(tree)
    libraries = scan_library_uses(tree, parsed.data, collector.module)
    if not (collector.calls or collector.classes or collector.imports or libraries):
        return None  # imports alone still matter: a package __init__ re-exporting a metric class
    return {
        "imports": collector.imports,
        "classes": collector.classes,
        "functions": collector.functions,
        "calls": collector.calls,
        **({"exemplars": collector.exemplars} if collector.exemplars else {}),
        **libraries,
    }


class _Collector(FastNodeVisitor):
    def __init__(self, tree: ast.Module):
        self.imports: dict[str, dict[str, Any]] = {}
        self.classes: list[dict[str, Any]] = []
        self.functions: dict[str, dict[str, Any]] = {}
        self.calls: list[dict[str, Any]] = []
        self.module = ModuleScope(tree)
        self._class_stack: list[tuple[str, ClassScope]] = []
        self._function_stack: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self._frames: dict[int, Frame] = {}
        self._targets: dict[int, str] = {}
        self.exemplars: list[dict[str, Any]] = []

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

    # -- classes and functions ------------------------------------------------------------------
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
            if isinstance(value, ast.Call) and dotted(value.func) in ("cast", "typing.cast") \
                    and len(value.args) == 2:
                value = value.args[1]  # _gauge_cls: Type[Gauge] = cast(Type[Gauge], _RayGaugeWrapper)
            for target in targets:
                if isinstance(target, ast.Name) and value is not None:
                    text = dotted(value)
                    if text:
                        attrs[target.id] = text
        scope = ClassScope(node, self.module)
        self.classes.append({
            "name": qual,
            "line": node.lineno,
            "bases": [b for b in (dotted(base) for base in node.bases) if b],
            "attrs": attrs,
            "methods": sorted(scope.methods),
        })
        self._class_stack.append((qual, scope))
        saved, self._function_stack = self._function_stack, []
        self.generic_visit(node)
        self._function_stack = saved
        self._class_stack.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._function_stack.append(node)
        self.generic_visit(node)
        self._function_stack.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def _frame(self) -> Frame:
        key = id(self._function_stack[-1]) if self._function_stack else 0
        frame = self._frames.get(key)
        if frame is None:
            cls = self._class_stack[-1][1] if self._class_stack else None
            frame = self._frames[key] = Frame(self.module, tuple(self._function_stack), cls)
        return frame

    def _owner(self) -> tuple[str, str, bool]:
        """(class qual, function qual, whether the function is a method of that class)."""
        cls_name, cls = self._class_stack[-1] if self._class_stack else ("", None)
        if not self._function_stack:
            return cls_name, "", False
        names = [f.name for f in self._function_stack]
        is_method = cls is not None and self._function_stack[0] in cls.methods.values()
        prefix = cls_name + "." if is_method else ""
        return cls_name, prefix + ".".join(names), is_method and len(names) == 1

    def visit_Assign(self, node: ast.Assign) -> None:
        if isinstance(node.value, ast.Call) and len(node.targets) == 1:
            target = dotted(node.targets[0])
            if target and (target.count(".") == 0 or target.startswith("self.") and target.count(".") == 1):
                self._targets[id(node.value)] = target  # where the metric object is kept
        self.generic_visit(node)

    def _exemplar_use(self, node: ast.Call) -> None:
        """``m.observe(v, exemplar={...})`` / ``m.labels(...).inc(exemplar=...)``: the object used."""
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and receiver.func.attr == "labels":
            receiver = receiver.func.value
        text = dotted(receiver) if receiver is not None else None
        if text:
            self.exemplars.append({"object": text, "class": self._owner()[0], "line": node.lineno})

    # -- calls --------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("observe", "inc", "set") \
                and any(k.arg == "exemplar" for k in node.keywords):
            self._exemplar_use(node)
        callee = _callee(node.func)
        if callee is None or not (node.args or node.keywords) or not self._plausible(callee):
            return
        interest = self._interesting(node, callee)
        if not interest:
            return
        frame = self._frame()
        read = compile_shallow if interest == "forwards" else compile_expr
        args = [["star", read(a.value, frame)] if isinstance(a, ast.Starred) else read(a, frame)
                for a in node.args]
        kwargs = {k.arg: read(k.value, frame) for k in node.keywords if k.arg}
        dstar = [read(k.value, frame) for k in node.keywords if not k.arg]
        cls_name, function, is_method = self._owner()
        call = {"callee": callee, "line": node.lineno, "class": cls_name, "function": function,
                "args": args, "kwargs": kwargs}
        if dstar:
            call["dstar"] = dstar
        if id(node) in self._targets:
            call["target"] = self._targets[id(node)]
        self.calls.append(call)
        opened: set[tuple[str, str]] = set()
        for value in [*args, *kwargs.values(), *dstar]:
            opened |= pysym.refs(value)
        if opened:
            self._record_signatures(opened, cls_name, function, is_method)

    def _record_signatures(self, opened: set[tuple[str, str]], cls_name: str, function: str,
                           is_method: bool) -> None:
        """Signatures of the factories this call forwards for: its function, and the class's
        ``__init__`` when it reads one of that constructor's parameters through ``self``."""
        if any(tag == "param" for tag, _ in opened) and function and function not in self.functions:
            node = self._function_stack[-1]
            self.functions[function] = _signature(node, cls_name if is_method else "", is_method,
                                                  self._frame())
        if any(tag == "attr" for tag, _ in opened) and cls_name:
            key = cls_name + ".__init__"
            scope = self._class_stack[-1][1]
            init = scope.methods.get("__init__")
            if key not in self.functions and init is not None:
                self.functions[key] = _signature(init, cls_name, True, Frame(self.module, (init,), scope))

    def _plausible(self, callee: str) -> bool:
        """Could this callee be a metric class or a factory? Not a builtin, not a function of a
        standard-library module, not a method of some local object (except OpenTelemetry's
        ``meter.create_*``)."""
        head, _, rest = callee.partition(".")
        if callee.startswith("super()."):
            return True
        if not rest:
            return callee not in _BUILTINS or callee in ("super",)
        if head in ("self", "cls"):
            return True
        if callee.rsplit(".", 1)[-1] in OTEL_CREATE_METHODS:
            return True
        entry = self.imports.get(head)
        if entry is None:
            return False
        return entry["level"] > 0 or entry["module"].split(".")[0] not in _STDLIB

    def _interesting(self, node: ast.Call, callee: str) -> str:
        """Why the call is recorded ("" when it is not): "reads" when its values are read in full
        (constructor-shaped, a name-like string, ``*args``/``**kwargs``), "forwards" when it only
        passes a parameter on (two thirds of the recorded calls on vLLM: read shallowly)."""
        last = callee.rsplit(".", 1)[-1]
        if last in OTEL_CREATE_METHODS:
            return "reads"
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return "reads" if self._function_stack else ""  # forwarding *args / **kwargs
        if (last[:1].isupper() or callee.startswith(("self.", "cls."))) and (
                len(node.args) >= 2 or any(k.arg in _DOC_KEYWORDS for k in node.keywords)):
            return "reads"  # constructor-shaped (name and documentation; self._gauge_cls(...)), whatever the name
        values = list(node.args) + [k.value for k in node.keywords]
        if any(_name_like(value) for value in values):
            return "reads"
        if any(isinstance(value, ast.Name) and _module_string(value.id, self.module) for value in values):
            return "reads"
        frame = self._frame() if self._function_stack else None
        if frame is None:
            return ""
        for value in values:
            if isinstance(value, ast.Name) and value.id in frame.params:
                return "forwards"
            text = dotted(value)
            if text and text.startswith("self.") and text.count(".") == 1 and frame.self_attr_from_init_param(text[5:]):
                return "forwards"
        return ""


def _callee(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) \
            and isinstance(func.value.func, ast.Name) and func.value.func.id == "super":
        return "super()." + func.attr
    return dotted(func)


def _name_like(value: ast.expr) -> bool:
    """A string constant or f-string that could be (part of) a Prometheus metric name."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, str) and bool(_NAME_LIKE.match(value.value))
    if isinstance(value, ast.JoinedStr):
        constants = [p.value for p in value.values if isinstance(p, ast.Constant)]
        return bool(constants) and all(isinstance(c, str) and _NAME_PART.match(c) for c in constants)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return _name_like(value.left) or _name_like(value.right)
    return False


def _module_string(name: str, module: ModuleScope) -> bool:
    return name in module.string_names()


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef, cls_name: str, is_method: bool,
               frame: Frame) -> dict[str, Any]:
    params = parameters(node, is_method)
    args = node.args
    defaults: dict[str, Any] = {}
    positional = [a.arg for a in args.posonlyargs + args.args]
    module_frame = Frame(frame.module)
    for name, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        defaults[name] = compile_expr(default, module_frame)
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        if default is not None:
            defaults[arg.arg] = compile_expr(default, module_frame)
    return {"class": cls_name, "line": node.lineno, "params": params, "defaults": defaults}
