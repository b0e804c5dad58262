"""The bytes of the DWARF sections the reader uses, relocated where the file is ``ET_REL``.

A shared library or executable needs no relocation: its sections are read as they are (by
:mod:`.elf`), and pyelftools' ``DWARFInfo`` (which reads every debug section, location lists
included, and looks up relocations for each: a tenth of the read on libpython) is built only if
the line-table fallback asks for it. Relocatable objects (probe objects) of x86-64 and of the
CPUs archdiff cross-compiles for (aarch64, ppc64le, s390x) are relocated here from the raw
``.rela`` tables; pyelftools applies relocations one construct-parsed entry at a time (5.8 of 6 s
on an nvcc probe object; a cross-compiled probe of a torch header holds a million of them, and
took about a minute of the struct step each). Anything else -- GNU ``.zdebug`` compression,
another CPU's or another type of relocation, ``.rel`` tables, phantom bytes -- takes pyelftools'
general path.
"""

from __future__ import annotations

import struct as _struct
from collections.abc import Callable
from typing import Any, BinaryIO

from extractor.structs.dwarf.elf import EM_DSPIC30F, EM_X86_64, ET_REL, ElfFile

# x86-64 relocation types seen in the DWARF of relocatable objects (type: width in bytes):
# R_X86_64_64, _32, _32S, and the offsets of thread-local variables in their TLS block, which a
# header with a `thread_local` gives its DW_OP_GNU_push_tls_address locations: R_X86_64_DTPOFF64
# and _DTPOFF32 (S + A, as the linker computes them within the object's own TLS sections;
# pyelftools 0.33 applies neither). No layout depends on a variable's location.
_X86_64_RELOCS = {1: 8, 10: 4, 11: 4, 17: 8, 21: 4}
# The other CPUs' absolute relocations, S + A as pyelftools' recipes compute them (its
# pc-relative ones take its own path): R_AARCH64_ABS64/ABS32, R_PPC64_ADDR64/ADDR32, R_390_64/_32.
EM_PPC64, EM_S390, EM_AARCH64 = 21, 22, 183
_ABSOLUTE_RELOCS = {EM_X86_64: _X86_64_RELOCS, EM_AARCH64: {257: 8, 258: 4}, EM_PPC64: {38: 8, 1: 4},
                    EM_S390: {22: 8, 4: 4}}
_RELOCATED = (".debug_info", ".debug_line", ".debug_str_offsets")
SECTIONS = (".debug_info", ".debug_abbrev", ".debug_str", ".debug_line_str", ".debug_line", ".debug_str_offsets")
# pyelftools' DWARFInfo attribute for each
_DWARFINFO_NAMES = {".debug_info": "debug_info_sec", ".debug_abbrev": "debug_abbrev_sec",
                    ".debug_str": "debug_str_sec", ".debug_line_str": "debug_line_str_sec",
                    ".debug_line": "debug_line_sec", ".debug_str_offsets": "debug_str_offsets_sec"}


def dwarf_sections(elf: ElfFile) -> tuple[dict[str, bytes], Callable[[], Any]]:
    """The bytes of :data:`SECTIONS` (``b""`` for one the file lacks), relocated, and a function
    that builds pyelftools' ``DWARFInfo`` over the same bytes when first called."""
    stream = elf.stream
    plain = elf.section(".zdebug_info") is None and not (
        elf.e_machine == EM_DSPIC30F and not elf.e_flags & 0x80000000)  # pyelftools' phantom bytes
    if plain and elf.e_type != ET_REL and not any(
            elf.section(prefix + name) is not None for name in SECTIONS for prefix in (".rel", ".rela")):
        return _read(elf), _once(lambda: _pyelftools(stream).get_dwarf_info(relocate_dwarf_sections=False,
                                                                         follow_links=False))
    if plain and elf.e_type == ET_REL and elf.e_machine in _ABSOLUTE_RELOCS and elf.elfclass == 64:
        relocated = _relocated(elf, _read(elf), _ABSOLUTE_RELOCS[elf.e_machine])
        if relocated is not None:
            return relocated, _once(lambda: _dwarf_info_over(_pyelftools(stream), relocated))
    dwarf = _pyelftools(stream).get_dwarf_info(relocate_dwarf_sections=True, follow_links=False)
    data: dict[str, bytes] = {}
    for name in SECTIONS:
        sec = getattr(dwarf, _DWARFINFO_NAMES[name])
        data[name] = sec.stream.getvalue() if sec is not None else b""
    return data, lambda: dwarf


def _pyelftools(stream: BinaryIO):
    from elftools.elf.elffile import ELFFile  # imported for the files and the fallback that need it

    return ELFFile(stream)


def _read(elf: ElfFile) -> dict[str, bytes]:
    data = {}
    for name in SECTIONS:
        section = elf.section(name)
        data[name] = elf.data(section) if section is not None else b""
    return data


def _once(build: Callable[[], Any]) -> Callable[[], Any]:
    built: list = []

    def get():
        if not built:
            built.append(build())
        return built[0]
    return get


def _dwarf_info_over(elf, data: dict[str, bytes]):
    """pyelftools' DWARFInfo of a relocatable object, its streams holding the bytes relocated here."""
    dwarf = elf.get_dwarf_info(relocate_dwarf_sections=False, follow_links=False)
    for name in _RELOCATED:
        sec = getattr(dwarf, _DWARFINFO_NAMES[name])
        if sec is not None:
            sec.stream.seek(0)
            sec.stream.write(data[name])
            sec.stream.seek(0)
    return dwarf


def _relocated(elf: ElfFile, data: dict[str, bytes], widths: dict[int, int]) -> dict[str, bytes] | None:
    """``data`` with the ``.rela`` tables of :data:`_RELOCATED` applied (``widths``: the bytes
    each relocation type writes, S + A); None when a table is ``.rel`` or has a type this
    shortcut does not know (pyelftools' general path then)."""
    order = "<" if elf.little else ">"
    writers = {4: _struct.Struct(order + "I"), 8: _struct.Struct(order + "Q")}
    symbol_values: dict[tuple[int, int], int] = {}
    out = dict(data)
    for name in _RELOCATED:
        if not data[name]:
            continue
        rel = elf.section(".rela" + name)
        if rel is None:
            if elf.section(".rel" + name) is not None:
                return None
            continue
        symtab_index = rel.link
        buffer = bytearray(data[name])
        size = len(buffer)
        # a probe object's .debug_info holds hundreds of thousands of relocations against a few
        # symbols (the debug sections'): each (type, symbol) is looked up once
        plans: dict[int, tuple[_struct.Struct, int, int, int]] = {}  # r_info -> writer, width, value, mask
        for r_offset, r_info, r_addend in _struct.iter_unpack(order + "QQq", elf.data(rel)):
            plan = plans.get(r_info)
            if plan is None:
                width = widths.get(r_info & 0xFFFFFFFF)
                if width is None:
                    return None
                key = (symtab_index, r_info >> 32)
                value = symbol_values.get(key)
                if value is None:
                    value = elf.symbol_value(elf.sections[symtab_index], r_info >> 32)
                    symbol_values[key] = value
                plan = plans[r_info] = (writers[width], width, value, (1 << (8 * width)) - 1)
            writer, width, value, mask = plan
            if r_offset + width <= size:
                writer.pack_into(buffer, r_offset, (value + r_addend) & mask)
            else:  # past the section's end: written as before (the bytes are appended)
                buffer[r_offset:r_offset + width] = ((value + r_addend) & mask).to_bytes(
                    width, "little" if elf.little else "big")
                size = len(buffer)
        out[name] = bytes(buffer)
    return out
