"""The per-file facts of a Python module for the symbol graph (:mod:`extractor.python.scan` records
them, :mod:`extractor.python.graph` reads them), typed: they cross from the worker to the driver as
msgpack and are decoded into these Structs by the scanner's return annotation.

Path-free (cached by content hash): scopes are qualnames inside the module ("" at module level,
``C.f.<locals>.g`` as Python's ``__qualname__``), relative imports keep their level. Records of
many per file are ``array_like`` (no field names on the wire).
"""

from __future__ import annotations

import msgspec

# Where an attribute is bound (Attribute.where): module level, class body, or on the instance.
MODULE, CLASS, INSTANCE = "m", "c", "i"

# Decorators that tag a method (``@property`` -> "property"), by their last dotted part; both the
# ast scanner and the libcst one write these tags.
METHOD_TAGS = {"property": "property", "cached_property": "property", "staticmethod": "staticmethod",
               "classmethod": "classmethod", "abstractmethod": "abstract", "overload": "overload"}


class Param(msgspec.Struct, frozen=True, array_like=True):
    name: str
    kind: int  # the index in extractor.python.expr.PARAM_KINDS
    annotation: str  # source text (``ast.unparse``), never truncated; "" when there is none
    default: str | None  # source text; None when the parameter has no default


class Definition(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """A class, function or method (a class made by a call, ``X = NamedTuple(...)``, is tagged
    ``functional``)."""

    kind: str  # "class", "function" or "method"
    qualname: str
    line: int
    doc: str  # the docstring's first line
    tags: tuple[str, ...]  # sorted: "async", "property", "decorated", "nested", "dataclass", ...
    bases: tuple[str, ...]  # dotted names as written ("" for a base that is not one)
    decorators: tuple[str, ...]  # dotted names as written
    params: tuple[Param, ...] = ()
    returns: str = ""  # source text of the return annotation
    # Inside if/try/for/with/match at its scope's level: a later definition does not replace it.
    conditional: bool = False
    keywords: dict[str, str] = {}  # class keywords as source text (``total=False``, ``metaclass=ABCMeta``)
    decorator_keywords: tuple[dict[str, str], ...] = ()  # each decorator's keywords, when any has some
    # A function's signature as displayed (extractor.python.expr.display_signature of its params and
    # returns), written here, in the workers: vLLM's 22,618 definitions made it a tenth of the
    # Python graph step's serial part. "" for a class.
    signature: str = ""


class CallSummary(msgspec.Struct, frozen=True, array_like=True):
    """A call's callee and arguments as source text (``field(default_factory=list)``)."""

    callee: str
    keywords: dict[str, str]
    args: tuple[str, ...]


class Attribute(msgspec.Struct, frozen=True, array_like=True):
    """A name bound by assignment: at module level, in a class body, or on ``self`` in ``__init__``."""

    scope: str  # the class's qualname for class and instance attributes; "" at module level
    name: str
    line: int
    where: str  # MODULE, CLASS or INSTANCE
    annotation: str
    value_kind: str  # extractor.python.expr.value_kind
    value: str  # a class-body value's source text, when annotated or a call (the constructor rules read it)
    call: CallSummary | None  # a class-body value that is a call
    conditional: bool


class Import(msgspec.Struct, frozen=True, array_like=True):
    """``import a.b as c`` -> (scope, line, "a.b", 0, "", "c");
    ``from ..m import x`` -> (scope, line, "m", 2, "x", ""); ``typing_only`` under ``if TYPE_CHECKING:``
    (binds nothing when the module runs)."""

    scope: str
    line: int
    module: str
    level: int
    name: str
    asname: str
    typing_only: bool = False


class Alias(msgspec.Struct, frozen=True, array_like=True):
    """``X = pkg.Y`` at module or class level: a name for another (resolved by the graph step); in
    ``local_aliases``, one of the names a function's local holds."""

    scope: str
    name: str
    value: str
    line: int


class KernelArgument(msgspec.Struct, frozen=True, array_like=True):
    """A call handing one of the module's decorated module-level functions (a JIT kernel) to another:
    ``launch_grid_chunked(chunk_fwd_kernel_h, grid, ...)`` -> (scope, line, "launch_grid_chunked", 0, "",
    "chunk_fwd_kernel_h"); ``position`` -1 for a keyword argument."""

    scope: str
    line: int
    callee: str
    position: int
    keyword: str
    name: str


class NameBinding(msgspec.Struct, frozen=True, array_like=True):
    """A module-level name bound by a statement that records no attribute: a ``for`` or ``with``
    target at module level (form "for", "with"), a ``global x`` in a function or class ("global")."""

    name: str
    line: int
    form: str


class Call(msgspec.Struct, frozen=True, array_like=True):
    scope: str  # where the call runs (a def's decorators and defaults run in the enclosing scope)
    line: int
    callee: str  # dotted as written ("self.x.f", "super().f"); "" when not a dotted name


class LocalType(msgspec.Struct, frozen=True, array_like=True):
    """What a local name or ``self.X`` holds, where the code says so (an annotation, or a class
    instantiated into it); type "" for an untyped parameter, which still shadows any module-level
    name of the same spelling."""

    scope: str
    name: str
    type: str
    line: int


class PythonFacts(msgspec.Struct, frozen=True, omit_defaults=True):
    doc: str = ""  # the module docstring's first line
    defs: tuple[Definition, ...] = ()
    attrs: tuple[Attribute, ...] = ()
    imports: tuple[Import, ...] = ()
    aliases: tuple[Alias, ...] = ()
    bindings: tuple[NameBinding, ...] = ()
    calls: tuple[Call, ...] = ()
    types: tuple[LocalType, ...] = ()
    # what module-level names hold, where an assignment says so (``registry = Registry()``,
    # ``typed: Registry = make()``): scope "", one per such assignment (the others are in ``attrs``)
    held: tuple[LocalType, ...] = ()
    # what a function's local names hold where every binding of the name in the function gives it a name
    # (``fn = k16 if bt == 16 else k32``; ``if ...: fn = k16`` / ``else: fn = k32``): scope the function's
    # qualname, one per value (scan._function_aliases)
    local_aliases: tuple[Alias, ...] = ()
    kernel_arguments: tuple[KernelArgument, ...] = ()  # scan._kernel_arguments
    # ``__all__`` when built from string literals (``=``, ``+=``, ``.extend``, ``.append``); None
    # when the module has none a static reader can follow
    all_names: tuple[str, ...] | None = None
    all_refs: tuple[str, ...] = ()  # the other modules' ``__all__`` it adds (``+ other.__all__``)
    fallback: bool = False  # parsed with libcst (newer syntax): definitions and imports only
