"""The symbols kind's records: a release's symbol drift (``findings["release"]["symbols"]``).
Free of the extractor: the renderer reads them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping


@dataclasses.dataclass(frozen=True, slots=True)
class SymbolRef:
    id: str
    kind: str  # the graph's node kind
    name: str
    signature: str
    api: str  # why the symbol is or is not public, as the extractor recorded it
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class SymbolChange(SymbolRef):
    """A symbol added or removed, with the members that came or went with it (not listed apart)."""

    members: int


@dataclasses.dataclass(frozen=True, slots=True)
class SymbolMove:
    """A symbol moved (or a class renamed): the old and the new, and what paired them."""

    from_: SymbolRef
    to: SymbolRef
    how: str


@dataclasses.dataclass(frozen=True, slots=True)
class AttributeChanges:
    """The attributes a class or module that kept existing gained and lost (names capped, counts whole)."""

    id: str
    kind: str
    added_count: int
    removed_count: int
    added: tuple[str, ...]
    removed: tuple[str, ...]
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class SymbolDrift:
    added: tuple[SymbolChange, ...]
    removed: tuple[SymbolChange, ...]
    moved: tuple[SymbolMove, ...]
    renamed: tuple[SymbolMove, ...]
    attributes: tuple[AttributeChanges, ...]
    added_by_kind: Mapping[str, int]  # node kind (and "attribute") -> count
    removed_by_kind: Mapping[str, int]


@dataclasses.dataclass(frozen=True, slots=True)
class SymbolsRelease:
    symbols: SymbolDrift
