"""Faults of the machine, not the input: a read-only or full cache, a full output disk, and runs
racing on one cache. The run either works without the cache (saying so once) or stops with one
line naming the directory, and never leaves a partial file that a later run would accept.

How the faults are made (tests run as root here, where permission bits stop nothing): see
``tests/hostile/support.py`` -- a read-only bind mount or a small tmpfs in a private mount
namespace where allowed, otherwise permission bits or a file-size limit."""

from __future__ import annotations

import concurrent.futures
import json
import subprocess
import sys

import pytest

from extractor.run.cache import FactCache
from tests.hostile.support import CASE_TIMEOUT, contents, full, one_line_error, read_only


def _tree(sandbox, files: int = 40):
    tree = sandbox.input / "pkg-1.0"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    for i in range(files):
        (tree / "pkg" / f"m{i}.py").write_text(
            f'"""Module {i}."""\n\nclass Thing{i}:\n    def run(self, x: int) -> int:\n        return x + {i}\n')
    return tree


def _archive(sandbox, tree):
    archive = sandbox.input / "pkg-1.0.tar.gz"
    subprocess.run(["tar", "-czf", str(archive), "-C", str(tree.parent), tree.name], check=True)
    return archive


def _reference(sandbox, spec) -> bytes:
    """Evidence of the same input through a cache nothing is wrong with."""
    out = sandbox.base / "reference"
    proc = sandbox.run("extract", spec, "-o", str(out), "--cache-dir", str(sandbox.base / "good-cache"), "-j", "1",
                       "--no-probes")
    assert proc.returncode == 0, proc.stderr
    return (out / "evidence.json").read_bytes()


def _warnings(proc) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("archdiff: warning:")]


def test_a_read_only_cache_is_worked_around_and_said_once(sandbox):
    tree = _tree(sandbox)
    expected = _reference(sandbox, str(tree))
    fault = read_only(sandbox.cache)
    proc = sandbox.run("extract", str(tree), "-o", str(sandbox.out), "--cache-dir", str(sandbox.cache), "-j", "2",
                       "--no-probes", fault=fault)
    assert proc.returncode == 0, proc.stderr
    assert _warnings(proc) == [f"archdiff: warning: cache {sandbox.cache} cannot be used ({fault.reason}): "
                               "working without it"]
    assert "internal error" not in proc.stderr
    assert (sandbox.out / "evidence.json").read_bytes() == expected
    assert [p for p in sandbox.cache.rglob("*") if p.is_file() and p.stat().st_size] == []  # nothing written
    sandbox.assert_contained()


def test_a_read_only_cache_still_serves_the_tree_it_holds(sandbox):
    archive = _archive(sandbox, _tree(sandbox))
    first = sandbox.extract(str(archive), "--no-probes")
    assert first.returncode == 0, first.stderr
    expected = (sandbox.out / "evidence.json").read_bytes()
    (sandbox.out / "evidence.json").unlink()
    before = sorted(p.relative_to(sandbox.cache).as_posix() for p in sandbox.cache.rglob("*"))
    proc = sandbox.extract(str(archive), "--no-probes", fault=read_only(sandbox.cache))
    assert proc.returncode == 0, proc.stderr
    assert (sandbox.out / "evidence.json").read_bytes() == expected
    assert sorted(p.relative_to(sandbox.cache).as_posix() for p in sandbox.cache.rglob("*")) == before


def test_a_read_only_cache_that_must_take_a_download_is_one_line_naming_it(sandbox):
    archive = _archive(sandbox, _tree(sandbox))
    fault = read_only(sandbox.cache)
    proc = sandbox.extract(str(archive), "--no-probes", fault=fault)
    assert proc.returncode == 2, proc.stderr
    assert one_line_error(proc).startswith(f"archdiff: error: cannot write to {sandbox.cache} ({fault.reason}): ")
    assert not (sandbox.out / "evidence.json").exists()
    sandbox.assert_contained()


def test_a_full_cache_disk_stops_the_extraction_and_leaves_no_half_tree(sandbox):
    # 40 modules do not fit in 16 KiB: the archive cannot be unpacked into the cache
    archive = _archive(sandbox, _tree(sandbox, files=200))
    fault = full(sandbox.cache, kib=16)
    proc = sandbox.extract(str(archive), "--no-probes", fault=fault)
    assert proc.returncode == 2, proc.stderr
    line = one_line_error(proc)
    assert line.startswith(f"archdiff: error: cannot write to {sandbox.cache} ({fault.reason}): free some space")
    left = contents(sandbox.cache)
    assert not [p for p in left if p.startswith("trees/") and p.count("/") > 1], left  # no tree, no scratch
    # the next run, with room, extracts it whole
    (sandbox.base / "cache.after").unlink(missing_ok=True)
    proc = sandbox.extract(str(archive), "--no-probes")
    assert proc.returncode == 0, proc.stderr
    bundle = json.loads((sandbox.out / "evidence.json").read_text())
    assert bundle["stats"]["files"] == {"python": 201}


def test_a_cache_that_fills_up_during_the_run_is_dropped_and_the_run_goes_on(sandbox):
    tree = _tree(sandbox, files=200)
    expected = _reference(sandbox, str(tree))
    fault = full(sandbox.cache, kib=48)
    proc = sandbox.run("extract", str(tree), "-o", str(sandbox.out), "--cache-dir", str(sandbox.cache), "-j", "1",
                       "--no-probes", fault=fault)
    assert proc.returncode == 0, proc.stderr
    (warning,) = _warnings(proc)
    assert warning.startswith(f"archdiff: warning: cache {sandbox.cache} cannot be used (") and \
        warning.endswith("): working without it")
    assert (sandbox.out / "evidence.json").read_bytes() == expected


def test_a_full_output_disk_is_one_line_and_keeps_the_previous_evidence_whole(sandbox):
    tree = _tree(sandbox, files=200)
    old = sandbox.base / "old"
    proc = sandbox.run("extract", str(_tree_small(sandbox)), "-o", str(old), "--cache-dir", str(sandbox.cache),
                       "-j", "1", "--no-probes")
    assert proc.returncode == 0, proc.stderr
    previous = (old / "evidence.json").read_bytes()
    fault = full(sandbox.out, kib=24, seed=old)
    proc = sandbox.run("extract", str(tree), "-o", str(sandbox.out), "--cache-dir", str(sandbox.cache), "-j", "1",
                       "--no-probes", fault=fault)
    assert proc.returncode == 2, proc.stderr
    assert one_line_error(proc).startswith(f"archdiff: error: cannot write to {sandbox.out} ({fault.reason}): ")
    # the previous evidence is there, whole; no temporary file is left beside it
    left = contents(sandbox.out)
    assert set(left) == {"evidence.json", "run-log.json"} and left["evidence.json"] == len(previous), left
    sandbox.assert_contained()


def _tree_small(sandbox):
    small = sandbox.input / "small"
    small.mkdir()
    (small / "a.py").write_text("def a():\n    pass\n")
    return small


def _extract(sandbox, spec: str, out: str, jobs: str = "1"):
    return subprocess.run([sys.executable, "-m", "archdiff.cli", "extract", spec, "-o", str(sandbox.base / out),
                           "--cache-dir", str(sandbox.cache), "-j", jobs, "--no-probes"], capture_output=True,
                          text=True, env=sandbox.env(), cwd=sandbox.base / "cwd", timeout=CASE_TIMEOUT)


@pytest.mark.parametrize("same_output", [False, True], ids=["own-outputs", "one-output"])
def test_concurrent_runs_on_one_cold_cache_all_succeed_identically(sandbox, same_output):
    """A check more than a regression test: six runs racing on one cold fact cache (SQLite), one
    bundle memo and, in the second case, one output directory."""
    tree = _tree(sandbox, files=120)
    expected = _reference(sandbox, str(tree))
    runs = 6
    with concurrent.futures.ThreadPoolExecutor(max_workers=runs) as pool:
        procs = list(pool.map(lambda i: _extract(sandbox, str(tree), "out" if same_output else f"o{i}", str(1 + i % 2)),
                              range(runs)))
    assert [p.returncode for p in procs] == [0] * runs, [p.stderr for p in procs]
    assert not [p.stderr for p in procs if "warning" in p.stderr]  # nobody gave up on the cache
    outs = ["out"] if same_output else [f"o{i}" for i in range(runs)]
    for out in outs:
        assert (sandbox.base / out / "evidence.json").read_bytes() == expected
        assert sorted(p.name for p in (sandbox.base / out).iterdir()) == ["evidence.json", "run-log.json"]
    # every file's facts went into the one cache, once each
    cache = FactCache(sandbox.cache / "facts.sqlite")
    assert cache.problem == ""
    cache.close()
    sandbox.assert_contained()


def test_a_run_never_writes_into_another_runs_temporary_file(tmp_path):
    """Two runs writing one output directory: each writes a temporary file of its own. With a
    fixed ``evidence.json.tmp`` the second truncated the first's half-written file and renamed it
    into place, and the first then failed on its own rename."""
    from extractor.evidence.write import write_bundle

    out = tmp_path / "out"
    out.mkdir()
    in_progress = out / "evidence.json.tmp"  # the other run, halfway through its write
    in_progress.write_text('{"schema_version": 1, "sys')
    write_bundle({}, out, "{}\n")
    assert (out / "evidence.json").read_text() == "{}\n"
    assert in_progress.read_text() == '{"schema_version": 1, "sys'
    assert sorted(p.name for p in out.iterdir()) == ["evidence.json", "evidence.json.tmp"]


def test_a_cache_another_run_holds_too_long_is_given_up_for_this_run(tmp_path, monkeypatch, caplog):
    import sqlite3

    from extractor.run import cache as cache_module

    path = tmp_path / "facts.sqlite"
    store = FactCache(path)
    store.put_bytes("kept", b"a fact another run needs")
    store.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another run in the middle of a long write
    monkeypatch.setattr(cache_module, "BUSY_TIMEOUT", 0.2, raising=False)
    try:
        blocked = FactCache(path)
        assert blocked.get_bytes("kept") == b"a fact another run needs"  # WAL: readers are never blocked
        blocked.put_bytes("new", b"waits for the lock, then gives the cache up")
        assert blocked.problem == f"cache {tmp_path} cannot be used (database is locked): working without it"
        assert blocked.get_bytes("kept") is None  # off for the rest of this run
        blocked.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    after = FactCache(path)
    assert (after.get_bytes("kept"), after.get_bytes("new")) == (b"a fact another run needs", None)
    assert [r.getMessage() for r in caplog.records] == [blocked.problem]


# -- an output directory that cannot be written: refused before any work ----------------------

def _writers(sandbox, out):
    """Every command that writes, with input it would otherwise take minutes over or fetch from
    the network: the output check must come first, so none of that happens."""
    tree = str(_tree(sandbox, files=3))
    evidence = sandbox.base / "evidence.json"
    evidence.write_text("{}")
    return {
        "extract": ["extract", tree, "-o", str(out), "--no-probes"],
        "compare": ["compare", tree, tree, "-o", str(out)],
        "battle": ["battle", "vllm-vs-triton", "-o", str(out)],
        "releases": ["releases", "pypi:vllm", "--last", "2", "-o", str(out)],
        "graph export": ["graph", "export", str(evidence), "-o", str(out / "graph.graphml")],
    }


@pytest.mark.parametrize("command", ["extract", "compare", "battle", "releases", "graph export"])
def test_every_command_that_writes_refuses_a_read_only_output_directory_first(sandbox, command):
    out = sandbox.base / "read-only"
    fault = read_only(out)
    argv = _writers(sandbox, out)[command]
    proc = sandbox.run(*argv, *_cache(sandbox, command), fault=fault, timeout=30)
    assert proc.returncode == 2, proc.stderr
    assert one_line_error(proc).startswith(f"archdiff: error: cannot write to {out} ({fault.reason}): choose ")
    assert list(out.iterdir()) == [] and list(sandbox.cache.iterdir()) == [], "worked before checking the output"


@pytest.mark.parametrize("command", ["extract", "compare", "battle", "releases", "graph export"])
def test_every_command_that_writes_refuses_an_output_directory_under_a_file(sandbox, command):
    """A path through a regular file: no one can write there, root included (no fault to set up)."""
    blocker = sandbox.base / "a-file"
    blocker.write_text("not a directory\n")
    argv = _writers(sandbox, blocker / "out")[command]
    proc = sandbox.run(*argv, *_cache(sandbox, command), timeout=30)
    assert proc.returncode == 2, proc.stderr
    assert one_line_error(proc).startswith(f"archdiff: error: cannot write to {blocker}/out (Not a directory): ")
    assert list(sandbox.cache.iterdir()) == [], "worked before checking the output"


def _cache(sandbox, command: str) -> list[str]:
    return [] if command == "graph export" else ["--cache-dir", str(sandbox.cache)]
