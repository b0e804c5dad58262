"""Formatting primitives the renderers and the kinds' ``render`` modules share: Markdown cells and
tables, HTML escaping and tables. Formatting only: nothing here reads evidence or computes."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence

from comparator.records import ApiReach, Located

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


# ------------------------------------------------------------------------- reached from Python


def reach_summary(reach: ApiReach) -> str:
    """"`a.b.f`, `a.c.g` (+3 more public APIs)", "no public Python API reaches it", or why not
    known: plain text (a renderer escapes it)."""
    if reach.unresolved:
        return f"unresolved: {reach.unresolved}"
    if not reach.apis and reach.private:
        first = reach.private[0]
        return (f"no public Python API reaches it over the graph's edges; its chains stop at the Python caller "
                f"{first.qualname} ({first.api})")
    if not reach.apis:
        return "no Python reaches it over the graph's edges"
    names = ", ".join(a.qualname for a in reach.apis)
    more = reach.total - len(reach.apis)
    return names + (f" (+{more:,} more public APIs)" if more else "")


def reach_chain(reach: ApiReach) -> str:
    """The witness chain as ``a -[binds x.py:60]-> b -[uses y.cu:12]-> c``, plain text."""
    parts = []
    for link in reach.witness:
        if link.edge:
            parts.append(f" -[{link.edge} {link.path}:{link.line}]-> ")
        parts.append(link.qualname)
    return "".join(parts)


def reach_markdown(subject: str, reach: ApiReach) -> str:
    """One list item: the entity, the public APIs that reach it and the witness chain."""
    chain = f"; witness: {cell(reach_chain(reach))}" if reach.witness else ""
    return f"- {cell(subject)}: {cell(reach_summary(reach))}{chain}"


def reach_list(intro: str, rows: Sequence[tuple[str, ApiReach]], limit: int = MD_ROW_LIMIT) -> list[str]:
    """Markdown: the intro line and one item per entity (``reach_markdown``), capped like a table."""
    if not rows:
        return []
    more = [f"… {len(rows) - limit:,} more in the JSON report.", ""] if len(rows) > limit else []
    return [intro, "", *(reach_markdown(subject, reach) for subject, reach in rows[:limit]), "", *more]


def reach_html(reach: ApiReach) -> str:
    """The public APIs and the witness chain, for a table cell or under a byte map."""
    if not reach.witness:
        return f'<span class=muted>{esc(reach_summary(reach))}</span>'
    chain = "".join((f' <span class=muted>-[{esc(link.edge)} {esc(link.path)}:{link.line}]-&gt;</span> '
                     if link.edge else "") + f'<span class=sym>{esc(link.qualname)}</span>' for link in reach.witness)
    return (f'<span class=reach>{esc(reach_summary(reach))}</span>'
            f'<div class="muted chain">witness: {chain}</div>')
