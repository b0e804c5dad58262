"""Hostile ELF files for ``archdiff structs`` and ``extract --binary``: DWARF whose sibling links
loop, sections that claim more bytes than the file holds, and compressed debug sections that
inflate to gigabytes. Each ELF is compiled from a tiny C++ file at test time, then patched at
offsets pyelftools reports. Each is a one-line error naming the file, never a hang or a
MemoryError."""

from __future__ import annotations

import struct
import subprocess
import time
import zlib
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from tests.hostile.support import memory_cap

# A reader that inflated the bomb would take 8 GB of the machine: under this cap it fails fast
MEMORY = memory_cap(3 * 1024**3)

SOURCE = """
struct Outer {
    struct Inner { int a; char b; } inner;  // a nested type: a DIE with children and a sibling
    double d;
};
struct User { Outer outer; short s; };
User user_;
// functions with children (parameters, locals): the walk steps over them through their sibling
// links; g++ emits them last and in reverse order, so the first of them has a sibling
int twice(int x) { int y = x * 2; return y; }
int thrice(int x) { return x * 3; }
"""


def _compile(tmp: Path, *flags: str) -> Path:
    (tmp / "t.cc").write_text(SOURCE)
    obj = tmp / "t.o"
    subprocess.run(["g++", "-g", "-gdwarf-4", *flags, "-c", str(tmp / "t.cc"), "-o", str(obj)], check=True)
    return obj


def _sibling_attribute_of(obj: Path, *die_names: str) -> tuple[int, int]:
    """(file offset of the DW_AT_sibling value of the first DIE named one of ``die_names``, that
    DIE's CU-relative offset)."""
    with obj.open("rb") as fh:
        elf = ELFFile(fh)
        info = elf.get_section_by_name(".debug_info")
        for cu in elf.get_dwarf_info().iter_CUs():
            for die in cu.iter_DIEs():
                name = die.attributes.get("DW_AT_name")
                if name is not None and name.value.decode() in die_names and "DW_AT_sibling" in die.attributes:
                    attr = die.attributes["DW_AT_sibling"]
                    assert attr.form == "DW_FORM_ref4"
                    return info["sh_offset"] + attr.offset, die.offset - cu.cu_offset
    raise AssertionError(f"no DIE named one of {die_names} with a sibling link")


def looping_elf(tmp: Path) -> Path:
    """The sibling link of a function (the reader steps over its parameters and locals through that
    link) points back at the function itself: following it never ends."""
    obj = _compile(tmp)
    at, own = _sibling_attribute_of(obj, "twice", "thrice")
    data = bytearray(obj.read_bytes())
    data[at:at + 4] = struct.pack("<I", own)
    obj.write_bytes(bytes(data))
    return obj


def _section_header(elf: ELFFile, name: str) -> int:
    """File offset of section ``name``'s header."""
    index = next(i for i, s in enumerate(elf.iter_sections()) if s.name == name)
    return elf["e_shoff"] + index * elf["e_shentsize"]


def _replace_section(obj: Path, name: str, payload: bytes) -> None:
    """Make section ``name`` hold ``payload``, appended to the file (its header's sh_offset and
    sh_size, at +24 and +32 of an Elf64_Shdr, point there)."""
    with obj.open("rb") as fh:
        header_at = _section_header(ELFFile(fh), name)
    data = bytearray(obj.read_bytes())
    data[header_at + 24:header_at + 40] = struct.pack("<QQ", len(data), len(payload))
    obj.write_bytes(bytes(data) + payload)


def inflating_elf(tmp: Path, gigabytes: int) -> Path:
    """``.debug_info`` compressed (SHF_COMPRESSED, zlib) and replaced by a stream that inflates to
    ``gigabytes`` GB of zeros, its header declaring that size: a few MB on disk."""
    obj = _compile(tmp, "-gz=zlib")
    with obj.open("rb") as fh:
        assert ELFFile(fh).get_section_by_name(".debug_info").compressed
    size = gigabytes * 1024**3
    _replace_section(obj, ".debug_info", struct.pack("<IIQQ", 1, 0, size, 1) + zlib_bomb(size))  # Elf64_Chdr
    return obj


def zlib_bomb(size: int) -> bytes:
    """A valid zlib stream of ``size`` zero bytes (a multiple of 64 MiB), built in seconds: after a
    full flush the compressor starts afresh, so one compressed 64 MiB block repeats verbatim; the
    trailer is the Adler-32 of ``size`` zeros, ``(size mod 65521) << 16 | 1``."""
    block = b"\0" * (64 * 1024**2)
    compressor = zlib.compressobj(9)
    first = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    end = compressor.flush()[:-4]  # the empty final block, without the checksum
    return first + again * (size // len(block) - 1) + end + ((size % 65521) << 16 | 1).to_bytes(4, "big")


def lying_gnu_elf(tmp: Path) -> Path:
    """``.zdebug_info`` (GNU style: ``ZLIB``, the inflated size, a zlib stream) that declares its
    true few hundred bytes but holds a stream of 8 GB, which pyelftools would inflate whole."""
    obj = _compile(tmp, "-gz=zlib-gnu")
    with obj.open("rb") as fh:
        section = ELFFile(fh).get_section_by_name(".zdebug_info")
        fh.seek(section["sh_offset"])
        declared = fh.read(12)
    assert declared[:4] == b"ZLIB"
    _replace_section(obj, ".zdebug_info", declared + zlib_bomb(8 * 1024**3))
    return obj


def overlong_elf(tmp: Path) -> Path:
    """``.debug_info``'s header claims 2**60 bytes, far past the end of the file."""
    obj = _compile(tmp)
    with obj.open("rb") as fh:
        header_at = _section_header(ELFFile(fh), ".debug_info")
    data = bytearray(obj.read_bytes())
    data[header_at + 32:header_at + 40] = struct.pack("<Q", 1 << 60)
    obj.write_bytes(bytes(data))
    return obj


CASES = {
    "sibling-loop": (looping_elf, "the file is truncated or corrupt"),
    "inflates-to-8-GB": (lambda tmp: inflating_elf(tmp, 8), "inflates to 8589934592 bytes"),
    "section-past-the-end": (overlong_elf, "extends past the end of the file"),
    "gnu-stream-longer-than-declared": (lying_gnu_elf, "inflates past the"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_elf_is_one_line_for_structs(sandbox, case):
    make, expected = CASES[case]
    elf = make(sandbox.input)
    started = time.monotonic()
    proc = sandbox.run("structs", str(elf), timeout=90, fault=MEMORY)
    assert time.monotonic() - started < 60
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"{elf}: error: ") and expected in lines[0], proc.stderr
    assert "MemoryError" not in proc.stderr and "internal error" not in proc.stderr
    sandbox.assert_contained()


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_binary_is_a_diagnostic_of_extract(sandbox, case):
    make, expected = CASES[case]
    elf = make(sandbox.input)
    tree = sandbox.input / "tree"
    tree.mkdir()
    (tree / "a.py").write_text("def a():\n    pass\n")
    proc = sandbox.run("extract", str(tree), "-o", str(sandbox.out), "--cache-dir", str(sandbox.cache), "-j", "1",
                       "--no-probes", "--binary", str(elf), timeout=90, fault=MEMORY)
    assert proc.returncode == 0, proc.stderr
    assert f"t.o:0: error: " in proc.stderr and expected in proc.stderr, proc.stderr
    sandbox.assert_contained()


def test_the_unpatched_object_reads_cleanly(tmp_path):
    """The patches above are what breaks the files: the same object unpatched has its layouts."""
    from extractor.structs.dwarf import read_layouts

    for flag in ("-gz=none", "-gz=zlib"):  # GNU .zdebug objects the reader does not read yet
        names = {layout.qualname for layout in read_layouts(_compile(tmp_path, flag))}
        assert {"Outer", "Outer::Inner", "User"} <= names, flag
