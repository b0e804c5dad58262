"""`archdiff compare A B --highlight FROM TO`: the systems report's graph view marks one shortest
path, on each side where both ends are nodes; on fixtures/graph_ops (which lacks the ends) against
fixtures/struct_reach (Python method -> wrapper -[binds]-> C++ op -> launcher -[uses]-> struct)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html import unescape

import pytest

from comparator.compare import compare_evidence
from comparator.reports import render_reports
from extractor.context import ExtractOptions
from extractor.errors import UserInputError
from extractor.evidence.read import evidence_from_json
from extractor.run.pipeline import extract_system
from tests.conftest import FIXTURES
from tests.test_compare_html import _run_chromium

CHAIN = ["py:blockcopy.engine.Engine.step", "py:blockcopy._custom_ops.copy_blocks", "cpp:copy_blocks",
         "cpp:blockcopy::launch_copy", "cpp:blockcopy::BlockTable"]


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("highlight")
    options = ExtractOptions(jobs=1, cache_dir=tmp / "cache", probe_structs=False)
    return tuple(evidence_from_json(extract_system([str(FIXTURES / name)], options=options).bundle)
                 for name in ("graph_ops", "struct_reach"))


@pytest.fixture(scope="module")
def page(sides):
    findings = compare_evidence(*sides)
    assert findings["mode"] == "systems"
    return render_reports(findings, ("html",), sides, ("Engine.step", "blockcopy::BlockTable"))["report.html"]


def _view(page: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id=graph-data>(.*?)</script>', page, re.S).group(1))


def test_the_path_is_in_the_view_with_positions_and_edge_evidence(page):
    a, b = _view(page)["systems"]
    assert not a["highlight"]["resolved"] and "no node 'Engine.step'" in a["highlight"]["missing"]
    chain = b["highlight"]["chain"]
    assert [row[1] for row in chain] == CHAIN
    assert [row[2] for row in chain] == ["", "calls", "binds", "calls", "uses"]
    assert chain[2][3:] == ["blockcopy/_custom_ops.py", 7]  # where the binding is
    # each position is the view's own node: the page rebuilds the same id from its tables
    ids = []
    for parent, suffix, *_rest in b["nodes"]:
        ids.append((ids[parent] if parent >= 0 else "") + suffix)
    assert [ids[row[0]] for row in chain] == CHAIN


def test_the_page_lists_the_path_marked(page):
    items = re.findall(r"<li class=hl data-system=1 data-node=(\d+)>(.*?)</li>", page)
    assert [unescape(re.sub(r"<[^>]+>", "", text)).split()[-1] for _, text in items] == CHAIN
    assert "-[uses csrc/copy_blocks.cu:13]-&gt;" in page
    assert "Highlighted path in " in page and "no node &#x27;Engine.step&#x27;" in page


def test_ends_no_side_has_are_refused(sides):
    findings = compare_evidence(*sides)
    with pytest.raises(UserInputError, match="--highlight Nowhere.run blockcopy::BlockTable"):
        render_reports(findings, ("html",), sides, ("Nowhere.run", "blockcopy::BlockTable"))


def test_cli_takes_highlight_and_says_one_line_for_unknown_nodes(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "archdiff.cli", "compare", str(FIXTURES / "graph_ops"),
                           str(FIXTURES / "struct_reach"), "-o", str(tmp_path / "out"), "-j", "1", "--format", "html",
                           "--cache-dir", str(tmp_path / "cache"), "--highlight", "Nowhere.run", "Elsewhere.go"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "--highlight Nowhere.run Elsewhere.go" in proc.stderr


@pytest.mark.browser
def test_the_page_draws_the_path_marked(tmp_path, page):
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    dom = _run_chromium(tmp_path, path.resolve().as_uri() + "#selftest=launch_copy", "--dump-dom")
    result = json.loads(unescape(re.search(r'<pre id="selftest-result">(.*?)</pre>', dom.stdout, re.S).group(1)))
    assert result["errors"] == []
    assert result["highlighted"] == {"nodes": len(CHAIN), "edges": len(CHAIN) - 1}
