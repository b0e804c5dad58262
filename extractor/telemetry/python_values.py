"""Values one file takes from another: a constant it imports (``from .consts import PREFIX``,
``consts.LABELS``, ``Names.QUEUE``) and what a function it calls returns (``metric_name("x")``
for ``def metric_name(name): return f"{PREFIX}{name}"``).

The per-file scanner cannot read them (facts are per file) and leaves them as ``["ext", text]``
and ``["call", text, callee, args, kwargs]`` (:mod:`.python_symbols`). Here, with every module's
facts, each is read in the module that defines it, through the same import resolution as the
metric classes (:class:`.PythonResolver`): a constant or a function's value is taken only when
it is fully known there (its own imports read in turn), so no name is read in the wrong module;
anything else becomes the ``["unk", text]`` it always was, and its reason says the text.
"""

from __future__ import annotations

from typing import Any

import msgspec

from extractor.telemetry import python_symbols as pysym
from extractor.telemetry.python_facts import CallFacts, MetricFacts, ReturningFunction, Sym
from extractor.telemetry.python_resolve import Module, PythonResolver

_MAX_DEPTH = 8  # constants of constants, calls in calls
_FOREIGN = ("ext", "call")


class ValueReader:
    """Replaces the ``ext`` and ``call`` values of one system's facts by what they are."""

    def __init__(self, modules: dict[str, Module], facts: dict[str, MetricFacts], resolver: PythonResolver):
        self.modules = modules
        self.resolver = resolver
        self.constants: dict[str, tuple[Module, Sym]] = {}
        self.functions: dict[str, tuple[Module, ReturningFunction]] = {}
        for name, module in modules.items():
            for key, value in facts[name].constants.items():
                self.constants[f"{name}.{key}"] = (module, value)
            for key, function in facts[name].returns.items():
                self.functions[f"{name}.{key}"] = (module, function)
        self._memo: dict[tuple[str, str], Sym | None] = {}  # (module, text) -> the known value, None if not
        self.read = 0  # values taken from another definition

    def value(self, sym: Any, module: Module, depth: int = 0) -> Any:
        """``sym`` (read in ``module``) with each imported constant and call replaced by what it is,
        or by ``["unk", text]``."""
        if not isinstance(sym, list) or not sym or not _has_foreign(sym):
            return sym
        tag = sym[0]
        if tag == "ext":
            known = self._known(module, sym[1], depth, self._constant)
            return known if known is not None else pysym.unk(sym[1])
        if tag == "call":
            known = self._call(sym, module, depth)
            return known if known is not None else pysym.unk(sym[1])
        if tag in ("fmt", "seq", "alt"):
            out = [self.value(v, module, depth) for v in sym[1]]
            return pysym.alt(out) if tag == "alt" else [tag, out]
        if tag == "add":
            return ["add", self.value(sym[1], module, depth), self.value(sym[2], module, depth)]
        if tag in ("star", "from"):
            return [tag, self.value(sym[1], module, depth)]
        if tag == "dict":
            return ["dict", {k: self.value(v, module, depth) for k, v in sym[1].items()}]
        return sym

    def call_facts(self, fact: CallFacts, module: Module) -> CallFacts:
        if not any(_has_foreign(v) for v in (*fact.args, *fact.kwargs.values(), *fact.dstar)):
            return fact
        return msgspec.structs.replace(
            fact, args=tuple(self.value(v, module) for v in fact.args),
            kwargs={k: self.value(v, module) for k, v in fact.kwargs.items()},
            dstar=tuple(self.value(v, module) for v in fact.dstar))

    def defaults(self, defaults: dict[str, Sym], module: Module) -> dict[str, Sym]:
        if not any(_has_foreign(v) for v in defaults.values()):
            return defaults
        return {k: self.value(v, module) for k, v in defaults.items()}

    def _known(self, module: Module, text: str, depth: int, read) -> Sym | None:
        key = (module.name, text)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # a constant defined through itself stays unknown
        found = read(module, text, depth) if depth < _MAX_DEPTH else None
        if found is not None:
            self.read += 1
        self._memo[key] = found
        return found

    def _target(self, module: Module, text: str, depth: int = 0) -> str:
        """The qualified name ``text`` (as written in ``module``) stands for."""
        head = text.partition(".")[0]
        if head in module.imports or head in module.classes:
            return self.resolver.resolve(text, module)
        own = f"{module.name}.{text}"  # a constant or function of the module itself
        if own in self.constants or own in self.functions or not module.stars or depth >= _MAX_DEPTH:
            return own
        # `from .consts import *`: the name is the star-imported module's (the last that has it)
        for star in self.resolver.star_modules(module):
            found = self._target(star, text, depth + 1)
            if found in self.constants or found in self.functions:
                return found
        return own

    def _constant(self, module: Module, text: str, depth: int) -> Sym | None:
        found = self.constants.get(self._target(module, text, depth))
        if found is None:
            return None
        owner, value = found
        value = self.value(value, owner, depth + 1)
        return value if _known(value) else None

    def _call(self, sym: Sym, module: Module, depth: int) -> Sym | None:
        _, text, callee, args, kwargs = sym
        found = self.functions.get(self._target(module, callee, depth))
        if found is None or depth >= _MAX_DEPTH:
            return None
        owner, function = found
        body = self.value(function.value, owner, depth + 1)
        if not _known(body, allow_params=True):
            return None
        binding = _bind(function, [self.value(a, module, depth) for a in args],
                        {k: self.value(v, module, depth) for k, v in kwargs.items()},
                        {k: self.value(v, owner, depth + 1) for k, v in function.defaults.items()})
        if binding is None:
            return None
        self.read += 1
        return pysym.substitute(body, binding)


def _bind(function: ReturningFunction, args: list[Sym], kwargs: dict[str, Sym],
          defaults: dict[str, Sym]) -> dict[tuple[str, str], Sym] | None:
    """The call's value for each parameter; None when one has none (or an argument has no parameter)."""
    names = [name for name, kind in function.params if kind == "pos"]
    if len(args) > len(names):
        return None
    given = dict(zip(names, args))
    for key, value in kwargs.items():
        if key in given or all(key != name for name, _ in function.params):
            return None
        given[key] = value
    binding = {}
    for name, _ in function.params:
        value = given.get(name, defaults.get(name))
        if value is None:
            return None
        binding[("param", name)] = value
    return binding


def _has_foreign(sym: Any) -> bool:
    return any(part[0] in _FOREIGN for part in pysym.parts(sym))


def _known(sym: Any, allow_params: bool = False) -> bool:
    """Nothing unknown left in ``sym`` (but the function's own parameters, when allowed)."""
    for part in pysym.parts(sym):
        tag = part[0]
        if tag in ("unk", "attr", "ext", "call") or (tag == "param" and not allow_params):
            return False
    return True
