"""A warm run: the memo's key from the files' stamps (nothing read), the bundle copied from a memo
file, and every input that changes the evidence still changing the key."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from extractor.acquire import stamps
from extractor.context import ExtractOptions
from extractor.run import compute, memo
from extractor.run.pipeline import extract_system
from tests.conftest import FIXTURES, ROOT


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "pysample", tree)
    return tree


def _counting_reads(monkeypatch) -> list[str]:
    """Every file the run reads from disk, by name."""
    real, read = compute.read_regular_file, []

    def counted(path, limit):
        read.append(path.name)
        return real(path, limit)

    monkeypatch.setattr(compute, "read_regular_file", counted)
    return read


def test_a_warm_run_reads_no_file_and_copies_the_same_bytes(tmp_path, monkeypatch):
    monkeypatch.setattr(stamps, "SETTLED_NS", 0)  # the copied files are new: trusted at once here
    tree, options = _tree(tmp_path), ExtractOptions(jobs=1, cache_dir=tmp_path / "cache")
    cold = extract_system([str(tree)], options=options)
    read = _counting_reads(monkeypatch)
    warm = extract_system([str(tree)], options=options)
    assert (cold.cache["memo"], warm.cache["memo"]) == (0, 1) and read == []
    assert warm.log["order"] == ["acquire", "inventory", "memo"]  # no read, no scan, no step
    written = warm.write(tmp_path / "out")
    assert written.read_bytes() == cold.data == warm.data
    assert warm.summary == cold.summary and warm.cache["hits"] == cold.summary["files"]


def test_a_file_rewritten_with_the_same_size_and_time_is_read_again(tmp_path, monkeypatch):
    """Its change time moves, which no one can set back: the stamp differs, so the file is read and
    the evidence follows the new bytes."""
    monkeypatch.setattr(stamps, "SETTLED_NS", 0)
    tree, options = _tree(tmp_path), ExtractOptions(jobs=1, cache_dir=tmp_path / "cache")
    victim = next(p for p in sorted(tree.rglob("*.py")) if "def " in p.read_text())
    before = extract_system([str(tree)], options=options)
    info = victim.stat()
    time.sleep(0.05)  # past the file system's clock tick
    text = victim.read_text()
    renamed = text.replace("def ", "def z", 1)[: len(text)]  # same length: one name changed
    assert len(renamed) == len(text) and renamed != text
    victim.write_text(renamed)
    os.utime(victim, ns=(info.st_atime_ns, info.st_mtime_ns))  # size and modification time as before
    assert (victim.stat().st_size, victim.stat().st_mtime_ns) == (info.st_size, info.st_mtime_ns)
    read = _counting_reads(monkeypatch)
    after = extract_system([str(tree)], options=options)
    assert after.cache["memo"] == 0 and victim.name in read
    assert after.data != before.data


def test_a_file_written_just_before_its_read_is_not_trusted_by_its_stamp(tmp_path, monkeypatch):
    """Within the clock tick of its last write a later write may leave the same times: such a file
    is read again next run (its digest confirms the memo), never taken on its stamp."""
    tree, options = _tree(tmp_path), ExtractOptions(jobs=1, cache_dir=tmp_path / "cache")
    extract_system([str(tree)], options=options)  # every file was written a moment ago
    read = _counting_reads(monkeypatch)
    again = extract_system([str(tree)], options=options)
    assert again.cache["memo"] == 1 and sorted(read) == sorted(p.name for p in tree.rglob("*.py"))


def test_the_memo_file_is_a_copy_the_store_can_give_again(tmp_path, monkeypatch):
    """Removed (or never kept), the bundle comes from the store's compressed memo and is kept again;
    no more than KEEP bundles are kept as files."""
    monkeypatch.setattr(stamps, "SETTLED_NS", 0)
    monkeypatch.setattr(memo, "KEEP", 2)
    tree, cache = _tree(tmp_path), tmp_path / "cache"
    options = ExtractOptions(jobs=1, cache_dir=cache)
    cold = extract_system([str(tree)], options=options)
    memo.settle()  # the memo file is written on a thread
    shutil.rmtree(cache / "memo")
    warm = extract_system([str(tree)], options=options)
    assert warm.cache["memo"] == 1 and warm.data == cold.data and len(list((cache / "memo").iterdir())) == 1
    for version in ("2", "3", "4"):
        extract_system([str(tree)], version=version, options=options)
        memo.settle()
    assert len(list((cache / "memo").iterdir())) == 2


def test_a_compiler_installed_after_a_probed_run_is_not_served_its_bundle(tmp_path, monkeypatch):
    """Struct probes depend on the compilers found: one more on the search path changes the memo's
    key of a probed run (a probe that failed for want of it is tried again), not of a run without
    probes; a search path spelled otherwise that finds the same compilers changes nothing."""
    monkeypatch.setattr(stamps, "SETTLED_NS", 0)
    tools = tmp_path / "bin"
    tools.mkdir()
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    tree = _tree(tmp_path)
    probed = ExtractOptions(jobs=1, cache_dir=tmp_path / "cache")
    unprobed = ExtractOptions(jobs=1, cache_dir=tmp_path / "cache", probe_structs=False)
    for options in (probed, unprobed):
        extract_system([str(tree)], options=options)
    # another spelling of the search path that finds the same compilers (a Ray worker's) is served
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", f"{empty}{os.pathsep}{os.environ['PATH']}")
    assert extract_system([str(tree)], options=probed).cache["memo"] == 1
    time.sleep(0.05)
    (tools / "aarch64-linux-gnu-g++").write_text("#!/bin/sh\n")
    assert extract_system([str(tree)], options=probed).cache["memo"] == 0
    assert extract_system([str(tree)], options=unprobed).cache["memo"] == 1


def test_the_warm_command_imports_no_scanner_and_no_step(tmp_path):
    """What makes the warm command cheap: it decides from the stamps and the memo, and copies the
    file, without importing the scanners, the steps or the evidence codec (0.1 s of imports)."""
    tree, cache, out = _tree(tmp_path), tmp_path / "cache", tmp_path / "out"
    script = ("import sys; from archdiff.cli import cli\n"
              "try:\n    cli.main(sys.argv[1:], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
              "print(sorted(m for m in ('extractor.steps', 'extractor.evidence.write', 'extractor.run.compute')"
              " if m in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-c", script, "extract", str(tree), "-o", str(out), "--cache-dir", str(cache), "-j", "1"]
    cold = subprocess.run(args, capture_output=True, text=True, env=env, check=True)
    time.sleep(stamps.SETTLED_NS / 1e9 + 0.1)  # the tree's files settle: their stamps can be trusted
    subprocess.run(args, capture_output=True, text=True, env=env, check=True)  # reads, records the stamps
    warm = subprocess.run(args, capture_output=True, text=True, env=env, check=True)
    assert cold.stdout.splitlines()[-1] != "[]"  # the cold run did import them
    assert warm.stdout.splitlines()[-1] == "[]"
    log = json.loads((out / "run-log.json").read_text())
    assert log["cache"]["memo"] == 1 and log["order"] == ["acquire", "inventory", "memo"]


@pytest.mark.parametrize("corrupt", [b"", b"{not json"])
def test_unreadable_stamps_mean_every_file_is_read(tmp_path, monkeypatch, corrupt):
    monkeypatch.setattr(stamps, "SETTLED_NS", 0)
    tree, cache = _tree(tmp_path), tmp_path / "cache"
    options = ExtractOptions(jobs=1, cache_dir=cache)
    extract_system([str(tree)], options=options)
    for path in (cache / "stamps").iterdir():
        path.write_bytes(corrupt)
    read = _counting_reads(monkeypatch)
    again = extract_system([str(tree)], options=options)
    assert again.cache["memo"] == 1 and len(read) == len(list(tree.rglob("*.py")))


def test_an_archive_unpacked_by_the_first_run_is_not_read_by_the_second(tmp_path, monkeypatch):
    """The first run scans the archive's files from memory while a thread writes them; their stamps
    are taken at the run's end, with the digests of the bytes written, so the next run reads none."""
    import tarfile

    monkeypatch.setattr(stamps, "SETTLED_NS", 0)
    monkeypatch.setattr(stamps, "COARSE_TICK_NS", 0)
    archive = tmp_path / "pysample-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(FIXTURES / "pysample", arcname="pysample-1.0")
    options = ExtractOptions(jobs=1, cache_dir=tmp_path / "cache")
    first = extract_system([str(archive)], options=options)
    assert "unpack" in first.log["order"]
    read = _counting_reads(monkeypatch)
    second = extract_system([str(archive)], options=options)
    assert second.cache["memo"] == 1 and read == [] and second.data == first.data


def test_a_file_written_after_the_unpacker_finished_is_not_stamped(tmp_path):
    tree = stamps.TreeStamps.load(tmp_path, tmp_path / "tree")
    old = time.time_ns() - 10 * stamps.SETTLED_NS
    tree.record_written("a.py", (1, old, old, 7), "aa", finished_ns=old + 10**9)
    tree.record_written("b.py", (1, old + 2 * 10**9, old, 8), "bb", finished_ns=old + 10**9)  # written since
    tree.save()
    again = stamps.TreeStamps.load(tmp_path, tmp_path / "tree")
    assert again.digest("a.py", (1, old, old, 7)) == "aa"
    assert again.digest("b.py", (1, old + 2 * 10**9, old, 8)) is None
    assert again.digest("a.py", (2, old, old, 7)) is None  # another size: another file
