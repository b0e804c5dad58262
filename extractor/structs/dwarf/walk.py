"""The walk: which DIEs of a unit are aggregates worth a layout, and every unit of an ELF.

It walks only the top level of each unit, namespaces and aggregates, and jumps over every other
subtree (functions, their parameters and locals) through ``DW_AT_sibling`` or, for DIEs whose
abbreviation has only fixed-size forms, by that size, without building attributes.
"""

from __future__ import annotations

from collections.abc import Callable

from elftools.common.exceptions import DWARFError

from extractor.structs.dwarf.abbrev import AGGREGATE, MEMBER, NAMED, OTHER, TYPEDEF, AbbrevTables
from extractor.structs.dwarf.die import Unit
from extractor.structs.dwarf.forms import AGGREGATES, C_LANGS, uleb
from extractor.structs.dwarf.layout import build_layout
from extractor.structs.dwarf.raw import RawLayout
from extractor.structs.dwarf.sections import Sections
from extractor.structs.dwarf.units import DW_UT_COMPILE, DW_UT_PARTIAL, DW_UT_TYPE, UnitHeader, read_unit_headers


class Seen:
    """Aggregates already seen in earlier units, so that a library's headers, repeated in every
    unit, are laid out once; and which declaring files the caller wants laid out."""

    def __init__(self, decl_filter: Callable[[str], bool] | None = None) -> None:
        self.quick: set[tuple] = set()  # name, kind, size, line, subtree size
        self.identity: set[tuple] = set()  # C: abbreviation, name, size and line values, subtree size
        # anonymous aggregates named by a typedef: the same, and the typedef's name
        self.anonymous: set[tuple] = set()
        self.decl_filter = decl_filter
        # the caller's answer per declaring file: a probe object declares tens of thousands of
        # aggregates in a few hundred files, and a probe's filter resolves each path on disk
        self._wanted_files: dict[str, bool] = {}

    def wanted(self, unit: Unit, attrs: dict) -> bool:
        """Whether the aggregate with these attributes is declared in a file the caller wants
        (always, without a ``decl_filter``)."""
        if self.decl_filter is None:
            return True
        index = unit.value(attrs, "decl_file", None)
        if index is None:
            return False
        name = unit.file_name(index)
        answer = self._wanted_files.get(name)
        if answer is None:
            answer = self._wanted_files[name] = bool(self.decl_filter(name))
        return answer


class TypeUnits:
    """DWARF 5 type units (``-fdebug-types-section``) by signature, each opened and walked (for
    the qualified names its namespaces give) the first time a ``DW_FORM_ref_sig8`` names it."""

    def __init__(self, sections: Sections) -> None:
        self.sections = sections
        self.abbrev_tables = AbbrevTables(sections.abbrev_data)
        self.by_signature: dict[int, tuple[UnitHeader, int]] = {}  # signature -> (unit, absolute DIE offset)
        self.opened: dict[int, Unit] = {}  # CU offset -> its unit, kept for the whole read

    def die(self, signature: int) -> tuple[Unit, int] | None:
        """The type a DW_FORM_ref_sig8 names: (its type unit, the DIE's offset), or None."""
        hit = self.by_signature.get(signature)
        if hit is None:
            return None
        header, offset = hit
        unit = self.opened.get(header.offset)
        if unit is None:
            unit = self.unit(header)
            first = prepare_unit(unit)
            if first is not None:  # qualified names inside the type unit (namespaces wrap the type)
                walk(unit, first, (), [], Seen(), None)
            self.opened[header.offset] = unit
        return (unit, offset)

    def unit(self, header: UnitHeader) -> Unit:
        return Unit(self.sections, header, self, self.abbrev_tables)


def prepare_unit(unit: Unit) -> int | None:
    """Decode the unit's root DIE; the offset of its first child, None when the unit is empty."""
    root = unit.header.die_offset
    abbrev, attrs, pos = unit.decode(root, cook=False)
    if abbrev is None or not abbrev.children:
        unit.first_child = None
        return None
    if "str_offsets_base" in attrs:
        unit.str_offsets_base = attrs["str_offsets_base"]
    abbrev, attrs, pos = unit.decode(root)  # its strings, now that their base is known
    unit.cache[root] = (abbrev, attrs, pos)
    lang = unit.value(attrs, "language", 0)
    unit.language = "c" if lang in C_LANGS else "c++"
    unit.first_child = pos
    return pos


def read_all(sections: Sections, decl_filter) -> tuple[RawLayout, ...]:
    """Every aggregate worth a layout in every unit, merged across units and sorted."""
    type_units = TypeUnits(sections)
    seen: set[tuple] = set()  # full keys: name, size, line and every member's placement
    seen_before = Seen(decl_filter)
    out: list[RawLayout] = []
    units = []
    for header in read_unit_headers(sections.data, sections.little):
        if header.unit_type == DW_UT_TYPE:  # -fdebug-types-section: types live in type units
            type_units.by_signature[header.type_signature] = (header, header.offset + header.type_offset)
        if header.unit_type in (DW_UT_COMPILE, DW_UT_PARTIAL, DW_UT_TYPE):
            units.append(header)
    for header in units:
        unit = type_units.opened.get(header.offset) or type_units.unit(header)
        first = prepare_unit(unit)
        if first is None:
            continue
        candidates: list[tuple[int, str, str, list | None]] = []
        walk(unit, first, (), candidates, seen_before, None)
        anonymous = unit.anonymous
        named = [(offset, anonymous[offset], "", None) for offset in unit.typedef_names if offset in anonymous]
        if named:  # in the order of the DIEs, as the walk met them: the first of equal layouts is kept
            candidates += named
            candidates.sort(key=_offset)
        for offset, kind, qualname, members in candidates:
            if members is None:  # an anonymous aggregate: kept only when a typedef names it
                qualname = unit.typedef_names[offset]
                identity = anonymous_identity(unit, offset, qualname)
                if identity is not None and identity in seen_before.anonymous:
                    continue  # its quick key (below) is in seen_before.quick: it was laid out
                attrs = unit.die(offset)[1]
                sibling = attrs.get("sibling")
                quick = (qualname, kind, attrs["byte_size"], unit.value(attrs, "decl_line", 0),
                         sibling - offset if sibling is not None else -1)
                if identity is not None:
                    seen_before.anonymous.add(identity)
                if sibling is not None and quick in seen_before.quick:
                    continue
                seen_before.quick.add(quick)
                members = unit.members(offset)
            if not seen_before.wanted(unit, unit.die(offset)[1]):
                continue
            layout = build_layout(unit, offset, kind, qualname, members, seen)
            if layout is not None:
                out.append(layout)
        if header.offset not in type_units.opened:
            # release the unit's caches now: memory stays flat across thousands of CUs
            unit.cache.clear()
            unit.qualnames.clear()
            unit.typedef_names.clear()
            unit.memos.clear()
            unit.member_lists.clear()
            unit.anonymous.clear()
    out.sort(key=lambda r: (r.qualname, r.size, r.decl_file, r.decl_line))
    return tuple(out)


def _offset(candidate: tuple) -> int:
    return candidate[0]


def anonymous_identity(unit: Unit, offset: int, name: str) -> tuple | None:
    """What an anonymous aggregate is recognised by in later units, read without decoding it:
    its abbreviation, the values it holds of :data:`.abbrev.IDENTITY` (size and line), the size
    of its subtree and the typedef's name; None when its abbreviation does not give them.
    Equal identities have equal quick keys (name, kind, size, line, subtree size)."""
    data = unit.data
    b = data[offset]
    code, after = (b, offset + 1) if b < 0x80 else uleb(data, offset)
    abbrev = unit.abbrevs[code]
    if abbrev.identity is None or abbrev.sibling_at is None:
        return None
    sibling = abbrev.sibling.unpack_from(data, after + abbrev.sibling_at)[0] + unit.offset  # type: ignore[union-attr]
    return (abbrev, abbrev.identity.unpack_from(data, after), sibling - offset, name)


def walk(unit: Unit, pos: int, scope: tuple[str, ...], candidates: list, seen: Seen,
          members: list | None, in_aggregate: bool = False) -> int:
    """Collect aggregates under a children list starting at ``pos``; return the offset after it.

    Remembers the qualified names of named types (for spelling member types), collects the
    member DIEs of aggregates that are new into ``members``, and jumps over everything else --
    through DW_AT_sibling, or by the abbreviation's fixed size -- without building attributes.
    """
    is_c = unit.language == "c"
    seen_quick, seen_identity = seen.quick, seen.identity
    base = unit.offset
    data = unit.data
    abbrevs = unit.abbrevs
    sections = unit.sections
    strings = sections.strings
    typedef_names = unit.typedef_names
    anonymous = unit.anonymous
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
            code, after_code = uleb(data, pos)
        abbrev = abbrevs[code]
        family = abbrev.family
        identity = None
        if family == AGGREGATE and is_c and abbrev.sibling_at is not None:
            # tested first: most DIEs a C unit repeats are aggregates seen already. C scopes
            # nothing inside an aggregate: what the walk needs of one already seen, or of one
            # without a name, is in its abbreviation and a few fixed-size values
            sibling = abbrev.sibling.unpack_from(data, after_code + abbrev.sibling_at)[0] + base  # type: ignore[union-attr]
            keys = abbrev.keys
            if "name" not in keys:  # anonymous: kept after the walk if a typedef names it
                if not in_aggregate and "declaration" not in keys and "byte_size" in keys:
                    anonymous[start] = AGGREGATES[abbrev.tag]
                pos = sibling
                continue
            if abbrev.identity is not None:
                # the same name, size and line under the same abbreviation, with a subtree
                # of the same size: a type seen already
                identity = (abbrev, abbrev.identity.unpack_from(data, after_code), sibling - start)
                if identity in seen_identity:
                    pos = sibling
                    continue
        elif family == OTHER or (family == MEMBER and members is None) or (family == NAMED and is_c):
            # nothing the walk reads (C spells base and enumeration types by their own name):
            # jump over it without building its attributes
            if abbrev.children:
                if abbrev.sibling_at is not None:
                    pos = abbrev.sibling.unpack_from(data, after_code + abbrev.sibling_at)[0] + base  # type: ignore[union-attr]
                    continue
                after, sibling = unit.skip(abbrev, after_code)
                pos = sibling if sibling is not None else unit.skip_children(after)
            elif abbrev.size is not None:
                pos = after_code + abbrev.size
            else:
                pos = unit.skip(abbrev, after_code)[0]
            continue
        elif family == MEMBER:
            abbrev, attrs, after = unit.decode(start)
            members.append((start, abbrev.tag, attrs))  # type: ignore[union-attr]
            pos = (attrs["sibling"] if "sibling" in attrs else
                   unit.skip_children(after)) if abbrev.children else after
            continue
        elif family == TYPEDEF and is_c and abbrev.name_at is not None and abbrev.type_at is not None and \
                not abbrev.children and "specification" not in abbrev.keys:
            # a C typedef: only what it names is remembered (an anonymous aggregate takes that
            # name), read from its name and type values alone
            values = abbrev.run.unpack_from(data, after_code)  # type: ignore[union-attr]
            name = strings.get(values[abbrev.name_at]) or sections.string(values[abbrev.name_at])
            if name:
                typedef_names.setdefault(values[abbrev.type_at] + base, name)
            pos = after_code + abbrev.size  # type: ignore[operator]
            continue
        # an aggregate, a typedef read in full, a namespace, or a named type in C++
        tag = abbrev.tag
        abbrev, attrs, after = unit.decode(start)
        name = unit.value(attrs, "name", "")
        if tag == "DW_TAG_namespace":
            inner = scope + (name or "(anonymous namespace)",)
            pos = walk(unit, after, inner, candidates, seen, None) \
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
        kind = AGGREGATES.get(tag)
        if tag == "DW_TAG_typedef" and name and "type" in attrs:
            # ``typedef struct {...} name;``: the anonymous struct takes the typedef's name
            unit.typedef_names.setdefault(unit.value(attrs, "type"), unit.qualnames[start])
        if kind is not None and not name and not in_aggregate and \
                "declaration" not in attrs and "byte_size" in attrs:
            anonymous[start] = kind  # a candidate if a typedef names it (after the walk)
        if kind is None or not abbrev.children:
            if kind is not None and name and "declaration" not in attrs and \
                    "byte_size" in attrs:
                candidates.append((start, kind, unit.qualnames[start], []))
            pos = (attrs["sibling"] if "sibling" in attrs else
                   unit.skip_children(after)) if abbrev.children else after
            continue
        qual = unit.qualnames.get(start, "")
        collect: list | None = None
        if name and "declaration" not in attrs and "byte_size" in attrs:
            # a library's headers repeat the same types in every CU: a type already seen
            # (same name, size, line and encoded size of its whole subtree) is skipped
            # before its members are decoded
            sibling = attrs.get("sibling")
            quick = (qual, kind, attrs["byte_size"], unit.value(attrs, "decl_line", 0),
                     sibling - start if sibling is not None else -1)
            if sibling is None or quick not in seen_quick:
                if sibling is not None:
                    seen_quick.add(quick)
                if seen.wanted(unit, attrs):  # else its members are jumped over
                    collect = []
                    unit.member_lists[start] = collect
                    candidates.append((start, kind, qual, collect))
            if identity is not None and sibling is not None:
                seen_identity.add(identity)  # its quick key is in seen_quick from now on
        if collect is None and is_c and "sibling" in attrs:
            pos = attrs["sibling"]  # C scopes nothing inside an aggregate
            continue
        inner = scope if is_c else scope + (name or "(anonymous)",)
        pos = walk(unit, after, inner, candidates, seen, collect, True)
