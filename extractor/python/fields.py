"""A class's fields as the generated-constructor rules read them (:mod:`extractor.python.constructors`):
the bindings of its body as the scanner saw them, the class with its decorators and keywords, the
fields a library makes of them, and the constructor it generates; plus the readers of annotation
and ``field(...)`` text those rules share."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Mapping

from extractor.model import Parameter


@dataclasses.dataclass(frozen=True, slots=True)
class Binding:
    """One name bound in a class body (``x: int = field(default=1)``), as the scanner saw it."""

    name: str
    line: int
    annotation: str  # source text, "" when not annotated
    value: str | None  # source text of the value; None when there is none
    callee: str = ""  # canonical name of the called function when the value is a call
    keywords: Mapping[str, str] = dataclasses.field(default_factory=dict)  # the call's keyword arguments
    args: tuple[str, ...] = ()  # the call's positional arguments


@dataclasses.dataclass(frozen=True, slots=True)
class ClassSpec:
    id: str
    decorators: tuple[tuple[str, Mapping[str, str]], ...]  # (canonical name, keyword arguments)
    keywords: Mapping[str, str]  # class keywords: ``kw_only=True``, ``total=False``
    bindings: tuple[Binding, ...]
    own_methods: frozenset[str]  # names of methods written in the class body


@dataclasses.dataclass(frozen=True, slots=True)
class Generated:
    class_id: str
    library: str  # "dataclass", "attrs", "pydantic", "msgspec", "namedtuple", "typeddict"
    method: str  # "__init__" or "__new__"
    params: tuple[Parameter, ...]
    fields: tuple[str, ...]  # the class's own fields that are attributes (InitVars excluded)
    tags: tuple[str, ...] = ()
    marker: str = ""  # what made the class one of the library's: "pydantic.dataclasses.dataclass", "msgspec.Struct"
    pseudo: tuple[str, ...] = ()  # the class's own InitVar names: parameters, never attributes


@dataclasses.dataclass(frozen=True, slots=True)
class Field:
    name: str  # attribute name
    param: str  # parameter name
    annotation: str
    default: str | None
    kw_only: bool
    init: bool = True
    attribute: bool = True


def special_form(annotation: str) -> str:
    """``ClassVar`` for ``typing.ClassVar[int]`` or ``"ClassVar[int]"``; "" when none applies."""
    text = annotation.strip().strip("'\"")
    return text.split("[", 1)[0].strip().rsplit(".", 1)[-1]


def unwrap(annotation: str) -> str:
    text = annotation.strip()
    inner = text.split("[", 1)[1].rsplit("]", 1)[0] if "[" in text else text
    return inner.strip()


def factory_default(factory: str) -> str:
    return f"{factory}()"


def first_argument(call: str) -> str:
    """``f`` in ``Factory(f, takes_self=True)``; the call itself when it has no argument to read."""
    try:
        tree = ast.parse(call, mode="eval").body
    except SyntaxError:
        return call
    return ast.unparse(tree.args[0]) if isinstance(tree, ast.Call) and tree.args else call


def field_default(b: Binding) -> str | None:
    """The default a ``field(...)``/``Field(...)`` call gives, or None when the field is required."""
    if "default" in b.keywords:
        return b.keywords["default"]
    if "default_factory" in b.keywords:
        return factory_default(b.keywords["default_factory"])
    if b.args and b.args[0] != "...":  # pydantic's Field(default) takes it positionally
        return b.args[0]
    return None
