"""Hostile source files: nesting that crashes a native parser, makes a scanner quadratic, or keeps
a parser busy for hours. Each costs its file a diagnostic; the other files and the run go on."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time

import pytest

from extractor.run import pipeline
from extractor.run import scan
from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
from extractor.run.facts import decode_result
from extractor.steps import STEPS

# Syntax this interpreter's parser rejects, so that the file goes on to libcst: the case where
# libcst's native parser is the one reading hostile nesting.
NEWER_SYNTAX = "type Alias = int\n"


def _tree(sandbox, files: dict[str, str]):
    tree = sandbox.input / "tree"
    for rel, text in {"pkg/__init__.py": "", "pkg/ok.py": "def ok():\n    pass\n", **files}.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    return tree


def _diagnostics(sandbox) -> dict[str, tuple[str, str]]:
    bundle = json.loads((sandbox.out / "evidence.json").read_text())
    assert "py:pkg.ok.ok" in {n["id"] for n in bundle["graph"]["nodes"]}, "the good file was lost"
    return {d["path"]: (d["code"], d["message"]) for d in bundle["diagnostics"] if d["severity"] == "error"}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_deeply_nested_brackets_cost_the_file_not_the_run(sandbox, jobs):
    depth = 100_000
    tree = _tree(sandbox, {
        "pkg/parens.py": "x = " + "(" * depth + ")" * depth + "\n",
        # the interpreter refuses it, so this one would reach libcst, which segfaults at ~1,250
        "pkg/newer.py": NEWER_SYNTAX + "x = " + "[" * 5000 + "]" * 5000 + "\n",
        "pkg/scopes.h": "namespace a { " * 20_000 + "struct S { int x; };" + " }" * 20_000 + "\n",
        # the Rust and Go scanners walk scopes recursively: without the guard, Python's recursion
        # limit cut these short at about 320 levels, silently
        "pkg/scopes.rs": "mod a { " * 5000 + "pub struct S;" + " }" * 5000 + "\n",
        "pkg/scopes.go": "package p\nfunc f() " + "{ " * 5000 + "}" * 5000 + "\n",
    })
    started = time.monotonic()
    proc = sandbox.run("extract", str(tree), "-o", str(sandbox.out), "--cache-dir", str(sandbox.cache),
                       "-j", jobs, "--no-probes")
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 60  # 20,000 nested C++ scopes took hours to scan before
    assert _diagnostics(sandbox) == {
        "pkg/parens.py": ("too-deep", f"brackets nest {depth} levels deep, the limit is 200: not analysed"),
        "pkg/newer.py": ("too-deep", "brackets nest 5000 levels deep, the limit is 200: not analysed"),
        "pkg/scopes.h": ("too-deep", "braces nest 20001 levels deep, the limit is 256: not analysed"),
        "pkg/scopes.rs": ("too-deep", "braces nest 5000 levels deep, the limit is 256: not analysed"),
        "pkg/scopes.go": ("too-deep", "braces nest 5000 levels deep, the limit is 256: not analysed"),
    }
    assert "internal error" not in proc.stderr and "Segmentation" not in proc.stderr
    sandbox.assert_contained()


def test_rust_nested_up_to_the_brace_limit_is_read_whole(sandbox):
    tree = _tree(sandbox, {"pkg/scopes.rs": "mod a { " * scan.MAX_BRACE_NESTING + "pub struct S;"
                           + " }" * scan.MAX_BRACE_NESTING + "\n"})
    proc = sandbox.run("extract", str(tree), "-o", str(sandbox.out), "--cache-dir", str(sandbox.cache),
                       "-j", "1", "--no-probes")
    assert proc.returncode == 0, proc.stderr
    assert _diagnostics(sandbox) == {}
    nodes = json.loads((sandbox.out / "evidence.json").read_text())["graph"]["nodes"]
    (struct,) = [n for n in nodes if n["kind"] == "struct"]
    assert struct["id"].endswith("::a" * scan.MAX_BRACE_NESTING + "::S")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_that_crashes_the_parser_process_is_a_diagnostic(sandbox, jobs):
    # No bracket at all: 20,000 chained lambdas overflow libcst's native stack (SIGSEGV).
    tree = _tree(sandbox, {"pkg/lambdas.py": NEWER_SYNTAX + "x = " + "lambda: " * 20_000 + "1\n",
                           **{f"pkg/m{i}.py": f"def f{i}():\n    pass\n" for i in range(10)}})
    proc = sandbox.run("extract", str(tree), "-o", str(sandbox.out), "--cache-dir", str(sandbox.cache),
                       "-j", jobs, "--no-probes")
    assert proc.returncode == 0, proc.stderr
    errors = _diagnostics(sandbox)
    assert errors == {"pkg/lambdas.py": ("parser-crashed",
                                         "the parser process died (SIGSEGV) on this file: not analysed")}
    bundle = json.loads((sandbox.out / "evidence.json").read_text())
    ids = {n["id"] for n in bundle["graph"]["nodes"]}
    assert {f"py:pkg.m{i}.f{i}" for i in range(10)} <= ids  # files queued behind the crash
    # one line per diagnostic and the summary: nothing the dying parser printed
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    sandbox.assert_contained()


def test_a_crash_is_not_cached_so_a_later_run_tries_the_file_again(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "lambdas.py").write_text(NEWER_SYNTAX + "x = " + "lambda: " * 20_000 + "1\n")
    (tree / "ok.py").write_text("def ok():\n    pass\n")
    options = ExtractOptions(cache_dir=tmp_path / "cache")
    first = extract_system([str(tree)], options=options)
    with contextlib.closing(sqlite3.connect(tmp_path / "cache" / "facts.sqlite")) as db, db:
        db.execute("DELETE FROM facts WHERE key LIKE 'bundle:%'")  # the memo of the whole bundle
    second = extract_system([str(tree)], options=options)
    assert first.text == second.text
    assert (first.cache["misses"], second.cache["hits"], second.cache["misses"]) == (2, 1, 1)


def test_a_file_that_keeps_the_parser_busy_is_stopped_at_the_time_limit(monkeypatch):
    # libcst is quadratic on a long operator chain: 6,000 terms take minutes.
    slow = (NEWER_SYNTAX + "x = " + " + ".join(["1"] * 6000) + "\n").encode()
    monkeypatch.setattr(scan, "FILE_TIMEOUT", 1.0)
    items = [("python", b"def a():\n    pass\n"), ("python", slow), ("python", b"def b():\n    pass\n")]
    started = time.monotonic()
    results = [decode_result(r) for r in scan.scan_files(items, STEPS, jobs=1)]
    assert time.monotonic() - started < 30
    assert [r.diagnostics for r in results] == [
        (), ((0, "parse-timeout", "parsing and scanning took over 1 s: not analysed", "error"),), ()]
    assert results[1].transient and "python" in results[2].facts


def test_the_guard_lets_newer_syntax_with_ordinary_nesting_through(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "newer.py").write_text(NEWER_SYNTAX + "def f():\n    return " + "(" * 150 + "1" + ")" * 150 + "\n")
    bundle = extract_system([str(tree)], options=ExtractOptions(cache_dir=tmp_path / "cache")).bundle
    assert "py:newer.f" in {n["id"] for n in bundle["graph"]["nodes"]}
    assert "newer-syntax" in [d["code"] for d in bundle["diagnostics"]]
    assert not [d for d in bundle["diagnostics"] if d["severity"] == "error"]


@pytest.mark.parametrize("data, expected", [
    (b"", 0), (b"f(a[1], {2: (3)})", 3), (b")))(((", 3), (b"((\n# (\n))", 3),
])
def test_nesting_depth_is_an_upper_bound_on_the_raw_bytes(data, expected):
    assert scan.nesting_depth(data, b"([{", b")]}") == expected
