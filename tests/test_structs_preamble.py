"""Headers that fail alone and compile after their includer's lines are batched after those
lines, shared (extractor.structs.batch.plan_preamble_batches): torch's ``ATen/ops/*_ops.h``,
which use ``TORCH_API`` from what ``ATen/ops/X.h`` includes before them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import extractor.structs.compilers as compilers_mod
from extractor.model import Language
from extractor.structs.batch import _culprit, _split
from extractor.structs.header import Preamble
from extractor.structs.plan import preambles_of
from extractor.structs.probe import HeaderProbe, find_include_dirs, probe_headers
from extractor.structs.records import Method
from extractor.structs.source import StructDefinition


@pytest.fixture(autouse=True)
def _gxx() -> None:
    """Every test here compiles: without g++ they fail with its name, never skip."""
    assert shutil.which("g++"), "g++ is required (Debian package g++)"


# api.h gives MY_API, which the *_ops.h headers use and do not include (torch's TORCH_API); each
# X.h includes the same lines before its X_ops.h. z_ops.h fails after them too (its
# static_assert does not hold); w_ops.h is included by an includer with other lines.
OPS = {
    "ops/api.h": "#pragma once\n#define MY_API __attribute__((visibility(\"default\")))\n",
    "ops/x.h": '#pragma once\n#include "api.h"\n#include <vector>\n#include "x_ops.h"\n',
    "ops/y.h": '#pragma once\n#include "api.h"\n#include <vector>\n#include "y_ops.h"\n',
    "ops/z.h": '#pragma once\n#include "api.h"\n#include <vector>\n#include "z_ops.h"\n',
    "ops/w.h": '#pragma once\n#include "api.h"\n#include <map>\n#include "w_ops.h"\n',
    "ops/x_ops.h": "#pragma once\nstruct MY_API XOps { std::vector<int> v; int n; };\n",
    "ops/y_ops.h": "#pragma once\nstruct MY_API YOps { char c; double d; };\n",
    "ops/z_ops.h": "#pragma once\nstruct MY_API ZOps { char c; int n; };\nstatic_assert(sizeof(ZOps) == 1, \"z\");\n",
    "ops/w_ops.h": "#pragma once\nstruct MY_API WOps { std::map<int, int> m; };\n",
}


def _ops_tree(root: Path) -> list[HeaderProbe]:
    """The tree written under ``root`` and a probe per header defining a struct, with the
    preambles the plan gives it."""
    for rel, text in OPS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    files = {rel: (root / rel, Language.CPP) for rel in OPS}
    includers = {f"ops/{n}_ops.h": (f"ops/{n}.h",) for n in "xyzw"}
    # the struct on line 2 of each (tree-sitter reads `struct MY_API XOps {` as no definition)
    return [HeaderProbe(rel, root / rel, Language.CPP, (StructDefinition(2, f"{rel[4].upper()}Ops", "struct"),),
                        preambles=preambles_of(rel, includers, files))
            for rel in sorted(OPS) if rel.endswith("_ops.h")]


def _compiles(monkeypatch) -> list[str]:
    """The probe source of every compile started from now on (preprocess-only passes left out),
    read as the compile starts."""
    sources: list[str] = []
    real = compilers_mod.run_bounded

    def run(argv, **kw):
        if "-MD" in argv:
            source = next(a for a in argv if a.endswith((".cpp", ".c", ".cu")))
            sources.append(Path(source).read_text())
        return real(argv, **kw)

    monkeypatch.setattr(compilers_mod, "run_bounded", run)
    return sources


def test_headers_failing_alone_batch_after_their_shared_preamble(tmp_path, monkeypatch):
    probes = _ops_tree(tmp_path)
    dirs = find_include_dirs([tmp_path])
    alone, alone_stats = probe_headers(probes, dirs, [tmp_path], jobs=2, batch_size=1)
    sources = _compiles(monkeypatch)
    batched, stats = probe_headers(probes, dirs, [tmp_path], jobs=2)
    assert [(r.path, r.layouts, r.diagnostics) for r in batched] == [(r.path, r.layouts, r.diagnostics) for r in alone]
    by_path = {r.path: r for r in batched}
    for name in "xyw":
        (layout,) = by_path[f"ops/{name}_ops.h"].layouts
        assert layout.method is Method.PROBE_GXX
        assert layout.origin == f"ops/{name}_ops.h as included by ops/{name}.h"
    # z_ops.h fails after the preamble as alone, and keeps the first error its own probe met
    # (MY_API unknown alone), not the batch's static assertion
    (z,) = by_path["ops/z_ops.h"].layouts
    assert z.method is Method.UNRESOLVED and z.error.startswith("ops/z_ops.h:2:") and "MY_API ZOps" in z.error
    # x_ops.h and y_ops.h laid out by one unit after the shared lines; w_ops.h (other lines) alone
    assert (alone_stats["headers_batched"], stats["headers_batched"]) == (0, 2)
    # the shared lines once, then both headers, in one unit
    assert any(text.count("#include <vector>") == 1 and "x_ops.h" in text and "y_ops.h" in text
               for text in sources)


def test_culprit_in_the_shared_lines_sends_every_member_alone():
    members = [HeaderProbe(f"h{i}.h", Path(f"/t/h{i}.h"), Language.CPP, ()) for i in range(3)]
    stderr = ("In file included from /t/api.h:2,\n                 from /tmp/x/probe.cpp:4:\n"
              "/t/api.h:3:1: error: 'x' does not name a type\n")
    assert _culprit(stderr, "probe.cpp", 5, members) == -1


def test_a_failed_batch_sends_the_members_sharing_its_culprits_preamble_alone_at_once():
    """Each would fail in turn and be peeled off by one more failed compile; the others stay
    batched, in their order, on each side of the culprit."""
    ops = Preamble(("#include <ATen/Context.h>",), "ATen/ops/x.h", Path("/t/ATen/ops"))
    other = Preamble(("#include <map>",), "w.h", Path("/t"))

    def member(name: str, *preambles: Preamble) -> HeaderProbe:
        return HeaderProbe(name, Path(f"/t/{name}"), Language.CPP, (), preambles=preambles)

    members = [member("a.h"), member("x_ops.h", ops), member("b.h", other), member("y_ops.h", ops),
               member("c.h"), member("z_ops.h", ops, other), member("d.h")]
    outcome = _split(members, 1, alike=True)
    # a.h, the only member before the culprit, is a part of one: alone too
    assert [p.path for p in outcome.alone] == ["x_ops.h", "y_ops.h", "z_ops.h", "a.h"]
    assert [[p.path for p in part] for part in outcome.again] == [["b.h", "c.h", "d.h"]]
    # without alike (a batch after that preamble, which each member shares): the culprit alone
    outcome = _split(members, 1)
    assert [p.path for p in outcome.alone] == ["x_ops.h", "a.h"]
