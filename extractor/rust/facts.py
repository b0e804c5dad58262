"""What the Rust scanner returns for one file, as typed records (msgspec Structs).

:func:`extractor.rust.scan.scan_rust` is annotated to return :class:`RustFacts`, so the driver
decodes a file's facts into these types (:mod:`extractor.run.facts`) and the graph step reads
``d.owner.trait`` where it read ``(r.get("owner") or {}).get("trait")``. Names are as written in
the file, qualified within the file's own module; nothing depends on the file's path (facts are
cached by content hash). Definitions, the records a file has most of, are ``array_like`` (encoded
without field names) and omit their defaults.
"""

from __future__ import annotations

import msgspec

from extractor.native.calls import CallSites


class RustOwner(msgspec.Struct, frozen=True, omit_defaults=True):
    """The `impl` (or `trait`) block a method is written in."""

    type: str  # the impl's type as written (`Foo` for `impl<T> Foo<T>`), or the trait's own path
    trait: str = ""  # `impl Trait for Type`: the trait as written
    line: int = 0  # of the impl's type
    attrs: tuple[str, ...] = ()  # the impl's kept attributes (`pymethods`)
    in_trait: bool = False  # a method declared in a trait body


class RustAdd(msgspec.Struct, frozen=True, array_like=True):
    """What a `#[pymodule]` function adds: `add_class::<T>()`, `wrap_pyfunction!(f)`, ..."""

    kind: str  # "cls", "fn", "mod" or "sub" (the regex group that matched)
    name: str  # as written
    line: int


class RustDefinition(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """One item: module, struct, enum, union, trait, function or method; or a member: a struct's or
    union's named field, an enum's variant."""

    kind: str
    qual: str  # the path inside the file's module (`inner::Foo::new`)
    line: int  # of the name
    start: int
    end: int
    tags: tuple[str, ...] = ()  # async, unsafe, foreign, declaration
    attrs: tuple[str, ...] = ()  # the attributes later steps read (PyO3, no_mangle, export_name)
    doc: str = ""
    abi: str = ""  # `extern "C"` functions and those declared in an `extern "C" { }` block
    params: tuple[tuple[str, str], ...] = ()  # (pattern, type); `self` keeps its form as the type
    returns: str = ""  # a function's return type, a field's type
    owner: RustOwner | None = None  # methods
    public: bool = False  # `pub` exactly
    adds: tuple[RustAdd, ...] = ()  # a `#[pymodule]` function's registrations
    bases: tuple[str, ...] = ()  # a trait's supertraits


class RustUse(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """One path a `use` declaration brings in (a use tree is flattened)."""

    path: str  # `a::b`, `a::f::*`, `a::c::self`
    alias: str  # `as e`, or ""
    line: int
    scope: str  # the item path inside the file's module where the `use` is ("" at module level)
    public: bool = False  # `pub use`: a re-export
    attrs: tuple[str, ...] = ()


class RustFacts(msgspec.Struct, frozen=True):
    """Everything one Rust file contributes to the graph."""

    defs: tuple[RustDefinition, ...] = ()
    uses: tuple[RustUse, ...] = ()
    # (type, trait, line, scope) of every `impl` block: trait "" for an inherent `impl Type`
    impls: tuple[tuple[str, str, int, str], ...] = ()
    calls: CallSites = ()  # by caller's qual: (callee as written, line)
    errors: int = 0
    error_lines: tuple[int, ...] = ()
    truncated: bool = False
    # (package, line) of each protobuf package whose generated code the file includes:
    # `tonic::include_proto!("pkg")`, `include!(concat!(env!("OUT_DIR"), "/pkg.rs"))` (prost, tonic)
    protos: tuple[tuple[str, int], ...] = ()
