"""DIE decoding: one compile unit's raw bytes, its abbreviations, and a decoder over them.

pyelftools' per-DIE object API is too slow for a whole library (libpython: 851k DIEs, 33 s), so
DIEs are decoded here from the raw ``.debug_info`` bytes by the plans :mod:`.abbrev` compiles,
keeping only the attributes listed in :data:`.forms.KEEP`. A decoded DIE's attributes are a
dict of plain values: strings as ``str``, references as absolute ``.debug_info`` offsets, a type
signature as :class:`Signature` (:meth:`Unit.value` resolves it), expressions as ``bytes``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from elftools.common.exceptions import DWARFError

from extractor.structs.dwarf.abbrev import (COOK_LINE_STR, COOK_REF, COOK_SIG8, COOK_STR, COOK_STRX, MEMBER, RUN,
                                            Abbrev, AbbrevTables)
from extractor.structs.dwarf.forms import BLOCK1, BLOCK2, BLOCK4, BLOCKU, CSTR, SLEB, ULEB, uleb
from extractor.structs.dwarf.lines import file_table, read_file_table
from extractor.structs.dwarf.sections import Sections
from extractor.structs.dwarf.units import UnitHeader


class Signature(int):
    """A ``DW_FORM_ref_sig8`` value: the signature of the type unit that holds the type."""

    __slots__ = ()


class TypeUnitLookup(Protocol):
    """Where a ``DW_FORM_ref_sig8`` leads: the walk (a floor above) opens and names type units."""

    def die(self, signature: int) -> tuple[Unit, int] | None: ...


class Unit:
    """One compile unit's raw bytes, abbreviations and decoded-DIE cache."""

    def __init__(self, sections: Sections, header: UnitHeader, type_units: TypeUnitLookup | None = None,
                 abbrev_tables: AbbrevTables | None = None) -> None:
        self.sections = sections
        self.data = sections.data
        self.header = header
        self.type_units = type_units
        self.offset = header.offset
        self.end = header.end
        self.address_size = header.address_size
        self.version = header.version
        self.offset_size = header.offset_size
        shape = (sections.little, self.offset_size, self.address_size,
                 self.address_size if self.version == 2 else self.offset_size)
        tables = abbrev_tables if abbrev_tables is not None else AbbrevTables(sections.abbrev_data)
        self.abbrevs: dict[int, Abbrev] = tables.table(header.abbrev_offset, shape)
        self.str_offsets_base = 8 if self.offset_size == 4 else 16
        self.cache: dict[int, tuple] = {}
        self.qualnames: dict[int, str] = {}
        self.typedef_names: dict[int, str] = {}  # anonymous aggregate offset -> typedef name
        self.memos: dict[str, dict] = {}
        # aggregate offset -> (offset, tag, attributes) of its member and inheritance DIEs: the
        # walk's lists of the aggregates it collects, read here for the others a type needs
        self.member_lists: dict[int, list[tuple[int, str, dict]]] = {}
        self.anonymous: dict[int, str] = {}  # offset -> kind of the anonymous aggregates a typedef may name
        self.language = "c++"
        self.first_child: int | None = None
        self._files: Sequence[str] | None = None

    def decode(self, pos: int, cook: bool = True):
        """``(abbrev, attrs, next_offset)`` of the DIE at ``pos``; ``(None, None, next)`` for the
        null entry that ends a children list. ``cook=False`` leaves strings, references and
        signatures as the numbers the DIE holds (the unit's root, before its string base is known)."""
        data = self.data
        b = data[pos]  # the ULEB abbreviation code, almost always one byte
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
        run = abbrev.run
        if run is not None:  # every form fixed-size: one unpack
            attrs = dict(zip(abbrev.names, run.unpack_from(data, pos)))
            pos += abbrev.size  # type: ignore[operator]
        else:
            attrs = {}
            pos = self._decode_steps(abbrev.steps, attrs, pos)
        if abbrev.consts:
            attrs.update(abbrev.consts)
        if cook and abbrev.cooks:
            self._cook(attrs, abbrev.cooks)
        return abbrev, attrs, pos

    def _decode_steps(self, steps: tuple, attrs: dict, pos: int) -> int:
        data = self.data
        for kind, key, run, names, size in steps:
            if kind == RUN:
                if names:
                    attrs.update(zip(names, run.unpack_from(data, pos)))
                pos += size
            elif kind == CSTR:
                end = data.index(0, pos)
                if key is not None:
                    attrs[key] = data[pos:end].decode("utf-8", "replace")
                pos = end + 1
            elif kind == ULEB or kind == SLEB or kind == BLOCKU:
                value, shift = 0, 0
                while True:
                    b = data[pos]
                    pos += 1
                    value |= (b & 0x7F) << shift
                    shift += 7
                    if b < 0x80:
                        break
                if kind == BLOCKU:
                    if key is not None:
                        attrs[key] = data[pos:pos + value]
                    pos += value
                elif key is not None:
                    attrs[key] = value - (1 << shift) if kind == SLEB and b & 0x40 else value
            elif kind == BLOCK1 or kind == BLOCK2 or kind == BLOCK4:
                width = 1 if kind == BLOCK1 else 2 if kind == BLOCK2 else 4
                n = int.from_bytes(data[pos:pos + width], "little" if self.sections.little else "big")
                pos += width
                if key is not None:
                    attrs[key] = data[pos:pos + n]
                pos += n
            else:  # INDIRECT: rare enough to be unsupported rather than slow
                raise DWARFError("DW_FORM_indirect is not supported")
        return pos

    def _cook(self, attrs: dict, cooks: tuple) -> None:
        sections = self.sections
        for key, how in cooks:
            value = attrs[key]
            if how == COOK_STR:
                attrs[key] = sections.strings.get(value) or sections.string(value)
            elif how == COOK_REF:
                attrs[key] = value + self.offset
            elif how == COOK_STRX:
                attrs[key] = sections.string(sections.string_offset(value, self.offset_size,
                                                                    self.str_offsets_base))
            elif how == COOK_LINE_STR:
                attrs[key] = sections.line_string(value)
            elif how == COOK_SIG8:
                attrs[key] = Signature(value)
            else:  # COOK_UINT: a 3- or 16-byte form read as bytes
                attrs[key] = int.from_bytes(value, "little" if sections.little else "big")

    def value(self, attrs: dict, key: str, default=None):
        """``attrs[key]`` (or ``default``), a type signature resolved to ``(type unit, offset)``
        (None when no type unit has it)."""
        value = attrs.get(key, default)
        if value.__class__ is Signature:
            return self.type_units.die(value) if self.type_units is not None else None
        return value

    def skip(self, abbrev: Abbrev, pos: int) -> tuple[int, int | None]:
        """(offset after the attributes starting at ``pos``, absolute DW_AT_sibling or None),
        without building them: for a DIE nobody reads."""
        if abbrev.size is not None:
            after = pos + abbrev.size
            at = abbrev.sibling_at
            return after, None if at is None else abbrev.sibling.unpack_from(self.data, pos + at)[0] + self.offset  # type: ignore[union-attr]
        data = self.data
        sibling = None
        for kind, key, _run, _names, size in abbrev.steps:
            if kind == RUN:
                if key is not None:
                    sibling = abbrev.sibling.unpack_from(data, pos + key)[0] + self.offset  # type: ignore[union-attr]
                pos += size
            elif kind == CSTR:
                pos = data.index(0, pos) + 1
            elif kind == ULEB or kind == SLEB or kind == BLOCKU:
                value, shift = 0, 0
                while True:
                    b = data[pos]
                    pos += 1
                    value |= (b & 0x7F) << shift
                    shift += 7
                    if b < 0x80:
                        break
                if kind == BLOCKU:
                    pos += value
            elif kind == BLOCK1 or kind == BLOCK2 or kind == BLOCK4:
                width = 1 if kind == BLOCK1 else 2 if kind == BLOCK2 else 4
                pos += width + int.from_bytes(data[pos:pos + width], "little" if self.sections.little else "big")
            else:
                raise DWARFError("DW_FORM_indirect is not supported")
        return pos, sibling

    def skip_children(self, pos: int) -> int:
        """Offset after the null entry that ends the children list starting at ``pos``."""
        data = self.data
        abbrevs = self.abbrevs
        while True:
            if not self.offset < pos < self.end:
                raise DWARFError(f"DIE walk left its unit at 0x{pos:x}")
            b = data[pos]
            if b == 0:
                return pos + 1
            code, after = (b, pos + 1) if b < 0x80 else uleb(data, pos)
            abbrev = abbrevs[code]
            pos = self._skipped(pos, abbrev, after)

    def _skipped(self, pos: int, abbrev: Abbrev, after: int) -> int:
        """Where the DIE at ``pos`` (of ``abbrev``, its attributes starting at ``after``) ends, read
        without decoding: through its sibling link when it has one (never backwards), else over
        its children."""
        after, sibling = self.skip(abbrev, after)
        if not abbrev.children:
            return after
        if sibling is None:
            return self.skip_children(after)
        if sibling < after:
            raise DWARFError(f"DW_AT_sibling of the DIE at 0x{pos:x} points back to 0x{sibling:x}")
        return sibling

    def _next_sibling(self, pos: int, attrs: dict, after: int) -> int:
        """Where the DIE at ``pos`` (with children, attributes ending at ``after``) ends.

        A sibling link must point past the DIE's own attributes: one that points back (at the
        DIE itself, or before it) would make every walk over this list go round for ever."""
        sibling = attrs.get("sibling")
        if sibling is None:
            return self.skip_children(after)
        target = sibling
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

    def members(self, offset: int) -> list[tuple[int, str, dict]]:
        """``(offset, tag, attributes)`` of the member and inheritance DIEs directly under the
        aggregate at ``offset``, in order: only these are decoded (a class's methods, nested
        types and their parameters are jumped over), once per unit."""
        hit = self.member_lists.get(offset)
        if hit is None:
            hit = self._read_members(offset)
            self.member_lists[offset] = hit
        return hit

    def _read_members(self, offset: int) -> list[tuple[int, str, dict]]:
        abbrev, _attrs, pos = self.die(offset)
        out: list[tuple[int, str, dict]] = []
        if not abbrev.children:
            return out
        data = self.data
        abbrevs = self.abbrevs
        while True:
            if not self.offset < pos < self.end:
                raise DWARFError(f"DIE walk left its unit at 0x{pos:x}")
            b = data[pos]
            if b == 0:
                return out
            code, after = (b, pos + 1) if b < 0x80 else uleb(data, pos)
            child = abbrevs[code]
            if child.family == MEMBER:
                child, attrs, after = self.decode(pos)
                out.append((pos, child.tag, attrs))
                if child.children:
                    after = self._next_sibling(pos, attrs, after)
            else:
                after = self._skipped(pos, child, after)
            pos = after

    def file_name(self, index: int) -> str:
        if self._files is None:
            root = self.cache.get(self.header.die_offset)
            stmt_list = root[1].get("stmt_list") if root else None
            try:
                self._files = read_file_table(self.sections, stmt_list) if stmt_list is not None else []
            except (IndexError, ValueError, KeyError, DWARFError):
                self._files = file_table(self.sections, self.offset)  # pyelftools' general parser
        files = self._files
        if self.version < 5:
            index -= 1
        if not 0 <= index < len(files):
            return ""
        try:
            return files[index]  # a DWARF 5 table reads its names when first asked for
        except (IndexError, ValueError, KeyError, DWARFError):
            self._files = file_table(self.sections, self.offset)
            return self._files[index] if index < len(self._files) else ""


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
