"""Layouts read from compiled fixtures equal what the reference tools print for the same object.

C fixtures are checked against pahole (sizes, member offsets/sizes, bit offsets, byte and bit
holes, padding); C++ fixtures against gdb's ``ptype /o`` plus gdb casts for base-class offsets,
because pahole 1.24 prints nothing usable for them (it skips classes with template parameters
and raises a false "BRAIN FART ALERT" on base classes).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from extractor.structs import read_binary_layouts
from extractor.structs.records import MemberKind
from structs_refs import gdb_base_offsets, run_gdb_ptype, run_pahole

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "structs" / "src"
C_STRUCTS = ["ring_slot", "shm_ring_header", "flags_word", "value_u", "with_anon", "packed_msg",
             "aligned_block", "tensor_desc", "buffer_attr_t"]
CXX_STRUCTS = ["engine::Base", "engine::Derived", "engine::Polymorphic", "engine::Mixed",
               "engine::Ring<double, 2>", "engine::Ring<short int, 3>", "engine::PaddedCounter",
               "engine::Request", "engine::Request::Header",
               "engine::Shared", "engine::Handle", "engine::(anonymous namespace)::Hidden"]


def compile_fixture(tmp_path: Path, source: str, *flags: str) -> Path:
    compiler = "g++" if source.endswith(".cpp") else "gcc"
    assert shutil.which(compiler), f"{compiler} is required"
    obj = tmp_path / (Path(source).stem + ".o")
    subprocess.run([compiler, "-g", *flags, "-c", str(FIXTURE / source), "-o", str(obj)],
                   check=True, cwd=FIXTURE.parent.parent.parent)
    return obj


def by_name(layouts):
    return {x.qualname: x for x in layouts}


def gdb_sizeof(obj: Path, type_name: str) -> int:
    out = subprocess.run(["gdb", "-batch", "-nx", "-ex", f"print sizeof({type_name})", str(obj)],
                         capture_output=True, text=True, check=True).stdout
    return int(out.split("=")[1])


@pytest.mark.parametrize("dwarf", ["-gdwarf-4", "-gdwarf-5"])
@pytest.mark.compilers
def test_c_layouts_equal_pahole(tmp_path, dwarf):
    assert shutil.which("pahole"), "pahole (Debian package dwarves) is required"
    obj = compile_fixture(tmp_path, "ring.c", dwarf)
    ours = by_name(read_binary_layouts(obj))
    # pahole lists a typedef-named anonymous struct only when asked for it by name
    ref = {**run_pahole(obj), **run_pahole(obj, "buffer_attr_t")}
    assert set(C_STRUCTS) <= set(ref) and set(C_STRUCTS) <= set(ours)
    for name in C_STRUCTS:
        mine, theirs = ours[name], ref[name]
        got = [(m.name, m.offset, m.size, m.bit_offset if m.bit_size else None)
               for m in mine.members]
        assert got == theirs.members, name
        if mine.kind == "union":  # pahole prints no size line for a union: gdb gives it
            assert mine.size == gdb_sizeof(obj, f"union {name}") == 16
            continue
        assert mine.size == theirs.size, name
        holes = [(h.size, "bits" if h.bits else "bytes") for h in mine.holes]
        assert holes == theirs.holes, name
        assert mine.padding == theirs.padding, name
        assert mine.bit_padding == theirs.bit_padding, name
        if theirs.sum_members is not None:
            assert (mine.sum_members, mine.sum_holes) == (theirs.sum_members, theirs.sum_holes)


def test_c_layout_details_that_pahole_states(tmp_path):
    obj = compile_fixture(tmp_path, "ring.c")
    # the fixture is compiled by absolute path: the declaring file maps back into the "repo"
    ours = by_name(read_binary_layouts(obj, roots=((FIXTURE.parent.parent.parent, ""),)))
    assert ours["packed_msg"].packed and ours["packed_msg"].align == 1
    assert ours["aligned_block"].align == 64  # pahole: __attribute__((__aligned__(64)))
    header = ours["shm_ring_header"]
    assert [m.name for m in header.members if m.crosses_cacheline] == ["name", "slots"]
    assert header.path == "fixtures/structs/src/ring.h" and header.line == 12
    assert ours["with_anon"].members[1].name == ""  # the anonymous union
    assert ours["with_anon"].members[3].type == "void (*)(int, const char *)"
    assert ours["flags_word"].members[4].type == "long long unsigned int"


@pytest.mark.compilers
def test_cxx_layouts_equal_gdb(tmp_path):
    assert shutil.which("gdb"), "gdb is required"
    obj = compile_fixture(tmp_path, "engine.cpp", "-std=c++17")
    ours = by_name(read_binary_layouts(obj))
    assert set(CXX_STRUCTS) <= set(ours)
    ref = run_gdb_ptype(obj, *[f"'{n}'" if "(" in n else n for n in CXX_STRUCTS])
    for name in CXX_STRUCTS:
        mine = ours[name]
        theirs = ref[f"'{name}'" if "(" in name else name]
        assert mine.size == theirs.size, name
        # gdb shows neither base sub-objects nor the vtable pointer among the members
        fields = [(m.name, m.offset, m.size, m.bit_offset if m.bit_size else None)
                  for m in mine.members
                  if m.kind is MemberKind.FIELD and not m.name.startswith("_vptr")]
        assert fields == theirs.members, name
        assert mine.padding == theirs.padding, name
        if not any(m.kind is not MemberKind.FIELD or m.name.startswith("_vptr")
                   for m in mine.members):
            holes = [(h.size, "bits" if h.bits else "bytes") for h in mine.holes]
            assert holes == theirs.holes, name


@pytest.mark.compilers
def test_cxx_base_offsets_equal_gdb_casts(tmp_path):
    obj = compile_fixture(tmp_path, "engine.cpp", "-std=c++17")
    ours = by_name(read_binary_layouts(obj))
    for derived in ("engine::Mixed", "engine::Derived"):
        bases = {m.type: m.offset for m in ours[derived].members if m.kind is MemberKind.BASE}
        assert bases == gdb_base_offsets(obj, derived, sorted(bases))
    assert by_name(read_binary_layouts(obj))["engine::Mixed"].members[0].name == \
        "engine::Polymorphic"  # the primary (polymorphic) base is placed first
    # DWARF itself decides what neither reference prints: the alignment
    assert ours["engine::PaddedCounter"].align == 64
    assert ours["engine::Request"].align == 64
    assert "cacheline-aligned" in ours["engine::Request"].tags


def test_dwarf2_style_bitfields_match_dwarf5(tmp_path):
    """DW_AT_bit_offset (DWARF 2/3, counted from the MSB) and DW_AT_data_bit_offset agree."""
    (tmp_path / "v2").mkdir()
    old = by_name(read_binary_layouts(compile_fixture(tmp_path / "v2", "ring.c", "-gdwarf-2")))
    new = by_name(read_binary_layouts(compile_fixture(tmp_path, "ring.c", "-gdwarf-5")))
    for name in C_STRUCTS:
        assert old[name].members == new[name].members, name


def test_relocatable_object_reads_like_the_linked_library(tmp_path):
    """The x86-64 relocation shortcut for ``.o`` files gives what the linked ``.so`` gives."""
    obj = compile_fixture(tmp_path, "engine.cpp", "-std=c++17", "-fPIC")
    lib = tmp_path / "libengine.so"
    subprocess.run(["g++", "-shared", str(obj), "-o", str(lib)], check=True)
    from_obj = read_binary_layouts(obj)
    from_lib = read_binary_layouts(lib)
    assert len(from_obj) == len(CXX_STRUCTS)
    assert [x.__class__.__name__ for x in from_obj] and \
        [(x.qualname, x.size, x.members, x.line, x.path) for x in from_obj] == \
        [(x.qualname, x.size, x.members, x.line, x.path) for x in from_lib]


def test_type_units_read_like_ordinary_debug_info(tmp_path):
    """-fdebug-types-section moves each type into a DWARF 5 type unit (named through
    DW_AT_specification, referenced by DW_FORM_ref_sig8): the layouts must not change."""
    plain, typed = tmp_path / "libplain.so", tmp_path / "libtyped.so"
    for out, extra in ((plain, []), (typed, ["-fdebug-types-section"])):
        subprocess.run(["g++", "-std=c++17", "-g", "-fPIC", "-shared", *extra,
                        str(FIXTURE / "engine.cpp"), "-o", str(out)], check=True)
    a, b = read_binary_layouts(plain), read_binary_layouts(typed)
    assert {x.qualname for x in a} >= set(CXX_STRUCTS)
    assert [(x.qualname, x.size, x.align, x.members, x.holes, x.line) for x in a] == \
        [(x.qualname, x.size, x.align, x.members, x.holes, x.line) for x in b]


@pytest.mark.parametrize("dwarf", ["-gdwarf-2", "-gdwarf-4", "-gdwarf-5"])
def test_direct_line_table_reader_equals_pyelftools(tmp_path, dwarf):
    """Declaring files come from a direct read of the line-program header; pyelftools' own
    parser of the same header is the reference."""
    from elftools.elf.elffile import ELFFile

    from extractor.structs.dwarf.die import Unit
    from extractor.structs.dwarf.lines import file_table, read_file_table
    from extractor.structs.dwarf.reader import Reader
    from extractor.structs.dwarf.reloc import relocated_dwarf_info
    from extractor.structs.dwarf.walk import prepare_unit

    obj = compile_fixture(tmp_path, "engine.cpp", "-std=c++17", dwarf)
    with obj.open("rb") as stream:
        info = relocated_dwarf_info(ELFFile(stream))
        reader = Reader(info, True)
        for cu in info.iter_CUs():
            unit = Unit(reader, cu)
            prepare_unit(unit)
            stmt_list = unit.cache[cu.cu_die_offset][1]["stmt_list"][0]
            direct = read_file_table(reader, stmt_list)
            assert direct == file_table(reader, cu)
            assert any(name.endswith("src/engine.hpp") for name in direct)
