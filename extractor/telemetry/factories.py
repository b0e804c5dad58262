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
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import msgspec

from extractor.telemetry import python_symbols as pysym
from extractor.telemetry.libraries import Constructor, Conventions
from extractor.telemetry.python_facts import CallFacts
from extractor.telemetry.python_resolve import Module, PythonResolver
from extractor.telemetry.python_symbols import Sym

MAX_DEPTH = 4  # factories calling factories: deeper chains are not followed


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
        for call in calls:
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
                if kind == "terminal" or self.makes_metrics(value):
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
            if value in entered or not self.makes_metrics(value):
                continue  # recursion, or a function that forwards parameters to no metric at all
            if depth and not any(pysym.given_by_caller(v) for v in
                                 [*fact.args, *fact.kwargs.values(), *fact.dstar]):
                continue  # nothing the outermost caller gave flows on: no metric it could name
            if depth >= MAX_DEPTH:
                self.cut.add((root.module.path, root.line, value))
                continue
            yield from self._expand_factory(root, fact, value, steps, entered + (value,), depth)

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
                binding = {("attr", n): v for n, v in values.items()}
                if in_init:
                    binding.update({("param", n): v for n, v in values.items()})
                yield from self._expand(root, substituted(call.fact, binding), module, via, entered, depth + 1)
            return
        for call in inner:
            yield from self._expand(root, substituted(call.fact, binding), module, via, entered, depth + 1)


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
