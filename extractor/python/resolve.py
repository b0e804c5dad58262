"""Name resolution over a system's Python modules: where a dotted name, seen from a scope, is bound.

Names resolve the way Python binds them: enclosing function scopes, then the module, then builtins
(never a class body from inside its methods), through imports, re-exports and star imports, to a
graph node (``("node", id)``), an outside qualified name (``("ext", dotted)``), an instance of a
known class (``("instance", class id)``), or nothing. Members are looked up along the class's
C3 method resolution order (:class:`extractor.naming.Lineage`).

A value's class is what the code says: a parameter's or local's annotation or the class it is
assigned, ``self.x``'s in the methods, a module-level name's when every assignment of the module
says the same class (:meth:`Resolver.held_instance`), and a call's result: the class called, or the
class a function's return annotation names (:meth:`Resolver.returned`, for ``f().m``).
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
from collections.abc import Callable, Hashable, Iterator
from typing import Any, TypeVar

from extractor import naming
from extractor.context import SourceFile
from extractor.model import Node, NodeKind
from extractor.python.expr import CHAINED, SUBSCRIPTED, type_name
from extractor.python.facts import MODULE, PythonFacts

_BUILTINS = frozenset(dir(builtins))
_SELF_HEADS = frozenset({"self", "cls", "super()"})  # a call on these resolves in the enclosing class

MAX_DEPTH = 12  # levels of names resolved through other names (re-exports, star imports) before a search is cut
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclasses.dataclass(slots=True)
class PyModule:
    name: str
    file: SourceFile
    facts: PythonFacts
    is_package: bool
    # name bound at module level -> ("node", id) or ("ref", absolute dotted target)
    namespace: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)
    # function qualname -> its local bindings (imports inside the function)
    local_bindings: dict[str, dict[str, tuple[str, str]]] = dataclasses.field(default_factory=dict)
    star_imports: list[str] = dataclasses.field(default_factory=list)
    explicit_exports: set[str] = dataclasses.field(default_factory=set)
    _local_types: dict[str, dict[str, list[str]]] | None = None
    _held: dict[str, list[str]] | None = None
    _local_aliases: dict[str, dict[str, list[str]]] | None = None

    @property
    def local_types(self) -> dict[str, dict[str, list[str]]]:
        """Function qualname -> local name -> the classes the code says it holds ([""]: an untyped
        parameter), in the facts' order. Built on first use: by the forked children that resolve
        the module's calls (graph._last_pass), where it was a sixth of the Python graph step's
        serial part (vLLM's modules hold 100,000 typed locals)."""
        if self._local_types is None:
            self._local_types = {}
            for typed in self.facts.types:
                if not typed.name.startswith("self."):
                    self._local_types.setdefault(typed.scope, {}).setdefault(typed.name, []).append(typed.type)
        return self._local_types


    @property
    def local_aliases(self) -> dict[str, dict[str, list[str]]]:
        """Function qualname -> local name -> the names it may hold (PythonFacts.local_aliases)."""
        if self._local_aliases is None:
            self._local_aliases = {}
            for alias in self.facts.local_aliases:
                self._local_aliases.setdefault(alias.scope, {}).setdefault(alias.name, []).append(alias.value)
        return self._local_aliases

    @property
    def held(self) -> dict[str, list[str]]:
        """Module-level name -> the classes its assignments say it holds (PythonFacts.held), built on
        first use: most names a walk meets hold none."""
        if self._held is None:
            self._held = {}
            for typed in self.facts.held:
                self._held.setdefault(typed.name, []).append(typed.type)
        return self._held


class CycleCut:
    """The memos of :class:`Resolver`'s recursive questions (where a dotted name is bound, what class
    a type names), kept so that every answer is the one the question gets when asked first.

    A question met again while it is still being answered (an import cycle: ``a`` star-imports
    ``b``, ``b`` star-imports ``a``) is cut there: it gets the guard's answer (not found), and so does
    a question cut for depth. Every question that was open meanwhile holds an answer that depends
    on where the cut fell, so on which of them was asked first: such answers are kept only until the
    outermost question is answered (so a cycle is walked once per question, not once per path
    through it), never in the memo. An answer that met no cut is the same whoever asks: that is
    what the memo keeps. So the answers do not depend on the order of the questions, and modules'
    calls can be resolved in any order, or split over processes."""

    def __init__(self) -> None:
        self._open: dict[Hashable, None] = {}  # the questions being answered, the innermost last
        self._until_outermost: dict[Hashable, Any] = {}
        self._cuts = 0  # cuts met so far: a question that saw this count change met one

    def ask(self, memo: dict[K, V], key: K, answer: Callable[[], V], guard: V) -> V:
        """The answer to a question ``memo`` does not hold: ``answer()``, memoised when it met no
        cut; ``guard`` when the question is met again while it is being answered."""
        if key in self._open:
            if key == next(reversed(self._open)):
                return guard  # asked again by its own answer, directly (``x = x.y()``): cut so whoever asks
            return self.cut(guard)
        if key in self._until_outermost:
            return self.cut(self._until_outermost[key])
        self._open[key] = None
        before = self._cuts
        try:
            found = answer()
        finally:
            del self._open[key]
        if self._cuts == before:
            memo[key] = found
        elif self._open:
            self._until_outermost[key] = found
        if not self._open:
            self._until_outermost.clear()
        return found

    def cut(self, answer: V) -> V:
        """``answer``, given where a question was cut: every question open now depends on it."""
        self._cuts += 1
        return answer


class Resolver:
    """Name resolution over the whole system's Python modules."""

    def __init__(self, modules: dict[str, PyModule], nodes: dict[str, Node],
                 members: dict[str, dict[str, str]]) -> None:
        self.modules = modules
        self.nodes = nodes
        self.members = members
        self.bases: dict[str, list[str]] = {}
        self.outside_bases: dict[str, frozenset[str]] = {}  # class id -> the ids of its bases outside the system
        self._memo: dict[str, tuple[tuple[str, str], int]] = {}  # dotted -> (answer, levels its search went)
        self._deepest = 0  # the deepest level the search of the name being resolved has gone to
        # class id -> attribute -> [(module, method scope, type text)] from ``self.X = Cls(...)`` etc.
        self.attribute_types: dict[str, dict[str, list[tuple[PyModule, str, str]]]] = {}
        # class id -> attribute -> (module, class scope, annotation source or the class called) from the
        # class body (`shared: Tracker = Tracker()`, a dataclass's `cache: Optional[Cache] = None`)
        self.class_attributes: dict[str, dict[str, tuple[PyModule, str, str, bool]]] = {}
        # function id -> its parameters it launches as kernels (`kernel[grid](...)`), by position and by name
        self.launchers: dict[str, dict[int | str, str]] = {}
        self._annotations: dict[str, str] = {}  # annotation source -> the class it names ("": none)
        self._instances: dict[tuple[str, str, str], tuple[str, str] | None] = {}
        self._held: dict[str, tuple[str, str] | None] = {}  # module-level name's node id -> the instance it holds
        self._returns: dict[str, tuple[str, str] | None] = {}  # function id -> the instance it returns
        self._asking = CycleCut()
        self._lineage: naming.Lineage | None = None

    def forget(self) -> None:
        """Drop memoised answers (they may predate bindings or bases added since)."""
        self._memo.clear()
        self._held.clear()
        self._lineage = None

    def absolute(self, dotted: str, depth: int = 0) -> tuple[str, str]:
        """Resolve an absolute dotted name: ("node", id), ("ext", dotted) or ("missing", dotted)."""
        known = self._memo.get(dotted)
        if known is not None and depth + known[1] <= MAX_DEPTH:
            # asked from here, the answer's search stays within the depth limit: the same answer
            self._deepest = max(self._deepest, depth + known[1])
            return known[0]
        if depth > MAX_DEPTH:
            return self._asking.cut(("missing", dotted))
        return self._asking.ask(self._memo, dotted, lambda: self._reaching(dotted, depth), (("missing", dotted), 0))[0]

    def _reaching(self, dotted: str, depth: int) -> tuple[tuple[str, str], int]:
        """The answer, and how many levels below ``depth`` its search went (asked deeper than
        :data:`MAX_DEPTH` less that, the search would be cut: the memo's answer does not hold there)."""
        outer, self._deepest = self._deepest, depth
        try:
            return self._absolute(dotted, depth), self._deepest - depth
        finally:
            self._deepest = max(outer, self._deepest)

    def _absolute(self, dotted: str, depth: int) -> tuple[str, str]:
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            name = ".".join(parts[:cut])
            if name in self.modules:
                return self.walk(("node", f"py:{name}"), parts[cut:], depth)
        return ("ext", dotted)

    def walk(self, start: tuple[str, str], rest: list[str], depth: int) -> tuple[str, str]:
        kind, value = start
        for i, part in enumerate(rest):
            if kind == "node" and self.nodes[value].kind is NodeKind.ATTRIBUTE:
                held = self.held_instance(value)
                if held is not None:  # a module's `registry = Registry()`: its members are the class's
                    kind, value = held
            if kind == "instance":  # a value of a known class: its members, inherited ones included
                member = self.member(value, part)
                if member is None:
                    return ("missing", f"{self.nodes[value].qualname}().{'.'.join(rest[i:])}")
                kind, value = "node", member
                continue
            if kind == "ext":
                return ("ext", ".".join([value, *rest[i:]]))
            if kind != "node":
                return (kind, value)
            node = self.nodes[value]
            if node.kind is NodeKind.MODULE:
                module = self.modules[node.qualname]
                sub = f"{node.qualname}.{part}"
                if part in module.namespace:
                    kind, value = module.namespace[part]
                    if kind == "ref":
                        kind, value = self.absolute(value, depth + 1)
                elif sub in self.modules:
                    kind, value = "node", f"py:{sub}"
                else:
                    found = self.from_star(module, part, depth)
                    if found is None:
                        return ("missing", f"{node.qualname}.{'.'.join(rest[i:])}")
                    kind, value = found
            else:
                member = self.member(value, part)
                if member is None:
                    return ("missing", f"{node.qualname}.{'.'.join(rest[i:])}")
                kind, value = "node", member
        return (kind, value)

    def from_star(self, module: PyModule, part: str, depth: int) -> tuple[str, str] | None:
        for target in module.star_imports:
            found = self.absolute(f"{target}.{part}", depth + 1)
            if self.star_binds(target, part, found):
                return found
        return None

    def star_binds(self, target: str, part: str, found: tuple[str, str]) -> bool:
        """Whether ``from target import *`` binds ``part`` to ``found`` (the answer for ``target.part``).

        A module of the system that star-imports an outside one would answer every name with that
        module's (what an outside star import binds is not known): such an answer is not taken. One
        the module binds by name (``import torch``, ``from numpy import ndarray``), itself or through
        the system's modules it star-imports, is, when a star import passes it on: ``__all__`` lists
        it, or there is none and the name is public (DeepSpeed's ``deepspeed/comm/torch.py`` reaches
        ``torch`` only through ``from .comm import *``)."""
        if found[0] == "missing":
            return False
        return found[0] != "ext" or target not in self.modules or self._binds_by_name(target, part, frozenset())

    def _binds_by_name(self, name: str, part: str, seen: frozenset[str]) -> bool:
        module = self.modules[name]
        listed = module.facts.all_names
        if listed is not None or module.facts.all_refs:
            return part in (listed or ())
        if part.startswith("_"):
            return False
        return part in module.namespace or any(
            star in self.modules and star not in seen and self._binds_by_name(star, part, seen | {name})
            for star in module.star_imports)

    def instance_of(self, module: PyModule, scope: str, type_text: str) -> tuple[str, str] | None:
        """("instance", class id) or ("ext", dotted) for the class ``type_text`` names in ``scope``."""
        key = (module.name, scope, type_text)
        if key in self._instances:
            return self._instances[key]
        return self._asking.ask(self._instances, key, lambda: self._instance_of(module, scope, type_text), None)

    def _instance_of(self, module: PyModule, scope: str, type_text: str) -> tuple[str, str] | None:
        head, _, rest = type_text.partition(".")
        start = lookup(self, module, scope, head)
        target = self.walk(start, rest.split(".") if rest else [], 0) if start and start[0] in ("node", "ext") else None
        result = None
        if target is not None and target[0] == "node" and self.nodes[target[1]].kind is NodeKind.CLASS:
            result = ("instance", target[1])
        elif target is not None and target[0] == "ext":
            result = ("ext", target[1] + "()")  # an instance of an outside class: kept readable in call sites
        return result

    def held_instance(self, node_id: str) -> tuple[str, str] | None:
        """("instance", class id) when ``node_id`` is a module-level name that every assignment the
        module makes to it says holds an instance of that one class of the system (``registry =
        Registry()``, ``typed: Registry = make()``); None when one says nothing or another class."""
        if node_id in self._held:
            return self._held[node_id]
        return self._asking.ask(self._held, node_id, lambda: self._held_instance(node_id), None)

    def _held_instance(self, node_id: str) -> tuple[str, str] | None:
        module_name, _, name = self.nodes[node_id].qualname.rpartition(".")
        module = self.modules.get(module_name)
        if module is None:
            return None  # a class's attribute
        types = module.held.get(name)
        if not types:
            return None
        # every assignment says what it holds, and no `for`/`with` target or `global` rebinds it
        facts = module.facts
        assigned = sum(1 for a in facts.attrs if a.where == MODULE and a.scope == "" and a.name == name)
        if len(types) != assigned or any(b.name == name for b in facts.bindings):
            return None
        found = {self.instance_of(module, "", type_text) for type_text in types}
        held = found.pop() if len(found) == 1 else None
        return held if held is not None and held[0] == "instance" else None

    def returned(self, target: tuple[str, str] | None) -> tuple[str, str] | None:
        """("instance", class id) for what calling ``target`` returns: an instance of the class called,
        or of the one class of the system a function's return annotation names; None otherwise."""
        if target is None or target[0] != "node":
            return None
        node = self.nodes[target[1]]
        if node.kind is NodeKind.CLASS:
            return ("instance", node.id)
        if node.kind not in (NodeKind.FUNCTION, NodeKind.METHOD) or not node.returns:
            return None
        if node.id not in self._returns:
            self._returns[node.id] = self._returned(node)
        return self._returns[node.id]

    def _returned(self, node: Node) -> tuple[str, str] | None:
        try:
            annotation = ast.parse(node.returns, mode="eval").body
        except (SyntaxError, ValueError):
            return None
        type_text = type_name(annotation)
        module_name = node.qualname
        while module_name and module_name not in self.modules:
            module_name = module_name.rpartition(".")[0]
        if not type_text or not module_name:
            return None
        # the annotation is read where the def stands (a method's in its class body)
        scope = parent_qual(node.qualname[len(module_name) + 1:])
        found = self.instance_of(self.modules[module_name], scope, type_text)
        return found if found is not None and found[0] == "instance" else None

    def set_bases(self, class_id: str, bases: list[str]) -> None:
        """Call :meth:`forget` once all bases are set: orders computed before may predate them."""
        self.bases[class_id] = bases

    def lineage(self, class_id: str) -> Iterator[str]:
        """The class and its internal bases in method resolution order (C3, as Python computes it)."""
        if self._lineage is None:
            self._lineage = naming.Lineage(self.bases)
        return iter(self._lineage.mro(class_id))

    def attribute_type(self, class_id: str, attr: str) -> tuple[str, str] | None:
        """What ``self.<attr>`` holds in ``class_id`` or its bases, per the assignments found."""
        for current in self.lineage(class_id):
            for module, scope, type_text in self.attribute_types.get(current, {}).get(attr, ()):
                found = self.instance_of(module, scope, type_text)
                if found is not None:
                    return found
            declared = self.class_attributes.get(current, {}).get(attr)
            if declared is not None:  # what the class body says the attribute holds
                module, scope, text, annotated = declared
                type_text = self._annotated(text) if annotated else text
                found = self.instance_of(module, scope, type_text) if type_text else None
                if found is not None:
                    return found
        return None

    def _annotated(self, source: str) -> str:
        """The class an annotation's source names (:func:`extractor.python.expr.type_name`), read once."""
        known = self._annotations.get(source)
        if known is None:
            try:
                known = type_name(ast.parse(source, mode="eval").body)
            except (SyntaxError, ValueError):
                known = ""
            self._annotations[source] = known
        return known

    def member(self, class_id: str, name: str, skip_self: bool = False) -> str | None:
        """``name`` looked up on a class and its bases (``skip_self``: on the bases only, for super())."""
        for current in self.lineage(class_id):
            if not (skip_self and current == class_id):
                found = self.members.get(current, {}).get(name)
                if found:
                    return found
        return None


def module_bindings(module: PyModule, modules: dict[str, PyModule]) -> None:
    """Fill the module's namespace and function-local bindings from its imports and aliases."""
    package = naming.package_of(module.name, module.is_package)
    for imported in module.facts.imports:
        scope, target, level, name, asname = (imported.scope, imported.module, imported.level, imported.name,
                                              imported.asname)
        bindings = module.namespace if scope == "" else module.local_bindings.setdefault(scope, {})
        base = naming.resolve_relative(package, target, level)
        if base is None:
            continue
        if not name:  # import a.b.c [as d]
            if asname:
                bindings[asname] = ("ref", base)
            else:
                bindings.setdefault(base.split(".")[0], ("ref", base.split(".")[0]))
        elif name == "*":
            if scope == "":
                module.star_imports.append(base)
        else:
            bindings[asname or name] = ("ref", f"{base}.{name}" if base else name)
            if scope == "" and asname == name:  # ``from m import x as x``: an explicit re-export (PEP 484)
                module.explicit_exports.add(name)
    for alias in module.facts.aliases:
        if alias.scope == "" and alias.name not in module.namespace:
            module.namespace[alias.name] = ("alias", alias.value)


def parent_qual(qual: str) -> str:
    """``a.<locals>.b`` -> ``a``; ``C.m`` -> ``C``; ``f`` -> ``""``."""
    head = qual.rpartition(".")[0]
    return head.removesuffix(".<locals>")


def lookup(resolver: Resolver, module: PyModule, scope: str, head: str) -> tuple[str, str] | None:
    """Where ``head`` is bound, seen from ``scope`` (a qualname inside ``module``)."""
    nodes = resolver.nodes
    current = scope
    while current:
        node = nodes.get(f"py:{module.name}.{current}")
        if node is not None and node.kind in (NodeKind.FUNCTION, NodeKind.METHOD):
            local = nodes.get(f"py:{module.name}.{current}.<locals>.{head}")
            if local is not None:
                return ("node", local.id)
            binding = module.local_bindings.get(current, {}).get(head)
            if binding is not None:
                return resolver.absolute(binding[1]) if binding[0] == "ref" else binding
            types = module.local_types.get(current, {}).get(head)
            if types is not None:  # a parameter or local: never the module-level name it shadows
                for type_text in types:
                    found = resolver.instance_of(module, current, type_text) if type_text else None
                    if found is not None:
                        return found
                return ("local", head)
        elif node is not None and node.kind is NodeKind.CLASS and current == scope:
            member = resolver.members.get(node.id, {}).get(head)
            if member is not None:
                return ("node", member)
        current = parent_qual(current)
    binding = module.namespace.get(head)
    if binding is not None:
        if binding[0] == "ref":
            return resolver.absolute(binding[1])
        return binding
    for target in module.star_imports:
        found = resolver.absolute(f"{target}.{head}")
        if resolver.star_binds(target, head, found):
            return found
    if head in _BUILTINS:
        return ("builtin", head)
    return None


class ModuleLookup:
    """:func:`lookup` and :func:`enclosing_class` for one module whose bindings are final (the call
    resolution), answered from a small index built once instead of a walk up the scopes per name.

    A name that no function of the module binds locally (a nested definition, an import inside a
    function, a parameter or typed local) and that is not looked up from a class body resolves the
    same from every scope: at module level, so once per module. ``vllm.model_executor`` calls
    ``torch`` from hundreds of functions; each is one look-up now."""

    def __init__(self, resolver: Resolver, module: PyModule) -> None:
        self.resolver = resolver
        self.module = module
        # every name some scope of the module may bind locally (a superset: it only sends a name
        # to the full walk)
        self.local_names = frozenset(
            {d.qualname.rpartition(".")[2] for d in module.facts.defs if "<locals>" in d.qualname}
            | {name for bound in module.local_bindings.values() for name in bound}
            | {name for typed in module.local_types.values() for name in typed})
        # the class bodies among the module's scopes (a class a later def replaced is not one)
        nodes = resolver.nodes
        self.class_bodies = frozenset(
            d.qualname for d in module.facts.defs
            if d.kind == "class" and (node := nodes.get(f"py:{module.name}.{d.qualname}")) is not None
            and node.kind is NodeKind.CLASS)
        self._module_level: dict[str, tuple[str, str] | None] = {}
        self._classes: dict[str, str | None] = {}

    def lookup(self, scope: str, head: str) -> tuple[str, str] | None:
        if head in self.local_names or scope in self.class_bodies:
            return lookup(self.resolver, self.module, scope, head)
        if head in self._module_level:
            return self._module_level[head]
        found = self._module_level[head] = lookup(self.resolver, self.module, "", head)
        return found

    def call_key(self, scope: str, callee: str) -> tuple[str, str]:
        """What resolving a call of ``callee`` in ``scope`` depends on, with the callee: for
        ``self.``/``cls.``/``super().`` only the enclosing class (none: ""); for a head no scope
        binds locally, outside a class body, only the module (scope ""); else the scope itself.
        Equal keys resolve equally (vLLM: 115,138 calls, 82,166 distinct per scope, 56,941 per
        module)."""
        head = callee.partition(".")[0]
        if head in _SELF_HEADS:
            return (self.enclosing_class(scope) or "", callee)
        if head in self.local_names or scope in self.class_bodies:
            return (scope, callee)
        return ("", callee)

    def enclosing_class(self, scope: str) -> str | None:
        if scope not in self._classes:
            self._classes[scope] = enclosing_class(self.module, scope, self.resolver.nodes)
        return self._classes[scope]


# Ray runs a @ray.remote function or an actor's method called as `f.remote(...)`, `handle.m.remote(...)`,
# and makes an actor of a @ray.remote class with `Cls.remote(...)` (ray/remote_function.py, actor.py)
_RAY_REMOTE = ".remote"
# `F.apply(...)` of a custom autograd function (torch.autograd.Function's classmethod) runs `F.forward`
_AUTOGRAD_APPLY = ".apply"
_AUTOGRAD_FUNCTIONS = frozenset({"py:torch.autograd.Function", "py:torch.autograd.function.Function",
                                 "py:torch.autograd.function.InplaceFunction"})
_REMOTE_RUNS = frozenset({NodeKind.FUNCTION, NodeKind.METHOD, NodeKind.CLASS})


# what a call of an item of X runs when X is one of these of the system: a function's item is a launcher
# (Triton's and Numba's JIT kernels: `kernel[grid](...)`), a class's a generic alias (`Box[int](...)`)
_ITEM_RUNS = frozenset({NodeKind.FUNCTION, NodeKind.CLASS})


def resolve_call(resolver: Resolver, module: ModuleLookup, scope: str, callee: str) -> tuple[str, str] | None:
    """What a call of ``callee`` (dotted as written) in ``scope`` runs. ``X.remote(...)``, where
    ``X`` is a function, method or class of the system that has no member ``remote``, is Ray's
    remote call of ``X``: it runs ``X``. ``F.apply(...)``, where ``F`` is a class of the system
    derived from torch's autograd Function that has no member ``apply``, runs ``F.forward``.
    ``X[...](...)`` runs ``X`` when ``X`` is a function or class of the system (an item of anything
    else is not followed)."""
    if callee.endswith(SUBSCRIPTED):
        inner = _resolve_call(resolver, module, scope, callee[: -len(SUBSCRIPTED)])
        found = inner is not None and inner[0] == "node" and resolver.nodes[inner[1]].kind in _ITEM_RUNS
        return inner if found else None
    target = _resolve_call(resolver, module, scope, callee)
    if target is not None and target[0] == "missing" and callee.endswith(_RAY_REMOTE):
        inner = _resolve_call(resolver, module, scope, callee[: -len(_RAY_REMOTE)])
        if inner is not None and inner[0] == "node" and resolver.nodes[inner[1]].kind in _REMOTE_RUNS:
            return inner
    if target is not None and target[0] == "missing" and target[1].endswith(_AUTOGRAD_APPLY):
        # `F.apply(...)`, or a name bound to it (`swiglu = SwiGLUFunction.apply`, then `swiglu(...)`,
        # where the walk ends at the class's missing `apply`)
        inner = _resolve_call(resolver, module, scope, callee[: -len(_AUTOGRAD_APPLY)]) \
            if callee.endswith(_AUTOGRAD_APPLY) else resolver.absolute(target[1][: -len(_AUTOGRAD_APPLY)])
        if inner is not None and inner[0] == "node" and resolver.nodes[inner[1]].kind is NodeKind.CLASS:
            forward = _autograd_forward(resolver, inner[1])
            if forward is not None:
                return ("node", forward)
    return target


def _autograd_forward(resolver: Resolver, class_id: str) -> str | None:
    """The ``forward`` that ``F.apply(...)`` runs, when ``F`` (or a base of the system's) derives from
    torch's autograd Function, which inherits ``apply`` and calls the subclass's static ``forward``."""
    lineage = resolver.lineage(class_id)
    if not any(resolver.outside_bases.get(c, frozenset()) & _AUTOGRAD_FUNCTIONS for c in lineage):
        return None
    return resolver.member(class_id, "forward")


def _resolve_call(resolver: Resolver, module: ModuleLookup, scope: str, callee: str) -> tuple[str, str] | None:
    pieces = callee.split(CHAINED) if CHAINED in callee else []
    if pieces and pieces[0] == "super":  # super().m is no call's result
        pieces[:2] = [f"super{CHAINED}{pieces[1]}"]
    if len(pieces) > 1:  # f().m: a method of what f returns
        target = _resolve_call(resolver, module, scope, pieces[0])
        for part in pieces[1:]:
            held = resolver.returned(target)
            if held is None:
                return None
            target = called(resolver, resolver.walk(held, part.split("."), 0))
        return target
    head, _, rest = callee.partition(".")
    parts = rest.split(".") if rest else []
    if head in _SELF_HEADS:
        cls = module.enclosing_class(scope)
        if cls is not None and not parts and head == "cls":
            return ("node", cls)  # cls(...) in a classmethod builds the class
        if cls is None or not parts:
            return None
        if head == "super()":
            found = resolver.member(cls, parts[0], skip_self=True)
        else:
            found = resolver.member(cls, parts[0])
        if found is None:
            held = resolver.attribute_type(cls, parts[0]) if head == "self" and len(parts) > 1 else None
            return called(resolver, resolver.walk(held, parts[1:], 0)) if held else None
        return called(resolver, resolver.walk(("node", found), parts[1:], 0))
    start = module.lookup(scope, head)
    if start is None or start[0] == "local":
        return None
    if start[0] == "builtin":
        return start
    return called(resolver, resolver.walk(start, parts, 0))


def called(resolver: Resolver, target: tuple[str, str]) -> tuple[str, str] | None:
    """What calling ``target`` runs: calling an instance runs its class's ``__call__``, if any."""
    if target[0] == "instance":
        found = resolver.member(target[1], "__call__")
        return ("node", found) if found else None
    if target[0] == "local":
        return None
    return target


def enclosing_class(module: PyModule, scope: str, nodes: dict[str, Node]) -> str | None:
    """The class whose method ``scope`` is (``C.m``, or a function nested in ``C.m``)."""
    qual = scope.split(".<locals>.")[0]
    parent = qual.rpartition(".")[0]
    node = nodes.get(f"py:{module.name}.{parent}") if parent else None
    return node.id if node is not None and node.kind is NodeKind.CLASS else None


def resolve_text(resolver: Resolver, module: PyModule, scope: str, text: str) -> tuple[str, str] | None:
    head, _, rest = text.partition(".")
    start = lookup(resolver, module, scope, head)
    return resolver.walk(start, rest.split(".") if rest else [], 0) if start else None
