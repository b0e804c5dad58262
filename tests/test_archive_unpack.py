"""Unpacking an archive without links takes a faster filter that does what tarfile's "data"
filter does: the same attributes for every kind of member, the same tree on disk."""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile

import pytest

from extractor.acquire.archives import data_filter_without_links, extract_tar
from extractor.errors import UserInputError


def _member(name: str, kind: bytes, mode: int, owned: bool = True) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.size = kind, mode, 0
    info.uid, info.gid = (1000, 1000) if owned else (None, None)
    info.uname, info.gname = ("someone", "group") if owned else (None, None)
    return info


MODES = [0o777, 0o755, 0o644, 0o600, 0o400, 0o000, 0o100, 0o010, 0o070, 0o4755, 0o2755, 0o1777, 0o7777, 0o666]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", [tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE, tarfile.DIRTYPE])
@pytest.mark.parametrize("owned", [True, False])
def test_the_fast_filter_gives_what_the_data_filter_gives(tmp_path, kind, mode, owned):
    member = _member("pkg/sub/file.py", kind, mode, owned)
    expected = tarfile.data_filter(member, str(tmp_path))
    got = data_filter_without_links(member, str(tmp_path))
    assert got.get_info() == expected.get_info()


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE])
def test_special_files_are_refused_by_both(tmp_path, kind):
    member = _member("pkg/dev", kind, 0o644)
    with pytest.raises(tarfile.SpecialFileError):
        tarfile.data_filter(member, str(tmp_path))
    with pytest.raises(tarfile.SpecialFileError):
        data_filter_without_links(member, str(tmp_path))


def test_links_go_to_the_real_filter(tmp_path):
    link = _member("pkg/link", tarfile.SYMTYPE, 0o777)
    link.linkname = "../../outside"
    with pytest.raises(tarfile.LinkOutsideDestinationError):
        data_filter_without_links(link, str(tmp_path))


def _tarball(entries) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, kind, mode, data in entries:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.mtime, info.uid, info.uname = kind, mode, 1_700_000_000, 4242, "x"
            if kind == tarfile.SYMTYPE:
                info.linkname, data = data.decode(), b""
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    return buffer.getvalue()


def _tree(root, archived=()):
    """Mode, type, content and, for what the archive names, mtime: a directory only implied by a
    member's path is made at unpack time, so two unpacks a second apart differ there."""
    out = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        name = path.relative_to(root).as_posix()
        out[name] = (stat.S_IMODE(st.st_mode), stat.S_IFMT(st.st_mode),
                     int(st.st_mtime) if name in archived else None, path.read_bytes() if path.is_file() else b"")
    return out


ENTRIES = [("pkg-1.0", tarfile.DIRTYPE, 0o775, b""), ("pkg-1.0/a.py", tarfile.REGTYPE, 0o664, b"x = 1\n"),
           ("pkg-1.0/run.sh", tarfile.REGTYPE, 0o4777, b"#!/bin/sh\n"), ("pkg-1.0/ro", tarfile.REGTYPE, 0o444, b"r"),
           ("pkg-1.0/deep/er/b.h", tarfile.REGTYPE, 0o600, b"struct B { int x; };\n"),
           ("pkg-1.0/noexec", tarfile.REGTYPE, 0o070, b"n")]


def test_an_archive_without_links_unpacks_to_the_tree_the_data_filter_makes(tmp_path):
    data = _tarball(ENTRIES)
    extract_tar(io.BytesIO(data), tmp_path / "fast", name="pkg.tar.gz")
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(tmp_path / "reference", filter="data")
    archived = {name for name, *_ in ENTRIES}
    assert _tree(tmp_path / "fast", archived) == _tree(tmp_path / "reference", archived)
    assert os.stat(tmp_path / "fast" / "pkg-1.0" / "run.sh").st_mode & 0o7777 == 0o755


def test_an_archive_with_a_link_still_takes_the_data_filter(tmp_path):
    data = _tarball([*ENTRIES, ("pkg-1.0/inside", tarfile.SYMTYPE, 0o777, b"a.py")])
    extract_tar(io.BytesIO(data), tmp_path / "t", name="pkg.tar.gz")
    assert (tmp_path / "t" / "pkg-1.0" / "inside").is_symlink()
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(tmp_path / "reference", filter="data")
    archived = {name for name, *_ in ENTRIES}
    assert _tree(tmp_path / "t", archived) == _tree(tmp_path / "reference", archived)


def test_a_bomb_is_still_refused_while_decompressing(tmp_path, monkeypatch):
    from extractor.acquire import archives

    monkeypatch.setattr(archives, "MAX_ARCHIVE_BYTES", 1024)
    data = _tarball([("big", tarfile.REGTYPE, 0o644, b"\0" * 100_000)])
    with pytest.raises(UserInputError, match="unpacks to more than 1024 bytes"):
        extract_tar(io.BytesIO(data), tmp_path / "t", name="bomb.tar.gz")
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("spool", [1 << 30, 4096])
def test_a_tar_past_the_memory_limit_goes_through_a_file_and_unpacks_the_same(tmp_path, monkeypatch, spool):
    """Decompressed chunks are kept in memory up to SPOOL_BYTES; past it, in a temporary file,
    and the tree is then written before extract_tar returns (no background writer)."""
    from extractor.acquire import archives

    monkeypatch.setattr(archives, "SPOOL_BYTES", spool)
    monkeypatch.setattr(archives, "_CHUNK", 1000)  # several chunks before and after the spill
    entries = [*ENTRIES, ("pkg-1.0/big.bin", tarfile.REGTYPE, 0o644, bytes(range(256)) * 40)]
    data = _tarball(entries)
    unpacking = extract_tar(io.BytesIO(data), tmp_path / "t", name="pkg.tar.gz", background=True)
    if spool < len(gzip.decompress(data)):
        assert unpacking is None and (tmp_path / "t").is_dir()
    else:
        assert unpacking is not None
        unpacking.wait()
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(tmp_path / "reference", filter="data")
    archived = {name for name, *_ in entries}
    assert _tree(tmp_path / "t", archived) == _tree(tmp_path / "reference", archived)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".extract-")]  # the spill file went with its folder
