"""Hostile headers: probes that would copy local files into evidence, load a tree's precompiled
header, eat memory, or leave compilers running."""

from __future__ import annotations

import json
import os
import subprocess
import time


from extractor.model import Language
from extractor.structs import probe as probe_mod
from extractor.structs.probe import HeaderProbe, find_include_dirs, probe_header
from extractor.structs.source import StructDefinition

SECRET = "ARCHDIFF_SECRET_7f3a9c"


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _secret_headers(sandbox):
    """Headers that reach a file outside the tree in every way the preprocessor allows."""
    outside = _write(sandbox.base / "private" / "token.txt", f"{SECRET} more secret words\n")
    src = sandbox.input / "proj" / "include"
    _write(src / "absolute.h", f'#pragma once\n#include "{outside}"\nstruct Abs {{ int a; }};\n')
    _write(src / "dotdot.h", "#pragma once\n#include \"" + "../" * 12 + f"{str(outside).lstrip('/')}\"\n"
           "struct Up { int a; };\n")
    _write(src / "macro.h", f'#pragma once\n#define WHERE "{outside}"\n#include WHERE\nstruct Mac {{ int a; }};\n')
    _write(src / "environ.h", "#pragma once\n#include </proc/self/environ>\nstruct Env { int a; };\n")
    _write(src / "nested.h", "#pragma once\n#include \"absolute.h\"\nstruct Nested { long b; };\n")
    _write(src / "fine.h", "#pragma once\nstruct Fine { int a; char b; };\n")
    return sandbox.input / "proj"


def test_probes_never_copy_files_outside_the_tree_into_evidence_or_reports(sandbox):
    proj = _secret_headers(sandbox)
    proc = sandbox.extract(str(proj), **{"ARCHDIFF_SECRET_ENV": SECRET})
    assert proc.returncode == 0, proc.stderr
    assert SECRET not in proc.stderr
    text = (sandbox.out / "evidence.json").read_text()
    assert SECRET not in text
    structs = {s["qualname"]: s for s in json.loads(text)["structs"]}
    for name in ("Abs", "Up", "Mac", "Env", "Nested"):
        assert structs[name]["method"] == "unresolved", name
        assert structs[name]["error"].startswith("refused: the header includes a file outside"), structs[name]
    assert structs["Fine"]["method"] != "unresolved" and structs["Fine"]["size"] == 8
    report = sandbox.run("compare", str(sandbox.out), str(sandbox.out), "-o", str(sandbox.base / "report"),
                         "--format", "html,md,json")
    assert report.returncode == 0, report.stderr
    for path in (sandbox.base / "report").iterdir():
        assert SECRET not in path.read_text(errors="replace"), path.name


def test_a_precompiled_header_shipped_in_the_tree_is_never_loaded(sandbox):
    inc = sandbox.input / "proj" / "include"
    header = _write(inc / "layout.h", "#pragma once\nstruct Layout { char a; int b; };\n")
    # The .gch describes another layout: if the compiler loaded it, the record would say 16 bytes.
    other = _write(sandbox.base / "gch" / "layout.h", "#pragma once\nstruct Layout { char a; long b; };\n")
    subprocess.run(["g++", "-x", "c++-header", "-g", "-std=c++17", str(other), "-o", str(inc / "layout.h.gch")],
                   check=True)
    probe = HeaderProbe("include/layout.h", header, Language.CPP,
                        (StructDefinition(2, "Layout", "struct"),))
    root = sandbox.input / "proj"
    result = probe_header(probe, find_include_dirs([root]), [root])
    (layout,) = result.layouts
    assert layout.method.value == "unresolved"
    assert "precompiled header" in layout.error and layout.size != 16
    os.unlink(inc / "layout.h.gch")
    (layout,) = probe_header(probe, find_include_dirs([root]), [root]).layouts
    assert layout.size == 8  # the same header, probed once the .gch is gone


def test_a_probe_compiler_is_held_to_its_memory_cap(sandbox):
    root = sandbox.input / "proj"
    header = _write(root / "include" / "big.h", "#pragma once\n#include <map>\n#include <string>\n"
                    "struct Big { std::map<std::string, int> m; };\n")
    probe = HeaderProbe("include/big.h", header, Language.CPP, (StructDefinition(4, "Big", "struct"),))
    capped = probe_header(probe, find_include_dirs([root]), [root], memory_bytes=40 * 1024**2)
    assert capped.layouts[0].method.value == "unresolved"
    free = probe_header(probe, find_include_dirs([root]), [root])
    assert free.layouts[0].size == 48


def _compilers_running(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line and "ps -eo" not in line]


def test_a_probe_that_times_out_leaves_no_compiler_running(sandbox):
    root = sandbox.input / "slowproj"
    # Constant evaluation of about 4e10 steps: minutes of cc1plus, far beyond the timeout.
    header = _write(root / "include" / "slow.h", "#pragma once\n"
                    "constexpr long spin() { long s = 0; for (long i = 0; i < 200000; ++i)"
                    " for (long j = 0; j < 200000; ++j) s += i ^ j; return s; }\n"
                    "static_assert(spin() != 1, \"\");\nstruct Slow { int a; };\n")
    probe = HeaderProbe("include/slow.h", header, Language.CPP, (StructDefinition(4, "Slow", "struct"),))
    started = time.monotonic()
    result = probe_header(probe, find_include_dirs([root]), [root], timeout=3)
    assert time.monotonic() - started < 60
    assert "timed out" in result.layouts[0].error
    time.sleep(0.5)
    assert _compilers_running(str(root)) == []


def test_the_probe_memory_default_is_set():
    assert 1024**3 <= probe_mod.DEFAULT_MEMORY <= 8 * 1024**3
