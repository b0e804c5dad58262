"""Source specs and acquisition: git (with insteadOf), directories, package indexes, archives."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from extractor.errors import UserInputError
from extractor.acquire.sources import acquire, default_label, download_sdist, parse_spec
from tests.helpers import git, make_git_repo


@pytest.mark.parametrize("text, kind, location, ref, label", [
    ("pypi:vllm==0.10.2", "pypi", "vllm", "0.10.2", ""),
    ("core=https://github.com/triton-inference-server/core@r25.08", "git",
     "https://github.com/triton-inference-server/core", "r25.08", "core"),
    ("https://user@example.com/org/repo.git", "git", "https://user@example.com/org/repo.git", "", ""),
    ("git@github.com:org/repo.git@v1.2", "git", "git@github.com:org/repo.git", "v1.2", ""),
    ("file:///srv/mirrors/core.git@0123456789abcdef0123456789abcdef01234567", "git", "file:///srv/mirrors/core.git",
     "0123456789abcdef0123456789abcdef01234567", ""),
    ("https://example.com/dl/x-1.0.tar.gz", "archive", "https://example.com/dl/x-1.0.tar.gz", "", ""),
])
def test_spec_forms(text, kind, location, ref, label):
    spec = parse_spec(text)
    assert (spec.kind, spec.location, spec.ref, spec.label) == (kind, location, ref, label)


@pytest.mark.parametrize("text, label", [
    ("https://github.com/triton-inference-server/core@r25.08", "core"),
    ("file:///srv/mirrors/core.git@r25.08", "core"),
    ("https://user@example.com/org/repo.git", "repo"),
    ("git@github.com:org/repo.git@v1.2", "repo"),
    ("pypi:vllm==0.10.2", "vllm"),
    ("pypi:vllm", "vllm"),  # as `archdiff releases` takes it: no version yet
    ("https://example.com/dl/x-1.0.tar.gz", "x-1.0"),
])
def test_default_labels_are_repository_package_or_archive_names(text, label):
    assert default_label(text) == label


def test_a_local_source_is_labelled_by_its_resolved_directory(tmp_path, monkeypatch):
    (tmp_path / "checkouts" / "server").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "checkouts")
    assert [default_label(s) for s in ("./server", "server/", ".", "../vllm-0.10.2.tar.gz")] == \
        ["server", "server", "checkouts", "vllm-0.10.2"]


@pytest.mark.parametrize("text, fragment", [
    ("-uhack", "starts with '-'"),
    ("--upload-pack=touch /tmp/x", "starts with '-'"),
    ("ext::sh -c touch% /tmp/pwned", "not allowed"),
    ("https://example.com/repo@--upload-pack=x", "not a valid ref"),
    ("ftp://example.com/repo", "not supported"),
    ("pypi:vllm", "pypi:NAME==VERSION"),
    ("no/such/dir", "not a git URL, an existing directory"),
])
def test_bad_specs_are_refused_with_one_line(text, fragment):
    with pytest.raises(UserInputError) as err:
        parse_spec(text)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_git_url_tag_branch_and_commit_are_fetched_and_recorded(tmp_path):
    repo = make_git_repo(tmp_path / "origin", {"pkg/__init__.py": "X = 1\n"})
    head = git(repo, "rev-parse", "HEAD")
    (repo / "pkg" / "later.py").write_text("Y = 2\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "second")
    cache = tmp_path / "cache"
    tagged = acquire(parse_spec(f"file://{repo}@v1"), cache)
    assert tagged.commit == head and not (tagged.root / "pkg" / "later.py").exists()
    branch = acquire(parse_spec(f"file://{repo}@main"), cache)
    assert branch.commit == git(repo, "rev-parse", "HEAD") and (branch.root / "pkg" / "later.py").exists()
    by_commit = acquire(parse_spec(f"file://{repo}@{head}"), cache)
    assert by_commit.commit == head and by_commit.root == tagged.root  # cloned once, reused


def test_missing_ref_names_the_ref(tmp_path):
    repo = make_git_repo(tmp_path / "origin", {"a.py": ""})
    with pytest.raises(UserInputError, match="ref 'v9.9' does not exist"):
        acquire(parse_spec(f"file://{repo}@v9.9"), tmp_path / "cache")


def test_unreachable_git_url_is_user_error(tmp_path):
    with pytest.raises(UserInputError, match="cannot fetch"):
        acquire(parse_spec(f"file://{tmp_path}/nowhere.git"), tmp_path / "cache")


def test_insteadof_redirects_a_real_url_to_a_local_mirror(tmp_path, monkeypatch):
    repo = make_git_repo(tmp_path / "mirror" / "core", {"src/server.py": "def serve():\n    pass\n"})
    config = tmp_path / "gitconfig"
    config.write_text(f'[url "file://{tmp_path}/mirror/"]\n\tinsteadOf = https://github.com/triton-inference-server/\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    tree = acquire(parse_spec("https://github.com/triton-inference-server/core@v1"), tmp_path / "cache")
    assert (tree.root / "src" / "server.py").read_text().startswith("def serve")
    assert tree.commit == git(repo, "rev-parse", "HEAD")


def test_directory_is_read_in_place_with_its_commit(tmp_path):
    repo = make_git_repo(tmp_path / "work", {"m.py": ""})
    tree = acquire(parse_spec(str(repo)), tmp_path / "cache")
    assert tree.root == repo.resolve() and tree.commit == git(repo, "rev-parse", "HEAD")
    assert not (tmp_path / "cache").exists()  # nothing written for a local directory


def _sdist(tmp_path: Path, name: str, version: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = b"def hello():\n    return 1\n"
        info = tarfile.TarInfo(f"{name}-{version}/{name}/__init__.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_sdist_comes_from_the_configured_index_and_is_hash_checked(tmp_path, monkeypatch):
    index = tmp_path / "simple"
    (index / "demo-pkg").mkdir(parents=True)
    blob = _sdist(tmp_path, "demo_pkg", "1.0")
    (index / "demo-pkg" / "demo_pkg-1.0.tar.gz").write_bytes(blob)
    sha = hashlib.sha256(blob).hexdigest()
    (index / "demo-pkg" / "index.html").write_text(
        f'<html><body><a href="demo_pkg-1.0.tar.gz#sha256={sha}">demo_pkg-1.0.tar.gz</a></body></html>')
    monkeypatch.setenv("PIP_INDEX_URL", f"file://{index}")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    tree = acquire(parse_spec("pypi:demo-pkg==1.0"), tmp_path / "cache")
    assert (tree.root / "demo_pkg" / "__init__.py").read_bytes().startswith(b"def hello")
    # A tampered file is refused.
    (index / "demo-pkg" / "index.html").write_text(
        f'<a href="demo_pkg-1.0.tar.gz#sha256={"0" * 64}">demo_pkg-1.0.tar.gz</a>')
    with pytest.raises(UserInputError, match="does not match"):
        download_sdist("demo-pkg", "1.0", tmp_path / "other")


def test_a_checked_sdist_is_used_again_without_the_index_while_it_matches(tmp_path, monkeypatch):
    """Offline, or warm: the index is not asked again for a file that matched its listed hash; a
    file changed since is not trusted (the index is asked, here unreachable)."""
    index = tmp_path / "simple"
    (index / "demo-pkg").mkdir(parents=True)
    blob = _sdist(tmp_path, "demo_pkg", "1.0")
    (index / "demo-pkg" / "demo_pkg-1.0.tar.gz").write_bytes(blob)
    (index / "demo-pkg" / "index.html").write_text(
        f'<a href="demo_pkg-1.0.tar.gz#sha256={hashlib.sha256(blob).hexdigest()}">demo_pkg-1.0.tar.gz</a>')
    monkeypatch.setenv("PIP_INDEX_URL", f"file://{index}")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    first = download_sdist("demo-pkg", "1.0", tmp_path / "cache")
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    assert download_sdist("demo-pkg", "1.0", tmp_path / "cache") == first
    with pytest.raises(UserInputError, match="unreachable"):  # another version is not in the cache
        download_sdist("demo-pkg", "1.1", tmp_path / "cache")
    first.write_bytes(blob + b"\0")
    with pytest.raises(UserInputError, match="unreachable"):
        download_sdist("demo-pkg", "1.0", tmp_path / "cache")


def test_unreachable_index_is_user_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    with pytest.raises(UserInputError, match="unreachable"):
        download_sdist("vllm", "0.10.2", tmp_path)


def _tar_with(tmp_path: Path, member: tarfile.TarInfo, data: bytes = b"x") -> Path:
    path = tmp_path / "evil.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        ok = tarfile.TarInfo("pkg/ok.py")
        ok.size = 1
        tar.addfile(ok, io.BytesIO(b"x"))
        member.size = len(data) if member.isfile() else 0
        tar.addfile(member, io.BytesIO(data) if member.isfile() else None)
    return path


@pytest.mark.parametrize("make", [
    lambda: tarfile.TarInfo("pkg/../../escape.py"),
    lambda: tarfile.TarInfo("/etc/evil.py"),
    lambda: _link("pkg/link", "../../outside"),
    lambda: _link("pkg/abs", "/etc/passwd"),
])
def test_archive_members_leaving_the_tree_are_refused(tmp_path, make):
    archive = _tar_with(tmp_path, make())
    with pytest.raises(UserInputError, match="refused"):
        acquire(parse_spec(str(archive)), tmp_path / "cache")
    assert not any((tmp_path / "cache").rglob("ok.py"))  # nothing half-extracted is left to be reused


def _link(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.SYMTYPE
    info.linkname = target
    return info


def test_zip_with_dotdot_is_refused_and_a_clean_zip_is_extracted(tmp_path):
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("../evil.py", "x")
    with pytest.raises(UserInputError, match="leaves the tree"):
        acquire(parse_spec(str(bad)), tmp_path / "cache")
    good = tmp_path / "good.zip"
    with zipfile.ZipFile(good, "w") as zf:
        zf.writestr("proj/mod.py", "A = 1\n")
    tree = acquire(parse_spec(str(good)), tmp_path / "cache")
    assert (tree.root / "mod.py").read_text() == "A = 1\n"
    assert os.access(tree.root, os.R_OK)
