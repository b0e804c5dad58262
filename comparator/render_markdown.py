"""Markdown for pull-request comments: the header, the takeaways, then each evidence kind's own
Markdown, in the order of the kinds given. Formatting only: every number comes from the findings.

Lists are cut at a fixed length (a PR comment has to stay readable); the JSON report has them all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from comparator.kind import EvidenceKind, release_order
from comparator.markup import cell, md_table

# GitHub refuses comments longer than 65,536 characters; keep a margin for the note below.
MAX_CHARS = 60_000


def render_markdown(findings: Mapping[str, Any], kinds: Sequence[EvidenceKind]) -> str:
    sa, sb = findings["systems"]
    la, lb = cell(sa["label"]), cell(sb["label"])
    title = "release comparison" if findings["mode"] == "release" else "cross-system comparison"
    out = [f"# archdiff {title}: {la} → {lb}", ""]
    out += md_table(["", la, lb], [
        ["sources", ", ".join(cell(s) for s in sa["sources"]) or "—", ", ".join(cell(s) for s in sb["sources"]) or "—"],
        ["files", f"{sa['files']:,}", f"{sb['files']:,}"],
        ["symbols / edges", f"{sa['nodes']:,} / {sa['edges']:,}", f"{sb['nodes']:,} / {sb['edges']:,}"],
        ["diagnostics", f"{sa['diagnostics']:,}", f"{sb['diagnostics']:,}"],
    ])
    diff = findings["differences"]
    out += [f"**{diff['any']:,} differences, {diff['breaking']:,} breaking.**", ""]
    if "capped" in findings:
        cut = findings["capped"]
        out += [f"**Cut to size:** {len(cut['lists']):,} lists had more than {cut['limit']:,} rows and show the first "
                f"{cut['limit']:,} here and in the JSON report ({cell(', '.join(cut['lists']))}); the counts above and "
                "the takeaways count them all.", ""]
    out += ["## Takeaways", ""]
    out += [f"- {cell(t['text'])} _(§ {cell(t['ref'])})_" for t in findings["takeaways"]] + [""]
    release = findings.get("release")
    if release:
        out += ["## Release changes", ""]
        for kind in release_order(kinds):
            out += kind.release_markdown(release, la, lb)
    for kind in kinds:
        if kind.key in findings:
            out += kind.markdown(findings[kind.key], la, lb)
    return _fit("\n".join(out).rstrip() + "\n")


def _fit(text: str) -> str:
    """Cut at a line break so the comment fits; sections come most important first."""
    if len(text) <= MAX_CHARS:
        return text
    cut = text.rfind("\n", 0, MAX_CHARS - 200)
    return (text[:cut] + f"\n\n… cut here to fit a pull-request comment ({len(text) - cut:,} more characters); "
            "the full findings are in report.json and report.html.\n")
