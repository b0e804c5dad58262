"""A first-run archive is written by a child process while the scan reads its files from memory: what the
memory serves must be what the disk will hold (the same files, sizes, bytes and inventory), an
archive whose tree could differ from its members is written before the run goes on, and the
evidence is the evidence of the same archive already unpacked."""

from __future__ import annotations

import io
import sqlite3
import tarfile

import pytest

from extractor.acquire.archives import extract_tar
from extractor.acquire.inventory import list_files, list_unpacked
from extractor.context import ExtractOptions, SourceTree
from extractor.errors import UserInputError
from extractor.run.pipeline import acquire_sources, extract_system
from tests.conftest import FIXTURES


def _tar(entries, compression: str = "gz") -> bytes:
    """``entries``: (name, data) for regular files, (name, None) for folders, (name, "->target") for links."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=f"w:{compression}") as tar:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.mtime, info.mode = 1_700_000_000, 0o644
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            elif isinstance(data, str):
                info.type, info.linkname = tarfile.SYMTYPE, data.removeprefix("->")
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


BIG_JSON = b"[" + b"0," * (4 * 1024**2) + b"0]"  # over the JSON cap: a too-large diagnostic, both ways
PLAIN = [("pkg-1.0", None), ("pkg-1.0/pkg", None), ("pkg-1.0/pkg/__init__.py", b"from .core import run\n"),
         ("pkg-1.0/pkg/core.py", b"def run():\n    return 1\n"), ("./pkg-1.0/pkg//ops.cu", b"__global__ void k() {}\n"),
         ("pkg-1.0/pkg/node_modules/skip.py", b"x = 1\n"), ("pkg-1.0/.git/hooks/x.py", b"y = 2\n"),
         ("pkg-1.0/data/big.json", BIG_JSON), ("pkg-1.0/README.md", b"# pkg\n"), ("pkg-1.0/CMakeLists.txt", b"\n"),
         ("pkg-1.0/implied/folder/a.h", b"struct A { int x; };\n")]


def _files_on_disk(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_the_files_served_from_memory_are_the_files_written(tmp_path):
    unpacking = extract_tar(io.BytesIO(_tar(PLAIN)), tmp_path / "t", name="pkg-1.0.tar.gz", background=True)
    assert unpacking is not None and unpacking.root == "pkg-1.0"
    unpacking.wait()
    root = tmp_path / "t" / "pkg-1.0"
    on_disk = _files_on_disk(root)
    assert {rel: unpacking.read(rel) for rel in unpacking.sizes()} == on_disk
    assert unpacking.sizes() == {rel: len(data) for rel, data in on_disk.items()}
    assert "pkg/ops.cu" in on_disk  # "./" and "//" in a member's name: written at the normal path
    tree = SourceTree("", "pkg-1.0.tar.gz", "archive", root)
    listed = list_files(tree)
    assert list_unpacked(tree, unpacking.sizes(), unpacking.head) == listed
    assert [d.code for d in listed[1]] == ["too-large"] and len(listed[0]) == 4  # node_modules, .git: skipped


@pytest.mark.parametrize("entries", [
    [("pkg/a.py", b"1\n"), ("pkg/link.py", "->a.py")],  # a link
    [("pkg/a.py", b"1\n"), ("pkg/./a.py", b"2\n")],  # two members at one path: the later one wins on disk
    [("pkg/a", b"file\n"), ("pkg/a/b.py", b"x\n")],  # a file where a folder is needed
    [("pkg/a", None), ("pkg/a", b"file\n")],  # a folder, then a file at its path
    # the same, deeper, after other members have cleared the folders above it
    [("pkg/x/y.py", b"1\n"), ("pkg/a/b/c.py", b"2\n"), ("pkg/a/b/d.py", b"3\n"), ("pkg/a/b", b"file\n")],
], ids=["link", "duplicate", "file-as-folder", "folder-then-file", "file-as-folder-deep"])
def test_an_archive_whose_tree_could_differ_from_its_members_is_written_first(tmp_path, entries):
    target = tmp_path / "t"
    try:
        unpacking = extract_tar(io.BytesIO(_tar(entries)), target, name="x.tar.gz", background=True)
    except UserInputError:
        return  # refused, as without background: nothing to serve from memory either
    assert unpacking is None and target.is_dir()


def test_a_single_file_archive_has_the_target_as_its_root(tmp_path):
    unpacking = extract_tar(io.BytesIO(_tar([("alone.py", b"x = 1\n")], "")), tmp_path / "t", name="x.tar",
                            background=True)
    assert unpacking is not None and unpacking.root == "" and unpacking.sizes() == {"alone.py": 6}
    unpacking.wait()
    (tree,) = acquire_sources([str(_archive(tmp_path, [("alone.py", b"x = 1\n")], "alone.tar.gz"))], tmp_path / "c")
    assert tree.root == (tmp_path / "c" / "trees").joinpath(tree.root.name) and (tree.root / "alone.py").is_file()


def test_a_write_that_fails_is_raised_by_wait_as_acquire_would_raise_it(tmp_path, monkeypatch):
    import errno

    from extractor.acquire import archives
    from extractor.acquire.sources import wait_unpacked
    from extractor.errors import StorageError

    def disk_full(tmp, target, skipped):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(archives, "_move_into_place", disk_full)
    unpacking = extract_tar(io.BytesIO(_tar(PLAIN)), tmp_path / "t", name="x.tar.gz", background=True)
    assert unpacking is not None
    with pytest.raises(StorageError, match="No space left"):
        wait_unpacked(unpacking, tmp_path)
    assert not (tmp_path / "t").exists() and [p.name for p in tmp_path.iterdir()] == []  # no scratch left behind


def _archive(tmp_path, entries, filename: str):
    path = tmp_path / filename
    path.write_bytes(_tar(entries))
    return path


def test_an_archive_unpacked_while_scanning_gives_the_evidence_of_one_unpacked_before(tmp_path):
    fixture = FIXTURES / "pysample"
    entries = [(f"pysample-1.0/{p.relative_to(fixture).as_posix()}", p.read_bytes() if p.is_file() else None)
               for p in sorted(fixture.rglob("*"))]
    archive = _archive(tmp_path, entries, "pysample-1.0.tar.gz")
    before = tmp_path / "before"
    acquire_sources([str(archive)], before)  # unpacked the old way: the run finds the tree in place
    first = extract_system([str(archive)], options=ExtractOptions(cache_dir=before))
    streamed = extract_system([str(archive)], options=ExtractOptions(cache_dir=tmp_path / "fresh", jobs=2))
    assert "unpack" in streamed.log["order"] and "unpack" not in first.log["order"]
    assert streamed.data == first.data and b"pysample" in streamed.data
    # the memo is stored under the key a later run looks up: it is served, not recomputed
    again = extract_system([str(archive)], options=ExtractOptions(cache_dir=tmp_path / "fresh"))
    assert again.cache["memo"] == 1 and again.data == first.data
    db = sqlite3.connect(tmp_path / "fresh" / "facts.sqlite")
    assert db.execute("SELECT count(*) FROM facts WHERE key LIKE 'bundle:%:summary'").fetchone()[0] == 1
    db.close()


@pytest.mark.real
def test_the_vllm_sdist_is_served_from_memory_as_tarfile_unpacks_it(vllm_src, tmp_path):
    """vLLM's sdist (3,433 members) takes the background path, and what memory serves is what
    tarfile's own "data" filter unpacked for the test cache: the same inventory, the same bytes."""
    from tests.conftest import cache_root

    with open(cache_root() / "sdists" / "vllm-0.10.2.tar.gz", "rb") as fh:
        unpacking = extract_tar(fh, tmp_path / "t", name="vllm-0.10.2.tar.gz", background=True)
    assert unpacking is not None and unpacking.root == "vllm-0.10.2"
    reference = SourceTree("", "pypi:vllm==0.10.2", "pypi", vllm_src)
    entries, diagnostics = list_files(reference)
    assert list_unpacked(reference, unpacking.sizes(), unpacking.head) == (entries, diagnostics) and len(entries) > 2_500
    assert all(unpacking.read(e.rel) == (vllm_src / e.rel).read_bytes() for e in entries)
    unpacking.wait()
    written = SourceTree("", "pypi:vllm==0.10.2", "pypi", tmp_path / "t" / "vllm-0.10.2")
    assert list_files(written) == (entries, diagnostics)


def test_the_tree_is_written_once_by_a_process_of_its_own(tmp_path, monkeypatch):
    """The writer is a forked child (the driver's lock is not its business), it writes the tree
    once, and a child that dies without a word leaves the writing to the driver."""
    import os
    import signal

    from extractor.acquire import archives

    log = tmp_path / "writers"
    original = archives._unpack_into

    def logged(tar, members, scratch):
        with open(log, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()}\n")
        return original(tar, members, scratch)

    monkeypatch.setattr(archives, "_unpack_into", logged)
    unpacking = extract_tar(io.BytesIO(_tar(PLAIN)), tmp_path / "t", name="x.tar.gz", background=True)
    unpacking.wait()
    (writer,) = log.read_text().split()
    assert int(writer) != os.getpid() and (tmp_path / "t" / "pkg-1.0" / "pkg" / "core.py").is_file()

    log.unlink()

    def killed(tar, members, scratch):
        if os.getpid() != driver:
            os.kill(os.getpid(), signal.SIGKILL)
        return logged(tar, members, scratch)

    driver = os.getpid()
    monkeypatch.setattr(archives, "_unpack_into", killed)
    unpacking = extract_tar(io.BytesIO(_tar(PLAIN)), tmp_path / "u", name="x.tar.gz", background=True)
    unpacking.wait()
    assert log.read_text().split() == [str(driver)]
    assert _files_on_disk(tmp_path / "u" / "pkg-1.0") == _files_on_disk(tmp_path / "t" / "pkg-1.0")


def _pysample_archive(tmp_path):
    fixture = FIXTURES / "pysample"
    entries = [(f"pysample-1.0/{p.relative_to(fixture).as_posix()}", p.read_bytes() if p.is_file() else None)
               for p in sorted(fixture.rglob("*"))]
    return _archive(tmp_path, entries, "pysample-1.0.tar.gz")


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_facts_held_while_the_tree_is_written_reach_the_cache(tmp_path, jobs):
    """Held until the tree is in place, then written beside the steps (a forked child with more
    than one job, the driver at the run's end with one): every file parsed has its facts stored,
    and a second run of the same tree parses none."""
    archive = _pysample_archive(tmp_path)
    cache = tmp_path / "cache"
    first = extract_system([str(archive)], options=ExtractOptions(cache_dir=cache, jobs=jobs))
    assert first.cache["misses"] > 5 and "unpack" in first.log["order"]
    db = sqlite3.connect(cache / "facts.sqlite")
    stored = db.execute("SELECT count(*) FROM facts WHERE key NOT LIKE 'bundle:%'").fetchone()[0]
    db.close()
    assert stored == first.cache["misses"]
    other = extract_system([str(archive)], options=ExtractOptions(cache_dir=cache, jobs=jobs, probe_structs=False))
    assert other.cache["misses"] == 0 and other.cache["hits"] == first.cache["misses"]


def test_a_problem_the_held_facts_writer_meets_turns_the_cache_off_said_once(tmp_path, monkeypatch, caplog):
    from extractor.run import workplace

    monkeypatch.setattr(workplace, "_put_held", lambda path, held: f"cache {path.parent} cannot be used (full)")
    archive = _pysample_archive(tmp_path)
    with caplog.at_level("WARNING", logger="archdiff"):
        run = extract_system([str(archive)], options=ExtractOptions(cache_dir=tmp_path / "cache", jobs=2))
    assert b"pysample" in run.data
    said = [r.getMessage() for r in caplog.records if "cannot be used" in r.getMessage()]
    assert said == [f"cache {tmp_path / 'cache'} cannot be used (full)"]
    again = extract_system([str(archive)], options=ExtractOptions(cache_dir=tmp_path / "cache", jobs=2))
    assert again.cache["memo"] == 0 and again.data == run.data  # the store was off: no memo was written
