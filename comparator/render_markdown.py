"""Markdown for pull-request comments: the header, the takeaways, then each evidence kind's own
Markdown, in the order of the kinds given. Formatting only: every number comes from the findings.

Lists are cut at a fixed length (a PR comment has to stay readable); the JSON report has them all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from comparator.markup import cell, md_table
from comparator.records import Mode
from comparator.view import KindView, read_head, release_order

# GitHub refuses comments longer than 65,536 characters; keep a margin for the note below.
MAX_CHARS = 60_000


def render_markdown(findings: Mapping[str, Any], kinds: Sequence[KindView[Any, Any]]) -> str:
    head = read_head(findings)
    sa, sb = head.systems
    la, lb = cell(sa.label), cell(sb.label)
    title = "release comparison" if head.mode is Mode.RELEASE else "cross-system comparison"
    out = [f"# archdiff {title}: {la} → {lb}", ""]
    out += md_table(["", la, lb], [
        ["sources", ", ".join(cell(s) for s in sa.sources) or "—", ", ".join(cell(s) for s in sb.sources) or "—"],
        ["files", f"{sa.files:,}", f"{sb.files:,}"],
        ["symbols / edges", f"{sa.nodes:,} / {sa.edges:,}", f"{sb.nodes:,} / {sb.edges:,}"],
        ["diagnostics", f"{sa.diagnostics:,}", f"{sb.diagnostics:,}"],
        *([["not read", *("; ".join(map(cell, s.not_read or ())) or "—" for s in (sa, sb))]]
          if sa.not_read or sb.not_read else []),
    ])
    diff = head.differences
    out += [f"**{diff.any:,} differences, {diff.breaking:,} breaking.**", ""]
    if head.capped is not None:
        cut = head.capped
        out += [f"**Cut to size:** {len(cut.lists):,} lists had more than {cut.limit:,} rows and show the first "
                f"{cut.limit:,} here and in the JSON report ({cell(', '.join(cut.lists))}); the counts above and "
                "the takeaways count them all.", ""]
    out += ["## Takeaways", ""]
    out += [f"- {cell(t.text)} _(§ {cell(t.ref)})_" for t in head.takeaways] + [""]
    release = findings["release"] if "release" in findings else {}
    if release:
        out += ["## Release changes", ""]
        for kind in release_order(kinds):
            part = kind.read_release(release)
            if part is not None:
                out += kind.release_markdown(part, la, lb)
    for kind in kinds:
        section = kind.read_section(findings)
        if section is not None:
            out += kind.markdown(section, la, lb)
    return _fit("\n".join(out).rstrip() + "\n")


def _fit(text: str) -> str:
    """Cut at a line break so the comment fits; sections come most important first."""
    if len(text) <= MAX_CHARS:
        return text
    cut = text.rfind("\n", 0, MAX_CHARS - 200)
    return (text[:cut] + f"\n\n… cut here to fit a pull-request comment ({len(text) - cut:,} more characters); "
            "the full findings are in report.json and report.html.\n")
