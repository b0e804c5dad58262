"""The reader's entry: open an ELF, check and relocate its DWARF, and walk it into layouts.

The section table is read by :mod:`.elf`; pyelftools relocates what :mod:`.reloc` does not and
inflates GNU ``.zdebug`` sections. Every failure of either, or of the decoder above them, is
translated into :class:`DwarfReadError` here, at one boundary.
"""

from __future__ import annotations

import os
import struct as _struct
import zlib
from collections.abc import Callable
from pathlib import Path

from elftools.common.exceptions import DWARFError, ELFError, ELFParseError, ELFRelocationError

from extractor.structs.dwarf.bounds import check_sections
from extractor.structs.dwarf.elf import ElfFile
from extractor.structs.dwarf.raw import DwarfReadError, RawLayout
from extractor.structs.dwarf.reloc import dwarf_sections
from extractor.structs.dwarf.sections import Sections
from extractor.structs.dwarf.walk import read_all


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
                elf = ElfFile(stream, os.fstat(stream.fileno()).st_size)
                check_sections(elf, label)
                if elf.section(".debug_info") is None and elf.section(".zdebug_info") is None:
                    raise DwarfReadError(label, "no-dwarf",
                                         "ELF has no DWARF debug info (.debug_info); rebuild with -g")
                data, dwarf = dwarf_sections(elf)
                return read_all(Sections(data, elf.little, dwarf), decl_filter)
            except DwarfReadError:
                raise
            except (ELFError, ELFParseError, DWARFError, ValueError, LookupError, AssertionError,
                    _struct.error, TypeError, AttributeError, EOFError, ArithmeticError,
                    RecursionError, zlib.error) as err:
                # a corrupt file can break pyelftools or this decoder almost anywhere; each
                # of these means "this file's DWARF cannot be read", never a crash
                message = str(err).splitlines()[0] if str(err) else type(err).__name__
                why = ("it needs a relocation the DWARF reader does not apply" if isinstance(err, ELFRelocationError)
                       else "the file is truncated or corrupt")
                raise DwarfReadError(label, "corrupt-elf",
                                     f"cannot read ELF/DWARF ({type(err).__name__}: {message[:160]}); {why}") from err
            except MemoryError as err:  # sizes the checks above cannot see ahead of reading
                raise DwarfReadError(label, "too-large", "reading its DWARF needs more memory than this "
                                     "machine gives: not read") from err
    except OSError as err:
        raise DwarfReadError(label, "unreadable", f"cannot open: {err.strerror or err}") from err
