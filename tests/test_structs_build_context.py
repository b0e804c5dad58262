"""Struct probes with the user's build context: a compile database's per-file defines and include
directories, --define/--include-dir, C headers probed as C, the context in the cache key."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from extractor.acquire.headers import resolve_build_settings
from extractor.buildsettings import BuildSettings
from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
from structs_refs import run_pahole
from tests.conftest import FIXTURES

DB = FIXTURES / "compile_db"


@pytest.fixture()
def tree(tmp_path) -> Path:
    """The fixture's sources as a project, and its vendor SDK in a directory outside it."""
    proj = tmp_path / "proj"
    shutil.copytree(DB / "src", proj / "src")
    shutil.copy(DB / "compile_commands.json", tmp_path / "compile_commands.json")
    shutil.copytree(DB / "vendor", tmp_path / "sdk")
    return tmp_path


def structs(tmp: Path, build: BuildSettings, cache: str = "cache") -> dict[str, dict]:
    options = ExtractOptions(jobs=1, cache_dir=tmp / cache, build=build)
    bundle = extract_system([str(tmp / "proj")], name="db", version="1", options=options).bundle
    return {s["qualname"]: s for s in bundle["structs"]}, bundle["stats"]["structs"]


def pahole_of(tmp: Path, source: str, *flags: str, name: str, compiler: str = "g++"):
    obj = tmp / (Path(source).stem + ".o")
    subprocess.run([compiler, "-g", "-c", *flags, "-I", str(tmp / "proj" / "src"), str(tmp / "proj" / "src" / source),
                    "-o", str(obj)], check=True)
    return run_pahole(obj, name)[name]


@pytest.mark.compilers
def test_per_file_defines_of_the_nearest_translation_unit_change_the_layout(tree):
    plain, _ = structs(tree, BuildSettings())
    assert plain["Packet"]["size"] == 8  # without the build's -DWITH_TRACE there is no trace id
    with_db, stats = structs(tree, BuildSettings(compile_commands=str(tree / "compile_commands.json")))
    packet, counter = with_db["Packet"], with_db["Counter"]
    # send.cc, the translation unit that includes packet.h, is built with -DWITH_TRACE
    assert [m["name"] for m in packet["members"]] == ["id", "trace_id", "flags"]
    # counter.cc is built without -DWIDE_COUNTERS: its header keeps the narrow layout
    assert [m["name"] for m in counter["members"]] == ["hits", "tag"]
    # the same layouts as pahole on objects built with each translation unit's own flags
    for layout, source, flags in ((packet, "net/send.cc", ["-DWITH_TRACE", "-std=c++17"]),
                                  (counter, "util/counter.cc", ["-std=c++17"])):
        ref = pahole_of(tree, source, *flags, name=layout["qualname"])
        assert layout["size"] == ref.size
        assert [(m["name"], m["offset"], m["size"]) for m in layout["members"]] == \
            [(n, o, s) for n, o, s, _b in ref.members]
        assert layout["padding"] == ref.padding
    assert (packet["size"], packet["padding"]) == (24, 7)
    assert stats["compile_commands_entries_matched"] == 3
    assert stats["compile_commands_flags_ignored"] >= 1  # -fplugin=... is never passed on
    # vendor_frame.h, which no translation unit includes, takes the nearest by directory (send.cc)
    assert stats["headers_with_translation_unit_flags"] == 4


@pytest.mark.compilers
def test_a_c_header_is_probed_as_c_with_the_projects_standard(tree):
    found, stats = structs(tree, BuildSettings(compile_commands=str(tree / "compile_commands.json")))
    ring = found["ring"]
    assert ring["method"] == "probe-g++" and ring["language"] == "c" and ring["size"] == 32
    ref = pahole_of(tree, "ring/ring.c", "-std=c99", name="ring", compiler="gcc")
    assert [(m["name"], m["offset"]) for m in ring["members"]] == [(n, o) for n, o, _s, _b in ref.members]
    # without a compile database the graph's includers decide: ring.c is C
    plain, plain_stats = structs(tree, BuildSettings(), cache="cache2")
    assert plain["ring"]["language"] == "c" and plain_stats["headers_as_c"] == 1


def test_include_dirs_and_defines_from_the_command_line(tree):
    missing, _ = structs(tree, BuildSettings())
    frame = missing["VendorFrame"]
    assert frame["method"] == "unresolved" and frame["missing"] == "vendor/api.h"
    found, stats = structs(tree, BuildSettings(include_dirs=(str(tree / "sdk" / "include"),),
                                               defines=("WIDE_COUNTERS", "WITH_TRACE=1")), cache="cache2")
    assert found["VendorFrame"]["size"] == 24 and found["VendorFrame"]["method"] == "probe-g++"
    assert [m["name"] for m in found["Counter"]["members"]] == ["hits", "total", "tag"]
    assert stats["build_context"] == {"compile_commands": False, "defines": ["WIDE_COUNTERS", "WITH_TRACE=1"],
                                      "headers_from": [], "include_dirs": 1}


def test_errors_in_headers_outside_the_tree_name_no_path_of_this_machine(tree):
    (tree / "sdk" / "include" / "vendor" / "broken.h").write_text("#pragma once\nthis is not a declaration;\n")
    (tree / "proj" / "src" / "net" / "uses_broken.h").write_text(
        "#pragma once\n#include <vendor/broken.h>\nstruct UsesBroken { int a; };\n")
    found, _ = structs(tree, BuildSettings(include_dirs=(str(tree / "sdk" / "include"),)))
    error = found["UsesBroken"]["error"]
    assert error.startswith("<sdk/include>/vendor/broken.h:2:") and str(tree) not in error


def test_the_build_context_is_part_of_the_cache_key(tree):
    first, _ = structs(tree, BuildSettings(defines=("WIDE_COUNTERS",)))
    again, _ = structs(tree, BuildSettings())  # same cache directory, other context
    assert len(first["Counter"]["members"]) == 3 and len(again["Counter"]["members"]) == 2
    # an include directory's contents are part of it too
    sdk = tree / "sdk" / "include"
    before, _ = structs(tree, BuildSettings(include_dirs=(str(sdk),)))
    (sdk / "vendor" / "api.h").write_text("#pragma once\ntypedef struct { void* impl; } vendor_handle_t;\n")
    from extractor.acquire.headers import directory_digest
    directory_digest.cache_clear()
    after, _ = structs(tree, BuildSettings(include_dirs=(str(sdk),)))
    assert (before["VendorFrame"]["size"], after["VendorFrame"]["size"]) == (24, 16)


def test_a_header_reaching_a_directory_the_user_did_not_name_is_still_refused(tree):
    # the SDK found through the compile database's -I would be fine; a header naming it by an
    # absolute path it was never given is not
    (tree / "proj" / "src" / "net" / "sneaky.h").write_text(
        f'#pragma once\n#include "{tree / "sdk" / "include" / "vendor" / "api.h"}"\nstruct Sneaky {{ int a; }};\n')
    found, _ = structs(tree, BuildSettings())
    assert found["Sneaky"]["method"] == "unresolved"
    assert found["Sneaky"]["error"].startswith("refused: the header includes a file outside")


def test_bad_build_settings_are_one_line_errors(tmp_path):
    from extractor.errors import UserInputError

    for settings, text in ((BuildSettings(include_dirs=(str(tmp_path / "nope"),)), "no such directory"),
                           (BuildSettings(defines=("1BAD",)), "NAME or NAME=VALUE"),
                           (BuildSettings(compile_commands=str(tmp_path / "none.json")), "no such file"),
                           (BuildSettings(headers_from=("pypi:",)), "pypi:NAME")):
        with pytest.raises(UserInputError, match=text):
            resolve_build_settings(settings, tmp_path)
    bad = tmp_path / "cc.json"
    bad.write_text(json.dumps({"not": "a list"}))
    from extractor.structs.buildcontext import read_compile_commands
    with pytest.raises(UserInputError, match="JSON list"):
        read_compile_commands(bad, {}, [])


def test_extract_cli_takes_the_options_and_a_system_file(tree):
    import os
    import sys

    env = {**os.environ, "ARCHDIFF_CACHE": str(tree / "cli-cache")}
    out = tree / "out"
    done = subprocess.run([sys.executable, "-m", "archdiff.cli", "extract", str(tree / "proj"), "-o", str(out), "-j", "1",
                           "--compile-commands", str(tree / "compile_commands.json"), "--define", "WIDE_COUNTERS",
                           "--include-dir", str(tree / "sdk" / "include")], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    found = {s["qualname"]: s for s in json.loads((out / "evidence.json").read_text())["structs"]}
    assert (found["Packet"]["size"], found["Counter"]["size"], found["VendorFrame"]["size"]) == (24, 24, 24)
    system = tree / "system.yaml"
    system.write_text("name: db\nversion: '1'\nsources: [proj]\nbuild:\n  include_dirs: [sdk/include]\n"
                      "  defines: [WITH_TRACE]\n")
    done = subprocess.run([sys.executable, "-m", "archdiff.cli", "extract", str(system), "-o", str(out), "-j", "1"],
                          capture_output=True, text=True, env=env, cwd=tree)
    assert done.returncode == 0, done.stderr
    found = {s["qualname"]: s for s in json.loads((out / "evidence.json").read_text())["structs"]}
    assert (found["Packet"]["size"], found["VendorFrame"]["size"]) == (24, 24)
    bad = subprocess.run([sys.executable, "-m", "archdiff.cli", "extract", str(tree / "proj"), "-o", str(out),
                          "--include-dir", str(tree / "missing")], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0 and "missing" in bad.stderr


@pytest.mark.compilers
def test_headers_for_a_cpu_s_vector_extensions_are_laid_out_for_that_cpu(tmp_path):
    assert shutil.which("aarch64-linux-gnu-g++"), "g++-aarch64-linux-gnu is required"
    proj = tmp_path / "proj" / "src"
    proj.mkdir(parents=True)
    (proj / "neon.h").write_text("#pragma once\n#include <arm_neon.h>\nstruct Lanes { float32x4_t v; int n; };\n")
    (proj / "wide.h").write_text('#pragma once\n#include <immintrin.h>\n#ifndef __AVX512F__\n#error "AVX-512 needed"\n'
                                 "#endif\nstruct Wide { __m512 v; int n; };\n")
    found, _ = structs(tmp_path, BuildSettings())
    lanes, wide = found["Lanes"], found["Wide"]
    assert (lanes["method"], lanes["target"], lanes["size"]) == ("probe-g++", "aarch64", 32)
    assert (wide["method"], wide["target"], wide["size"]) == ("probe-g++", "x86-64-v4", 128)
    obj = tmp_path / "neon.o"
    unit = tmp_path / "neon.cpp"
    unit.write_text(f'#include "{proj / "neon.h"}"\nLanes keep;\n')
    subprocess.run(["aarch64-linux-gnu-g++", "-g", "-c", str(unit), "-o", str(obj)], check=True)
    ref = run_pahole(obj, "Lanes")["Lanes"]
    assert [(m["name"], m["offset"], m["size"]) for m in lanes["members"]] == [(n, o, s) for n, o, s, _b in ref.members]


@pytest.mark.compilers
def test_headers_for_power_and_z_are_laid_out_by_their_cross_compilers(tmp_path):
    for cxx in ("powerpc64le-linux-gnu-g++", "s390x-linux-gnu-g++"):
        assert shutil.which(cxx), f"{cxx} is required (Debian package g++-{cxx.removesuffix('-g++')}; tests/run.sh installs it)"
    proj = tmp_path / "proj" / "src"
    proj.mkdir(parents=True)
    # C++ code with exception tables: its .eh_frame holds relocations the DWARF reader cannot apply
    # on POWER, which the ppc64le target drops from the probe object before reading it
    (proj / "vsx.hpp").write_text("#pragma once\n#include <altivec.h>\n#include <string>\n"
                                  "struct Quad { __vector float v; int n; };\n"
                                  "std::string describe(const Quad& q) { return std::to_string(q.n) + \"!\"; }\n")
    (proj / "vxe.hpp").write_text("#pragma once\n#include <vecintrin.h>\nstruct ZLanes { __vector float v; short n; };\n")
    found, _ = structs(tmp_path, BuildSettings())
    quad, lanes = found["Quad"], found["ZLanes"]
    assert (quad["method"], quad["target"], quad["size"]) == ("probe-g++", "ppc64le", 32), quad["error"]
    # z/Architecture aligns vectors to 8 bytes: 24, where x86-64 and POWER give 32
    assert (lanes["method"], lanes["target"], lanes["size"]) == ("probe-g++", "s390x", 24), lanes["error"]
    for layout, header, argv in ((quad, "vsx.hpp", ["powerpc64le-linux-gnu-g++", "-std=gnu++17", "-mvsx", "-mcpu=power9"]),
                                 (lanes, "vxe.hpp", ["s390x-linux-gnu-g++", "-mzvector", "-march=z14"])):
        unit, obj = tmp_path / f"{layout['qualname']}.cpp", tmp_path / f"{layout['qualname']}.o"
        unit.write_text(f'#include "{proj / header}"\n{layout["qualname"]} keep;\n')
        subprocess.run([*argv, "-g", "-c", str(unit), "-o", str(obj)], check=True)
        ref = run_pahole(obj, layout["qualname"])[layout["qualname"]]
        assert layout["size"] == ref.size
        assert [(m["name"], m["offset"], m["size"]) for m in layout["members"]] == \
            [(n, o, s) for n, o, s, _b in ref.members]


@pytest.mark.compilers
def test_a_cuda_header_that_fails_under_nvcc_too_says_what_nvcc_missed(tmp_path):
    # A .hpp of a CUDA tree: g++ (tried first, for speed) stops at a CUDA builtin; nvcc, the
    # header's own compiler, gets past it to the dependency the user can supply
    assert shutil.which("nvcc"), "nvcc is required (NVIDIA's CUDA toolkit)"
    proj = tmp_path / "proj" / "csrc"
    proj.mkdir(parents=True)
    (proj / "sched.hpp").write_text("#pragma once\n#ifdef __CUDACC__\n#include <torch/all.h>\n#endif\n"
                                    "struct Tile { int x, y; };\n"
                                    "inline __host__ __device__ int tile_x() { return blockIdx.x; }\n")
    (proj / "kernel.cu").write_text('#include "sched.hpp"\n__global__ void k(Tile t) {}\n')
    found, _ = structs(tmp_path, BuildSettings())
    tile = found["Tile"]
    assert tile["method"] == "unresolved"
    assert (tile["missing"], tile["supplied_by"].split()[:2]) == ("torch/all.h", ["--headers-from", "pypi:torch"]), tile
    assert "nvcc" not in tile["error"] and "blockIdx" not in tile["error"]


@pytest.mark.compilers
def test_a_header_for_another_cpu_says_what_its_cross_compiler_missed(tmp_path):
    # the host's error (no <altivec.h> on x86-64) is why the POWER cross compiler was tried; what
    # stops that compiler (torch) is what the user can act on
    assert shutil.which("powerpc64le-linux-gnu-g++"), "g++-powerpc64le-linux-gnu is required (tests/run.sh installs it)"
    proj = tmp_path / "proj" / "csrc"
    proj.mkdir(parents=True)
    (proj / "cpu_types_vsx.hpp").write_text("#pragma once\n#include <altivec.h>\n#include <torch/all.h>\n"
                                            "struct Quad { __vector float v; int n; };\n")
    found, _ = structs(tmp_path, BuildSettings())
    quad = found["Quad"]
    assert (quad["method"], quad["missing"]) == ("unresolved", "torch/all.h"), quad
