"""Hostile git: a checkout whose own .git runs commands, links out of a fetched tree, racing runs."""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys

import pytest

from tests.helpers import git, make_git_repo
from tests.hostile.support import CASE_TIMEOUT, Sandbox

MISSING = "1" * 40  # a commit id no repository holds


def hostile_checkout(sandbox: Sandbox):
    """A work tree whose .git makes any git command run shell commands that write marker files:
    a promisor remote whose upload-pack is a command and a HEAD naming a missing commit (so that
    reading HEAD's commit triggers a lazy fetch), plus fsmonitor, hooks, an ssh command, a diff
    driver and a filter driver."""
    tree = make_git_repo(sandbox.input / "checkout", {"pkg/__init__.py": "X = 1\n", "pkg/sub/mod.py": "Y = 2\n"})
    m = sandbox.markers
    settings = {
        "extensions.partialClone": "origin",
        "remote.origin.url": str(sandbox.input / "nowhere"),
        "remote.origin.promisor": "true",
        "remote.origin.uploadpack": f"touch {m}/uploadpack; false",
        "core.fsmonitor": f"touch {m}/fsmonitor; false",
        "core.sshCommand": f"touch {m}/ssh; false",
        "core.hooksPath": str(sandbox.input / "hooks"),
        "diff.evil.command": f"touch {m}/diff",
        "filter.evil.smudge": f"touch {m}/smudge; cat",
        "filter.evil.clean": f"touch {m}/clean; cat",
    }
    git(tree, "config", "core.repositoryformatversion", "1")
    for key, value in settings.items():
        git(tree, "config", key, value)
    (sandbox.input / "hooks").mkdir()
    for hook in ("post-checkout", "pre-commit", "reference-transaction", "post-index-change"):
        path = sandbox.input / "hooks" / hook
        path.write_text(f"#!/bin/sh\ntouch {m}/hook-{hook}\n")
        path.chmod(0o755)
    (tree / ".gitattributes").write_text("*.py filter=evil diff=evil\n")
    (tree / ".git" / "refs" / "heads" / "main").write_text(MISSING + "\n")
    return tree


@pytest.mark.parametrize("sub", ["", "pkg/sub"])
def test_a_checkout_whose_git_config_runs_commands_runs_none(sandbox, sub):
    tree = hostile_checkout(sandbox)
    proc = sandbox.extract(str(tree / sub) if sub else str(tree))
    assert proc.returncode == 0, proc.stderr
    sandbox.assert_contained()
    bundle = json.loads((sandbox.out / "evidence.json").read_text())
    # HEAD's commit is read from the .git files as they state it, without asking git.
    assert bundle["sources"][0]["commit"] == MISSING


def test_a_checkout_in_a_linked_worktree_records_its_commit(sandbox):
    main = make_git_repo(sandbox.input / "main", {"a.py": "A = 1\n"})
    git(main, "commit", "-q", "--allow-empty", "-m", "second")
    first = git(main, "rev-parse", "HEAD~1")
    git(main, "worktree", "add", "-q", "--detach", str(sandbox.input / "linked"), first)
    git(main, "pack-refs", "--all")
    proc = sandbox.extract(str(sandbox.input / "linked"))
    assert proc.returncode == 0, proc.stderr
    assert json.loads((sandbox.out / "evidence.json").read_text())["sources"][0]["commit"] == first
    proc = sandbox.extract(str(main))
    assert json.loads((sandbox.out / "evidence.json").read_text())["sources"][0]["commit"] == \
        git(main, "rev-parse", "HEAD")


def test_a_symbolic_ref_cannot_make_archdiff_read_a_file_outside_refs(sandbox):
    tree = make_git_repo(sandbox.input / "r", {"a.py": ""})
    secret = sandbox.input / "secret"
    secret.write_text("2" * 40 + "\n")
    (tree / ".git" / "HEAD").write_text("ref: ../../secret\n")
    proc = sandbox.extract(str(tree))
    assert proc.returncode == 0, proc.stderr
    assert json.loads((sandbox.out / "evidence.json").read_text())["sources"][0]["commit"] == ""


def test_a_repository_with_a_link_out_of_the_tree_is_read_without_the_link(sandbox):
    repo = make_git_repo(sandbox.input / "origin", {"pkg/__init__.py": "", "pkg/ok.py": "def ok():\n    pass\n"})
    os.symlink("../../../../etc/passwd", repo / "pkg" / "passwd.py")
    os.symlink("ok.py", repo / "pkg" / "alias.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "links")
    proc = sandbox.extract(f"file://{repo}")
    assert proc.returncode == 0, proc.stderr
    bundle = json.loads((sandbox.out / "evidence.json").read_text())
    skipped = [d for d in bundle["diagnostics"] if d["code"] == "symlink-outside"]
    assert [d["path"] for d in skipped] == ["pkg/passwd.py"]
    ids = {n["id"] for n in bundle["graph"]["nodes"]}
    assert "py:pkg.ok.ok" in ids
    sandbox.assert_contained()


def test_a_repository_with_no_files_gives_empty_evidence(sandbox):
    repo = sandbox.input / "empty"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "nothing")
    proc = sandbox.extract(f"file://{repo}")
    assert proc.returncode == 0, proc.stderr
    bundle = json.loads((sandbox.out / "evidence.json").read_text())
    assert bundle["graph"]["nodes"] == [] and bundle["sources"][0]["commit"] == git(repo, "rev-parse", "HEAD")


def _extract_commit(sandbox: Sandbox, spec: str, out: str) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "archdiff.cli", "extract", spec, "-o", str(sandbox.base / out),
                           "--cache-dir", str(sandbox.cache), "-j", "1"], capture_output=True, text=True,
                          env=sandbox.env(), cwd=sandbox.base / "cwd", timeout=CASE_TIMEOUT)
    if proc.returncode:
        return proc.returncode, proc.stderr, ""
    bundle = json.loads((sandbox.base / out / "evidence.json").read_text())
    return 0, "", bundle["sources"][0]["commit"]


def test_concurrent_extracts_of_one_url_at_different_refs_record_their_own_commits(sandbox):
    repo = make_git_repo(sandbox.input / "origin", {"m.py": "V = 0\n"})
    expected = {}
    for i in range(1, 7):
        (repo / "m.py").write_text(f"V = {i}\n")
        git(repo, "commit", "-q", "-am", f"v{i}")
        git(repo, "tag", f"t{i}")
        expected[f"t{i}"] = git(repo, "rev-parse", "HEAD")
    refs = [f"t{i}" for i in range(1, 7)] * 2
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(refs)) as pool:
        runs = list(pool.map(lambda ir: _extract_commit(sandbox, f"file://{repo}@{ir[1]}", f"out{ir[0]}"),
                             enumerate(refs)))
    for ref, (code, err, commit) in zip(refs, runs):
        assert code == 0, err
        assert commit == expected[ref], f"{ref} recorded {commit}"


def test_concurrent_extracts_of_one_archive_with_one_cache_all_succeed_identically(sandbox, tmp_path):
    src = sandbox.input / "pkg-1.0"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text("def f():\n    return 1\n")
    archive = sandbox.input / "pkg-1.0.tar.gz"
    subprocess.run(["tar", "-czf", str(archive), "-C", str(sandbox.input), "pkg-1.0"], check=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        runs = list(pool.map(lambda i: subprocess.run(
            [sys.executable, "-m", "archdiff.cli", "extract", str(archive), "-o", str(sandbox.base / f"o{i}"),
             "--cache-dir", str(sandbox.cache), "-j", "1"], capture_output=True, text=True, env=sandbox.env(),
            cwd=sandbox.base / "cwd", timeout=CASE_TIMEOUT), range(4)))
    assert [r.returncode for r in runs] == [0] * 4, [r.stderr for r in runs]
    texts = {(sandbox.base / f"o{i}" / "evidence.json").read_bytes() for i in range(4)}
    assert len(texts) == 1
