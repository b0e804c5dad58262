"""The report files of one comparison: ``report.html``, ``report.md`` and ``report.json`` written
from the findings, in the formats asked for. Used by ``archdiff compare``/``battle`` and by release
tracking (one report per pair of consecutive releases), so every report is the same page."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from extractor.support.storage import write_atomic

if TYPE_CHECKING:
    from extractor.evidence.read import Evidence

FORMATS = ("html", "md", "json")


def render_reports(findings: dict[str, Any], formats: tuple[str, ...] = FORMATS,
                   sides: tuple[Evidence, Evidence] | None = None,
                   highlight: tuple[str, str] | None = None) -> dict[str, str]:
    """The report files' names and texts, in the order of ``formats``. ``sides`` (the two evidence
    bundles) feed the HTML page's graph view, which marks the ``highlight`` path (FROM, TO)."""
    from comparator.registry import KINDS
    from comparator.render_json import render_json
    from comparator.render_markdown import render_markdown
    from comparator.view import read_head

    texts = {}
    for fmt in formats:
        if fmt == "html":
            from comparator.graphview import build_graph_view
            from comparator.render_html import render_html

            view = build_graph_view(sides[0], sides[1], read_head(findings).labels, highlight) if sides else None
            texts["report.html"] = render_html(findings, KINDS, view)
        elif fmt == "md":
            texts["report.md"] = render_markdown(findings, KINDS)
        else:
            texts["report.json"] = render_json(findings)
    return texts


def write_reports(findings: dict[str, Any], out_dir: Path, formats: tuple[str, ...] = FORMATS,
                  sides: tuple[Evidence, Evidence] | None = None,
                  highlight: tuple[str, str] | None = None) -> list[Path]:
    """Render ``findings`` in each format into ``out_dir``; returns the files written."""
    return write_texts(render_reports(findings, formats, sides, highlight), out_dir)


def write_texts(texts: dict[str, str], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    return [write_atomic(out_dir / name, text) for name, text in texts.items()]
