"""A probe compile that the preprocessed text says must fail (extractor.structs.doomed): the shapes
it tells are failures for g++ itself, the others are left to the compiler, and through the whole
probe the records are those of the compiles themselves, with the doomed compile run only when its
message is read."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from extractor.model import Language
from extractor.structs import attempts, nvcchost
from extractor.structs.compilers import Command, search_superset
from extractor.structs.doomed import asserts_false_at_top, certain_failure, worth_asking
from extractor.structs.probe import HeaderProbe, probe_header
from extractor.structs.records import Method
from extractor.structs.source import StructDefinition

pytestmark = pytest.mark.compilers

# (header text, whether the preprocessed text makes g++'s failure certain)
SHAPES = {
    "assert_at_top": ('#pragma once\n#include <vector>\n#ifndef __AVX2__\nstatic_assert(false, "AVX2 needed");\n'
                      "#endif\nstruct A { int a; };\n", True),
    "assert_zero": ("#pragma once\nstatic_assert( 0 , \"no\");\n", True),
    "error_after_include": ('#pragma once\n#include <map>\n#ifndef WANTED\n#error "WANTED must be defined"\n#endif\n',
                            True),
    "assert_in_namespace": ('namespace v {\nstatic_assert(false, "inside");\n}\n', False),
    "assert_in_template": ('template <class T> struct B { static_assert(sizeof(T) == 0, "x"); };\n'
                           'struct C { int c; };\n', False),
    "assert_in_string": ('const char* text = "static_assert(false, 1);";\nstruct S { int s; };\n', False),
    "assert_in_raw_string": ('const char* raw = R"(" static_assert(false, 1); ")";\nstruct R { int r; };\n', False),
    "assert_skipped": ('#ifdef NEVER_DEFINED\nstatic_assert(false, "x");\n#endif\nstruct K { int k; };\n', False),
    "missing_then_error": ("#pragma once\n#include <no_such_header_anywhere.h>\n#error never reached\n", False),
    "assert_split": ('#pragma once\nstatic_assert(\n  false, "split");\n', False),
}


def _probe_source(tmp: Path, header: Path) -> Path:
    source = tmp / "probe.cpp"
    source.write_text(f'#include <cstddef>\n#include "{header}"\n')
    return source


@pytest.mark.parametrize("name", SHAPES)
def test_a_failure_told_certain_is_one_for_gxx(tmp_path, name):
    text, certain = SHAPES[name]
    header = tmp_path / f"{name}.hpp"
    header.write_text(text)
    source = _probe_source(tmp_path, header)
    gxx = shutil.which("g++")
    argv = [gxx, "-std=gnu++17", "-g", "-c", "-w", "-fmax-errors=1", str(source), "-o", str(tmp_path / "probe.o")]
    told = certain_failure(argv, header, tmp_path, 60.0, 2 * 1024**3, cxx=True)
    compiled = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
    assert told is certain
    if told:
        assert compiled.returncode != 0 and "error" in compiled.stderr
    if name in ("assert_in_string", "assert_in_raw_string", "assert_skipped", "assert_in_template"):
        assert compiled.returncode == 0, compiled.stderr  # a prediction there would have been wrong


def test_a_header_that_includes_a_file_no_directory_has_is_not_asked_about(tmp_path):
    """Its compile stops at that include (torch's, not given), quickly, and its message names the
    missing header: no preprocess-only pass is worth running for it."""
    (tmp_path / "here.h").write_text("#pragma once\n")
    text = b'#pragma once\n#include "here.h"\n#include <vector>\nstatic_assert(false, "x");\n'
    search = (str(tmp_path), *search_superset(Command("g++", Method.PROBE_GXX, ["g++"], ".cpp")))
    assert worth_asking(text, search)
    assert not worth_asking(text.replace(b"<vector>", b"<torch/all.h>"), search)
    assert not worth_asking(b"#pragma once\nstruct A { int a; };\n", search)  # nothing that could doom it


def test_braces_decide_and_an_uncertain_count_says_nothing():
    assert asserts_false_at_top([b"struct A { int a; };\n", b'static_assert(false, "x");\n'])
    assert not asserts_false_at_top([b"namespace n {\n", b'static_assert(false, "x");\n', b"}\n"])
    assert not asserts_false_at_top([b"}\n", b'static_assert(false, "x");\n'])  # more closing than opening
    assert not asserts_false_at_top([b"int n = 1'000;\n", b'static_assert(false, "x");\n'])  # a digit separator
    assert asserts_false_at_top([b"char c = '{';\n", b'static_assert(0, "x");\n'])  # a brace in a literal


AVX_HEADER = ('#pragma once\n#include <immintrin.h>\n#include <vector>\n#ifndef __AVX2__\n'
              'static_assert(false, "AVX2 must be supported for the current implementation.");\n#endif\n'
              "namespace vec {\nstruct Lanes { __m256 v; int n; };\n}\n")


def _compiles(monkeypatch) -> list[list[str]]:
    """The probe compiles started from here on (preprocess-only passes left out)."""
    seen: list[list[str]] = []
    real = nvcchost.run_compiler

    def recording(argv, *args, **kwargs):
        seen.append(list(argv))
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(nvcchost, "run_compiler", recording)
    return seen


def _probe(tmp_path: Path, name: str, text: str, definition: StructDefinition):
    header = tmp_path / "proj" / "cpu" / name
    header.parent.mkdir(parents=True, exist_ok=True)
    header.write_text(text)
    probe = HeaderProbe(f"cpu/{name}", header, Language.CPP, (definition,))
    return probe_header(probe, [header.parent], [tmp_path / "proj"], root_labels=[(tmp_path / "proj", "")])


def test_the_other_flags_lay_it_out_without_the_doomed_compile(tmp_path, monkeypatch):
    """vLLM's cpu_types_x86.hpp in small: the default flags' compile is not run, the x86-64-v4
    one lays the header out, and the records are those of both compiles run."""
    seen = _compiles(monkeypatch)
    told = _probe(tmp_path / "a", "cpu_types.hpp", AVX_HEADER, StructDefinition(9, "vec::Lanes", "struct"))
    told_compiles = list(seen)
    seen.clear()
    monkeypatch.setattr(attempts, "certain_failure", lambda *args, **kwargs: False)
    compiled = _probe(tmp_path / "a", "cpu_types.hpp", AVX_HEADER, StructDefinition(9, "vec::Lanes", "struct"))
    (layout,) = told.layouts
    assert (layout.method, layout.target, layout.size) == (Method.PROBE_GXX, "x86-64-v4", 64)
    assert told.layouts == compiled.layouts and told.diagnostics == compiled.diagnostics
    assert [any(a == "-march=x86-64-v4" for a in argv) for argv in seen] == [False, True]
    assert [any(a == "-march=x86-64-v4" for a in argv) for argv in told_compiles] == [True]


def test_a_doomed_compile_whose_message_is_read_runs_then(tmp_path, monkeypatch):
    """No other flags or compiler to try: the failure's message is the record's, so the compile
    runs once, and says what it says without the prediction."""
    text = '#pragma once\n#include <vector>\nstatic_assert(false, "this header is not for this build");\nstruct T { int t; };\n'
    seen = _compiles(monkeypatch)
    (told,) = _probe(tmp_path / "b", "only.hpp", text, StructDefinition(4, "T", "struct")).layouts
    told_compiles = len(seen)
    monkeypatch.setattr(attempts, "certain_failure", lambda *args, **kwargs: False)
    (compiled,) = _probe(tmp_path / "b", "only.hpp", text, StructDefinition(4, "T", "struct")).layouts
    assert told.method is Method.UNRESOLVED and "static assertion failed: this header is not for this build" in told.error
    assert told == compiled
    assert told_compiles == 1 and len(seen) == 2


def test_a_header_whose_include_is_missing_costs_no_preprocess_only_pass(tmp_path, monkeypatch):
    """vLLM's cpu_types_x86.hpp without torch's headers: its compile stops at torch's include in a
    tenth of a second, so it runs as before, with no preprocess-only pass first."""
    text = AVX_HEADER.replace("#include <vector>", "#include <torch/all.h>")
    asked: list[int] = []
    monkeypatch.setattr(attempts, "certain_failure", lambda *args, **kwargs: asked.append(1) or False)
    (layout,) = _probe(tmp_path / "c", "cpu_types.hpp", text, StructDefinition(9, "vec::Lanes", "struct")).layouts
    assert layout.method is Method.UNRESOLVED and "torch/all.h: No such file or directory" in layout.error
    assert asked == []
