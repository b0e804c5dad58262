"""Classes made by a call: ``X = NamedTuple("X", [("a", int)])``, ``X = namedtuple("X", "a b")``,
``X = TypedDict("X", {"a": int}, total=False)``.

Python builds the same class as the class syntax would, so the graph holds ``X`` as a class whose
base is the callee (as written; the pipeline resolves it) and whose fields are class-body bindings,
and the generated-constructor rules (:mod:`extractor.python.constructors`) give it its ``__new__`` or
``__init__``. The forms are recognised by the callee's last name as written (``NamedTuple``,
``namedtuple``, ``TypedDict``), like the special forms the constructor rules read, and only when
every field can be read from the call's literals: a field list computed at run time leaves ``X`` a
plain module-level name, as before, rather than a class with guessed fields.

- ``NamedTuple(name, [(field, type), ...])`` or the keyword form ``NamedTuple(name, field=type)``:
  annotated fields, no defaults.
- ``namedtuple(name, "a b" | "a, b" | ["a", "b"], defaults=[...], rename=True)``: unannotated fields,
  ``defaults`` right-aligned over them as Python applies them, ``rename`` replacing invalid and
  repeated names with ``_<index>``.
- ``TypedDict(name, {"key": type, ...}, total=False)`` or ``TypedDict(name, key=type)``: annotated
  keys; ``total`` becomes the class keyword the class syntax would carry.
"""

from __future__ import annotations

import ast
import dataclasses
import keyword

FORMS = frozenset({"NamedTuple", "namedtuple", "TypedDict"})


@dataclasses.dataclass(frozen=True, slots=True)
class FormField:
    name: str
    annotation: ast.expr | None
    default: ast.expr | None


@dataclasses.dataclass(frozen=True, slots=True)
class FunctionalClass:
    base: str  # the callee as written: "NamedTuple", "collections.namedtuple", "typing.TypedDict"
    fields: tuple[FormField, ...]
    keywords: dict[str, ast.expr]  # what the class syntax would carry as class keywords (``total``)


def functional_class(callee: str, call: ast.Call) -> FunctionalClass | None:
    """The class ``call`` builds, or None when it is none of the forms or a field cannot be read."""
    form = callee.rsplit(".", 1)[-1]
    if form not in FORMS or not call.args or not isinstance(call.args[0], ast.Constant) \
            or not isinstance(call.args[0].value, str) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
    if len(keywords) < len(call.keywords):
        return None  # **options: what they hold is not known statically
    rest = call.args[1:]
    if form == "NamedTuple":
        fields = _typed_pairs(rest[0]) if rest else _keyword_fields(keywords, ())
        return FunctionalClass(callee, fields, {}) if fields is not None and len(rest) <= 1 else None
    if form == "TypedDict":
        options = {k: v for k, v in keywords.items() if k == "total"}
        fields = _typed_keys(rest[0]) if rest else _keyword_fields(keywords, ("total",))
        return FunctionalClass(callee, fields, options) if fields is not None and len(rest) <= 1 else None
    return _namedtuple(callee, rest, keywords)


def _typed_pairs(expr: ast.expr) -> tuple[FormField, ...] | None:
    if not isinstance(expr, (ast.List, ast.Tuple)):
        return None
    out = []
    for elt in expr.elts:
        if not (isinstance(elt, (ast.Tuple, ast.List)) and len(elt.elts) == 2):
            return None
        name = _string(elt.elts[0])
        if name is None:
            return None
        out.append(FormField(name, elt.elts[1], None))
    return tuple(out)


def _typed_keys(expr: ast.expr) -> tuple[FormField, ...] | None:
    if not isinstance(expr, ast.Dict):
        return None
    names = [_string(k) if k is not None else None for k in expr.keys]
    if None in names:
        return None
    return tuple(FormField(name, v, None) for name, v in zip(names, expr.values) if name is not None)


def _keyword_fields(keywords: dict[str, ast.expr], options: tuple[str, ...]) -> tuple[FormField, ...] | None:
    fields = tuple(FormField(name, value, None) for name, value in keywords.items() if name not in options)
    return fields or None  # a call with no field at all is read as not being the form


def _namedtuple(callee: str, rest: list[ast.expr], keywords: dict[str, ast.expr]) -> FunctionalClass | None:
    spec = rest[0] if rest else keywords.get("field_names")
    if spec is None or len(rest) > 1:
        return None
    text = _string(spec)
    if text is not None:
        names = text.replace(",", " ").split()
    elif isinstance(spec, (ast.List, ast.Tuple)):
        found = [_string(e) for e in spec.elts]
        names = [n for n in found if n is not None]
        if len(names) < len(found):
            return None
    else:
        return None
    rename = keywords.get("rename")
    if isinstance(rename, ast.Constant) and rename.value is True:
        names = _renamed(names)
    defaults: list[ast.expr] = []
    if "defaults" in keywords:
        given = keywords["defaults"]
        if not isinstance(given, (ast.List, ast.Tuple)) or len(given.elts) > len(names):
            return None
        defaults = list(given.elts)
    padded = [None] * (len(names) - len(defaults)) + defaults
    return FunctionalClass(callee, tuple(FormField(n, None, d) for n, d in zip(names, padded)), {})


def _renamed(names: list[str]) -> list[str]:
    """``collections.namedtuple``'s ``rename=True``: invalid or repeated names become ``_<index>``."""
    seen: set[str] = set()
    out = []
    for i, name in enumerate(names):
        if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_") or name in seen:
            name = f"_{i}"
        seen.add(name)
        out.append(name)
    return out


def _string(expr: ast.expr) -> str | None:
    """The value of a string literal, else None."""
    return expr.value if isinstance(expr, ast.Constant) and isinstance(expr.value, str) else None
