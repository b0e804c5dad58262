"""On this machine's own libpython (it carries DWARF 5), every struct pahole lists (``pahole -a``:
named ones and typedef-named anonymous ones, 454 here) has the same size and member offsets in
archdiff's reader, and archdiff lists no struct that pahole does not. ``bench/dwarf_vs_pahole.py`` adds time and memory.

Known reference gap, decided by DWARF: pahole 1.24 does not handle ``DW_TAG_atomic_type`` and
prints size 0 for ``_Atomic`` members (``_Py_atomic_int._value``); archdiff gives the size of
the atomic type, which is what the struct's own DW_AT_byte_size confirms.
"""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

import pytest

from extractor.structs import read_binary_layouts
from structs_refs import run_pahole

pytestmark = pytest.mark.compilers  # pahole


def libpython() -> Path:
    libdir = Path(sysconfig.get_config_var("LIBDIR"))
    return libdir / (sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY"))


def test_every_struct_pahole_lists_has_the_same_layout():
    assert shutil.which("pahole"), "pahole (Debian package dwarves) is required"
    elf = libpython()
    assert elf.is_file(), f"no shared libpython at {elf}"
    ref = run_pahole(elf, anonymous=True)
    assert len(ref) >= 400  # pahole -a lists 454 aggregates for CPython 3.11.7 here
    ours: dict[str, list] = {}
    for layout in read_binary_layouts(elf):
        ours.setdefault(layout.qualname, []).append(layout)
    mismatched = []
    for name, theirs in ref.items():
        want = [(n, off, bit) for n, off, _size, bit in theirs.members]
        sizes = [size for _n, _off, size, _bit in theirs.members]
        ok = False
        for mine in ours.get(name, []):
            got = [(m.name, m.offset, m.bit_offset if m.bit_size else None) for m in mine.members]
            same_sizes = all(s in (0, m.size) for s, m in zip(sizes, mine.members))
            if got == want and same_sizes and (theirs.size in (0, mine.size)):
                ok = True
        if not ok:
            mismatched.append(name)
    assert mismatched == []
    assert set(ours) == set(ref)
    atomic = ours["_Py_atomic_int"][0]
    assert (atomic.size, atomic.members[0].size) == (4, 4)  # pahole says 0 for the member
