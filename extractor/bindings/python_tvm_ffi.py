"""TVM FFI global functions: Python uses bound, by the global's dotted name, to the C++ function
registered under it.

TVM and the systems built on it (mlc-llm, FlashInfer's tvm_ffi, TileLang) join Python to C++
without an extension module: C++ registers a function under a dotted name
(``refl::GlobalDef().def("mlc.serve.create_engine", EngineModule::Create)``,
``TVM_REGISTER_GLOBAL("relax.analysis.X").set_body_typed(X)``; read by the C++ step as
bindings of mechanism "tvm-ffi", :func:`extractor.cpp.registrations.tvm_ffi_registrations`) and
Python asks the runtime's registry for it by that name. Two ways are read (the functions that do
it, under every name the TVM packages give them: data, ``tvm_ffi.yaml``):

- a lookup: ``tvm.get_global_func("mlc.serve.create_engine")`` (``tvm.ffi.``, ``tvm._ffi.``,
  ``tvm_ffi.``, imported under any name), with the name a string literal. It binds from where
  it stands; the function it returns is followed where it is kept in a variable of the module
  (its calls from any def of the module, and from modules that import it), a local of the def
  (its calls in that def) or an attribute of ``self`` (its calls in the methods of the class);
- an API module: a module that runs ``tvm_ffi.init_ffi_api("mlc.serve", __name__)`` (or
  ``tvm._ffi._init_api``, ``tvm.ffi._init_api``, the helper imported bare) has every global
  registered as ``mlc.serve.<name>`` (one more part, no dots) as its attribute ``<name>``, as the
  runtime sets them (a prefix ``tvm.`` is dropped, as the runtime drops it). A call of such an
  attribute (``from . import _ffi_api; _ffi_api.TextData(...)``, ``from ._ffi_api import X; X()``,
  the Python step's call facts, names followed through imports) binds from its caller, and so does
  one handed to a TVM object's constructor (``self.__init_handle_by_constructor__(_ffi_api.TextData,
  text)``, read by this step's scanner: the attribute is called there).

The target is the node the C++ step resolved the registration's function to (a lambda: the
function it wraps, as pybind11's are). A name that no registration of the system provides is
counted (``tvm_ffi_unregistered``: TVM's own ``vm.builtin.*`` in a system that does not vendor
TVM), never guessed; one registered whose function the C++ step did not find is counted apart
(``tvm_ffi_target_unresolved``). Python registers globals too (``@tvm.register_func("name")``,
``@tvm_ffi.register_global_func``): a lookup of such a name binds to the Python function
(mechanism "tvm-ffi-python"), and the registrations are counted (``tvm_ffi_python_globals``);
C++ code that looks a global up (``Function::GetGlobal("name")``) is not read, so no edge goes
from C++ to Python.

An API module may be absent from the tree: tvm-ffi's stub generator writes ``<package>/_ffi_api.py``
(``init_ffi_api("<package>", __name__)``) at build time, and git ignores it (xgrammar). A module the
system imports under such a name (``generated_api_modules``), which it does not hold, is read as the
API module of its package's dotted name when C++ registers globals or object types under it
(counted: ``tvm_ffi_api_modules_generated``). An API module is followed through the modules that
re-export it (``from .base import _core``). Its attributes are the globals under its prefix and the
object types whose type key is there (``_ffi_api.Grammar(...)``: the class that declares
``TVM_FFI_DECLARE_OBJECT_INFO_FINAL("pkg.Grammar", GrammarObj, ...)``); an attribute of one of them
(``_ffi_api.Grammar.from_ebnf``: a static method of the type's ``ObjectDef`` registry, or a global
of a sub-prefix) binds only when registered under that dotted name.

Not read: a name computed at run time (``get_global_func(creator)``), a registry reached through
an expression (``sys.modules["tvm"].get_global_func``), the call form of a registrar
(``register_func("name", f)``), methods of an object type called on its instances.
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import functools
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from extractor.cpp.ops import PyBinding
from extractor.model import Edge, EdgeKind, Node
from extractor.python.expr import name_chain
from extractor.python.index import DECORATOR as IN_DECORATOR
from extractor.support.datafile import load_data_file

RULES_FILE = Path(__file__).with_name("tvm_ffi.yaml")
_NAMES = [str]
RULES_SCHEMA = {"version": int, "lookups": _NAMES, "api_initializers": _NAMES, "dropped_prefixes": _NAMES,
                "registrars": _NAMES, "constructors": _NAMES, "generated_api_modules": _NAMES}
LOOKUP, CONSTRUCTOR = "lookup", "constructor"  # the forms of a GlobalUse


@dataclasses.dataclass(frozen=True)
class TvmFfiRules:
    lookups: frozenset[str]
    api_initializers: frozenset[str]
    dropped_prefixes: tuple[str, ...]
    registrars: frozenset[str]
    constructors: frozenset[str]
    generated_api_modules: frozenset[str]

    # The scanner knows a call by its last name only (the canonical names are the driver's, which
    # reads the file's imports with the package the file is in)
    @functools.cached_property
    def lookup_names(self) -> frozenset[str]:
        return frozenset(n.rpartition(".")[2] for n in self.lookups)

    @functools.cached_property
    def initializer_names(self) -> frozenset[str]:
        return frozenset(n.rpartition(".")[2] for n in self.api_initializers)

    @functools.cached_property
    def registrar_names(self) -> frozenset[str]:
        return frozenset(n.rpartition(".")[2] for n in self.registrars)

    @functools.cached_property
    def markers(self) -> tuple[bytes, ...]:
        """Bytes a file holds when it states anything this module reads (the scanner's filter)."""
        return tuple(sorted({n.encode() for n in (*self.lookup_names, *self.initializer_names,
                                                   *self.registrar_names, *self.constructors)}))


@functools.cache
def load_rules(path: Path = RULES_FILE) -> TvmFfiRules:
    data = load_data_file(path, RULES_SCHEMA)
    return TvmFfiRules(frozenset(data["lookups"]), frozenset(data["api_initializers"]),
                       tuple(data["dropped_prefixes"]), frozenset(data["registrars"]), frozenset(data["constructors"]),
                       frozenset(data["generated_api_modules"]))


# -- per-file facts --------------------------------------------------------------------------------


class GlobalUse(msgspec.Struct, frozen=True, array_like=True, order=True):
    """A lookup of a global by name, or a function handed to a TVM object's constructor."""

    scope: str  # the def or class body the call runs in ("" at module level)
    line: int
    form: str  # LOOKUP or CONSTRUCTOR
    callee: str  # LOOKUP: the lookup function as written; CONSTRUCTOR: the argument ("_ffi_api.TextData")
    name: str = ""  # LOOKUP: the global's name, a string literal
    held: str = ""  # LOOKUP: the variable the result is assigned to ("f", "self.f"), "" for none


class ApiInit(msgspec.Struct, frozen=True, array_like=True, order=True):
    """``init_ffi_api("prefix", __name__)``: the globals under ``prefix`` become attributes of a module."""

    line: int
    callee: str  # as written
    prefix: str  # as written (a dropped start still on it)
    module: str = ""  # the module given them, when not the calling one (``__name__``)


class PythonGlobal(msgspec.Struct, frozen=True, array_like=True, order=True):
    """A def registered as a global by a decorator: ``@tvm.register_func("name")``."""

    function: str  # the def's qualname
    line: int
    callee: str  # the decorator as written
    name: str


class TvmFfiFacts(msgspec.Struct, frozen=True, omit_defaults=True):
    uses: tuple[GlobalUse, ...] = ()  # sorted, as every field
    apis: tuple[ApiInit, ...] = ()
    registered: tuple[PythonGlobal, ...] = ()


def scan_tvm_ffi(index: Any, data: bytes) -> TvmFfiFacts | None:
    """What one module states of TVM FFI globals (see the module docstring); None for a file that
    names none of the functions read (``TvmFfiRules.markers``) or states nothing."""
    rules = load_rules()
    if not any(marker in data for marker in rules.markers):
        return None
    held = _held_results(index)
    uses, apis, registered = [], [], []
    for position, call in zip(index.positions(ast.Call), index.of(ast.Call)):
        callee = name_chain(call.func)
        if callee is None or not call.args:
            continue
        last = callee.rpartition(".")[2]
        site = index.site(position)
        if last in rules.constructors:
            handed = name_chain(call.args[0])
            if handed is not None and "." in handed:
                # at the line naming the global (a constructor's arguments often stand on lines of their own)
                uses.append(GlobalUse(site.scope.qualname, call.args[0].lineno, CONSTRUCTOR, handed))
            continue
        name = _literal(call.args[0])
        if not name:
            continue
        if last in rules.initializer_names:
            given = call.args[1] if len(call.args) >= 2 else \
                next((k.value for k in call.keywords if k.arg == "target_module_name"), None)
            # no module given: the runtime sets the attributes on the module the prefix names
            module = name if given is None else _module_argument(given)
            if module is not None:
                apis.append(ApiInit(call.lineno, callee, name, module))
        elif last in rules.registrar_names:
            if site.part == IN_DECORATOR and site.header is not None:
                registered.append(PythonGlobal(site.header.qualname, call.lineno, callee, name))
        elif last in rules.lookup_names:
            uses.append(GlobalUse(site.scope.qualname, call.lineno, LOOKUP, callee, name, held.get(id(call), "")))
    if not (uses or apis or registered):
        return None
    return TvmFfiFacts(tuple(sorted(uses)), tuple(sorted(apis)), tuple(sorted(registered)))


def _literal(node: ast.AST) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def _module_argument(node: ast.AST) -> str | None:
    """"" for ``__name__`` (the calling module), the module a string names, else None (no module argument)."""
    if isinstance(node, ast.Name) and node.id == "__name__":
        return ""
    return _literal(node) or None


def _held_results(index: Any) -> dict[int, str]:
    """id of a call -> the name (``f``) or ``self`` attribute (``self.f``) its result is assigned to."""
    out = {}
    for node in (*index.of(ast.Assign), *index.of(ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not isinstance(node.value, ast.Call) or len(targets) != 1:
            continue
        target = targets[0]
        if isinstance(target, ast.Name):
            out[id(node.value)] = target.id
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            out[id(node.value)] = f"self.{target.attr}"
    return out


# -- the driver ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class TvmFfiFile:
    """One Python module as the driver reads it."""

    module: str
    path: str
    facts: TvmFfiFacts | None
    calls: tuple[Any, ...]  # the Python step's call facts (scope, line, callee)
    imported: Mapping[str, str]  # local name -> the dotted name its import binds


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class TvmFfiBinding:
    path: str  # the Python place
    line: int
    caller: str
    name: str  # the global's dotted name
    target: str  # the C++ node (a Python one for "tvm-ffi-python")
    mechanism: str  # "tvm-ffi" or "tvm-ffi-python"
    registered_at: str  # "cpp/serve/data.cc:85"


@dataclasses.dataclass(frozen=True)
class TvmFfiResult:
    bindings: tuple[TvmFfiBinding, ...]  # sorted
    edges: tuple[Edge, ...]
    stats: dict[str, int]


def bind_tvm_ffi(files: Iterable[TvmFfiFile], registrations: Iterable[PyBinding],
                 nodes: Mapping[str, Node]) -> TvmFfiResult:
    """The places of ``files`` that use a global, bound to what ``registrations`` (the C++ step's
    bindings of mechanism "tvm-ffi") and the Python registrations of ``files`` register under its name."""
    rules = load_rules()
    files = sorted(files, key=lambda f: f.path)
    registry: dict[str, list[PyBinding]] = collections.defaultdict(list)
    for b in registrations:
        registry[b.python_name].append(b)  # `prefix.name`, a class's static `prefix.Class.name`
    stats: collections.Counter[str] = collections.Counter()
    in_python: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)  # name -> (node, "path:line")
    apis: dict[str, set[str]] = collections.defaultdict(set)  # API module -> the prefixes it is given
    for f in files:
        for g in f.facts.registered if f.facts is not None else ():
            if _canonical(g.callee, f.imported) in rules.registrars:
                stats["tvm_ffi_python_globals"] += 1
                in_python[g.name].append((f"py:{f.module}.{g.function}", f"{f.path}:{g.line}"))
        for init in f.facts.apis if f.facts is not None else ():
            if _canonical(init.callee, f.imported) in rules.api_initializers:
                prefix = next((init.prefix[len(p):] for p in rules.dropped_prefixes if init.prefix.startswith(p)),
                              init.prefix)
                apis[init.module or f.module].add(prefix)
    reexported = {f"{f.module}.{local}": dotted for f in files for local, dotted in f.imported.items()}
    generated = _generated_api_modules(files, reexported, {b.module for b in registrations}, rules, apis)
    for module, prefix in generated.items():
        apis[module].add(prefix)
    stats["tvm_ffi_api_modules"] = len(apis)
    stats["tvm_ffi_api_modules_generated"] = len(generated)
    found: set[TvmFfiBinding] = set()

    def bind(f: TvmFfiFile, scope: str, line: int, name: str) -> None:
        caller = f"py:{f.module}.{scope}" if scope else f"py:{f.module}"
        if caller not in nodes:  # a scope the Python step has no node for (a lambda): its module
            caller = f"py:{f.module}"
        registered = registry.get(name, ())
        python = [p for p in in_python.get(name, ()) if p[0] in nodes]
        for b in registered:
            if b.target:
                found.add(TvmFfiBinding(f.path, line, caller, name, b.target, "tvm-ffi", f"{b.path}:{b.line}"))
        for node, at in python:
            found.add(TvmFfiBinding(f.path, line, caller, name, node, "tvm-ffi-python", at))
        if any(b.target for b in registered) or python:
            stats["tvm_ffi_bound"] += 1
        else:
            stats["tvm_ffi_target_unresolved" if registered else "tvm_ffi_unregistered"] += 1

    def api_names(dotted: str) -> list[str]:
        """The globals an API module's attribute is (``pkg._ffi_api.X`` -> ``mlc.serve.X``), the name
        followed through the modules that re-export it (``from .base import _ffi_api``); an attribute
        of an attribute (``_ffi_api.Grammar.from_ebnf``, a class's static method) only when registered."""
        dotted = _through_reexports(dotted, reexported)
        module, _, attribute = dotted.rpartition(".")
        if module in apis:
            return [f"{prefix}.{attribute}" for prefix in sorted(apis[module])]
        parts = dotted.split(".")
        for cut in range(len(parts) - 2, 0, -1):
            module = ".".join(parts[:cut])
            if module in apis:
                named = (".".join([prefix, *parts[cut:]]) for prefix in sorted(apis[module]))
                return [name for name in named if name in registry]
        return []

    held: dict[tuple[str, str, str], str] = {}  # (path, where, variable) -> the global's name
    exported: dict[str, str] = {}  # a module variable's dotted name -> the global's name
    for f in files:
        for use in f.facts.uses if f.facts is not None else ():
            if use.form == LOOKUP and _canonical(use.callee, f.imported) in rules.lookups:
                stats["tvm_ffi_lookups"] += 1
                bind(f, use.scope, use.line, use.name)
                if use.held.startswith("self."):
                    held[f.path, _class_of(use.scope), use.held] = use.name
                elif use.held:
                    held[f.path, use.scope, use.held] = use.name
                    if not use.scope:
                        exported[f"{f.module}.{use.held}"] = use.name
            elif use.form == CONSTRUCTOR:
                for name in api_names(_canonical(use.callee, f.imported)):
                    bind(f, use.scope, use.line, name)
    if not (apis or held):
        return _result(found, stats)  # nothing to follow into calls: a system without TVM skips them
    for f in files:
        for call in f.calls:
            scope, callee = call.scope, call.callee
            if not callee:
                continue
            # a variable of this def, of the module (a plain name), or of self in a method of the class
            kept = held.get((f.path, scope, callee)) or (held.get((f.path, "", callee)) if "." not in callee else
                                                         held.get((f.path, _class_of(scope), callee)))
            if kept:
                bind(f, scope, call.line, kept)
                continue
            if callee.partition(".")[0] not in f.imported:
                continue
            dotted = _canonical(callee, f.imported)
            if dotted in exported:  # a module variable of another module
                bind(f, scope, call.line, exported[dotted])
            for name in api_names(dotted):
                bind(f, scope, call.line, name)
    return _result(found, stats)


def _through_reexports(dotted: str, reexported: Mapping[str, str]) -> str:
    """``dotted`` with its longest prefix that a module of the system binds by an import
    (``pkg.base._core`` of ``from .tvm_ffi_binding import _ffi_api as _core`` in ``pkg/base.py``)
    replaced by what the import binds, again until none is (a few steps at most: no import loops)."""
    for _ in range(8):
        parts = dotted.split(".")
        for cut in range(len(parts), 1, -1):
            target = reexported.get(".".join(parts[:cut]))
            if target is not None and target != ".".join(parts[:cut]):
                dotted = ".".join([target, *parts[cut:]])
                break
        else:
            return dotted
    return dotted


def _generated_api_modules(files: list[TvmFfiFile], reexported: Mapping[str, str], prefixes: set[str],
                           rules: TvmFfiRules, apis: Mapping[str, set[str]]) -> dict[str, str]:
    """The API modules a build generates and the tree does not hold (tvm-ffi's stub generator writes
    ``<package>/_ffi_api.py`` running ``init_ffi_api("<package>", __name__)``; the file is ignored by
    git): a module the system imports, named by ``generated_api_modules``, that is no module of the
    system, whose package's dotted name is a prefix the system registers globals or types under ->
    that prefix."""
    held = {f.module for f in files}
    found: dict[str, str] = {}
    for f in files:
        for dotted in f.imported.values():
            parts = _through_reexports(dotted, reexported).split(".")
            for i in range(1, len(parts)):
                module, package = ".".join(parts[:i + 1]), ".".join(parts[:i])
                if parts[i] in rules.generated_api_modules and module not in held and module not in apis \
                        and package in prefixes:
                    found[module] = package
                    break
    return dict(sorted(found.items()))


def _result(found: set[TvmFfiBinding], stats: collections.Counter[str]) -> TvmFfiResult:
    bindings = tuple(sorted(found))
    edges = tuple(sorted({Edge(b.caller, b.target, EdgeKind.BINDS, b.path, b.line) for b in bindings}))
    return TvmFfiResult(bindings, edges, {key: count for key, count in sorted(stats.items()) if count})


def _canonical(written: str, imported: Mapping[str, str]) -> str:
    """``written`` with its first name replaced by what the file's imports bind it to."""
    head, dot, rest = written.partition(".")
    return imported[head] + dot + rest if head in imported else written


def _class_of(scope: str) -> str:
    """The class a method's qualname names (``Engine.step`` -> ``Engine``); "" for a module-level def."""
    return scope.rpartition(".")[0] if "." in scope else ""
