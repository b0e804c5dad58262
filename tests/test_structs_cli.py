"""``archdiff structs``: output on a good object, one-line diagnostics on bad input."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from click.testing import CliRunner

from archdiff.commands.structs import structs
from extractor.structs.render import byte_map

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "structs"


def compiled(tmp_path: Path) -> Path:
    obj = tmp_path / "ring.o"
    subprocess.run(["gcc", "-g", "-c", str(FIXTURE / "src" / "ring.c"), "-o", str(obj)], check=True)
    return obj


def test_text_output_matches_pahole_summary_lines(tmp_path):
    result = CliRunner().invoke(structs, [str(compiled(tmp_path)), "-C", "ring_slot"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[1] == "struct ring_slot {"
    assert "\t/* XXX 7 bytes hole, try to pack */" in lines
    assert "\t/* size: 24, cachelines: 1, members: 3 */" in lines
    assert "\t/* sum members: 11, holes: 1, sum holes: 7 */" in lines
    assert "\t/* padding: 6 */" in lines
    assert sum(1 for line in lines if line.startswith("struct ")) == 1


def test_json_output_has_byte_map_that_covers_the_struct(tmp_path):
    result = CliRunner().invoke(structs, [str(compiled(tmp_path)), "--json", "-C",
                                          "shm_ring_header", "-C", "flags_word"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)["structs"]
    assert [d["qualname"] for d in data] == ["flags_word", "shm_ring_header"]
    header = data[1]
    assert header["method"] == "dwarf-binary" and "shared-memory" in header["tags"]
    segments = header["byte_map"]
    assert sum(s["size"] for s in segments) == header["size"] == 144
    assert [(s["offset"], s["size"], s["kind"]) for s in segments
            if s["kind"] != "member"] == [(76, 4, "hole"), (138, 6, "padding")]
    # adjacent bit-fields are one segment, drawn bit by bit; the holes are pahole's, where it puts them
    flags = data[0]["byte_map"]
    assert flags[0] == {"offset": 0, "size": 0.5, "label": "ready:1, kind:3", "kind": "member",
                        "type": "unsigned int"}
    assert [(s["offset"], s["size"], s["label"]) for s in flags if s["kind"] != "member"] == \
        [(0.5, 3.5, "bit hole"), (5.5, 0.5, "bit hole"), (7, 1, "hole"), (13, 3, "bit padding")]
    assert sum(s["size"] for s in flags) == data[0]["size"] == 16


def test_bad_inputs_give_one_line_each_and_exit_2(tmp_path):
    obj = compiled(tmp_path)
    truncated = tmp_path / "truncated.o"
    truncated.write_bytes(obj.read_bytes()[: obj.stat().st_size // 3])
    stripped = tmp_path / "stripped.o"
    subprocess.run(["objcopy", "--strip-debug", str(obj), str(stripped)], check=True)
    text = tmp_path / "notes.txt"
    text.write_text("not an ELF\n")
    garbage = tmp_path / "garbage.o"
    data = bytearray(obj.read_bytes())
    data[64:4096] = bytes(len(data[64:4096]))  # zero the section contents after the header
    garbage.write_bytes(bytes(data))
    args = [str(p) for p in (truncated, stripped, text, garbage, tmp_path / "missing.o")]
    result = CliRunner(mix_stderr=False).invoke(structs, args) if "mix_stderr" in \
        CliRunner.__init__.__code__.co_varnames else CliRunner().invoke(structs, args)
    assert result.exit_code == 2
    assert "Traceback" not in result.output and not isinstance(result.exception, (
        ValueError, KeyError, IndexError, AttributeError, TypeError))
    err = result.stderr.splitlines()
    codes = {line.split(": error: ")[0]: line.rsplit("[", 1)[1] for line in err if ": error: " in line}
    assert codes == {str(stripped): "no-dwarf]", str(text): "not-elf]", str(truncated): "corrupt-elf]",
                     str(garbage): "corrupt-elf]", str(tmp_path / "missing.o"): "missing]"}
    assert err[-1].startswith("Error: no usable ELF")


def test_one_good_file_among_bad_ones_exits_0(tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x7fELF" + b"\x00" * 10)
    result = CliRunner().invoke(structs, [str(bad), str(compiled(tmp_path)), "-C", "value_u"])
    assert result.exit_code == 0
    assert "union value_u {" in result.output


def test_byte_map_of_union_draws_overlapping_members(tmp_path):
    from extractor.structs import read_binary_layouts

    union = {x.qualname: x for x in read_binary_layouts(compiled(tmp_path))}["value_u"]
    assert [(s.offset, s.size, s.kind) for s in byte_map(union)] == [
        (0, 4, "member"), (0, 8, "member"), (0, 12, "member"), (12, 4, "padding")]


def test_holes_after_anonymous_members_stay_in_place(tmp_path):
    source = tmp_path / "anon.c"
    source.write_text("struct two_anon { char a; union { long x; int y; }; char b; "
                      "union { double d; char c; }; };\nstruct two_anon g;\n")
    obj = tmp_path / "anon.o"
    subprocess.run(["gcc", "-g", "-c", str(source), "-o", str(obj)], check=True)
    result = CliRunner().invoke(structs, [str(obj)])
    lines = [line.strip() for line in result.output.splitlines() if line.strip()]
    holes = [i for i, line in enumerate(lines) if "XXX 7 bytes hole" in line]
    # a 7-byte hole after "a" and another after "b": each just before the union that follows
    assert len(holes) == 2
    assert lines[holes[0] - 1].startswith("char") and lines[holes[0] - 1].split()[1] == "a;"
    assert lines[holes[1] - 1].split()[1] == "b;"


def test_json_is_what_the_standard_library_writes_from_to_jsonable(tmp_path):
    """--json is written straight from the records (render_json); the reference is the generic
    path it replaced: to_jsonable, then json.dumps(indent=1, sort_keys=True). C and C++ objects
    (bases, bit-fields, unions, holes of both accountings), a record with an empty tuple and
    strings that json escapes."""
    import dataclasses

    from extractor.model import to_jsonable
    from extractor.structs import read_binary_layouts
    from extractor.structs.records import Method, unresolved_layout
    from extractor.structs.render import render_json

    layouts = list(read_binary_layouts(compiled(tmp_path)))
    for name in ("engine.cpp", "bitfields.cpp"):
        obj = tmp_path / f"{name}.o"
        subprocess.run(["g++", "-std=c++17", "-g", "-c", str(FIXTURE / "src" / name), "-o", str(obj)], check=True)
        layouts += read_binary_layouts(obj)
    layouts.append(unresolved_layout("ns::Späť<\"q\">\\", "class", "a/b.h", 3, "x.h:1: error: \t‘y’",
                                     tags=("ipc", "pinned")))
    layouts.append(dataclasses.replace(layouts[0], method=Method.PROBE_GXX, members=(), holes=()))
    assert len(layouts) > 30 and any(m.bit_size for x in layouts for m in x.members)
    layouts.sort()

    def reference(chosen):
        payload = [{**to_jsonable(x), "byte_map": to_jsonable(byte_map(x))} for x in chosen]
        return json.dumps({"structs": payload}, indent=1, sort_keys=True)

    assert render_json(layouts) == reference(layouts)
    assert render_json([]) == reference([])
    result = CliRunner().invoke(structs, [str(compiled(tmp_path)), "--json"])
    assert result.output == reference(read_binary_layouts(compiled(tmp_path))) + "\n"


def test_archdiff_structs_imports_no_more_than_reading_an_elf_needs(tmp_path):
    """The command's time on libpython is measured against pahole (python3 -m bench.dwarf_vs_pahole):
    running it must not import the comparator, release tracking, the probe planner and the C/C++
    graph behind it, the pipeline's steps and contexts, or pyelftools' ELF and DWARF parsers (an
    x86-64 object with plain sections is read without them). The shared records module
    (``extractor.model``, where the struct records' ``RecordKind`` is declared) is a dozen
    dataclasses and may load."""
    import sys

    obj = compiled(tmp_path)
    code = ("import sys\nfrom archdiff.cli import main\nsys.argv = ['archdiff', 'structs', '--json', sys.argv[1]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sorted(sys.modules)), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, str(obj)], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent.parent)
    assert json.loads(proc.stdout)["structs"]
    loaded = set(proc.stderr.split())
    assert "extractor.structs.dwarf" in loaded
    assert not loaded & {"comparator", "tracking", "extractor.steps", "extractor.context", "extractor.structs.plan", "extractor.cpp",
                         "extractor.structs.probe", "tree_sitter", "networkx", "elftools.elf.elffile",
                         "elftools.dwarf.dwarfinfo", "elftools.dwarf.enums"}, loaded
