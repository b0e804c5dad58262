"""The per-file facts of the Python metrics scanner (:mod:`.python_scan`, :mod:`.python_libscan`),
typed: the extract step (:mod:`.python_records`, :mod:`.factories`, :mod:`.provided`) reads them as
these Structs, decoded from msgpack by the scanner's return annotation.

Argument values are symbolic values (:mod:`.python_symbols`: nested lists such as ``["lit", "x"]``,
``["param", "name"]``), kept as plain lists: the factory expansion substitutes inside them.
Path-free (cached by content hash): relative imports keep their level.
"""

from __future__ import annotations

from typing import Any

import msgspec

from extractor.telemetry.exposition import ExpositionLine

Sym = Any  # a symbolic value (extractor.telemetry.python_symbols): a JSON-like list


class ImportEntry(msgspec.Struct, frozen=True, array_like=True):
    """What a local name imports: ``from ..m import x as y`` -> y: ("m", 2, "x"); ``import a.b`` -> a: ("a", 0, "")."""

    module: str
    level: int
    name: str


class ClassFacts(msgspec.Struct, frozen=True, array_like=True):
    name: str  # dotted through the enclosing classes ("Outer.Inner")
    line: int
    bases: tuple[str, ...]  # dotted as written
    attrs: dict[str, str]  # class attribute -> the dotted name it holds (``_gauge_cls = Gauge``)
    methods: tuple[str, ...]  # sorted
    # a method named like a metric class that returns a metric class, or ``functools.partial`` of one (a
    # client wrapper's ``def Histogram(self): return partial(self.prometheus_client.Histogram, ...)``): method
    # -> that class, dotted as written in the module (``self.<p>.`` replaced by the name method p returns)
    forwards: dict[str, str] = {}


class Signature(msgspec.Struct, frozen=True, array_like=True):
    """A factory's signature: a function or method whose parameters reach a recorded call."""

    class_name: str  # the class of a method; "" for a function
    line: int
    params: tuple[tuple[str, str], ...]  # (name, "pos" | "var" | "kwonly" | "kw"); a method's self left out
    defaults: dict[str, Sym]


class CallFacts(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """A call that could make a metric, its arguments compiled into symbolic values."""

    callee: str  # dotted as written ("prometheus_client.Gauge", "self._gauge_cls", "super().__init__")
    line: int
    class_name: str  # the enclosing class ("" outside any)
    function: str  # the enclosing function's qualname ("Cls.method", "f.inner"); "" outside any
    args: tuple[Sym, ...]  # positional; ``*x`` as ["star", value]
    kwargs: dict[str, Sym]
    dstar: tuple[Sym, ...] = ()  # ``**x`` values
    target: str = ""  # where the result is kept: a module-level name or ``self.x``
    # the `if` tests on parameters that the call runs under: (parameter, True when it runs only if
    # the parameter is None) for `if labelnames is None: ... else: ...` in a factory
    guards: tuple[tuple[str, bool], ...] = ()
    # the annotation of the parameter the callee's head names (``client: MetricsClient`` for
    # ``client.Histogram(...)``), dotted as written; "" when the head is no annotated parameter
    receiver: str = ""


class MadeCallable(msgspec.Struct, frozen=True, array_like=True):
    """A function that returns a callable calling one of its parameters: a closure
    (``def factory(*a, **k): return cls(*a, **k)``; ``return factory``), a lambda, or
    ``functools.partial(cls, ...)``. Whoever calls what the function returned calls ``param``."""

    shape: str  # "closure", "lambda" or "partial"
    param: str  # the function's parameter the returned callable calls
    params: tuple[tuple[str, str], ...]  # the returned callable's own parameters, as Signature.params
    call: CallFacts  # its call of ``param``, values read with its own parameters open


class ReturningFunction(msgspec.Struct, frozen=True, array_like=True):
    """A module-level function whose body only names values and returns one built from its
    parameters (``def metric_name(name): return f"{PREFIX}{name}"``): what a call of it gives."""

    params: tuple[tuple[str, str], ...]  # as Signature.params
    defaults: dict[str, Sym]
    value: Sym  # its parameters open as ["param", name]


class ClassUse(msgspec.Struct, frozen=True, array_like=True):
    """A name spelled like a metric class (``Counter``, ``prometheus_client.Gauge``) used as a
    callee or as a call's argument: which library it is decides the extract step."""

    name: str  # dotted as written
    line: int  # its first use (the first constructor-shaped one, when there is one)
    shaped: bool = False  # called with a metric's documentation: a constructor, whatever the object


class ExemplarUse(msgspec.Struct, frozen=True, array_like=True):
    """``m.observe(v, exemplar=...)``: the metric object observed with exemplars."""

    object: str  # dotted as written ("self.histogram")
    class_name: str
    line: int


class RegistryUse(msgspec.Struct, frozen=True, array_like=True):
    """An exposition call (kind "expose", with the registry it serves, "" for the default) or
    ``REGISTRY`` used as a value (kind "value")."""

    kind: str
    callee: str
    registry: str
    line: int


class BuilderArg(msgspec.Struct, frozen=True, omit_defaults=True):
    """An argument of a builder method: a library function called there (``metrics.latency(...)``:
    its callee and keywords), or any other value."""

    callee: str | None = None
    kwargs: dict[str, Sym] = {}
    value: Sym = None


class BuilderMethod(msgspec.Struct, frozen=True, array_like=True):
    name: str
    line: int
    args: tuple[BuilderArg, ...]
    kwargs: dict[str, Sym]


class BuilderChain(msgspec.Struct, frozen=True):
    """``Builder(...)`` with the methods called on it (chained, or on the variable holding it)."""

    callee: str
    line: int
    kwargs: dict[str, Sym]
    methods: tuple[BuilderMethod, ...]  # by line


class ReaderUse(msgspec.Struct, frozen=True):
    """An OpenTelemetry Prometheus reader construction."""

    callee: str
    line: int
    kwargs: dict[str, Sym]


class LibraryImport(msgspec.Struct, frozen=True, array_like=True):
    """An import of a library whose series archdiff does not model (libraries.yaml's ``unmodeled``)."""

    module: str  # the library's top-level module, as libraries.yaml names it
    line: int  # the file's first import of it


class MetricFacts(msgspec.Struct, frozen=True, omit_defaults=True):
    imports: dict[str, ImportEntry] = {}  # local name -> what it imports, at any depth (last binding wins)
    # ``from m import *`` of a module that is not the standard library's, in source order (name "*"):
    # where a name the file reads but neither defines nor imports by name may come from
    stars: tuple[ImportEntry, ...] = ()
    classes: tuple[ClassFacts, ...] = ()
    functions: dict[str, Signature] = {}  # factory signatures by qualname within the module
    makers: dict[str, MadeCallable] = {}  # by the qualname of the function that returns the callable
    class_uses: tuple[ClassUse, ...] = ()
    calls: tuple[CallFacts, ...] = ()
    exemplars: tuple[ExemplarUse, ...] = ()
    registry_uses: tuple[RegistryUse, ...] = ()
    builders: tuple[BuilderChain, ...] = ()
    readers: tuple[ReaderUse, ...] = ()
    unmodeled: tuple[LibraryImport, ...] = ()
    exposition: tuple[ExpositionLine, ...] = ()  # Prometheus text written by hand (python_exposition)
    exposition_compared: int = 0  # `# TYPE` lines of literal-only text, a test's expected scrape
    # module-level names (and "Class.NAME" of its classes) whose values are strings, numbers or
    # sequences of them, as far as the file says: read where another file imports them
    constants: dict[str, Sym] = {}
    returns: dict[str, ReturningFunction] = {}  # by function name
