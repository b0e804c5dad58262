"""The comparison: two pieces of evidence, every evidence kind asked in turn, findings as JSON.

Everything here is a pure function of the two bundles (typed records from
:func:`extractor.evidence.read.load_evidence`); the kinds (:mod:`comparator.registry`) compute the
sections, this module only loops over them and describes the two systems. Bump ``REPORT_SCHEMA``
when a key of the findings changes meaning (docs/report-schema.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from comparator.kind import SIDES, Counts, EvidenceKind, release_order
from comparator.registry import KINDS
from extractor.evidence.read import Evidence

REPORT_SCHEMA = 2  # 2: telemetry metrics are the own ones; library series and twins apart
MODES = ("auto", "systems", "release")
# Rows per list in the findings. Real comparisons stay far below (vLLM 0.10.1 -> 0.10.2: 786 added
# symbols at most); a tampered or generated bundle of 100k symbols would otherwise make a report of
# hundreds of megabytes. Counts, takeaways and the differences are taken before the cut.
LIST_CAP = 5_000


def compare_evidence(a: Evidence, b: Evidence, mode: str = "auto",
                     kinds: Sequence[EvidenceKind] = KINDS) -> dict[str, Any]:
    """All findings for evidence ``a`` (left, older) against ``b`` (right, newer).

    ``mode`` is ``systems`` (two different systems), ``release`` (two releases of one system) or
    ``auto``: ``release`` when both carry the same system name.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be auto, systems or release, not {mode!r}")
    if mode == "auto":
        mode = "release" if same_system(a, b) else "systems"
    findings: dict[str, Any] = {"schema_version": REPORT_SCHEMA, "mode": mode, "systems": describe_systems(a, b)}
    summaries = {kind.key: (kind.summarize(a), kind.summarize(b)) for kind in kinds}
    for kind in kinds:
        section = kind.compare(*summaries[kind.key])
        if section is not None:
            findings[kind.key] = section
    release: dict[str, Any] | None = None
    if mode == "release":
        release = {}
        for kind in release_order(kinds):
            release.update(kind.diff_release(*summaries[kind.key]))
        findings["release"] = release
    labels = tuple(s["label"] for s in findings["systems"])
    takeaways = []
    if release is not None:
        for kind in release_order(kinds):
            takeaways += kind.release_takeaways(findings.get(kind.key), release, labels)
    for kind in kinds:
        takeaways += kind.takeaways(findings.get(kind.key), release, labels)
    findings["takeaways"] = [t.json() for t in takeaways]
    total = sum((kind.count(findings.get(kind.key), release) for kind in kinds), Counts())
    findings["differences"] = {"any": total.any, "breaking": total.breaking}
    capped = cap_lists(findings, LIST_CAP)
    if capped:
        findings["capped"] = {"limit": LIST_CAP, "lists": capped}
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


def describe_systems(a: Evidence, b: Evidence) -> list[dict[str, Any]]:
    out = []
    for side, evidence in zip(SIDES, (a, b)):
        name, version = evidence.system.name or "?", evidence.system.version
        out.append({
            "side": side,
            "name": name,
            "version": version,
            "label": f"{name} {version}".strip(),
            "sources": sorted(s.spec for s in evidence.sources),
            "files": sum(evidence.stats["files"].values()),
            "nodes": len(evidence.graph.nodes),
            "edges": len(evidence.graph.edges),
            "diagnostics": len(evidence.diagnostics),
        })
    if out[0]["label"] == out[1]["label"]:
        # Two bundles of the same name and version: keep the reader able to tell the columns apart.
        for entry, tag in zip(out, ("A", "B")):
            entry["label"] = f"{entry['label']} ({tag})"
    return out
