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

One module per DWARF concept, in floors that import only downwards (``.importlinter`` checks it):

* :mod:`.reader` -- the entry: opens the ELF, checks, relocates, walks; the one error boundary;
* :mod:`.walk` -- which DIEs become layouts, in every unit, and the type units by signature;
* :mod:`.layout` -- one aggregate's members and alignment;
* :mod:`.types` -- type spelling, size and alignment;
* :mod:`.die` -- one unit's DIE decoder;
* :mod:`.lines` -- line-program file tables;
* :mod:`.abbrev` (abbreviation tables), :mod:`.sections` (section bytes and string tables);
* :mod:`.bounds` (section sizes checked), :mod:`.reloc` (relocation of ``ET_REL`` objects);
* :mod:`.forms` (forms, attributes, tags, LEB128), :mod:`.raw` (what is returned, the error).
"""

from __future__ import annotations

from extractor.structs.dwarf.raw import DwarfReadError, RawLayout, RawMember
from extractor.structs.dwarf.reader import read_layouts

__all__ = ["DwarfReadError", "RawLayout", "RawMember", "read_layouts"]
