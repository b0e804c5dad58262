"""The HTML report: self-contained, every repository string escaped, and working in real headless
Chromium from file:// (layer table, graph view, a symbol search, no console errors, a screenshot)."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from comparator.compare import compare_evidence
from comparator.graphview import build_graph_view
from comparator.registry import KINDS
from comparator.render_html import render_html
from extractor.evidence.read import evidence_from_json, load_evidence
from extractor.model import to_jsonable
from tests.compare_support import INPUTS, ROOT, struct

ARTIFACTS = ROOT / "tests" / "artifacts"
EVIL = "<script>alert(1)</script>"


def _report(a_name="mini_vllm", b_name="triton_like", tamper=None) -> str:
    a = json.loads((INPUTS / f"{a_name}.evidence.json").read_text(encoding="utf-8"))
    if tamper:
        tamper(a)
    a, b = evidence_from_json(a), load_evidence(INPUTS / f"{b_name}.evidence.json")
    findings = compare_evidence(a, b)
    labels = tuple(s["label"] for s in findings["systems"])
    return render_html(findings, KINDS, build_graph_view(a, b, labels))


def _poison(bundle):
    """Repository text that tries to break out: a docstring, a symbol name, a metric help, a layer
    summary, a struct member, a concept match."""
    node = bundle["graph"]["nodes"][0]
    node["doc"] = EVIL
    evil_node = dict(copy.deepcopy(node), id="py:evil.</script><script>alert(2)</script>", name=EVIL, qualname=EVIL)
    bundle["graph"]["nodes"].append(evil_node)
    bundle["layers"][0]["summary"] = EVIL
    bundle["layers"][0]["key_symbols"][0]["name"] = EVIL
    bundle["metrics"][0]["help"] = EVIL
    bundle["metrics"][0]["name"] = "evil" + EVIL
    bundle["concepts"][0]["evidence"][0]["matched"] = EVIL
    bundle["structs"] = [to_jsonable(struct(EVIL, 8, [(EVIL, "int", 0, 4)], tags=["pinned"], path="x.h", line=3))]


def test_repository_text_is_escaped_everywhere():
    page = _report(tamper=_poison)
    assert EVIL not in page
    assert "alert(2)" in page  # the id is embedded, but only as JSON with < and > escaped
    assert "</script><script>alert(2)" not in page
    assert html_escape(EVIL) in page
    # our own script elements only: the error collector, the graph data, the view, the self-test
    assert len(re.findall(r"<script\b", page)) == 4
    assert len(re.findall(r"</script>", page)) == 4


def html_escape(text: str) -> str:
    import html

    return html.escape(text, quote=True)


def test_page_is_self_contained():
    page = _report()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "@import" not in page and "url(http" not in page
    assert 'id=layer-table' in page and 'id=graph-view' in page and 'id=symbol-search' in page


def test_graph_data_round_trips_ids_and_edges():
    a = load_evidence(INPUTS / "triton_like.evidence.json")
    view = build_graph_view(a)["systems"][0]
    ids = []
    for parent, text, *_ in view["nodes"]:
        ids.append((ids[parent] if parent >= 0 else "") + text)
    assert ids == sorted(n.id for n in a.graph.nodes)
    contains = view["ekinds"].index("contains")
    rebuilt = {(ids[s], ids[t], view["ekinds"][k]) for s, t, k in zip(*[iter(view["edges"])] * 3)}
    rebuilt |= {(ids[p], ids[i], "contains") for i, (p, *_rest) in enumerate(view["nodes"]) if p >= 0}
    assert rebuilt == {(e.source, e.target, e.kind.value) for e in a.graph.edges}
    assert contains >= 0


def _chromium() -> str:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    assert Path(path).exists(), "chromium is required for the browser test (apt-get install chromium)"
    return path


def _run_chromium(tmp_path: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    args = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--no-first-run", "--disable-extensions", "--mute-audio",
            f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,1000", "--virtual-time-budget=5000",
            *extra, url]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


@pytest.mark.browser
def test_report_works_in_headless_chromium(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(_report(tamper=_poison), encoding="utf-8")
    url = page.resolve().as_uri() + "#selftest=Scheduler"
    dom = _run_chromium(tmp_path, url, "--dump-dom")
    match = re.search(r'<pre id="selftest-result">(.*?)</pre>', dom.stdout, re.S)
    assert match, f"the self-test did not run; stderr: {dom.stderr[-2000:]}"
    result = json.loads(html_unescape(match.group(1)))
    assert result["errors"] == []
    assert result["layerTable"] and result["graphView"]
    assert result["matches"] >= 2
    assert result["selected"] == "cpp:triton::core::Scheduler"  # the right-hand system is shown first
    assert result["neighbours"] >= 3 and result["drawn"] == min(result["neighbours"], 36) + 1
    assert "alert(" not in dom.stdout.split('<pre id="selftest-result">')[0].split("<main>")[0]
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "compare-report.png"
    shot.unlink(missing_ok=True)
    _run_chromium(tmp_path, url, f"--screenshot={shot}")
    assert shot.exists() and shot.stat().st_size > 20_000


def html_unescape(text: str) -> str:
    import html

    return html.unescape(text)
