"""Struct layout records, and the arithmetic that turns a DWARF layout into them.

Holes and padding follow the reference tool of the layout's language, so the two can be compared
hole for hole: pahole's accounting for C (``class__find_holes`` in dwarves), gdb's ``ptype /o`` for
C++ (pahole 1.24 prints nothing usable for templates and base classes, so gdb is C++'s reference).
They count the same unused bits and group them differently around bit-fields: for
``struct mixed { unsigned long a:3; unsigned int b:2; long c; }`` pahole reports one 59-bit hole
(the rest of ``a``'s 8-byte storage unit), gdb a 3-bit and a 7-byte hole (to the next byte, then
whole bytes). A bit hole's ``offset`` is the absolute bit position where it starts, a byte hole's
the byte where it starts.
"""

from __future__ import annotations

from extractor.model import RecordKind

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
        # first (the primary base); holes are measured in address order, bit by bit (a char
        # declared after a short bit-field lies inside an int bit-field's storage unit declared
        # after it)
        members = tuple(sorted(members, key=bit_start))
    holes, padding, bit_padding = compute_holes(members, raw.size, raw.kind == "union", raw.language)
    return StructLayout(qualname=raw.qualname, kind=raw.kind, path=path, line=raw.decl_line,
                        method=method, size=raw.size, align=raw.align, members=members,
                        holes=holes, padding=padding, bit_padding=bit_padding, tags=tags,
                        language=raw.language, packed=raw.packed, origin=origin)


def bit_start(m: Member) -> int:
    """The member's first bit, from the start of the struct."""
    return m.offset * 8 + m.bit_offset


def bit_end(m: Member) -> int:
    return bit_start(m) + (m.bit_size if m.bit_size else m.size * 8)


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


def compute_holes(members: tuple[Member, ...], size: int, is_union: bool, language: str = "c"
                  ) -> tuple[tuple[Hole, ...], int, int]:
    """(holes, tail padding bytes, tail bit padding), in member order: pahole's accounting for C,
    gdb's for C++ (see the module docstring). Unions have neither holes nor padding in both."""
    if is_union:
        return (), 0, 0
    if language == "c":
        return _pahole_holes(members, size)
    return _gdb_holes(members, size)


def _pahole_holes(members: tuple[Member, ...], size: int) -> tuple[tuple[Hole, ...], int, int]:
    """dwarves' ``class__find_holes``: a bit-field run ends at the end of its widest storage unit;
    the bits from the last bit-field to the next member, up to that end, are one bit hole; whole
    bytes past it are a byte hole."""
    holes: list[Hole] = []
    unit_end = size * 8  # end of the current bit-field run's storage unit, in bits
    unit_bits = 0  # size of that storage unit, in bits
    seen = 0  # the bit after the last one used so far
    in_bitfield = False
    last: Member | None = None
    for index, m in enumerate(members):
        if m.kind is MemberKind.VIRTUAL_BASE:
            continue
        start, end = bit_start(m), bit_end(m)
        bit_hole, bit_at, byte_hole, byte_at = 0, seen, 0, seen // 8
        if in_bitfield:  # the unused tail of the previous bit-field's storage unit
            stop = min(start, unit_end)
            bit_hole = stop - seen
            seen = stop
        if m.bit_size:
            aligned = m.offset * 8
            if seen < aligned <= start:  # whole bytes up to this bit-field's storage unit
                byte_hole, byte_at = m.offset - seen // 8, seen // 8
                seen = aligned
            bit_hole += start - seen
        else:
            byte_hole, byte_at = start // 8 - seen // 8, seen // 8
        after = last.name if last is not None else ""
        if bit_hole > 0:
            holes.append(Hole(bit_at, bit_hole, after, True, index))
        if byte_hole > 0:
            holes.append(Hole(byte_at, byte_hole, after, False, index))
        if m.bit_size:
            in_bitfield = True
            storage = m.size * 8
            if end > unit_end or storage > unit_bits:
                unit_bits = storage
                unit_end = m.offset * 8 + unit_bits
                if end > unit_end:  # it borrowed bits from the previous unit and spills into the next
                    unit_end += unit_bits
        else:
            in_bitfield = False
            unit_bits = 0
            unit_end = end
        last = m
        seen = max(seen, end)
    if last is None:
        return (), 0, 0
    bit_padding = 0
    if in_bitfield:
        stop = min(size * 8, unit_end)
        bit_padding = stop - seen
        seen = stop
    return tuple(holes), max(0, size - seen // 8), max(0, bit_padding)


def _gdb_holes(members: tuple[Member, ...], size: int) -> tuple[tuple[Hole, ...], int, int]:
    """gdb's ``print_offset_data``: the gap between one member's last bit and the next member's
    first is a hole, told as its odd bits and then its whole bytes; the same at the end is padding.
    Nothing is counted before the first member."""
    holes: list[Hole] = []
    end = 0
    last: Member | None = None
    for index, m in enumerate(members):
        if m.kind is MemberKind.VIRTUAL_BASE:
            continue
        start = bit_start(m)
        if last is not None and 0 < end < start:
            bits, whole = (start - end) % 8, (start - end) // 8
            if bits:
                holes.append(Hole(end, bits, last.name, True, index))
            if whole:
                holes.append(Hole((end + bits) // 8, whole, last.name, False, index))
        end = bit_end(m)
        last = m
    if last is None or not 0 < end < size * 8:
        return tuple(holes), 0, 0
    return tuple(holes), (size * 8 - end) // 8, (size * 8 - end) % 8


def simple_name(qualname: str) -> str:
    """A definition's own name, without its scopes: what a source scan that lost its way around a
    macro and the compiler still agree on (with the definition's file and line)."""
    return qualname.rsplit("::", 1)[-1]


def unresolved_layout(qualname: str, kind: str, path: str, line: int, error: str,
                      origin: str = "", tags: tuple[str, ...] = (),
                      language: str = "c++", missing: str = "", supplied_by: str = "") -> StructLayout:
    return StructLayout(qualname=qualname, kind=kind, path=path, line=line,
                        method=Method.UNRESOLVED, tags=tags, language=language, origin=origin,
                        error=error, missing=missing, supplied_by=supplied_by)


STRUCTS = RecordKind("structs", StructLayout)  # the bundle's "structs" list
