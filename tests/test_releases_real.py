"""``archdiff releases pypi:vllm --from 0.10.1 --to 0.10.2`` on the real sdists from PyPI: three
releases (the patch release 0.10.1.1 included), two pair reports, the index and the timeline, whose
numbers must show what is known of these releases; a second run with ``--new-only`` finds nothing
and is quick; the real timeline opens in Chromium without errors.

The sdists and the fact cache are the test cache's (``$ARCHDIFF_TEST_CACHE/archdiff``), the one the
other real vLLM tests extract 0.10.1 and 0.10.2 into: files are keyed by content, so a release
parses only what no other test parsed before (0.10.1.1's handful on a warm cache). OUT is new at
every run, so every release's evidence, every pair and every page are written again each time.
(`bench/releases_ray_vs_pool.py` runs the longer range 0.10.0 -> 0.10.2, local against Ray.)"""

from __future__ import annotations

import json
import re
import time

import pytest

from extractor.evidence.read import load_evidence
from tests.conftest import cache_lock, cache_root
from tests.test_compare_html import _run_chromium, html_unescape
from tests.test_releases import run_releases

VERSIONS = ["0.10.1", "0.10.1.1", "0.10.2"]

pytestmark = pytest.mark.real


@pytest.fixture(scope="module")
def vllm_history(tmp_path_factory):
    out, cache = tmp_path_factory.mktemp("vllm-history") / "out", cache_root() / "archdiff"
    # the trees other workers extract too (conftest.extract_real), locked in one order
    with cache_lock("extract-vllm-0.10.1"), cache_lock("extract-vllm-0.10.2"):
        proc = run_releases("pypi:vllm", "--from", "0.10.1", "--to", "0.10.2", "-o", str(out), cache=cache,
                            timeout=3600)  # on a cold cache, three releases of vLLM are parsed
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, cache, proc


def test_each_vllm_release_has_evidence_and_each_pair_its_reports(vllm_history):
    out, _cache, proc = vllm_history
    state = json.loads((out / "state.json").read_text())
    assert [r["version"] for r in state["releases"]] == VERSIONS
    assert f"new releases: {', '.join(VERSIONS)}" in proc.stdout
    for version in VERSIONS:
        evidence = load_evidence(out / "releases" / version / "evidence.json")
        assert [(s.kind, s.ref) for s in evidence.sources] == [("pypi", version)], evidence.sources
        assert evidence.stats["files"]["python"] > 1500  # the whole package, not a stub
    pairs = [f"{a}..{b}" for a, b in zip(VERSIONS, VERSIONS[1:])]
    assert [p["report"] for p in state["pairs"]] == [f"pairs/{p}" for p in pairs]
    for pair in pairs:
        for name in ("report.html", "report.md", "report.json"):
            assert (out / "pairs" / pair / name).stat().st_size > 10_000
    index = (out / "index.html").read_text()
    assert all(f'href="pairs/{p}/report.html"' in index for p in pairs)


def test_the_vllm_timeline_shows_the_known_changes(vllm_history):
    out, _cache, _proc = vllm_history
    rows = {r["version"]: r for r in json.loads((out / "timeline.json").read_text())["releases"]}
    assert rows["0.10.1"]["pair"] is None
    for version in VERSIONS:
        row = rows[version]
        assert row["api"]["public"] > 1000 and row["api"]["decided"] >= row["api"]["public"]
        assert {"counter", "gauge", "histogram"} <= set(row["metrics"]["by_type"])
        assert row["binds"] > 50  # torch.ops calls into the kernels of csrc/
        assert len(row["layers"]) >= 4
    # 0.10.1.1 is a patch release (7 files changed); 0.10.2 removed parameters of public
    # constructors (EngineCoreRequest(mm_hashes), EngineArgs(enable_prompt_adapter))
    patch, minor = rows["0.10.1.1"]["pair"], rows["0.10.2"]["pair"]
    assert minor["differences"]["breaking"] > 10 and "api" in minor["breaking"]
    assert minor["api"]["changes"] > minor["api"]["breaking"] == minor["breaking"]["api"]
    assert patch["differences"]["breaking"] < minor["differences"]["breaking"] / 10
    report = (out / minor["report"] / "report.json").read_text()  # the Markdown is cut to fit a PR comment
    assert "enable_prompt_adapter" in report and "mm_hashes" in report


def test_new_only_on_vllm_finds_nothing_in_seconds(vllm_history):
    out, cache, _proc = vllm_history
    state = (out / "state.json").read_bytes()
    start = time.perf_counter()
    again = run_releases("pypi:vllm", "--from", "0.10.1", "--to", "0.10.2", "-o", str(out), "--new-only",
                         "--fail-on", "breaking", cache=cache)
    elapsed = time.perf_counter() - start
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "vllm: no new releases"
    assert "extracted" not in again.stdout and not again.stderr
    assert (out / "state.json").read_bytes() == state
    assert elapsed < 30, elapsed  # one index request and one state file: seconds, not minutes


@pytest.mark.browser
def test_the_vllm_timeline_works_in_headless_chromium(vllm_history, tmp_path):
    out, _cache, _proc = vllm_history
    dom = _run_chromium(tmp_path, (out / "timeline.html").resolve().as_uri() + "#selftest", "--dump-dom")
    match = re.search(r'<pre id="selftest-result">(.*?)</pre>', dom.stdout, re.S)
    assert match, f"the self-test did not run; stderr: {dom.stderr[-2000:]}"
    result = json.loads(html_unescape(match.group(1)))
    assert result["errors"] == []
    assert result["charts"] == 7 and result["releases"] == 3
    expected = [f"pairs/{a}..{b}/report.html" for a, b in zip(VERSIONS, VERSIONS[1:])]
    assert result["reportLinks"] == expected and set(result["chartLinks"]) == set(expected)
