"""Unit headers of ``.debug_info`` (DWARF 2 to 5), read directly from its bytes.

pyelftools parses each header with a construct ``Struct`` built for it and wraps it in a
``CompileUnit``; the walk needs only the fields below, and reading them here lets the reader
take the section bytes without building pyelftools' ``DWARFInfo`` at all (it reads every debug
section, location lists included, and looks for relocations of each).
"""

from __future__ import annotations

import struct

from elftools.common.exceptions import DWARFError

DW_UT_COMPILE, DW_UT_TYPE, DW_UT_PARTIAL, DW_UT_SKELETON, DW_UT_SPLIT_COMPILE, DW_UT_SPLIT_TYPE = range(1, 7)


class UnitHeader:
    """What the walk needs of one unit's header. (A plain class: each dataclass costs about a
    millisecond of import, and archdiff structs imports this module to read one file.)"""

    __slots__ = ("offset", "end", "version", "unit_type", "address_size", "offset_size", "abbrev_offset",
                 "die_offset", "type_signature", "type_offset")

    def __init__(self, offset: int, end: int, version: int, unit_type: int, address_size: int, offset_size: int,
                 abbrev_offset: int, die_offset: int, type_signature: int = 0, type_offset: int = 0) -> None:
        self.offset = offset  # of the header, in .debug_info
        self.end = end  # offset just after the unit
        self.version = version
        self.unit_type = unit_type  # DW_UT_*; DW_UT_COMPILE before DWARF 5
        self.address_size = address_size
        self.offset_size = offset_size  # 4 in 32-bit DWARF, 8 in 64-bit DWARF
        self.abbrev_offset = abbrev_offset
        self.die_offset = die_offset  # the unit's root DIE
        self.type_signature = type_signature  # type units
        self.type_offset = type_offset  # type units: the type's DIE, from the unit's start


def read_unit_headers(data: bytes, little: bool) -> list[UnitHeader]:
    """Every unit header in ``data`` (the bytes of ``.debug_info``), in order."""
    order = "<" if little else ">"
    u16, u32, u64 = struct.Struct(order + "H"), struct.Struct(order + "I"), struct.Struct(order + "Q")
    out = []
    offset = 0
    size = len(data)
    while offset < size:
        length = u32.unpack_from(data, offset)[0]
        pos = offset + 4
        offset_size = 4
        if length == 0xFFFFFFFF:
            length = u64.unpack_from(data, pos)[0]
            pos += 8
            offset_size = 8
        elif length >= 0xFFFFFFF0:
            raise DWARFError(f"unit at 0x{offset:x} has a reserved length 0x{length:x}")
        end = pos + length
        offset_unit = u32 if offset_size == 4 else u64
        version = u16.unpack_from(data, pos)[0]
        pos += 2
        if not 2 <= version <= 5:
            raise DWARFError(f"unit at 0x{offset:x} has DWARF version {version}, not 2 to 5")
        signature = type_offset = 0
        if version >= 5:
            unit_type = data[pos]
            address_size = data[pos + 1]
            abbrev_offset = offset_unit.unpack_from(data, pos + 2)[0]
            pos += 2 + offset_size
            if unit_type in (DW_UT_TYPE, DW_UT_SPLIT_TYPE):
                signature = u64.unpack_from(data, pos)[0]
                type_offset = offset_unit.unpack_from(data, pos + 8)[0]
                pos += 8 + offset_size
            elif unit_type in (DW_UT_SKELETON, DW_UT_SPLIT_COMPILE):
                pos += 8  # dwo_id
            elif unit_type not in (DW_UT_COMPILE, DW_UT_PARTIAL):
                raise DWARFError(f"unit at 0x{offset:x} has an unknown unit type 0x{unit_type:x}")
        else:
            unit_type = DW_UT_COMPILE
            abbrev_offset = offset_unit.unpack_from(data, pos)[0]
            address_size = data[pos + offset_size]
            pos += offset_size + 1
        out.append(UnitHeader(offset, end, version, unit_type, address_size, offset_size, abbrev_offset,
                              pos, signature, type_offset))
        offset = end
    return out
