"""The memo file and the evidence.json written from it are one file (a hard link), not two copies;
an evidence.json changed in place is never served back as the memo."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from extractor.acquire import stamps
from extractor.context import ExtractOptions
from extractor.run import memo
from extractor.run.pipeline import extract_system
from extractor.support import storage
from tests.conftest import FIXTURES


def _setup(tmp_path: Path, monkeypatch) -> tuple[Path, ExtractOptions]:
    monkeypatch.setattr(stamps, "SETTLED_NS", 0)  # the copied files are new: trusted at once here
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "pysample", tree)
    return tree, ExtractOptions(jobs=1, cache_dir=tmp_path / "cache")


def _memo_files(cache: Path) -> list[Path]:
    return sorted((cache / "memo").glob("*.json"))


def test_the_evidence_written_is_the_memo_file_and_a_warm_run_links_it_again(tmp_path, monkeypatch):
    tree, options = _setup(tmp_path, monkeypatch)
    cold = extract_system([str(tree)], options=options)
    assert _memo_files(options.cache_dir) == []  # kept once evidence.json is written, not before
    written = cold.write(tmp_path / "out")
    [kept] = _memo_files(options.cache_dir)
    assert os.path.samefile(kept, written) and written.stat().st_nlink == 2
    assert kept.with_suffix(".stamp").exists()
    warm = extract_system([str(tree)], options=options)
    again = warm.write(tmp_path / "again")
    assert warm.cache["memo"] == 1 and os.path.samefile(again, kept)
    assert again.read_bytes() == cold.data


def test_an_evidence_file_changed_in_place_is_not_served_as_the_memo(tmp_path, monkeypatch):
    tree, options = _setup(tmp_path, monkeypatch)
    cold = extract_system([str(tree)], options=options)
    written = cold.write(tmp_path / "out")
    with open(written, "r+b") as fh:  # someone edits their evidence.json in place: the memo file too
        fh.write(b"[")
    warm = extract_system([str(tree)], options=options)
    assert warm.cache["memo"] == 1 and warm.data == cold.data  # the store's copy, not the edited file
    out = warm.write(tmp_path / "again")
    assert out.read_bytes() == cold.data and not os.path.samefile(out, written)
    [kept] = _memo_files(options.cache_dir)
    assert kept.read_bytes() == cold.data and not os.path.samefile(kept, written)


def test_without_a_link_the_memo_file_is_written_from_the_bytes(tmp_path, monkeypatch):
    """Another device (or a file system without links): the memo file is a copy, as before, and is
    served unstamped."""
    tree, options = _setup(tmp_path, monkeypatch)

    def refused(source, target):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", refused)
    cold = extract_system([str(tree)], options=options)
    written = cold.write(tmp_path / "out")
    memo.settle()
    [kept] = _memo_files(options.cache_dir)
    assert not os.path.samefile(kept, written) and kept.read_bytes() == cold.data
    assert not kept.with_suffix(".stamp").exists()
    warm = extract_system([str(tree)], options=options)
    assert warm.cache["memo"] == 1 and warm.write(tmp_path / "again").read_bytes() == cold.data


def test_a_bundle_nobody_writes_out_is_still_kept(tmp_path, monkeypatch):
    tree, options = _setup(tmp_path, monkeypatch)
    cold = extract_system([str(tree)], options=options)
    memo.settle()
    [kept] = _memo_files(options.cache_dir)
    assert kept.read_bytes() == cold.data and not kept.with_suffix(".stamp").exists()


def test_a_file_renamed_over_the_source_before_the_link_is_not_linked(tmp_path):
    source, other = tmp_path / "a", tmp_path / "b"
    info = storage.written_atomic(source, b"mine")
    storage.write_atomic(source, b"someone else's")  # another process replaced it meanwhile
    try:
        storage.link_atomic(other, source, info.st_ino)
    except OSError as err:
        assert err.errno == errno.ESTALE
    else:
        raise AssertionError("linked a file that is no longer the one written")
    assert not other.exists() and [p.name for p in tmp_path.iterdir()] == ["a"]


def test_a_cache_removed_before_its_bundle_is_kept_is_not_made_again(tmp_path, monkeypatch):
    """A program that extracts into a temporary cache and removes it before the memo file is kept
    (it never wrote evidence.json, so the file waits for the next extraction or the exit) does not
    get the cache back holding that one file."""
    tree, options = _setup(tmp_path, monkeypatch)
    extract_system([str(tree)], options=options)
    shutil.rmtree(options.cache_dir)
    memo.settle()
    assert not options.cache_dir.exists()
