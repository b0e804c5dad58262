"""``archdiff releases`` on a git repository with several tags, built at test time: every release
extracted, consecutive releases compared with the same reports as ``compare``, the index and the
timeline written; ``--new-only`` then does the one new tag alone; the timeline works in Chromium."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from comparator.compare import compare_evidence
from comparator.reports import write_reports
from extractor.evidence.read import load_evidence
from tests.conftest import ROOT
from tests.helpers import git
from tests.release_support import add_release_removing_a_public_class, build_release_repo
from tests.test_compare_html import _run_chromium, html_unescape


def run_releases(*args: str, cache: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "archdiff.cli", "releases", *args, "--cache-dir", str(cache), "-j", "2"],
                          capture_output=True, text=True, cwd=ROOT, timeout=timeout)


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """The repository and a first run over all its releases."""
    base = tmp_path_factory.mktemp("releases")
    repo = build_release_repo(base / "repo")
    out, cache = base / "out", base / "cache"
    proc = run_releases(repo.as_uri(), "-o", str(out), cache=cache)
    assert proc.returncode == 0, proc.stderr
    return repo, out, cache, proc


def test_every_release_is_extracted_and_each_pair_compared(history):
    _repo, out, _cache, proc = history
    state = json.loads((out / "state.json").read_text())
    # v0.3.0rc1 is a pre-release and `latest` no version: neither is a release here
    assert [r["version"] for r in state["releases"]] == ["0.1.0", "0.2.0", "0.3.0"]
    assert [r["name"] for r in state["releases"]] == ["v0.1.0", "v0.2.0", "v0.3.0"]
    assert [(p["old"], p["new"]) for p in state["pairs"]] == [("0.1.0", "0.2.0"), ("0.2.0", "0.3.0")]
    assert "new releases: v0.1.0, v0.2.0, v0.3.0" in proc.stdout
    for version in ("0.1.0", "0.2.0", "0.3.0"):
        evidence = load_evidence(out / "releases" / version / "evidence.json")
        assert evidence.sources[0].ref == f"v{version}" and len(evidence.sources[0].commit) == 40
    assert (out / "index.html").is_file() and (out / "timeline.html").is_file()


def test_pair_reports_are_the_reports_compare_writes(history, tmp_path):
    _repo, out, _cache, _proc = history
    a = load_evidence(out / "releases" / "0.2.0" / "evidence.json")
    b = load_evidence(out / "releases" / "0.3.0" / "evidence.json")
    write_reports(compare_evidence(a, b, "release"), tmp_path, sides=(a, b))
    for name in ("report.html", "report.md", "report.json"):
        assert (out / "pairs" / "0.2.0..0.3.0" / name).read_bytes() == (tmp_path / name).read_bytes()


def test_the_timeline_shows_what_changed_on_the_release_where_it_happened(history):
    _repo, out, _cache, _proc = history
    data = json.loads((out / "timeline.json").read_text())
    first, second, third = data["releases"]
    assert first["pair"] is None
    assert first["binds"] == 0 and second["binds"] >= 2  # torch.ops calls to registered kernels came in 0.2.0
    assert first["metrics"]["by_type"] == {"counter": 1, "gauge": 1}
    assert second["metrics"]["by_type"] == {"counter": 1, "gauge": 1, "histogram": 1}
    assert second["pair"]["metrics"]["added"] == 1 and second["pair"]["metrics"]["removed"] == 0
    assert third["pair"]["metrics"]["removed"] == 1  # mini:generation_tokens
    assert third["pair"]["structs"]["changed"] >= 1  # ring_slot.len widened
    assert third["pair"]["differences"]["breaking"] >= 2
    assert {"metrics", "structs"} <= set(third["pair"]["breaking"])
    assert third["pair"]["report"] == "pairs/0.2.0..0.3.0"
    report = json.loads((out / third["pair"]["report"] / "report.json").read_text())
    assert third["pair"]["differences"] == report["differences"]
    # symbols per layer: every symbol with a file, counted by its file's role
    evidence = load_evidence(out / "releases" / "0.1.0" / "evidence.json")
    with_path = [n for n in evidence.graph.nodes if n.path and n.kind.value != "external"]
    assert sum(first["layers"].values()) == len(with_path)
    assert first["api"]["decided"] == sum(1 for n in with_path if n.api)


def test_new_only_does_the_new_tag_alone_and_then_nothing(history):
    repo, out, cache, _proc = history
    before = {p: p.stat().st_mtime_ns for p in (out / "releases").rglob("evidence.json")}
    reports_before = {p: p.read_bytes() for p in (out / "pairs").rglob("report.json")}
    add_release_removing_a_public_class(repo)
    proc = run_releases(repo.as_uri(), "-o", str(out), "--new-only", "--fail-on", "breaking", cache=cache)
    assert proc.returncode == 1, proc.stderr  # the new pair removes a public class
    assert "new releases: v0.4.0\n" in proc.stdout
    assert "extracted v0.4.0" in proc.stdout and proc.stdout.count("extracted ") == 1
    assert re.search(r"^0\.3\.0 -> 0\.4\.0: \d+ differences, [1-9]\d* breaking", proc.stdout, re.M)
    assert {p: p.stat().st_mtime_ns for p in before} == before  # the old evidence was not rewritten
    assert {p: p.read_bytes() for p in reports_before} == reports_before
    state = json.loads((out / "state.json").read_text())
    assert [r["version"] for r in state["releases"]] == ["0.1.0", "0.2.0", "0.3.0", "0.4.0"]
    assert (out / "pairs" / "0.3.0..0.4.0" / "report.html").is_file()
    again = run_releases(repo.as_uri(), "-o", str(out), "--new-only", "--fail-on", "breaking", cache=cache)
    assert again.returncode == 0 and again.stdout.strip() == "repo: no new releases"
    index = (out / "index.html").read_text()
    assert index.count("new in the last run") == 1 and re.search(r"v0\.4\.0 <span class=pill>new in the last run", index)


def test_a_release_tagged_between_two_known_ones_replaces_their_pair(history):
    repo, out, cache, _proc = history
    git(repo, "tag", "v0.2.5", "v0.3.0rc1")  # a patch release published after 0.3.0 was tracked
    proc = run_releases(repo.as_uri(), "-o", str(out), "--new-only", cache=cache)
    assert proc.returncode == 0, proc.stderr
    assert "new releases: v0.2.5\n" in proc.stdout
    state = json.loads((out / "state.json").read_text())
    assert [(p["old"], p["new"]) for p in state["pairs"]] == [
        ("0.1.0", "0.2.0"), ("0.2.0", "0.2.5"), ("0.2.5", "0.3.0"), ("0.3.0", "0.4.0")]
    assert not (out / "pairs" / "0.2.0..0.3.0").exists()  # no longer a pair of consecutive releases
    assert (out / "pairs" / "0.2.5..0.3.0" / "report.html").is_file()


def test_pre_releases_are_taken_with_pre(history, tmp_path):
    repo, _out, cache, _proc = history
    proc = run_releases(repo.as_uri(), "-o", str(tmp_path / "pre"), "--pre", "--from", "0.3.0rc1", "--to", "v0.3.0",
                        "--format", "json", cache=cache)
    assert proc.returncode == 0, proc.stderr
    state = json.loads((tmp_path / "pre" / "state.json").read_text())
    assert [r["name"] for r in state["releases"]] == ["v0.3.0rc1", "v0.3.0"]
    assert sorted(p.name for p in (tmp_path / "pre" / "pairs" / "0.3.0rc1..0.3.0").iterdir()) == ["report.json"]


def test_a_history_of_another_spec_is_refused(history, tmp_path):
    _repo, out, cache, _proc = history
    other = build_release_repo(tmp_path / "other")
    proc = run_releases(other.as_uri(), "-o", str(out), "--last", "1", cache=cache)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "give each tracked system its own -o directory" in proc.stderr


@pytest.mark.browser
def test_the_timeline_works_in_headless_chromium(history, tmp_path):
    _repo, out, _cache, _proc = history
    page = out / "timeline.html"
    text = page.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)  # nothing fetched at view time
    dom = _run_chromium(tmp_path, page.resolve().as_uri() + "#selftest", "--dump-dom")
    match = re.search(r'<pre id="selftest-result">(.*?)</pre>', dom.stdout, re.S)
    assert match, f"the self-test did not run; stderr: {dom.stderr[-2000:]}"
    result = json.loads(html_unescape(match.group(1)))
    assert result["errors"] == []
    assert result["charts"] == 7 and result["bars"] > 20
    state = json.loads((out / "state.json").read_text())
    expected = [p["report"] + "/report.html" for p in state["pairs"]]
    assert result["reportLinks"] == expected
    assert set(result["chartLinks"]) == set(expected)  # each release's bars open its pair's report
    assert all((out / link).is_file() for link in expected)
    assert result["releases"] == len(state["releases"])
    shot = ROOT / "tests" / "artifacts" / "timeline.png"
    shot.parent.mkdir(exist_ok=True)
    shot.unlink(missing_ok=True)
    _run_chromium(tmp_path, page.resolve().as_uri(), f"--screenshot={shot}")
    assert shot.exists() and shot.stat().st_size > 20_000
