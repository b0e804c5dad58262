"""The comparator is a loop over evidence kinds: a kind written here, in the test only, reaches every
report format without a line of the renderers changing."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping

from comparator.compare import compare_evidence
from comparator.kind import Counts, EvidenceKind, Labels, Takeaway
from comparator.records import Sides
from comparator.registry import KINDS
from comparator.render_html import render_html
from comparator.render_json import render_json
from comparator.render_markdown import render_markdown
from extractor.evidence.read import Evidence, load_evidence
from tests.compare_support import INPUTS

Codes = Mapping[str, int]  # diagnostic code -> diagnostics of one side


@dataclasses.dataclass(frozen=True, slots=True)
class CodeChanges:
    gone: tuple[str, ...]
    new: tuple[str, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class FakeRelease:
    fake_diagnostics: CodeChanges  # the key it adds to findings["release"]


class FakeDiagnosticsKind(EvidenceKind[Codes, Sides[Codes], FakeRelease]):
    """Diagnostics per code, side by side: a kind the registry does not have."""

    key = "fake_diagnostics"
    title = "Diagnostics by code"
    release_rank = 50

    def summarize(self, evidence: Evidence) -> Codes:
        codes: dict[str, int] = {}
        for d in evidence.diagnostics:
            codes[d.code] = codes.get(d.code, 0) + 1
        return dict(sorted(codes.items())) or {"none": 0}

    def compare(self, a: Codes, b: Codes) -> Sides[Codes]:
        return Sides(a, b)

    def diff_release(self, a: Codes, b: Codes) -> FakeRelease:
        return FakeRelease(CodeChanges(tuple(sorted(set(a) - set(b))), tuple(sorted(set(b) - set(a)))))

    def count(self, section: Sides[Codes], release: FakeRelease | None) -> Counts:
        return Counts(len(set(section.a) ^ set(section.b)), 0)

    def takeaways(self, section: Sides[Codes], release: FakeRelease | None, labels: Labels) -> list[Takeaway]:
        return [Takeaway(f"FAKE-TAKEAWAY {labels[0]} has {len(section.a)} diagnostic codes", self.key)]

    def markdown(self, section: Sides[Codes], la: str, lb: str) -> list[str]:
        return ["## FAKE-SECTION", "", *(f"- {code}: {n}" for code, n in section.a.items()), ""]

    def release_markdown(self, release: FakeRelease, la: str, lb: str) -> list[str]:
        return ["### FAKE-RELEASE", "", f"gone: {list(release.fake_diagnostics.gone)}", ""]

    def html(self, section: Sides[Codes], la: str, lb: str) -> str:
        return f'<section id={self.key}><h2>FAKE-SECTION</h2>{len(section.a)} codes</section>'

    def release_html(self, release: FakeRelease, la: str, lb: str) -> str:
        return "<section id=fake-release>FAKE-RELEASE</section>"


def test_a_new_kind_appears_in_every_format_without_touching_the_renderers():
    kinds = (*KINDS, FakeDiagnosticsKind())
    a, b = load_evidence(INPUTS / "mini_vllm.evidence.json"), load_evidence(INPUTS / "triton_like.evidence.json")
    plain = compare_evidence(a, b)
    findings = compare_evidence(a, b, kinds=kinds)
    assert "fake_diagnostics" not in plain  # the registry lacks it...
    section = json.loads(render_json(findings))["fake_diagnostics"]  # ...and the JSON report has it
    assert section["b"] == FakeDiagnosticsKind().summarize(b)
    expected_gap = len(set(section["a"]) ^ set(section["b"]))
    assert findings["differences"]["any"] == plain["differences"]["any"] + expected_gap
    md = render_markdown(findings, kinds)
    assert "## FAKE-SECTION" in md and "FAKE-TAKEAWAY" in md
    assert md.index("## Concepts") < md.index("## FAKE-SECTION")  # in registry order, after the others
    page = render_html(findings, kinds)
    assert "<h2>FAKE-SECTION</h2>" in page and 'href="#fake_diagnostics">Diagnostics by code</a>' in page


def test_a_new_kind_takes_part_in_a_release_comparison():
    kinds = (*KINDS, FakeDiagnosticsKind())
    a, b = load_evidence(INPUTS / "pysample.evidence.json"), load_evidence(INPUTS / "pysample_v2.evidence.json")
    findings = compare_evidence(a, b, kinds=kinds)
    assert findings["mode"] == "release" and "fake_diagnostics" in findings["release"]
    md = render_markdown(findings, kinds)
    # release sections come in release rank: API (0), structs, telemetry, layer drift (3), symbol drift (4),
    # this kind (50)
    assert md.index("### Metrics") < md.index("### Layer drift") < md.index("### FAKE-RELEASE") < md.index("## Layers")
    assert "FAKE-RELEASE" in render_html(findings, kinds)
    # the renderers read its part of the release back as its own record, not as JSON
    kind = FakeDiagnosticsKind()
    assert kind.read_release(findings["release"]) == kind.diff_release(kind.summarize(a), kind.summarize(b))
