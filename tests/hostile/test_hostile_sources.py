"""Hostile sources: index pages that point at local files, special files in a tree, archives that
never end, and corrupt ones."""

from __future__ import annotations

import bz2
import functools
import http.server
import io
import json
import os
import tarfile
import threading
import time

import pytest

from extractor.acquire import archives
from extractor.errors import UserInputError
from extractor.run.pipeline import extract_system
from extractor.context import ExtractOptions
from tests.hostile.support import one_line_error


@pytest.fixture
def index_server(tmp_path):
    """An HTTP package index on 127.0.0.1 serving ``tmp_path/www``."""
    www = tmp_path / "www"
    www.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(www))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield www, f"http://127.0.0.1:{server.server_address[1]}/simple"
    server.shutdown()


def _sdist(path, name="pkg", version="1.0", body="SECRET_FROM_DISK = 1\n"):
    with tarfile.open(path, "w:gz") as tar:
        data = body.encode()
        info = tarfile.TarInfo(f"{name}-{version}/{name}/__init__.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return path


def test_a_remote_index_cannot_make_archdiff_read_a_local_file(sandbox, index_server):
    www, url = index_server
    (sandbox.base / "private").mkdir()
    local = _sdist(sandbox.base / "private" / "pkg-1.0.tar.gz")
    page = www / "simple" / "pkg"
    page.mkdir(parents=True)
    (page / "index.html").write_text(f'<a href="file://{local}">pkg-1.0.tar.gz</a>\n')
    proc = sandbox.extract("pypi:pkg==1.0", PIP_INDEX_URL=url, PIP_CONFIG_FILE=os.devnull)
    assert proc.returncode == 2
    assert "no sdist of pkg==1.0" in one_line_error(proc)
    assert not (sandbox.cache / "sdists" / "pkg-1.0.tar.gz").exists()
    sandbox.assert_contained()


def test_an_index_link_of_its_own_scheme_is_still_followed(sandbox, index_server):
    www, url = index_server
    files = www / "files"
    files.mkdir()
    _sdist(files / "pkg-1.0.tar.gz", body="def served():\n    pass\n")
    page = www / "simple" / "pkg"
    page.mkdir(parents=True)
    (page / "index.html").write_text('<a href="../../files/pkg-1.0.tar.gz">pkg-1.0.tar.gz</a>\n')
    proc = sandbox.extract("pypi:pkg==1.0", PIP_INDEX_URL=url, PIP_CONFIG_FILE=os.devnull)
    assert proc.returncode == 0, proc.stderr
    ids = {n["id"] for n in json.loads((sandbox.out / "evidence.json").read_text())["graph"]["nodes"]}
    assert "py:pkg.served" in ids


def test_special_files_named_like_sources_are_diagnostics_not_hangs(sandbox):
    tree = sandbox.input / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "ok.py").write_text("def ok():\n    pass\n")
    os.mkfifo(tree / "pkg" / "pipe.py")
    os.mkfifo(tree / "pkg" / "header.h")
    proc = sandbox.extract(str(tree), timeout=60)
    assert proc.returncode == 0, proc.stderr
    bundle = json.loads((sandbox.out / "evidence.json").read_text())
    special = {d["path"]: d["message"] for d in bundle["diagnostics"] if d["code"] == "not-a-file"}
    assert special == {"pkg/header.h": "a named pipe, not a regular file: not read",
                       "pkg/pipe.py": "a named pipe, not a regular file: not read"}
    sandbox.assert_contained()


def test_an_unreadable_file_is_a_diagnostic_without_the_machine_path(tmp_path, monkeypatch):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.py").write_text("A = 1\n")
    (tree / "b.py").write_text("B = 1\n")
    from extractor.run import compute

    real = compute.read_regular_file

    def refuse_b(path, limit):
        if path.name == "b.py":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, limit)

    monkeypatch.setattr(compute, "read_regular_file", refuse_b)
    bundle = extract_system([str(tree)], options=ExtractOptions(cache_dir=tmp_path / "cache")).bundle
    (diag,) = [d for d in bundle["diagnostics"] if d["code"] == "unreadable"]
    assert diag == {**diag, "path": "b.py", "message": "Permission denied"}
    assert str(tmp_path) not in json.dumps(bundle["diagnostics"])


def _bz2_bomb(path, gigabytes: int) -> None:
    """A bzip2 tar of one member declared (and decompressing to) ``gigabytes`` GB of zeros, in well
    under a megabyte: one compressed stream of 64 MB of zeros, repeated (bzip2 readers continue
    across concatenated streams)."""
    header = tarfile.TarInfo("pkg-1.0/blob.bin")
    header.size = gigabytes * 1024**3
    chunk = bz2.compress(b"\0" * (64 * 1024**2), 9)
    with path.open("wb") as out:
        out.write(bz2.compress(header.tobuf(format=tarfile.GNU_FORMAT)))
        for _ in range(gigabytes * 16):
            out.write(chunk)


def test_a_decompression_bomb_is_refused_at_the_size_cap_without_decompressing_it_all(tmp_path, monkeypatch):
    bomb = tmp_path / "pkg-1.0.tar.bz2"
    _bz2_bomb(bomb, 20)
    assert bomb.stat().st_size < 2 * 1024**2
    monkeypatch.setattr(archives, "MAX_ARCHIVE_BYTES", 32 * 1024**2)
    started = time.monotonic()
    with bomb.open("rb") as fh, pytest.raises(UserInputError, match="unpacks to more than"):
        archives.extract_tar(fh, tmp_path / "tree", name=bomb.name)
    # 20 GB would take minutes to inflate; stopping at the cap takes well under a second
    assert time.monotonic() - started < 30
    assert not (tmp_path / "tree").exists()


def test_archive_extraction_is_bounded_in_time(tmp_path, monkeypatch):
    bomb = tmp_path / "pkg-1.0.tar.bz2"
    _bz2_bomb(bomb, 1)
    monkeypatch.setattr(archives, "MAX_EXTRACT_SECONDS", 0.2)
    with bomb.open("rb") as fh, pytest.raises(UserInputError, match="took over"):
        archives.extract_tar(fh, tmp_path / "tree", name=bomb.name)


@pytest.mark.parametrize("name, data", [
    ("broken.tar.xz", b"\xfd7zXZ\x00" + b"garbage" * 40),
    ("random.tar.xz", bytes(range(256)) * 12),
    ("broken.tar.gz", b"\x1f\x8b\x08\x00" + b"\x00" * 40),
    ("broken.tar.bz2", b"BZh9" + b"\x17" * 40),
    ("broken.zip", b"PK\x03\x04" + b"\x00" * 60),
    ("empty.tar.gz", b""),
], ids=lambda v: v if isinstance(v, str) else "")
def test_a_corrupt_archive_is_one_line_and_exit_2(sandbox, name, data):
    archive = sandbox.input / name
    archive.write_bytes(data)
    proc = sandbox.extract(str(archive))
    assert proc.returncode == 2, proc.stderr
    assert name in one_line_error(proc)
    sandbox.assert_contained()
    trees = sandbox.cache / "trees"
    assert not trees.exists() or list(trees.iterdir()) == []  # nothing half-extracted left to reuse


def test_an_unreadable_directory_is_a_diagnostic_like_an_unreadable_file(tmp_path, monkeypatch):
    """A directory that cannot be listed hides every file under it: the run goes on and says so.
    Permission bits do not stop root (tests run as root here), so the refusal is made where the
    walk meets it, in the listing of that one directory."""
    tree = tmp_path / "tree"
    (tree / "pkg" / "secret" / "deeper").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "a.py").write_text("A = 1\n")
    (tree / "pkg" / "secret" / "b.py").write_text("B = 1\n")
    (tree / "pkg" / "secret" / "deeper" / "c.py").write_text("C = 1\n")
    real = os.scandir

    def refuse_secret(path="."):
        if not isinstance(path, int) and os.path.basename(os.fspath(path)) == "secret":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", refuse_secret)
    bundle = extract_system([str(tree)], options=ExtractOptions(cache_dir=tmp_path / "cache")).bundle
    (diag,) = [d for d in bundle["diagnostics"] if d["code"] == "unreadable"]
    assert diag == {**diag, "path": "pkg/secret/", "message": "directory not listed: Permission denied",
                    "severity": "error"}
    paths = {n["path"] for n in bundle["graph"]["nodes"]}
    assert "pkg/a.py" in paths and not any(p.startswith("pkg/secret") for p in paths)
    assert str(tmp_path) not in json.dumps(bundle["diagnostics"])


def test_compare_checks_both_sides_before_extracting_either(sandbox, index_server):
    """B's version does not exist: said at once, with the versions that do, and A is not fetched."""
    www, url = index_server
    page = www / "simple" / "pkg"
    page.mkdir(parents=True)
    for version in ("0.9", "1.0", "1.2", "2.0"):
        _sdist(page / f"pkg-{version}.tar.gz", version=version)
    (page / "index.html").write_text("".join(f'<a href="pkg-{v}.tar.gz">pkg-{v}.tar.gz</a>\n'
                                             for v in ("0.9", "1.0", "1.2", "2.0")))
    proc = sandbox.run("compare", "pypi:pkg==1.0", "pypi:pkg==1.1", "-o", str(sandbox.out),
                       "--cache-dir", str(sandbox.cache), PIP_INDEX_URL=url, PIP_CONFIG_FILE=os.devnull)
    assert proc.returncode == 2
    assert one_line_error(proc) == (f"archdiff: error: no sdist of pkg==1.1 on {url} "
                                    "(nearest: 0.9, 1.0, 1.2, 2.0)")
    assert not (sandbox.cache / "sdists").exists() and not (sandbox.cache / "trees").exists()


def test_usage_errors_are_one_line_naming_the_help(sandbox):
    proc = sandbox.run("graph", "export", "evidence.json", "--format", "svg", "-o", str(sandbox.out / "g"))
    assert proc.returncode == 2
    assert one_line_error(proc) == ("archdiff: error: Invalid value for '--format': 'svg' is not one of "
                                    "'graphml', 'gexf', 'json' (see archdiff graph export --help)")
    proc = sandbox.run("nosuch")
    assert (proc.returncode, one_line_error(proc)) == (2, "archdiff: error: No such command 'nosuch' "
                                                          "(see archdiff --help)")
