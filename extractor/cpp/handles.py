"""Declared types as a member call sees them: pointers, references, qualifiers and handle templates.

`x->m()` reaches the object x points at, `x.m()` the object x is. Which object that is depends on
how x was declared: `Model*`, `const Model&`, `std::unique_ptr<Model>` and `std::shared_ptr<Model>&`
all reach a `Model` by `->` or `.` as C++ allows. :func:`unwrap` reads a declared type's text into
the class it finally names and the layers around it (a pointer, a handle), outermost first; the
handle templates and their factories are data (handles.yaml beside this module), so a project's
own smart pointer can be listed. Shared by the scanner (an `auto` local made by a factory) and the
graph step (:mod:`extractor.cpp.members`).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

from extractor.cpp.names import split_top_level
from extractor.support.datafile import load_data_file

HANDLES_FILE = Path(__file__).with_name("handles.yaml")
HANDLES_SCHEMA = {"handles?": [str], "factories?": {str: str}, "containers?": [str], "maps?": [str]}
POINTER = "*"
HANDLE = "handle"
# words that qualify a declared type without changing what it names
_QUALIFIERS = re.compile(r"\b(?:const|volatile|struct|class|union|typename|mutable|static|constexpr|inline|extern"
                         r"|thread_local|register|__restrict__|__restrict|restrict)\b")
_TEMPLATE = re.compile(r"((?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)<(.*)>")
# a class as written: `Model`, `::tc::Model`, `Cache<T>::Entry` (template arguments are dropped by lookup)
_CLASS_NAME = re.compile(r"(?:::)?[A-Za-z_]\w*(?:<.*>)?(?:::[A-Za-z_]\w*(?:<.*>)?)*")


# compared and hashed by identity: one object per file, a key of unwrap's cache
@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class HandleTypes:
    """handles.yaml: the handle templates (`std::unique_ptr`) and the factories that make them."""

    templates: frozenset[str]
    factories: dict[str, str]  # `std::make_unique` -> `std::unique_ptr`
    containers: frozenset[str] = frozenset()  # hold their first template argument (`std::vector`)
    maps: frozenset[str] = frozenset()  # hold a `std::pair` of their key and value (`std::map`)

    def is_handle(self, written: str) -> bool:
        """Whether the template ``written`` (`std::unique_ptr`, `::std::unique_ptr`, `unique_ptr` after a
        `using std::unique_ptr;`) is one of the handles."""
        name = written.lstrip(":")
        return _listed(name, self.templates) or name == ITERATOR

    def factory(self, written: str) -> str:
        """The handle template the factory ``written`` makes, "" when it is none."""
        name = written.lstrip(":")
        return self.factories.get(name) or self.factories.get("std::" + name, "")


    def element(self, text: str) -> str | None:
        """The type of an element of a container declared ``text`` (`const std::vector<Model*>&` ->
        `Model*`; `std::map<K, V>` -> `std::pair<K,V>`); None when ``text`` is no container of
        handles.yaml (a pointer to one, or one a type alias names, is not read)."""
        template = _template(_bare(text))
        if template is None:
            return None
        name, arguments = template
        if arguments and _listed(name, self.containers):
            return arguments[0]
        if len(arguments) >= 2 and _listed(name, self.maps):
            return f"std::pair<{arguments[0]},{arguments[1]}>"
        return None

    def dereferenced(self, text: str) -> str | None:
        """The type `*x` has for an ``x`` declared ``text``: what a pointer, a handle or an iterator
        points at; None for anything else (a class's own `operator*`)."""
        written = _bare(text)
        if written.endswith("*"):
            return written[:-1]
        template = _template(written)
        if template is None or not self.is_handle(template[0]):
            return None
        return template[1][0] if template[1] else None

    def subscripted(self, text: str) -> str | None:
        """The type `x[i]` has for an ``x`` declared ``text``: an element of a container with `operator[]`
        (`std::vector<T>`, `std::array<T, N>`: T), a map's mapped value, what a pointer points at; None
        for anything else."""
        written = _bare(text)
        if written.endswith("*"):
            return written[:-1]
        template = _template(written)
        if template is None:
            return None
        name, arguments = template
        if name.removeprefix("std::") in _INDEXED and _listed(name, self.containers):
            return arguments[0] if arguments else None
        if name.removeprefix("std::") in _KEYED and _listed(name, self.maps):
            return arguments[1] if len(arguments) >= 2 else None
        return None

    def standard_step(self, text: str, op: str, name: str, arguments: int) -> str | None:
        """The type one step of a chain reaches through the standard library's containers, maps, pairs
        and iterators from an object declared ``text``: `.front()`, `.back()`, `.at(i)` (an element, a
        map's mapped value), `.find(k)`, `.begin()` and the like (an iterator, :data:`ITERATOR`, whose `->`
        reaches the element), `.first`/`.second` of a pair and `it->second` of a map's iterator; None when
        the step is none of these (then the step is a member of the object's class)."""
        if arguments < 0:
            if op == "->":
                inner = _iterated(text)
                return pair_member(inner, name) if inner is not None else None
            return pair_member(text, name) if op == "." else None
        if op != ".":
            return None
        element = self.element(text)
        if element is None:
            return None
        if name in _ITERATING:
            return f"{ITERATOR}<{element}>"
        keyed = element.startswith("std::pair<")
        if name in ("front", "back") and not keyed and arguments == 0:
            return element
        if name == "at" and arguments == 1:
            return pair_member(element, "second") if keyed else element
        return None


ITERATOR = "std::__iterator"  # no type of the library: what `.find()` and `.begin()` return, here
_ITERATING = frozenset({"begin", "end", "cbegin", "cend", "rbegin", "rend", "find", "lower_bound", "upper_bound"})
# the containers and maps of the standard library that have an `operator[]`
_INDEXED = frozenset({"vector", "deque", "array", "span"})
_KEYED = frozenset({"map", "unordered_map"})


def _bare(text: str) -> str:
    """A declared type's text without qualifiers, spaces and references (`const std::map<K, V>&` ->
    `std::map<K,V>`)."""
    return _QUALIFIERS.sub(" ", text).replace(" ", "").rstrip("&")


def _template(written: str) -> tuple[str, list[str]] | None:
    """(the template a bare type names, without a leading `::`; its top-level arguments), None when the
    type is no template's."""
    m = _TEMPLATE.fullmatch(written)
    return (m.group(1).lstrip(":"), split_top_level(m.group(2))) if m is not None else None


def _listed(name: str, templates: frozenset[str]) -> bool:
    """Whether the template ``name`` (`vector` after a `using std::vector;`, or `std::vector`) is one of
    ``templates``."""
    return name in templates or "std::" + name in templates


def _iterated(text: str) -> str | None:
    """What an iterator (:data:`ITERATOR`) declared ``text`` points at; None for anything else."""
    template = _template(_bare(text))
    return template[1][0] if template is not None and template[0] == ITERATOR and len(template[1]) == 1 else None


def pair_member(text: str, name: str) -> str | None:
    """The type of `.first` (``name``) or `.second` of a `std::pair` declared ``text``; None for
    anything else."""
    template = _template(_bare(text))
    if template is None or template[0] not in ("std::pair", "pair") or name not in ("first", "second"):
        return None
    arguments = template[1]
    return arguments[name == "second"] if len(arguments) == 2 else None


@functools.cache
def load_handles(path: Path = HANDLES_FILE) -> HandleTypes:
    raw = load_data_file(path, HANDLES_SCHEMA)
    return HandleTypes(frozenset(raw.get("handles") or ()), dict(raw.get("factories") or {}),
                       frozenset(raw.get("containers") or ()), frozenset(raw.get("maps") or ()))


@functools.lru_cache(maxsize=1 << 14)
def unwrap(text: str, handles: HandleTypes) -> tuple[str, tuple[str, ...]] | None:
    """(the class a declared type names, the layers around it, outermost first: :data:`POINTER` or
    :data:`HANDLE`); None when the text names no class (`auto`, `decltype(...)`, a function type).
    `const std::unique_ptr<ns::Model>&` -> (`ns::Model`, (HANDLE,)); `Model* const` -> (`Model`, (POINTER,))."""
    written = _QUALIFIERS.sub(" ", text).replace(" ", "") if text else ""
    layers: list[str] = []
    while written:
        written = written.rstrip("&")  # a reference is the object itself
        if written.endswith("*"):
            layers.append(POINTER)
            written = written[:-1]
            continue
        m = _TEMPLATE.fullmatch(written)
        if m is not None and handles.is_handle(m.group(1)):
            arguments = split_top_level(m.group(2))
            layers.append(HANDLE)
            written = arguments[0] if arguments else ""
            continue
        break
    if not written or written == "auto" or not _CLASS_NAME.fullmatch(written):
        return None
    return written, tuple(layers)
