"""Abbreviation tables, read straight from ``.debug_abbrev`` and compiled into decoding plans.

An abbreviation lists the attributes of every DIE that uses it and their forms, so how to read
such a DIE is known before any DIE is read. Each entry is compiled once into an
:class:`Abbrev` that the decoder (:mod:`.die`) follows without looking at a form again:

* a run of fixed-size forms is one ``struct.Struct`` (attributes nobody reads are pad bytes),
  so a DIE whose forms are all fixed-size is one ``unpack_from`` call;
* strings, references and type signatures are "cooked" after the unpack, by a short list;
* the encoded size of such a DIE, and where a fixed-size ``DW_AT_sibling`` sits, let the walk
  jump over a DIE without decoding it.

A library repeats the same entries in every unit's table (libpython: 146 tables of 14,463
entries, 1,108 different), so an entry is compiled once per distinct encoding: the table
reader finds an entry's end with ``bytes.find`` and looks its bytes up before parsing them
(pyelftools' construct parser took longer than the whole DIE walk).
"""

from __future__ import annotations

import struct

from elftools.common.exceptions import DWARFError

from extractor.structs.dwarf.forms import (ADDR, AGGREGATES, AT_NAMES, CU_REFS, FIXED, FORM_NAMES, FORMS, IMPLICIT,
                                           KEEP, MEMBER_TAGS, NAMED_TYPES, OFFSET, PRESENT, REF_ADDR, SLEB, STR_FORMS,
                                           TAG_NAMES, ULEB, sleb, uleb)

# How a decoded value becomes what the reader uses (``Abbrev.cooks``)
COOK_STR, COOK_LINE_STR, COOK_STRX, COOK_REF, COOK_SIG8, COOK_UINT = range(6)
_COOKS = {"str": COOK_STR, "line_str": COOK_LINE_STR, "strx": COOK_STRX, "sig8": COOK_SIG8}
# A step of a plan that is not one fixed run: (kind, key, struct or None, key names, size); a
# run of fixed-size forms is (RUN, where a DW_AT_sibling sits in it or None, struct, names, size)
RUN = -1
IDENTITY = {"name", "byte_size", "decl_line"}
# The tag's family, what the walk dispatches on (``Abbrev.family``)
OTHER, AGGREGATE, TYPEDEF, NAMED, NAMESPACE, MEMBER = range(6)  # the walk's quick key, but for the unit-relative parts
_STRUCT_CODES = {1: "B", 2: "H", 4: "I", 8: "Q"}


# form code -> (kind, size, string table or None, is a CU-relative reference); attribute code -> key
_FORM_SPECS = {code: (*FORMS[name], STR_FORMS.get(name), name in CU_REFS)
               for code, name in FORM_NAMES.items() if name in FORMS}
_KEPT = {code: KEEP[name] for code, name in AT_NAMES.items() if name in KEEP}


class Abbrev:
    """One compiled abbreviation: its tag, whether DIEs using it have children, and the plan
    the decoder follows for the unit shape it was compiled for."""

    __slots__ = ("tag", "family", "children", "size", "run", "names", "steps", "consts", "cooks",
                 "sibling_at", "sibling", "identity", "keys", "name_at", "type_at")

    def __init__(self, tag: str, children: bool) -> None:
        self.tag = tag
        self.family = (AGGREGATE if tag in AGGREGATES else TYPEDEF if tag == "DW_TAG_typedef" else
                       NAMED if tag in NAMED_TYPES else NAMESPACE if tag == "DW_TAG_namespace" else
                       MEMBER if tag in MEMBER_TAGS else OTHER)
        self.children = children
        # ``size``, ``run`` and ``names`` are set together, and ``sibling`` whenever ``sibling_at`` is:
        # the decoder's hot paths rely on it where mypy cannot follow (their ``type: ignore``s)
        self.size: int | None = None  # encoded size when every form has a fixed size
        self.run: struct.Struct | None = None  # that whole encoding, when it is fixed
        self.names: tuple[str, ...] = ()  # the keys ``run`` unpacks, in order
        self.steps: tuple[tuple, ...] = ()  # the plan when some form has a variable size
        self.consts: tuple[tuple[str, int], ...] = ()  # flag_present and implicit_const values
        self.cooks: tuple[tuple[str, int], ...] = ()  # (key, COOK_*) applied after decoding
        self.sibling_at: int | None = None  # where a fixed-size DW_AT_sibling sits, when only
        self.sibling: struct.Struct | None = None  # fixed-size forms precede it, and its reader
        # Aggregates: the values a type is recognised by in later units (:data:`IDENTITY`), as the DIE holds
        # them, when they mean the same in every unit (a name in .debug_str, not a string index
        # relative to the unit's base): DIEs of one abbreviation with equal identities and
        # subtree sizes are the same type.
        self.identity: struct.Struct | None = None
        self.keys: frozenset[str] = frozenset()  # the attributes every DIE using it has
        # typedefs: where ``run`` unpacks DW_AT_name as a .debug_str offset and DW_AT_type as a
        # unit-relative reference, when it does: the walk reads a C typedef from these alone
        self.name_at: int | None = None
        self.type_at: int | None = None


class AbbrevTables:
    """The abbreviation tables of one ELF, by table offset and unit shape, compiled on first
    use; entries shared between tables are compiled once."""

    def __init__(self, blob: bytes) -> None:
        self.blob = blob
        self._tables: dict[tuple, dict[int, Abbrev]] = {}
        self._entries: dict[tuple, dict[bytes, Abbrev]] = {}

    def table(self, offset: int, shape: tuple[bool, int, int, int]) -> dict[int, Abbrev]:
        """The table at ``offset`` for units of ``shape`` (little-endian?, offset size,
        address size, DW_FORM_ref_addr size)."""
        key = (offset, shape)
        table = self._tables.get(key)
        if table is None:
            entries = self._entries.setdefault(shape, {})
            table = read_table(self.blob, offset, shape, entries)
            self._tables[key] = table
        return table


def read_table(blob: bytes, offset: int, shape: tuple, entries: dict[bytes, Abbrev]) -> dict[int, Abbrev]:
    """Abbreviation code -> :class:`Abbrev` for the table at ``offset``.

    An entry's attribute list ends with two zero bytes, and no other two zero bytes occur in it
    unless a ``DW_FORM_implicit_const`` value is zero: ``find`` gives the end to look the entry's
    bytes up in ``entries``; an entry not found is parsed exactly (which settles that case) and
    stored under the bytes it really spans, so a hit is always an entry parsed exactly before.
    """
    out: dict[int, Abbrev] = {}
    find = blob.find
    pos = offset
    while True:
        b = blob[pos]
        if b < 0x80:
            code, pos = b, pos + 1
        else:
            code, pos = uleb(blob, pos)
        if code == 0:
            return out
        end = find(b"\0\0", pos) + 2
        abbrev = entries.get(blob[pos:end]) if end > 1 else None
        if abbrev is None:
            abbrev, end = _parse_entry(blob, pos, shape)
            entries[blob[pos:end]] = abbrev
        out[code] = abbrev
        pos = end


def _parse_entry(blob: bytes, pos: int, shape: tuple) -> tuple[Abbrev, int]:
    """One entry from its tag to the end of its attribute list, compiled for ``shape``."""
    tag, pos = uleb(blob, pos)
    children = blob[pos] == 1
    pos += 1
    specs = []
    while True:
        name = blob[pos]  # attribute and form codes: almost always one byte each
        if name < 0x80:
            pos += 1
        else:
            name, pos = uleb(blob, pos)
        form = blob[pos]
        if form < 0x80:
            pos += 1
        else:
            form, pos = uleb(blob, pos)
        if name == 0 and form == 0:
            break
        spec = _FORM_SPECS.get(form)
        if spec is None:
            raise DWARFError(f"unsupported DWARF form 0x{form:x}")
        kind, size, strtab, curef = spec
        if kind == IMPLICIT:
            size, pos = sleb(blob, pos)
        specs.append((_KEPT.get(name), kind, size, strtab, curef))
    return compile_abbrev(TAG_NAMES.get(tag, f"DW_TAG_0x{tag:x}"), children, specs, shape), pos


def compile_abbrev(tag: str, children: bool, specs: list[tuple], shape: tuple) -> Abbrev:
    """The decoding plan of one abbreviation: ``specs`` are (key or None, form kind, size or
    implicit constant, string table or None, is a CU-relative reference)."""
    little, offset_size, address_size, ref_addr_size = shape
    order = "<" if little else ">"
    abbrev = Abbrev(tag, children)
    steps: list[tuple] = []
    consts: list[tuple[str, int]] = []
    cooks: list[tuple[str, int]] = []
    fmt: list[str] = []  # the fixed run being gathered
    names: list[str] = []
    identity: list[str] = []  # the fixed run with the sibling as pad bytes
    sibling_in_run = None
    at = 0  # bytes into the fixed run
    fixed = True  # no variable-size form so far
    widths = {OFFSET: offset_size, ADDR: address_size, REF_ADDR: ref_addr_size, PRESENT: 0, IMPLICIT: 0}

    def close_run() -> None:
        nonlocal at, sibling_in_run
        if at:
            steps.append((RUN, sibling_in_run, struct.Struct(order + "".join(fmt)), tuple(names), at))
        fmt.clear()
        names.clear()
        at = 0
        sibling_in_run = None

    for key, kind, size, strtab, curef in specs:
        width = widths.get(kind, size if kind == FIXED else None)
        if width is None:  # a variable-size form: the run so far is one step, this one another
            close_run()
            fixed = False
            steps.append((kind, key, None, (), 0))
            if key is not None:
                if kind in (ULEB, SLEB):
                    if strtab is not None:
                        cooks.append((key, _COOKS[strtab]))
                    elif curef:
                        cooks.append((key, COOK_REF))
            continue
        if kind in (PRESENT, IMPLICIT):
            if key is not None:
                consts.append((key, 1 if kind == PRESENT else size))
            continue
        if key is None or kind == ADDR:  # addresses are never read: skipped like unkept ones
            fmt.append(f"{width}x")
            identity.append(f"{width}x")
        else:
            if key == "sibling" and kind == FIXED and abbrev.sibling is None:
                abbrev.sibling = struct.Struct(order + _STRUCT_CODES.get(width, f"{width}s"))
                sibling_in_run = at
                if fixed:
                    abbrev.sibling_at = at
            code = _STRUCT_CODES.get(width)
            if code is None:  # 3-byte strx3/addrx3, 16-byte data16: read as bytes, then an int
                code = f"{width}s"
                cooks.append((key, COOK_UINT))
            fmt.append(code)
            identity.append(code if key in IDENTITY else f"{width}x")
            names.append(key)
            if strtab is not None:
                cooks.append((key, _COOKS[strtab]))
            elif curef:
                cooks.append((key, COOK_REF))
        at += width
    if fixed:
        abbrev.size = at
        abbrev.run = struct.Struct(order + "".join(fmt))
        abbrev.names = tuple(names)
        if abbrev.family == AGGREGATE and not any(how == COOK_STRX for _key, how in cooks):
            abbrev.identity = struct.Struct(order + "".join(identity))
        if abbrev.family == TYPEDEF:
            how: dict[str, list[int]] = {}
            for key, cook in cooks:
                how.setdefault(key, []).append(cook)
            if how.get("name") == [COOK_STR] and names.count("name") == 1:
                abbrev.name_at = names.index("name")
            if how.get("type") == [COOK_REF] and names.count("type") == 1:
                abbrev.type_at = names.index("type")
    else:
        close_run()
        abbrev.steps = tuple(steps)
    abbrev.consts = tuple(consts)
    abbrev.cooks = tuple(cooks)
    abbrev.keys = frozenset(spec[0] for spec in specs if spec[0] is not None)
    return abbrev
