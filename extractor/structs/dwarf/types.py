"""Type spelling: the C/C++ spelling, size and alignment of a type DIE, memoised per unit."""

from __future__ import annotations

import re

from extractor.structs.dwarf.die import Unit, member_location
from extractor.structs.dwarf.forms import AGGREGATES

DECLARATOR = re.compile(r"\((\*+|&+)\)")


class Types:
    """Spelling, size and alignment of a type DIE, memoised per CU."""

    _QUALIFIERS = {"DW_TAG_const_type": "const", "DW_TAG_volatile_type": "volatile",
                   "DW_TAG_restrict_type": "restrict", "DW_TAG_atomic_type": "_Atomic"}

    def __init__(self, unit: Unit) -> None:
        self.unit = unit
        # the memos live and die with the unit; a member's type is mostly one seen already, so
        # spell, size and align look their memo up before anything else
        self._spells: dict = unit_memo(unit, "spell")
        self._sizes: dict = unit_memo(unit, "size")
        self._aligns: dict = unit_memo(unit, "align")

    def _die(self, off):
        return self.unit.die(off)

    def _memoised(self, kind: str, memo: dict, off, seed, compute):
        """``compute(off)`` once per unit and type; ``seed`` answers while a recursive type is computed.
        Only an offset that stands for itself is memoised (a signature is not): the callers have
        looked ``off`` up in ``memo`` already."""
        if off is not None and not isinstance(off, tuple):
            off = self._through_signature(off)
        if isinstance(off, tuple):  # a DW_FORM_ref_sig8 type: it lives in a type unit
            return getattr(Types(off[0]), kind)(off[1])
        if off in memo:
            return memo[off]
        memo[off] = seed
        result = compute(off)
        memo[off] = result
        return result

    def spell(self, off: int | None) -> str:
        hit = self._spells.get(off)
        return hit if hit is not None else self._memoised("spell", self._spells, off, "?", self._spell)

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
            declarator = DECLARATOR.search(inner)
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
        if tag in AGGREGATES or tag == "DW_TAG_enumeration_type":
            if not name:
                word = AGGREGATES.get(tag, "enum")
                return f"{word} {{...}}"
            if unit.language == "c":
                return f"{AGGREGATES.get(tag, 'enum')} {qual}"
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
        hit = self._sizes.get(off)
        return hit if hit is not None else self._memoised("size", self._sizes, off, 0, self._size)

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
        hit = self._aligns.get(off)
        return hit if hit is not None else self._memoised("align", self._aligns, off, 1, self._align)

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
        if tag in AGGREGATES:
            align = 1
            size = unit.value(attrs, "byte_size", 0)
            packed = False
            for _o, child_tag, cattrs in unit.members(off):
                if "declaration" in cattrs or ("external" in cattrs and child_tag == "DW_TAG_member"):
                    continue
                if child_tag == "DW_TAG_inheritance" and unit.value(cattrs, "virtuality", 0):
                    continue
                a = unit.value(cattrs, "alignment", 0) or self.align(unit.value(cattrs, "type"))
                align = max(align, a)
                if "bit_size" not in cattrs and member_location(unit, cattrs) % a:
                    packed = True
            if packed or (size and size % align):
                return 1
            return align
        return 1


def unit_memo(unit: Unit, name: str) -> dict:
    return unit.memos.setdefault(name, {})  # lives and dies with the CU
