"""The sections of one ELF's DWARF as bytes, their string tables, and its type units."""

from __future__ import annotations

from extractor.structs.dwarf.abbrev import Abbrev
from extractor.structs.dwarf.die import Unit
from extractor.structs.dwarf.walk import prepare_unit, walk


class Reader:
    def __init__(self, dwarf, little: bool) -> None:
        self.dwarf = dwarf
        self.little = little
        self.data = dwarf.debug_info_sec.stream.getbuffer().tobytes()
        self.abbrev_cache: dict[int, dict[int, Abbrev]] = {}
        self.type_units: dict[int, tuple] = {}  # signature -> (CU, absolute DIE offset)
        self.type_unit_objects: dict[int, Unit] = {}
        self.abbrev_data = dwarf.debug_abbrev_sec.stream.getbuffer().tobytes()
        self._strings: dict[tuple[str, int], str] = {}
        sec = dwarf.debug_str_sec
        self.str_data = sec.stream.getbuffer().tobytes() if sec else b""
        sec = dwarf.debug_line_str_sec
        self.line_str_data = sec.stream.getbuffer().tobytes() if sec else b""
        sec = dwarf.debug_line_sec
        self.line_data = sec.stream.getbuffer().tobytes() if sec else b""
        sec = dwarf.debug_str_offsets_sec
        self._str_offsets = sec.stream.getbuffer().tobytes() if sec else b""

    def type_unit_die(self, signature: int):
        """The type a DW_FORM_ref_sig8 names: (its type unit, the DIE's offset), or None."""
        hit = self.type_units.get(signature)
        if hit is None:
            return None
        cu, offset = hit
        unit = self.type_unit_objects.get(cu.cu_offset)
        if unit is None:
            unit = Unit(self, cu)
            prepare_unit(unit)
            # qualified names inside the type unit (namespaces wrap the type)
            walk(unit, unit.first_child, (), [], set(), None)
            self.type_unit_objects[cu.cu_offset] = unit
        return (unit, offset)

    def string(self, table: str, value: int, unit: Unit) -> str:
        if table == "strx":
            width = unit.offset_size
            at = unit.str_offsets_base + value * width
            value = int.from_bytes(self._str_offsets[at:at + width], "little" if self.little else "big")
            table = "str"
        key = (table, value)
        hit = self._strings.get(key)
        if hit is None:
            blob = self.str_data if table == "str" else self.line_str_data
            end = blob.index(b"\0", value)
            hit = blob[value:end].decode("utf-8", "replace")
            self._strings[key] = hit
        return hit
