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
    from extractor.structs.dwarf.die import Unit
    from extractor.structs.dwarf.elf import ElfFile
    from extractor.structs.dwarf.lines import file_table, read_file_table
    from extractor.structs.dwarf.reloc import dwarf_sections
    from extractor.structs.dwarf.sections import Sections
    from extractor.structs.dwarf.units import read_unit_headers
    from extractor.structs.dwarf.walk import prepare_unit

    obj = compile_fixture(tmp_path, "engine.cpp", "-std=c++17", dwarf)
    with obj.open("rb") as stream:
        elf = ElfFile(stream, obj.stat().st_size)
        data, dwarf_info = dwarf_sections(elf)
        reader = Sections(data, True, dwarf_info)
        for header in read_unit_headers(reader.data, True):
            unit = Unit(reader, header)
            prepare_unit(unit)
            stmt_list = unit.cache[header.die_offset][1]["stmt_list"]
            direct = read_file_table(reader, stmt_list)
            assert list(direct) == file_table(reader, header.offset)
            assert any(name.endswith("src/engine.hpp") for name in direct)


def _objects_of_every_shape(tmp_path: Path) -> list[Path]:
    """Relocatable objects and shared libraries, DWARF 2 to 5, 64-bit DWARF, type units,
    compressed sections (SHF_COMPRESSED, and GNU .zdebug, which pyelftools reads), C and C++, and
    this interpreter's libpython."""
    import sysconfig

    out = []
    for name, source, flags in (("d2.o", "engine.cpp", ["-gdwarf-2"]), ("d4.o", "engine.cpp", ["-gdwarf-4"]),
                                ("d5.o", "ring.c", ["-gdwarf-5"]), ("d64.o", "bitfields.c", ["-gdwarf64"]),
                                ("gz.o", "bitfields.cpp", ["-gz=zlib"]),
                                ("libtu.so", "engine.cpp", ["-fdebug-types-section", "-shared", "-fPIC"]),
                                ("lib4.so", "bitfields.cpp", ["-gdwarf-4", "-shared", "-fPIC"]),
                                ("libgnu.so", "ring.c", ["-shared", "-fPIC", "-Wl,--compress-debug-sections=zlib-gnu"])):
        compiler = "g++" if source.endswith(".cpp") else "gcc"
        out.append(tmp_path / name)
        subprocess.run([compiler, "-g", *flags, *([] if name.endswith(".so") else ["-c"]),
                        str(FIXTURE / source), "-o", str(out[-1])], check=True)
    libpython = Path(sysconfig.get_config_var("LIBDIR")) / (
        sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY"))
    return out + ([libpython] if libpython.is_file() else [])


def test_sections_and_unit_headers_read_directly_equal_pyelftools(tmp_path):
    """The reader takes the section table and the bytes of the sections it uses straight from the
    ELF (relocating x86-64 objects itself) and reads unit headers itself; pyelftools' ELFFile and
    DWARFInfo over the same file, relocated by pyelftools, are the reference for all of it."""
    from elftools.elf.elffile import ELFFile

    from extractor.structs.dwarf.elf import ElfFile
    from extractor.structs.dwarf.reloc import _DWARFINFO_NAMES, SECTIONS, dwarf_sections
    from extractor.structs.dwarf.units import DW_UT_COMPILE, read_unit_headers

    objects = _objects_of_every_shape(tmp_path)
    for path in objects:
        with path.open("rb") as stream:
            elf = ElfFile(stream, path.stat().st_size)
            theirs_elf = ELFFile(stream)
            assert (elf.little, elf.elfclass) == (theirs_elf.little_endian, theirs_elf.elfclass)
            assert [(s.name, s.offset, s.size, s.link, s.info, s.entsize, s.flags) for s in elf.sections] == \
                [(s.name, s["sh_offset"], s["sh_size"], s["sh_link"], s["sh_info"], s["sh_entsize"], s["sh_flags"])
                 for s in theirs_elf.iter_sections()], path.name
            for section in elf.sections:
                if section.name.startswith(".debug") or section.name in (".symtab", ".strtab"):
                    assert elf.data(section) == theirs_elf.get_section_by_name(section.name).data() \
                        or elf.section(section.name) is not section, (path.name, section.name)
            symtab = elf.section(".symtab")
            if symtab is not None and elf.elfclass == 64:
                theirs = theirs_elf.get_section_by_name(".symtab")
                assert [elf.symbol_value(symtab, i) for i in range(theirs.num_symbols())] == \
                    [sym["st_value"] for sym in theirs.iter_symbols()], path.name
            data, _dwarf = dwarf_sections(elf)
            reference = theirs_elf.get_dwarf_info(relocate_dwarf_sections=True, follow_links=False)
            for name in SECTIONS:
                sec = getattr(reference, _DWARFINFO_NAMES[name])
                assert data[name] == (sec.stream.getvalue() if sec is not None else b""), (path.name, name)
            ours = read_unit_headers(data[".debug_info"], elf.little)
            theirs = list(reference.iter_CUs())
            assert len(ours) == len(theirs) > 0, path.name
            for mine, cu in zip(ours, theirs):
                h = cu.header
                assert (mine.offset, mine.end, mine.die_offset, mine.version, mine.address_size,
                        mine.abbrev_offset, mine.offset_size) == \
                    (cu.cu_offset, cu.cu_offset + cu.size, cu.cu_die_offset, h["version"], h["address_size"],
                     h["debug_abbrev_offset"], 8 if cu.dwarf_format() == 64 else 4), path.name
                if "unit_type" in h:
                    assert mine.unit_type == {"DW_UT_compile": 1, "DW_UT_type": 2, "DW_UT_partial": 3}[h["unit_type"]]
                    if h["unit_type"] == "DW_UT_type":
                        assert (mine.type_signature, mine.type_offset) == (h["type_signature"], h["type_offset"])
                else:
                    assert mine.unit_type == DW_UT_COMPILE
    assert {p.name for p in objects} >= {"d64.o", "libtu.so"}

def test_the_dwarf_codes_written_out_are_pyelftools_own():
    """forms.py names its tags, attributes and forms by code without importing pyelftools' enum
    tables: every code must mean what those tables say, and the abbreviation compiler must give
    every attribute and form code the meaning the tables gave it."""
    from elftools.dwarf.enums import ENUM_DW_AT, ENUM_DW_FORM, ENUM_DW_TAG

    from extractor.structs.dwarf import abbrev, forms

    for ours, theirs in ((forms.TAG_CODES, ENUM_DW_TAG), (forms.AT_CODES, ENUM_DW_AT), (forms.FORM_CODES, ENUM_DW_FORM)):
        assert all(theirs[name] == code for name, code in ours.items())
    at_names = {v: k for k, v in ENUM_DW_AT.items()}
    form_names = {v: k for k, v in ENUM_DW_FORM.items()}
    assert set(forms.FORM_CODES) == set(forms.FORMS)
    for code in range(0x4000):  # as the compiler read them with pyelftools' tables
        assert abbrev._KEPT.get(code) == forms.KEEP.get(at_names.get(code, "")), hex(code)
        name = form_names.get(code, "")
        expected = (*forms.FORMS[name], forms.STR_FORMS.get(name), name in forms.CU_REFS) if name in forms.FORMS else None
        assert abbrev._FORM_SPECS.get(code) == expected, hex(code)


def test_every_die_decodes_as_pyelftools_reads_it(tmp_path):
    """The DIE decoder follows compiled abbreviation plans (one unpack per run of fixed-size
    forms, strings and references cooked after); pyelftools' own DIE parser is the reference for
    every DIE of objects of every shape: the same kept attributes, values and DIE size."""
    from elftools.elf.elffile import ELFFile

    from extractor.structs.dwarf.die import Signature, Unit
    from extractor.structs.dwarf.elf import ElfFile
    from extractor.structs.dwarf.forms import KEEP
    from extractor.structs.dwarf.reloc import dwarf_sections
    from extractor.structs.dwarf.sections import Sections
    from extractor.structs.dwarf.units import read_unit_headers
    from extractor.structs.dwarf.walk import prepare_unit

    checked = 0
    std = tmp_path / "std.cpp"  # libstdc++'s headers: templates, namespaces, most forms GCC emits
    std.write_text("#include <map>\n#include <memory>\n#include <string>\n"
                   "struct Holder { std::map<std::string, std::shared_ptr<int>> m; };\nHolder holder;\n")
    subprocess.run(["g++", "-std=c++17", "-g", "-c", str(std), "-o", str(tmp_path / "std.o")], check=True)
    for path in [*_objects_of_every_shape(tmp_path), tmp_path / "std.o"]:
        if path.suffix not in (".o", ".so") or path.stat().st_size > 2_000_000:
            continue  # libpython: 851k DIEs take pyelftools half a minute
        with path.open("rb") as stream:
            elf = ElfFile(stream, path.stat().st_size)
            data, dwarf = dwarf_sections(elf)
            sections = Sections(data, elf.little, dwarf)
            reference = ELFFile(stream).get_dwarf_info(relocate_dwarf_sections=True, follow_links=False)
            for header, cu in zip(read_unit_headers(sections.data, elf.little), reference.iter_CUs()):
                unit = Unit(sections, header)
                prepare_unit(unit)
                for die in cu.iter_DIEs():
                    if die.is_null():
                        continue
                    abbrev, attrs, after = unit.decode(die.offset)
                    assert (abbrev.tag if not abbrev.tag.startswith("DW_TAG_0x") else die.tag) == die.tag
                    assert after - die.offset == die.size, (path.name, die.offset)
                    want = {}
                    for name, attr in die.attributes.items():
                        key = KEEP.get(name)
                        if key is None or attr.form == "DW_FORM_addr":
                            continue
                        value = attr.value
                        if attr.form in ("DW_FORM_ref1", "DW_FORM_ref2", "DW_FORM_ref4", "DW_FORM_ref8",
                                         "DW_FORM_ref_udata"):
                            value += cu.cu_offset
                        elif isinstance(value, bytes):
                            value = value.decode("utf-8", "replace")
                        elif isinstance(value, list):  # a block: pyelftools gives its bytes as ints
                            value = bytes(value)
                        elif value is True:
                            value = 1
                        want[key] = value
                    got = {k: (int(v) if isinstance(v, Signature) else v) for k, v in attrs.items()}
                    assert got == want, (path.name, die.offset, die.tag)
                    checked += 1
    assert checked > 4000


@pytest.mark.compilers
@pytest.mark.parametrize("cxx", ["aarch64-linux-gnu-g++", "powerpc64le-linux-gnu-g++", "s390x-linux-gnu-g++"])
def test_cross_compiled_objects_are_relocated_as_pyelftools_does(tmp_path, cxx):
    """Probe objects of the CPUs archdiff cross-compiles for (little- and big-endian) are relocated
    by the reader's own shortcut, not pyelftools' (a minute per torch probe): the bytes of every
    section it reads must be what pyelftools' relocation gives."""
    from elftools.elf.elffile import ELFFile

    from extractor.structs.dwarf.elf import ElfFile
    from extractor.structs.dwarf.reloc import _ABSOLUTE_RELOCS, _DWARFINFO_NAMES, SECTIONS, _read, _relocated

    assert shutil.which(cxx), f"{cxx} is required (Debian package g++-{cxx.removesuffix('-g++')})"
    obj = tmp_path / "engine.o"
    subprocess.run([cxx, "-std=c++17", "-g", "-c", "-fno-eliminate-unused-debug-types",
                    str(FIXTURE / "engine.cpp"), "-o", str(obj)], check=True)
    with obj.open("rb") as stream:
        elf = ElfFile(stream, obj.stat().st_size)
        assert elf.section(".rela.debug_info").size > 0  # the case is what it claims to be
        data = _relocated(elf, _read(elf), _ABSOLUTE_RELOCS[elf.e_machine])
        assert data is not None  # the shortcut, not pyelftools' general path
        reference = ELFFile(stream).get_dwarf_info(relocate_dwarf_sections=True, follow_links=False)
        for name in SECTIONS:
            theirs = getattr(reference, _DWARFINFO_NAMES[name])
            assert data[name] == (theirs.stream.getvalue() if theirs is not None else b""), name
    assert {x.qualname for x in read_binary_layouts(obj)} >= set(CXX_STRUCTS)
