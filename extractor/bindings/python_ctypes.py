"""ctypes (and cffi's ABI mode): Python calls into a shared library, bound by C name to the
system's own C/C++ function.

Systems that ship their own C or C++ library often reach it without an extension module: they
load the built library with ctypes and call its ``extern "C"`` functions by name
(bitsandbytes' ``lib.cquantize_blockwise_fp16(...)``, llama-cpp-python's ``llama_n_ctx``
declared with ``@ctypes_function("llama_n_ctx", [...], ...)``), or load a library of the
platform the same way (vLLM's tables of ``Function("cudaMalloc", ...)`` for libcudart, its
vendored pynvml's ``_nvmlGetFunctionPointer("nvmlInit_v2")``).

TensorFlow's op libraries too (mechanism "tensorflow-op"): ``tf.load_op_library(path)`` returns a
module whose functions are the ops the library registers, by their names in snake case, bound to
the kernel class's ``Compute`` (:mod:`extractor.cpp.tfops`; FasterTransformer's ``module.t5_decoding``).

TVM FFI's modules are read the same way (mechanism "tvm-ffi-module"): ``tvm_ffi.load_module(path)``
loads a library whose attributes are the functions it exports by a name of its own
(``TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, fn)``, read by the C++ step), bound by that name to the
function exported (FlashInfer builds each module at run time, from sources a Python spec lists:
``gen_topk_module().build_and_load().radix_topk(...)``). A name several libraries export (``run``,
``plan``) is ambiguous, said and not bound; the spec's sources are not read to choose.

What is read (loaders, library classes, declaration attributes, a library's own attributes:
data, ``ctypes.yaml``):

- a library object: a call of a loader (``ctypes.CDLL(path)``, ``ctypes.cdll.LoadLibrary``,
  ``ctypes.PyDLL``/``WinDLL``/``OleDLL``, ``numpy.ctypeslib.load_library``, ``dlopen`` on a
  ``cffi.FFI()``; imported under any name, ``from ctypes import *`` too), held in a module
  variable (``global lib`` in a def included), a local, a class or instance attribute
  (``self.lib = ...``), an item of a container (``cache[path] = lib; self.lib = cache[path]``),
  returned by a function of the system (a loader helper, called from any module; an item of a
  tuple it returns: ``ffi, lib = open_library(path)``; a method of an instance a call returns,
  ``make_spec().build_and_load()``, the instance's class read from what the call returns or from
  its return annotation, a method that returns nothing read, an abstract one, followed into the
  overrides of its subclasses), given to a class of the system whose
  ``__getattr__`` passes attribute reads on to what it holds (a wrapper), or annotated with a
  library class (``def f(lib: ctypes.CDLL)``: loaded where is not read); an instance of a class
  of the system (``C(...)``, ``C.m(...)`` with ``m`` a classmethod: the singleton idiom, or a
  parameter annotated ``C``) whose attribute holds one; names followed through imports;
- the functions of such a library: calls (the Python step's call facts: ``lib.NAME(...)``,
  ``self.lib.NAME(...)``, ``f(...)`` after ``f = lib.NAME``); ``lib.NAME.argtypes = ...`` (and
  ``restype``, ``errcheck``); ``getattr(lib, "NAME")``/``hasattr``; ``lib.NAME`` read without a
  call (kept in a table, as bitsandbytes' optimizer tables do); a def that looks a function of
  the library up by the name it is given (``getattr(lib, name)``), or one made by a factory given
  the library (llama-cpp-python's ``ctypes_function = ctypes_function_for_shared_library(_lib)``),
  called with a literal (``fn("NAME")``) or used as a decorator (``@fn("NAME", ...)``); and
  tables: a ``getattr(lib, item.name)`` in a loop over a list, tuple, set or dict of the file
  whose entries are strings, or calls or tuples whose first argument is one.

The binding: the C name alone decides (C names are global). Which file a load call opens is
usually computed at run time, so it is never used: the library is inferred from the function's
name. The record says so (``namespace: "inferred"``; ``registered_at``: the load call) and so do
the stats (``<mechanism>_library_inferred``: the bound places whose load call does not write the
file as a literal). The target is the system's C/C++ function of that name with C linkage
(declared or defined inside ``extern "C"``, or defined non-static in a ``.c`` file:
``CppShared.c_linkage``), else a defined function of that name at global scope that is not
``static`` only (its linkage assumed: ``<mechanism>_linkage_assumed``). A name with no such
function is outside the system (libcudart's ``cudaMalloc``): counted, never bound. A name with
several is ambiguous: counted and said (an info diagnostic), never guessed; so is a function
whose graph node is a type of the same name (C's ``enum llama_pooling_type`` beside the function
``llama_pooling_type``: one id in the graph). A call binds from its caller; a declaration,
reference, lookup or table entry from the function, class body or module that holds it; a
decorated def from that def, which the decorator replaces with the C function
(``llama_cpp.llama_n_ctx`` called elsewhere reaches C through it).

Per file (:func:`scan_ctypes`, run by the bindings step's Python scanner on files that name
ctypes or cffi): what may hold a library (:class:`Assigned`), the places that name a function
of one (:class:`Use`), the defs that look a function up by a name they are given
(:class:`NamedLookup`) and the classes that pass attribute reads on (:class:`Forwarder`). What
holds a library is decided in the driver (:func:`bind_ctypes`), across files, by following
those facts on demand from each place (memoised; a cycle holds nothing).

Measured: llama-cpp-python 0.3.2 (its sdist vendors llama.cpp) 198 places, all bound but the 3
whose node is a type; vLLM 0.10.2 384 places, all outside (cudart, NCCL, NVML, ROCm, a test's
libcuda), its graph unchanged. On vLLM the scanner costs 0.08 CPU s over its 1,871 files (in the
workers; 10 files have facts) and the driver 0.09 s (in the bindings step's child).
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

from extractor.model import Diagnostic, Edge, EdgeKind, Node, NodeKind, Severity
from extractor.naming import unelaborated
from extractor.python.expr import name_chain
from extractor.support.datafile import load_data_file

RULES_FILE = Path(__file__).with_name("ctypes.yaml")
_NAMES = [str]
RULES_SCHEMA = {"version": int, "loaders": {str: _NAMES}, "loader_methods": {str: {str: str}},
           "library_finders": _NAMES, "library_attributes": _NAMES, "declarations": _NAMES,
           "library_types": {str: _NAMES}, "structures?": {str: _NAMES}}
# Bytes a file holds when it loads a library or names one of its functions (the scanner's filter:
# every loader is imported from ctypes, numpy.ctypeslib or cffi, and a library's functions are
# declared with ctypes' types). A module that only calls a library loaded elsewhere needs no facts
# (its calls are the Python step's); one that holds a library from another module's loader without
# naming any of these is not read (two markers fewer cost vLLM 0.03 s of its 0.07 s). TVM FFI's modules
# are loaded by ``load_module``, and usually held from a helper of the system that loads them, called
# in the modules that call their functions (FlashInfer's ``gen_topk_module().build_and_load()``): a
# file with a call of a name ending in ``_load`` is read too (not every ``json.load(``: vLLM has 138
# files that write ``load(``, 23 ``_load(``, and reading them all cost its bindings step 0.5 CPU s).
MARKERS = (b"ctypes", b"cffi", b"dlopen", b"load_module", b"_load(", b"load_op_library")
CHAINED = "()."  # in a callee, a method of what the call before it returns: ``make().load``

# Forms of an Assigned value
LOAD, CALL, NAME, OTHER = "load", "call", "name", "other"
# Forms of a Use (a call is "call": the Python step's facts)
DECLARATION, GETATTR, REFERENCE, DECORATOR, LOOKUP, TABLE = ("declaration", "getattr", "reference", "decorator",
                                                              "lookup", "table")
_NAMED = (DECORATOR, LOOKUP, TABLE)  # the forms whose C name is a literal of their own (Use.name)
RETURN = "<return>"  # Assigned.target of what a def returns


@dataclasses.dataclass(frozen=True)
class CtypesRules:
    loaders: Mapping[str, str]  # canonical callee -> mechanism
    loader_methods: Mapping[str, tuple[str, str]]  # canonical class -> (method, mechanism)
    library_finders: frozenset[str]
    library_attributes: frozenset[str]
    declarations: frozenset[str]
    library_types: Mapping[str, str]  # canonical class -> mechanism
    structures: Mapping[str, str] = dataclasses.field(default_factory=dict)  # canonical base class -> mechanism

    @property
    def foreign(self) -> frozenset[str]:
        """The top-level modules the loaders live in: what they hold is no library of the system's."""
        return frozenset(name.partition(".")[0] for name in (*self.loaders, *self.loader_methods))


@functools.cache
def load_rules(path: Path = RULES_FILE) -> CtypesRules:
    data = load_data_file(path, RULES_SCHEMA)
    return CtypesRules({name: mechanism for mechanism, names in data["loaders"].items() for name in names},
                       {cls: (method, mechanism) for mechanism, classes in data["loader_methods"].items()
                        for cls, method in classes.items()},
                       frozenset(data["library_finders"]), frozenset(data["library_attributes"]),
                       frozenset(data["declarations"]),
                       {name: mechanism for mechanism, names in data["library_types"].items() for name in names},
                       {name: mechanism for mechanism, names in data.get("structures", {}).items() for name in names})


# -- per-file facts --------------------------------------------------------------------------------


class Assigned(msgspec.Struct, frozen=True, array_like=True, order=True):
    """A name, attribute or container item bound to what may be a library (or, in a def, a local
    bound to anything: it hides the module's name of the same spelling)."""

    scope: str  # the def or class body the statement is in ("" at module level)
    line: int
    target: str  # "lib", "self.lib", "Cls.cache[]" (an item of), RETURN (what the def returns)
    form: str  # LOAD, CALL, NAME or OTHER
    value: str = ""  # LOAD: the mechanism; CALL: the callee as written; NAME: the dotted name read ("x[]": an item)
    args: tuple[str, ...] = ()  # CALL: its positional arguments as dotted names ("" for any other expression)
    library: str = ""  # LOAD: the library as written, when a string literal (or find_library's)
    item: int = -1  # CALL: the item of the call's result bound (``ffi, lib = load()``); -1 the whole


class Use(msgspec.Struct, frozen=True, array_like=True, order=True):
    """A place that names a function of a library without calling it (calls are the Python step's)."""

    scope: str  # where it is: the def, class body or module ("" ) that holds it; a decorated def's own
    line: int
    form: str  # DECLARATION, GETATTR, REFERENCE, DECORATOR, LOOKUP (a call ``fn("NAME")``) or TABLE
    # the function as a dotted name ("lib.foo"); DECORATOR, LOOKUP: the function called; TABLE: the library
    text: str
    name: str = ""  # DECORATOR, LOOKUP, TABLE: the C name, a string literal
    position: int = 0  # DECORATOR, LOOKUP: the literal's place among the call's arguments
    context: str = ""  # DECORATOR, TABLE: the scope ``text`` is read in ("" : ``scope``)


class NamedLookup(msgspec.Struct, frozen=True, array_like=True, order=True):
    """``getattr(lib, name)`` with ``name`` a parameter of an enclosing def: that def looks a
    function of ``lib`` up by the name it is given (a declarator); when ``lib`` is a parameter
    of an enclosing def too, that def makes declarators for the library it is given (a factory)."""

    scope: str  # where the getattr is
    line: int
    holder: str  # ``lib`` as written
    name_def: str  # the qualname of the def whose parameter the name is
    name_position: int
    holder_def: str = ""  # the qualname of the def whose parameter ``holder`` is ("" for none)
    holder_position: int = 0


class Forwarder(msgspec.Struct, frozen=True, array_like=True, order=True):
    """A class whose ``__getattr__`` returns ``getattr(self.<attribute>, name)``."""

    qualname: str
    attribute: str


class Structure(msgspec.Struct, frozen=True, array_like=True, order=True):
    """A class deriving from ``ctypes.Structure`` (or ``Union``): the Python mirror of the C struct
    of its name (its ``_fields_`` given or not: an opaque one is handled by pointer)."""

    qualname: str
    line: int
    mechanism: str


class CtypesFacts(msgspec.Struct, frozen=True, omit_defaults=True):
    assigned: tuple[Assigned, ...] = ()  # sorted, as every field
    uses: tuple[Use, ...] = ()
    lookups: tuple[NamedLookup, ...] = ()
    forwarders: tuple[Forwarder, ...] = ()
    structures: tuple[Structure, ...] = ()


# -- the scanner -----------------------------------------------------------------------------------


def scan_ctypes(index: Any, data: bytes) -> CtypesFacts | None:
    """What one module states of libraries and their functions (see the module docstring);
    None for a file that mentions no loader (``MARKERS``) or states nothing."""
    if not any(marker in data for marker in MARKERS):
        return None
    scan = _Scan(index, load_rules())
    scan.run()
    structures = scan.structures()
    if not (any(a.form != OTHER for a in scan.assigned) or scan.uses or scan.lookups or scan.forwarders
            or structures):
        return None  # a def's locals alone hold nothing
    # a def's local bound to anything else matters where it hides a name the module binds or imports
    hidden = {a.target for a in scan.assigned if not a.scope and a.form != OTHER} | scan.from_imported | \
        set(scan.aliases)
    assigned = {a for a in scan.assigned if a.form != OTHER or a.target in hidden}
    return CtypesFacts(tuple(sorted(assigned)), tuple(sorted(set(scan.uses))),
                       tuple(sorted(set(scan.lookups))), tuple(sorted(set(scan.forwarders))), structures)


_ValueRow = tuple[str, str, tuple[str, ...], str]  # (form, value, args, library)


class _Scan:
    def __init__(self, index: Any, rules: CtypesRules) -> None:
        self.index, self.rules = index, rules
        self.foreign = rules.foreign
        self.aliases: dict[str, str] = {}  # local name -> what an absolute import binds it to
        self.from_imported: set[str] = set()  # names bound by `from ... import name`
        self.module_imports: set[str] = set()  # names bound by `import module`
        self.ffi: dict[str, tuple[str, str]] = {}  # a name holding a cffi.FFI() -> (its loading method, mechanism)
        self.assigned: list[Assigned] = []
        self.uses: list[Use] = []
        self.lookups: list[NamedLookup] = []
        self.forwarders: list[Forwarder] = []
        self.tables: dict[tuple[str, str], ast.expr] = {}  # (scope, name) -> a literal bound to it
        self.globals: set[tuple[str, str]] = set()  # (def, name) the def declares `global`
        self.star_foreign = False  # `from ctypes import *`
        self.bound: frozenset[str] | None = None

    def run(self) -> None:
        index = self.index
        self._imports()
        for position, node in zip(index.positions(ast.Global), index.of(ast.Global)):
            self.globals.update((index.site(position).scope.qualname, name) for name in node.names)
        assigns = [(p, n) for p, n in zip(index.positions(ast.Assign), index.of(ast.Assign))]
        assigns += [(p, n) for p, n in zip(index.positions(ast.AnnAssign), index.of(ast.AnnAssign))
                    if n.value is not None]
        assigns.sort(key=lambda pair: pair[0])
        for position, node in assigns:
            self._ffi_object(node)
            scope = index.site(position).scope
            if isinstance(node.value, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
                for target in _targets(node):
                    if isinstance(target, ast.Name):
                        self.tables[scope.qualname, target.id] = node.value
        for position, node in assigns:
            self._assign(index.site(position).scope, node)
        for position, node in zip(index.positions(ast.Return), index.of(ast.Return)):
            scope = index.site(position).scope
            if node.value is None or scope.kind != "function":
                continue
            items = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            for i, item in enumerate(items):
                returned = RETURN if len(items) == 1 and item is node.value else f"{RETURN}[{i}]"
                for form, value, args, library in self._values(item):
                    if form != OTHER:
                        self.assigned.append(Assigned(scope.qualname, node.lineno, returned, form, value, args,
                                                      library))
        for position, call in zip(index.positions(ast.Call), index.of(ast.Call)):
            if isinstance(call.func, ast.Name) and call.func.id in ("getattr", "hasattr") and len(call.args) >= 2:
                self._getattr(index.site(position).scope, call, call.func.id)
        self._decorators()
        self._lookup_calls()
        self._references()

    def structures(self) -> tuple[Structure, ...]:
        """The classes deriving from a ctypes structure class (or from such a class of the file)."""
        classes = [scope for scope in self.index.scopes.values() if scope.kind == "class"]
        if not classes or not self.rules.structures:
            return ()
        found: dict[str, tuple[Any, str]] = {}  # qualname -> (scope, mechanism)
        helpers = set()  # the file's classes other Structure classes derive from
        for scope in classes:  # in the file's order: a base of the file comes before its subclasses
            for base in scope.node.bases:
                written = name_chain(base) or ""
                mechanism = self.rules.structures.get(self.canonical(written)) or \
                    (found[written][1] if written in found else None)
                if mechanism:
                    found[scope.qualname] = (scope, mechanism)
                    helpers.add(written)
                    break
        # a base without `_fields_` of its own (pynvml's _PrintableStructure) mirrors no struct: it adds methods
        return tuple(sorted(Structure(qualname, scope.node.lineno, mechanism)
                            for qualname, (scope, mechanism) in found.items()
                            if qualname not in helpers or _declares_fields(scope.node)))

    # names ------------------------------------------------------------------------------------

    def _imports(self) -> None:
        for node in self.index.of(ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.partition(".")[0]
                self.aliases[local] = alias.name if alias.asname else local
                self.module_imports.add(local)
        for node in self.index.of(ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    if not node.level and node.module:
                        self._star(node.module)
                    continue
                local = alias.asname or alias.name
                self.from_imported.add(local)
                if not node.level and node.module:
                    self.aliases[local] = f"{node.module}.{alias.name}"

    def _star(self, module: str) -> None:
        """``from ctypes import *`` (pynvml): the names of the rules that module holds, bound bare;
        and any other bare name the file does not bind is taken to be that module's (``c_uint``)."""
        self.star_foreign |= module.partition(".")[0] in self.foreign
        rules = self.rules
        for name in (*rules.loaders, *rules.loader_methods, *rules.library_types, *rules.library_finders,
                     *rules.structures):
            if name.startswith(module + "."):
                first = name[len(module) + 1:].partition(".")[0]
                self.aliases.setdefault(first, f"{module}.{first}")

    def canonical(self, dotted: str) -> str:
        head, dot, rest = dotted.partition(".")
        return self.aliases.get(head, head) + dot + rest

    def _foreign(self, dotted: str) -> bool:
        canonical = self.canonical(dotted)
        if canonical.partition(".")[0] in self.foreign:
            return True
        return self.star_foreign and canonical == dotted and dotted.partition(".")[0] not in self._bound_here()

    def _bound_here(self) -> frozenset[str]:
        """The names the module binds itself: its imports, top-level defs and module-level targets."""
        if self.bound is None:
            names = set(self.aliases) | self.from_imported
            names |= {scope.node.name for scope in self.index.scopes.values()
                      if scope.parent is not None and scope.parent.kind == "module"}
            for node in (*self.index.of(ast.Assign), *self.index.of(ast.AnnAssign)):
                for target in _targets(node):
                    if isinstance(target, ast.Name):
                        names.add(target.id)
            self.bound = frozenset(names)
        return self.bound

    # what may hold a library ------------------------------------------------------------------

    def _ffi_object(self, node: ast.Assign | ast.AnnAssign) -> None:
        value = node.value
        if isinstance(value, ast.Call) and (callee := name_chain(value.func)) is not None:
            found = self.rules.loader_methods.get(self.canonical(callee))
            if found is not None:
                for target in _targets(node):
                    if isinstance(target, ast.Name):
                        self.ffi[target.id] = found

    def _values(self, expr: ast.expr) -> list[_ValueRow]:
        """What ``expr`` may evaluate to, as the facts spell it: each alternative of ``a or b``
        and of ``a if c else b``."""
        if isinstance(expr, ast.BoolOp):
            return [row for operand in expr.values for row in self._values(operand)]
        if isinstance(expr, ast.IfExp):
            return self._values(expr.body) + self._values(expr.orelse)
        if isinstance(expr, ast.Call):
            return [self._call_value(expr)]
        if isinstance(expr, ast.Subscript):
            base = name_chain(expr.value)
            return [(NAME, base + "[]", (), "")] if base and not self._foreign(base) else [(OTHER, "", (), "")]
        chain = name_chain(expr)
        if chain is not None and not self._foreign(chain):
            return [(NAME, chain, (), "")]
        return [(OTHER, "", (), "")]

    def _call_value(self, call: ast.Call) -> _ValueRow:
        func = call.func
        callee = name_chain(func)
        if callee is None and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) \
                and (maker := name_chain(func.value.func)) is not None and not self._foreign(maker) \
                and maker not in self.ffi:
            # `make_spec().build_and_load()`: a method of what a call of the system returns
            return (CALL, f"{maker}{CHAINED}{func.attr}", tuple(name_chain(arg) or "" for arg in call.args), "")
        if callee is None:
            # `cffi.FFI().dlopen(path)`
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
                maker = name_chain(func.value.func)
                found = self.rules.loader_methods.get(self.canonical(maker)) if maker else None
                if found is not None and found[0] == func.attr:
                    return (LOAD, found[1], (), self._library(call))
            return (OTHER, "", (), "")
        mechanism = self.rules.loaders.get(self.canonical(callee))
        if mechanism is not None:
            return (LOAD, mechanism, (), self._library(call))
        owner, _, method = callee.rpartition(".")
        if owner in self.ffi and self.ffi[owner][0] == method:
            return (LOAD, self.ffi[owner][1], (), self._library(call))
        if callee == "getattr" and len(call.args) >= 2 and (text := _literal(call.args[1])) is not None:
            holder = name_chain(call.args[0])
            return (NAME, f"{holder}.{text}", (), "") if holder and text.isidentifier() else (OTHER, "", (), "")
        if self._foreign(callee):
            return (OTHER, "", (), "")
        return (CALL, callee, tuple(name_chain(arg) or "" for arg in call.args), "")

    def _library(self, call: ast.Call) -> str:
        """The library a loader is given, when the call writes it as a literal (or as
        ``find_library``'s)."""
        arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "name"), None)
        if isinstance(arg, ast.Call) and (finder := name_chain(arg.func)) is not None and arg.args \
                and self.canonical(finder) in self.rules.library_finders:
            arg = arg.args[0]
        text = _literal(arg) if arg is not None else None
        return text or ""

    def _assign(self, scope: Any, node: ast.Assign | ast.AnnAssign) -> None:
        assert node.value is not None
        for target in _targets(node):
            if isinstance(target, ast.Attribute) and target.attr in self.rules.declarations:
                function = name_chain(target.value)
                if function is not None and not self._foreign(function):
                    self.uses.append(Use(scope.qualname, node.lineno, DECLARATION, function))
                continue
            if not isinstance(target, (ast.Tuple, ast.List)):
                self._bind(scope, node.lineno, _target_text(target), self._values(node.value))
            elif isinstance(node.value, (ast.Tuple, ast.List)) and len(node.value.elts) == len(target.elts):
                for element, value in zip(target.elts, node.value.elts):  # `a, b = x, y`
                    self._bind(scope, node.lineno, _target_text(element), self._values(value))
            else:
                rows = self._values(node.value)
                for i, element in enumerate(target.elts):  # `ffi, lib = load()`: the i-th item of a call's result
                    self._bind(scope, node.lineno, _target_text(element), rows, i)

    def _bind(self, scope: Any, line: int, text: str, values: list[_ValueRow], item: int = -1) -> None:
        if not text:
            return
        local = scope.kind == "function" and "." not in text and "[" not in text
        where = scope.qualname
        if local and (where, text) in self.globals:
            # `global lib; lib = CDLL(...)` binds the module's name (its value read in the module too)
            local, where = False, ""
        for form, value, args, library in values:
            if item >= 0 and form != CALL:
                form, value, args, library = OTHER, "", (), ""  # an item of what no call returns: not followed
            if form == OTHER and not local:
                continue  # only a def's locals hide names
            self.assigned.append(Assigned(where, line, text, form, value, args, library, item))

    # lookups by name --------------------------------------------------------------------------

    def _getattr(self, scope: Any, call: ast.Call, builtin: str) -> None:
        """``getattr(lib, "NAME")`` or ``hasattr``; ``getattr(lib, name)`` in a def given the name, in a
        ``__getattr__`` (a wrapper), or in a loop over a table."""
        holder = name_chain(call.args[0])
        if holder is None or self._foreign(holder):
            return
        name = call.args[1]
        text = _literal(name)
        if text is not None:
            if text.isidentifier():
                self.uses.append(Use(scope.qualname, call.lineno, GETATTR, f"{holder}.{text}"))
            return
        if builtin != "getattr":
            return
        # the name an item of a table holds: `getattr(lib, func.name)`, `func` a loop's target
        item = name.value if isinstance(name, (ast.Attribute, ast.Subscript)) else name
        if not isinstance(item, ast.Name):
            return
        if scope.kind == "function" and scope.qualname.endswith(".__getattr__") and holder.startswith("self.") \
                and scope.parent is not None and scope.parent.kind == "class" and item is name \
                and _positional(scope.node)[1:2] == [item.id]:
            self.forwarders.append(Forwarder(scope.parent.qualname, holder[len("self."):]))
            return
        param = _parameter_of(scope, item.id) if item is name else None
        if param is not None:
            owner = _parameter_of(scope, holder.partition(".")[0]) if "." not in holder else None
            if owner is not None and owner[0] != "self":
                self.lookups.append(NamedLookup(scope.qualname, call.lineno, holder, param[0], param[1],
                                                owner[0], owner[1]))
            else:
                self.lookups.append(NamedLookup(scope.qualname, call.lineno, holder, param[0], param[1]))
            return
        for table in self._loop_tables(scope, call, item.id):
            for entry_scope, line, cname in table:
                self.uses.append(Use(entry_scope, line, TABLE, holder, cname, 0, scope.qualname))

    def _loop_tables(self, scope: Any, call: ast.Call, name: str) -> list[list[tuple[str, int, str]]]:
        """The string entries of the tables that a ``for`` loop around ``call`` walks, binding ``name``."""
        found = []
        for position, loop in zip(self.index.positions(ast.For), self.index.of(ast.For)):
            if not (loop.lineno <= call.lineno <= (loop.end_lineno or loop.lineno)):
                continue
            if self.index.site(position).scope is not scope or _first_name(loop.target) != name:
                continue
            iterable = loop.iter
            if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and not iterable.args \
                    and iterable.func.attr in ("items", "keys"):
                iterable = iterable.func.value
            text = name_chain(iterable)
            if text is None:
                continue
            table = self._table(scope, text)
            if table is not None:
                found.append(table)
        return found

    def _table(self, scope: Any, text: str) -> list[tuple[str, int, str]] | None:
        """The string entries of the literal that ``text`` names in the file, with their scope and line."""
        head, _, rest = text.partition(".")
        candidates: list[tuple[str, str]] = []
        if head in ("self", "cls") and rest and "." not in rest:
            owner = scope.parent
            while owner is not None and owner.kind != "class":
                owner = owner.parent
            if owner is not None:
                candidates.append((owner.qualname, rest))
        elif rest and "." not in rest:
            candidates.append((head, rest))  # `Cls.table`, Cls a class of the module's top level
        elif not rest:
            outer = scope
            while outer is not None:
                candidates.append((outer.qualname, head))
                outer = outer.parent
        for where in candidates:
            literal = self.tables.get(where)
            if literal is not None:
                return [(where[0], line, cname) for line, cname in _entries(literal)]
        return None

    def _decorators(self) -> None:
        for node in self.index.of_types(ast.FunctionDef, ast.AsyncFunctionDef):
            scope = self.index.scopes.get(node)
            if scope is None or scope.parent is None:
                continue
            for decorator in node.decorator_list:
                if not isinstance(decorator, ast.Call):
                    continue
                callee = name_chain(decorator.func)
                if callee is None or self._foreign(callee):
                    continue
                for position, arg in enumerate(decorator.args):
                    text = _literal(arg)
                    if text is not None:
                        if text.isidentifier():
                            self.uses.append(Use(scope.qualname, decorator.lineno, DECORATOR, callee, text, position,
                                                 scope.parent.qualname))
                        break

    def _lookup_calls(self) -> None:
        """``fn("NAME")`` where ``fn`` may look a library's function up by the name it is given: a def
        of the file that does (a NamedLookup's), or a name imported from another module."""
        looking = {lookup.name_def for lookup in self.lookups if not lookup.holder_def and "." not in lookup.name_def}
        if not (looking or self.from_imported):
            return
        for position, call in zip(self.index.positions(ast.Call), self.index.of(ast.Call)):
            func = call.func
            if not isinstance(func, ast.Name) or func.id not in looking and func.id not in self.from_imported:
                continue
            for i, arg in enumerate(call.args):
                text = _literal(arg)
                if text is not None:
                    if text.isidentifier():
                        scope = self.index.site(position).scope.qualname
                        self.uses.append(Use(scope, call.lineno, LOOKUP, func.id, text, i))
                    break

    def _references(self) -> None:
        """``lib.NAME`` read without being called, on a name that may hold a library: bound by the
        file, imported by name, or an attribute of ``self`` the file binds."""
        heads = {a.target.partition(".")[0].removesuffix("[]") for a in self.assigned if a.form != OTHER}
        heads |= self.from_imported
        held = {a.target for a in self.assigned if a.form != OTHER and a.target.startswith(("self.", "cls."))}
        index = self.index
        callees = {id(call.func) for call in index.of(ast.Call)}
        inside: set[int] = set()
        for position, node in zip(index.positions(ast.Attribute), index.of(ast.Attribute)):
            if id(node) in inside:
                continue
            inner = node.value
            while isinstance(inner, ast.Attribute):
                inside.add(id(inner))
                inner = inner.value
            if id(node) in callees or not isinstance(node.ctx, ast.Load):
                continue
            chain = name_chain(node)
            if chain is None:
                continue
            holder, _, attr = chain.rpartition(".")
            head = holder.partition(".")[0]
            if head in ("self", "cls"):
                if holder not in held:
                    continue
            elif head not in heads or head in self.module_imports:
                continue  # a module's attribute: its functions are the Python step's
            if attr in self.rules.declarations or attr in self.rules.library_attributes:
                continue
            self.uses.append(Use(index.site(position).scope.qualname, node.lineno, REFERENCE, chain))


def _declares_fields(cls: ast.ClassDef) -> bool:
    return any(isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_fields_"
                                                    for t in node.targets) for node in cls.body)


def _targets(node: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return list(node.targets) if isinstance(node, ast.Assign) else [node.target]


def _target_text(target: ast.expr) -> str:
    """A target as the facts spell it: ``lib``, ``self.lib``, ``cache[]`` (an item of ``cache``); "" for others."""
    if isinstance(target, ast.Subscript):
        base = name_chain(target.value)
        return base + "[]" if base else ""
    return name_chain(target) or ""


def _literal(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _first_name(target: ast.expr) -> str:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, (ast.Tuple, ast.List)) and target.elts and isinstance(target.elts[0], ast.Name):
        return target.elts[0].id
    return ""


def _positional(node: Any) -> list[str]:
    args = node.args
    return [a.arg for a in (*args.posonlyargs, *args.args)]


def _parameter_of(scope: Any, name: str) -> tuple[str, int] | None:
    """(the qualname of the innermost def around ``scope`` with a positional parameter ``name``, its
    position); None when no def around has one (class bodies are not looked through)."""
    while scope is not None and scope.kind == "function":
        params = _positional(scope.node)
        if name in params:
            return scope.qualname, params.index(name)
        scope = scope.parent
    return None


def _entries(literal: ast.expr) -> list[tuple[int, str]]:
    """The C names a table literal holds: its string items, or the first argument of its calls and
    tuples (``Function("cudaMalloc", ...)``, ``("cudaMalloc", ...)``), or a dict's string keys."""
    items = literal.keys if isinstance(literal, ast.Dict) else getattr(literal, "elts", [])
    out = []
    for item in items:
        first: ast.AST | None = item
        if isinstance(item, ast.Call):
            first = item.args[0] if item.args else next((k.value for k in item.keywords if k.arg == "name"), None)
        elif isinstance(item, ast.Tuple):
            first = item.elts[0] if item.elts else None
        text = _literal(first)
        if text is not None and text.isidentifier() and item is not None:
            out.append((item.lineno, text))
    return out


# -- the driver ------------------------------------------------------------------------------------


class CallFact(msgspec.Struct, frozen=True, array_like=True):
    """A call as the Python step's facts state it (CallSite-shaped)."""

    scope: str
    line: int
    callee: str


@dataclasses.dataclass(frozen=True)
class CtypesFile:
    """One Python file as the driver reads it."""

    module: str
    path: str
    facts: CtypesFacts | None  # this scanner's
    calls: tuple[Any, ...]  # the Python step's call facts (scope, line, callee)
    types: tuple[Any, ...]  # the Python step's local types (scope, name, ...): parameters and typed locals
    imported: Mapping[str, str]  # local name -> the dotted name its import binds


@dataclasses.dataclass(frozen=True, slots=True)
class CtypesBinding:
    """A place that names a C function of a loaded library, and what the name found."""

    path: str
    line: int
    caller: str  # the Python node the binding goes from
    callee: str  # as written: "lib.foo", "self.lib.foo"; the C name for a decorator or a table entry
    name: str  # the C name
    form: str  # "call" or a Use form
    mechanism: str  # "ctypes" or "cffi"
    loaded_at: str  # "path:line" of the load call (of the parameter, for one annotated ``ctypes.CDLL``)
    library: str  # the library file as the load call writes it; "" when computed (the usual case)
    target: str  # the C/C++ node id; "" when outside or ambiguous
    # "c" (extern "C" or a C file), "assumed" (a global function), "export" or "unresolved" (a module
    # TVM FFI loads), "" otherwise
    linkage: str
    candidates: int  # the functions the name could be: 0 outside, 1 bound, more ambiguous


@dataclasses.dataclass(frozen=True)
class CtypesResult:
    bindings: tuple[CtypesBinding, ...]  # sorted
    edges: tuple[Edge, ...]
    diagnostics: tuple[Diagnostic, ...]
    stats: dict[str, int]


# What an expression may hold, as the driver finds it
@dataclasses.dataclass(frozen=True)
class _Library:
    site: str  # "path:line" of the load
    mechanism: str
    library: str = ""  # the file the load names, when a literal ("" when computed: inferred by the names)
    wrapper: str = ""  # a class of the system holding it (its own attributes are no C functions)


@dataclasses.dataclass(frozen=True)
class _Instance:
    cls: str  # dotted


@dataclasses.dataclass(frozen=True)
class _Function:
    name: str
    library: _Library


@dataclasses.dataclass(frozen=True)
class _Declarator:
    library: _Library
    position: int  # where the C name is among the decorator's arguments


_Value = _Library | _Instance | _Function | _Declarator
_CALLABLE = (NodeKind.FUNCTION, NodeKind.METHOD)
_AGGREGATES = (NodeKind.STRUCT, NodeKind.UNION, NodeKind.CLASS)
_STRUCTURE = "structure"  # a CtypesBinding's form for a Structure class
# the mechanisms whose libraries hold the functions C++ exports by a name of its own, not C names
EXPORTED = frozenset({"tvm-ffi-module", "tensorflow-op"})
# the mechanism of a C++ export -> that of the library holding it
EXPORTED_BY = {"tvm-ffi-export": "tvm-ffi-module"}
_RANK = {_Function: 4, _Declarator: 3, _Library: 2, _Instance: 1}


def bind_ctypes(files: Iterable[CtypesFile], nodes: Mapping[str, Node], edges: Iterable[Edge],
                c_nodes: Iterable[Node], c_linkage: frozenset[str], internal: frozenset[str] = frozenset(),
                exports: Mapping[str, Mapping[str, list[str]]] | None = None) -> CtypesResult:
    """Every place that names a function of a library the system loads, bound to the system's
    C/C++ function of that name. ``nodes``, ``edges``: the Python graph's (nodes by id; of the
    edges, the ``inherits`` are read, when a class's bases are asked); ``c_nodes``: the C/C++ step's nodes;
    ``c_linkage``: the ids of the functions with C linkage; ``internal``: of those at global scope
    defined ``static`` only (``CppShared``); ``exports``: by the mechanism of the library that holds
    them, the functions the C++ exports by name (each one's node id, "" when not found): to TVM FFI,
    what a module ``tvm_ffi.load_module`` loads holds; TensorFlow ops' kernels, by the op's Python
    name, what ``tf.load_op_library`` returns holds (:mod:`extractor.cpp.tfops`)."""
    files = sorted(files, key=lambda f: f.path)
    if not any(f.facts is not None for f in files):
        return CtypesResult((), (), (), {})
    return _Libraries(files, nodes, edges, load_rules()).bind(_CIndex(c_nodes, c_linkage, internal, exports))


class _CIndex:
    """The system's functions a library exports by their plain name: those with C linkage, else
    the defined, not only ``static``, functions at global scope (their linkage assumed)."""

    def __init__(self, nodes: Iterable[Node], c_linkage: frozenset[str], internal: frozenset[str],
                 exports: Mapping[str, Mapping[str, list[str]]] | None = None) -> None:
        self.exports = exports or {}
        linked: dict[str, list[str]] = collections.defaultdict(list)
        plain: dict[str, list[str]] = collections.defaultdict(list)
        # structs, unions and classes by name, those at global scope apart: what a ctypes Structure mirrors
        self.aggregates: dict[str, list[str]] = collections.defaultdict(list)
        self.global_aggregates: dict[str, list[str]] = collections.defaultdict(list)
        for n in nodes:
            if n.kind in _AGGREGATES and n.language in ("cpp", "cuda") and "declaration" not in n.tags:
                # a struct a function's name hides is named `struct x` (extractor.cpp.symbols); C's name is `x`
                name = unelaborated(n.name)
                self.aggregates[name].append(n.id)
                if n.qualname == n.name:
                    self.global_aggregates[name].append(n.id)
            if n.kind is not NodeKind.FUNCTION or n.language not in ("cpp", "cuda"):
                continue
            if "declaration" in n.tags:
                continue  # defined by no file of the system
            if n.id in c_linkage:
                linked[n.name].append(n.id)
            elif n.qualname == n.name and n.id not in internal:
                plain[n.name].append(n.id)
        self.linked, self.plain = linked, plain

    def aggregate(self, name: str) -> list[str]:
        """The structs (unions, classes) a ctypes Structure of that name can mirror: those at global
        scope (C's), else any of that name."""
        return sorted(self.global_aggregates.get(name) or self.aggregates.get(name) or ())

    def lookup(self, name: str, mechanism: str = "") -> tuple[list[str], str]:
        """(the candidates, their linkage: "c" or "assumed"; for a module TVM FFI loads, "export", or
        "unresolved" when no exported function was found)."""
        if mechanism in EXPORTED:
            exported = self.exports.get(mechanism, {}).get(name)
            if exported is None:
                return [], ""
            targets = sorted({target for target in exported if target})
            return (targets, "export") if targets else ([], "unresolved")
        found = self.linked.get(name)
        if found:
            return sorted(found), "c"
        found = self.plain.get(name)
        if found:
            return sorted(found), "assumed"
        return [], ""


class _Libraries:
    def __init__(self, files: list[CtypesFile], nodes: Mapping[str, Node], edges: Iterable[Edge],
                 rules: CtypesRules) -> None:
        self.files, self.nodes, self.edges, self.rules = files, nodes, edges, rules
        self.bases: dict[str, list[str]] | None = None  # a class id -> its bases' ids, read once asked
        self.subclasses: dict[str, list[str]] | None = None  # a class (dotted) -> those deriving from it
        self.by_module = {f.module: f for f in files}
        self.assigned: dict[str, list[tuple[CtypesFile, Assigned]]] = collections.defaultdict(list)
        self.locals: dict[tuple[str, str], set[str]] = collections.defaultdict(set)  # (module, def) -> its names
        self.read_locals: set[str] = set()  # the modules whose Python facts' locals are in ``locals``
        self.typed: dict[str, tuple[CtypesFile, Any]] = {}  # key -> the file and local type annotating it
        self.declarators: dict[str, tuple[CtypesFile, NamedLookup]] = {}  # def id -> its lookup
        self.factories: dict[str, NamedLookup] = {}
        self.forwarders: dict[str, str] = {}  # class dotted -> the attribute it passes reads on to
        self.memo: dict[str, _Value | None] = {}
        self.split: dict[str, tuple[str, str]] = {}  # _module_of's answers
        self.loading = frozenset(f.module for f in files if f.facts is not None)
        self.active: set[str] = set()
        for f in files:
            if f.facts is None:
                continue
            for a in f.facts.assigned:
                if a.scope and "." not in a.target and "[" not in a.target and a.target != RETURN \
                        and self._is_function(f.module, a.scope):
                    self.locals[f.module, a.scope].add(a.target)
            for lookup in f.facts.lookups:
                if lookup.holder_def:
                    self.factories[f"{f.module}.{lookup.holder_def}"] = lookup
                else:
                    self.declarators.setdefault(f"{f.module}.{lookup.name_def}", (f, lookup))
            for forwarder in f.facts.forwarders:
                self.forwarders[f"{f.module}.{forwarder.qualname}"] = forwarder.attribute
        for f in files:
            for a in f.facts.assigned if f.facts is not None else ():
                if a.form != OTHER:
                    key = self._target_key(f, a)
                    if key:
                        self.assigned[key].append((f, a))
        self.reaching: dict[str, bool] = {}  # _reaches' answers
        self.members: dict[str, list[str]] | None = None  # a class (or module, def) -> the keys under it

    # scopes and names -------------------------------------------------------------------------

    def _kind(self, module: str, scope: str) -> NodeKind | None:
        node = self.nodes.get(f"py:{module}.{scope}") if scope else None
        return node.kind if node is not None else None

    def _is_function(self, module: str, scope: str) -> bool:
        return bool(scope) and self._kind(module, scope) is not NodeKind.CLASS

    def _functions_around(self, module: str, scope: str) -> list[str]:
        """``scope`` when it is a def, then the defs it is nested in (class bodies are not seen from
        their methods)."""
        parts = scope.split(".<locals>.") if scope else []
        out = [scope] if scope and self._is_function(module, scope) else []
        out += [".<locals>.".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]
        return out

    def _class_of(self, module: str, scope: str) -> str:
        """The class whose method ``scope`` is (or a def nested in one): what ``self`` is."""
        outer = scope.split(".<locals>.")[0]
        owner = outer.rpartition(".")[0]
        return owner if owner and self._kind(module, owner) is NodeKind.CLASS else ""

    def _module_of(self, dotted: str) -> tuple[str, str]:
        """(the longest prefix of ``dotted`` that is a module of the system, the rest)."""
        found = self.split.get(dotted)
        if found is not None:
            return found
        parts = dotted.split(".")
        found = ("", dotted)
        for cut in range(len(parts), 0, -1):
            module = ".".join(parts[:cut])
            if module in self.by_module or f"py:{module}" in self.nodes and \
                    self.nodes[f"py:{module}"].kind is NodeKind.MODULE:
                found = (module, ".".join(parts[cut:]))
                break
        self.split[dotted] = found
        return found

    def _canonical(self, dotted: str) -> str:
        """``dotted`` with the names modules import from others written out (a re-export)."""
        for _ in range(8):
            module, rest = self._module_of(dotted)
            f = self.by_module.get(module)
            if f is None or not rest:
                return dotted
            head, dot, tail = rest.partition(".")
            target = f.imported.get(head)
            if target is None:
                return dotted
            dotted = target + dot + tail
        return dotted

    def key(self, f: CtypesFile, scope: str, text: str) -> str:
        """The dotted name, across the system, that ``text`` read in ``scope`` of ``f`` stands for:
        ``module.name``, ``module.Class.attribute``, ``module.f.<locals>.name``; ``[]`` kept."""
        suffix = "[]" if text.endswith("[]") else ""
        text = text.removesuffix("[]")
        head, dot, rest = text.partition(".")
        module = f.module
        if head in ("self", "cls") and rest:
            owner = self._class_of(module, scope)
            return f"{module}.{owner}.{rest}{suffix}" if owner else ""
        if module not in self.read_locals:
            self._read_locals(f)
        for function in self._functions_around(module, scope):
            if head in self.locals.get((module, function), ()):
                return f"{module}.{function}.<locals>.{text}{suffix}"
        if scope and self._kind(module, scope) is NodeKind.CLASS and f"{module}.{scope}.{head}" in self.assigned:
            return f"{module}.{scope}.{text}{suffix}"
        if head in f.imported and f"{module}.{head}" not in self.assigned:
            return self._canonical(f.imported[head] + dot + rest) + suffix
        return self._canonical(f"{module}.{text}") + suffix

    def _read_locals(self, f: CtypesFile) -> None:
        """A def's parameters and typed locals, from the Python step's facts, read once needed (with
        the types of those annotated, and of ``self.x`` where the code says)."""
        if f.module in self.read_locals:
            return
        self.read_locals.add(f.module)
        for local in f.types:
            if not local.name.startswith("self."):
                self.locals[f.module, local.scope].add(local.name)
                if local.type:
                    self.typed.setdefault(f"{f.module}.{local.scope}.<locals>.{local.name}", (f, local))
            elif local.type and (owner := self._class_of(f.module, local.scope)):
                self.typed.setdefault(f"{f.module}.{owner}.{local.name[len('self.'):]}", (f, local))

    def _typed(self, f: CtypesFile, local: Any) -> _Value | None:
        """What a name annotated with ``local.type`` holds: a library when the type is a loader's
        class (``lib: ctypes.CDLL``, where the library comes from is not read), an instance of a class
        of the system."""
        mechanism = self._library_type(f, local.type)
        if mechanism is not None:
            return _Library(f"{f.path}:{local.line}", mechanism)
        key = self.key(f, "", local.type)
        node = self.nodes.get(f"py:{key}") if key else None
        return _Instance(key) if node is not None and node.kind is NodeKind.CLASS else None

    def _library_type(self, f: CtypesFile, written: str) -> str | None:
        """The mechanism whose library objects are of the class ``written`` names in ``f``, if any."""
        head, dot, rest = written.partition(".")
        return self.rules.library_types.get(f.imported.get(head, head) + dot + rest)

    def _target_key(self, f: CtypesFile, a: Assigned) -> str:
        if a.target.startswith(RETURN):
            return f"{f.module}.{a.scope}.{a.target}"
        if "." not in a.target and "[" not in a.target:
            if not a.scope:
                return f"{f.module}.{a.target}"
            if self._kind(f.module, a.scope) is NodeKind.CLASS:
                return f"{f.module}.{a.scope}.{a.target}"
            return f"{f.module}.{a.scope}.<locals>.{a.target}"
        return self.key(f, a.scope, a.target)

    # what a name holds -------------------------------------------------------------------------

    def evaluate(self, key: str) -> _Value | None:
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            return None  # a cycle: what it holds comes from elsewhere or nowhere
        self.active.add(key)
        found: _Value | None = None
        for f, a in self.assigned.get(key, ()):
            value = self._value(f, a)
            if value is not None and (found is None or _RANK[type(value)] > _RANK[type(found)]):
                found = value
        if found is None:
            # an annotated parameter or attribute (`lib: ctypes.CDLL`, `session: Session`): read in
            # the files that name ctypes or cffi only
            module = self._module_of(key)[0]
            if module in self.loading and module not in self.read_locals:
                self._read_locals(self.by_module[module])
            if key in self.typed:
                found = self._typed(*self.typed[key])
        if found is None and key in self.declarators:
            f, lookup = self.declarators[key]
            library = self.read(f, lookup.scope, lookup.holder)
            if isinstance(library, _Library):
                found = _Declarator(library, lookup.name_position)
        self.active.discard(key)
        self.memo[key] = found
        return found

    def _value(self, f: CtypesFile, a: Assigned) -> _Value | None:
        if a.form == LOAD:
            return _Library(f"{f.path}:{a.line}", a.value, a.library)
        if a.form == NAME:
            return self.read(f, a.scope, a.value)
        if a.form == CALL:
            return self._call(f, a.scope, a.value, a.args, a.item)
        return None

    def read(self, f: CtypesFile, scope: str, text: str) -> _Value | None:
        """What ``text`` (a dotted name, ``x[]`` an item of ``x``) holds, read in ``scope`` of ``f``."""
        if text.endswith("()"):  # what a call returns: `get_module().run` read in a call's callee
            return self._call(f, scope, text[:-2], ())
        key = self.key(f, scope, text)
        if key:
            value = self.evaluate(key)
            if value is not None:
                return value
        if text.endswith("[]"):
            return None
        base, dot, last = text.rpartition(".")
        if not dot:
            return None
        held = self.read(f, scope, base)
        if isinstance(held, _Library):
            return self._function(held, last)
        if isinstance(held, _Instance):
            return self._attribute(held.cls, last)
        return None

    def _function(self, library: _Library, name: str) -> _Function | None:
        if name in self.rules.library_attributes or library.wrapper and self._defines(library.wrapper, name):
            return None
        return _Function(name, library)

    def _lineage(self, cls: str) -> list[str]:
        out: list[str] = []
        pending = [cls]
        while pending and len(out) < 32:
            current = pending.pop(0)
            if current not in out:
                out.append(current)
                pending.extend(b.removeprefix("py:") for b in self._bases().get(f"py:{current}", ()))
        return out

    def _bases(self) -> dict[str, list[str]]:
        if self.bases is None:
            self.bases = collections.defaultdict(list)
            for edge in self.edges:
                if edge.kind is EdgeKind.INHERITS:
                    self.bases[edge.source].append(edge.target)
        return self.bases

    def _defines(self, cls: str, name: str) -> bool:
        return any(f"py:{c}.{name}" in self.nodes for c in self._lineage(cls))

    def _attribute(self, cls: str, name: str) -> _Value | None:
        lineage = self._lineage(cls)
        for c in lineage:
            value = self.evaluate(f"{c}.{name}")
            if value is not None:
                return value
        for c in lineage:
            attribute = self.forwarders.get(c)
            if attribute is not None and not self._defines(cls, name):
                held = self._attribute(cls, attribute) if attribute != name else None
                if isinstance(held, _Library):
                    return self._function(dataclasses.replace(held, wrapper=cls), name)
        return None

    def _call(self, f: CtypesFile, scope: str, callee: str, args: tuple[str, ...], item: int = -1) -> _Value | None:
        """What a call of ``callee`` returns (``item``: the item of it taken, -1 the whole)."""
        if CHAINED in callee:
            # a method of what the call before returns: of an instance of a class of the system
            maker, _, method = callee.rpartition(CHAINED)
            made = self._call(f, scope, maker, ())
            if not isinstance(made, _Instance) or item >= 0:
                return None
            return next((value for c in self._lineage(made.cls) if f"py:{c}.{method}" in self.nodes
                         for value in [self._returned(f"{c}.{method}")] if value is not None), None)
        key = self.key(f, scope, callee)
        node = self.nodes.get(f"py:{key}") if key else None
        if node is None:
            return None
        if item >= 0:
            return self.evaluate(f"{key}.{RETURN}[{item}]") if node.kind in _CALLABLE else None
        if node.kind is NodeKind.CLASS:
            if self.forwarders and any(c in self.forwarders for c in self._lineage(key)):
                for arg in args:
                    held = self.read(f, scope, arg) if arg else None
                    if isinstance(held, _Library):
                        return dataclasses.replace(held, wrapper=key)
            return _Instance(key)
        if node.kind not in _CALLABLE:
            return None
        returned = self._returned(key)
        if returned is not None:
            return returned
        factory = self.factories.get(key)
        if factory is not None and factory.holder_position < len(args) and args[factory.holder_position]:
            held = self.read(f, scope, args[factory.holder_position])
            if isinstance(held, _Library):
                return _Declarator(held, factory.name_position)
        owner = key.rpartition(".")[0]
        if "classmethod" in node.tags and self._kind(*self._module_of(owner)) is NodeKind.CLASS:
            return _Instance(owner)  # `Cls.get_instance()`: the singleton idiom
        return self._annotated(key, node.returns)

    def _annotated(self, function: str, returns: str) -> _Instance | None:
        """An instance of the class of the system a def's return annotation names (``-> JitSpec``,
        ``-> "JitSpec"``), read in the def's module; None for any other annotation."""
        written = returns.strip("'\"")
        module = self._module_of(function)[0]
        f = self.by_module.get(module)
        if not written or f is None or not all(part.isidentifier() for part in written.split(".")):
            return None
        key = self.key(f, "", written)
        node = self.nodes.get(f"py:{key}") if key else None
        return _Instance(key) if node is not None and node.kind is NodeKind.CLASS else None

    def _returned(self, function: str) -> _Value | None:
        """What the def ``function`` returns; for a method that returns nothing that is read (an
        abstract one, `self.load()` in a base class), what its overrides in subclasses return, the
        first of them in name order."""
        returned = self.evaluate(f"{function}.{RETURN}")
        node = self.nodes.get(f"py:{function}")
        if returned is not None or node is None or node.kind is not NodeKind.METHOD:
            return returned
        owner, _, method = function.rpartition(".")
        for sub in self._descendants(owner):
            if f"py:{sub}.{method}" in self.nodes:
                returned = self.evaluate(f"{sub}.{method}.{RETURN}")
                if returned is not None:
                    return returned
        return None

    def _descendants(self, cls: str) -> list[str]:
        """The classes deriving from ``cls``, at any depth, in name order."""
        if self.subclasses is None:
            self.subclasses = collections.defaultdict(list)
            for source, targets in self._bases().items():
                for target in targets:
                    self.subclasses[target.removeprefix("py:")].append(source.removeprefix("py:"))
        found: set[str] = set()
        pending = [cls]
        while pending and len(found) < 64:
            for sub in self.subclasses.get(pending.pop(), ()):
                if sub not in found:
                    found.add(sub)
                    pending.append(sub)
        return sorted(found)

    # the places that name a function ----------------------------------------------------------

    def _heads(self, f: CtypesFile) -> frozenset[str]:
        """The first names of the calls in ``f`` worth reading: those the file's ctypes facts bind
        and ``self`` (a file that names ctypes), and the names it imports that reach a library
        (reading every call of every import of a module with facts cost vLLM 0.2 s)."""
        heads = {head for head, dotted in f.imported.items() if self._reaches(dotted)}
        if f.facts is not None:
            heads |= {a.target.partition(".")[0].removesuffix("[]") for a in f.facts.assigned}
            heads |= {use.text.partition(".")[0] for use in f.facts.uses}
            heads |= {local.name for local in f.types if local.type and self._library_type(f, local.type)}
            heads |= {"self", "cls"}
        return frozenset(heads)

    def _reaches(self, dotted: str) -> bool:
        """Whether an import of ``dotted`` brings something that leads to a library: a name bound
        to one (or to a function of one, a declarator), a function returning one, a class with a
        library attribute, a module binding any of these."""
        found = self.reaching.get(dotted)
        if found is None:
            self.reaching[dotted] = False  # a cycle of imports reaches nothing more
            # what is imported is a module with facts or a name of one (most are neither: at once)
            module, rest = self._module_of(dotted) if dotted in self.loading or \
                dotted.rpartition(".")[0] in self.loading else ("", "")
            if module not in self.loading:
                found = False
            elif not rest:
                found = any(self._reaches(f"{module}.{key[len(module) + 1:].partition('.')[0]}")
                            for key in self.assigned if key.startswith(module + ".") and ".<locals>." not in key)
            elif dotted in self.declarators or dotted in self.factories:
                found = True
            else:
                value = self.evaluate(dotted) or self.evaluate(f"{dotted}.{RETURN}")
                if isinstance(value, _Instance):
                    found = self._holds_library(value.cls)
                else:
                    found = value is not None or self._kind(module, rest) is NodeKind.CLASS and \
                        self._holds_library(dotted)
            self.reaching[dotted] = found
        return found

    def _holds_library(self, cls: str) -> bool:
        """Whether an attribute of the class (or of a base) holds a library, or it forwards to one."""
        if self.members is None:
            self.members = collections.defaultdict(list)
            for key in self.assigned:
                owner, _, attribute = key.removesuffix("[]").rpartition(".")
                self.members[owner].append(key)
        return any(c in self.forwarders or any(isinstance(self.evaluate(key), (_Library, _Function))
                                               for key in self.members.get(c, ()))
                   for c in self._lineage(cls))

    def bind(self, c_index: _CIndex) -> CtypesResult:
        found: list[CtypesBinding] = []
        stats: collections.Counter[str] = collections.Counter()
        for f in self.files:
            for a in f.facts.assigned if f.facts is not None else ():
                if a.form == LOAD:
                    stats[f"{a.value.replace('-', '_')}_libraries_loaded"] += 1
                    stats[f"{a.value.replace('-', '_')}_libraries_named"] += bool(a.library)
            module_id = f"py:{f.module}"
            heads = self._heads(f)
            places: list[tuple[str, int, str, str, _Function]] = []  # (scope, line, written, form, function)
            for call in f.calls if heads else ():
                if call.callee and call.callee.partition(".")[0].removesuffix("()") in heads:
                    value = self.read(f, call.scope, call.callee)
                    if isinstance(value, _Function):
                        places.append((call.scope, call.line, call.callee, "call", value))
            for use in f.facts.uses if f.facts is not None else ():
                function = self._use(f, use)
                if function is not None:
                    places.append((use.scope, use.line, use.text if use.form not in _NAMED else use.name,
                                   use.form, function))
            for scope, line, written, form, function in places:
                caller = f"{module_id}.{scope}" if scope else module_id
                if caller not in self.nodes:
                    caller = module_id
                targets, linkage = c_index.lookup(function.name, function.library.mechanism)
                target = targets[0] if len(targets) == 1 else ""
                library = function.library
                found.append(CtypesBinding(f.path, line, caller, written, function.name, form, library.mechanism,
                                           library.site, library.library, target,
                                           linkage if target or linkage == "unresolved" else "",
                                           len(targets)))
            for structure in f.facts.structures if f.facts is not None else ():
                name = structure.qualname.rpartition(".")[2]
                targets = c_index.aggregate(name)
                found.append(CtypesBinding(f.path, structure.line, f"{module_id}.{structure.qualname}", name, name,
                                           _STRUCTURE, structure.mechanism, "", "",
                                           targets[0] if len(targets) == 1 else "", "", len(targets)))
        found = sorted(set(found), key=lambda b: (b.path, b.line, b.caller, b.callee, b.form, b.target))
        diagnostics: list[Diagnostic] = []
        outside: dict[str, set[str]] = collections.defaultdict(set)
        for b in found:
            if b.form == _STRUCTURE:
                self._structure_stats(b, stats, diagnostics)
                continue
            family = "calls" if b.form == "call" else "names"
            key = b.mechanism.replace("-", "_")  # stats keys are identifiers
            what = "the function the library exports as" if b.mechanism in EXPORTED else "the C function"
            if b.target:
                stats[f"{key}_{family}_bound"] += 1
                stats[f"{key}_linkage_assumed"] += b.linkage == "assumed"
                # the library file is computed at run time: which it is was inferred from the C name alone
                stats[f"{key}_library_inferred"] += not b.library
            elif b.candidates:
                stats[f"{key}_{family}_ambiguous"] += 1
                diagnostics.append(Diagnostic(b.path, b.line, f"{b.mechanism}-ambiguous",
                                              f"{b.callee} names {what} {b.name}, which {b.candidates} "
                                              "functions of the system could be: not bound", Severity.INFO))
            elif b.linkage == "unresolved":
                stats[f"{key}_{family}_unresolved"] += 1
            else:
                stats[f"{key}_{family}_outside"] += 1
                outside[key].add(b.name)
        for mechanism, names in outside.items():
            stats[f"{mechanism}_functions_outside"] = len(names)
        edges = sorted({Edge(b.caller, b.target, EdgeKind.BINDS, b.path, b.line) for b in found if b.target})
        return CtypesResult(tuple(found), tuple(edges), tuple(sorted(set(diagnostics))),
                            {k: v for k, v in sorted(stats.items()) if v})

    @staticmethod
    def _structure_stats(b: CtypesBinding, stats: collections.Counter[str], diagnostics: list[Diagnostic]) -> None:
        """A Structure class mirrors the system's struct of its name: bound, ambiguous (said) or outside."""
        if b.target:
            stats[f"{b.mechanism}_structures_bound"] += 1
        elif b.candidates:
            stats[f"{b.mechanism}_structures_ambiguous"] += 1
            diagnostics.append(Diagnostic(b.path, b.line, f"{b.mechanism}-ambiguous",
                                          f"the Structure class {b.name} mirrors a C struct of that name, which "
                                          f"{b.candidates} structs or classes of the system could be: not bound",
                                          Severity.INFO))
        else:
            stats[f"{b.mechanism}_structures_outside"] += 1

    def _use(self, f: CtypesFile, use: Use) -> _Function | None:
        if use.form in (DECORATOR, LOOKUP):
            declarator = self.read(f, use.context if use.form == DECORATOR else use.scope, use.text)
            if isinstance(declarator, _Declarator) and declarator.position == use.position:
                return _Function(use.name, declarator.library)
            return None
        if use.form == TABLE:
            library = self.read(f, use.context, use.text)
            return self._function(library, use.name) if isinstance(library, _Library) else None
        value = self.read(f, use.scope, use.text)
        return value if isinstance(value, _Function) else None
