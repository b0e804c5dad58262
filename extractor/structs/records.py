"""Struct layout records, and the arithmetic that turns a DWARF layout into them.

Holes follow pahole's accounting, so the two can be compared line by line: a *byte* hole is the
gap between the end of a member's storage (the storage unit, for a bit-field) and the next
member's offset; a *bit* hole is the unused bits of a bit-field's storage unit before the next
member (or the next storage unit). Tail padding is the size minus the end of the last storage.
"""

from __future__ import annotations

import dataclasses
import enum

CACHELINE = 64


class Method(str, enum.Enum):
    DWARF_BINARY = "dwarf-binary"  # read from an ELF the user supplied
    PROBE_GXX = "probe-g++"  # read from a probe object archdiff compiled with g++
    PROBE_NVCC = "probe-nvcc"  # read from a probe object archdiff compiled with nvcc
    UNRESOLVED = "unresolved"  # found in source, but the probe did not compile


class MemberKind(str, enum.Enum):
    FIELD = "field"
    BASE = "base"  # a base-class sub-object
    VIRTUAL_BASE = "virtual-base"  # its offset is only known at run time: not placed


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Member:
    offset: int  # bytes (of the storage unit, for a bit-field)
    name: str  # "" when anonymous; the base's type name for a base sub-object
    type: str  # as C/C++ spells it
    size: int  # bytes (of the storage unit, for a bit-field)
    kind: MemberKind = MemberKind.FIELD
    bit_offset: int = 0  # bit-fields: first bit inside the storage unit, LSB first
    bit_size: int = 0  # 0 when not a bit-field
    align: int = 1
    crosses_cacheline: bool = False  # starts in one 64-byte line and ends in another


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Hole:
    offset: int  # where the unused bytes (bits: the bit position) start
    size: int  # bytes, or bits when ``bits`` is true
    after: str  # the member it follows
    bits: bool = False
    before: int = 0  # index in ``members`` of the member that follows the hole


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class StructLayout:
    qualname: str
    kind: str  # "struct" | "class" | "union"
    path: str  # the declaring file: repository path when inside a source root, else as DWARF says
    line: int
    method: Method
    size: int = 0
    align: int = 0
    members: tuple[Member, ...] = ()
    holes: tuple[Hole, ...] = ()
    padding: int = 0  # tail padding, bytes
    bit_padding: int = 0  # unused bits at the end of the last bit-field's storage
    tags: tuple[str, ...] = ()
    language: str = "c++"
    packed: bool = False
    origin: str = ""  # the ELF file name or the probed header the layout was read from
    error: str = ""  # for ``unresolved``: the compiler's first error line, or why it was not probed
    missing: str = ""  # for ``unresolved``: the header or name the compiler could not find
    supplied_by: str = ""  # for ``unresolved``: what would supply it (``--headers-from pypi:torch``)
    target: str = ""  # the CPU a cross compiler laid it out for ("aarch64"); "" for this machine's

    @property
    def cachelines(self) -> int:
        return (self.size + CACHELINE - 1) // CACHELINE

    @property
    def sum_members(self) -> int:
        """Bytes of the members that are not bit-fields (pahole's ``sum members``)."""
        return sum(m.size for m in self.members if not m.bit_size and m.kind is not
                   MemberKind.VIRTUAL_BASE)

    @property
    def sum_holes(self) -> int:
        return sum(h.size for h in self.holes if not h.bits)


def layout_from_raw(raw, *, path: str, method: Method, origin: str = "",
                    tags: tuple[str, ...] = ()) -> StructLayout:
    """A :class:`StructLayout` from ``extractor.structs.dwarf.RawLayout``."""
    members = tuple(_member(m) for m in raw.members)
    if raw.kind != "union":
        # DWARF lists base classes in declaration order, but a polymorphic base may be placed
        # first (the primary base); holes are measured in address order
        members = tuple(sorted(members, key=lambda m: (m.offset, m.bit_offset)))
    holes, padding, bit_padding = compute_holes(members, raw.size, raw.kind == "union")
    return StructLayout(qualname=raw.qualname, kind=raw.kind, path=path, line=raw.decl_line,
                        method=method, size=raw.size, align=raw.align, members=members,
                        holes=holes, padding=padding, bit_padding=bit_padding, tags=tags,
                        language=raw.language, packed=raw.packed, origin=origin)


def _member(m) -> Member:
    kind = MemberKind.FIELD
    if m.is_virtual_base:
        kind = MemberKind.VIRTUAL_BASE
    elif m.is_base:
        kind = MemberKind.BASE
    if m.bit_size:
        start = m.offset * 8 + m.bit_offset
        last = start + m.bit_size - 1
        crosses = start // (CACHELINE * 8) != last // (CACHELINE * 8)
    else:
        crosses = m.size > 0 and m.offset // CACHELINE != (m.offset + m.size - 1) // CACHELINE
    return Member(offset=m.offset, name=m.name, type=m.type_name, size=m.size, kind=kind,
                  bit_offset=m.bit_offset, bit_size=m.bit_size, align=m.align,
                  crosses_cacheline=crosses)


def compute_holes(members: tuple[Member, ...], size: int, is_union: bool
                  ) -> tuple[tuple[Hole, ...], int, int]:
    """(holes, tail padding bytes, tail bit padding) in member order, pahole's way."""
    if is_union:
        return (), 0, 0
    placed = [m for m in members if m.kind is not MemberKind.VIRTUAL_BASE]
    holes: list[Hole] = []
    prev: Member | None = None
    storage_end = 0  # byte end of the previous member's storage
    bit_end = 0  # bit end of the previous member's bits
    for index, m in enumerate(members):
        if m.kind is MemberKind.VIRTUAL_BASE:
            continue
        if prev is not None:
            start_bit = m.offset * 8 + m.bit_offset
            if m.offset >= storage_end:
                if prev.bit_size and storage_end * 8 > bit_end:
                    holes.append(Hole(bit_end, storage_end * 8 - bit_end, prev.name, True, index))
                if m.offset > storage_end:
                    holes.append(Hole(storage_end, m.offset - storage_end, prev.name, False,
                                      index))
            elif prev.bit_size and start_bit > bit_end:
                holes.append(Hole(bit_end, start_bit - bit_end, prev.name, True, index))
        # pahole measures from the previous member's own end, even when it sits inside the
        # storage unit of a bit-field before it
        storage_end = m.offset + m.size
        bit_end = m.offset * 8 + m.bit_offset + m.bit_size if m.bit_size else storage_end * 8
        prev = m
    padding = max(0, size - storage_end) if placed else 0
    bit_padding = storage_end * 8 - bit_end if prev is not None and prev.bit_size else 0
    return tuple(holes), padding, bit_padding


def unresolved_layout(qualname: str, kind: str, path: str, line: int, error: str,
                      origin: str = "", tags: tuple[str, ...] = (),
                      language: str = "c++", missing: str = "", supplied_by: str = "") -> StructLayout:
    return StructLayout(qualname=qualname, kind=kind, path=path, line=line,
                        method=Method.UNRESOLVED, tags=tags, language=language, origin=origin,
                        error=error, missing=missing, supplied_by=supplied_by)
