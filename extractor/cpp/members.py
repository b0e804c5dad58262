"""Calls through objects, `x.m()` and `x->m()`, resolved through the type x is declared with.

A call written as a name (`f()`, `ns::f()`, `C::m()`) is looked up as C++ looks names up
(:class:`extractor.cpp.symbols.SymbolTable`), and a plain name called from a method that its class does
not declare is looked for in the class's bases before the enclosing scopes (:meth:`MemberCalls.unqualified`). A call through an object names a method of the
object's class, which only the object's declaration tells: this module reads it, and never guesses.
The object's type is known when x is

- a variable the calling body declares before the call, in a scope that holds the call (`Model* m =
  ...;`, `const Model& m = ...;`, `std::shared_ptr<Model> m;`, `Model m(...)`, a range-for's, a
  lambda's parameter); an `auto` one only when its initializer writes the type out (`new T(...)`, a
  factory of handles.yaml such as `std::make_unique<T>(...)`);
- a parameter of the calling function (of the very definition whose body holds the call: overloads
  name their parameters differently);
- a data member of the caller's class or of one of its bases (`model_->Init()`, `this->model_->Init()`);
- a namespace's variable seen from the caller's scope (`gLogger_.Log()`, `vllm::kU4B8.id()`);
- `this`;
- or, step by step along a chain (`a->b().c.m()`), a member or a method's return type of a class
  known at the previous step, or the return type of a function the caller calls by name.

The type's text is unwrapped of references, cv-qualifiers, pointers and the handle templates of
handles.yaml (:mod:`extractor.cpp.handles`); `->` must go through exactly one pointer or handle and
`.` through none, else the call is not one of a system method (`p.reset()` is the handle's own).
The class is looked up from the declaration's scope and file as any type name is (namespaces,
namespace aliases, usings); the method in the class, then in its bases (a virtual method declared
only in a base is the base's node: the static type decides, as for a call C++ does not dispatch).

What stays unresolved is counted by reason (the step's ``member_calls_<reason>``):
``unknown_type`` (no declaration of the object is read: `auto`, a class's static, an expression such as
`a + b`, `operator->` of a class), ``external_type`` (declared with a type the system does not define:
`std::vector`, `torch::Tensor`, a handle's own method), ``template_type`` (a template parameter of the
caller or of the member's class), ``no_method`` (the class and its bases have no such method),
``external_base`` (not in the class or its system bases, and a base is outside the system), and
``ambiguous`` (found in two unrelated bases, or a chain's function whose overloads return different types).
"""

from __future__ import annotations

import collections
import dataclasses
import re
from collections.abc import Mapping

from extractor.acquire.headers import HEADER_SUFFIXES
from extractor.cpp.facts import CppFacts, Local
from extractor.cpp.handles import HANDLE, HandleTypes, load_handles, unwrap
from extractor.cpp.scan import ANONYMOUS_NAMESPACE
from extractor.cpp.symbols import AGGREGATES, CALLABLE, Def, SymbolTable, local_namespace
from extractor.model import Parameter, ParamKind
from extractor.naming import cpp_id, id_name

RESOLVED = "resolved"
UNKNOWN_TYPE = "unknown_type"
EXTERNAL_TYPE = "external_type"
TEMPLATE_TYPE = "template_type"
NO_METHOD = "no_method"
EXTERNAL_BASE = "external_base"
AMBIGUOUS = "ambiguous"

# `obj->method` as the scanner writes a callee (extractor.cpp.names.callee_text): the object's text,
# the last operator, the method's name
_CALLEE = re.compile(r"(.+?)(\.|->)(~?[A-Za-z_]\w*)")
_OBJECT_HEAD = re.compile(r"\(?\*?([A-Za-z_]\w*)\)?(?:\.|->|\[)")  # `m` of `m->Init`, `v[i].x`, `(*p)->x`
_INNERMOST_ARGUMENTS = re.compile(r"<[^<>]*>")
_NAME_AT = re.compile(r"(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*")
_DEREF = re.compile(r"\(\*([A-Za-z_]\w*)\)")  # `(*p)`
# `static_cast<`, `reinterpret_cast<`, `std::static_pointer_cast<` (group 1: a pointer cast of shared_ptrs)
_CAST = re.compile(r"(?:::)?(?:std::)?(?:(?:static|reinterpret|dynamic|const)_cast|(?:static|dynamic|const|"
                   r"reinterpret)(_pointer_cast))<")
_NO_TEMPLATE_PARAMS: frozenset[str] = frozenset()
_MAX_DEPTH = 4  # aliases of aliases, `auto` variables initialized from `auto` variables

# (the operator before it, "" for the first; a name; the number of arguments it is called with, -1: not called)
Step = tuple[str, str, int]


@dataclasses.dataclass(frozen=True, slots=True)
class Declared:
    """A declared type's text and where it is read: the scope and file its names are looked up from,
    and the template parameters in scope there."""

    text: str
    scope: str
    path: str
    template_params: frozenset[str]
    this: str = ""  # `this`: a pointer to this class (a node id), nothing to look up


# compared and hashed by identity: one per definition, made once (a key of the resolutions' memo)
@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class _Call:
    """Where a call is made: the caller's node and its name as its calls write it, the definition
    whose body holds the call, the file, the caller's class ("" for none), the template parameters in
    scope."""

    caller: str
    written: str
    body: Def | None
    path: str
    owner: str
    template_params: frozenset[str]
    # the scope the body's type names are looked up from: its class or namespace (the function itself
    # when it defines types of its own), so that the same type written in a class's methods is looked up once
    where: str
    variables: Mapping[str, list[Local]]  # the body's variables that member calls are made on, by name


class MemberCalls:
    """The classes' members, bases and template parameters, and the bodies' variables, indexed once
    (before the call sites are resolved in forked children); :meth:`resolve` answers one call."""

    def __init__(self, table: SymbolTable, facts: Mapping[str, CppFacts], handles: HandleTypes | None = None) -> None:
        self.table = table
        self.handles = handles or load_handles()
        params: dict[str, set[str]] = collections.defaultdict(set)
        self.bodies: dict[tuple[str, str], list[Def]] = collections.defaultdict(list)
        self.defining_types: set[str] = set()  # functions that define classes (their own scopes)
        bases: dict[str, list[str]] = collections.defaultdict(list)
        self.external_bases: set[str] = set()  # classes with a base the system does not define
        nodes = table.node_by_id
        for d in table.defs:
            if d.record.template_params:
                params[d.id].update(d.record.template_params)
            if d.kind in CALLABLE and d.record.is_definition:
                self.bodies[d.path, d.id].append(d)
            elif d.kind in AGGREGATES and any(kind == "function" for _name, kind in d.record.scope):
                self.defining_types.add(cpp_id("::".join(name for name, kind in d.record.scope if kind == "function")))
            for base in d.record.bases if d.kind in AGGREGATES else ():
                target = table.resolve_type(d.parent, base, d.path)
                if target in nodes and nodes[target].kind in AGGREGATES:
                    if target != d.id and target not in bases[d.id]:
                        bases[d.id].append(target)
                else:
                    self.external_bases.add(d.id)
        self.template_params = {node: frozenset(names) for node, names in params.items()}
        self.bases = {cls: tuple(found) for cls, found in bases.items()}
        self.fields: dict[str, dict[str, Declared]] = collections.defaultdict(dict)
        self.locals: dict[tuple[str, str], dict[str, list[Local]]] = {}
        self.type_aliases: dict[str, Declared] = {}
        for path in sorted(facts):
            for field in facts[path].fields:
                owner = table.id_of(path, field.owner, of_type=True)
                if owner:
                    self.fields[owner].setdefault(field.name, Declared(
                        field.type, id_name(owner), path, self.template_params.get(owner, _NO_TEMPLATE_PARAMS)))
            for local in facts[path].locals:
                self.locals.setdefault((path, local.caller), {}).setdefault(local.name, []).append(local)
            for alias in facts[path].type_aliases:
                scope = alias.scope.replace(ANONYMOUS_NAMESPACE, local_namespace(path))
                self.type_aliases.setdefault(f"{scope}::{alias.name}" if scope else alias.name,
                                             Declared(alias.type, scope, path, _NO_TEMPLATE_PARAMS))
        self.alias_names = frozenset(qual.rsplit("::", 1)[-1] for qual in self.type_aliases)
        # namespaces' variables by qualified name (a file's own under its anonymous namespace), and the
        # initializers of the `auto` ones; a name declared with two types is not guessed between
        self.globals: dict[str, Declared] = {}
        self.global_inits: dict[str, str] = {}
        self.ambiguous_globals: set[str] = set()
        self._global_scopes: dict[str, _Call] = {}  # where each `auto` one's initializer is read
        for path in sorted(facts):
            for variable in facts[path].globals:
                scope = variable.scope.replace(ANONYMOUS_NAMESPACE, local_namespace(path))
                # `static` in a source file: its own; in a header: every includer's copy (read as one)
                if variable.static and not path.endswith(HEADER_SUFFIXES) and local_namespace(path) not in scope:
                    scope = f"{scope}::{local_namespace(path)}" if scope else local_namespace(path)
                qual = f"{scope}::{variable.name}" if scope else variable.name
                declared = Declared(variable.type, scope, path, _NO_TEMPLATE_PARAMS)
                known = self.globals.setdefault(qual, declared)
                if variable.init:
                    self.global_inits.setdefault(qual, variable.init)
                if (known.text, self.global_inits.get(qual, "")) != (variable.type, variable.init):
                    self.ambiguous_globals.add(qual)
        # memos: their answers do not depend on the order of the questions (the children that resolve
        # call sites in spans each fill their own)
        self._members: dict[tuple[str, str, bool], tuple[str | Declared, str]] = {}
        self._calls: dict[tuple[str, str, str], list[_Call]] = {}
        self._classes: dict[Declared, tuple[str, tuple[str, ...], str]] = {}
        # by (where the call is made, the callee, the variable it is made on when the body declares it):
        # what else a resolution reads does not change from one line of a body to the next
        self._resolved: dict[tuple[_Call, str, Local | None], tuple[str, str]] = {}
        self._returned: dict[tuple[str, int], tuple[Declared | None, str]] = {}

    def resolve(self, caller: str, written: str, callee: str, path: str, line: int) -> tuple[str, str]:
        """(the method node, "resolved") for the call ``callee`` (`m->Init`) made by the node ``caller``
        (``written`` as its calls name it) in ``path`` at ``line``; ("", the reason) when it stays
        unresolved."""
        call = self._call(caller, written, path, line)
        head = _OBJECT_HEAD.match(callee)
        local = self._local(call, head.group(1), line) if head is not None and call.variables else None
        key = (call, callee, local)
        hit = self._resolved.get(key)
        if hit is None:
            hit = self._resolved[key] = self._resolve(call, callee, line, local)
        return hit

    def unqualified(self, caller: str, written: str, name: str, path: str, line: int, resolved: str) -> str:
        """What a call written as a plain name (`Name()`) reaches from a method, as C++ looks it up: the
        class's scope, its bases included, before the enclosing namespaces. ``resolved`` is the symbol
        table's answer (the class's own member, else an enclosing class's or namespace's): it stands when
        it is the class's own, when no base or several bases declare the name, and in a class template
        (whose dependent bases are not looked in) unless nothing else declares the name."""
        owner = self._call(caller, written, path, line).owner
        if not owner or owner not in self.bases:
            return resolved
        if resolved and (resolved.startswith(owner + "::") or owner in self.template_params):
            return resolved
        found, _reason = self._member(owner, name, True)
        return found if isinstance(found, str) and found else resolved

    def _resolve(self, call: _Call, callee: str, line: int, local: Local | None) -> tuple[str, str]:
        m = _CALLEE.fullmatch(callee)
        steps = _steps(m.group(1)) if m is not None else None
        if m is None or steps is None:
            return "", UNKNOWN_TYPE
        declared, reason = self._evaluate(steps, call, line, 0, (local,))
        if declared is None:
            return "", reason
        cls, reason = self._class_of(declared, m.group(2))
        if not cls:
            return "", reason
        target, reason = self._member(cls, m.group(3), True)
        return (target, RESOLVED) if isinstance(target, str) and target else ("", reason)

    # -- the object's declaration -----------------------------------------------------------------

    def _call(self, caller: str, written: str, path: str, line: int) -> _Call:
        """Where a call is made: the definition of ``caller`` in ``path`` whose body holds ``line``
        (the innermost), the caller's class and the template parameters in scope."""
        calls = self._calls.get((path, caller, written))
        if calls is None:
            calls = self._calls[path, caller, written] = self._bodies(caller, written, path)
        holding = [c for c in calls[:-1] if c.body is not None and c.body.record.start <= line <= c.body.record.end]
        if len(holding) > 1:
            return max(holding, key=lambda c: c.body.record.start if c.body is not None else -1)
        return holding[0] if holding else calls[-1]

    def _bodies(self, caller: str, written: str, path: str) -> list[_Call]:
        """A :class:`_Call` for each definition of ``caller`` in ``path``, then one for a call outside them."""
        qual = self.table.qual_of(caller)
        owner = self.table.type_id(qual.rsplit("::", 1)[0]) if "::" in qual else ""
        node = self.table.node_by_id.get(owner)
        owner = owner if node is not None and node.kind in AGGREGATES else ""
        caller_params = self.template_params.get(caller, _NO_TEMPLATE_PARAMS)
        where = qual if caller in self.defining_types or "::" not in qual else qual.rsplit("::", 1)[0]
        variables = self.locals.get((path, written), {})
        out = [_Call(caller, written, body, path, owner, frozenset(body.record.template_params)
                     if body.record.template_params else caller_params, where, variables)
               for body in self.bodies.get((path, caller), ())]
        return [*out, _Call(caller, written, None, path, owner, caller_params, where, variables)]

    def _evaluate(self, steps: list[Step], call: _Call, line: int, depth: int,
                  first: tuple[Local | None] | None = None) -> tuple[Declared | None, str]:
        """The declared type of what ``steps`` (an object's text, or an `auto` variable's initializer)
        evaluate to in ``call``'s body at ``line``; ``first``: the variable the first step names, when
        already looked up."""
        declared, reason = self._head(steps[0], call, line, depth, first)
        for op, name, arguments in steps[1:]:
            if declared is None:
                break
            if op == "*":  # `(*p)`: what a pointer, a handle or an iterator points at
                pointee = self.handles.dereferenced(declared.text)
                declared, reason = (dataclasses.replace(declared, text=pointee), "") if pointee else \
                    (None, UNKNOWN_TYPE)
                continue
            if op == "[]":  # `v[i]`: an element of a container, a map's value, what a pointer points at
                element = self.handles.subscripted(declared.text)
                declared, reason = (dataclasses.replace(declared, text=element), "") if element else \
                    (None, UNKNOWN_TYPE)
                continue
            # `entry.second` of a map's element, `it->second`, `v.front()`, `m.find(k)`, `v.at(i)`
            through = self.handles.standard_step(declared.text, op, name, arguments)
            if through is not None:
                declared = dataclasses.replace(declared, text=through)
                continue
            cls, reason = self._class_of(declared, op)
            declared, reason = self._member_type(cls, name, arguments) if cls else (None, reason)
        return declared, reason

    def _head(self, step: Step, call: _Call, line: int, depth: int,
              first: tuple[Local | None] | None) -> tuple[Declared | None, str]:
        """The declared type of a chain's first step: `this`, a variable, a member, a function's result."""
        op, name, arguments = step
        if op == "cast":  # the type a cast writes out
            return Declared(name, call.where, call.path, call.template_params), ""
        called = arguments >= 0
        owner = call.owner
        if name == "this" and not called:
            return (Declared("", "", call.path, _NO_TEMPLATE_PARAMS, this=owner), "") if owner else (None, UNKNOWN_TYPE)
        if called:
            target = self.table.resolve_callee(call.caller, name, path=call.path)
            if not target and owner and "::" not in name:
                found, _reason = self._member(owner, name, True)  # a method of a base
                target = found if isinstance(found, str) else ""
            return self._returns(target, arguments) if target else (None, UNKNOWN_TYPE)
        if "::" in name:
            return self._global(call, name, line, depth)  # a namespace's variable (a class's static: not read)
        where = call.where
        local = first[0] if first is not None else self._local(call, name, line)
        if local is not None:
            if not local.init or unwrap(local.type, self.handles) is not None:
                return Declared(local.type, where, call.path, call.template_params), ""
            init = _steps(local.init) if depth < _MAX_DEPTH else None
            # the initializer's names were declared before the variable
            declared, reason = self._evaluate(init, call, local.line - 1, depth + 1) if init else (None, UNKNOWN_TYPE)
            if declared is None or not local.element:
                return declared, reason
            element = self.handles.element(declared.text)  # a range-for's: an element of what it ranges over
            return (dataclasses.replace(declared, text=element), "") if element else (None, UNKNOWN_TYPE)
        for param in call.body.record.params if call.body is not None else ():
            if param.name == name:
                return Declared(param.type, where, call.path, call.template_params), ""
        if owner:
            field, reason = self._member(owner, name, False)
            if isinstance(field, Declared):
                return field, ""
            if reason == AMBIGUOUS:
                return None, AMBIGUOUS
        return self._global(call, name, line, depth)

    def _global(self, call: _Call, name: str, line: int, depth: int) -> tuple[Declared | None, str]:
        """The declared type of the namespace variable ``name`` (`gLogger_`, `vllm::kU4`) seen from the
        call's scope outwards, a file-local one (anonymous namespace, `static`) only in its own file; an
        `auto` one's from its initializer, whose names are looked up from the call as the variable's were."""
        written = name.lstrip(":")
        here = local_namespace(call.path)
        found: Declared | None = None
        for prefix in ([""] if name.startswith("::") else _outward_scopes(call.where)):
            for qual in (f"{prefix}::{written}" if prefix else written,
                         f"{prefix}::{here}::{written}" if prefix else f"{here}::{written}"):
                found = self.globals.get(qual)
                if found is not None:
                    break
            if found is not None:
                break
        if found is None or qual in self.ambiguous_globals:
            return None, AMBIGUOUS if found is not None else UNKNOWN_TYPE
        if found.text != "auto":
            return found, ""
        init = _steps(self.global_inits[qual]) if depth < _MAX_DEPTH else None
        if init is None:
            return None, UNKNOWN_TYPE
        at = self._global_scopes.get(qual)
        if at is None:  # the initializer's names are looked up from the variable's own scope
            at = self._global_scopes[qual] = _Call(cpp_id(qual), written, None, found.path, "", _NO_TEMPLATE_PARAMS,
                                                   found.scope, {})
        return self._evaluate(init, at, 0, depth + 1)

    def _local(self, call: _Call, name: str, line: int) -> Local | None:
        """The variable ``name`` of ``call``'s body in scope at ``line``: the latest declared."""
        declared = call.variables.get(name, ())
        in_scope = [v for v in declared if v.line <= line <= v.end]
        return max(in_scope, key=lambda v: (v.line, -v.end)) if in_scope else None

    def _returns(self, target: str, arguments: int) -> tuple[Declared | None, str]:
        """The return type of the function ``target`` called with ``arguments`` arguments, read from
        its class's (or namespace's) scope. Of overloads that return different types, the one that
        alone takes that many arguments; none when several do."""
        key = (target, arguments)
        hit = self._returned.get(key)
        if hit is None:
            hit = self._returned[key] = self._returned_by(target, arguments)
        return hit

    def _returned_by(self, target: str, arguments: int) -> tuple[Declared | None, str]:
        node = self.table.node_by_id[target]
        qual = id_name(target)
        scope = qual.rsplit("::", 1)[0] if "::" in qual else ""
        params = self.template_params.get(target, _NO_TEMPLATE_PARAMS) | \
            self.template_params.get(cpp_id(scope), _NO_TEMPLATE_PARAMS)
        returns = node.returns
        if node.overloads:
            declared = {s.returns: Declared(s.returns, scope, s.path, params) for s in node.overloads}
            if len({self._unwrapped(d, 0) for d in declared.values()}) > 1:  # not only spelled differently
                fits = sorted({s.returns for s in node.overloads if _takes(s.params, arguments)})
                types = {self._unwrapped(declared[r], 0) for r in fits}
                # one class spelled several ways is that class; two types neither of which is known
                # to be a class (`std::vector<IValue>` and the `void` of a variadic overload) are
                # not one type: the first of them was the set's arbitrary pop, and with it a call
                # on what the result holds resolved in one run and not in the next
                if len(types) != 1:
                    return None, AMBIGUOUS
                (_cls, _layers, why_not), = types
                if why_not and len(fits) > 1:
                    return None, AMBIGUOUS
                returns = fits[0]
        if not returns:
            return None, UNKNOWN_TYPE
        return Declared(returns, scope, node.path, params), ""

    # -- types and members ------------------------------------------------------------------------

    def _class_of(self, declared: Declared, op: str) -> tuple[str, str]:
        """(the class whose member `op` reaches through an object declared ``declared``, "") or ("", why not)."""
        if declared.this:
            return (declared.this, "") if op == "->" else ("", UNKNOWN_TYPE)
        known = self._classes.get(declared)
        if known is None:
            known = self._classes[declared] = self._unwrapped(declared, 0)
        cls, layers, reason = known
        if op == "->":
            if not layers:
                return "", reason or UNKNOWN_TYPE  # a class's own operator->: what it returns is not read
            layers = layers[1:]
        if layers:  # a handle's own method (`p.reset()`), or a pointer to pointer
            return "", EXTERNAL_TYPE if layers[0] == HANDLE else UNKNOWN_TYPE
        return ("", reason) if reason else (cls, "")

    def _unwrapped(self, declared: Declared, depth: int) -> tuple[str, tuple[str, ...], str]:
        """(the class ``declared`` finally names, the layers around it, "") or ("", layers, why not),
        through the type aliases in scope (`using ModelPtr = std::shared_ptr<Model>;`)."""
        unwrapped = unwrap(declared.text, self.handles)
        if unwrapped is None:
            return "", (), UNKNOWN_TYPE
        base, layers = unwrapped
        name = base.lstrip(":")
        head = name.split("::", 1)[0].split("<", 1)[0]
        if head in declared.template_params:
            return "", layers, TEMPLATE_TYPE
        scope = "" if base.startswith("::") else declared.scope  # `::grpc::Server`: from the global scope only
        cls = self.table.known_type(scope, name, declared.path)
        alias = self._alias(scope, head) if head in self.alias_names else None
        if alias is not None and alias[0] >= _depth_found(cls, name):
            # a type alias hides what outer scopes call so (`RateLimiter::PriorityQueue` hides the
            # namespace's class `PriorityQueue`)
            if "::" in name or not alias[1].text or depth >= _MAX_DEPTH:
                return "", layers, UNKNOWN_TYPE  # a member of an aliased type; an alias in a template
            cls, inner, reason = self._unwrapped(alias[1], depth + 1)
            return cls, layers + inner, reason
        if not cls or self.table.node_by_id[cls].kind not in AGGREGATES:
            return "", layers, EXTERNAL_TYPE
        return cls, layers, ""

    def _alias(self, scope: str, name: str) -> tuple[int, Declared] | None:
        """(the depth of the scope that declares it, the alias) of the type alias ``name`` seen from ``scope``."""
        parts = scope.split("::") if scope else []
        for k in range(len(parts), -1, -1):
            found = self.type_aliases.get("::".join([*parts[:k], name]))
            if found is not None:
                return k, found
        return None

    def _member_type(self, cls: str, name: str, arguments: int) -> tuple[Declared | None, str]:
        """The declared type of a chain's step: the member ``name`` of ``cls``, or what its method
        returns when called with ``arguments`` arguments (-1: not called)."""
        called = arguments >= 0
        found, reason = self._member(cls, name, called)
        if isinstance(found, Declared):
            return found, ""
        if found:
            return self._returns(found, arguments)
        return None, reason if called or reason == AMBIGUOUS else UNKNOWN_TYPE

    def _member(self, cls: str, name: str, method: bool) -> tuple[str | Declared, str]:
        """The method (a node id) or data member (its declaration) ``name`` of the class ``cls``, found in
        the class or else in its bases; ("", the reason) when there is none or several."""
        key = (cls, name, method)
        hit = self._members.get(key)
        if hit is None:
            found, external = self._lookup(cls, name, method, set())
            if len(found) == 1:
                hit = (found.pop(), "")
            else:
                hit = ("", AMBIGUOUS if found else EXTERNAL_BASE if external else NO_METHOD)
            self._members[key] = hit
        return hit

    def _lookup(self, cls: str, name: str, method: bool, seen: set[str]) -> tuple[set[str | Declared], bool]:
        """What ``name`` names in ``cls``: its own member, else every base's (a set: the same member
        reached twice, through a virtual base, is one); and whether a base on the way is outside the system."""
        seen.add(cls)
        if method:
            node = self.table.node_by_id.get(cpp_id(f"{self.table.qual_of(cls)}::{name}"))
            if node is not None and node.kind in CALLABLE:
                return {node.id}, False
        else:
            field = self.fields.get(cls, {}).get(name)
            if field is not None:
                return {field}, False
        found: set[str | Declared] = set()
        external = cls in self.external_bases
        for base in self.bases.get(cls, ()):
            if base not in seen:
                hits, outside = self._lookup(base, name, method, seen)
                found |= hits
                external = external or outside
        return found, external


def _outward_scopes(scope: str) -> list[str]:
    """``scope`` and the scopes enclosing it, innermost first, the global scope ("") last."""
    parts = scope.split("::") if scope else []
    return ["::".join(parts[:k]) for k in range(len(parts), -1, -1)]


def _depth_found(cls: str, name: str) -> int:
    """The depth of the scope where the class ``cls`` was found for ``name`` (`a::b::C` for `C`: 2),
    -1 when found otherwise (through a using-directive)."""
    if not cls:
        return -1
    qual = id_name(cls)
    written = name
    while "<" in written:
        stripped = _INNERMOST_ARGUMENTS.sub("", written)
        if stripped == written:
            break
        written = stripped
    if qual == written:
        return 0
    return qual[:-len(written) - 2].count("::") + 1 if qual.endswith("::" + written) else -1


def _steps(text: str) -> list[Step] | None:
    """A member call's object as steps, `a->b().c` -> [("", "a", -1), ("->", "b", 0), (".", "c", -1)],
    `v[i]` -> [("", "v", -1), ("[]", "", -1)]; None for anything else (`(*p)`, a cast, a template's
    arguments, a text cut short)."""
    out: list[Step] = []
    op = ""
    at, end = 0, len(text)
    deref = _DEREF.match(text)
    cast = _CAST.match(text) if deref is None else None
    if deref is not None:  # `(*p)`: what p points at
        out += [("", deref.group(1), -1), ("*", "", -1)]
        at = deref.end()
    elif cast is not None:  # `static_cast<T*>(x)`, `std::static_pointer_cast<T>(x)`: a T* or a shared_ptr<T>
        angled = _after_parentheses(text, cast.end() - 1, "<", ">")
        closing = _after_parentheses(text, angled) if angled > 0 and text.startswith("(", angled) else -1
        if closing < 0:
            return None
        written = text[cast.end():angled - 1]
        out.append(("cast", f"std::shared_ptr<{written}>" if cast.group(1) else written, -1))
        at = closing
    if out:
        if at == end:
            return out
        if (after := _operator_at(text, at)) is None:
            return None
        op, at = after
    while True:
        m = _NAME_AT.match(text, at)
        if m is None:
            return None
        at = m.end()
        arguments = -1
        if at < end and text[at] == "(":
            closing = _after_parentheses(text, at)
            if closing < 0:
                return None
            arguments = _count_arguments(text[at + 1:closing - 1])
            at = closing
        out.append((op, m.group(), arguments))
        while at < end and text[at] == "[":  # `v[i]`: an element of v
            closing = _after_brackets(text, at)
            if closing < 0:
                return None
            out.append(("[]", "", -1))
            at = closing
        if at == end:
            return out
        if (after := _operator_at(text, at)) is None:
            return None
        op, at = after


def _operator_at(text: str, at: int) -> tuple[str, int] | None:
    """(the member operator at ``at``, `->` or `.`, and the index after it); None for anything else."""
    if text.startswith("->", at):
        return "->", at + 2
    return (".", at + 1) if text.startswith(".", at) else None


def _takes(params: tuple[Parameter, ...], arguments: int) -> bool:
    """Whether a function with ``params`` can be called with ``arguments`` arguments."""
    if params and params[-1].kind is ParamKind.VAR_POSITIONAL:
        return arguments >= len(params) - 1
    return sum(1 for p in params if p.default is None) <= arguments <= len(params)


def _count_arguments(text: str) -> int:
    """The number of arguments in an argument list's text (commas outside brackets and literals)."""
    if not text.strip():
        return 0
    count, depth, quote, escaped = 1, 0, "", False
    for c in text:
        if quote:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            count += 1
    return count


def _after_parentheses(text: str, at: int, opening: str = "(", closing: str = ")") -> int:
    """The index after the `)` that closes the `(` at ``at``, -1 when it is not closed."""
    depth = 0
    for i in range(at, len(text)):
        if text[i] == opening:
            depth += 1
        elif text[i] == closing:
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def _after_brackets(text: str, at: int) -> int:
    """The index after the `]` that closes the `[` at ``at``, -1 when it is not closed."""
    return _after_parentheses(text, at, "[", "]")


__all__ = ["AMBIGUOUS", "EXTERNAL_BASE", "EXTERNAL_TYPE", "NO_METHOD", "RESOLVED", "TEMPLATE_TYPE", "UNKNOWN_TYPE",
           "MemberCalls"]
