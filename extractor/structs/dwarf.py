"""The one module that imports pyelftools: struct, class and union layouts out of an ELF's DWARF.

pyelftools opens the ELF, finds and decompresses the sections, applies relocations (probe
objects are ``ET_REL``; x86-64 ones are relocated here from the raw ``.rela`` tables, which is
8x faster), parses CU headers and line-program headers, and names tags, attributes and forms.
Its per-DIE object API is too slow for a whole library (libpython: 851k DIEs, 33 s), so the
DIEs are read by a small decoder over the raw ``.debug_info`` and ``.debug_abbrev`` bytes that:

* walks only the top level of each unit, namespaces and aggregates, and jumps over every other
  subtree (functions, their parameters and locals) through ``DW_AT_sibling`` or, for DIEs
  whose abbreviation has only fixed-size forms, by that size, without building attributes;
* decodes a referenced type's DIE only when a member needs it, caching it per unit;
* skips an aggregate already seen in an earlier unit (same name, kind, size, declaration line
  and encoded subtree size) before decoding its members, since a library's headers repeat the
  same types in every CU; a second key (every member's name and placement) merges the rest;
* reads DWARF 5 type units (``-fdebug-types-section``): types named through
  ``DW_AT_specification`` and referenced by ``DW_FORM_ref_sig8``.

Everything returned is a plain :class:`RawLayout`; ``extractor.structs.records`` turns it into
records. Failures of pyelftools are translated into :class:`DwarfReadError` here.
"""

from __future__ import annotations

import dataclasses
import os
import re
import struct as _struct
from collections.abc import Callable, Iterator
from pathlib import Path

from elftools.common.exceptions import ELFError, ELFParseError, DWARFError
from elftools.dwarf.enums import ENUM_DW_AT, ENUM_DW_FORM, ENUM_DW_TAG
from elftools.elf.elffile import ELFFile

from extractor.errors import ArchdiffError


class DwarfReadError(ArchdiffError):
    """An ELF that cannot be read, or carries no DWARF."""

    def __init__(self, path: str, code: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.code = code
        self.message = message


@dataclasses.dataclass(frozen=True, slots=True)
class RawMember:
    name: str  # "" for an anonymous member, the base's type name for a base sub-object
    type_name: str
    offset: int  # byte offset of the member (of its storage unit, for a bit-field)
    size: int  # bytes (of the storage unit, for a bit-field)
    align: int
    bit_offset: int = 0  # bit-fields: first bit inside the storage unit, LSB first
    bit_size: int = 0  # 0 when not a bit-field
    is_base: bool = False
    is_virtual_base: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class RawLayout:
    kind: str  # "struct" | "class" | "union"
    qualname: str
    size: int
    align: int
    explicit_align: bool  # DW_AT_alignment was present
    members: tuple[RawMember, ...]
    decl_file: str  # as DWARF spells it (absolute or relative to the CU's directory)
    decl_line: int
    language: str  # "c" | "c++"
    packed: bool


# --- forms -------------------------------------------------------------------------------------
# Each form is mapped to a small integer "kind" so the decoder is one flat if-chain.
_FIXED, _ULEB, _SLEB, _CSTR, _BLOCK1, _BLOCK2, _BLOCK4, _BLOCKU, _OFFSET, _ADDR, _PRESENT, \
    _IMPLICIT, _INDIRECT, _REF_ADDR = range(14)

_FORMS: dict[str, tuple[int, int]] = {
    "DW_FORM_addr": (_ADDR, 0),
    "DW_FORM_data1": (_FIXED, 1), "DW_FORM_ref1": (_FIXED, 1), "DW_FORM_flag": (_FIXED, 1),
    "DW_FORM_strx1": (_FIXED, 1), "DW_FORM_addrx1": (_FIXED, 1),
    "DW_FORM_data2": (_FIXED, 2), "DW_FORM_ref2": (_FIXED, 2), "DW_FORM_strx2": (_FIXED, 2),
    "DW_FORM_addrx2": (_FIXED, 2),
    "DW_FORM_strx3": (_FIXED, 3), "DW_FORM_addrx3": (_FIXED, 3),
    "DW_FORM_data4": (_FIXED, 4), "DW_FORM_ref4": (_FIXED, 4), "DW_FORM_strx4": (_FIXED, 4),
    "DW_FORM_addrx4": (_FIXED, 4), "DW_FORM_ref_sup4": (_FIXED, 4),
    "DW_FORM_data8": (_FIXED, 8), "DW_FORM_ref8": (_FIXED, 8), "DW_FORM_ref_sig8": (_FIXED, 8),
    "DW_FORM_ref_sup8": (_FIXED, 8),
    "DW_FORM_data16": (_FIXED, 16),
    "DW_FORM_sdata": (_SLEB, 0),
    "DW_FORM_udata": (_ULEB, 0), "DW_FORM_ref_udata": (_ULEB, 0), "DW_FORM_strx": (_ULEB, 0),
    "DW_FORM_addrx": (_ULEB, 0), "DW_FORM_loclistx": (_ULEB, 0), "DW_FORM_rnglistx": (_ULEB, 0),
    "DW_FORM_GNU_addr_index": (_ULEB, 0), "DW_FORM_GNU_str_index": (_ULEB, 0),
    "DW_FORM_string": (_CSTR, 0),
    "DW_FORM_block1": (_BLOCK1, 0), "DW_FORM_block2": (_BLOCK2, 0), "DW_FORM_block4": (_BLOCK4, 0),
    "DW_FORM_block": (_BLOCKU, 0), "DW_FORM_exprloc": (_BLOCKU, 0),
    "DW_FORM_strp": (_OFFSET, 0), "DW_FORM_line_strp": (_OFFSET, 0),
    "DW_FORM_sec_offset": (_OFFSET, 0), "DW_FORM_GNU_ref_alt": (_OFFSET, 0),
    "DW_FORM_GNU_strp_alt": (_OFFSET, 0), "DW_FORM_strp_sup": (_OFFSET, 0),
    "DW_FORM_ref_addr": (_REF_ADDR, 0),
    "DW_FORM_flag_present": (_PRESENT, 0),
    "DW_FORM_implicit_const": (_IMPLICIT, 0),
    "DW_FORM_indirect": (_INDIRECT, 0),
}
_CU_REFS = {"DW_FORM_ref1", "DW_FORM_ref2", "DW_FORM_ref4", "DW_FORM_ref8", "DW_FORM_ref_udata"}
# how value() reads a form's integer: a string table offset or index, or a type signature
_STR_FORMS = {"DW_FORM_ref_sig8": "sig8", "DW_FORM_strp": "str", "DW_FORM_line_strp": "line_str",
              "DW_FORM_strx": "strx", "DW_FORM_strx1": "strx", "DW_FORM_strx2": "strx",
              "DW_FORM_strx3": "strx", "DW_FORM_strx4": "strx"}

# Attributes kept; everything else is skipped without being stored.
_KEEP = {
    "DW_AT_name": "name", "DW_AT_byte_size": "byte_size", "DW_AT_type": "type",
    "DW_AT_data_member_location": "loc", "DW_AT_data_bit_offset": "data_bit_offset",
    "DW_AT_bit_offset": "bit_offset", "DW_AT_bit_size": "bit_size",
    "DW_AT_declaration": "declaration", "DW_AT_decl_file": "decl_file",
    "DW_AT_decl_line": "decl_line", "DW_AT_alignment": "alignment", "DW_AT_sibling": "sibling",
    "DW_AT_upper_bound": "upper_bound", "DW_AT_count": "count", "DW_AT_encoding": "encoding",
    "DW_AT_external": "external", "DW_AT_virtuality": "virtuality",
    "DW_AT_language": "language", "DW_AT_comp_dir": "comp_dir",
    "DW_AT_str_offsets_base": "str_offsets_base", "DW_AT_signature": "signature",
    "DW_AT_containing_type": "containing_type", "DW_AT_specification": "specification",
    "DW_AT_stmt_list": "stmt_list",
}

_AGGREGATES = {"DW_TAG_structure_type": "struct", "DW_TAG_class_type": "class",
               "DW_TAG_union_type": "union"}
_NAMED_TYPES = {"DW_TAG_typedef", "DW_TAG_enumeration_type", "DW_TAG_base_type",
                "DW_TAG_unspecified_type", *_AGGREGATES}
_C_LANGS = {0x1, 0x2, 0xC, 0x1D, 0x2C, 0x2D}  # C89, C, C99, C11, C17, ... (DW_LANG_*)


_DECLARATOR = re.compile(r"\((\*+|&+)\)")


class _Abbrev:
    __slots__ = ("tag", "children", "ops")

    def __init__(self, tag: str, children: bool, ops: tuple) -> None:
        self.tag = tag
        self.children = children
        self.ops = ops  # ((key or None, kind, size_or_const, string_table_or_None, is_cu_ref), ...)


_TAG_NAMES = {v: k for k, v in ENUM_DW_TAG.items()}
_AT_NAMES = {v: k for k, v in ENUM_DW_AT.items()}
_FORM_NAMES = {v: k for k, v in ENUM_DW_FORM.items()}


def _compile_abbrevs(blob: bytes, offset: int) -> dict[int, _Abbrev]:
    """One abbreviation table, read straight from ``.debug_abbrev`` (pyelftools' construct
    parser took longer than the whole DIE walk), with names from pyelftools' enum tables."""
    out = {}
    pos = offset
    while True:
        code, pos = _uleb(blob, pos)
        if code == 0:
            return out
        tag, pos = _uleb(blob, pos)
        children = blob[pos] == 1
        pos += 1
        ops = []
        while True:
            name, pos = _uleb(blob, pos)
            form, pos = _uleb(blob, pos)
            if name == 0 and form == 0:
                break
            form_name = _FORM_NAMES.get(form, "")
            kind, size = _FORMS.get(form_name, (None, 0))
            if kind is None:
                raise DWARFError(f"unsupported DWARF form 0x{form:x}")
            if kind == _IMPLICIT:
                size, pos = _sleb(blob, pos)
            key = _KEEP.get(_AT_NAMES.get(name, ""))
            ops.append((key, kind, size, _STR_FORMS.get(form_name), form_name in _CU_REFS))
        out[code] = _Abbrev(_TAG_NAMES.get(tag, f"DW_TAG_0x{tag:x}"), children, tuple(ops))


def _sleb(data: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            if b & 0x40:
                value -= 1 << shift
            return value, pos


class _Unit:
    """One compile unit's raw bytes, abbreviations and decoded-DIE cache."""

    def __init__(self, reader: "_Reader", cu) -> None:
        self.reader = reader
        self.cu = cu
        header = cu.header
        self.offset = cu.cu_offset
        self.end = cu.cu_offset + cu.size
        self.address_size = header["address_size"]
        self.version = header["version"]
        self.offset_size = 8 if cu.dwarf_format() == 64 else 4
        key = header["debug_abbrev_offset"]
        abbrevs = reader.abbrev_cache.get(key)
        if abbrevs is None:
            abbrevs = _compile_abbrevs(reader.abbrev_data, key)
            reader.abbrev_cache[key] = abbrevs
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
                if kind == _FIXED:
                    width = size
                elif kind == _OFFSET:
                    width = self.offset_size
                elif kind in (_PRESENT, _IMPLICIT):
                    width = 0
                elif kind == _ADDR:
                    width = self.address_size
                elif kind == _REF_ADDR:
                    width = ref_addr
                else:
                    at = None
                    break
                if key == "sibling" and kind == _FIXED and code not in slots:
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
            if kind == _FIXED:
                if key is not None:
                    attrs[key] = (int.from_bytes(data[pos:pos + size], "little" if little else "big"),
                                  strtab, curef)
                pos += size
            elif kind == _ULEB or kind == _SLEB:
                value, shift = 0, 0
                while True:
                    b = data[pos]
                    pos += 1
                    value |= (b & 0x7F) << shift
                    shift += 7
                    if b < 0x80:
                        break
                if kind == _SLEB and b & 0x40:
                    value -= 1 << shift
                if key is not None:
                    attrs[key] = (value, strtab, curef)
            elif kind == _OFFSET:
                if key is not None:
                    attrs[key] = (int.from_bytes(data[pos:pos + self.offset_size],
                                                 "little" if little else "big"), strtab, False)
                pos += self.offset_size
            elif kind == _PRESENT:
                if key is not None:
                    attrs[key] = (1, None, False)
            elif kind == _CSTR:
                end = data.index(b"\0", pos)
                if key is not None:
                    attrs[key] = (data[pos:end].decode("utf-8", "replace"), None, False)
                pos = end + 1
            elif kind == _IMPLICIT:
                if key is not None:
                    attrs[key] = (size, None, False)
            elif kind == _ADDR:
                pos += self.address_size
            elif kind == _REF_ADDR:
                n = self.address_size if self.version == 2 else self.offset_size
                if key is not None:
                    attrs[key] = (int.from_bytes(data[pos:pos + n], "little" if little else "big")
                                  - self.offset, None, True)  # stored CU-relative like the rest
                pos += n
            elif kind in (_BLOCK1, _BLOCK2, _BLOCK4, _BLOCKU):
                if kind == _BLOCKU:
                    n, shift = 0, 0
                    while True:
                        b = data[pos]
                        pos += 1
                        n |= (b & 0x7F) << shift
                        shift += 7
                        if b < 0x80:
                            break
                else:
                    width = {_BLOCK1: 1, _BLOCK2: 2, _BLOCK4: 4}[kind]
                    n = int.from_bytes(data[pos:pos + width], "little" if little else "big")
                    pos += width
                if key is not None:
                    attrs[key] = (bytes(data[pos:pos + n]), "block", False)
                pos += n
            else:  # _INDIRECT: rare enough to be unsupported rather than slow
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
        if strtab == "sig8":
            return self.reader.type_unit_die(value)  # (unit, offset) in a type unit, or None
        return self.reader.string(strtab, value, self)

    def skip_children(self, pos: int) -> int:
        """Offset after the null entry that ends the children list starting at ``pos``."""
        while True:
            if not self.offset < pos < self.end:
                raise DWARFError(f"DIE walk left its unit at 0x{pos:x}")
            abbrev, attrs, after = self.decode(pos)
            if abbrev is None:
                return after
            if abbrev.children:
                sibling = attrs.get("sibling")
                after = sibling[0] + self.offset if sibling else self.skip_children(after)
            pos = after

    def die(self, offset: int):
        hit = self.cache.get(offset)
        if hit is None:
            abbrev, attrs, after = self.decode(offset)
            hit = (abbrev, attrs, after)
            self.cache[offset] = hit
        return hit

    def children(self, offset: int) -> Iterator[tuple[int, _Abbrev, dict]]:
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
                sibling = attrs.get("sibling")
                after = sibling[0] + self.offset if sibling else self.skip_children(after)
            pos = after

    def file_name(self, index: int) -> str:
        if self._files is None:
            root = self.cache.get(self.cu.cu_die_offset)
            stmt_list = root[1].get("stmt_list") if root else None
            try:
                self._files = self.reader.read_file_table(stmt_list[0]) if stmt_list else []
            except (IndexError, ValueError, KeyError, DWARFError):
                self._files = self.reader.file_table(self.cu)  # pyelftools' general parser
        files = self._files
        if self.version < 5:
            index -= 1
        return files[index] if 0 <= index < len(files) else ""


class _Reader:
    def __init__(self, dwarf, little: bool) -> None:
        self.dwarf = dwarf
        self.little = little
        self.data = dwarf.debug_info_sec.stream.getbuffer().tobytes()
        self.abbrev_cache: dict[int, dict[int, _Abbrev]] = {}
        self.type_units: dict[int, tuple] = {}  # signature -> (CU, absolute DIE offset)
        self.type_unit_objects: dict[int, _Unit] = {}
        self.abbrev_data = dwarf.debug_abbrev_sec.stream.getbuffer().tobytes()
        self._strings: dict[tuple[str, int], str] = {}
        sec = dwarf.debug_str_sec
        self._str = sec.stream.getbuffer().tobytes() if sec else b""
        sec = dwarf.debug_line_str_sec
        self._line_str = sec.stream.getbuffer().tobytes() if sec else b""
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
            unit = _Unit(self, cu)
            _prepare_unit(unit)
            # qualified names inside the type unit (namespaces wrap the type)
            _walk(unit, unit.first_child, (), [], set(), None)
            self.type_unit_objects[cu.cu_offset] = unit
        return (unit, offset)

    def string(self, table: str, value: int, unit: _Unit) -> str:
        if table == "strx":
            width = unit.offset_size
            at = unit.str_offsets_base + value * width
            value = int.from_bytes(self._str_offsets[at:at + width], "little" if self.little else "big")
            table = "str"
        key = (table, value)
        hit = self._strings.get(key)
        if hit is None:
            blob = self._str if table == "str" else self._line_str
            end = blob.index(b"\0", value)
            hit = blob[value:end].decode("utf-8", "replace")
            self._strings[key] = hit
        return hit

    def read_file_table(self, offset: int) -> list[str]:
        """The file names of the line-program header at ``offset`` in ``.debug_line`` (DWARF 2
        to 5), read directly: pyelftools' construct parser of these headers was a third of
        the time on libpython. Names are joined to their directory as pyelftools would."""
        data = self.line_data
        order = "little" if self.little else "big"
        pos = offset
        length = int.from_bytes(data[pos:pos + 4], order)
        pos += 4
        offset_size = 4
        if length == 0xFFFFFFFF:
            offset_size = 8
            pos += 8
        version = int.from_bytes(data[pos:pos + 2], order)
        pos += 2
        if version >= 5:
            address_size = data[pos]
            pos += 2  # address_size, segment_selector_size
        else:
            address_size = 8
        pos += offset_size  # header_length
        pos += 1 + (1 if version >= 4 else 0) + 3  # min_inst_length, max_ops, is_stmt, base, range
        opcode_base = data[pos]
        pos += 1 + (opcode_base - 1)
        if version < 5:
            dirs = []
            while data[pos]:
                end = data.index(b"\0", pos)
                dirs.append(data[pos:end].decode("utf-8", "replace"))
                pos = end + 1
            pos += 1
            names = []
            while data[pos]:
                end = data.index(b"\0", pos)
                name = data[pos:end].decode("utf-8", "replace")
                index, pos = _uleb(data, end + 1)
                _mtime, pos = _uleb(data, pos)
                _size, pos = _uleb(data, pos)
                base = dirs[index - 1] if 0 < index <= len(dirs) else ""
                names.append(name if os.path.isabs(name) or not base else f"{base}/{name}")
            return names

        def entries(pos):
            count = data[pos]
            pos += 1
            formats = []
            for _ in range(count):
                content, pos = _uleb(data, pos)
                form, pos = _uleb(data, pos)
                formats.append((content, _FORM_NAMES.get(form, "")))
            n, pos = _uleb(data, pos)
            rows = []
            for _ in range(n):
                row = {}
                for content, form in formats:
                    value, pos = self._line_value(data, pos, form, offset_size, address_size)
                    row[content] = value
                rows.append(row)
            return rows, pos

        dir_rows, pos = entries(pos)
        file_rows, pos = entries(pos)
        dirs = [str(r.get(1, "")) for r in dir_rows]  # DW_LNCT_path
        names = []
        for row in file_rows:
            name = str(row.get(1, ""))
            index = row.get(2, 0)  # DW_LNCT_directory_index
            base = dirs[index] if isinstance(index, int) and 0 <= index < len(dirs) else ""
            names.append(name if os.path.isabs(name) or not base else f"{base}/{name}")
        return names

    def _line_value(self, data, pos, form, offset_size, address_size):
        order = "little" if self.little else "big"
        if form in ("DW_FORM_line_strp", "DW_FORM_strp"):
            at = int.from_bytes(data[pos:pos + offset_size], order)
            blob = self._line_str if form == "DW_FORM_line_strp" else self._str
            return blob[at:blob.index(b"\0", at)].decode("utf-8", "replace"), pos + offset_size
        if form == "DW_FORM_string":
            end = data.index(b"\0", pos)
            return data[pos:end].decode("utf-8", "replace"), end + 1
        if form in ("DW_FORM_udata",):
            return _uleb(data, pos)
        widths = {"DW_FORM_data1": 1, "DW_FORM_data2": 2, "DW_FORM_data4": 4,
                  "DW_FORM_data8": 8, "DW_FORM_data16": 16}
        if form in widths:
            width = widths[form]
            return int.from_bytes(data[pos:pos + width], order), pos + width
        if form == "DW_FORM_block":
            n, pos = _uleb(data, pos)
            return None, pos + n
        raise DWARFError(f"unsupported line-table form {form or '?'}")

    def file_table(self, cu) -> list[str]:
        program = self.dwarf.line_program_for_CU(cu)
        if program is None:
            return []
        header = program.header
        dirs = [_text(d) for d in header["include_directory"]]
        version = header["version"]
        names = []
        for entry in header["file_entry"]:
            name = _text(entry.name)
            index = entry.dir_index
            if version < 5:
                base = dirs[index - 1] if 0 < index <= len(dirs) else ""
            else:
                base = dirs[index] if 0 <= index < len(dirs) else ""
            names.append(name if os.path.isabs(name) or not base else f"{base}/{name}")
        return names


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def read_layouts(path: Path | str, decl_filter: Callable[[str], bool] | None = None
                 ) -> tuple[RawLayout, ...]:
    """Every complete struct/class/union in ``path``'s DWARF, merged across compile units.

    ``decl_filter`` (the declaring file as DWARF spells it -> keep?) lets a probe skip the
    thousands of system-header types before their members are spelled.
    """
    label = str(path)
    try:
        with open(path, "rb") as stream:
            head = stream.read(4)
            if head != b"\x7fELF":
                raise DwarfReadError(label, "not-elf", "not an ELF file")
            stream.seek(0)
            try:
                elf = ELFFile(stream)
                if not elf.has_dwarf_info(strict=True):
                    raise DwarfReadError(label, "no-dwarf",
                                         "ELF has no DWARF debug info (.debug_info); rebuild with -g")
                dwarf = _dwarf_info(elf)
                reader = _Reader(dwarf, elf.little_endian)
                return _read_all(reader, decl_filter)
            except DwarfReadError:
                raise
            except (ELFError, ELFParseError, DWARFError, ValueError, LookupError, AssertionError,
                    _struct.error, TypeError, AttributeError, EOFError, ArithmeticError,
                    RecursionError) as err:
                # a corrupt file can break pyelftools or this decoder almost anywhere; each
                # of these means "this file's DWARF cannot be read", never a crash
                message = str(err).splitlines()[0] if str(err) else type(err).__name__
                raise DwarfReadError(label, "corrupt-elf",
                                     f"cannot read ELF/DWARF ({type(err).__name__}: {message[:160]}); "
                                     "the file is truncated or corrupt") from err
    except OSError as err:
        raise DwarfReadError(label, "unreadable", f"cannot open: {err.strerror or err}") from err


# x86-64 relocation types seen in the DWARF of relocatable objects: R_X86_64_64, _32, _32S
_X86_64_RELOCS = {1: 8, 10: 4, 11: 4}
_RELOCATED = (".debug_info", ".debug_line", ".debug_str_offsets")


def _dwarf_info(elf):
    """DWARF of ``elf``, relocated.

    pyelftools applies relocations one construct-parsed entry at a time: 5.8 of 6 s on an nvcc
    probe object. For x86-64 ``ET_REL`` files the three sections this reader uses are relocated
    here from the raw ``.rela`` tables instead; anything else takes pyelftools' general path.
    """
    if elf["e_type"] != "ET_REL":
        return elf.get_dwarf_info(relocate_dwarf_sections=True, follow_links=False)
    if elf["e_machine"] != "EM_X86_64" or not elf.little_endian or elf.elfclass != 64 or \
            elf.has_section(".zdebug_info"):
        return elf.get_dwarf_info(relocate_dwarf_sections=True, follow_links=False)
    dwarf = elf.get_dwarf_info(relocate_dwarf_sections=False, follow_links=False)
    targets = {".debug_info": dwarf.debug_info_sec, ".debug_line": dwarf.debug_line_sec,
               ".debug_str_offsets": dwarf.debug_str_offsets_sec}
    symbol_values: dict[tuple[int, int], int] = {}
    for name in _RELOCATED:
        target = targets[name]
        if target is None:
            continue
        rel = elf.get_section_by_name(".rela" + name)
        if rel is None:
            if elf.get_section_by_name(".rel" + name) is not None:
                return elf.get_dwarf_info(relocate_dwarf_sections=True, follow_links=False)
            continue
        symtab_index = rel["sh_link"]
        symtab = None
        buffer = bytearray(target.stream.getvalue())
        for r_offset, r_info, r_addend in _struct.iter_unpack("<QQq", rel.data()):
            width = _X86_64_RELOCS.get(r_info & 0xFFFFFFFF)
            if width is None:
                return elf.get_dwarf_info(relocate_dwarf_sections=True, follow_links=False)
            key = (symtab_index, r_info >> 32)
            value = symbol_values.get(key)
            if value is None:
                if symtab is None:
                    symtab = elf.get_section(symtab_index)
                value = symtab.get_symbol(r_info >> 32)["st_value"]
                symbol_values[key] = value
            result = (value + r_addend) & ((1 << (8 * width)) - 1)
            buffer[r_offset:r_offset + width] = result.to_bytes(width, "little")
        target.stream.seek(0)
        target.stream.write(buffer)
        target.stream.seek(0)
    return dwarf


def _prepare_unit(unit: _Unit) -> bool:
    """Decode the unit's root DIE; False when the unit is empty."""
    cu = unit.cu
    abbrev, attrs, pos = unit.decode(cu.cu_die_offset)
    if abbrev is None or not abbrev.children:
        unit.first_child = None
        return False
    unit.cache[cu.cu_die_offset] = (abbrev, attrs, pos)
    if "str_offsets_base" in attrs:
        unit.str_offsets_base = attrs["str_offsets_base"][0]
    lang = unit.value(attrs, "language", 0)
    unit.language = "c" if lang in _C_LANGS else "c++"
    unit.first_child = pos
    return True


def _read_all(reader: _Reader, decl_filter) -> tuple[RawLayout, ...]:
    seen: set[tuple] = set()  # full keys: name, size, line and every member's placement
    seen_quick: set[tuple] = set()  # name, kind, size, line and the encoded subtree length
    out: list[RawLayout] = []
    units = []
    for cu in reader.dwarf.iter_CUs():
        unit_type = cu.header.get("unit_type", "DW_UT_compile")
        if unit_type == "DW_UT_type":  # -fdebug-types-section: types live in type units
            reader.type_units[cu.header["type_signature"]] = (
                cu, cu.cu_offset + cu.header["type_offset"])
        if unit_type in ("DW_UT_compile", "DW_UT_partial", "DW_UT_type"):
            units.append(cu)
    for cu in units:
        unit = reader.type_unit_objects.get(cu.cu_offset) or _Unit(reader, cu)
        if not _prepare_unit(unit):
            continue
        candidates: list[tuple[int, str, str, list]] = []
        _walk(unit, unit.first_child, (), candidates, seen_quick, None)
        for offset, kind, qualname, members in candidates:
            if members is None:  # an anonymous aggregate: kept only when a typedef names it
                qualname = unit.typedef_names.get(offset, "")
                if not qualname:
                    continue
                attrs = unit.die(offset)[1]
                sibling = attrs.get("sibling")
                quick = (qualname, kind, attrs["byte_size"][0], unit.value(attrs, "decl_line", 0),
                         sibling[0] + unit.offset - offset if sibling else -1)
                if sibling is not None and quick in seen_quick:
                    continue
                seen_quick.add(quick)
                members = [(o, child.tag, a) for o, child, a in unit.children(offset)
                           if child.tag in _MEMBER_TAGS]
            if decl_filter is not None:
                attrs = unit.die(offset)[1]
                index = unit.value(attrs, "decl_file", None)
                if index is None or not decl_filter(unit.file_name(index)):
                    continue
            layout = _build(unit, offset, kind, qualname, members, seen)
            if layout is not None:
                out.append(layout)
        if cu.cu_offset not in reader.type_unit_objects:
            # release the unit's caches now: memory stays flat across thousands of CUs
            unit.cache.clear()
            unit.qualnames.clear()
            unit.typedef_names.clear()
            unit.memos.clear()
    out.sort(key=lambda r: (r.qualname, r.size, r.decl_file, r.decl_line))
    return tuple(out)


_MEMBER_TAGS = {"DW_TAG_member", "DW_TAG_inheritance"}


def _walk(unit: _Unit, pos: int, scope: tuple[str, ...], candidates: list, seen_quick: set,
          members: list | None, in_aggregate: bool = False) -> int:
    """Collect aggregates under a children list starting at ``pos``; return the offset after it.

    Remembers the qualified names of named types (for spelling member types), collects the
    member DIEs of aggregates that are new into ``members``, and jumps over everything else --
    through DW_AT_sibling, or by the abbreviation's fixed size -- without building attributes.
    """
    is_c = unit.language == "c"
    base = unit.offset
    data = unit.reader.data
    fixed = unit.fixed_sizes
    siblings = unit.sibling_slots
    abbrevs = unit.abbrevs
    end = unit.end
    start = pos - 1
    while True:
        if not start < pos < end:  # a corrupt sibling would loop forever or leave the unit
            raise DWARFError(f"DIE walk left its unit at 0x{pos:x}")
        start = pos
        b = data[pos]
        if b == 0:
            return pos + 1
        if b < 0x80:
            code, after_code = b, pos + 1
        else:
            code, after_code = _uleb(data, pos)
        abbrev = abbrevs[code]
        tag = abbrev.tag
        if tag in _NAMED_TYPES or tag == "DW_TAG_namespace":
            abbrev, attrs, after = unit.decode(start)
            name = unit.value(attrs, "name", "")
            if tag == "DW_TAG_namespace":
                inner = scope + (name or "(anonymous namespace)",)
                pos = _walk(unit, after, inner, candidates, seen_quick, None) \
                    if abbrev.children else after
                continue
            unit.cache[start] = (abbrev, attrs, after)
            if name and "specification" not in attrs:
                unit.qualnames[start] = name if is_c or not scope else "::".join(scope + (name,))
            elif "specification" in attrs:
                # a type unit defines the type at its top level and names it through a
                # declaration inside the namespaces (DW_AT_specification)
                spec = unit.value(attrs, "specification")
                qual = unit.qualnames.get(spec, "") if isinstance(spec, int) else ""
                if qual:
                    unit.qualnames[start] = qual
                    name = qual.rsplit("::", 1)[-1]
                    spec_attrs = unit.die(spec)[1]
                    for key in ("decl_file", "decl_line"):
                        if key not in attrs and key in spec_attrs:
                            attrs[key] = spec_attrs[key]
            kind = _AGGREGATES.get(tag)
            if tag == "DW_TAG_typedef" and name and "type" in attrs:
                # ``typedef struct {...} name;``: the anonymous struct takes the typedef's name
                unit.typedef_names.setdefault(unit.value(attrs, "type"), unit.qualnames[start])
            if kind is not None and not name and not in_aggregate and \
                    "declaration" not in attrs and "byte_size" in attrs:
                candidates.append((start, kind, "", None))  # named (or dropped) after the walk
            if kind is None or not abbrev.children:
                if kind is not None and name and "declaration" not in attrs and \
                        "byte_size" in attrs:
                    candidates.append((start, kind, unit.qualnames[start], []))
                pos = (attrs["sibling"][0] + base if "sibling" in attrs else
                       unit.skip_children(after)) if abbrev.children else after
                continue
            qual = unit.qualnames.get(start, "")
            collect = None
            if name and "declaration" not in attrs and "byte_size" in attrs:
                # a library's headers repeat the same types in every CU: a type already seen
                # (same name, size, line and encoded size of its whole subtree) is skipped
                # before its members are decoded
                sibling = attrs.get("sibling")
                quick = (qual, kind, attrs["byte_size"][0], unit.value(attrs, "decl_line", 0),
                         sibling[0] + base - start if sibling else -1)
                if sibling is None or quick not in seen_quick:
                    if sibling is not None:
                        seen_quick.add(quick)
                    collect = []
                    candidates.append((start, kind, qual, collect))
            if collect is None and is_c and "sibling" in attrs:
                pos = attrs["sibling"][0] + base  # C scopes nothing inside an aggregate
                continue
            inner = scope if is_c else scope + (name or "(anonymous)",)
            pos = _walk(unit, after, inner, candidates, seen_quick, collect, True)
            continue
        if members is not None and tag in _MEMBER_TAGS:
            abbrev, attrs, after = unit.decode(start)
            members.append((start, tag, attrs))
            pos = (attrs["sibling"][0] + base if "sibling" in attrs else
                   unit.skip_children(after)) if abbrev.children else after
            continue
        # anything else: jump without decoding attributes when the abbreviation allows it
        if abbrev.children:
            slot = siblings.get(code)
            if slot is not None:
                at = after_code + slot[0]
                pos = int.from_bytes(data[at:at + slot[1]], "little" if unit.reader.little
                                     else "big") + base
                continue
        else:
            size = fixed.get(code)
            if size is not None:
                pos = after_code + size
                continue
        abbrev, attrs, after = unit.decode(start)
        if abbrev.children:
            pos = attrs["sibling"][0] + base if "sibling" in attrs else unit.skip_children(after)
        else:
            pos = after


def _uleb(data: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def _build(unit: _Unit, offset: int, kind: str, qualname: str, raw_members: list,
           seen: set) -> RawLayout | None:
    if not qualname:
        return None  # anonymous aggregates are shown inside the aggregate that holds them
    abbrev, attrs, _ = unit.die(offset)
    size = unit.value(attrs, "byte_size", 0)
    raw_members = [(o, tag, a) for o, tag, a in raw_members if not (
        "declaration" in a or ("external" in a and tag == "DW_TAG_member"))]  # static members
    key = (qualname, size, unit.value(attrs, "decl_line", 0), tuple(
        (tag, unit.value(a, "name", ""), _raw_loc(unit, a), unit.value(a, "bit_size", 0),
         unit.value(a, "data_bit_offset", -1), unit.value(a, "bit_offset", -1))
        for _o, tag, a in raw_members))
    if key in seen:
        return None
    seen.add(key)
    members = []
    types = _Types(unit)
    for _o, tag, a in raw_members:
        members.append(_member(unit, types, tag, a))
    decl_file = unit.file_name(unit.value(attrs, "decl_file", 0)) if "decl_file" in attrs else ""
    explicit = unit.value(attrs, "alignment", 0)
    align, packed = _aggregate_align(members, size, kind)
    if explicit:
        align = explicit
    return RawLayout(kind=kind, qualname=qualname, size=size, align=align,
                     explicit_align=bool(explicit), members=tuple(members), decl_file=decl_file,
                     decl_line=unit.value(attrs, "decl_line", 0), language=unit.language,
                     packed=packed)


def _raw_loc(unit: _Unit, attrs: dict) -> int:
    loc = unit.value(attrs, "loc", None)
    if loc is None:
        return 0  # union members, and the first member in some producers
    if isinstance(loc, bytes):
        return _expr_offset(loc)
    return loc


def _expr_offset(expr: bytes) -> int:
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


def _aggregate_align(members: list[RawMember], size: int, kind: str) -> tuple[int, bool]:
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


def _member(unit: _Unit, types: "_Types", tag: str, attrs: dict) -> RawMember:
    type_off = unit.value(attrs, "type")
    type_name = types.spell(type_off)
    tsize = types.size(type_off)
    # alignas on a member is the member's DW_AT_alignment; it raises the aggregate's alignment
    talign = unit.value(attrs, "alignment", 0) or types.align(type_off)
    if tag == "DW_TAG_inheritance":
        virtual = unit.value(attrs, "virtuality", 0) != 0
        loc = 0 if virtual else _raw_loc(unit, attrs)
        return RawMember(name=type_name, type_name=type_name, offset=loc, size=tsize,
                         align=talign, is_base=True, is_virtual_base=virtual)
    name = unit.value(attrs, "name", "")
    bit_size = unit.value(attrs, "bit_size", 0)
    if not bit_size:
        return RawMember(name=name, type_name=type_name, offset=_raw_loc(unit, attrs),
                         size=tsize, align=talign)
    storage = unit.value(attrs, "byte_size", 0) or tsize or 1
    if "data_bit_offset" in attrs:
        bitpos = unit.value(attrs, "data_bit_offset")
    else:
        # DWARF 2/3: bit_offset counts from the most significant bit of the storage unit
        # at data_member_location (little-endian targets)
        loc = _raw_loc(unit, attrs)
        big = unit.value(attrs, "bit_offset", 0)
        bitpos = loc * 8 + (storage * 8 - big - bit_size if unit.reader.little else big)
    # pahole reports the storage unit of the member's type size, aligned to that size
    unit_bits = storage * 8
    offset = (bitpos // unit_bits) * storage
    return RawMember(name=name, type_name=type_name, offset=offset, size=storage, align=talign,
                     bit_offset=bitpos - offset * 8, bit_size=bit_size)


class _Types:
    """Spelling, size and alignment of a type DIE, memoised per CU."""

    _QUALIFIERS = {"DW_TAG_const_type": "const", "DW_TAG_volatile_type": "volatile",
                   "DW_TAG_restrict_type": "restrict", "DW_TAG_atomic_type": "_Atomic"}

    def __init__(self, unit: _Unit) -> None:
        self.unit = unit

    def _die(self, off):
        return self.unit.die(off)

    def _memoised(self, kind: str, off, seed, compute):
        """``compute(off)`` once per unit and type; ``seed`` answers while a recursive type is computed."""
        if off is not None and not isinstance(off, tuple):
            off = self._through_signature(off)
        if isinstance(off, tuple):  # a DW_FORM_ref_sig8 type: it lives in a type unit
            return getattr(_Types(off[0]), kind)(off[1])
        memo = _memo(self.unit, kind)
        if off in memo:
            return memo[off]
        memo[off] = seed
        result = compute(off)
        memo[off] = result
        return result

    def spell(self, off: int | None) -> str:
        return self._memoised("spell", off, "?", self._spell)

    def _spell(self, off: int | None) -> str:
        if off is None:
            return "void"
        unit = self.unit
        abbrev, attrs, _ = self._die(off)
        tag = abbrev.tag
        name = unit.value(attrs, "name", "")
        if tag in ("DW_TAG_pointer_type", "DW_TAG_reference_type", "DW_TAG_rvalue_reference_type"):
            mark = {"DW_TAG_pointer_type": "*", "DW_TAG_reference_type": "&"}.get(tag, "&&")
            target = unit.value(attrs, "type")
            if target is not None and self._tag(target) == "DW_TAG_subroutine_type":
                return self._function(target, f"({mark})")
            inner = self.spell(target)
            declarator = _DECLARATOR.search(inner)
            if declarator:  # a pointer to a function pointer: int (**)(void)
                return inner[:declarator.start() + 1] + mark + inner[declarator.start() + 1:]
            return f"{inner} {mark}" if not inner.endswith(("*", "&")) else f"{inner}{mark}"
        if tag in self._QUALIFIERS:
            word = self._QUALIFIERS[tag]
            target = unit.value(attrs, "type")
            inner = self.spell(target)
            if target is not None and self._tag(target) in (
                    "DW_TAG_pointer_type", "DW_TAG_reference_type"):
                return f"{inner} {word}"
            return f"{word} {inner}"
        if tag == "DW_TAG_array_type":
            dims = "".join(f"[{n}]" if n is not None else "[]" for n in self._dims(off))
            inner = self.spell(unit.value(attrs, "type"))
            return f"{inner}{dims}"
        if tag == "DW_TAG_subroutine_type":
            return self._function(off, "")
        if tag == "DW_TAG_ptr_to_member_type":
            cls = self.spell(unit.value(attrs, "containing_type"))
            return f"{self.spell(unit.value(attrs, 'type'))} {cls}::*"
        qual = unit.qualnames.get(off) or name
        if tag in _AGGREGATES or tag == "DW_TAG_enumeration_type":
            if not name:
                word = _AGGREGATES.get(tag, "enum")
                return f"{word} {{...}}"
            if unit.language == "c":
                return f"{_AGGREGATES.get(tag, 'enum')} {qual}"
            return qual
        return qual or "?"

    def _through_signature(self, off: int):
        """A declaration stub that carries DW_AT_signature stands for a type-unit type."""
        attrs = self._die(off)[1]
        if "signature" in attrs:
            target = self.unit.value(attrs, "signature")
            if target is not None:
                return target
        return off

    def _tag(self, off) -> str:
        if off is not None and not isinstance(off, tuple):
            off = self._through_signature(off)
        if isinstance(off, tuple):
            return off[0].die(off[1])[0].tag
        return self._die(off)[0].tag

    def _function(self, off: int, declarator: str) -> str:
        unit = self.unit
        _abbrev, attrs, _ = self._die(off)
        ret = self.spell(unit.value(attrs, "type"))
        params = []
        for _o, child, cattrs in unit.children(off):
            if child.tag == "DW_TAG_formal_parameter":
                params.append(self.spell(unit.value(cattrs, "type")))
            elif child.tag == "DW_TAG_unspecified_parameters":
                params.append("...")
        return f"{ret} {declarator}({', '.join(params) or ('void' if unit.language == 'c' else '')})"

    def _dims(self, off: int) -> list[int | None]:
        unit = self.unit
        dims = []
        for _o, child, cattrs in unit.children(off):
            if child.tag == "DW_TAG_subrange_type":
                if "count" in cattrs:
                    dims.append(unit.value(cattrs, "count"))
                elif "upper_bound" in cattrs:
                    ub = unit.value(cattrs, "upper_bound")
                    dims.append(ub + 1 if isinstance(ub, int) else None)
                else:
                    dims.append(None)
            elif child.tag == "DW_TAG_enumeration_type":
                dims.append(None)
        return dims

    def size(self, off: int | None) -> int:
        return self._memoised("size", off, 0, self._size)

    def _size(self, off: int | None) -> int:
        if off is None:
            return 0
        unit = self.unit
        abbrev, attrs, _ = self._die(off)
        if "byte_size" in attrs:
            return unit.value(attrs, "byte_size")
        tag = abbrev.tag
        if tag in ("DW_TAG_pointer_type", "DW_TAG_reference_type", "DW_TAG_rvalue_reference_type",
                   "DW_TAG_ptr_to_member_type"):
            return unit.address_size
        if tag == "DW_TAG_array_type":
            n = 1
            for d in self._dims(off):
                n *= d or 0
            return n * self.size(unit.value(attrs, "type"))
        if tag in ("DW_TAG_typedef", *self._QUALIFIERS):
            return self.size(unit.value(attrs, "type"))
        return 0

    def align(self, off: int | None) -> int:
        return self._memoised("align", off, 1, self._align)

    def _align(self, off: int | None) -> int:
        if off is None:
            return 1
        unit = self.unit
        abbrev, attrs, _ = self._die(off)
        if "alignment" in attrs:
            return unit.value(attrs, "alignment")
        tag = abbrev.tag
        if tag == "DW_TAG_base_type":
            size = unit.value(attrs, "byte_size", 1) or 1
            if unit.value(attrs, "encoding", 0) == 0x3:  # DW_ATE_complex_float: align of a part
                size //= 2
            return max(1, min(size, 16))
        if tag in ("DW_TAG_pointer_type", "DW_TAG_reference_type", "DW_TAG_rvalue_reference_type",
                   "DW_TAG_ptr_to_member_type"):
            return unit.address_size
        if tag == "DW_TAG_enumeration_type":
            if "type" in attrs:
                return self.align(unit.value(attrs, "type"))
            return max(1, min(unit.value(attrs, "byte_size", 4), 16))
        if tag in ("DW_TAG_array_type", "DW_TAG_typedef", *self._QUALIFIERS):
            return self.align(unit.value(attrs, "type"))
        if tag in _AGGREGATES:
            align = 1
            size = unit.value(attrs, "byte_size", 0)
            packed = False
            for _o, child, cattrs in unit.children(off):
                if child.tag not in ("DW_TAG_member", "DW_TAG_inheritance"):
                    continue
                if "declaration" in cattrs or ("external" in cattrs and child.tag == "DW_TAG_member"):
                    continue
                if child.tag == "DW_TAG_inheritance" and unit.value(cattrs, "virtuality", 0):
                    continue
                a = unit.value(cattrs, "alignment", 0) or self.align(unit.value(cattrs, "type"))
                align = max(align, a)
                if "bit_size" not in cattrs and _raw_loc(unit, cattrs) % a:
                    packed = True
            if packed or (size and size % align):
                return 1
            return align
        return 1


def _memo(unit: _Unit, name: str) -> dict:
    return unit.memos.setdefault(name, {})  # lives and dies with the CU
