"""The accepted-changes file: breaks a project means, each with its reason, reviewed in the pull
request that makes them. An accepted finding is shown as accepted and never fails the gate; an
entry that matches no finding is stale (the break was reverted, or the symbol renamed again) and
is reported so the file does not grow dead rows. ``archdiff check --accept`` writes the current
failures into the file with a placeholder reason, which does not accept anything until a person
replaces it::

    accepted:
    - rule: parameter-removed
      symbol: servekit.core.Engine.run
      subject: timeout                 # optional: the parameter, member or series
      reason: replaced by deadline=, announced in 1.3
      until: 2.0.0                     # optional: the entry lapses from this version of the tree on
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path

import yaml
from packaging.version import InvalidVersion, Version

from comparator.gate.findings import Finding, Status
from extractor.errors import UserInputError
from extractor.support.datafile import check_data, read_yaml_file

PLACEHOLDER = "TODO: say why this break is intended"
SCHEMA = {"accepted": [{"rule": str, "symbol": str, "subject?": str, "reason": str, "until?": str}]}
HEADER = ("# Changes archdiff check accepts: each with its reason (reviewed in the pull request).\n"
          "# An entry whose reason is still the TODO accepts nothing. until: the tree version from which\n"
          "# the entry lapses.\n")


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class AcceptedChange:
    rule: str
    symbol: str
    subject: str
    reason: str
    until: str = ""

    def matches(self, finding: Finding) -> bool:
        return (self.rule, self.symbol) == (finding.rule, finding.symbol) and self.subject in ("", finding.subject)

    @property
    def explained(self) -> bool:
        return bool(self.reason.strip()) and self.reason.strip() != PLACEHOLDER

    def lapsed(self, version: Version | None) -> bool:
        return bool(self.until) and version is not None and version >= Version(self.until)


@dataclasses.dataclass(frozen=True, slots=True)
class Acceptance:
    """The findings with accepted ones marked, and the entries that did not apply, by why."""

    findings: tuple[Finding, ...]
    stale: tuple[AcceptedChange, ...]  # match no finding
    lapsed: tuple[AcceptedChange, ...]  # ``until`` reached by the tree's version
    unexplained: tuple[AcceptedChange, ...]  # reason still the placeholder


def read_accepted(path: Path) -> tuple[AcceptedChange, ...]:
    """The entries of ``path``; none when the file does not exist."""
    if not path.exists():
        return ()
    data = read_yaml_file(path)
    if data is None:
        return ()
    check_data(data, SCHEMA, str(path))
    entries = []
    for i, row in enumerate(data["accepted"]):
        until = row.get("until", "")
        if until:
            try:
                Version(until)
            except InvalidVersion:
                raise UserInputError(f"{path}: accepted[{i}].until: {until!r} is not a version") from None
        entries.append(AcceptedChange(row["rule"], row["symbol"], row.get("subject", ""), row["reason"], until))
    return tuple(entries)


def apply_accepted(findings: Sequence[Finding], entries: Iterable[AcceptedChange],
                   version: Version | None) -> Acceptance:
    """Mark the failing and warning findings an explained, unlapsed entry matches as accepted."""
    entries = tuple(entries)
    live = [e for e in entries if e.explained and not e.lapsed(version)]
    out, used = [], set()
    for finding in findings:
        match = next((e for e in live if e.matches(finding)), None) if finding.status is not Status.IGNORED else None
        if match is not None:
            used.add(match)
            finding = dataclasses.replace(finding, status=Status.ACCEPTED, reason=match.reason)
        out.append(finding)
    matched_any = {e for e in entries if any(e.matches(f) for f in findings)}
    return Acceptance(
        tuple(out),
        stale=tuple(e for e in entries if e not in matched_any),
        lapsed=tuple(e for e in entries if e.lapsed(version) and e in matched_any),
        unexplained=tuple(e for e in entries if not e.explained and e in matched_any),
    )


def write_accepted(path: Path, entries: Iterable[AcceptedChange], findings: Iterable[Finding]) -> int:
    """Add an entry (reason: the placeholder) for each failing finding no entry matches; keep the
    existing entries as they are. The count added."""
    kept = list(entries)
    new = sorted({AcceptedChange(f.rule, f.symbol, f.subject, PLACEHOLDER)
                  for f in findings if f.status is Status.FAILING and not any(e.matches(f) for e in kept)})
    rows = []
    for e in [*kept, *new]:
        row = {"rule": e.rule, "symbol": e.symbol}
        if e.subject:
            row["subject"] = e.subject
        row["reason"] = e.reason
        if e.until:
            row["until"] = e.until
        rows.append(row)
    text = HEADER + yaml.safe_dump({"accepted": rows}, sort_keys=False, allow_unicode=True, width=120)
    path.write_text(text, encoding="utf-8")
    return len(new)
