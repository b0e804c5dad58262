"""The driver lists a first-run tar's members from its headers (``list_plain_tar``), not through
``tarfile``: the listing must be ``tarfile``'s own (names, types, sizes, offsets) for every tar it
accepts, in every format Python, GNU tar and setuptools write, and it must give way to ``tarfile``
for anything else (links, damaged headers, unknown pax keywords), so that the files served from
memory are the files the tree will hold."""

from __future__ import annotations

import io
import tarfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.acquire import archives
from extractor.acquire.archives import extract_tar, list_plain_tar
from extractor.errors import UserInputError


def _key(member: tarfile.TarInfo) -> tuple:
    return member.name, member.type, member.size, member.offset, member.offset_data


def _tarfile_listing(data: bytes) -> list[tuple]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        return [_key(m) for m in tar]


def _tar(entries, fmt=tarfile.PAX_FORMAT) -> bytes:
    """``entries``: (name, bytes) for files, (name, None) for folders."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt) as tar:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.mtime = 1_700_000_000.25 if fmt == tarfile.PAX_FORMAT else 1_700_000_000
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


_PART = st.text(alphabet=st.sampled_from("abcXYZ_-.0é中"), min_size=1, max_size=60).filter(
    lambda s: s not in (".", ".."))
_ENTRY = st.tuples(st.lists(_PART, min_size=1, max_size=5).map("/".join),
                   st.one_of(st.none(), st.binary(max_size=1500)))


@settings(max_examples=150, deadline=None)
@given(st.lists(_ENTRY, min_size=1, max_size=12),
       st.sampled_from([tarfile.PAX_FORMAT, tarfile.GNU_FORMAT, tarfile.USTAR_FORMAT]))
def test_the_listing_is_tarfiles_in_every_format(entries, fmt):
    """Long names (pax ``path``, GNU long names, ustar prefixes), non-ASCII names, folders, empty and
    odd-sized files: where the fast listing answers, it answers what tarfile reads."""
    try:
        data = _tar(entries, fmt)
    except ValueError:  # a name ustar cannot hold: no such tar to list
        return
    listed = list_plain_tar(data)
    assert listed is not None
    assert [_key(m) for m in listed] == _tarfile_listing(data)


_LONG_PATH = "/".join(["abcdefghij" * 3] * 6)  # past ustar's 100-byte name: a prefix, a pax path or a GNU long name
_LONG_PART = "é" * 80 + "中" * 20  # one component past 100 bytes: pax or GNU only


@pytest.mark.parametrize("fmt", [tarfile.PAX_FORMAT, tarfile.GNU_FORMAT, tarfile.USTAR_FORMAT],
                         ids=["pax", "gnu", "ustar"])
def test_long_names_list_as_tarfile_lists_them(fmt):
    entries = [(_LONG_PATH, b"x" * 700), (_LONG_PATH + "_folder", None), ("top/" + _LONG_PATH + "/", None),
               ("short.py", b""), ("a" * 99 + "é", None)]  # the last: a folder whose name is all prefix in ustar
    if fmt != tarfile.USTAR_FORMAT:
        entries += [("top/" + _LONG_PART, b"y"), ("top/" + _LONG_PART + "_folder/", None)]
    data = _tar(entries, fmt)
    listed = list_plain_tar(data)
    assert listed is not None and listed[0].name == _LONG_PATH
    assert [_key(m) for m in listed] == _tarfile_listing(data)


def test_a_real_sdists_shapes_list_as_tarfile_lists_them():
    """A setuptools sdist's shapes: a pax header per member (a float mtime), the top folder first,
    a path past 100 characters, a folder written with its slash."""
    long = "pkg-1.0/" + "/".join(["deeply_nested_folder"] * 6) + "/module.py"
    data = _tar([("pkg-1.0/", None), ("pkg-1.0/pkg/__init__.py", b"x = 1\n"), (long, b"y = 2\n" * 100),
                 ("pkg-1.0/empty.txt", b"")])
    listed = list_plain_tar(data)
    assert listed is not None and [m.name for m in listed][0] == "pkg-1.0" and listed[2].name == long
    assert [_key(m) for m in listed] == _tarfile_listing(data)


def _with_link() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("pkg/a.py")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"x\n"))
        link = tarfile.TarInfo("pkg/b.py")
        link.type, link.linkname = tarfile.SYMTYPE, "a.py"
        tar.addfile(link)
    return buffer.getvalue()


def _damaged(data: bytes) -> bytes:
    out = bytearray(data)
    out[0] ^= 0x01  # the first header's name: its checksum no longer holds
    return bytes(out)


def _with_pax(keyword: bytes) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT,
                      pax_headers={}) as tar:
        info = tarfile.TarInfo("pkg/a.py")
        info.size = 2
        info.pax_headers = {keyword.decode(): "1"}
        tar.addfile(info, io.BytesIO(b"x\n"))
    return buffer.getvalue()


@pytest.mark.parametrize("data", [_with_link(), _damaged(_tar([("pkg/a.py", b"x\n")])), _with_pax(b"SCHILY.xattr.x"),
                                  b"\0" * 1024, b"not a tar at all" * 64],
                         ids=["link", "damaged-checksum", "unknown-pax-keyword", "empty", "garbage"])
def test_anything_else_is_left_to_tarfile(data):
    assert list_plain_tar(data) is None


def test_a_truncated_member_is_left_to_tarfile():
    data = _tar([("pkg/a.py", b"x" * 5000)])
    assert list_plain_tar(data[:2048]) is None


def test_the_writer_refuses_a_tar_that_lists_differently(tmp_path, monkeypatch):
    """The tree is written from tarfile's listing: if it is not the one the files were served from,
    the run stops with one line rather than scan one tree and cache another."""
    data = _tar([("pkg-1.0/pkg/a.py", b"x = 1\n"), ("pkg-1.0/pkg/b.py", b"y = 2\n")])
    honest = list_plain_tar
    monkeypatch.setattr(archives, "list_plain_tar", lambda raw: honest(raw)[:-1])  # one member fewer
    unpacking = extract_tar(io.BytesIO(data), tmp_path / "t", name="pkg-1.0.tar", background=True)
    assert unpacking is not None and set(unpacking.sizes()) == {"pkg/a.py"}
    with pytest.raises(UserInputError, match="list differently"):
        unpacking.wait()
    assert not (tmp_path / "t").exists()


def test_a_tar_the_fast_listing_gives_way_on_is_still_served_from_memory(tmp_path):
    """A GNU sparse or otherwise unusual header sends the listing to tarfile; a tar whose members
    are still plain by tarfile's reading is served from memory all the same."""
    data = _with_pax(b"SCHILY.xattr.x")
    unpacking = extract_tar(io.BytesIO(data), tmp_path / "t", name="x.tar", background=True)
    assert unpacking is not None and unpacking.read("a.py") == b"x\n"
    unpacking.wait()
    assert (tmp_path / "t" / "pkg" / "a.py").read_bytes() == b"x\n"


_SAMPLE = _tar([("pkg-1.0/", None), ("pkg-1.0/" + "long_folder_name/" * 8 + "m.py", b"x = 1\n" * 90),
                ("pkg-1.0/a.py", b"y = 2\n")], tarfile.PAX_FORMAT) + _tar([("q/" * 60 + "z", b"z")], tarfile.GNU_FORMAT)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(_SAMPLE) - 1), st.integers(0, 255)), min_size=1, max_size=6),
       st.integers(0, len(_SAMPLE)))
def test_damaged_tars_are_listed_as_tarfile_lists_them_or_left_to_it(flips, cut):
    """Bytes changed anywhere (headers, pax records, long names, checksums) and the tar cut short:
    the fast listing never raises, and whatever it lists is what tarfile lists."""
    data = bytearray(_SAMPLE[:cut])
    for where, value in flips:
        if where < len(data):
            data[where] = value
    listed = list_plain_tar(bytes(data))
    if listed is None:
        return
    assert [_key(m) for m in listed] == _tarfile_listing(bytes(data))


@given(st.binary(min_size=512, max_size=512) | st.sampled_from([b"\xff" * 512, b"\0" * 512, b"\xff" * 256 + b"\0" * 256]))
def test_a_headers_byte_sum_is_sums(block):
    assert archives._byte_sum(block) == sum(block)
