"""Golden reports: Markdown and JSON of two comparisons over committed evidence, compared exactly.

Regenerate (after an intended change, then review the diff) with ARCHDIFF_REGEN_GOLDEN=1.
"""

from __future__ import annotations

import os

import pytest

from comparator.compare import compare_evidence
from comparator.registry import KINDS
from comparator.render_json import render_json
from comparator.render_markdown import render_markdown
from extractor.evidence.read import load_evidence
from tests.compare_support import GOLDEN, INPUTS

CASES = {  # name: (left, right, the mode the comparison must choose)
    "systems": ("mini_vllm", "triton_like", "systems"),
    "release": ("pysample", "pysample_v2", "release"),
    # a release whose telemetry changes: library series, Ray twins, thresholds that stop working
    "telemetry": ("telemetry_ops", "telemetry_ops_v2", "release"),
}


def _render(case: str) -> dict[str, str]:
    left, right, mode = CASES[case]
    findings = compare_evidence(load_evidence(INPUTS / f"{left}.evidence.json"),
                                load_evidence(INPUTS / f"{right}.evidence.json"))
    assert findings["mode"] == mode
    return {f"{case}.md": render_markdown(findings, KINDS), f"{case}.json": render_json(findings)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_reports_equal_golden_files(case):
    rendered = _render(case)
    if os.environ.get("ARCHDIFF_REGEN_GOLDEN") == "1":
        for name, text in rendered.items():
            (GOLDEN / name).write_text(text, encoding="utf-8")
    for name, text in rendered.items():
        expected = (GOLDEN / name).read_text(encoding="utf-8")
        assert text == expected, f"{name} differs from tests/golden/{name}; if intended, ARCHDIFF_REGEN_GOLDEN=1"


def test_rendering_is_deterministic():
    assert _render("systems") == _render("systems")


def test_markdown_fits_a_pull_request_comment():
    findings = compare_evidence(load_evidence(INPUTS / "pysample.evidence.json"),
                                load_evidence(INPUTS / "pysample_v2.evidence.json"))
    row = findings["release"]["symbols"]["removed"][0]
    findings["release"]["symbols"]["removed"] = [dict(row, id=f"{row['id']}{i}" + "x" * 2000) for i in range(400)]
    findings["layers"]["rows"] *= 200
    text = render_markdown(findings, KINDS)
    assert len(text) <= 65_536
    assert text.rstrip().endswith("the full findings are in report.json and report.html.")
    assert "## Takeaways" in text and "## Release changes" in text
