"""Abbreviation tables, read straight from ``.debug_abbrev``."""

from __future__ import annotations

from elftools.common.exceptions import DWARFError

from extractor.structs.dwarf.forms import (AT_NAMES, CU_REFS, FORM_NAMES, FORMS, IMPLICIT, KEEP, STR_FORMS,
                                           TAG_NAMES, sleb, uleb)


class Abbrev:
    __slots__ = ("tag", "children", "ops")

    def __init__(self, tag: str, children: bool, ops: tuple) -> None:
        self.tag = tag
        self.children = children
        self.ops = ops  # ((key or None, kind, size_or_const, string_table_or_None, is_cu_ref), ...)


def compile_abbrevs(blob: bytes, offset: int) -> dict[int, Abbrev]:
    """One abbreviation table, read straight from ``.debug_abbrev`` (pyelftools' construct
    parser took longer than the whole DIE walk), with names from pyelftools' enum tables."""
    out = {}
    pos = offset
    while True:
        code, pos = uleb(blob, pos)
        if code == 0:
            return out
        tag, pos = uleb(blob, pos)
        children = blob[pos] == 1
        pos += 1
        ops = []
        while True:
            name, pos = uleb(blob, pos)
            form, pos = uleb(blob, pos)
            if name == 0 and form == 0:
                break
            form_name = FORM_NAMES.get(form, "")
            kind, size = FORMS.get(form_name, (None, 0))
            if kind is None:
                raise DWARFError(f"unsupported DWARF form 0x{form:x}")
            if kind == IMPLICIT:
                size, pos = sleb(blob, pos)
            key = KEEP.get(AT_NAMES.get(name, ""))
            ops.append((key, kind, size, STR_FORMS.get(form_name), form_name in CU_REFS))
        out[code] = Abbrev(TAG_NAMES.get(tag, f"DW_TAG_0x{tag:x}"), children, tuple(ops))
