"""--headers-from: include directories from a wheel on a package index (downloaded, checked,
unpacked in part, never installed or run) or from an installed distribution."""

from __future__ import annotations

import hashlib
import sys
import zipfile
from pathlib import Path

import pytest

from extractor.acquire import sources
from extractor.acquire import headers as wheels
from extractor.errors import UserInputError


def make_wheel(folder: Path, filename: str, members: dict[str, str]) -> Path:
    path = folder / filename
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return path


@pytest.fixture()
def index(tmp_path, monkeypatch) -> Path:
    """A local simple index (the layout pip reads from a file:// index) with three releases."""
    root = tmp_path / "index"
    files = root / "files"
    files.mkdir(parents=True)
    header = {"fakepkg/include/fake/api.h": "#pragma once\nstruct FakeApi { int version; };\n",
              "fakepkg/include/fake/detail/impl.hpp": "#pragma once\n",
              "fakepkg/lib/libfake.so": "\x7fELF not really",
              "fakepkg/setup_hook.py": "raise SystemExit('never run')\n",
              "fakepkg-{v}.dist-info/METADATA": "Name: fakepkg\n"}
    made = []
    for filename in ("fakepkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", "fakepkg-1.0-cp39-cp39-win_amd64.whl",
                     "fakepkg-2.0-py3-none-any.whl", "fakepkg-3.0rc1-py3-none-any.whl"):
        version = filename.split("-")[1]
        made.append(make_wheel(files, filename, {k.format(v=version): v.replace("int version", f"int v{version[0]}")
                                                 for k, v in header.items()}))
    links = "".join(f'<a href="../files/{w.name}#sha256={hashlib.sha256(w.read_bytes()).hexdigest()}">{w.name}</a>\n'
                    for w in made)
    (root / "fakepkg").mkdir()
    (root / "fakepkg" / "index.html").write_text(f"<html><body>{links}</body></html>")
    for module in (sources, wheels):  # where the indexes are listed, and where errors name them
        monkeypatch.setattr(module, "pip_index_urls", lambda: [f"file://{root}"])
    return root


def test_newest_stable_wheel_is_downloaded_checked_and_only_its_include_dirs_unpacked(index, tmp_path):
    package = wheels.resolve_headers_from("pypi:fakepkg", tmp_path / "cache")
    assert (package.version, package.source) == ("2.0", "fakepkg-2.0-py3-none-any.whl")
    assert [d.relative_to(tmp_path / "cache" / "wheels") .as_posix().split("/", 1)[1] for d in package.include_dirs] \
        == ["fakepkg/include"]
    (api,) = package.include_dirs
    assert "int v2;" in (api / "fake" / "api.h").read_text()
    unpacked = sorted(p.relative_to(api.parent.parent).as_posix() for p in api.parent.parent.rglob("*") if p.is_file())
    assert unpacked == ["fakepkg/include/fake/api.h", "fakepkg/include/fake/detail/impl.hpp"]
    assert not list((tmp_path / "cache" / "wheels").glob("*.whl"))  # the rest of the wheel is not kept
    assert package.record()["sha256"] == hashlib.sha256((index / "files" / package.source).read_bytes()).hexdigest()
    # once unpacked, the index is not needed again
    (index / "fakepkg" / "index.html").write_text("<html></html>")
    with pytest.raises(UserInputError, match="no wheel"):
        wheels.resolve_headers_from("pypi:fakepkg", tmp_path / "other-cache")


def test_a_pinned_version_picks_the_wheel_this_platform_would_install(index, tmp_path):
    package = wheels.resolve_headers_from("pypi:fakepkg==1.0", tmp_path / "cache")
    assert package.source == "fakepkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"
    with pytest.raises(UserInputError, match=r"no wheel of fakepkg==9\.9"):
        wheels.resolve_headers_from("pypi:fakepkg==9.9", tmp_path / "cache")


def test_a_wheel_that_does_not_match_the_index_hash_is_refused(index, tmp_path):
    wheel = index / "files" / "fakepkg-2.0-py3-none-any.whl"
    wheel.write_bytes(wheel.read_bytes() + b"tampered")
    with pytest.raises(UserInputError, match="does not match the index's sha256"):
        wheels.resolve_headers_from("pypi:fakepkg", tmp_path / "cache")


def test_a_wheel_member_leaving_the_tree_refuses_the_wheel(index, tmp_path):
    evil = make_wheel(index / "files", "fakepkg-4.0-py3-none-any.whl", {"fakepkg/include/../../../escape.h": "x"})
    sha = hashlib.sha256(evil.read_bytes()).hexdigest()
    page = index / "fakepkg" / "index.html"
    page.write_text(page.read_text().replace("</body>", f'<a href="../files/{evil.name}#sha256={sha}">{evil.name}</a></body>'))
    with pytest.raises(UserInputError, match="leaves the tree"):
        wheels.resolve_headers_from("pypi:fakepkg==4.0", tmp_path / "cache")
    assert not (tmp_path / "escape.h").exists()


def test_an_installed_distribution_is_used_in_place(tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "instpkg" / "include" / "inst").mkdir(parents=True)
    (site / "instpkg" / "include" / "inst" / "x.h").write_text("#pragma once\n")
    info = site / "instpkg-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: instpkg\nVersion: 1.2\n")
    (info / "RECORD").write_text("instpkg/include/inst/x.h,,\ninstpkg-1.2.dist-info/METADATA,,\n")
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    package = wheels.resolve_headers_from("instpkg", tmp_path / "cache")
    assert (package.version, package.source) == ("1.2", "installed")
    assert package.include_dirs == ((site / "instpkg" / "include").resolve(),)
    with pytest.raises(UserInputError, match="no distribution of that name is installed"):
        wheels.resolve_headers_from("surely-not-installed-pkg", tmp_path / "cache")
