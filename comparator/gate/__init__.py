"""``archdiff check``'s decision: a release comparison's breaking rows, scoped by the project's
policy, with its accepted changes marked and the version verdict, computed apart from how it is
printed (:mod:`comparator.gate.render`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from packaging.version import Version

from comparator.gate.accepted import AcceptedChange, apply_accepted
from comparator.gate.findings import (
    Finding,
    Status,
    release_additions,
    release_findings,
)
from comparator.gate.policy import Policy, api_outside, apply_policy, promised_names
from comparator.gate.verdict import Verdict, version_verdict
from extractor.evidence.read import Evidence


@dataclasses.dataclass(frozen=True, slots=True)
class Gate:
    old_label: str
    new_label: str
    findings: tuple[Finding, ...]  # every breaking row, each with its status
    stale: tuple[AcceptedChange, ...]
    lapsed: tuple[AcceptedChange, ...]
    unexplained: tuple[AcceptedChange, ...]
    verdict: Verdict | None  # None when the old side's version is no version
    unscoped: int  # breaking rows before the policy

    def of(self, status: Status) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.status is status)


def decide(report: Mapping[str, Any], old: Evidence, policy: Policy, entries: tuple[AcceptedChange, ...],
           old_version: Version | None, declared: Version | None) -> Gate:
    raw = release_findings(report)
    promised = promised_names(old, policy)
    judged = apply_policy(raw, policy, promised)
    acceptance = apply_accepted(judged, entries, declared)
    kept = [f for f in acceptance.findings if f.status is not Status.IGNORED]
    additions = release_additions(report)
    added_symbols = [s for s in additions.symbols if not api_outside(s, policy, promised)]
    verdict = None
    if old_version is not None:
        verdict = version_verdict(old_version, declared, breaking=bool(kept),
                                  additions=bool(added_symbols or additions.metrics or additions.structs))
    systems = report["systems"]
    return Gate(systems[0]["label"], systems[1]["label"], acceptance.findings, acceptance.stale,
                acceptance.lapsed, acceptance.unexplained, verdict, len(raw))
