"""Bit-field holes and padding equal the reference tools hole for hole, and the report draws exactly
those holes.

fixtures/structs/src/bitfields.h holds the shapes (mixed widths, units spanned, zero-width and
unnamed bit-fields, a union of bit-fields, a packed struct); it is compiled here as C (compared with
pahole) and as C++ (compared with gdb's ``ptype /o``, C++'s reference: see extractor.structs.records).
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from comparator.compare import compare_evidence
from comparator.kinds.structs import struct_segments
from comparator.registry import KINDS
from comparator.render_markdown import render_markdown
from extractor.structs import read_binary_layouts
from structs_refs import run_gdb_ptype, run_pahole  # noqa: I001 (tests/ on sys.path)
from tests.compare_support import evidence

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "structs" / "src"
SHAPES = ["mixed", "spanning", "spanning_long", "zero_width", "anon_bits", "bit_union", "packed_bits",
          "bits_then_char", "tail_bits", "char_after_long_bits", "narrow_then_wide"]


def compile_fixture(tmp_path: Path, source: str, *flags: str) -> Path:
    compiler = "g++" if source.endswith(".cpp") else "gcc"
    assert shutil.which(compiler), f"{compiler} is required"
    obj = tmp_path / (Path(source).name + ".o")
    subprocess.run([compiler, "-g", *flags, "-c", str(FIXTURE / source), "-o", str(obj)], check=True)
    return obj


def holes(layout) -> list[tuple[int, str]]:
    return [(h.size, "bits" if h.bits else "bytes") for h in layout.holes]


@pytest.mark.parametrize("dwarf", ["-gdwarf-4", "-gdwarf-5"])
@pytest.mark.compilers
def test_c_bitfields_equal_pahole(tmp_path, dwarf):
    assert shutil.which("pahole"), "pahole (Debian package dwarves) is required"
    obj = compile_fixture(tmp_path, "bitfields.c", dwarf)
    ours = {x.qualname: x for x in read_binary_layouts(obj)}
    ref = run_pahole(obj)
    assert set(SHAPES) <= set(ours) and set(SHAPES) <= set(ref)
    for name in SHAPES:
        mine, theirs = ours[name], ref[name]
        assert mine.language == "c"
        assert [(m.name, m.offset, m.size, m.bit_offset if m.bit_size else None) for m in mine.members] == \
            theirs.members, name
        assert holes(mine) == theirs.holes, name
        assert (mine.padding, mine.bit_padding) == (theirs.padding, theirs.bit_padding), name
        if mine.kind != "union":
            assert mine.size == theirs.size, name
    assert holes(ours["mixed"]) == [(59, "bits")]  # not 4 bytes and 27 bits


@pytest.mark.compilers
def test_cxx_bitfields_equal_gdb(tmp_path):
    assert shutil.which("gdb"), "gdb is required"
    obj = compile_fixture(tmp_path, "bitfields.cpp", "-std=c++17")
    ours = {x.qualname: x for x in read_binary_layouts(obj)}
    ref = run_gdb_ptype(obj, *SHAPES)
    for name in SHAPES:
        mine, theirs = ours[name], ref[name]
        assert mine.language == "c++" and mine.size == theirs.size, name
        # gdb shows a bit-field at the byte of its first bit, pahole (and the record) at its
        # storage unit: both place the same first bit
        assert [(m.name, m.offset * 8 + m.bit_offset) for m in mine.members] == \
            [(n, o * 8 + (b or 0)) for n, o, _s, b in theirs.members], name
        assert holes(mine) == theirs.holes, name
        assert (mine.padding, mine.bit_padding) == (theirs.padding, theirs.bit_padding), name
    assert holes(ours["mixed"]) == [(3, "bits"), (7, "bytes")]


@pytest.mark.parametrize("source", ["bitfields.c", "bitfields.cpp"])
def test_the_byte_map_draws_exactly_the_records_holes(tmp_path, source):
    layouts = {x.qualname: x for x in read_binary_layouts(compile_fixture(tmp_path, source))}
    for name in SHAPES:
        layout = layouts[name]
        segments = struct_segments(layout)
        drawn = sorted((s.offset, s.size) for s in segments if s.kind == "hole")
        stated = sorted((h.offset / 8, h.size / 8) if h.bits else (h.offset, h.size) for h in layout.holes)
        assert drawn == stated, name
        if layout.kind != "union":
            # members, holes and padding tile the struct: nothing drawn twice, nothing left out
            assert sum(s.size for s in segments) == layout.size, name
            ends = [s.offset + s.size for s in segments]
            assert [s.offset for s in segments[1:]] == ends[:-1], name


def test_the_report_row_counts_the_byte_holes_pahole_counts(tmp_path):
    layouts = {x.qualname: dataclasses.replace(x, tags=("bits",))  # a family the Markdown lists row by row
               for x in read_binary_layouts(compile_fixture(tmp_path, "bitfields.c"))}
    findings = compare_evidence(evidence("c-side", structs=[layouts[n] for n in SHAPES]), evidence("other"))
    rows = {s["qualname"]: s for f in findings["structs"]["families"] for s in f["a"]["structs"]}
    # pahole: "sum holes" counts byte holes only; mixed's 59 unused bits are a bit hole
    assert rows["mixed"]["hole_bytes"] == 0 and rows["zero_width"]["hole_bytes"] == 3
    assert rows["char_after_long_bits"]["hole_bytes"] == 2
    mixed = rows["mixed"]["segments"]
    assert [(s["offset"], s["size"], s["label"]) for s in mixed] == [
        (0, 0.625, "a:3, b:2"), (0.625, 7.375, "bit hole"), (8, 8, "c")]
    assert "| c-side 1 | mixed | 16 | 0 |" in render_markdown(findings, KINDS)
