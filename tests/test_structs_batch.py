"""Probes in batches give every header the result its own probe gives (extractor.structs.batch)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from extractor.model import Language
from extractor.structs.batch import _culprit, plan_batches
from extractor.structs.probe import HeaderProbe, find_include_dirs, probe_headers
from extractor.structs.source import find_struct_definitions


@pytest.fixture(autouse=True)
def _gxx() -> None:
    """Every test here compiles: without g++ they fail with its name, never skip."""
    assert shutil.which("g++"), "g++ is required (Debian package g++)"


# (file, text): a header that leans on an earlier member for <vector>, a redefinition, one that
# does not compile, one that changes what follows it, and headers that batch
HEADERS = {
    "inc/a.h": "#pragma once\n#include <vector>\nstruct A { std::vector<int> v; int x; };\n",
    "inc/b.h": "#pragma once\nstruct B { std::vector<int> w; char c; };\n",
    "inc/c.h": "#pragma once\n#include <cstdint>\nstruct C { int32_t a; char b; };\n",
    "inc/d.h": "#pragma once\nstruct A { long y; };\n",
    "inc/e.h": "#pragma once\n#include <cstdint>\nstruct E { char c; int64_t d; };\nstatic_assert(sizeof(E) == 1, \"no\");\n",
    "inc/f.h": "#pragma once\n#pragma pack(1)\nstruct F { char c; int d; };\n",
    "other/g.h": "#pragma once\n#include <vector>\n#include \"a.h\"\nstruct G { A a; std::vector<char> z; };\n",
    "other/a.h": "#pragma once\nstruct OtherA { short s; };\n",
    "inc/h.h": "#pragma once\n#include <vector>\n#include <cstdint>\nstruct H { std::vector<int> v; uint8_t u; };\n",
}


def _tree(tmp_path: Path, headers: dict[str, str] = HEADERS) -> tuple[Path, list[HeaderProbe]]:
    for rel, text in headers.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    probes = [HeaderProbe(rel, tmp_path / rel, Language.CPP,
                          find_struct_definitions((tmp_path / rel).read_bytes(), Language.CPP))
              for rel in sorted(headers)]
    return tmp_path, probes


def test_batches_give_each_header_its_own_probes_result(tmp_path):
    root, probes = _tree(tmp_path)
    dirs = find_include_dirs([root])
    batched, stats = probe_headers(probes, dirs, [root], jobs=2)
    alone, alone_stats = probe_headers(probes, dirs, [root], jobs=2, batch_size=1)
    assert [r.layouts for r in batched] == [r.layouts for r in alone]
    assert [r.diagnostics for r in batched] == [r.diagnostics for r in alone]
    assert stats["headers_batched"] >= 2 and alone_stats["headers_batched"] == 0
    by_path = {r.path: r for r in batched}
    # b.h uses std::vector without including <vector>: alone it fails, and so it does here
    assert all(x.method.value == "unresolved" for x in by_path["inc/b.h"].layouts)
    assert {x.qualname for x in by_path["inc/d.h"].layouts} == {"A"} and by_path["inc/d.h"].layouts[0].size == 8


def test_one_thread_and_four_give_the_same_results(tmp_path):
    """The number of jobs only sets how many compiles run at once (threads), hence the order they
    finish in; every result, the failures and the bisected batches included, is the same
    (test_determinism serves vLLM's -j1 run the probe results its -j2 run computed, on this)."""
    root, probes = _tree(tmp_path)
    dirs = find_include_dirs([root])
    one, one_stats = probe_headers(probes, dirs, [root], jobs=1)
    four, four_stats = probe_headers(probes, dirs, [root], jobs=4)
    assert [(r.path, r.layouts, r.diagnostics) for r in one] == [(r.path, r.layouts, r.diagnostics) for r in four]
    assert any(r.diagnostics for r in one) and any(x.method.value != "unresolved" for r in one for x in r.layouts)
    # the same batches, and the same ones split again after a failure
    assert (one_stats["probe_batches"], one_stats["headers_batched"]) == \
        (four_stats["probe_batches"], four_stats["headers_batched"])
    assert one_stats["probe_batches"] > len(plan_batches(probes, dirs, [root])[0])


def test_plan_keeps_apart_what_an_earlier_member_could_change(tmp_path):
    root, probes = _tree(tmp_path)
    batches, alone = plan_batches(probes, find_include_dirs([root]), [root])
    together = {p.path for batch in batches for p in batch}
    # after a.h or h.h (which include <vector>), b.h would compile: it never follows them
    for batch in batches:
        paths = [p.path for p in batch]
        if "inc/b.h" in paths:
            assert not {"inc/a.h", "inc/h.h", "other/g.h"} & set(paths[:paths.index("inc/b.h")])
        assert not {"inc/a.h", "inc/d.h"} <= set(paths)  # two definitions of A
        assert "inc/f.h" not in paths[:-1]  # #pragma pack(1) would pack what follows
    assert together  # the rest does batch


def test_culprit_is_the_member_the_first_error_names():
    members = [HeaderProbe(f"h{i}.h", Path(f"/t/h{i}.h"), Language.CPP, ()) for i in range(3)]
    stderr = ("In file included from /tmp/x/probe.cpp:5:\n"
              "/t/h1.h:2:10: fatal error: torch/all.h: No such file or directory\n")
    assert _culprit(stderr, "probe.cpp", 3, members) == 1
    assert _culprit("/t/h2.h(7): error: identifier \"at\" is undefined\n", "probe.cu", 5, members) == 2
    assert _culprit("cc1plus: out of memory allocating 65536 bytes\n", "probe.cpp", 3, members) is None


# (case, headers, pairs planned into one batch, (earlier, later) orders no batch may have): what the
# text alone kept apart and the compile does not need kept apart
PLANNING = [
    # both include <map> only under an #if that is false here: their preprocessors read no <map>,
    # which the text counted as maybe read (torch's CUDA and system headers, 450 of them)
    ("conditional includes", {
        "inc/a.h": "#pragma once\n#ifdef ARCHDIFF_NEVER\n#include <map>\n#endif\nstruct A { int x; };\n",
        "inc/b.h": "#pragma once\n#ifdef ARCHDIFF_NEVER\n#include <map>\n#endif\nstruct B { char c; };\n",
    }, [("inc/a.h", "inc/b.h")], []),
    # each #undef's its own macro after use (torch's `#undef DEFINE_TOKEN`); c.h names a.h's
    # macro, which a.h's #undef would change after it
    ("#undef of its own macro", {
        "inc/a.h": "#pragma once\n#define ARCHDIFF_N 4\nstruct A { char c[ARCHDIFF_N]; };\n#undef ARCHDIFF_N\n",
        "inc/b.h": "#pragma once\n#define ARCHDIFF_M 2\nstruct B { short s[ARCHDIFF_M]; };\n#undef ARCHDIFF_M\n",
        "inc/c.h": "#pragma once\n#ifndef ARCHDIFF_N\n#define ARCHDIFF_N 8\n#endif\nstruct C { char c[ARCHDIFF_N]; };\n",
    }, [("inc/a.h", "inc/b.h")], [("inc/a.h", "inc/c.h")]),
    # each names in a comment what only the other declares (torch's comments say "store", "args")
    # b's message names a's function (torch's "use the FORWARD_HAS_DEFAULT_ARGS macro")
    ("names in messages", {
        "inc/a.h": "#pragma once\nint archdiff_store(int);\nstruct A { int x; };\n",
        "inc/b.h": "#pragma once\nstruct B { long y; };\n"
                   "static_assert(sizeof(B) == 8, \"archdiff_store is not for B\");\n",
    }, [("inc/a.h", "inc/b.h")], []),
    # a.h includes a file whose name is `enum.h`, then a namespace whose first line is a macro's call
    # with a name b.h's member is named after; a scoped enumerator of a.h names b.h's other member
    ("a path that says enum, scoped enumerators", {
        "inc/enum.h": "#pragma once\n",
        "inc/a.h": "#pragma once\n#include \"enum.h\"\n#define ARCHDIFF_ARGS(a, b)\nnamespace archdiff {\n"
                   "ARCHDIFF_ARGS(archdiff_count, other)\n"
                   "enum class Mode { archdiff_fast, archdiff_slow };\nstruct A { Mode m; int x; };\n}\n",
        "inc/b.h": "#pragma once\nstruct B { int archdiff_count; char archdiff_fast; };\n",
    }, [("inc/a.h", "inc/b.h")], []),
    # each declares a function of the other's name in its own namespace, one with a braced default
    # (ATen's operators beside torch::nn::functional's of the same names)
    ("a braced default", {
        "inc/a.h": "#pragma once\nnamespace at { int archdiff_loss(const int& w = {}); }\nstruct A { int x; };\n",
        "inc/b.h": "#pragma once\nnamespace nn { inline int archdiff_loss(int w) { return w; } }\n"
                   "struct B { long y; };\n",
    }, [("inc/a.h", "inc/b.h")], []),
    ("names in comments", {
        "inc/a.h": "#pragma once\nint archdiff_store(int);\n// not archdiff_load\nstruct A { int x; };\n",
        "inc/b.h": "#pragma once\nint archdiff_load(int);\n/* not archdiff_store */\nstruct B { long y; };\n",
    }, [("inc/a.h", "inc/b.h")], []),
]


@pytest.mark.parametrize("case,headers,together,never", PLANNING, ids=[c[0] for c in PLANNING])
def test_plan_batches_what_the_compile_does_not_keep_apart(tmp_path, case, headers, together, never):
    _, probes = _tree(tmp_path, headers)
    dirs = find_include_dirs([tmp_path])
    batches = [[p.path for p in batch] for batch in plan_batches(probes, dirs, [tmp_path])[0]]
    for first, second in together:
        assert any({first, second} <= set(batch) for batch in batches), batches
    for earlier, later in never:
        assert not any(earlier in b and later in b[b.index(earlier):] for b in batches), batches
    batched, stats = probe_headers(probes, dirs, [tmp_path], jobs=2)
    alone, _ = probe_headers(probes, dirs, [tmp_path], jobs=2, batch_size=1)
    assert [(r.layouts, r.diagnostics) for r in batched] == [(r.layouts, r.diagnostics) for r in alone]
    assert stats["headers_batched"] >= 2
    assert all(x.method.value != "unresolved" for r in batched for x in r.layouts)


def test_a_header_that_leans_on_an_earlier_one_for_what_the_prelude_may_include_compiles_alone(tmp_path):
    """b.h uses std::string and includes no <string>: alone it fails. <string>'s files are in the
    text closure of the probe's prelude (<algorithm> includes more under #if than it reads), so
    they cannot count as read by every probe; Triton's pb_exception.h is this header (b.h reads
    more files than a.h, so it is planned after it)."""
    many = "".join(f"#include <{h}>\n" for h in ("exception", "map", "set", "list", "deque", "unordered_map",
                                                 "functional", "memory"))
    headers = {"inc/a.h": "#pragma once\n#include <string>\nstruct A { std::string s; int x; };\n",
               "inc/b.h": f"#pragma once\n{many}struct B {{ std::string m; }};\n"}
    root, probes = _tree(tmp_path, headers)
    dirs = find_include_dirs([root])
    batched, _ = probe_headers(probes, dirs, [root], jobs=2)
    alone, _ = probe_headers(probes, dirs, [root], jobs=2, batch_size=1)
    assert [(r.layouts, r.diagnostics) for r in batched] == [(r.layouts, r.diagnostics) for r in alone]
    assert [x.method.value for r in batched for x in r.layouts] == ["probe-g++", "unresolved"]


@pytest.mark.parametrize("variable", ["const int kArchdiffN = 4;", "int kArchdiffN = 4;",
                                      "int kArchdiffM, kArchdiffN = 4;"])
def test_a_header_that_leans_on_an_earlier_ones_variable_compiles_alone(tmp_path, variable):
    """b.h sizes an array by a variable only a.h defines (`const int`, a plain `int`, the second
    declarator of two: no pattern of a declaration saw them): alone it fails, and batched after a.h
    it compiled."""
    headers = {"inc/a.h": f"#pragma once\n{variable}\nstruct A {{ char c[4]; }};\n",
               "inc/b.h": "#pragma once\nstruct B { char c[sizeof(kArchdiffN)]; };\n"}
    root, probes = _tree(tmp_path, headers)
    dirs = find_include_dirs([root])
    assert plan_batches(probes, dirs, [root])[0] == []
    batched, _ = probe_headers(probes, dirs, [root], jobs=2)
    alone, _ = probe_headers(probes, dirs, [root], jobs=2, batch_size=1)
    assert [(r.layouts, r.diagnostics) for r in batched] == [(r.layouts, r.diagnostics) for r in alone]
    assert [x.method.value for r in batched for x in r.layouts] == ["probe-g++", "unresolved"]


def test_a_header_is_never_followed_by_one_that_completes_what_its_templates_need(tmp_path):
    """instance.h destroys unique_ptr<Request> in an inline function and only declares Request:
    alone it fails. GCC instantiates that at the end of the unit, so after request.h it would
    compile: request.h never follows it (Triton's backend_model_instance.h)."""
    headers = {"inc/request.h": "#pragma once\nstruct Request { long id; char kind; };\n",
               "inc/instance.h": "#pragma once\n#include <memory>\n#include <vector>\nstruct Request;\n"
                                 "struct Instance { std::vector<std::unique_ptr<Request>> queue; int device; };\n"
                                 "inline void drain(Instance& i) { i.queue.clear(); }\n"}
    root, probes = _tree(tmp_path, headers)
    dirs = find_include_dirs([root])
    batches = [[p.path for p in batch] for batch in plan_batches(probes, dirs, [root])[0]]
    assert ["inc/instance.h", "inc/request.h"] not in batches
    batched, _ = probe_headers(probes, dirs, [root], jobs=2)
    alone, _ = probe_headers(probes, dirs, [root], jobs=2, batch_size=1)
    assert [(r.layouts, r.diagnostics) for r in batched] == [(r.layouts, r.diagnostics) for r in alone]
    assert [x.method.value for r in batched for x in r.layouts] == ["unresolved", "probe-g++"]


def test_a_header_whose_preprocessor_misses_a_file_is_planned_alone(tmp_path):
    """An include the text counts as maybe read (under an #if) that the preprocessor takes and
    does not find: the header cannot compile, so it is probed alone, not in a batch that would
    fail and be bisected; the others still batch."""
    headers = {"inc/a.h": "#pragma once\n#if 1\n#include \"archdiff_absent.h\"\n#endif\nstruct A { int x; };\n",
               "inc/b.h": "#pragma once\nstruct B { int y; };\n",
               "inc/c.h": "#pragma once\nstruct C { char z; };\n"}
    _, probes = _tree(tmp_path, headers)
    batches, alone = plan_batches(probes, find_include_dirs([tmp_path]), [tmp_path])
    assert [p.path for p in alone] == ["inc/a.h"]
    assert [[p.path for p in batch] for batch in batches] == [["inc/b.h", "inc/c.h"]]
