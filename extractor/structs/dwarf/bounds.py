"""Section sizes checked before a byte of them is read.

An ELF's section headers are the file's own claims: a header may claim 2**60 bytes (a
MemoryError before anything is read), an ``SHF_COMPRESSED`` section may declare that it inflates
to gigabytes, and a GNU ``.zdebug_*`` section inflates to whatever its stream holds (pyelftools
inflates it whole). A few megabytes of zlib can declare, or hold, gigabytes. Every section is
therefore checked against the file's size, and every compressed one against
:data:`MAX_SECTION_BYTES`, before DWARF is read.
"""

from __future__ import annotations

import zlib

from extractor.structs.dwarf.elf import SHF_COMPRESSED, SHT_NOBITS, ElfFile, Section
from extractor.structs.dwarf.raw import DwarfReadError

MAX_SECTION_BYTES = 2 * 1024**3  # one debug section, inflated; libpython's .debug_info is 60 MB
_CHUNK = 1 << 20


def check_sections(elf: ElfFile, label: str) -> None:
    """Raise :class:`DwarfReadError` for a section that lies outside the file or inflates past
    :data:`MAX_SECTION_BYTES`."""
    for section in elf.sections:
        if section.type == SHT_NOBITS:
            continue
        if section.offset + section.size > elf.file_size:
            raise DwarfReadError(label, "corrupt-elf",
                                 f"section {section.name or '?'} extends past the end of the file "
                                 f"({section.size} bytes at offset {section.offset} in a file of "
                                 f"{elf.file_size}): the file is truncated or corrupt")
        if section.flags & SHF_COMPRESSED:
            _check_inflated(section.name, elf.inflated_size(section), label)
        elif section.name.startswith(".zdebug_"):
            _check_gnu_compressed(elf, section, label)


def _check_inflated(name: str, size: int, label: str) -> None:
    if size > MAX_SECTION_BYTES:
        raise DwarfReadError(label, "too-large",
                             f"compressed section {name} inflates to {size} bytes, over the limit of "
                             f"{MAX_SECTION_BYTES}: not read")


def _check_gnu_compressed(elf: ElfFile, section: Section, label: str) -> None:
    """``ZLIB`` + the inflated size (8 bytes, big-endian) + a zlib stream that pyelftools inflates
    whole, whatever that size says: the stream is measured here, without keeping its output."""
    stream = elf.stream
    stream.seek(section.offset)
    head = stream.read(12)
    if len(head) < 12 or head[:4] != b"ZLIB":
        return  # pyelftools refuses it itself
    declared = int.from_bytes(head[4:], "big")
    _check_inflated(section.name, declared, label)
    inflater = zlib.decompressobj()
    left = section.size - 12
    total = 0
    try:
        while left > 0 and not inflater.eof:
            pending = stream.read(min(_CHUNK, left))
            if not pending:
                break
            left -= len(pending)
            while pending:
                total += len(inflater.decompress(pending, _CHUNK))
                pending = inflater.unconsumed_tail
                if total > declared:
                    raise DwarfReadError(label, "too-large",
                                         f"compressed section {section.name} inflates past the {declared} "
                                         "bytes it declares: not read")
    except zlib.error as err:
        raise DwarfReadError(label, "corrupt-elf", f"compressed section {section.name} is corrupt ({err})") from err
