"""The one package that imports pyelftools: struct, class and union layouts out of an ELF's DWARF.

``archdiff structs`` on this machine's libpython is meant to take at most 1.5x pahole's time on
the same file (``python3 -m bench.dwarf_vs_pahole`` measures it: 1.39x of its CPU time at load
average 11 on 2 cores, 1.45x before the reader's last round of work in the same run; the read
itself is under half of that, the interpreter, imports, records and JSON the rest; the layouts of
every struct ``pahole -a`` lists agree). pyelftools' per-DIE object API is far too slow for a whole library (libpython: 851k
DIEs, 33 s), and even its section and header parsing cost more than pahole's whole run, so the
bytes are read here and pyelftools is kept for what only it does: GNU ``.zdebug`` sections,
other CPUs' relocations, a fallback parser of line-program headers, and the reference that the
tests compare every direct read with.

* :mod:`.elf` reads the section table and the bytes (zlib-inflated) of the six sections used;
  :mod:`.reloc` relocates x86-64 ``ET_REL`` objects (probes) from their ``.rela`` tables;
  :mod:`.units` reads unit headers; :mod:`.bounds` refuses a section that claims more than the
  file holds or inflates to gigabytes, before it is read.
* :mod:`.abbrev` compiles each abbreviation once per distinct encoding (libpython: 1,305 of
  14,463 entries) into a plan: one ``struct.unpack_from`` per run of fixed-size forms, then
  strings and references cooked; :mod:`.die` decodes a DIE by its plan.
* :mod:`.walk` reads only the top level of each unit, namespaces and aggregates, and jumps over
  every other subtree (functions, their parameters and locals) through ``DW_AT_sibling`` or the
  abbreviation's fixed size, without building attributes. In C units (where a type is spelled
  by its own name) it reads a typedef from its name and type values alone and jumps over an
  anonymous aggregate, or one whose name, size, line and subtree size were seen in an earlier
  unit, without decoding it: a library's headers repeat the same types in every unit. An anonymous
  aggregate waits until a typedef names it. A second key (every member's name and placement)
  merges the rest. A probe's ``decl_filter`` is asked once per file, before members are decoded.
* A referenced type's DIE is decoded only when a member needs it, cached per unit
  (:mod:`.types`, :mod:`.layout`); DWARF 5 type units (``-fdebug-types-section``) are read too:
  types named through ``DW_AT_specification`` and referenced by ``DW_FORM_ref_sig8``.

Everything returned is a plain :class:`RawLayout`; ``extractor.structs.records`` turns it into
records. Every failure, of pyelftools or of this reader, is a :class:`DwarfReadError`.

The modules stand in floors that import only downwards (``.importlinter`` checks it):

* :mod:`.reader` -- the entry: opens the ELF, checks, relocates, walks; the one error boundary;
* :mod:`.walk` -- which DIEs become layouts, in every unit, and the type units by signature;
* :mod:`.layout` -- one aggregate's members and alignment;
* :mod:`.types` -- type spelling, size and alignment;
* :mod:`.die` -- one unit's DIE decoder;
* :mod:`.lines` -- line-program file tables;
* :mod:`.abbrev` (abbreviation plans), :mod:`.sections` (section bytes and string tables);
* :mod:`.bounds` (section sizes checked), :mod:`.reloc` (section bytes, relocated);
* :mod:`.elf` (section table), :mod:`.forms` (forms, attributes, tags, LEB128), :mod:`.raw`
  (what is returned, the error), :mod:`.units` (unit headers).
"""

from __future__ import annotations

from extractor.structs.dwarf.raw import DwarfReadError, RawLayout, RawMember
from extractor.structs.dwarf.reader import read_layouts

__all__ = ["DwarfReadError", "RawLayout", "RawMember", "read_layouts"]
