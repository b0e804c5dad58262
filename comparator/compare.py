"""The comparison: two pieces of evidence, every evidence kind asked in turn, findings as JSON.

Everything here is a pure function of the two bundles (typed records from
:func:`extractor.evidence.read.load_evidence`); the kinds (:mod:`comparator.registry`) compute the
sections, this module only loops over them and describes the two systems. Bump ``REPORT_SCHEMA``
when a key of the findings changes meaning (docs/report-schema.md).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any, TypeVar

from comparator.codec import to_json
from comparator.kind import SIDES, AnyKind, Counts, EvidenceKind, Labels, Takeaway, release_order
from comparator.records import Capped, Mode, SystemDescription
from comparator.registry import KINDS
from extractor.evidence.read import Evidence

REPORT_SCHEMA = 2  # 2: telemetry metrics are the own ones; library series and twins apart
MODES = ("auto", "systems", "release")
# Rows per list in the findings. Real comparisons stay far below (vLLM 0.10.1 -> 0.10.2: 786 added
# symbols at most); a tampered or generated bundle of 100k symbols would otherwise make a report of
# hundreds of megabytes. Counts, takeaways and the differences are taken before the cut.
LIST_CAP = 5_000

S = TypeVar("S")
C = TypeVar("C")
R = TypeVar("R")


@dataclasses.dataclass(frozen=True, slots=True)
class KindFindings:
    """What one kind found: its section and release part (records, None where it has none), its
    sentences and its counts."""

    section: object
    release: object
    release_takeaways: list[Takeaway]
    takeaways: list[Takeaway]
    counts: Counts


def ask_kind(kind: EvidenceKind[S, C, R], a: Evidence, b: Evidence, mode: Mode, labels: Labels) -> KindFindings:
    """One kind through the protocol's steps, in their order (:mod:`comparator.kind`)."""
    sa, sb = kind.summarize(a), kind.summarize(b)
    section = kind.compare(sa, sb)
    release = kind.diff_release(sa, sb) if mode is Mode.RELEASE else None
    if mode is Mode.SYSTEMS:
        counts = kind.count(section, None)
    else:  # only what changed between the releases counts
        counts = kind.count(section, release) if release is not None else Counts()
    return KindFindings(
        section, release,
        kind.release_takeaways(section, release, labels) if release is not None else [],
        kind.takeaways(section, release, labels),
        counts,
    )


def compare_evidence(a: Evidence, b: Evidence, mode: str = "auto",
                     kinds: Sequence[AnyKind] = KINDS) -> dict[str, Any]:
    """All findings for evidence ``a`` (left, older) against ``b`` (right, newer), as the JSON of
    ``report.json`` (each kind's records written by :func:`comparator.codec.to_json`).

    ``mode`` is ``systems`` (two different systems), ``release`` (two releases of one system) or
    ``auto``: ``release`` when both carry the same system name.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be auto, systems or release, not {mode!r}")
    chosen = Mode(mode) if mode != "auto" else (Mode.RELEASE if same_system(a, b) else Mode.SYSTEMS)
    systems = describe_systems(a, b)
    labels = (systems[0].label, systems[1].label)
    found = {kind.key: ask_kind(kind, a, b, chosen, labels) for kind in kinds}
    findings: dict[str, Any] = {"schema_version": REPORT_SCHEMA, "mode": chosen.value, "systems": to_json(systems)}
    for kind in kinds:
        if found[kind.key].section is not None:
            findings[kind.key] = to_json(found[kind.key].section)
    takeaways: list[Takeaway] = []
    if chosen is Mode.RELEASE:
        release: dict[str, Any] = {}
        for kind in release_order(kinds):
            if found[kind.key].release is not None:
                release.update(to_json(found[kind.key].release))
            takeaways += found[kind.key].release_takeaways
        findings["release"] = release
    for kind in kinds:
        takeaways += found[kind.key].takeaways
    findings["takeaways"] = to_json(takeaways)
    findings["differences"] = to_json(sum((f.counts for f in found.values()), Counts()))
    capped = cap_lists(findings, LIST_CAP)
    if capped:
        findings["capped"] = to_json(Capped(LIST_CAP, capped))
    return findings


def cap_lists(findings: dict[str, Any], cap: int) -> dict[str, int]:
    """Cut every list of the findings to ``cap`` rows, in place; the full length of each cut list,
    by its path (``release.symbols.added``)."""
    capped: dict[str, int] = {}

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}" if path else key)
        elif isinstance(value, list):
            if len(value) > cap:
                capped[path] = len(value)
                del value[cap:]
            for item in value:
                walk(item, f"{path}[]")

    walk(findings, "")
    return dict(sorted(capped.items()))


_VERSION_TAIL = re.compile(r"[-_ ]v?\d+(\.\d+)*([.-]?[a-z]+\d*)?$")


def same_system(a: Evidence, b: Evidence) -> bool:
    """Two bundles of one system: the same name, once a version tail (``vllm-0.10.2``) is dropped."""
    def base(evidence: Evidence) -> str:
        name = evidence.system.name.strip().lower()
        return _VERSION_TAIL.sub("", name) or name
    return bool(base(a)) and base(a) == base(b)


def describe_systems(a: Evidence, b: Evidence) -> tuple[SystemDescription, SystemDescription]:
    out = []
    for side, evidence in zip(SIDES, (a, b)):
        name, version = evidence.system.name or "?", evidence.system.version
        out.append(SystemDescription(
            side=side,
            name=name,
            version=version,
            label=f"{name} {version}".strip(),
            sources=tuple(sorted(s.spec for s in evidence.sources)),
            files=sum(evidence.stats["files"].values()),
            nodes=len(evidence.graph.nodes),
            edges=len(evidence.graph.edges),
            diagnostics=len(evidence.diagnostics),
            not_read=tuple(d.message for d in evidence.diagnostics if d.code == "language-not-read") or None,
        ))
    sa, sb = out
    if sa.label == sb.label:
        # Two bundles of the same name and version: keep the reader able to tell the columns apart.
        sa, sb = (dataclasses.replace(s, label=f"{s.label} ({tag})") for s, tag in ((sa, "A"), (sb, "B")))
    return sa, sb
