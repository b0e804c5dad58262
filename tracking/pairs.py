"""One comparison of two consecutive releases, as a pure function of their evidence texts, so an
executor can run it anywhere (here, or as a Ray task on a node that has neither OUT_DIR nor the
cache): it returns the report files' texts and the timeline's numbers; the caller writes them."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

from comparator.compare import compare_evidence
from comparator.reports import render_reports
from extractor.evidence.read import Evidence, evidence_from_json
from tracking.timeline import pair_row


@dataclasses.dataclass(frozen=True, slots=True)
class PairJob:
    old: str  # release slugs
    new: str
    old_text: str  # evidence.json of each, as written
    new_text: str
    formats: tuple[str, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class PairResult:
    old: str
    new: str
    reports: dict[str, str]  # file name -> text
    row: dict[str, Any]
    differences: dict[str, int]


# Pairs come in version order, so a release is the new side of one pair and the old side of the
# next: the last bundle parsed is kept (vLLM's takes ~4 s to read into records).
_LAST: dict[str, Evidence] = {}


def _evidence(text: str, where: str) -> Evidence:
    digest = hashlib.sha256(text.encode()).hexdigest()
    if digest not in _LAST:
        _LAST.clear()
        _LAST[digest] = evidence_from_json(json.loads(text), where)
    return _LAST[digest]


def compare_pair(job: PairJob) -> PairResult:
    a = _evidence(job.old_text, f"releases/{job.old}/evidence.json")
    b = _evidence(job.new_text, f"releases/{job.new}/evidence.json")
    findings = compare_evidence(a, b, "release")
    return PairResult(job.old, job.new, render_reports(findings, job.formats, (a, b)), pair_row(findings),
                      dict(findings["differences"]))
