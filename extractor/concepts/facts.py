"""The per-file facts the concept scanners record, one type for every language: what a file imports,
includes, calls and defines, each with the 1-based line it was seen on (see
:mod:`extractor.concepts.scan` for what each field holds per language).

They cross from the worker to the driver as msgpack (:mod:`extractor.run.facts` decodes them into
this type, by the scanners' return annotation). The many ``(text, line)`` pairs are plain tuples,
the smallest form on the wire; imports and definitions are named.
"""

from __future__ import annotations

import msgspec

Seen = tuple[str, int]  # a fact's text as found ("heapq.heappush", "pin_memory=True") and its line


class Import(msgspec.Struct, frozen=True, array_like=True, order=True):
    """``from a.b import c`` -> ("a.b", "c", 0, line); ``import a.b`` -> ("a.b", "", 0, line); Rust
    ``use`` paths and Go import paths as modules."""

    module: str
    name: str
    level: int  # leading dots of a relative Python import (resolved by the extractor, which knows the module)
    line: int


class Definition(msgspec.Struct, frozen=True, array_like=True):
    """A class or function as the concepts scanner records it."""

    qualname: str
    kind: str  # "class", "struct", "function", "kernel", "enum", "trait", "interface", "type"
    line: int
    bases: tuple[str, ...] = ()


class ConceptFacts(msgspec.Struct, frozen=True, omit_defaults=True):
    """One file's facts; sorted, so they do not depend on the order a walk met them."""

    imports: tuple[Import, ...] = ()
    # imports under ``if TYPE_CHECKING:``: annotations only, no dependency at run time
    typing_imports: tuple[Import, ...] = ()
    includes: tuple[Seen, ...] = ()  # C/C++ ``#include`` headers
    names: tuple[Seen, ...] = ()  # dotted (or ``::``) names the code uses, resolved through its imports
    calls: tuple[Seen, ...] = ()  # method names called on values (``x.pin_memory()`` -> "pin_memory")
    invokes: tuple[Seen, ...] = ()  # Python: imported names called (``FastAPI()`` -> "fastapi.FastAPI")
    keywords: tuple[Seen, ...] = ()  # Python: ``arg=value`` keyword arguments
    attrs: tuple[Seen, ...] = ()  # Python: each attribute name, at its first access
    strings: tuple[Seen, ...] = ()  # short one-word string constants
    routes: tuple[Seen, ...] = ()  # HTTP routes the code registers: "POST /v1/chat/completions"
    # Python: (router's name, route, line) of each route a router of the file's declares, and
    # (router another module defines, as imported, "x.routers.chat.router"; prefix; line) of each
    # mount of one with a prefix (``app.include_router(chat.router, prefix="/v1")``)
    router_routes: tuple[tuple[str, str, int], ...] = ()
    mounts: tuple[tuple[str, str, int], ...] = ()
    defs: tuple[Definition, ...] = ()  # sorted by (line, qualname)
    c_api: tuple[tuple[int, int], ...] = ()  # C/C++: (line, prototypes) of each ``extern "C"`` block declaring any

    def seen(self, kind: str) -> tuple[Seen, ...]:
        """The ``(text, line)`` facts of one detector match kind (``names``, ``calls``, ...)."""
        return _SEEN[kind](self)


_SEEN = {
    "includes": lambda f: f.includes,
    "names": lambda f: f.names,
    "calls": lambda f: f.calls,
    "invokes": lambda f: f.invokes,
    "keywords": lambda f: f.keywords,
    "attrs": lambda f: f.attrs,
    "strings": lambda f: f.strings,
    "routes": lambda f: f.routes,
}
