"""The reason given for a definition a probe compiled without emitting: the `#if` lines open
around it, the macro a --define would turn on, and the CMake option of that name."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from extractor.buildsettings import BuildSettings
from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
from extractor.structs.conditions import cmake_options, conditional_reason, open_conditions
from structs_refs import run_pahole

HEADER = """\
#ifndef PROJ_METRICS_H
#define PROJ_METRICS_H
#include <cstdint>
struct Always { int a; };
#ifdef PROJ_ENABLE_METRICS
struct Metrics {
  uint64_t count;
  char name[12];
};
#if defined(PROJ_ENABLE_GPU) && PROJ_GPU_COUNT > 1
struct GpuMetrics { int device; };
#elif defined(PROJ_ENABLE_CPU_METRICS)
struct CpuMetrics { int core; };
#else
struct NoDevice { int none; };
#endif
#endif  // PROJ_ENABLE_METRICS
#ifndef _WIN32
struct Posix { int fd; };
#else
struct Windows { void* handle; };
#endif
#if \\
    PROJ_TRACING
struct Trace { int id; };
#endif
#endif  // PROJ_METRICS_H
"""


def _line(name: str) -> int:
    return next(i for i, line in enumerate(HEADER.splitlines(), 1) if f"struct {name} " in line)


@pytest.mark.parametrize("name, texts, enables", [
    ("Always", [], ""),  # the include guard is no condition
    ("Metrics", ["#ifdef PROJ_ENABLE_METRICS"], "PROJ_ENABLE_METRICS"),
    ("GpuMetrics", ["#ifdef PROJ_ENABLE_METRICS", "#if defined(PROJ_ENABLE_GPU) && PROJ_GPU_COUNT > 1"], ""),
    ("CpuMetrics", ["#ifdef PROJ_ENABLE_METRICS", "#elif defined(PROJ_ENABLE_CPU_METRICS)"], "PROJ_ENABLE_CPU_METRICS"),
    ("NoDevice", ["#ifdef PROJ_ENABLE_METRICS", "#else (of #if defined(PROJ_ENABLE_GPU) && PROJ_GPU_COUNT > 1)"], ""),
    ("Posix", ["#ifndef _WIN32"], ""),
    ("Windows", ["#else (of #ifndef _WIN32)"], "_WIN32"),
    ("Trace", ["#if PROJ_TRACING"], "PROJ_TRACING"),  # a continued directive line
])
def test_the_conditions_open_at_a_definition(name, texts, enables):
    conditions = open_conditions(HEADER, _line(name))
    assert [c.text for c in conditions] == texts
    assert (conditions[-1].enables if conditions else "") == enables


def test_a_macro_that_is_a_cmake_option_says_where_and_its_default(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "CMakeLists.txt").write_text('project(p)\noption(PROJ_ENABLE_METRICS "Include metrics" ON)\n')
    (tmp_path / "sub" / "opts.cmake").write_text('  option(PROJ_TRACING "Tracing" off)\n')
    options = cmake_options([(tmp_path, "core")])
    assert {(o.name, o.default, o.path, o.line) for o in options.values()} == {
        ("PROJ_ENABLE_METRICS", "ON", "core/CMakeLists.txt", 2), ("PROJ_TRACING", "OFF", "core/sub/opts.cmake", 1)}
    error, missing, supplied = conditional_reason(open_conditions(HEADER, _line("Metrics")), options)
    assert error.endswith("inside `#ifdef PROJ_ENABLE_METRICS` (line 5)")
    assert (missing, supplied) == ("PROJ_ENABLE_METRICS", "--define PROJ_ENABLE_METRICS (a CMake option of the "
                                   "project, ON by default: core/CMakeLists.txt:2)")
    assert conditional_reason((), options) == ("", "", "")


@pytest.mark.compilers
def test_a_definition_behind_a_build_option_names_it_and_the_define_resolves_it(tmp_path):
    proj = tmp_path / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / "src" / "metrics.h").write_text(HEADER)
    (proj / "src" / "metrics.cc").write_text('#include "metrics.h"\n')
    (proj / "CMakeLists.txt").write_text('option(PROJ_ENABLE_METRICS "Include metrics" ON)\n')

    def layouts(build: BuildSettings, cache: str) -> dict:
        bundle = extract_system([str(proj)], options=ExtractOptions(jobs=1, cache_dir=tmp_path / cache, build=build)).bundle
        return {s["qualname"]: s for s in bundle["structs"]}

    off = layouts(BuildSettings(), "c1")
    assert off["Always"]["method"] == "probe-g++"
    metrics = off["Metrics"]
    assert metrics["method"] == "unresolved" and "`#ifdef PROJ_ENABLE_METRICS` (line 5)" in metrics["error"]
    assert metrics["missing"] == "PROJ_ENABLE_METRICS"
    assert metrics["supplied_by"].startswith("--define PROJ_ENABLE_METRICS (a CMake option of the project, ON by default: CMakeLists.txt:1)")
    # a platform's own macro is no option to pass: the definition is for another platform
    assert off["Windows"]["missing"] == "_WIN32"
    assert off["Windows"]["supplied_by"] == "a build for Windows (_WIN32 is the compiler's, not a project option)"
    on = layouts(BuildSettings(defines=("PROJ_ENABLE_METRICS",)), "c2")
    assert on["Metrics"]["method"] == "probe-g++" and on["NoDevice"]["method"] == "probe-g++"
    assert on["GpuMetrics"]["method"] == "unresolved" and on["GpuMetrics"]["missing"] == ""  # no single macro
    unit = tmp_path / "use.cc"
    unit.write_text(f'#include "{proj / "src" / "metrics.h"}"\nMetrics keep;\n')
    obj = tmp_path / "use.o"
    subprocess.run([shutil.which("g++"), "-g", "-c", "-DPROJ_ENABLE_METRICS", str(unit), "-o", str(obj)], check=True)
    ref = run_pahole(obj, "Metrics")["Metrics"]
    assert on["Metrics"]["size"] == ref.size == 24
    assert [(m["name"], m["offset"], m["size"]) for m in on["Metrics"]["members"]] == \
        [(n, o, s) for n, o, s, _b in ref.members]


def test_a_header_configured_by_its_includers_function_like_macros_is_laid_out(tmp_path):
    # Triton's triton_json.h: the includer defines the status type and a function-like,
    # continued return macro before including it; the probe takes those lines as its preamble
    proj = tmp_path / "proj"
    (proj / "include" / "json").mkdir(parents=True)
    (proj / "src").mkdir()
    (proj / "include" / "json" / "json.h").write_text(
        "#pragma once\n#ifndef JSON_STATUSTYPE\n#error JSON_STATUSTYPE must be defined\n#endif\n"
        "struct JsonValue { JSON_STATUSTYPE status; double number; };\n"
        "inline JSON_STATUSTYPE parse(const char* s) { if (!s) { JSON_STATUSRETURN(s); } return JSON_STATUSSUCCESS; }\n")
    (proj / "src" / "log.cc").write_text(
        "#include <cstdint>\n#define JSON_STATUSTYPE int32_t\n#define JSON_STATUSRETURN(M) \\\n  return (M) ? 1 : 2\n"
        "#define JSON_STATUSSUCCESS 0\n#include \"json/json.h\"\n")
    bundle = extract_system([str(proj)], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c")).bundle
    (value,) = [s for s in bundle["structs"] if s["qualname"] == "JsonValue"]
    assert value["method"] == "probe-g++", value["error"]
    assert value["origin"] == "include/json/json.h as included by src/log.cc"
    assert (value["size"], [(m["name"], m["offset"]) for m in value["members"]]) == (16, [("status", 0), ("number", 8)])


def test_a_header_that_needs_a_complete_type_from_a_later_includer_is_laid_out(tmp_path):
    # Triton's backend_model_instance.h destroys a unique_ptr<InferenceRequest> in an inline
    # function and only forward-declares it: the includer with the shortest preamble does not
    # make the type complete, another includer does
    proj = tmp_path / "proj" / "src"
    proj.mkdir(parents=True)
    (proj / "request.h").write_text("#pragma once\nstruct Request { long id; char kind; };\n")
    (proj / "instance.h").write_text(
        "#pragma once\n#include <memory>\n#include <vector>\nstruct Request;\n"
        "struct Instance { std::vector<std::unique_ptr<Request>> queue; int device; };\n"
        "inline void drain(Instance& i) { i.queue.clear(); }\n")
    (proj / "a_short.cc").write_text('#include <memory>\n#include "instance.h"\n')
    (proj / "b_longer.cc").write_text('#include <memory>\n#include "request.h"\n#include "instance.h"\n')
    bundle = extract_system([str(tmp_path / "proj")], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c")).bundle
    (instance,) = [s for s in bundle["structs"] if s["qualname"] == "Instance"]
    assert instance["method"] == "probe-g++", instance["error"]
    assert instance["origin"] == "src/instance.h as included by src/b_longer.cc"
    assert (instance["size"], [(m["name"], m["offset"]) for m in instance["members"]]) == (32, [("queue", 0), ("device", 24)])
