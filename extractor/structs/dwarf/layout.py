"""One aggregate's members, their placement and the aggregate's alignment, as a RawLayout."""

from __future__ import annotations

from extractor.structs.dwarf.die import Unit, member_location
from extractor.structs.dwarf.raw import RawLayout, RawMember
from extractor.structs.dwarf.types import Types


def build_layout(unit: Unit, offset: int, kind: str, qualname: str, raw_members: list,
                 seen: set) -> RawLayout | None:
    if not qualname:
        return None  # anonymous aggregates are shown inside the aggregate that holds them
    abbrev, attrs, _ = unit.die(offset)
    size = unit.value(attrs, "byte_size", 0)
    raw_members = [(o, tag, a) for o, tag, a in raw_members if not (
        "declaration" in a or ("external" in a and tag == "DW_TAG_member"))]  # static members
    key = (qualname, size, unit.value(attrs, "decl_line", 0), tuple(
        (tag, unit.value(a, "name", ""), member_location(unit, a), unit.value(a, "bit_size", 0),
         unit.value(a, "data_bit_offset", -1), unit.value(a, "bit_offset", -1))
        for _o, tag, a in raw_members))
    if key in seen:
        return None
    seen.add(key)
    members = []
    types = Types(unit)
    for _o, tag, a in raw_members:
        members.append(raw_member(unit, types, tag, a))
    decl_file = unit.file_name(unit.value(attrs, "decl_file", 0)) if "decl_file" in attrs else ""
    explicit = unit.value(attrs, "alignment", 0)
    align, packed = aggregate_align(members, size, kind)
    if explicit:
        align = explicit
    return RawLayout(kind=kind, qualname=qualname, size=size, align=align,
                     explicit_align=bool(explicit), members=tuple(members), decl_file=decl_file,
                     decl_line=unit.value(attrs, "decl_line", 0), language=unit.language,
                     packed=packed)


def aggregate_align(members: list[RawMember], size: int, kind: str) -> tuple[int, bool]:
    align = 1
    packed = False
    for m in members:
        if m.is_virtual_base:
            continue
        align = max(align, m.align)
        if not m.bit_size and m.align and m.offset % m.align:
            packed = True
    if size and size % align:
        packed = True
    if packed:
        align = 1
    return align, packed


def raw_member(unit: Unit, types: "Types", tag: str, attrs: dict) -> RawMember:
    type_off = unit.value(attrs, "type")
    type_name = types.spell(type_off)
    tsize = types.size(type_off)
    # alignas on a member is the member's DW_AT_alignment; it raises the aggregate's alignment
    talign = unit.value(attrs, "alignment", 0) or types.align(type_off)
    if tag == "DW_TAG_inheritance":
        virtual = unit.value(attrs, "virtuality", 0) != 0
        loc = 0 if virtual else member_location(unit, attrs)
        return RawMember(name=type_name, type_name=type_name, offset=loc, size=tsize,
                         align=talign, is_base=True, is_virtual_base=virtual)
    name = unit.value(attrs, "name", "")
    bit_size = unit.value(attrs, "bit_size", 0)
    if not bit_size:
        return RawMember(name=name, type_name=type_name, offset=member_location(unit, attrs),
                         size=tsize, align=talign)
    storage = unit.value(attrs, "byte_size", 0) or tsize or 1
    if "data_bit_offset" in attrs:
        bitpos = unit.value(attrs, "data_bit_offset")
    else:
        # DWARF 2/3: bit_offset counts from the most significant bit of the storage unit
        # at data_member_location (little-endian targets)
        loc = member_location(unit, attrs)
        big = unit.value(attrs, "bit_offset", 0)
        bitpos = loc * 8 + (storage * 8 - big - bit_size if unit.sections.little else big)
    # pahole reports the storage unit of the member's type size, aligned to that size
    unit_bits = storage * 8
    offset = (bitpos // unit_bits) * storage
    return RawMember(name=name, type_name=type_name, offset=offset, size=storage, align=talign,
                     bit_offset=bitpos - offset * 8, bit_size=bit_size)
