"""The API kind: each side's public API across two systems, and a release's rows rendered safely
(every repository string escaped in HTML, neutral in Markdown, long groups cut to size)."""

from __future__ import annotations

import html

import pytest

from comparator.compare import compare_evidence
from comparator.kinds.api import reason_group
from comparator.registry import KINDS
from comparator.render_html import render_html
from comparator.render_markdown import render_markdown
from extractor.context import ExtractOptions
from extractor.evidence.read import evidence_from_json
from extractor.model import Node, NodeKind, Parameter
from extractor.run.pipeline import extract_system
from tests.compare_support import ROOT, evidence

EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def systems(tmp_path_factory):
    options = ExtractOptions(jobs=1, cache_dir=tmp_path_factory.mktemp("cache"))
    a, b = (evidence_from_json(extract_system([str(ROOT / "fixtures" / name)], version="1", options=options).bundle)
            for name in ("pyapi", "pysample"))
    return compare_evidence(a, b)


def test_each_side_says_how_its_public_api_is_decided(systems):
    assert systems["mode"] == "systems"
    a = systems["api"]["a"]
    assert a["empty_reason"] == "" and a["with_reason"] == a["symbols"]
    # apipkg.Runner names apipkg._impl.core.Runner, ctorlib.Job names ctorlib._jobs.Job
    assert a["reasons"]["public: re-exported as …"] == 2
    # fixtures/pyapi/tests/test_engine.py and benchmarks/bench.py sit outside the packages
    assert a["reasons"]["private: in a tests/ tree"] == 1 and a["reasons"]["private: in a benchmarks/ tree"] == 1
    # apipkg/__init__.py lists Engine, Mode, Runner, VERSION, lazy, tools; ctorlib/__init__.py lists Job, Point, Point3
    assert a["reasons"]["public: listed in __all__"] == 8  # `lazy` is imported only under TYPE_CHECKING
    assert a["public"] == sum(n for kinds in a["public_by_language"].values() for n in kinds.values())
    assert systems["differences"]["breaking"] == 0
    text = [t["text"] for t in systems["takeaways"] if t["ref"] == "api"]
    assert text and text[0].startswith(f"Public API: pyapi 1 exposes {a['public']:,} public symbols")
    assert "## Public API" in render_markdown(systems, KINDS)


@pytest.mark.parametrize("reason,group", [
    ("public: re-exported as vllm.LLM", "public: re-exported as …"),
    ("private: inside non-public package vllm._x", "private: inside non-public package …"),
    ("private: underscore name (_impl)", "private: underscore name"),
    ("private: in a non-public module", "private: in a non-public module"),
    ("private: in a tests/ tree", "private: in a tests/ tree"),
])
def test_reasons_group_without_the_names_they_carry(reason, group):
    assert reason_group(reason) == group


def _release_with(node_old: Node, node_new: Node | None):
    old = evidence("evil", "1", nodes=[node_old])
    new = evidence("evil", "2", nodes=[node_new] if node_new else [])
    return compare_evidence(old, new)


def test_repository_text_in_api_rows_is_escaped():
    params = tuple(Parameter(f"p{i}{EVIL}", annotation=EVIL) for i in range(8))
    old = Node(f"py:pkg.{EVIL}", NodeKind.FUNCTION, EVIL, f"pkg.{EVIL}", "python", f"pkg/{EVIL}.py", 3,
               params=params, returns=EVIL, api="public: module-level name")
    new = Node(old.id, old.kind, old.name, old.qualname, "python", old.path, 3, params=tuple(reversed(params)),
               returns="int", api=old.api)
    findings = _release_with(old, new)
    rows = findings["release"]["api"]["changes"]
    assert len([r for r in rows if r["rule"] == "parameter-moved"]) == 8
    page = render_html(findings, KINDS)
    assert EVIL not in page and html.escape(EVIL) in page
    md = render_markdown(findings, KINDS)
    assert "<script>" not in md
    # eight moved parameters are one line naming the first five
    assert "positional parameter moved ×8" in md and "… 3 more" in md


def test_a_release_without_api_changes_says_so():
    node = Node("py:pkg.f", NodeKind.FUNCTION, "f", "pkg.f", "python", "pkg/m.py", 1, api="public: module-level name")
    findings = _release_with(node, node)
    assert findings["release"]["api"] == {"total": 0, "breaking": 0, "broken_symbols": 0, "by_rule": [], "changes": []}
    assert "No symbol of the old release changed in a way a caller can notice." in render_markdown(findings, KINDS)
    assert any(t["text"].startswith("API: no symbol of evil 1 changed") for t in findings["takeaways"])
