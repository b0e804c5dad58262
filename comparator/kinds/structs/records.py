"""The structs kind's records: struct families side by side with byte maps (``findings["structs"]``)
and a release's layout changes (``findings["release"]["structs"]``). Free of the extractor: the
renderer reads them."""

from __future__ import annotations

import dataclasses

from comparator.codec import omitted_when_none
from comparator.records import ApiReach, Sides


@dataclasses.dataclass(frozen=True, slots=True)
class Segment:
    """One run of a byte map, as the extractor draws it (``extractor.structs.render.byte_map``):
    bytes, exact eighths of a byte around bit-fields."""

    offset: int | float
    size: int | float
    label: str
    type: str
    kind: str  # "member" | "base" | "hole" | "padding": the extractor's words


@dataclasses.dataclass(frozen=True, slots=True)
class StructRow:
    qualname: str
    kind: str  # "struct" | "class" | "union"
    size: int
    align: int
    members: int
    hole_bytes: int
    padding: int
    method: str  # how the layout was read (the extractor's ``Method``); "unresolved" when it was not
    error: str
    tags: tuple[str, ...]
    segments: tuple[Segment, ...]
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class FamilySide:
    count: int
    resolved: int
    total_bytes: int  # of the resolved layouts
    hole_bytes: int
    structs: tuple[StructRow, ...]  # the largest first, capped
    more: int  # structs beyond the cap


@dataclasses.dataclass(frozen=True, slots=True)
class Family:
    tag: str  # a struct tag, or "untagged"
    a: FamilySide
    b: FamilySide


@dataclasses.dataclass(frozen=True, slots=True)
class StructTotals:
    count: int
    resolved: int
    unresolved: int
    total_bytes: int
    hole_bytes: int
    empty_reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class StructsSection:
    families: tuple[Family, ...]
    totals: Sides[StructTotals]


@dataclasses.dataclass(frozen=True, slots=True)
class LayoutSize:
    size: int
    align: int
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class LayoutChange:
    """A struct both releases lay out, laid out differently."""

    qualname: str
    changes: tuple[str, ...]
    breaking: bool  # size, alignment, a member's offset, size or type: the ABI
    old: LayoutSize
    new: LayoutSize
    segments_old: tuple[Segment, ...]
    segments_new: tuple[Segment, ...]
    path: str
    line: int
    # the public Python API that reaches the struct in the new release (a release comparison)
    reached_by: ApiReach | None = omitted_when_none()


@dataclasses.dataclass(frozen=True, slots=True)
class StructPresence:
    """A struct one release has and the other lacks."""

    qualname: str
    size: int
    method: str
    breaking: bool  # a removed type breaks the ABI; an added one does not
    path: str
    line: int
    # a removed struct: the public Python API that reached it in the old release
    reached_by: ApiReach | None = omitted_when_none()


@dataclasses.dataclass(frozen=True, slots=True)
class StructChanges:
    changed: tuple[LayoutChange, ...]
    removed: tuple[StructPresence, ...]
    added: tuple[StructPresence, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class StructsRelease:
    structs: StructChanges
