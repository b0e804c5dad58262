"""An ELF's header and section table, and the bytes of a section, read directly.

The reader needs a handful of sections from a file it reads once. pyelftools' ``ELFFile`` parses
every header with construct, and importing it (with the DWARF, EHABI and construct machinery it
pulls in) cost more CPU than pahole takes to print libpython's layouts. So this module reads the
section table itself, and pyelftools is imported only for the files it alone handles (GNU
``.zdebug`` sections, other CPUs' relocations, phantom bytes) and for the line-program fallback.
A test compares the two readers on objects of every shape.
"""

from __future__ import annotations

import struct
import zlib
from typing import BinaryIO

SHT_NOBITS = 8
SHF_COMPRESSED = 0x800
ELFCOMPRESS_ZLIB = 1
ET_REL = 1
EM_X86_64 = 62
EM_DSPIC30F = 118  # its DWARF has phantom bytes (pyelftools drops them)


class ElfFormatError(ValueError):
    """The ELF header or section table cannot be read."""


class Section:
    __slots__ = ("name", "type", "flags", "offset", "size", "link", "info", "entsize")

    def __init__(self, name: str, type_: int, flags: int, offset: int, size: int, link: int, info: int,
                 entsize: int) -> None:
        self.name = name
        self.type = type_
        self.flags = flags
        self.offset = offset
        self.size = size
        self.link = link
        self.info = info
        self.entsize = entsize


class ElfFile:
    """The header fields and the section table of an ELF file open for reading."""

    def __init__(self, stream: BinaryIO, file_size: int) -> None:
        self.stream = stream
        self.file_size = file_size
        ident = self._read(0, 16)
        if ident[:4] != b"\x7fELF" or ident[4] not in (1, 2) or ident[5] not in (1, 2):
            raise ElfFormatError("not a 32- or 64-bit ELF of a known byte order")
        self.elfclass = 64 if ident[4] == 2 else 32
        self.little = ident[5] == 1
        order = "<" if self.little else ">"
        if self.elfclass == 64:
            e_type, e_machine, shoff, flags, shentsize, shnum, shstrndx = \
                struct.unpack(order + "HH4x8x8xQI6xHHH", self._read(16, 48))
            # name, type, flags, (addr), offset, size, link, info, (addralign), entsize
            header = struct.Struct(order + "IIQ8xQQII8xQ")
            self._chdr = struct.Struct(order + "I4xQ8x")  # ch_type, (ch_reserved), ch_size, (ch_addralign)
        else:
            e_type, e_machine, shoff, flags, shentsize, shnum, shstrndx = \
                struct.unpack(order + "HH4x4x4xII6xHHH", self._read(16, 36))
            header = struct.Struct(order + "III4xIIII4xI")
            self._chdr = struct.Struct(order + "II4x")
        self.e_type, self.e_machine, self.e_flags = e_type, e_machine, flags
        self.sections: list[Section] = []
        self._by_name: dict[str, Section] = {}
        if shoff == 0:
            return
        if shentsize < header.size:
            raise ElfFormatError(f"section headers of {shentsize} bytes, smaller than {header.size}")
        raw = []
        first = header.unpack(self._read(shoff, header.size))
        if shnum == 0:  # more sections than e_shnum holds: the count is the first header's size
            shnum = first[5]
        if shstrndx == 0xFFFF:  # SHN_XINDEX: the index is the first header's link
            shstrndx = first[6]
        if shoff + shnum * shentsize > file_size:
            raise ElfFormatError(f"{shnum} section headers at offset {shoff} pass the end of the file")
        table = self._read(shoff, shnum * shentsize)
        for index in range(shnum):
            raw.append(header.unpack_from(table, index * shentsize))
        names = b""
        if 0 < shstrndx < shnum:
            strtab = raw[shstrndx]
            names = self._read(strtab[3], strtab[4]) if strtab[1] != SHT_NOBITS else b""
        for name, type_, flags_, offset, size, link, info, entsize in raw:
            end = names.find(b"\0", name)
            text = names[name:end if end >= 0 else len(names)].decode("utf-8", "replace") if name < len(names) else ""
            self.sections.append(Section(text, type_, flags_, offset, size, link, info, entsize))
        # the last section of a name, as pyelftools finds it (a relocatable object with type units
        # has a .debug_info per type unit)
        self._by_name = {section.name: section for section in self.sections}

    def section(self, name: str) -> Section | None:
        return self._by_name.get(name)

    def inflated_size(self, section: Section) -> int:
        """The size a ``SHF_COMPRESSED`` section declares it inflates to."""
        return self._chdr.unpack(self._read(section.offset, self._chdr.size))[1]

    def data(self, section: Section) -> bytes:
        """The section's bytes, inflated when it is ``SHF_COMPRESSED`` (zlib)."""
        if section.type == SHT_NOBITS:  # zeros, as pyelftools gives them, but not a header's gigabytes
            if section.size > 1 << 31:
                raise ElfFormatError(f"section {section.name} claims {section.size} bytes of zeros")
            return bytes(section.size)
        if not section.flags & SHF_COMPRESSED:
            return self._read(section.offset, section.size)
        kind, size = self._chdr.unpack(self._read(section.offset, self._chdr.size))
        if kind != ELFCOMPRESS_ZLIB:
            raise ElfFormatError(f"section {section.name} is compressed with unknown type {kind}")
        inflater = zlib.decompressobj()  # at most the declared size (0 would mean no limit)
        data = inflater.decompress(self._read(section.offset + self._chdr.size, section.size - self._chdr.size),
                                   max(size, 1))
        if len(data) != size:
            raise ElfFormatError(f"section {section.name} inflates to {len(data)} bytes, not the {size} it declares")
        return data

    def symbol_value(self, symtab: Section, index: int) -> int:
        """``st_value`` of symbol ``index`` of an ELF64 symbol table."""
        at = symtab.offset + index * (symtab.entsize or 24)
        if index >= symtab.size // (symtab.entsize or 24):
            raise ElfFormatError(f"symbol {index} is past the end of {symtab.name}")
        return struct.unpack(("<" if self.little else ">") + "Q", self._read(at + 8, 8))[0]

    def _read(self, offset: int, size: int) -> bytes:
        if offset < 0 or size < 0 or offset + size > self.file_size:
            raise ElfFormatError(f"{size} bytes at offset {offset} pass the end of the file")
        self.stream.seek(offset)
        data = self.stream.read(size)
        if len(data) != size:
            raise ElfFormatError(f"the file ends inside {size} bytes at offset {offset}")
        return data
