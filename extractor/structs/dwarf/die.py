"""DIE decoding: one compile unit's raw bytes, its abbreviations, and a decoder over them.

pyelftools' per-DIE object API is too slow for a whole library (libpython: 851k DIEs, 33 s), so
DIEs are decoded here from the raw ``.debug_info`` bytes, keeping only the attributes listed in
:data:`.forms.KEEP`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from elftools.common.exceptions import DWARFError

from extractor.structs.dwarf.abbrev import Abbrev, compile_abbrevs
from extractor.structs.dwarf.forms import (ADDR, BLOCK1, BLOCK2, BLOCK4, BLOCKU, CSTR, FIXED, IMPLICIT, OFFSET,
                                           PRESENT, REF_ADDR, SLEB, ULEB)
from extractor.structs.dwarf.lines import file_table, read_file_table
from extractor.structs.dwarf.sections import Sections


class TypeUnitLookup(Protocol):
    """Where a ``DW_FORM_ref_sig8`` leads: the walk (a floor above) opens and names type units."""

    def die(self, signature: int) -> tuple[Unit, int] | None: ...


class Unit:
    """One compile unit's raw bytes, abbreviations and decoded-DIE cache."""

    def __init__(self, reader: Sections, cu, type_units: TypeUnitLookup | None = None,
                 abbrev_cache: dict | None = None) -> None:
        self.reader = reader
        self.type_units = type_units
        self.cu = cu
        header = cu.header
        self.offset = cu.cu_offset
        self.end = cu.cu_offset + cu.size
        self.address_size = header["address_size"]
        self.version = header["version"]
        self.offset_size = 8 if cu.dwarf_format() == 64 else 4
        key = header["debug_abbrev_offset"]
        abbrevs = abbrev_cache.get(key) if abbrev_cache is not None else None
        if abbrevs is None:
            abbrevs = compile_abbrevs(reader.abbrev_data, key)
            if abbrev_cache is not None:
                abbrev_cache[key] = abbrevs
        self.abbrevs = abbrevs
        self.fixed_sizes, self.sibling_slots = self._skip_tables()
        self.str_offsets_base = 8 if self.offset_size == 4 else 16
        self.cache: dict[int, tuple] = {}
        self.qualnames: dict[int, str] = {}
        self.typedef_names: dict[int, str] = {}  # anonymous aggregate offset -> typedef name
        self.memos: dict[str, dict] = {}
        self.language = "c++"
        self._files: list[str] | None = None

    def _skip_tables(self) -> tuple[dict[int, int], dict[int, tuple[int, int]]]:
        """Per abbreviation: its encoded size when every form is fixed-size (for this unit's
        offset and address sizes), and where DW_AT_sibling sits when only fixed-size forms
        precede it. The walk uses them to jump over DIEs without decoding them."""
        fixed: dict[int, int] = {}
        slots: dict[int, tuple[int, int]] = {}
        ref_addr = self.address_size if self.version == 2 else self.offset_size
        for code, abbrev in self.abbrevs.items():
            at = 0
            for key, kind, size, _strtab, _curef in abbrev.ops:
                if kind == FIXED:
                    width = size
                elif kind == OFFSET:
                    width = self.offset_size
                elif kind in (PRESENT, IMPLICIT):
                    width = 0
                elif kind == ADDR:
                    width = self.address_size
                elif kind == REF_ADDR:
                    width = ref_addr
                else:
                    at = None
                    break
                if key == "sibling" and kind == FIXED and code not in slots:
                    slots[code] = (at, width)
                at += width
            if at is not None:
                fixed[code] = at
        return fixed, slots

    # The decoder: returns (abbrev, attrs, next_offset) or (None, None, next) for a null entry.
    def decode(self, pos: int):
        data = self.reader.data
        # ULEB abbreviation code, inlined for speed (codes are almost always < 128)
        b = data[pos]
        pos += 1
        if b < 0x80:
            code = b
        else:
            code, shift = b & 0x7F, 7
            while True:
                b = data[pos]
                pos += 1
                code |= (b & 0x7F) << shift
                if b < 0x80:
                    break
                shift += 7
        if code == 0:
            return None, None, pos
        abbrev = self.abbrevs[code]
        attrs = {}
        little = self.reader.little
        for key, kind, size, strtab, curef in abbrev.ops:
            if kind == FIXED:
                if key is not None:
                    attrs[key] = (int.from_bytes(data[pos:pos + size], "little" if little else "big"),
                                  strtab, curef)
                pos += size
            elif kind == ULEB or kind == SLEB:
                value, shift = 0, 0
                while True:
                    b = data[pos]
                    pos += 1
                    value |= (b & 0x7F) << shift
                    shift += 7
                    if b < 0x80:
                        break
                if kind == SLEB and b & 0x40:
                    value -= 1 << shift
                if key is not None:
                    attrs[key] = (value, strtab, curef)
            elif kind == OFFSET:
                if key is not None:
                    attrs[key] = (int.from_bytes(data[pos:pos + self.offset_size],
                                                 "little" if little else "big"), strtab, False)
                pos += self.offset_size
            elif kind == PRESENT:
                if key is not None:
                    attrs[key] = (1, None, False)
            elif kind == CSTR:
                end = data.index(b"\0", pos)
                if key is not None:
                    attrs[key] = (data[pos:end].decode("utf-8", "replace"), None, False)
                pos = end + 1
            elif kind == IMPLICIT:
                if key is not None:
                    attrs[key] = (size, None, False)
            elif kind == ADDR:
                pos += self.address_size
            elif kind == REF_ADDR:
                n = self.address_size if self.version == 2 else self.offset_size
                if key is not None:
                    attrs[key] = (int.from_bytes(data[pos:pos + n], "little" if little else "big")
                                  - self.offset, None, True)  # stored CU-relative like the rest
                pos += n
            elif kind in (BLOCK1, BLOCK2, BLOCK4, BLOCKU):
                if kind == BLOCKU:
                    n, shift = 0, 0
                    while True:
                        b = data[pos]
                        pos += 1
                        n |= (b & 0x7F) << shift
                        shift += 7
                        if b < 0x80:
                            break
                else:
                    width = {BLOCK1: 1, BLOCK2: 2, BLOCK4: 4}[kind]
                    n = int.from_bytes(data[pos:pos + width], "little" if little else "big")
                    pos += width
                if key is not None:
                    attrs[key] = (bytes(data[pos:pos + n]), "block", False)
                pos += n
            else:  # INDIRECT: rare enough to be unsupported rather than slow
                raise DWARFError("DW_FORM_indirect is not supported")
        return abbrev, attrs, pos

    def value(self, attrs: dict, key: str, default=None):
        item = attrs.get(key)
        if item is None:
            return default
        value, strtab, curef = item
        if strtab is None:
            return value + self.offset if curef else value
        if strtab == "block":
            return value
        if strtab == "sig8":  # (unit, offset) in a type unit, or None
            return self.type_units.die(value) if self.type_units is not None else None
        return self.reader.string(strtab, value, self.offset_size, self.str_offsets_base)

    def skip_children(self, pos: int) -> int:
        """Offset after the null entry that ends the children list starting at ``pos``."""
        while True:
            if not self.offset < pos < self.end:
                raise DWARFError(f"DIE walk left its unit at 0x{pos:x}")
            abbrev, attrs, after = self.decode(pos)
            if abbrev is None:
                return after
            if abbrev.children:
                after = self._next_sibling(pos, attrs, after)
            pos = after

    def _next_sibling(self, pos: int, attrs: dict, after: int) -> int:
        """Where the DIE at ``pos`` (with children, attributes ending at ``after``) ends.

        A sibling link must point past the DIE's own attributes: one that points back (at the
        DIE itself, or before it) would make every walk over this list go round for ever."""
        sibling = attrs.get("sibling")
        if sibling is None:
            return self.skip_children(after)
        target = sibling[0] + self.offset
        if target < after:
            raise DWARFError(f"DW_AT_sibling of the DIE at 0x{pos:x} points back to 0x{target:x}")
        return target

    def die(self, offset: int):
        hit = self.cache.get(offset)
        if hit is None:
            abbrev, attrs, after = self.decode(offset)
            hit = (abbrev, attrs, after)
            self.cache[offset] = hit
        return hit

    def children(self, offset: int) -> Iterator[tuple[int, Abbrev, dict]]:
        abbrev, _attrs, pos = self.die(offset)
        if not abbrev.children:
            return
        while True:
            if not self.offset < pos < self.end:
                raise DWARFError(f"DIE walk left its unit at 0x{pos:x}")
            child, attrs, after = self.decode(pos)
            if child is None:
                return
            yield pos, child, attrs
            if child.children:
                after = self._next_sibling(pos, attrs, after)
            pos = after

    def file_name(self, index: int) -> str:
        if self._files is None:
            root = self.cache.get(self.cu.cu_die_offset)
            stmt_list = root[1].get("stmt_list") if root else None
            try:
                self._files = read_file_table(self.reader, stmt_list[0]) if stmt_list else []
            except (IndexError, ValueError, KeyError, DWARFError):
                self._files = file_table(self.reader, self.cu)  # pyelftools' general parser
        files = self._files
        if self.version < 5:
            index -= 1
        return files[index] if 0 <= index < len(files) else ""


def member_location(unit: Unit, attrs: dict) -> int:
    loc = unit.value(attrs, "loc", None)
    if loc is None:
        return 0  # union members, and the first member in some producers
    if isinstance(loc, bytes):
        return expr_offset(loc)
    return loc


def expr_offset(expr: bytes) -> int:
    """DWARF 2/3 member locations: ``DW_OP_plus_uconst N`` (or ``DW_OP_constu N``)."""
    if expr and expr[0] in (0x23, 0x10):
        value, shift = 0, 0
        for b in expr[1:]:
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        return value
    return 0
