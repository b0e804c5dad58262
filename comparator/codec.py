"""Typed findings to JSON and back: the one codec of the comparator's records.

A kind computes its section as frozen records (``comparator/kinds/<kind>/records.py``);
:func:`to_json` turns them into the JSON of ``report.json`` and :func:`from_json` reads that JSON
back into the same records for the renderers, so the report file, the Markdown and the HTML page
all come from one JSON form (the one the list cap cut, ``comparator.compare.cap_lists``).

The mapping is the extractor's (:func:`extractor.model.to_jsonable`): a dataclass is an object of
its fields, a trailing underscore only dodges a Python keyword (``for_`` is ``"for"``), an enum is
its value, a tuple is a list, a ``Mapping[str, X]`` an object whose keys are data (roles, metric
types). A field made with :func:`omitted_when_none` is left out of the object while it is None, for
the few keys that only some rows have (``renames_not_searched``). The comparator has its own copy
because the renderers may import nothing of the extractor (``.importlinter``, contract ``renderers``).

Reading is lenient on keys a record does not declare (one kind's release record reads its own keys
of the shared ``release`` object), strict on the rest: a missing key or a value of the wrong type
is a :class:`FindingsFormatError` naming the field (``findings.layers.rows[2].a.lines``).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

OMIT_WHEN_NONE = "archdiff.omit_when_none"
Decoder = Callable[[Any, str], Any]


class FindingsFormatError(ValueError):
    """Findings JSON that is not what the comparator wrote (a hand-edited or foreign report)."""


def omitted_when_none() -> Any:
    """A field (default None) whose key the JSON object has only when it holds a value."""
    return dataclasses.field(default=None, metadata={OMIT_WHEN_NONE: True})


# ---------------------------------------------------------------------------------------- writing


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, str, bool], ...]:
    """(attribute, JSON key, omitted when None) of each field of a record class."""
    return tuple((f.name, f.name.removesuffix("_"), OMIT_WHEN_NONE in f.metadata) for f in dataclasses.fields(cls))


def to_json(value: Any) -> Any:
    """Records (dataclasses, enums, tuples, mappings) as plain JSON values (lists, not tuples: the
    list cap cuts them in place)."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, str):
        return value
    if isinstance(value, (tuple, list)):
        return [to_json(v) for v in value]
    if isinstance(value, Mapping):
        return {k: to_json(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for name, key, omit in _fields(type(value)):
            item = getattr(value, name)
            if item is None and omit:
                continue
            out[key] = to_json(item)
        return out
    raise TypeError(f"no JSON form for {type(value).__name__}")  # a bug in a kind, not in the evidence


# ---------------------------------------------------------------------------------------- reading


def from_json(tp: Any, value: Any, where: str = "findings") -> Any:
    """``value`` (JSON the comparator wrote) as ``tp``: a record dataclass (generic ones too,
    ``Sides[int]``), an enum, a scalar, ``X | None``, ``tuple[X, ...]``, ``tuple[X, Y]``,
    ``Mapping[str, X]``, or ``Any`` (kept as it is)."""
    return _decoder(tp)(value, where)


@functools.cache
def _decoder(tp: Any) -> Decoder:
    if tp is Any or tp is object:
        return lambda v, w: v
    if tp is None or tp is type(None):
        return _none
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return _union(args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _decoder(args[0])
            return lambda v, w: tuple(item(x, f"{w}[{i}]") for i, x in enumerate(_list(v, w)))
        items = tuple(_decoder(a) for a in args)

        def fixed(v: Any, w: str) -> tuple[Any, ...]:
            got = _list(v, w)
            if len(got) != len(items):
                _fail(w, f"a list of {len(items)}", v)
            return tuple(dec(x, f"{w}[{i}]") for i, (dec, x) in enumerate(zip(items, got)))
        return fixed
    if origin in (Mapping, dict, typing.Mapping):
        value_decoder = _decoder(args[1])
        return lambda v, w: {_str(k, w): value_decoder(x, f"{w}.{k}") for k, x in _object(v, w).items()}
    record = origin if origin is not None else tp
    if dataclasses.is_dataclass(record) and isinstance(record, type):
        return _record(record, args)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum(tp)
    if tp in _SCALARS:
        return _SCALARS[tp]
    raise TypeError(f"no decoder for {tp!r}")  # a bug in a kind's records


def _record(cls: type, args: tuple[Any, ...]) -> Decoder:
    hints = typing.get_type_hints(cls)
    # A generic record (``Sides[T]``) reads its type parameters as the arguments it was given.
    bound = dict(zip(getattr(cls, "__parameters__", ()), args))
    fields = []
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        if isinstance(hint, typing.TypeVar):
            hint = bound[hint] if hint in bound else Any  # a parameter not given reads as it is
        has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        fields.append((f.name, f.name.removesuffix("_"), _decoder(hint), has_default))

    def read(v: Any, w: str) -> Any:
        obj = _object(v, w)
        values = {}
        for name, key, dec, has_default in fields:
            if key in obj:
                values[name] = dec(obj[key], f"{w}.{key}")
            elif not has_default:
                raise FindingsFormatError(f"{w}.{key}: required key is missing")
        return cls(**values)
    return read


def _union(options: tuple[Any, ...]) -> Decoder:
    if type(None) in options:
        inner = [o for o in options if o is not type(None)]
        rest = _decoder(inner[0] if len(inner) == 1 else typing.Union[tuple(inner)])
        return lambda v, w: None if v is None else rest(v, w)
    if all(o in _SCALARS for o in options):  # ``int | float``: a number as written
        checks = tuple(_SCALARS[o] for o in options)

        def scalar(v: Any, w: str) -> Any:
            for check in checks:
                try:
                    return check(v, w)
                except FindingsFormatError:
                    continue
            _fail(w, " or ".join(o.__name__ for o in options), v)
        return scalar
    raise TypeError(f"unsupported union {options!r}")


def _enum(cls: type[enum.Enum]) -> Decoder:
    members = {m.value: m for m in cls}

    def read(v: Any, w: str) -> enum.Enum:
        if not isinstance(v, str) or v not in members:
            _fail(w, "one of " + ", ".join(sorted(map(str, members))), v)
        return members[v]
    return read


def _none(v: Any, w: str) -> None:
    if v is not None:
        _fail(w, "null", v)


def _str(v: Any, w: str) -> str:
    if not isinstance(v, str):
        _fail(w, "a string", v)
    return v


def _bool(v: Any, w: str) -> bool:
    if not isinstance(v, bool):
        _fail(w, "true or false", v)
    return v


def _int(v: Any, w: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        _fail(w, "an integer", v)
    return v


def _float(v: Any, w: str) -> float:
    # An integral number may have been written as an integer: kept as read, so it is written back alike.
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        _fail(w, "a number", v)
    return v


_SCALARS: dict[Any, Decoder] = {str: _str, bool: _bool, int: _int, float: _float}


def _list(v: Any, w: str) -> list[Any]:
    if not isinstance(v, list):
        _fail(w, "a list", v)
    return v


def _object(v: Any, w: str) -> Mapping[str, Any]:
    if not isinstance(v, Mapping):
        _fail(w, "an object", v)
    return v


def _fail(where: str, expected: str, got: Any) -> typing.NoReturn:
    raise FindingsFormatError(f"{where}: expected {expected}, got {got!r:.60}")
