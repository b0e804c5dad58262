"""The one package that imports pyelftools: struct, class and union layouts out of an ELF's DWARF.

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

Section sizes are checked before pyelftools reads them (:mod:`.bounds`): a header that claims
more than the file holds, or a compressed section that inflates to gigabytes, is refused.

One module per DWARF concept: :mod:`.forms` (forms, attributes, tags, LEB128), :mod:`.abbrev`
(abbreviation tables), :mod:`.die` (a unit's DIE decoder), :mod:`.lines` (line-program file
tables), :mod:`.reloc` (relocation of ``ET_REL`` objects), :mod:`.reader` (sections, string
tables, type units), :mod:`.walk` (which DIEs become layouts), :mod:`.layout` (one aggregate's
members and alignment) and :mod:`.types` (type spelling).
"""

from __future__ import annotations

import os
import struct as _struct
import zlib
from collections.abc import Callable
from pathlib import Path

from elftools.common.exceptions import DWARFError, ELFError, ELFParseError, ELFRelocationError
from elftools.elf.elffile import ELFFile

from extractor.structs.dwarf.bounds import check_sections
from extractor.structs.dwarf.raw import DwarfReadError, RawLayout, RawMember
from extractor.structs.dwarf.reader import Reader
from extractor.structs.dwarf.reloc import relocated_dwarf_info
from extractor.structs.dwarf.walk import read_all

__all__ = ["DwarfReadError", "RawLayout", "RawMember", "read_layouts"]


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
                check_sections(elf, os.fstat(stream.fileno()).st_size, label)
                if not elf.has_dwarf_info(strict=True):
                    raise DwarfReadError(label, "no-dwarf",
                                         "ELF has no DWARF debug info (.debug_info); rebuild with -g")
                dwarf = relocated_dwarf_info(elf)
                reader = Reader(dwarf, elf.little_endian)
                return read_all(reader, decl_filter)
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
