"""A header that compiles but leaves definitions out is compiled again after its includers' earlier
lines only where those lines may select one of them: a preprocess-only pass decides, the layouts
are the ones every compile would give (torch: 15 headers compiled again after up to three
preambles each, 105 of 290 CPU s, most of them for branches no includer selects)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
from extractor.structs import attempts, nvcchost
from extractor.structs.attempts import CompileAttempts, header_words

FEATURE = """\
#pragma once
struct Always { int a; };
#ifdef PROJ_FAST
struct Fast { long x; char y; };
#endif
#ifdef PROJ_OTHER
struct Other { int z; };
#endif
#ifdef PROJ_BROKEN
#error this configuration is not supported
#endif
"""


@pytest.fixture(autouse=True)
def _gxx() -> None:
    """Every test here compiles: without g++ it fails with its name, never skips."""
    assert shutil.which("g++"), "g++ is required (Debian package g++)"


def _project(root: Path) -> Path:
    src = root / "proj" / "src"
    src.mkdir(parents=True)
    (src / "feature.h").write_text(FEATURE)
    (src / "a_plain.cc").write_text('#include <cstdint>\n#include "feature.h"\n')  # selects nothing
    (src / "b_fast.cc").write_text('#define PROJ_FAST 1\n#include "feature.h"\n')  # selects Fast
    (src / "d_broken.cc").write_text('#define PROJ_BROKEN 1\n#include "feature.h"\n')  # stops the preprocessor
    return root / "proj"


def _structs_and_compiles(tmp_path: Path, cache: str, monkeypatch) -> tuple[dict, list[str]]:
    """The run's struct records by name, and the kind of each compiler process it started."""
    kinds: list[str] = []
    real = attempts.run_compiler

    def counted(argv, *args, **kwargs):
        kinds.append("preprocess" if "-E" in argv else "deps" if "-M" in argv else "compile")
        return real(argv, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(attempts, "run_compiler", counted)  # preprocess-only passes
        patched.setattr(nvcchost, "run_compiler", counted)  # compiles (extractor.structs.nvcchost.run_probe_compile)
        options = ExtractOptions(jobs=1, cache_dir=tmp_path / cache)
        bundle = extract_system([str(tmp_path / "proj")], options=options).bundle
    return {s["qualname"]: s for s in bundle["structs"]}, kinds


def test_an_includer_that_selects_no_left_out_definition_costs_no_compile(tmp_path, monkeypatch):
    _project(tmp_path)
    filtered, kinds = _structs_and_compiles(tmp_path, "c1", monkeypatch)
    monkeypatch.setattr(CompileAttempts, "may_define", lambda *_args: True)  # every preamble compiled, as before
    every, every_kinds = _structs_and_compiles(tmp_path, "c2", monkeypatch)
    assert filtered == every  # the same records, field by field
    assert filtered["Fast"]["method"] == "probe-g++"
    assert filtered["Fast"]["origin"] == "src/feature.h as included by src/b_fast.cc"
    assert filtered["Other"]["method"] == "unresolved"
    # alone, then after each of the three includers' lines: a_plain.cc's select nothing, and
    # d_broken.cc's make the header stop at its #error
    assert every_kinds.count("compile") == 4 and "preprocess" not in every_kinds
    # alone, then after b_fast.cc's lines; a preprocess-only pass before each preamble's compile
    assert kinds.count("compile") == 2 and kinds.count("preprocess") == 3, kinds


def test_the_header_words_are_those_the_preprocessor_kept_from_that_header(tmp_path):
    header = tmp_path / "inc" / "h.h"
    header.parent.mkdir()
    header.write_text(FEATURE)
    other = tmp_path / "o.h"
    other.write_text("struct Other { int z; };\n")
    preprocessed = (
        '# 0 "probe.cpp"\n# 1 "inc/../inc/h.h" 1\n\nstruct Always { int a; };\n\n\n\n\n\n\n'
        '# 1 "o.h" 1\nstruct Other { int z; };\n# 9 "inc/h.h" 2\n\n'
        '# 2 "probe.cpp" 2\nint Fast;\n')
    words = header_words(preprocessed.encode().splitlines(keepends=True), header, tmp_path)
    # the header's own lines, not the names in the markers (`inc`, `h`) nor another file's
    assert {b"Always", b"a", b"struct", b"int"} <= words and not {b"Other", b"Fast", b"z", b"inc", b"h"} & words

