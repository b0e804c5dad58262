"""Constructors that libraries generate from a class's fields, computed from source as they do.

A class marked by one of these libraries gets a ``__init__`` (``__new__`` for ``NamedTuple``) that
is not in the source; callers call it all the same, so the graph holds it as a method tagged
``generated`` and the library's name, at the class's path and line, with its parameters. The
names that mark each library are data (``constructors.yaml``); the rules are these:

- **dataclasses** (``@dataclass``, also pydantic's): fields are the class body's annotated names
  in order, except ``ClassVar[...]``; ``_: KW_ONLY`` makes the fields after it keyword-only;
  ``InitVar[...]`` is a parameter but no attribute. ``field(default=, default_factory=, init=False,
  kw_only=)`` is read (a factory ``f`` shows as the default ``f()``). Fields of dataclass bases
  come first, walking the MRO from ``object`` down; a field redefined in a subclass keeps its
  first position and takes the new type and default. Positional fields precede keyword-only ones
  (``@dataclass(kw_only=True)`` applies to the class's own fields). ``init=False``, or an
  ``__init__`` written in the class body, means none is generated.
- **attrs**: ``@define``/``@frozen``/``@mutable`` guess ``auto_attribs`` (annotated fields and no
  unannotated ``field()``), ``@attr.s`` does not (only ``attr.ib()`` fields), ``@attr.dataclass``
  assumes it. A parameter is named after the field's ``alias=`` or the name without leading
  underscores (``_x`` -> ``x``). ``default=``, ``factory=``, ``Factory(f)``, ``init=False`` and
  ``kw_only=`` are read. Base fields come first and a field redefined in the class moves to the
  class's own place (``collect_by_mro``; ``@attr.s`` keeps the older front-to-back MRO walk).
  The class's ``kw_only=True`` covers inherited fields only for ``@attr.s`` (``force_kw_only``).
  ``@define`` keeps an ``__init__`` written in the class; ``@attr.s`` replaces it.
- **pydantic** ``BaseModel``: every annotated name not starting with ``_`` and not a ``ClassVar``
  is a keyword-only parameter, named after ``Field(alias=...)`` unless ``populate_by_name`` /
  ``validate_by_name`` is set in ``model_config``; ``Field(default)``, ``Field(default=)``,
  ``default_factory=`` and ``= ...`` (required) are read; bases' fields come first (a redefined
  field keeps its place); ``extra="allow"`` adds ``**extra_data``.
- **msgspec** ``Struct``: dataclass rules, with ``msgspec.field(default=, default_factory=)``; the
  class keyword ``kw_only=True`` covers the fields defined on that class; ``omit_defaults=True``
  only changes encoding and is kept as a tag on the constructor.
- **NamedTuple**: ``__new__(_cls, <fields>)`` with the class body's defaults. The functional forms
  ``NamedTuple("X", [...])`` and ``collections.namedtuple("X", "a b", defaults=...)`` are classes
  too (:mod:`extractor.python.forms`); the latter's fields carry no annotation.
- **TypedDict**: keyword-only parameters; keys of a ``total=False`` class, or wrapped in
  ``NotRequired[...]``, are optional (their default shows as ``...``); ``Required[...]`` overrides;
  keys of TypedDict bases come first. ``TypedDict("X", {...}, total=False)`` is read the same way.

Special forms are recognised by their name as written (``ClassVar``, ``typing.ClassVar``); keyword
values are compared as source text (``kw_only=True``), so a value computed elsewhere is not read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path

from extractor import naming
from extractor.support.datafile import load_data_file
from extractor.model import Parameter, ParamKind
from extractor.python.fields import (ClassSpec, Field, Generated, factory_default, field_default, first_argument,
                               special_form, unwrap)

LIBRARIES_FILE = Path(__file__).with_name("constructors.yaml")
_NAMES = [str]
_SCHEMA = {
    "version": int,
    "dataclass": {"decorators": _NAMES, "field_calls": _NAMES},
    "attrs": {"classic": _NAMES, "next_gen": _NAMES, "auto_attribs": _NAMES, "field_calls": _NAMES,
              "factories": _NAMES},
    "pydantic": {"bases": _NAMES, "field_calls": _NAMES},
    "msgspec": {"bases": _NAMES, "field_calls": _NAMES},
    "namedtuple": {"bases": _NAMES, "untyped": _NAMES},
    "typeddict": {"bases": _NAMES},
    "enum": {"bases": _NAMES},
}
_POS, _KW = ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.KEYWORD_ONLY


def load_libraries(path: Path = LIBRARIES_FILE) -> dict[str, dict[str, frozenset[str]]]:
    data = load_data_file(path, _SCHEMA)
    return {lib: {key: frozenset(names) for key, names in spec.items()}
            for lib, spec in data.items() if lib != "version"}


class _Builder:
    def __init__(self, specs: Mapping[str, ClassSpec], mro: Callable[[str], tuple[str, ...]],
                 libraries: Mapping[str, Mapping[str, frozenset[str]]]) -> None:
        self.specs = specs
        self.mro = mro
        self.lib = libraries
        self._attrs_all: dict[str, list[Field]] = {}
        self._base_names: dict[str, tuple[str, ...]] = {}

    # which library marks a class -------------------------------------------------------------------
    def decorator(self, cls: str, names: frozenset[str]) -> Mapping[str, str] | None:
        spec = self.specs.get(cls)
        for name, keywords in (spec.decorators if spec else ()):
            if name in names:
                return keywords
        return None

    def based_on(self, cls: str, bases: frozenset[str]) -> bool:
        return any(name in bases for name in self.base_names(cls))

    def base_names(self, cls: str) -> tuple[str, ...]:
        """The dotted names of the class's bases in MRO order, found once per class: each class is
        asked about four libraries' bases (3,366 classes on vLLM)."""
        if cls not in self._base_names:
            self._base_names[cls] = tuple(naming.id_name(b) for b in self.mro(cls)[1:])
        return self._base_names[cls]

    def attrs_decorator(self, cls: str) -> tuple[str, Mapping[str, str]] | None:
        spec = self.specs.get(cls)
        lib = self.lib["attrs"]
        for name, keywords in (spec.decorators if spec else ()):
            for flavour in ("classic", "next_gen", "auto_attribs"):
                if name in lib[flavour]:
                    return flavour, keywords
        return None

    # the libraries ---------------------------------------------------------------------------------
    def build(self, cls: str) -> Generated | None:
        spec = self.specs[cls]
        lib = self.lib
        for name, keywords in spec.decorators:
            if name in lib["dataclass"]["decorators"]:
                return _marked(self._dataclass(cls, spec, keywords), name)
            for flavour in ("classic", "next_gen", "auto_attribs"):
                if name in lib["attrs"][flavour]:
                    return _marked(self._attrs(cls, spec, flavour, keywords), name)
        for library, method in (("pydantic", self._pydantic), ("msgspec", self._msgspec),
                                ("namedtuple", self._namedtuple), ("typeddict", self._typeddict)):
            base = self.base_named(cls, lib[library]["bases"])
            if base:
                return _marked(method(cls, spec), base)
        return None

    def base_named(self, cls: str, bases: frozenset[str]) -> str:
        return next((name for name in self.base_names(cls) if name in bases), "")

    def _dataclass_fields(self, spec: ClassSpec, kw_only: bool, field_calls: frozenset[str]) -> list[Field]:
        fields = []
        for b in spec.bindings:
            form = special_form(b.annotation) if b.annotation else ""
            if not b.annotation or form == "ClassVar":
                continue
            if form == "KW_ONLY":
                kw_only = True
                continue
            default, init, kw = b.value, True, kw_only
            if b.callee in field_calls:
                init = b.keywords.get("init") != "False"
                kw = b.keywords.get("kw_only", str(kw_only)) == "True"
                default = field_default(b)
            fields.append(Field(b.name, b.name, b.annotation, default, kw, init, form != "InitVar"))
        return fields

    def _ordered(self, cls: str, own: Callable[[str], list[Field] | None]) -> list[Field]:
        """Fields of the marked classes along the MRO, bases first; a redefinition keeps its place."""
        merged: dict[str, Field] = {}
        for base in reversed(self.mro(cls)):
            if base in self.specs and (fields := own(base)) is not None:
                for f in fields:
                    merged[f.name] = f
        return list(merged.values())

    def _dataclass(self, cls: str, spec: ClassSpec, keywords: Mapping[str, str]) -> Generated | None:
        lib = self.lib["dataclass"]
        if keywords.get("init") == "False" or "__init__" in spec.own_methods:
            return None

        def own(base: str) -> list[Field] | None:
            kws = self.decorator(base, lib["decorators"])
            if kws is None:
                return None
            return self._dataclass_fields(self.specs[base], kws.get("kw_only") == "True", lib["field_calls"])

        fields = self._ordered(cls, own)
        return self._generated(cls, "dataclass", "__init__", fields, own(cls) or [])

    def _attrs_own(self, cls: str) -> list[Field] | None:
        found = self.attrs_decorator(cls)
        if found is None:
            return None
        flavour, keywords = found
        lib = self.lib["attrs"]
        spec = self.specs[cls]
        bindings = [b for b in spec.bindings if special_form(b.annotation) != "ClassVar"]
        auto = {"True": True, "False": False}.get(keywords.get("auto_attribs", ""),
                                                   {"classic": False, "auto_attribs": True}.get(flavour))
        if auto is None:  # @define guesses
            auto = any(b.annotation for b in bindings) and not any(
                not b.annotation and b.callee in lib["field_calls"] for b in bindings)
        chosen = [b for b in bindings if b.annotation] if auto else [b for b in bindings if b.callee in lib["field_calls"]]
        class_kw = keywords.get("kw_only") == "True"
        factories = lib["factories"] | {f.rsplit(".", 1)[-1] for f in lib["factories"]}
        fields = []
        for b in chosen:
            default, init, kw = b.value, True, class_kw
            alias = b.name.lstrip("_")
            if b.callee in lib["field_calls"]:
                init = b.keywords.get("init") != "False"
                kw = b.keywords.get("kw_only", str(class_kw)) == "True"
                alias = b.keywords.get("alias", "").strip("'\"") or alias
                default = b.keywords.get("default")
                if default is None and b.args and b.callee.startswith("attr."):
                    default = b.args[0]  # attr.ib(default) takes it positionally
                if "factory" in b.keywords:
                    default = factory_default(b.keywords["factory"])
            if default is not None and default.endswith(")") and default.split("(", 1)[0] in factories:
                default = factory_default(first_argument(default))  # Factory(list): a fresh list()
            fields.append(Field(b.name, alias, b.annotation, default, kw, init))
        return fields

    def _attrs_all_fields(self, cls: str) -> list[Field]:
        if cls in self._attrs_all:
            return self._attrs_all[cls]
        self._attrs_all[cls] = []  # guards a cycle
        found = self.attrs_decorator(cls)
        own = self._attrs_own(cls) or []
        flavour, keywords = found if found else ("next_gen", {})
        names = {f.name for f in own}
        base: list[Field] = []
        if flavour == "next_gen" or keywords.get("collect_by_mro") == "True":
            for b in reversed(self.mro(cls)[1:]):
                base += [f for f in (self._attrs_own(b) or []) if f.name not in names] if b in self.specs else []
            kept: list[Field] = []
            seen: set[str] = set()
            for f in reversed(base):  # the freshest definition of a name, at its place
                if f.name not in seen:
                    kept.insert(0, f)
                    seen.add(f.name)
            base = kept
        else:
            for b in self.mro(cls)[1:]:
                for f in (self._attrs_all_fields(b) if b in self.specs and self.attrs_decorator(b) else []):
                    if f.name not in names:
                        names.add(f.name)
                        base.append(f)
        force = keywords.get("force_kw_only", "True" if flavour != "next_gen" else "False") == "True"
        if keywords.get("kw_only") == "True" and force:
            own = [dataclasses.replace(f, kw_only=True) for f in own]
            base = [dataclasses.replace(f, kw_only=True) for f in base]
        self._attrs_all[cls] = base + own
        return self._attrs_all[cls]

    def _attrs(self, cls: str, spec: ClassSpec, flavour: str, keywords: Mapping[str, str]) -> Generated | None:
        if keywords.get("init") == "False" or (flavour == "next_gen" and "__init__" in spec.own_methods):
            return None
        return self._generated(cls, "attrs", "__init__", self._attrs_all_fields(cls), self._attrs_own(cls) or [])

    def _pydantic_own(self, cls: str, by_name: bool) -> list[Field] | None:
        lib = self.lib["pydantic"]
        if not self.based_on(cls, lib["bases"]):
            return None
        fields = []
        for b in self.specs[cls].bindings:
            if not b.annotation or b.name.startswith("_") or special_form(b.annotation) == "ClassVar" \
                    or b.name == "model_config":
                continue
            default, name = b.value, b.name
            if default == "...":
                default = None
            if b.callee in lib["field_calls"]:
                default = field_default(b)
                alias = b.keywords.get("alias", "").strip("'\"")
                if alias.isidentifier() and not by_name:
                    name = alias
            fields.append(Field(b.name, name, b.annotation, default, True))
        return fields

    def _model_config(self, cls: str, key: str) -> str:
        value = ""
        for base in reversed(self.mro(cls)):
            spec = self.specs.get(base)
            if spec is None:
                continue
            value = spec.keywords.get(key, value)
            for b in spec.bindings:
                if b.name == "model_config" and key in b.keywords:
                    value = b.keywords[key]
        return value.strip("'\"")

    def _pydantic(self, cls: str, spec: ClassSpec) -> Generated | None:
        if "__init__" in spec.own_methods:
            return None
        by_name = "True" in (self._model_config(cls, "populate_by_name"), self._model_config(cls, "validate_by_name"))
        fields = self._ordered(cls, lambda base: self._pydantic_own(base, by_name))
        extra = (Parameter("extra_data", ParamKind.VAR_KEYWORD, "Any"),) if self._model_config(cls, "extra") == "allow" else ()
        return self._generated(cls, "pydantic", "__init__", fields, self._pydantic_own(cls, by_name) or [], extra)

    def _msgspec(self, cls: str, spec: ClassSpec) -> Generated | None:
        lib = self.lib["msgspec"]
        if "__init__" in spec.own_methods:
            return None

        def own(base: str) -> list[Field] | None:
            if not self.based_on(base, lib["bases"]):
                return None
            s = self.specs[base]
            return self._dataclass_fields(s, s.keywords.get("kw_only") == "True", lib["field_calls"])

        omit = any(self.specs[b].keywords.get("omit_defaults") == "True" for b in self.mro(cls) if b in self.specs)
        return self._generated(cls, "msgspec", "__init__", self._ordered(cls, own), own(cls) or [],
                               tags=("omit-defaults",) if omit else ())

    def _namedtuple(self, cls: str, spec: ClassSpec) -> Generated | None:
        untyped = bool(self.base_named(cls, self.lib["namedtuple"]["untyped"]))
        fields = [Field(b.name, b.name, b.annotation, b.value, False) for b in spec.bindings
                  if (b.annotation or untyped) and special_form(b.annotation) != "ClassVar"]
        return self._generated(cls, "namedtuple", "__new__", fields, fields, first="_cls")

    def _typeddict(self, cls: str, spec: ClassSpec) -> Generated | None:
        bases = self.lib["typeddict"]["bases"]

        def own(base: str) -> list[Field] | None:
            if not self.based_on(base, bases):
                return None
            s = self.specs[base]
            total = s.keywords.get("total") != "False"
            fields = []
            for b in s.bindings:
                if not b.annotation:
                    continue
                form = special_form(b.annotation)
                required = {"Required": True, "NotRequired": False}.get(form, total)
                annotation = unwrap(b.annotation) if form in ("Required", "NotRequired") else b.annotation
                fields.append(Field(b.name, b.name, annotation, None if required else "...", True))
            return fields

        return self._generated(cls, "typeddict", "__init__", self._ordered(cls, own), own(cls) or [])

    def _generated(self, cls: str, library: str, method: str, fields: list[Field], own: list[Field],
                   extra: tuple[Parameter, ...] = (), tags: tuple[str, ...] = (), first: str = "self") -> Generated:
        included = [f for f in fields if f.init]
        params = [Parameter(first)]
        params += [Parameter(f.param, _POS, f.annotation, f.default) for f in included if not f.kw_only]
        params += [Parameter(f.param, _KW, f.annotation, f.default) for f in included if f.kw_only]
        return Generated(cls, library, method, (*params, *extra),
                         tuple(f.name for f in own if f.attribute), tags,
                         pseudo=tuple(f.name for f in own if not f.attribute))


def _marked(generated: Generated | None, marker: str) -> Generated | None:
    return dataclasses.replace(generated, marker=marker) if generated is not None else None


def generated_constructors(specs: Mapping[str, ClassSpec], mro: Callable[[str], tuple[str, ...]],
                           libraries: Mapping[str, Mapping[str, frozenset[str]]]) -> list[Generated]:
    """The constructor each library generates for the classes in ``specs`` (ids in the graph).

    ``mro`` gives a class's method resolution order, outside bases included by canonical name
    (``pydantic.BaseModel``).
    """
    builder = _Builder(specs, mro, libraries)
    found = [builder.build(cls) for cls in sorted(specs)]
    return [g for g in found if g is not None]


def enum_classes(specs: Mapping[str, ClassSpec], mro: Callable[[str], tuple[str, ...]],
                 libraries: Mapping[str, Mapping[str, frozenset[str]]]) -> set[str]:
    bases = libraries["enum"]["bases"]
    return {cls for cls in specs if any(naming.id_name(b) in bases for b in mro(cls)[1:])}
