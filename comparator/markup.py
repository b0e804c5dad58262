"""Formatting primitives the renderers and the kinds' ``render`` modules share: Markdown cells and
tables, HTML escaping and tables. Formatting only: nothing here reads evidence or computes."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence

from comparator.records import Located

LIST_LIMIT = 25  # names listed inline in Markdown
MD_ROW_LIMIT = 40  # rows per Markdown table; the JSON report has them all
HTML_ROW_LIMIT = 300  # rows per release-change table in the page


# ---------------------------------------------------------------------------------------- Markdown


# GitHub renders a Markdown report (a pull-request comment) with extensions that make text live:
# bare URLs and www. names become links, @name a mention that notifies someone, user@host a mail
# link. A zero-width space after the ":" of a scheme, after "www" and after "@" breaks each pattern
# and shows the same text.
_ZWSP = "\u200b"
_LIVE = re.compile(r"(?i)(?<=[a-z0-9+.-]:)(?=//)|(?<=\bwww)(?=\.)|(?<=@)")


def cell(value: object) -> str:
    """Repository or evidence text as inert Markdown for a table cell, a heading or a list item:
    no link, image, mention, HTML, emphasis or table pipe survives, and it stays on one line."""
    text = html.escape(" ".join(str(value).splitlines()), quote=False).replace("`", "'")
    # backslashes first, so that "\\[x](u)" cannot turn the escape of its bracket into a backslash
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    text = text.replace("*", "\\*").replace("_", "\\_").replace("[", "\\[").replace("]", "\\]").replace("~", "\\~")
    return _LIVE.sub(_ZWSP, text)


def at(where: Located | None) -> str:
    """``path:line`` of a row, or a dash when it has no place in code."""
    return cell(f"{where.path}:{where.line}") if where is not None and where.path else "—"


def md_table(head: Sequence[str], rows: Iterable[Sequence[object]], limit: int = MD_ROW_LIMIT) -> list[str]:
    rows = list(rows)
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(" --- " for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows[:limit]]
    if len(rows) > limit:
        out.append(f"\n… {len(rows) - limit:,} more rows in the JSON report.")
    return out + [""]


# ---------------------------------------------------------------------------------------- HTML


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def embed_json(value: object) -> str:
    """JSON for a ``<script type="application/json">`` element: no string can close the element."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def html_loc(where: Located | None) -> str:
    if where is None or not where.path:
        return '<span class="loc">—</span>'
    return f'<span class="loc">{esc(where.path)}:{where.line}</span>'


def html_table(head: Sequence[str], rows: Iterable[Sequence[str]], *, attrs: str = "", numeric: Sequence[int] = (),
               limit: int | None = None) -> str:
    rows = list(rows)
    shown = rows if limit is None else rows[:limit]
    ths = "".join(f'<th{" class=num" if i in numeric else ""}>{h}</th>' for i, h in enumerate(head))
    body = "".join("<tr>" + "".join(f'<td{" class=num" if i in numeric else ""}>{c}</td>' for i, c in enumerate(r))
                   + "</tr>" for r in shown)
    more = ""
    if limit is not None and len(rows) > limit:
        more = f'<p class="muted">{len(rows) - limit:,} more rows in the JSON report.</p>'
    return f"<table{attrs}><thead><tr>{ths}</tr></thead><tbody>{body}</tbody></table>{more}"


def none_found(reason: str) -> str:
    return f'<p class="muted">None found: {esc(reason)}.</p>'


BREAKING = '<span class="pill bad">breaking</span>'
