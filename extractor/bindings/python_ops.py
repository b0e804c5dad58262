"""Torch operators registered in Python: ``torch.ops.<ns>.<op>`` bound to the Python function behind it.

PyTorch lets Python register an operator's implementation as well as C++ does, and serving code
does it for the ops it wants ``torch.compile`` to treat as opaque (vLLM's attention,
``torch.ops.vllm.unified_attention``). The shapes read, from source only:

- ``@torch.library.custom_op("ns::op", mutates_args=...)`` (the name a literal, or an f-string or sum
  of the module's string constants: ``f"{_LIB}::prepare"``) (or ``@custom_op`` imported from
  ``torch.library``) on a def; ``torch.library.impl("ns::op", key, fn)`` and ``@torch.library.impl``
  / ``@torch.library.register_kernel("ns::op", key)`` on a def (``register_fake`` is no
  implementation: it is left out);
- ``lib.impl("op", fn, ...)`` (``op_name=``/``fn=`` as torch names them) where ``lib`` is a
  module-level ``Library("ns", kind)`` of the system;
- forwarders: a function whose parameters reach such an ``impl`` call (vLLM's
  ``direct_register_custom_op(op_name, op_func, ..., target_lib=None)`` doing ``my_lib = target_lib
  or vllm_lib; my_lib.impl(op_name, op_func, ...)``), or reach a call of another forwarder (so
  chains of any depth resolve), and the calls of forwarders with a literal op name;
- a library's registering function that the system calls without defining it (``registrars.yaml``:
  a vLLM plugin such as vllm-ascend registers its ops with vLLM's ``direct_register_custom_op``,
  imported from ``vllm.utils``): a forwarder from the start, its namespace the data file's unless a
  library is handed to it. The system's own function of that name, if it has one, is read instead.

The per-file scanner (:func:`scan_registrations`, run by the bindings step's Python scanner)
records library variables, direct registrations, and the calls that *can* be registrations:
``.impl`` calls on a name, and calls whose callee's head the file defines or imports, with a
string (or a parameter) and a name among their arguments. Which of those calls are forwarders'
is decided in the driver (:func:`python_registrations`), by a fixed point over every file: a call
registers only when its callee resolves, through its file's imports, to a forwarder.

A function reference resolves to a node of the Python graph: a def of the scope chain (the scanner
sees those), else an imported name, ``module.name`` through an import, or ``self.method``. One that
does not is counted and said (an info diagnostic at the registration), never guessed.
"""

from __future__ import annotations

import ast
import collections
import re
import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

import functools
from pathlib import Path

import msgspec

from extractor.model import Diagnostic, Node, NodeKind, Severity
from extractor.python.expr import name_chain
from extractor.support.datafile import load_data_file

# Kinds of an OpArg
STR, PARAM, DEF, REF = "str", "param", "def", "ref"
_OP_NAME = re.compile(r"[A-Za-z_][\w.:]*")  # an operator's name as torch.library takes it
_LIBRARY_CALLS = frozenset({"Library", "library.Library", "torch.library.Library"})
_DECORATORS = {"custom_op": "custom_op", "impl": "impl", "register_kernel": "register_kernel"}
_IMPL_SLOTS = (("0", "op_name"), ("1", "fn"))  # torch.library.Library.impl(self, op_name, fn, dispatch_key="")
_CALLABLE = (NodeKind.FUNCTION, NodeKind.METHOD)  # what an operator's function is in the Python graph


class OpArg(msgspec.Struct, frozen=True, array_like=True, order=True):
    """One argument of a recorded call: its slot ("0", "1", ... or the keyword), and what it is:
    a string literal (STR), a parameter of the enclosing def (PARAM), a def the scope chain holds
    (DEF, its qualname), or a dotted name for the driver to resolve (REF)."""

    slot: str
    kind: str
    value: str


class OpLibrary(msgspec.Struct, frozen=True, array_like=True, order=True):
    """``name = Library("ns", kind)`` at module level."""

    line: int
    name: str
    namespace: str


class OpRegistrationFact(msgspec.Struct, frozen=True, array_like=True, order=True):
    """A registration the file states whole: ``@custom_op("ns::op")`` on a def, ``torch.library.impl``."""

    line: int
    scope: str  # where the function reference is written ("" at module level)
    namespace: str
    op: str
    function: OpArg  # DEF (a qualname of this module) or REF
    how: str  # "custom_op", "impl", "register_kernel"; "" when made through ``via``
    via: str = ""  # the imported name it is made with, which the driver resolves to a module's alias


class OpAlias(msgspec.Struct, frozen=True, array_like=True, order=True):
    """``register_kernel = torch.library.register_kernel`` at module level: a name other modules
    import to register with (bitsandbytes' ``_ops.register_kernel``)."""

    line: int
    name: str
    how: str  # the torch.library function's name, as _DECORATORS spells it


class OpCall(msgspec.Struct, frozen=True, array_like=True, order=True):
    """A call that can register an operator: ``lib.impl(...)`` (``receivers``: the names ``lib`` can
    be, ``target_lib or vllm_lib`` gives both) or a call of what may be a forwarder (no receivers)."""

    line: int
    scope: str  # qualname of the enclosing def; "" at module level
    callee: OpArg  # DEF or REF; for an ``.impl`` call the receiver's text + ".impl"
    args: tuple[OpArg, ...]
    receivers: tuple[str, ...] = ()


class OpDef(msgspec.Struct, frozen=True, array_like=True, order=True):
    """The parameters of a def that holds a recorded call (a forwarder, perhaps)."""

    qualname: str
    line: int
    positional: tuple[str, ...]
    keyword_only: tuple[str, ...]


class OpRegistrations(msgspec.Struct, frozen=True):
    libraries: tuple[OpLibrary, ...] = ()
    registrations: tuple[OpRegistrationFact, ...] = ()
    calls: tuple[OpCall, ...] = ()
    defs: tuple[OpDef, ...] = ()
    aliases: tuple[OpAlias, ...] = ()


# -- the scanner ---------------------------------------------------------------------------------


def scan_registrations(index: Any) -> OpRegistrations | None:
    """What one module states of operator registrations (see the module docstring)."""
    scan = _Scan(index)
    libraries = scan.libraries()
    registrations = scan.decorated() + scan.torch_library_impls()
    calls = scan.calls()
    if not (libraries or registrations or calls or scan.aliases):
        return None
    holders = {call.scope for call in calls}
    defs = tuple(sorted(scan.op_def(scope) for scope in index.scopes.values()
                        if scope.kind == "function" and scope.qualname in holders))
    return OpRegistrations(tuple(sorted(libraries)), tuple(sorted(registrations)), tuple(sorted(calls)), defs,
                           tuple(sorted(scan.aliases)))


class _Scan:
    def __init__(self, index: Any) -> None:
        self.index = index
        self.imported: set[str] = set()
        self.torch_library: dict[str, str] = {}  # local name -> its name in torch.library ("custom_op")
        self.library_modules = {"torch.library"}  # how the file names torch.library
        for node in index.of(ast.Import):
            for alias in node.names:
                self.imported.add(alias.asname or alias.name.split(".")[0])
                if alias.name == "torch.library" and alias.asname:
                    self.library_modules.add(alias.asname)
        for node in index.of(ast.ImportFrom):
            for alias in node.names:
                self.imported.add(alias.asname or alias.name)
                if node.module == "torch.library" and not node.level:
                    self.torch_library[alias.asname or alias.name] = alias.name
                elif node.module == "torch" and alias.name == "library" and not node.level:
                    self.library_modules.add(alias.asname or "library")
        self.aliases = self._aliases()
        self.constants = _string_constants(index.tree)
        self._params: dict[int, set[str]] = {}  # id of a function node -> its parameter names
        # the names a call can start with to reach a forwarder: imported, or a def of the file
        self.callable_heads = self.imported | {scope.node.name for scope in index.scopes.values()
                                               if scope.parent is not None}
        # def names per scope: scope node -> name -> qualname
        self.defs: dict[int, dict[str, str]] = collections.defaultdict(dict)
        for scope in index.scopes.values():
            if scope.parent is not None:
                self.defs[id(scope.parent.node)].setdefault(scope.node.name, scope.qualname)

    def _aliases(self) -> list[OpAlias]:
        """Module-level names bound to a registering function of torch.library (``register_kernel =
        torch.library.register_kernel``): the file's own uses read them as torch's, and other modules'
        imports of them are resolved by the driver. A binding in a branch counts (flash-attention's
        ``if torch.__version__ >= "2.4.0": _torch_custom_op_wrapper = torch.library.custom_op``, a
        no-op in the other branch): where torch has it, the decorated defs are registered."""
        out = []
        pending = list(self.index.tree.body)
        while pending:
            node = pending.pop(0)
            if isinstance(node, (ast.If, ast.Try, ast.With)):
                pending[:0] = [*node.body, *getattr(node, "orelse", ()), *getattr(node, "finalbody", ()),
                               *(n for handler in getattr(node, "handlers", ()) for n in handler.body)]
                continue
            if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
                continue
            how = _DECORATORS.get(self._torch_library_name(name_chain(node.value) or ""))
            if how:
                self.torch_library[node.targets[0].id] = how
                out.append(OpAlias(node.lineno, node.targets[0].id, how))
        return out

    def _via(self, callee: str) -> str:
        """``callee`` when it is a bare imported name (not one of torch.library's own) that may be
        another module's alias of a registering function: the driver decides."""
        return callee if callee in self.imported and callee not in self.torch_library and "." not in callee else ""

    def _local_def(self, scope: Any, name: str) -> str:
        """The qualname of the def ``name`` means in ``scope`` (its enclosing class bodies skipped), else ""."""
        s = scope
        while s is not None:
            if s is scope or s.kind != "class":
                found = self.defs.get(id(s.node), {}).get(name)
                if found:
                    return found
            s = s.parent
        return ""

    def _params_of(self, scope: Any) -> set[str]:
        """The parameter names of a function scope, read once per scope."""
        key = id(scope.node)
        found = self._params.get(key)
        if found is None:
            found = self._params[key] = _params(scope.node)
        return found

    def _torch_library_name(self, callee: str) -> str:
        """``custom_op`` for ``torch.library.custom_op`` / ``custom_op`` imported from it, else ""."""
        head, _, last = callee.rpartition(".")
        if head:
            return last if head in self.library_modules else ""
        return self.torch_library.get(callee, "")

    def libraries(self) -> list[OpLibrary]:
        out = []
        positions = self.index.positions(ast.Assign)
        for site, node in zip(self.index.sites(positions), self.index.of(ast.Assign)):
            if site.scope.kind != "module" or len(node.targets) != 1 or not isinstance(node.value, ast.Call):
                continue
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name) and isinstance(value, ast.Call) and value.args \
                    and name_chain(value.func) in _LIBRARY_CALLS \
                    and (name_chain(value.func) != "Library" or self.torch_library.get("Library") == "Library") \
                    and isinstance(value.args[0], ast.Constant) and isinstance(value.args[0].value, str):
                out.append(OpLibrary(node.lineno, target.id, value.args[0].value))
        return out

    def decorated(self) -> list[OpRegistrationFact]:
        out = []
        for scope in self.index.scopes.values():
            if scope.kind != "function":
                continue
            for decorator in scope.node.decorator_list:
                if not isinstance(decorator, ast.Call):
                    continue
                callee = name_chain(decorator.func) or ""
                how = _DECORATORS.get(self._torch_library_name(callee))
                via = "" if how else self._via(callee)
                qualified = _qualified_op(decorator, self.constants)
                if (how or via) and qualified:
                    fn = OpArg("", DEF, scope.qualname)
                    out.append(OpRegistrationFact(decorator.lineno, scope.parent.qualname, *qualified, fn,
                                                  how or "", via))
        return out

    def torch_library_impls(self) -> list[OpRegistrationFact]:
        """``torch.library.impl("ns::op", key, fn)`` (and register_kernel) called with the function, or
        called without it and the decorator it returns applied to it: ``register_kernel("ns::op",
        key)(fn)``."""
        out = []
        if not self.torch_library and self.library_modules == {"torch.library"} and not self.imported:
            return []  # neither torch.library nor a name that may be another module's alias of it
        for position, call in zip(self.index.positions(ast.Call), self.index.of(ast.Call)):
            func = call.func
            # most calls stop at their callee's class: a name that is none of torch.library's functions,
            # an attribute not named as one, anything else that is no call (which may be applied) register
            # nothing, as the tests below tell them
            if func.__class__ is ast.Name:
                if func.id not in self.torch_library:
                    continue
            elif func.__class__ is ast.Attribute:
                if func.attr not in _DECORATORS:
                    continue
            elif func.__class__ is not ast.Call:
                continue
            applied = isinstance(func, ast.Call) and len(call.args) == 1 and not call.keywords
            registering = func.func if applied and isinstance(func, ast.Call) else func
            if not (isinstance(registering, ast.Attribute) and registering.attr in _DECORATORS) \
                    and not isinstance(registering, ast.Name):
                continue
            callee = name_chain(registering) or ""
            how = self._torch_library_name(callee)
            via = "" if how else self._via(callee) if applied else ""
            if not (how in ("impl", "register_kernel") or (applied and (how == "custom_op" or via))):
                continue
            if applied:
                assert isinstance(func, ast.Call)
                qualified, fn_node = _qualified_op(func, self.constants), call.args[0]
                if _handed(func, how):
                    continue  # the function was handed to it already: what it returns is no decorator
            else:
                qualified = _qualified_op(call, self.constants)
                fn_node = call.args[2] if len(call.args) > 2 else _keyword(call, "func")
            if qualified is None:
                continue
            scope = self.index.site(position).scope
            fn = self._arg("", fn_node, scope) if fn_node is not None else None
            if fn is not None and fn.kind in (DEF, REF):
                out.append(OpRegistrationFact(call.lineno, scope.qualname, *qualified, fn, how, via))
        return out

    def _arg(self, slot: str, node: ast.AST, scope: Any) -> OpArg | None:
        if isinstance(node, ast.Constant):
            return OpArg(slot, STR, node.value) if isinstance(node.value, str) else None
        text = name_chain(node)
        if text is None:
            return None
        if isinstance(node, ast.Name):
            if scope.kind == "function" and text in self._params_of(scope):
                return OpArg(slot, PARAM, text)
            qualname = self._local_def(scope, text)
            if qualname:
                return OpArg(slot, DEF, qualname)
        return OpArg(slot, REF, text)

    def calls(self) -> list[OpCall]:
        out = []
        index = self.index
        for position, call in zip(index.positions(ast.Call), index.of(ast.Call)):
            # the tests that need no site first: a forwarder's call has an operator's name (a word, or
            # a parameter) and something else named, so most calls (a log line, `f(x)`) stop here
            if len(call.args) + len(call.keywords) < 2 \
                    or not (any(map(_named, call.args)) or any(_named(k.value) for k in call.keywords)):
                continue
            func = call.func
            impl = func.__class__ is ast.Attribute and func.attr == "impl" and func.value.__class__ is ast.Name
            head = func
            while head.__class__ is ast.Attribute:
                head = head.value
            if not impl and (head.__class__ is not ast.Name or head.id not in self.callable_heads):
                continue  # a callee the file neither defines nor imports is no forwarder of the system
            site = index.site(position)
            scope = site.scope
            if impl:
                args = self._args(call, scope)
                if any(a.slot in _IMPL_SLOTS[0] and a.kind in (STR, PARAM) for a in args):
                    receivers = self._receivers(func.value.id, scope)
                    out.append(OpCall(call.lineno, scope.qualname, OpArg("", REF, f"{func.value.id}.impl"),
                                      args, receivers))
                continue
            assert isinstance(head, ast.Name)
            if site.header is not None:
                continue
            local = self._local_def(scope, head.id) if func is head and head.id not in self.imported else ""
            if not local and head.id not in self.imported:
                continue  # a callee the file neither defines nor imports is no forwarder of the system
            callee = name_chain(func) or ""
            args = self._args(call, scope)
            named = [a for a in args if a.kind in (STR, PARAM)]
            if named and any(a.kind != STR and a is not named[0] for a in args):
                out.append(OpCall(call.lineno, scope.qualname, OpArg("", DEF, local) if local
                                  else OpArg("", REF, callee), args))
        return out

    def _args(self, call: ast.Call, scope: Any) -> tuple[OpArg, ...]:
        found = [self._arg(str(i), node, scope) for i, node in enumerate(call.args)
                 if not isinstance(node, ast.Starred)]
        found += [self._arg(k.arg, k.value, scope) for k in call.keywords if k.arg]
        return tuple(a for a in found if a is not None)

    def _receivers(self, name: str, scope: Any) -> tuple[str, ...]:
        """The names ``name`` can hold in ``scope``: itself, or what a local ``name = a or b`` assigns,
        and a parameter's default when that is a name."""
        names = [name]
        if scope.kind == "function":
            for position, node in zip(self.index.positions(ast.Assign), self.index.of(ast.Assign)):
                if self.index.site(position).scope is scope and len(node.targets) == 1 \
                        and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name:
                    value = node.value
                    parts = value.values if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) \
                        else [value]
                    names = [p.id for p in parts if isinstance(p, ast.Name)]
            defaults = _param_defaults(scope.node)
            names += [defaults[n] for n in names if n in defaults]
        return tuple(dict.fromkeys(names))

    def op_def(self, scope: Any) -> OpDef:
        args = scope.node.args
        return OpDef(scope.qualname, scope.node.lineno, tuple(a.arg for a in (*args.posonlyargs, *args.args)),
                     tuple(a.arg for a in args.kwonlyargs))


def _named(node: ast.AST) -> bool:
    """A name, or a string constant that can be an operator's name (``op``, ``ns::op.overload``): what
    can carry an operator's name or function."""
    return node.__class__ is ast.Name or (node.__class__ is ast.Constant and isinstance(node.value, str)
                                          and _OP_NAME.fullmatch(node.value) is not None)


def _params(node: Any) -> set[str]:
    args = node.args
    return {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}


def _param_defaults(node: Any) -> dict[str, str]:
    """Parameters whose default is a plain name: name -> that name."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return {a.arg: d.id for a, d in pairs if isinstance(d, ast.Name)}


def _handed(call: ast.Call, how: str) -> bool:
    """Whether a registering call is given its function (``custom_op(name, fn)``, ``impl(name, key,
    fn)``, ``register_kernel(name, key, func=fn)``): then it returns no decorator. An alias's call
    (``how`` unknown) is taken as impl's and register_kernel's."""
    slot, keyword = (1, "fn") if how == "custom_op" else (2, "func")
    return len(call.args) > slot or _keyword(call, keyword) is not None


def _keyword(call: ast.Call, name: str) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _qualified_op(call: ast.Call, constants: Mapping[str, str]) -> tuple[str, str] | None:
    """("ns", "op") of a call's first argument (or ``qualname=``/``name=``) written "ns::op", as a
    literal or made of the module's string constants (TransformerEngine's ``f"{_LIB}::prepare"``)."""
    first = call.args[0] if call.args else _keyword(call, "qualname") or _keyword(call, "name")
    written = _text(first, constants) if first is not None else None
    if written is not None and "::" in written:
        ns, _, op = written.partition("::")
        op = op.partition(".")[0]  # "ns::op.overload"
        if ns and op:
            return ns, op
    return None


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """The module's names bound once, at its top level, to a string literal."""
    values: dict[str, str | None] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                literal = value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None
                values[target.id] = None if target.id in values else literal  # bound twice: no constant
    return {name: value for name, value in values.items() if value is not None}


def _text(node: ast.AST, constants: Mapping[str, str]) -> str | None:
    """The string ``node`` evaluates to when it is a literal, one of ``constants``, an f-string of
    those (no conversion, no format spec) or a sum of them; else None."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left, constants), _text(node.right, constants)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                if value.conversion != -1 or value.format_spec is not None:
                    return None
                value = value.value
            part = _text(value, constants)
            if part is None:
                return None
            parts.append(part)
        return "".join(parts)
    return None


# -- the driver ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class PythonOp:
    """An operator whose implementation is a Python function of the system."""

    namespace: str
    op: str
    target: str  # the function's node id; "" when the function was not found (said in a diagnostic)
    path: str  # the registration
    line: int
    dispatch: str  # the dispatch key when written as a literal, else ""


@dataclasses.dataclass(frozen=True, slots=True)
class _Slot:
    """A parameter of a forwarder: its position among the positional ones (-1: keyword-only) and name."""

    position: int
    name: str

    def of(self, args: Iterable[OpArg]) -> OpArg | None:
        return next((a for a in args if a.slot == self.name or a.slot == str(self.position)), None)


@dataclasses.dataclass(frozen=True, slots=True)
class _Forwarder:
    name: _Slot
    fn: _Slot
    library: _Slot | None  # the parameter that can hand it a library
    namespace: str  # the library's namespace when none is handed ("": none)


REGISTRARS_FILE = Path(__file__).with_name("registrars.yaml")
_SLOT = {"position": int, "name": str}
REGISTRARS_SCHEMA = {"version": int, "registrars": [{"names": [str], "op_name": _SLOT, "function": _SLOT,
                                                     "library?": _SLOT, "namespace": str}]}


@functools.cache
def outside_registrars(path: Path = REGISTRARS_FILE) -> dict[str, _Forwarder]:
    """The registering functions of the libraries systems depend on (``registrars.yaml``), by the
    dotted names they are imported as."""
    found: dict[str, _Forwarder] = {}
    for entry in load_data_file(path, REGISTRARS_SCHEMA)["registrars"]:
        library = entry.get("library")
        forwarder = _Forwarder(_Slot(**entry["op_name"]), _Slot(**entry["function"]),
                               _Slot(**library) if library else None, entry["namespace"])
        found.update((name, forwarder) for name in entry["names"])
    return found


@dataclasses.dataclass(slots=True)
class PyOpFile:
    """One file's registration facts, and what its imports bind (local name -> dotted)."""

    module: str
    path: str
    facts: OpRegistrations
    imported: dict[str, str]


@dataclasses.dataclass(frozen=True, slots=True)
class PythonOps:
    ops: tuple[PythonOp, ...]
    diagnostics: tuple[Diagnostic, ...]
    stats: dict[str, int]


def python_registrations(files: Iterable[PyOpFile], nodes: Mapping[str, Node], aliases: Mapping[str, str]
                         ) -> PythonOps:
    """The operators the system registers in Python. ``nodes``: the Python graph's nodes by id (an
    operator's function is one of its functions or methods); ``aliases``: re-exported names' ids ->
    what they name."""
    return _Registrations(sorted(files, key=lambda f: f.path), nodes, aliases).run()


class _Registrations:
    def __init__(self, files: list[PyOpFile], nodes: Mapping[str, Node], aliases: Mapping[str, str]) -> None:
        self.files, self.nodes, self.aliases = files, nodes, aliases
        self.libraries = {f"{f.module}.{lib.name}": lib.namespace for f in files for lib in f.facts.libraries}
        # module-level aliases of torch.library's registering functions, by dotted name
        self.torch_aliases = {f"{f.module}.{a.name}": a.how for f in files for a in f.facts.aliases}
        self.forwarders: dict[str, _Forwarder] = {}
        # a library's registering functions the system calls without defining them (a plugin
        # calling vLLM's direct_register_custom_op): forwarders from the start
        self.outside = {f"py:{name}": forwarder for name, forwarder in outside_registrars().items()
                        if f"py:{name}" not in nodes and f"py:{name}" not in aliases}
        self.forwarders.update(self.outside)
        self.calls: list[tuple[PyOpFile, OpCall, str]] = []  # every call, with its callee's node id if it has one
        self.ops: list[PythonOp] = []
        self.diagnostics: list[Diagnostic] = []
        self.stats: collections.Counter[str] = collections.Counter()

    def run(self) -> PythonOps:
        self._find_forwarders()
        for f in self.files:
            for reg in f.facts.registrations:
                if reg.via and self._aliased(f, reg.via) is None:
                    continue  # an imported function that is no alias of torch.library's
                self._register(f, reg.line, reg.scope, reg.namespace, reg.op, reg.function, "")
        for f, call, callee in self.calls:
            if call.receivers:
                self._library_impl(f, call)
            else:
                self._forwarder_call(f, call, callee)
        self.stats["python_op_forwarders"] = len(self.forwarders) - len(self.outside)
        self.stats["torch_ops_registered_python"] = len({(op.namespace, op.op) for op in self.ops})
        return PythonOps(tuple(sorted(set(self.ops))), tuple(sorted(set(self.diagnostics))),
                         {k: v for k, v in sorted(self.stats.items()) if v})

    # resolution through a file's names

    def _node(self, node_id: str) -> str:
        for _ in range(4):  # a re-export of a re-export
            node = self.nodes.get(node_id)
            if node is not None and node.kind in _CALLABLE:
                return node_id
            node_id = self.aliases.get(node_id, "")
            if not node_id:
                break
        return ""

    def _dotted(self, f: PyOpFile, text: str) -> str:
        """``text`` as the file's imports spell it out, else as a name of the module."""
        head, dot, rest = text.partition(".")
        if head in f.imported:
            return f.imported[head] + dot + rest
        return f"{f.module}.{text}"

    def function(self, f: PyOpFile, scope: str, arg: OpArg) -> str:
        if arg.kind == DEF:
            return self._node(f"py:{f.module}.{arg.value}")
        if arg.kind != REF:
            return ""
        head, _, rest = arg.value.partition(".")
        if head == "self" and rest and "." not in rest:
            owner = scope.rpartition(".")[0]  # the method's class
            return self._node(f"py:{f.module}.{owner}.{rest}") if owner and "<locals>" not in owner[-9:] else ""
        return self._node(f"py:{self._dotted(f, arg.value)}")

    def _aliased(self, f: PyOpFile, name: str) -> str | None:
        """What torch.library function the imported ``name`` is another module's alias of, if any
        (through re-exports: ``from bitsandbytes._ops import register_kernel`` in a package that
        re-exports it)."""
        node_id = f"py:{self._dotted(f, name)}"
        for _ in range(4):
            how = self.torch_aliases.get(node_id[3:])
            if how is not None:
                return how
            node_id = self.aliases.get(node_id, "")
            if not node_id:
                break
        return None

    def library(self, f: PyOpFile, text: str) -> str:
        return self.libraries.get(self._dotted(f, text), "")

    # forwarders: a fixed point over every file

    def _find_forwarders(self) -> None:
        """A worklist: the defs that call a Library's ``impl`` first, then the callers of each
        forwarder found (each call's callee resolved once, kept in ``calls``), until none is added."""
        defs = {(f.path, d.qualname): d for f in self.files for d in f.facts.defs}
        by_callee: dict[str, list[tuple[PyOpFile, OpCall, OpDef]]] = collections.defaultdict(list)
        pending: list[tuple[PyOpFile, OpCall, OpDef]] = []
        for f in self.files:
            for call in f.facts.calls:
                callee = "" if call.receivers else self._callee(f, call)
                self.calls.append((f, call, callee))
                holder = defs.get((f.path, call.scope)) if call.scope else None
                if holder is None:
                    continue
                if call.receivers:
                    pending.append((f, call, holder))
                elif callee:
                    by_callee[callee].append((f, call, holder))
        for key in self.outside:  # forwarders from the start: their callers are looked at first
            pending.extend(by_callee.pop(key, ()))
        while pending:
            f, call, holder = pending.pop()
            key = f"py:{f.module}.{holder.qualname}"
            if key in self.forwarders:
                continue
            found = self._forwards(f, call, holder)
            if found is not None:
                self.forwarders[key] = found
                pending.extend(by_callee.pop(key, ()))

    def _forwards(self, f: PyOpFile, call: OpCall, holder: OpDef) -> _Forwarder | None:
        """The forwarder ``holder`` is when ``call`` hands its parameters on to a registration."""
        if call.receivers:
            name, fn = _Slot(0, "op_name").of(call.args), _Slot(1, "fn").of(call.args)
            inner: _Forwarder | None = None
        else:
            inner = self.forwarders.get(self._callee(f, call))
            if inner is None:
                return None
            name, fn = inner.name.of(call.args), inner.fn.of(call.args)
        if name is None or fn is None or name.kind != PARAM or fn.kind != PARAM:
            return None
        library, namespace = None, ""
        if inner is None:
            for receiver in call.receivers:
                if receiver in holder.positional or receiver in holder.keyword_only:
                    library = library or _slot(holder, receiver)
                else:
                    namespace = namespace or self.library(f, receiver)
        else:
            handed = inner.library.of(call.args) if inner.library is not None else None
            namespace = inner.namespace
            if handed is not None and handed.kind == PARAM:
                library = _slot(holder, handed.value)
            elif handed is not None:
                namespace = self.library(f, handed.value)
        if library is None and not namespace:
            return None
        return _Forwarder(_slot(holder, name.value), _slot(holder, fn.value), library, namespace)

    def _callee(self, f: PyOpFile, call: OpCall) -> str:
        found = self.function(f, call.scope, call.callee)
        if not found and call.callee.kind == REF:
            outside = f"py:{self._dotted(f, call.callee.value)}"
            return outside if outside in self.outside else ""
        return found

    # registrations

    def _register(self, f: PyOpFile, line: int, scope: str, namespace: str, op: str, fn: OpArg,
                  dispatch: str) -> bool:
        self.stats["python_op_registrations"] += 1
        target = self.function(f, scope, fn)
        if not target:
            self.stats["python_op_registrations_unresolved"] += 1
            self.diagnostics.append(Diagnostic(
                f.path, line, "python-op-function-unresolved",
                f"torch.ops.{namespace}.{op} is registered here with {fn.value!r}, which names no function "
                "of the system's Python graph: calls of the operator are not bound to it", Severity.INFO))
            self.ops.append(PythonOp(namespace, op, "", f.path, line, dispatch))  # registered, bound to nothing
            return False
        self.ops.append(PythonOp(namespace, op, target, f.path, line, dispatch))
        return True

    def _library_impl(self, f: PyOpFile, call: OpCall) -> None:
        name, fn = _Slot(0, "op_name").of(call.args), _Slot(1, "fn").of(call.args)
        namespace = next((ns for ns in (self.library(f, r) for r in call.receivers) if ns), "")
        if name is None or name.kind != STR or fn is None or not namespace:
            return  # a parameter's (a forwarder's), or no Library of the system's
        dispatch = _Slot(2, "dispatch_key").of(call.args)
        self._register(f, call.line, call.scope, namespace, name.value.partition(".")[0], fn,
                       dispatch.value if dispatch is not None and dispatch.kind == STR else "")

    def _forwarder_call(self, f: PyOpFile, call: OpCall, callee: str) -> None:
        forwarder = self.forwarders.get(callee)
        if forwarder is None:
            return
        name, fn = forwarder.name.of(call.args), forwarder.fn.of(call.args)
        if name is not None and name.kind == PARAM and f"py:{f.module}.{call.scope}" in self.forwarders:
            return  # handing its own parameters on: the forwarder's forwarder
        namespace = forwarder.namespace
        handed = forwarder.library.of(call.args) if forwarder.library is not None else None
        if handed is not None:
            namespace = self.library(f, handed.value) if handed.kind in (REF, DEF) else ""
        if name is None or name.kind != STR or fn is None or not namespace:
            self.stats["forwarder_calls_unresolved"] += 1
            unread = "its operator name" if name is None or name.kind != STR else \
                "its function" if fn is None else "its library"
            self.diagnostics.append(Diagnostic(
                f.path, call.line, "python-op-registration-unread",
                f"{call.callee.value}(...) registers a torch operator, but {unread} is no literal or name "
                "this step can read: calls of that operator are not bound", Severity.INFO))
            return
        if callee in self.outside:
            self.stats["registrar_calls"] += 1  # a key only where there are any: vLLM's own evidence keeps its shape
        if self._register(f, call.line, call.scope, namespace, name.value, fn, ""):
            self.stats["forwarder_calls_resolved"] += 1
        else:
            self.stats["forwarder_calls_unresolved"] += 1


def _slot(holder: OpDef, name: str) -> _Slot:
    return _Slot(holder.positional.index(name) if name in holder.positional else -1, name)

