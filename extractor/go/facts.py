"""What the Go scanner returns for one file, as typed records (msgspec Structs).

:func:`extractor.go.scan.scan_go` is annotated to return :class:`GoFacts`, so the driver decodes
a file's facts into these types (:mod:`extractor.run.facts`) and the graph step reads
``facts.cgo`` and ``r.embeds`` where it read ``facts.get("cgo")`` and ``r.get("embeds", ())``.
Names are as written, qualified within the package (``Server``, ``Server.Handle``); nothing depends
on the file's path (facts are cached by content hash).
"""

from __future__ import annotations

import msgspec

from extractor.native.calls import CallSites


class GoDefinition(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """A function, a method, or a type declaration (struct, interface, defined type, alias)."""

    kind: str  # "function", "method", "struct", "interface", "type", "alias"
    qual: str  # `Name`, `Type.Method`
    line: int  # of the name
    start: int
    end: int
    tags: tuple[str, ...] = ()  # "generic", "declaration"
    doc: str = ""
    receiver: str = ""  # methods: the receiver's type, `*T` for a pointer receiver
    # callables: (name, type) per parameter (name "" when unnamed); None for what has no parameter list
    params: tuple[tuple[str, str], ...] | None = None
    returns: str = ""
    embeds: tuple[str, ...] = ()  # the embedded types of a struct or interface
    methods: tuple[tuple[str, int], ...] = ()  # an interface's method names and lines
    underlying: str = ""  # a defined type's underlying kind (`int`, `map`, `func`, ...)
    target: str = ""  # an alias's target type, as written
    # a struct's own fields: (name, line, type as written, embedded); an embedded field is named after
    # its type (`*pkg.T[X]` is `T`), as Go and ctags name it
    fields: tuple[tuple[str, int, str, bool], ...] = ()
    # a callable's locals whose type its body states: (name, type as written) for `x := &T{...}`,
    # `x := T{...}`, `var x T`, `x := new(T)`; (name, "call:F") for `x := F(...)` / `x := pkg.F(...)`,
    # whose type is F's first result (the graph step reads it). A name given two types is left out.
    locals: tuple[tuple[str, str], ...] = ()


class GoCgo(msgspec.Struct, frozen=True):
    """`import "C"` and its preamble: the C code in the comment right before it."""

    line: int  # of the import
    includes: tuple[tuple[str, int], ...] = ()  # (#include target, line)
    functions: tuple[tuple[str, int], ...] = ()  # (C function defined in the preamble, line)


class GoFacts(msgspec.Struct, frozen=True):
    """Everything one Go file contributes to the graph."""

    package: str = ""
    package_line: int = 0
    doc: str = ""  # the package clause's doc comment
    imports: tuple[tuple[str, str, int], ...] = ()  # (import path, alias, line)
    defs: tuple[GoDefinition, ...] = ()
    checks: tuple[tuple[str, str, int], ...] = ()  # (interface, concrete type, line) of `var _ I = T{}`
    calls: CallSites = ()  # by caller's qual: (callee as written, line)
    cgo: GoCgo | None = None
    exports: tuple[tuple[str, int], ...] = ()  # `//export Name` lines
    errors: int = 0
    error_lines: tuple[int, ...] = ()
