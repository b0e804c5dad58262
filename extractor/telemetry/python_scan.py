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

The nodes come from the module's shared index (:mod:`extractor.python.index`), which the other
kinds' scanners read too. They are met as a visitor that enters a def before its fields would meet
them: calls after the calls inside them, an import only from where it stands on, and a def's
decorators and defaults inside that def (which the facts' ``function`` fields have always said).
"""

from __future__ import annotations

import ast
import builtins
import codecs
import functools
import io
import re
import sys
import tokenize

from extractor.model import ParsedFile
from extractor.python.expr import name_chain
from extractor.python.index import ModuleIndex, Scope, Site, module_index
from extractor.telemetry import python_symbols as pysym
from extractor.telemetry.libraries import conventions
from extractor.telemetry.python_facts import (CallFacts, ClassFacts, ClassUse, ExemplarUse, ImportEntry, LibraryImport,
                                              MadeCallable, MetricFacts, ReturningFunction, Signature, Sym)
from extractor.telemetry.python_exposition import scan_python_exposition
from extractor.telemetry.python_libscan import scan_library_uses
from extractor.telemetry.python_scope import (ClassScope, Frame, InPlace, ModuleScope, compile_expr, compile_shallow,
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
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_TYPING = frozenset({"cast", "typing.cast"})
_PARTIAL = frozenset({"partial", "functools.partial"})
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
# What a callable returned by ``functools.partial(cls, ...)`` takes: named so that no parameter of
# the function returning it can be mistaken for them.
_PARTIAL_PARAMS = (("*args", "var"), ("**kwargs", "kw"))
_DICT_KEY = re.compile(r"^[A-Za-z0-9_:]+$")  # a dict entry a callable is kept in: ``d["counter"]``
_NAMED = (ast.Name, ast.Attribute)
_KEPT_VALUES = (ast.Call, ast.Dict)  # what an assignment keeps that a call may have made
_OBSERVERS = frozenset({"observe", "inc", "set"})
# Source encodings under which an ASCII file's text is its bytes (the parser's default is utf-8).
_ASCII_TRANSPARENT = frozenset({"utf-8", "utf-8-sig", "ascii", "latin-1", "iso8859-1", "cp1252"})
Function = ast.FunctionDef | ast.AsyncFunctionDef


def scan_python_metrics(parsed: ParsedFile) -> MetricFacts | None:
    tree = parsed.tree
    if not isinstance(tree, ast.Module):  # handed another tree (libcst): read the bytes ourselves
        try:
            tree = ast.parse(parsed.data)
        except (SyntaxError, ValueError):
            return None
    index = module_index(tree)
    collector = _Collector(index, _named_in(parsed.data, _metric_class_names()))
    collector.collect()
    libraries = scan_library_uses(index, parsed.data, collector.module)
    exposition, compared = scan_python_exposition(tree) if b"# TYPE " in parsed.data else ((), 0)
    constants, returns = _constants(collector.module), _returning_functions(collector.module)
    if not (collector.calls or collector.classes or collector.imports or collector.stars or libraries or exposition
            or compared or constants or returns):
        return None  # imports alone still matter: a package __init__ re-exporting a metric class
    return MetricFacts(imports=collector.imports, stars=tuple(collector.stars), classes=tuple(collector.classes),
                       functions=collector.functions,
                       makers=collector.makers, class_uses=tuple(sorted(collector.class_uses.values(), key=lambda u: (u.line, u.name))),
                       calls=tuple(collector.calls), exemplars=tuple(collector.exemplars),
                       unmodeled=tuple(LibraryImport(module, line)
                                       for module, line in sorted(collector.unmodeled.items())),
                       exposition=exposition, exposition_compared=compared, constants=constants, returns=returns,
                       **libraries)


# the shapes of a value a constant may hold (a call, a comprehension, a lambda never is one)
_CONSTANT_VALUES = (ast.Constant, ast.JoinedStr, ast.BinOp, ast.List, ast.Tuple, ast.Set, ast.Name, ast.Attribute,
                    ast.IfExp, ast.BoolOp, ast.UnaryOp)
_BUILT = (ast.JoinedStr, ast.BinOp)  # what a function returning a name built from its parameters returns
_MAX_CONSTANT_PARTS = 256  # a longer table (a vocabulary, a lookup list) is no metric's name or labels
_OPEN = frozenset({"unk", "param", "attr", "dict", "from"})


def _constants(module: ModuleScope) -> dict[str, Sym]:
    """The module's names (and its classes' ``Class.NAME``, annotated ones too: ``NAME: Final = "x"``)
    that hold strings, numbers or sequences of them, as the file says (what another file imports is
    read there: ``["ext", ...]`` kept). An Enum's members are not strings, their values are: an Enum
    gives ``Class.NAME.value``, and a string Enum (``class Names(str, Enum)``, ``StrEnum``), whose
    members are strings holding their values, ``Class.NAME`` as well."""
    found: dict[str, Sym] = {}
    frame = module.frame()
    tables = [("", "", module.table())]
    for node in module.tree.body:
        if isinstance(node, ast.ClassDef) and any(isinstance(item, (ast.Assign, ast.AnnAssign)) for item in node.body):
            body = ClassScope(node, module).body()
            enum = any("Enum" in (name_chain(b) or "") or "Flag" in (name_chain(b) or "") for b in node.bases)
            if _string_enum(node) or not enum:
                tables.append((node.name + ".", "", body))
            if enum:
                tables.append((node.name + ".", ".value", body))
    for prefix, suffix, table in tables:
        for name, values in table.items():
            if any(v.__class__ is InPlace or not isinstance(v, _CONSTANT_VALUES) for v in values):
                continue
            value = pysym.alt([compile_expr(v, frame) for v in values])
            if _constant_like(value, needs_param=False):
                found[prefix + name + suffix] = value
    return found


def _string_enum(node: ast.ClassDef) -> bool:
    """``class X(str, Enum)`` or ``class X(StrEnum)``: its members are ``str`` instances."""
    bases = [name_chain(b) or "" for b in node.bases]
    return any(b.rpartition(".")[2] == "StrEnum" for b in bases) or (
        "str" in bases and any(b.rpartition(".")[2] == "Enum" for b in bases))


def _constant_like(value: Sym, needs_param: bool) -> bool:
    """Whether ``value`` is known but for names other files define (and, for a function's value,
    its parameters): made of literals, at least one of them a string or a number."""
    literal = param = False
    count = 0
    for part in pysym.parts(value):
        count += 1
        tag = part[0]
        if count > _MAX_CONSTANT_PARTS or tag in _OPEN and not (needs_param and tag == "param"):
            return False
        if tag == "lit" and isinstance(part[1], (str, int, float)) and not isinstance(part[1], bool):
            literal = True
        param = param or tag == "param"
    return literal and (param or not needs_param)


def _returning_functions(module: ModuleScope) -> dict[str, ReturningFunction]:
    """Module-level functions that name values and return one built from their parameters
    (``def metric_name(name): prefix = "app:"; return f"{prefix}{name}"``)."""
    found: dict[str, ReturningFunction] = {}
    for node in module.tree.body:
        if not isinstance(node, ast.FunctionDef) or node.args.vararg or node.args.kwarg:
            continue
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        if not body or not isinstance(body[-1], ast.Return) or not isinstance(body[-1].value, _BUILT) or not all(
                isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets) for s in body[:-1]):
            continue
        frame = Frame(module, (node,))
        value = compile_expr(body[-1].value, frame)
        if _constant_like(value, needs_param=True):
            signature = _signature(node, "", False, frame)
            found[node.name] = ReturningFunction(signature.params, signature.defaults, value)
    return found


@functools.cache  # per process
def _unmodeled_modules() -> frozenset[str]:
    """Top-level modules of the libraries whose series archdiff does not model (libraries.yaml)."""
    return frozenset(conventions().unmodeled)


@functools.cache  # per process, not per file: the scanner runs on every Python file
def _metric_class_names() -> frozenset[str]:
    """The last part of every constructor class the libraries define (``Counter``, ``Gauge``...)."""
    return frozenset(key.rsplit(".", 1)[-1] for key in conventions().constructors)


def _named_in(data: bytes, names: frozenset[str]) -> frozenset[str]:
    """Those of ``names`` that the file's bytes spell: no other can be an identifier of its tree.

    Two thirds of vLLM's files spell no metric class, and for them the scanner looks at no call's
    arguments for one. Sound where the text is the bytes: an ASCII file in an ASCII-transparent
    encoding (a non-ASCII identifier is NFKC-normalised by the parser, and a codec such as
    utf-7 spells ``Counter`` otherwise): any other file keeps every name."""
    second = data.find(b"\n", data.find(b"\n") + 1)  # an encoding is declared in the first two lines
    if not data.isascii() or (b"coding" in data[:second if second >= 0 else None]
                              and _declared_encoding(data) not in _ASCII_TRANSPARENT):
        return names
    return frozenset(name for name in names if name.encode() in data)


def _declared_encoding(data: bytes) -> str:
    """The encoding the file's first two lines declare (PEP 263), normalised; "" when unknown."""
    try:
        declared, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return codecs.lookup(declared).name
    except (SyntaxError, LookupError):
        return ""


class _Where:
    """The classes and functions around a node, as the collector sees them: a class starts a new
    run of functions (its methods' frames do not see the functions it is nested in)."""

    __slots__ = ("class_name", "cls", "functions", "owner")

    def __init__(self, class_name: str, cls: ClassScope | None, functions: tuple[Function, ...]) -> None:
        self.class_name = class_name
        self.cls = cls
        self.functions = functions
        self.owner: tuple[str, str, bool] | None = None  # what _Collector._owner says, once asked


class _Collector:
    def __init__(self, index: ModuleIndex, class_names: frozenset[str]):
        self.index = index
        self.imports: dict[str, ImportEntry] = {}
        self.stars: list[ImportEntry] = []
        self.classes: list[ClassFacts] = []
        self.functions: dict[str, Signature] = {}
        self.calls: list[CallFacts] = []
        self.exemplars: list[ExemplarUse] = []
        self.makers: dict[str, MadeCallable] = {}
        self.class_uses: dict[str, ClassUse] = {}
        self._class_names = class_names  # the metric class names the file spells
        self._plausible_callees: dict[str, bool] = {}  # per callee, for the imports seen so far
        self.module = ModuleScope(index.tree)
        self._class_scopes: dict[ast.AST, ClassScope] = {}
        self._where: dict[Scope, _Where] = {}
        self._frames: dict[int, Frame] = {}
        self._assigned: dict[int, str] = {}  # id(call) -> what keeps its result (see _target)
        self.unmodeled: dict[str, int] = {}  # library module -> the line of its first import here
        # (scope, start, end, parameter, is_none) of each branch of an `if PARAM is [not] None`
        self._none_tests: list[_NoneTest] | None = None
        # id(call) -> (the loop variable, the table's entries) for `cfg["type"](cfg["name"], ...)` in a loop
        # over a table of metric specifications (see _table_loops)
        self._tables: dict[int, tuple[str, list[ast.Dict]]] = {}

    def collect(self) -> None:
        index = self.index
        for cls in index.of(ast.ClassDef):
            self._class(cls)
        # what may hold metric classes: every dict literal (a table of specifications' entries too) and
        # the sequences assignments keep
        held = [*index.of(ast.Dict), *(assign.value for assign in index.of(ast.Assign)
                                       if assign.value.__class__ in (ast.List, ast.Tuple))] if self._class_names else []
        for assign in index.of(ast.Assign):
            if len(assign.targets) != 1 or assign.value.__class__ not in _KEPT_VALUES:
                continue
            target = _entry(assign.targets[0])
            if target and isinstance(assign.value, ast.Call):
                self._assigned[id(assign.value)] = target
            elif target and isinstance(assign.value, ast.Dict) and "[" not in target:
                for key, value in zip(assign.value.keys, assign.value.values):  # FACTORIES = {"counter": make(Counter)}
                    if isinstance(value, ast.Call) and isinstance(key, ast.Constant) and isinstance(key.value, str) \
                            and _DICT_KEY.match(key.value):
                        self._assigned[id(value)] = f"{target}[{key.value!r}]"
        if self._class_names:
            self._tables = self._table_loops()
        # Imports (module level and nested alike: a late import still binds the name) count from
        # where they stand: a call sees those before it.
        imports = index.positions(ast.Import, ast.ImportFrom)
        calls = index.positions(ast.Call)
        nodes, sites = index.nodes, dict(zip(calls, index.sites(calls)))
        done = 0
        for position in index.post_order(calls):
            while done < len(imports) and imports[done] < position:
                self._import(nodes[imports[done]])
                done += 1
            call = nodes[position]
            assert isinstance(call, ast.Call)
            self._call(call, sites[position])
        for position in imports[done:]:
            self._import(nodes[position])
        for holder in held:  # after the calls: a class called somewhere is used where it is called
            self._held_uses(holder)
        self._returned_callables()

    # -- imports ---------------------------------------------------------------------------------
    def _import(self, node: ast.AST) -> None:
        self._plausible_callees.clear()  # an import may make a callee plausible from here on
        unmodeled = _unmodeled_modules()
        # any part of the path, not only its head: a copy of the library kept in the system's tree is
        # imported under the system's package (`from app.vendor.kmonitor.kmonitor import KMonitor`);
        # the copy's own files are left out by the driver, which knows each file's module
        for imported in ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [f"{node.module}.{a.name}" for a in node.names]
                         if isinstance(node, ast.ImportFrom) and node.module and not node.level else []):
            for part in imported.split("."):
                if part in unmodeled:
                    line: int = getattr(node, "lineno")
                    self.unmodeled[part] = min(self.unmodeled.get(part, line), line)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.imports[alias.asname] = ImportEntry(alias.name, 0, "")
                else:
                    head = alias.name.split(".")[0]
                    self.imports[head] = ImportEntry(head, 0, "")
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    if node.level or (node.module or "").split(".")[0] not in _STDLIB:
                        self.stars.append(ImportEntry(node.module or "", node.level, "*"))
                    continue
                self.imports[alias.asname or alias.name] = ImportEntry(node.module or "", node.level, alias.name)

    # -- classes and functions ------------------------------------------------------------------
    def _class(self, node: ast.ClassDef) -> None:
        scope = self.index.scopes[node]
        qual = _class_qual(scope)
        attrs: dict[str, str] = {}
        for item in node.body:
            targets: list[ast.expr] = []
            value: ast.expr | None = None
            if isinstance(item, ast.Assign):
                targets, value = item.targets, item.value
            elif isinstance(item, ast.AnnAssign) and item.value is not None:
                targets, value = [item.target], item.value
            if isinstance(value, ast.Call) and name_chain(value.func) in ("cast", "typing.cast") \
                    and len(value.args) == 2:
                value = value.args[1]  # _gauge_cls: Type[Gauge] = cast(Type[Gauge], _RayGaugeWrapper)
            for target in targets:
                if isinstance(target, ast.Name) and value is not None:
                    text = name_chain(value)
                    if text:
                        attrs[target.id] = text
        cls = self._class_scopes[node] = ClassScope(node, self.module)
        attrs.update(_held_on_self(cls, attrs))
        self.classes.append(ClassFacts(qual, node.lineno, tuple(b for b in (name_chain(base) for base in node.bases) if b),
                                       attrs, tuple(sorted(cls.methods)), _forwards(cls.methods)))

    def _around(self, owner: Scope) -> _Where:
        """The class and the functions (since that class) around a node whose innermost def is ``owner``."""
        where = self._where.get(owner)
        if where is None:
            functions: list[Function] = []
            class_name, cls = "", None
            for scope in _chain(owner):
                node = scope.node
                if isinstance(node, ast.ClassDef):
                    class_name = _class_qual(scope)
                    cls = self._class_scopes[node]
                    break
                if isinstance(node, _FUNCTIONS):
                    functions.append(node)
            where = self._where[owner] = _Where(class_name, cls, tuple(reversed(functions)))
        return where

    def _frame(self, where: _Where) -> Frame:
        # Keyed by the innermost function, or 0 outside any: code in a class body shares the
        # module's frame, whichever asked first.
        key = id(where.functions[-1]) if where.functions else 0
        frame = self._frames.get(key)
        if frame is None:
            frame = self._frames[key] = Frame(self.module, where.functions, where.cls)
        return frame

    def _owner(self, where: _Where) -> tuple[str, str, bool]:
        """(class qual, function qual, whether the function is a method of that class)."""
        if where.owner is None:
            where.owner = self._find_owner(where)
        return where.owner

    def _find_owner(self, where: _Where) -> tuple[str, str, bool]:
        if not where.functions:
            return where.class_name, "", False
        names = [f.name for f in where.functions]
        is_method = where.cls is not None and where.functions[0] in where.cls.methods.values()
        prefix = where.class_name + "." if is_method else ""
        return where.class_name, prefix + ".".join(names), is_method and len(names) == 1

    def _exemplar_use(self, node: ast.Call, where: _Where) -> None:
        """``m.observe(v, exemplar={...})`` / ``m.labels(...).inc(exemplar=...)``: the object used."""
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and receiver.func.attr == "labels":
            receiver = receiver.func.value
        text = name_chain(receiver) if receiver is not None else None
        if text:
            self.exemplars.append(ExemplarUse(text, where.class_name, node.lineno))

    # -- callables made over a parameter ---------------------------------------------------------
    def _returned_callables(self) -> None:
        """Functions returning a closure, a lambda or a ``functools.partial`` that calls one of
        their parameters: the makers of metric factories of any order (``self._counter =
        self._make_factory(Counter)``, then ``self._counter("x_total", "...")``)."""
        index = self.index
        nested: dict[tuple[int, str], ast.AST] = {}  # (id of the enclosing def, name) -> nested def
        for definition in index.of_types(*_FUNCTIONS):
            assert isinstance(definition, _FUNCTIONS)
            parent = index.scopes[definition].parent
            if parent is not None and isinstance(parent.node, _FUNCTIONS):
                nested.setdefault((id(parent.node), definition.name), definition)
        returns = index.positions(ast.Return)
        for position, site in zip(returns, index.sites(returns)):
            node = index.nodes[position]
            assert isinstance(node, ast.Return)
            owner = site.owner.node
            if node.value is None or not isinstance(owner, _FUNCTIONS) or not _may_make(node.value, owner, nested):
                continue
            where = self._around(site.owner)
            cls_name, function, is_method = self._owner(where)
            if function in self.makers:
                continue
            own = {name for name, _ in parameters(owner, is_method)}
            made = self._made(node.value, owner, own, where, nested)
            if made is not None:
                self.makers[function] = made
                self.functions.setdefault(function, _signature(owner, cls_name if is_method else "", is_method,
                                                               self._frame(where)))

    def _made(self, value: ast.expr, owner: Function, own: set[str], where: _Where,
              nested: dict[tuple[int, str], ast.AST]) -> MadeCallable | None:
        if isinstance(value, ast.Name):
            inner = nested.get((id(owner), value.id))
            if not isinstance(inner, _FUNCTIONS):
                return None
            mine = {name for name, _ in parameters(inner, False)}
            call = _calling(inner, own - mine)
            if call is None:
                return None
            frame = Frame(self.module, (*where.functions, inner), where.cls)
            params = tuple((name, kind) for name, kind in parameters(inner, False))
            return MadeCallable("closure", call.func.id, params, self._call_facts(call, frame, where))  # type: ignore[attr-defined]
        if isinstance(value, ast.Lambda):
            params = _lambda_params(value.args)
            call = _calling(value, own - {name for name, _ in params})
            if call is None:
                return None
            frame = Frame(self.module, where.functions, where.cls)
            frame.params = {name for name, _ in params}  # the lambda's own parameters stay open
            return MadeCallable("lambda", call.func.id, params, self._call_facts(call, frame, where))  # type: ignore[attr-defined]
        if isinstance(value, ast.Call) and name_chain(value.func) in _PARTIAL and value.args \
                and isinstance(value.args[0], ast.Name) and value.args[0].id in own:
            frame = self._frame(where)
            args: list[Sym] = [["star", compile_expr(a.value, frame)] if isinstance(a, ast.Starred)
                               else compile_expr(a, frame) for a in value.args[1:]]
            args.append(["star", ["param", "*args"]])
            kwargs = {k.arg: compile_expr(k.value, frame) for k in value.keywords if k.arg}
            dstar = [compile_expr(k.value, frame) for k in value.keywords if not k.arg] + [["param", "**kwargs"]]
            fact = CallFacts(value.args[0].id, value.lineno, where.class_name, "", tuple(args), kwargs, tuple(dstar))
            return MadeCallable("partial", value.args[0].id, _PARTIAL_PARAMS, fact)
        return None

    def _call_facts(self, call: ast.Call, frame: Frame, where: _Where) -> CallFacts:
        args: list[Sym] = [["star", compile_expr(a.value, frame)] if isinstance(a, ast.Starred)
                           else compile_expr(a, frame) for a in call.args]
        kwargs = {k.arg: compile_expr(k.value, frame) for k in call.keywords if k.arg}
        dstar = [compile_expr(k.value, frame) for k in call.keywords if not k.arg]
        return CallFacts(_callee(call.func) or "", call.lineno, where.class_name, "", tuple(args), kwargs, tuple(dstar))

    # -- calls --------------------------------------------------------------------------------
    def _class_use(self, callee: str | None, node: ast.Call) -> None:
        """Names spelled like a metric class, called or passed: what the "no silent zero" check reads.

        A name's last part is its node's own ``id`` or ``attr``: tested against the class names
        before the dotted text is built (most arguments are no class)."""
        names = self._class_names
        func = node.func
        if callee and func.__class__ in _NAMED and _last_part(func) in names:
            self._use(callee, node, any(k.arg in _DOC_KEYWORDS for k in node.keywords))
        for value in [*node.args, *(k.value for k in node.keywords)]:
            if value.__class__ in _NAMED and _last_part(value) in names:
                text = name_chain(value)
                if text:
                    self._use(text, node, False)

    def _held_uses(self, value: ast.expr) -> None:
        """Metric classes held in a dict's values or a sequence (``{"gauge": GaugeMetricFamily}``,
        ``KINDS = (Counter, Gauge)``, a table's ``{"type": Gauge, "name": ...}``) and called through it:
        uses too, whatever calls them, so a file whose calls of them no shape archdiff reads gives a
        "no silent zero" diagnostic, not nothing."""
        names = self._class_names
        held = value.values if isinstance(value, ast.Dict) else value.elts if isinstance(value, (ast.List, ast.Tuple)) \
            else ()
        for item in held:
            if item is not None and item.__class__ in _NAMED and _last_part(item) in names:
                text = name_chain(item)
                if text:
                    self._use(text, item, False)

    def _use(self, text: str, node: ast.AST, shaped: bool) -> None:
        known = self.class_uses.get(text)
        if known is None or (shaped and not known.shaped):
            self.class_uses[text] = ClassUse(text, getattr(node, "lineno"), shaped)

    def _call(self, node: ast.Call, site: Site) -> None:
        func = node.func
        keywords = node.keywords
        if keywords and func.__class__ is ast.Attribute and func.attr in _OBSERVERS \
                and any(k.arg == "exemplar" for k in keywords):
            self._exemplar_use(node, self._around(site.owner))
        callee = func.id if func.__class__ is ast.Name else _callee(func)
        if self._class_names and not (callee and (callee in _BUILTINS or callee in _TYPING)):
            self._class_use(callee, node)  # isinstance(x, Counter) makes no metric
        table = self._tables.get(id(node))
        if table is not None:
            self._table_calls(node, site, *table)
            return
        if not (node.args or keywords) or callee is None:
            return
        receiver = ""
        plausible = self._plausible_callees.get(callee)
        if plausible is None:
            plausible = self._plausible_callees[callee] = self._plausible(callee)
        if not plausible:
            head, _, last = callee.rpartition(".")
            if not head or "." in head or last not in self._class_names or site.owner is None:
                return
            # ``client.Histogram(...)``, client a parameter annotated with a class of the analysed code
            # (a metrics client wrapper): the extract step follows that class's method of the name
            receiver = _annotation_of(head, self._around(site.owner).functions)
            if not receiver:
                return
        where = self._around(site.owner)
        interest = self._interesting(node, callee, where)
        if not interest:
            return
        frame = self._frame(where)
        read = compile_shallow if interest == "forwards" else compile_expr
        args: list[Sym] = [["star", read(a.value, frame)] if isinstance(a, ast.Starred) else read(a, frame)
                           for a in node.args]
        kwargs = {k.arg: read(k.value, frame) for k in keywords if k.arg}
        dstar = [read(k.value, frame) for k in keywords if not k.arg]
        cls_name, function, is_method = self._owner(where)
        self.calls.append(CallFacts(callee, node.lineno, cls_name, function, tuple(args), kwargs, tuple(dstar),
                                    self._target(node), self._guards_of(node, site.owner, frame.params), receiver))
        opened = pysym.open_tags([*args, *kwargs.values(), *dstar])
        if opened:
            self._record_signatures(opened, cls_name, function, is_method, where)

    # -- tables of metric specifications ---------------------------------------------------------
    def _table_loops(self) -> dict[int, tuple[str, list[ast.Dict]]]:
        """Calls of a table's entries: a loop ``for name, cfg in T.items()`` (or ``for cfg in
        T.values()``) whose body calls ``cfg["type"](cfg["name"], cfg["description"],
        **cfg["kwargs"])``, ``T`` a dict of dict literals (FastDeploy's ``MetricsManager.METRICS``,
        read once per process start by a loop that makes every metric). Each such call -> the loop
        variable and the entries ``T`` holds: the dicts its literal holds (``T = {"a": {...}}`` at
        module level, in the class body, as ``self.T`` in a method, or in the loop's function) and
        those given to it by key (``T["b"] = {...}``, ``self.T["b"] = {...}``)."""
        found: dict[int, tuple[str, list[ast.Dict]]] = {}
        index = self.index
        positions = index.positions(ast.For)
        for position, site in zip(positions, index.sites(positions)):
            loop = index.nodes[position]
            assert isinstance(loop, ast.For)
            var, table = _table_loop(loop)
            if not var or not table:
                continue
            calls = [node for statement in loop.body for node in ast.walk(statement)
                     if isinstance(node, ast.Call) and _field_key(node.func, var)]
            if calls:
                entries = self._table_entries(table, site)
                for call in calls:
                    found[id(call)] = (var, entries)
        return found

    def _table_entries(self, table: str, site: Site) -> list[ast.Dict]:
        """The dict literals held as entries of the table named ``table`` where ``site`` reads it."""
        held: list[ast.expr] = []
        owner_class = _enclosing_class(site.owner)
        attr = table.partition(".")[2] if table.startswith(("self.", "cls.")) else ""
        if attr and owner_class is not None:
            cls = self._class_scopes.get(owner_class)
            if cls is not None:
                held += cls.body().get(attr, [])
                held += [value for value, _method in cls.self_sets().get(attr, [])]
        elif "." not in table:
            where = self._around(site.owner)
            held += self._frame(where).table().get(table, []) if where.functions else []
            held += self.module.table().get(table, [])
        entries = [value for literal in held if isinstance(literal, ast.Dict)
                   for value in literal.values if isinstance(value, ast.Dict)]
        positions = self.index.positions(ast.Assign)
        for position, assign_site in zip(positions, self.index.sites(positions)):
            assign = self.index.nodes[position]
            assert isinstance(assign, ast.Assign)
            target = assign.targets[0] if len(assign.targets) == 1 else None
            if isinstance(target, ast.Subscript) and isinstance(assign.value, ast.Dict) \
                    and name_chain(target.value) == table \
                    and (not attr or _enclosing_class(assign_site.owner) is owner_class):
                entries.append(assign.value)
        return entries

    def _table_calls(self, node: ast.Call, site: Site, var: str, entries: list[ast.Dict]) -> None:
        """One call fact per entry of a table of metric specifications (see :meth:`_table_loops`):
        the class the entry holds under the called key, each ``var["key"]`` argument read as the
        entry's value under that key (a ``**var["kwargs"]`` dict literal as keywords), at the line
        of the value the first argument reads (the metric's name), else of the entry."""
        where = self._around(site.owner)
        frame = self._frame(where)
        cls_name, function, _is_method = self._owner(where)
        key = _field_key(node.func, var)
        for entry in entries:
            fields = {k.value: v for k, v in zip(entry.keys, entry.values)
                      if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            held = fields.get(key)
            callee = name_chain(held) if held is not None and held.__class__ in _NAMED else None
            if not callee or not self._plausible(callee):
                continue

            def read(expr: ast.expr) -> Sym:
                field = _field_key(expr, var)
                if not field:
                    return compile_expr(expr, frame)
                value = fields.get(field)
                return compile_expr(value, frame) if value is not None else pysym.unk(f"{var}[{field!r}]")

            args: list[Sym] = [["star", read(a.value)] if isinstance(a, ast.Starred) else read(a) for a in node.args]
            kwargs = {k.arg: read(k.value) for k in node.keywords if k.arg}
            dstar: list[Sym] = []
            for keyword in node.keywords:
                if keyword.arg:
                    continue
                given = fields.get(_field_key(keyword.value, var))
                if isinstance(given, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                                       for k in given.keys):
                    kwargs.update({k.value: compile_expr(v, frame)  # type: ignore[union-attr]
                                   for k, v in zip(given.keys, given.values)})
                else:
                    dstar.append(read(keyword.value))
            named = fields.get(_field_key(node.args[0], var)) if node.args else None
            line = named.lineno if named is not None else entry.lineno
            self.calls.append(CallFacts(callee, line, cls_name, function, tuple(args), kwargs, tuple(dstar)))
            if _last_part(held) in self._class_names:  # type: ignore[arg-type]
                known = self.class_uses.get(callee)
                if known is None or not known.shaped:
                    self.class_uses[callee] = ClassUse(callee, line, True)

    def _guards_of(self, node: ast.Call, owner: Scope, params: set[str]) -> tuple[tuple[str, bool], ...]:
        """The None tests on ``params`` of the `if` statements of ``owner`` that ``node`` runs under:
        (parameter, whether it runs only when the parameter is None)."""
        if self._none_tests is None:
            self._none_tests = _none_tests(self.index)
        where = (node.lineno, node.col_offset)
        return tuple(sorted({(param, is_none) for scope, start, end, param, is_none in self._none_tests
                             if scope is owner and param in params and start <= where < end}))

    def _target(self, node: ast.Call) -> str:
        """Where the call's result is kept: ``NAME = call``, ``self.x = call``, or an entry of a dict
        held there (``d["k"] = call``, ``d = {"k": call}``); "" otherwise."""
        target = self._assigned.get(id(node))
        if target and (target.count(".") == 0 or target.startswith("self.") and target.count(".") == 1):
            return target
        return ""

    def _record_signatures(self, opened: set[str], cls_name: str, function: str,
                           is_method: bool, where: _Where) -> None:
        """Signatures of the factories this call forwards for: its function, and the class's
        ``__init__`` when it reads one of that constructor's parameters through ``self``."""
        if "param" in opened and function and function not in self.functions:
            node = where.functions[-1]
            self.functions[function] = _signature(node, cls_name if is_method else "", is_method, self._frame(where))
        if "attr" in opened and cls_name and where.cls is not None:
            key = cls_name + ".__init__"
            init = where.cls.methods.get("__init__")
            if key not in self.functions and init is not None:
                self.functions[key] = _signature(init, cls_name, True, Frame(self.module, (init,), where.cls))

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
        return entry.level > 0 or entry.module.split(".")[0] not in _STDLIB

    def _interesting(self, node: ast.Call, callee: str, where: _Where) -> str:
        """Why the call is recorded ("" when it is not): "reads" when its values are read in full
        (constructor-shaped, a name-like string, ``*args``/``**kwargs``), "forwards" when it only
        passes a parameter on (two thirds of the recorded calls on vLLM: read shallowly)."""
        last = callee.rpartition(".")[2]
        if last in OTEL_CREATE_METHODS:
            return "reads"
        args, keywords = node.args, node.keywords
        # (plain loops: this runs for half the calls of a system, and generators cost more than the tests)
        for arg in args:
            if isinstance(arg, ast.Starred):
                return "reads" if where.functions else ""  # forwarding *args
        for keyword in keywords:
            if keyword.arg is None:
                return "reads" if where.functions else ""  # forwarding **kwargs
        values = [*args, *(k.value for k in keywords)] if keywords else args
        kept = id(node) in self._assigned
        names = self._class_names
        for value in values:
            if value.__class__ in _NAMED:
                given = _last_part(value)
                if (given in names or (kept and given[:1].isupper())) and name_chain(value):
                    return "reads"  # passes a (metric) class on and keeps what comes back: self._make_factory(Counter)
        if (last[:1].isupper() or callee.startswith(("self.", "cls."))) and (
                len(args) >= 2 or any(k.arg in _DOC_KEYWORDS for k in keywords)):
            return "reads"  # constructor-shaped (name and documentation; self._gauge_cls(...)), whatever the name
        for value in values:
            if _name_like(value):
                return "reads"
        strings = self.module.string_names()
        if strings:
            for value in values:
                if value.__class__ is ast.Name and value.id in strings:
                    return "reads"
        if not where.functions:
            return ""
        frame = self._frame(where)
        params = frame.params
        for value in values:
            if value.__class__ is ast.Name:
                if value.id in params:
                    return "forwards"
            elif value.__class__ is ast.Attribute and value.value.__class__ is ast.Name and value.value.id == "self" \
                    and frame.self_attr_from_init_param(value.attr):
                return "forwards"
        return ""


_NoneTest = tuple[Scope, tuple[int, int], tuple[int, int], str, bool]


def _none_tests(index: ModuleIndex) -> list[_NoneTest]:
    """Where code runs only when a name is None, or only when it is not: the branches of every
    ``if NAME is None`` / ``if NAME is not None`` statement, and the rest of a function after such
    an ``if`` (or ``elif``) at its top level whose branch returns or raises. Each: the scope, where
    the code starts and ends, the name, and whether it runs when the name is None."""
    out: list[_NoneTest] = []
    positions = index.positions(ast.If)
    for position, site in zip(positions, index.sites(positions)):
        node = index.nodes[position]
        assert isinstance(node, ast.If)
        tested = _none_test(node.test)
        if tested is None:
            continue
        name, when_none = tested
        for branch, is_none in ((node.body, when_none), (node.orelse, not when_none)):
            if branch:
                out.append((site.scope, _start(branch[0]), _end(branch[-1]), name, is_none))
    for definition in index.of_types(ast.FunctionDef, ast.AsyncFunctionDef):
        scope = index.scopes[definition]
        for statement in getattr(definition, "body"):
            current = statement
            while isinstance(current, ast.If) and current.body \
                    and isinstance(current.body[-1], (ast.Return, ast.Raise)):
                tested = _none_test(current.test)
                if tested is not None:  # past this `if`, its test was false
                    out.append((scope, _end(statement), _end(definition), tested[0], not tested[1]))
                current = current.orelse[0] if len(current.orelse) == 1 else None
    return out


def _annotation_of(name: str, functions: tuple[Function, ...]) -> str:
    """The annotation, dotted, of the innermost enclosing function's parameter ``name`` ("" for
    none, or one that is not a plain or quoted dotted name: ``X | None`` names no one class)."""
    if not functions:
        return ""
    args = functions[-1].args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
        if arg.arg == name and arg.annotation is not None:
            note = arg.annotation
            if isinstance(note, ast.Constant) and isinstance(note.value, str):
                return note.value if _DOTTED.match(note.value) else ""
            return name_chain(note) or ""
    return ""


def _forwards(methods: dict[str, Function]) -> dict[str, str]:
    """A class's methods named like a metric class whose body returns a metric class or a
    ``functools.partial`` of one (``return partial(self.prometheus_client.Histogram, registry=...)``):
    method -> the class returned, dotted as written. ``self.p.X`` reads through method ``p`` when it
    returns a plain name (a property importing the library lazily: ``import prometheus_client; return
    prometheus_client``). Whether the class is a library's is the extract step's to resolve."""
    names = _metric_class_names()
    out: dict[str, str] = {}
    for name, method in methods.items():
        if name not in names:
            continue
        value = _returned(method)
        if isinstance(value, ast.Call) and name_chain(value.func) in _PARTIAL and value.args:
            value = value.args[0]
        text = name_chain(value) if value is not None else None
        if not text:
            continue
        head, _, rest = text.partition(".")
        if head == "self":
            prop, _, rest = rest.partition(".")
            held = _returned(methods[prop]) if prop in methods and rest else None
            if not isinstance(held, ast.Name):
                continue
            text = f"{held.id}.{rest}"
        out[name] = text
    return out


def _returned(function: Function) -> ast.expr | None:
    """What a function's last statement returns, when it is a ``return``."""
    last = function.body[-1] if function.body else None
    return last.value if isinstance(last, ast.Return) else None


def _none_test(test: ast.expr) -> tuple[str, bool] | None:
    """(name, True) for ``name is None``, (name, False) for ``name is not None``."""
    if isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and len(test.ops) == 1 \
            and isinstance(test.ops[0], (ast.Is, ast.IsNot)) and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None:
        return test.left.id, isinstance(test.ops[0], ast.Is)
    return None


def _start(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno"), getattr(node, "col_offset")


def _end(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "end_lineno", None) or getattr(node, "lineno"), getattr(node, "end_col_offset", None) or 0


def _chain(scope: Scope) -> list[Scope]:
    """``scope`` and the scopes it is nested in, innermost first (the module last)."""
    out = []
    current: Scope | None = scope
    while current is not None:
        out.append(current)
        current = current.parent
    return out


def _class_qual(scope: Scope) -> str:
    """A class's name through the classes it is nested in (functions between them left out)."""
    return ".".join(reversed([s.names[-1] for s in _chain(scope) if s.kind == "class"]))


def _table_loop(loop: ast.For) -> tuple[str, str]:
    """(the variable holding each entry, the table's dotted name) of ``for k, v in T.items()`` /
    ``for v in T.values()``; ("", "") for any other loop."""
    it, target = loop.iter, loop.target
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and not it.args and not it.keywords):
        return "", ""
    table = name_chain(it.func.value) or ""
    if it.func.attr == "items" and isinstance(target, ast.Tuple) and len(target.elts) == 2 \
            and isinstance(target.elts[1], ast.Name):
        return target.elts[1].id, table
    if it.func.attr == "values" and isinstance(target, ast.Name):
        return target.id, table
    return "", ""


def _field_key(expr: ast.expr, var: str) -> str:
    """``key`` of ``var["key"]``, else ""."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) and expr.value.id == var \
            and isinstance(expr.slice, ast.Constant) and isinstance(expr.slice.value, str):
        return expr.slice.value
    return ""


def _enclosing_class(scope: Scope | None) -> ast.AST | None:
    """The node of the innermost class ``scope`` is in (itself included), else None."""
    while scope is not None:
        if scope.kind == "class":
            return scope.node
        scope = scope.parent
    return None


def _last_part(named: ast.expr) -> str:
    """The last part of a Name's or an Attribute's dotted text."""
    return named.id if named.__class__ is ast.Name else named.attr  # type: ignore[attr-defined]


def _callee(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) \
            and isinstance(func.value.func, ast.Name) and func.value.func.id == "super":
        return "super()." + func.attr
    return _entry(func)


def _entry(expr: ast.expr) -> str | None:
    """A dotted name, or a dict entry of one under a constant key (``self._factories["counter"]``)."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) \
            and isinstance(expr.slice.value, str) and _DICT_KEY.match(expr.slice.value):
        held = name_chain(expr.value)
        return f"{held}[{expr.slice.value!r}]" if held else None
    return name_chain(expr)


def _may_make(value: ast.expr, owner: Function, nested: dict[tuple[int, str], ast.AST]) -> bool:
    """Whether a returned value has a shape :meth:`_Collector._made` reads (a nested def's name, a
    lambda, a ``functools.partial`` of a name): the others are passed over before the function's
    parameters are read."""
    if value.__class__ is ast.Name:
        return (id(owner), value.id) in nested
    if value.__class__ is ast.Call:
        return bool(value.args) and name_chain(value.func) in _PARTIAL
    return value.__class__ is ast.Lambda


def _calling(owner: ast.AST, names: set[str]) -> ast.Call | None:
    """The first call (by line) inside ``owner`` whose callee is one of ``names``."""
    calls = [n for n in ast.walk(owner) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
             and n.func.id in names]
    return min(calls, key=lambda c: (c.lineno, c.col_offset)) if calls else None


def _lambda_params(args: ast.arguments) -> tuple[tuple[str, str], ...]:
    out = [(a.arg, "pos") for a in args.posonlyargs + args.args]
    if args.vararg:
        out.append((args.vararg.arg, "var"))
    out.extend((a.arg, "kwonly") for a in args.kwonlyargs)
    if args.kwarg:
        out.append((args.kwarg.arg, "kw"))
    return tuple(out)


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


def _signature(node: Function, cls_name: str, is_method: bool, frame: Frame) -> Signature:
    params = parameters(node, is_method)
    args = node.args
    defaults: dict[str, Sym] = {}
    positional = [a.arg for a in args.posonlyargs + args.args]
    module_frame = frame.module.frame()
    for name, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        defaults[name] = compile_expr(default, module_frame)
    for arg, given in zip(args.kwonlyargs, args.kw_defaults):
        if given is not None:
            defaults[arg.arg] = compile_expr(given, module_frame)
    return Signature(cls_name, node.lineno, tuple((name, kind) for name, kind in params), defaults)


def _held_on_self(cls: ClassScope, attrs: dict[str, str]) -> dict[str, str]:
    """``self.Histogram = Histogram`` in a method: the attribute holds that name as a class
    attribute would (litellm's services logger keeps its constructors so). Only an attribute that
    the class body leaves unset and that every method sets to the same dotted name: one set to
    two names, or to anything else besides, is no single class."""
    held: dict[str, str] = {}
    for attr, values in cls.self_sets().items():
        if attr in attrs:
            continue
        texts = {name_chain(value) if isinstance(value, _NAMED) else "" for value, _ in values}
        if len(texts) == 1 and (text := texts.pop()) and text.split(".", 1)[0] not in ("self", "cls"):
            held[attr] = text
    return held
