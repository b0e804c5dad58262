"""Metric factories: functions, methods and classes whose parameters flow into a metric
constructor, followed from each call site down to the constructor.

Every recorded call (:mod:`.python_scan`) is expanded: its callee is resolved to a library
constructor (a *terminal*, from ``libraries.yaml``) or to a factory of the analysed code (a
function, a method reached through ``self``, a class whose ``__init__`` forwards), the call's
arguments are bound to the factory's parameters, and the factory's own forwarding calls are
expanded with those values, up to :data:`MAX_DEPTH` factories deep. What comes out is the
constructor, the values of its parameters as the *outermost* call site gives them, and the chain
of factories (``via``). A constructor call whose values still read a parameter of the function it
sits in is inside a factory: it is reported only when no call site reaches that factory.

A factory may also be *made*: a function given the metric class returns a closure, a lambda or a
``functools.partial`` that calls it (``self._counter = self._make_factory(Counter)``), and the
code calls what it kept (``self._counter("x_total", "...")``), under ``self``, a module name or a
dict entry. Such a call is expanded through the returned callable's own call of the class, with
the class the keeping call site gave (``via``: ``factory:<maker> > closure``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Any

import msgspec

from extractor.telemetry import python_symbols as pysym
from extractor.telemetry.libraries import Constructor, Conventions
from extractor.telemetry.python_facts import CallFacts
from extractor.telemetry.python_resolve import Module, PythonResolver
from extractor.telemetry.python_symbols import Sym

MAX_DEPTH = 4  # factories calling factories: deeper chains are not followed
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@dataclasses.dataclass(frozen=True, slots=True)
class Call:
    module: Module
    fact: CallFacts  # the scanner's record, or it with a factory's parameters substituted

    @property
    def line(self) -> int:
        return self.fact.line


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    root: Call
    constructor: Constructor
    values: dict[str, Sym]  # the constructor's parameters as the root call gives them
    via: tuple[str, ...]
    entered: tuple[str, ...]  # factory keys the expansion went through


class FactoryExpander:
    def __init__(self, resolver: PythonResolver, conventions: Conventions, calls: list[Call],
                 otel: bool):
        self.resolver = resolver
        self.conventions = conventions
        self.otel = otel  # the system imports opentelemetry: meter.create_* are instruments
        self.cut: set[tuple[str, int, str]] = set()  # call sites whose factory chain is too deep
        self._makes: dict[str, bool] = {}
        self._targets: dict[tuple[str, str, str], list[tuple[str, Any, str]]] = {}
        self.by_function: dict[tuple[str, str], list[Call]] = {}
        self.by_class: dict[tuple[str, str], list[Call]] = {}
        self._asking: set[tuple[str, int, str]] = set()  # keeping calls whose class is being resolved
        self.kept: dict[str, list[Call]] = {}  # "mod.Class.attr" / "mod.NAME" -> the calls whose result it keeps
        for call in calls:
            if call.fact.target:
                self.kept.setdefault(_kept_key(call.module.name, call.fact.class_name, call.fact.target), []).append(call)
            key = (call.module.name, call.fact.function)
            self.by_function.setdefault(key, []).append(call)
            if call.fact.class_name:
                self.by_class.setdefault((call.module.name, call.fact.class_name), []).append(call)

    # -- what a callee names -------------------------------------------------------------------
    def targets(self, call: Call) -> list[tuple[str, Any, str]]:
        """``[("terminal", Constructor, via) | ("factory", key, via)]`` for the call's callee.

        The same callee in the same class of a module names the same things: asked once."""
        key = (call.module.name, call.fact.class_name, call.fact.callee)
        found = self._targets.get(key)
        if found is None:
            found = self._targets[key] = self._resolve_targets(call)
        return found

    def _resolve_targets(self, call: Call) -> list[tuple[str, Any, str]]:
        callee = call.fact.callee
        module = call.module
        if call.fact.receiver:
            return self._forwarded_targets(call)
        made = self._made_targets(call)
        if made:
            return made
        last = callee.rsplit(".", 1)[-1]
        if self.otel and last in self.conventions.instruments and "." in callee:
            return [("terminal", self.conventions.instruments[last], "instrument")]
        if callee.startswith("super()."):
            if callee != "super().__init__" or not call.fact.class_name:
                return []
            base = self.resolver.first_base(f"{module.name}.{call.fact.class_name}")
            return self._class_targets(base, f"super:{base}") if base else []
        head, _, attr = callee.partition(".")
        if head in ("self", "cls") and attr and "." not in attr:
            return self._self_targets(call, attr)
        target = self.resolver.resolve(callee, module)
        if not target:
            return []
        return self._class_targets(target, "attribute" if "." in callee else "import")

    def _forwarded_targets(self, call: Call) -> list[tuple[str, Any, str]]:
        """``client.Histogram(...)``, ``client`` annotated with a class of the analysed code whose method
        of that name (its own or a base's) returns a library's class: that constructor
        (``forward:PrometheusClient.Histogram``). Nothing when the class or the method is not found."""
        attr = call.fact.callee.rpartition(".")[2]
        owner = self.resolver.resolve(call.fact.receiver, call.module)
        for klass in ([owner, *self._ancestors(owner)] if owner in self.resolver.classes else []):
            module, facts = self.resolver.classes[klass]
            returned = facts.forwards.get(attr)
            if returned:
                target = self.resolver.resolve(returned, module)
                found = self._class_targets(target, "") if target else []
                via = f"forward:{facts.name}.{attr}"
                return [(kind, value, via) for kind, value, _ in found if kind == "terminal"]
            if attr in facts.methods:
                return []
        return []

    def _made_targets(self, call: Call) -> list[tuple[str, Any, str]]:
        """``("made", (keeping call, maker), via)`` when the callee is a callable a maker returned."""
        found: list[tuple[str, Any, str]] = []
        for key in self._kept_keys(call):
            for store in self.kept.get(key, ()):
                maker = self._maker_of(store)
                if maker and self._given_class_makes_metrics(store, maker):
                    found.append(("made", (store, maker), f"factory:{maker}"))
            if found:
                break
        return found

    def _kept_keys(self, call: Call) -> list[str]:
        """Where the callee could be kept: ``self.x`` in the class or any base, a module name."""
        callee, module = call.fact.callee, call.module
        head, _, attr = callee.partition(".")
        if head in ("self", "cls"):
            if not call.fact.class_name or not attr:
                return []
            owner = f"{module.name}.{call.fact.class_name}"
            return [f"{klass}.{attr}" for klass in [owner, *self._ancestors(owner)]]
        name, bracket, entry = callee.partition("[")
        target = self.resolver.resolve(name, module) or ("" if "." in name else f"{module.name}.{name}")
        return [target + bracket + entry] if target else []

    def _ancestors(self, owner: str) -> list[str]:
        out: list[str] = []
        stack = self.resolver.bases(owner)
        while stack:
            base = stack.pop()
            if base not in out and base != owner:
                out.append(base)
                stack.extend(self.resolver.bases(base))
        return out

    def _maker_of(self, store: Call) -> str:
        """The maker whose returned callable ``store`` keeps; '' when its callee is none."""
        callee, module = store.fact.callee, store.module
        head, _, attr = callee.partition(".")
        if head in ("self", "cls") and attr and "." not in attr and store.fact.class_name:
            key = self.resolver.lookup_method(f"{module.name}.{store.fact.class_name}", attr)
        else:
            key = self.resolver.resolve(callee, module)
        return key if key in self.resolver.makers else ""

    def _given(self, store: Call, maker: str) -> dict[str, Sym]:
        """The maker's parameters as the keeping call site gives them."""
        _, signature = self.resolver.signatures[maker]
        return bind(store.fact, [p for p, _ in signature.params], signature.defaults, None, signature.params)

    def _given_class_makes_metrics(self, store: Call, maker: str) -> bool:
        """Most functions returning a closure over a callable parameter wrap something else (a lazy
        import, a retry): followed only when the class given is a constructor or a factory."""
        if (store.module.name, store.line, maker) in self._asking:
            return False
        self._asking.add((store.module.name, store.line, maker))
        try:
            for name in _class_names(self._given(store, maker).get(self.resolver.makers[maker][1].param)):
                call = Call(store.module, msgspec.structs.replace(store.fact, callee=name))
                for kind, value, _ in self.targets(call):
                    if kind == "terminal" or (kind == "factory" and self.makes_metrics(value)):
                        return True
            return False
        finally:
            self._asking.discard((store.module.name, store.line, maker))

    def _self_targets(self, call: Call, attr: str) -> list[tuple[str, Any, str]]:
        if not call.fact.class_name:
            return []
        owner = f"{call.module.name}.{call.fact.class_name}"
        method = self.resolver.lookup_method(owner, attr)
        if method and method in self.resolver.signatures:
            return [("factory", method, f"factory:{method}")]
        found: list[tuple[str, Any, str]] = []
        seen: set[str] = set()
        made: set[Any] = set()
        # The class attribute may be replaced in any subclass (PrometheusStatLogger ->
        # RayPrometheusStatLogger): each class that the attribute names is one possibility; a
        # subclass swapping in a thin subclass of the same constructor adds nothing.
        for klass in [owner, *self.resolver.descendants(owner)]:
            target = self.resolver.lookup_attr(klass, attr)
            if not target or target in seen:
                continue
            seen.add(target)
            step = f"class-attr:{klass.rsplit('.', 1)[-1]}.{attr}"
            for kind, value, via in self._class_targets(target, ""):
                key = (value.library, value.type) if kind == "terminal" else value
                if key in made:
                    continue
                made.add(key)
                found.append((kind, value, step if kind == "terminal" else f"{step} > {via}"))
        return found

    def _class_targets(self, target: str, via: str, seen: frozenset[str] = frozenset()) -> list[tuple[str, Any, str]]:
        constructor = self.conventions.constructors.get(target)
        if constructor is not None:
            return [("terminal", constructor, via)]
        if target in seen:
            return []
        if target in self.resolver.signatures:  # a function or method factory
            return [("factory", target, _join(via, f"factory:{target}"))]
        init = self.resolver.lookup_method(target, "__init__")
        if init and init in self.resolver.signatures:
            return [("factory", target, _join(via, f"factory:{target}"))]
        for base in self.resolver.bases(target):  # a thin subclass of a constructor
            for kind, value, _ in self._class_targets(base, via, seen | {target}):
                if kind == "terminal":
                    return [(kind, value, f"subclass:{target}")]
        return []

    def _inner_calls(self, key: str) -> list[Call]:
        resolver = self.resolver
        if key in resolver.signatures and key not in resolver.classes:
            module, _ = resolver.signatures[key]
            return self.by_function.get((module.name, key[len(module.name) + 1:]), [])
        init = resolver.lookup_method(key, "__init__")
        module, signature = resolver.signatures[init]
        return self.by_class.get((module.name, signature.class_name), [])

    def makes_metrics(self, key: str) -> bool:
        """Whether some call inside factory ``key`` reaches a constructor, through any number of
        factories: most functions that forward a parameter make no metric, and are not followed."""
        if key in self._makes:
            return self._makes[key]
        self._makes[key] = False  # a cycle counts as no metric until a constructor is found
        found = False
        for call in self._inner_calls(key):
            for kind, value, _ in self.targets(call):
                if kind in ("terminal", "made") or self.makes_metrics(value):
                    found = True
                    break
            if found:
                break
        self._makes[key] = found
        return found

    # -- expansion -----------------------------------------------------------------------------
    def expand(self, root: Call) -> Iterator[Outcome]:
        yield from self._expand(root, root.fact, root.module, (), (), 0)

    def _expand(self, root: Call, fact: CallFacts, module: Module, via: tuple[str, ...],
                entered: tuple[str, ...], depth: int) -> Iterator[Outcome]:
        call = Call(module, fact)
        for kind, value, step in self.targets(call):
            steps = via + ((step,) if step and not (via and step in ("import", "attribute")) else ())
            if kind == "terminal":
                values = bind(fact, value.params, {}, value.params)
                # Reached through a factory, a constructor whose values the outermost caller does
                # not decide is the constructor's own call site's business: reported there.
                if depth and not pysym.given_by_caller(values.get(value.roles["name"])):
                    continue
                yield Outcome(root, value, values, steps, entered)
                continue
            if kind == "made":
                store, maker = value
                if maker in entered or (depth and not _gives(fact)):
                    continue
                if depth >= MAX_DEPTH:
                    self.cut.add((root.module.path, root.line, maker))
                    continue
                yield from self._expand_made(root, fact, store, maker, steps, entered + (maker,), depth)
                continue
            if value in entered or not self.makes_metrics(value):
                continue  # recursion, or a function that forwards parameters to no metric at all
            if depth and not _gives(fact):
                continue  # nothing the outermost caller gave flows on: no metric it could name
            if depth >= MAX_DEPTH:
                self.cut.add((root.module.path, root.line, value))
                continue
            yield from self._expand_factory(root, fact, value, steps, entered + (value,), depth)

    def _expand_made(self, root: Call, fact: CallFacts, store: Call, maker: str, via: tuple[str, ...],
                     entered: tuple[str, ...], depth: int) -> Iterator[Outcome]:
        """A call of the callable ``store`` kept: the call the callable makes, with its parameters
        bound to this call's arguments, made with each class the keeping call site gave."""
        if depth == 0:
            fact = _marked(fact)
        _, made = self.resolver.makers[maker]
        given = self._given(store, maker)
        classes = _class_names(given.get(made.param))
        own = bind(fact, [p for p, _ in made.params], {}, None, made.params)
        binding = {("param", n): v for n, v in own.items()}
        if made.shape == "partial":  # its bound arguments were read where the maker's parameters are open
            binding.update({("param", n): v for n, v in given.items() if ("param", n) not in binding})
        inner = substituted(made.call, binding)
        for name in classes:
            call = msgspec.structs.replace(inner, callee=name, class_name=store.fact.class_name,
                                           function=store.fact.function)
            yield from self._expand(root, call, store.module, via + (made.shape,), entered, depth + 1)

    def _expand_factory(self, root: Call, fact: CallFacts, key: str, via: tuple[str, ...],
                        entered: tuple[str, ...], depth: int) -> Iterator[Outcome]:
        resolver = self.resolver
        if depth == 0:
            fact = _marked(fact)
        if key in resolver.signatures and key not in resolver.classes:  # function or method
            module, signature = resolver.signatures[key]
            function = key[len(module.name) + 1:]
            names = [p for p, _ in signature.params]
            values = bind(fact, names, signature.defaults, None, signature.params)
            binding = {("param", n): v for n, v in values.items()}
            if signature.class_name and function == f"{signature.class_name}.__init__":
                binding.update({("attr", n): v for n, v in values.items()})
            inner = self.by_function.get((module.name, function), [])
        else:  # a class: its __init__ binds, for calls in __init__ and through self elsewhere
            init = resolver.lookup_method(key, "__init__")
            module, signature = resolver.signatures[init]
            cls = signature.class_name
            names = [p for p, _ in signature.params]
            values = bind(fact, names, signature.defaults, None, signature.params)
            reached: list[tuple[Call, bool]] = []  # (call, whether it is in __init__)
            for call in self.by_class.get((module.name, cls), []):
                in_init = call.fact.function == f"{cls}.__init__"
                if in_init or any(tag == "attr" for tag, _ in _call_refs(call.fact)):
                    reached.append((call, in_init))
            for call, in_init in reached:
                if in_init and _guarded_off(call.fact, values):
                    continue
                binding = {("attr", n): v for n, v in values.items()}
                if in_init:
                    binding.update({("param", n): v for n, v in values.items()})
                yield from self._expand(root, substituted(call.fact, binding), module, via, entered, depth + 1)
            return
        for call in inner:
            if _guarded_off(call.fact, values):
                continue
            yield from self._expand(root, substituted(call.fact, binding), module, via, entered, depth + 1)


def _guarded_off(fact: CallFacts, values: dict[str, Sym]) -> bool:
    """Whether the call cannot run for these parameter values: it sits under ``if P is None`` (or
    its else branch) and the call site gives P a value known to be something else (or None)."""
    for param, when_none in fact.guards:
        value = values.get(param)
        while isinstance(value, list) and value[:1] == ["from"]:
            value = value[1]
        known = _none_or_not(value)
        if known is not None and known != when_none:
            return True
    return False


def _none_or_not(value: Any) -> bool | None:
    """True for the literal None, False for a value that is certainly not None (another literal, a
    display, a string built by formatting), None when it is not known."""
    if not isinstance(value, list) or not value:
        return None
    if value[0] == "lit":
        return value[1] is None
    if value[0] in ("seq", "fmt", "dict"):
        return False
    return None


def _gives(fact: CallFacts) -> bool:
    """Whether something the outermost caller gave flows on in ``fact``."""
    return any(pysym.given_by_caller(v) for v in [*fact.args, *fact.kwargs.values(), *fact.dstar])


def _kept_key(module: str, class_name: str, target: str) -> str:
    if target.startswith("self."):
        return f"{module}.{class_name}.{target[5:]}"
    return f"{module}.{target}"


def _class_names(value: Sym | None) -> list[str]:
    """The dotted names a value given for a class parameter spells (``Counter``,
    ``prometheus_client.Gauge``; alternatives each): an unknown value's text is the name itself."""
    value = pysym.unwrap(value)
    if not isinstance(value, list) or not value:
        return []
    if value[0] == "alt":
        return [name for option in value[1] for name in _class_names(option)]
    if value[0] == "unk" and _DOTTED.match(value[1]):
        return [value[1]]
    return []


def _marked(fact: CallFacts) -> CallFacts:
    """The root call's arguments marked as given by the caller (see :func:`pysym.given_by_caller`)."""
    return msgspec.structs.replace(
        fact, args=tuple(["star", ["from", a[1]]] if a[:1] == ["star"] else ["from", a] for a in fact.args),
        kwargs={k: ["from", v] for k, v in fact.kwargs.items()}, dstar=tuple(_mark_dict(v) for v in fact.dstar))


def _mark_dict(value: Sym) -> Sym:
    if isinstance(value, list) and value[:1] == ["dict"]:
        return ["dict", {k: ["from", v] for k, v in value[1].items()}]
    return value


def _join(via: str, step: str) -> str:
    return step if via in ("import", "attribute", "") else f"{via} > {step}"


def _call_refs(fact: CallFacts) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for value in [*fact.args, *fact.kwargs.values(), *fact.dstar]:
        found |= pysym.refs(value)
    return found


def substituted(fact: CallFacts, binding: dict[tuple[str, str], Sym]) -> CallFacts:
    """The call with the factory's parameters replaced by the values its call site gives."""
    kwargs = {k: pysym.substitute(v, binding) for k, v in fact.kwargs.items()}
    rest = []
    for value in fact.dstar:
        value = pysym.substitute(value, binding)
        if isinstance(value, list) and value and value[0] == "dict":
            for k, v in value[1].items():
                kwargs.setdefault(k, v)  # **kwargs forwarded: the caller's keywords
        else:
            rest.append(value)
    return msgspec.structs.replace(fact, args=tuple(pysym.substitute(a, binding) for a in fact.args),
                                   kwargs=kwargs, dstar=tuple(rest))


def bind(fact: CallFacts, names: list[str] | tuple[str, ...], defaults: dict[str, Sym],
         positional_only: tuple[str, ...] | None = None,
         kinds: tuple[tuple[str, str], ...] | None = None) -> dict[str, Sym]:
    """Parameter name -> value, as Python binds a call's arguments (``*x`` expanded when ``x``
    is known, surplus positionals to ``*args``, surplus keywords to ``**kwargs``)."""
    kind_of = dict((n, k) for n, k in kinds) if kinds else {n: "pos" for n in names}
    positional_names = [n for n in names if kind_of.get(n) == "pos"]
    var = next((n for n in names if kind_of.get(n) == "var"), None)
    kw = next((n for n in names if kind_of.get(n) == "kw"), None)
    values: dict[str, Sym] = {}
    positionals: list[Sym] = []
    open_star: Sym | None = None
    for arg in fact.args:
        if isinstance(arg, list) and arg and arg[0] == "star":
            known = pysym.items(arg[1])
            if known is None:
                open_star = arg[1]
                break
            positionals.extend(known)
        else:
            positionals.append(arg)
    for name, value in zip(positional_names, positionals):
        values[name] = value
    if var is not None:
        values[var] = ["seq", positionals[len(positional_names):]]
    extra: dict[str, Sym] = {}
    for key, value in fact.kwargs.items():
        if key in kind_of and kind_of[key] in ("pos", "kwonly"):
            values.setdefault(key, value)
        else:
            extra[key] = value
    if kw is not None:
        values[kw] = ["dict", extra]
    elif positional_only is not None:
        values.update({k: v for k, v in extra.items() if k not in values})  # a library's keyword-only options
    for name in names:
        if name not in values:
            if open_star is not None:
                values[name] = pysym.unk(f"*{pysym.describe(open_star)}")
            elif name in defaults:
                values[name] = defaults[name]
    return values
