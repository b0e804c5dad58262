"""The public API in the report: a release's typed changes (breaking first, most used first) and the
counts per rule; across systems, each side's public API in numbers. Formatting only."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from comparator.kinds.api.records import ApiChange, ApiChanges, ApiRelease, ApiSummary
from comparator.markup import (BREAKING, HTML_ROW_LIMIT, at, cell, esc, html_loc, html_table, md_table, reach_html,
                               reach_list)
from comparator.records import ApiReach, Sides

RULES_DOC = "docs/python-api.md"


SUBJECTS_SHOWN = 5  # parameters (or bases, overloads) named per row; the JSON report lists every one
CHANGE_CHARS = 160  # an overload's whole parameter list is long: the JSON report has it whole


def _change(row: ApiChange) -> str:
    change = " → ".join(v for v in (row.old, row.new) if v)
    if row.subject:
        return f"{row.subject}: {change}" if change else row.subject
    return change


def _cut(text: str) -> str:
    return text if len(text) <= CHANGE_CHARS else text[:CHANGE_CHARS - 1] + "…"


def _moved(row: ApiChange) -> str:
    """The old location when the symbol is elsewhere now ("" when it stayed put or is gone)."""
    old, new = row.old_location, row.new_location
    if old and new and old != new:
        return f"{old.path}:{old.line}"
    return ""


def _grouped(rows: Iterable[ApiChange]) -> list[list[ApiChange]]:
    """Adjacent rows of one symbol, rule and verdict as one group: the findings come sorted by impact,
    then symbol and rule, so a constructor that moved 90 parameters is one line, not 90."""
    groups: list[list[ApiChange]] = []
    for row in rows:
        last = groups[-1][0] if groups else None
        if last is not None and (last.symbol, last.rule, last.breaking) == (row.symbol, row.rule, row.breaking):
            groups[-1].append(row)
        else:
            groups.append([row])
    return groups


def _group_cells(group: Sequence[ApiChange]) -> tuple[str, str, str]:
    """The group's change title, its changes (the first few named) and the verdict, as plain text."""
    first = group[0]
    title = first.title + (f" ×{len(group)}" if len(group) > 1 else "")
    changes = "; ".join(_cut(c) for c in (_change(r) for r in group[:SUBJECTS_SHOWN]) if c)
    if len(group) > SUBJECTS_SHOWN:
        changes += f"; … {len(group) - SUBJECTS_SHOWN:,} more"
    return title, changes, first.why


def _headline(api: ApiChanges, label: str) -> str:
    """``label`` arrives escaped for the format at hand; the rest is numbers."""
    text = f"{api.total:,} changes to symbols of {label}, {api.breaking:,} breaking for callers of its public API"
    return text + (f" ({api.broken_symbols:,} symbols)" if api.breaking else "")


def _rule_rows(api: ApiChanges, text: Callable[[str], str]) -> list[list[str]]:
    return [[text(r.title), f"{r.changes:,}", f"{r.breaking:,}"] for r in api.by_rule]


def release_markdown(release: ApiRelease, la: str, lb: str) -> list[str]:
    api = release.api
    out = ["### API changes", ""]
    if not api.total:
        return out + ["No symbol of the old release changed in a way a caller can notice.", ""]
    out += [f"{_headline(api, la)}; breaking first, most used first, one line per symbol and rule "
            f"(rules: {RULES_DOC}).", ""]
    out += md_table(["Rule", "Changes", "Breaking"], _rule_rows(api, cell))
    rows = []
    for group in _grouped(api.changes):
        first = group[0]
        title, changes, why = _group_cells(group)
        rows.append([cell(first.symbol), cell(title), cell(changes) or "—",
                     ("**breaking**: " if first.breaking else "not breaking: ") + cell(why), f"{first.uses:,}",
                     at(first) + (f" (was {cell(_moved(first))})" if _moved(first) else "")])
    out += md_table(["Symbol", "Change", "What changed", "Verdict", "Uses", "Where"], rows)
    return out + reach_list("Public Python API that reaches each changed binding (nearest first, through binds, "
                            "calls, launches and uses edges; a removed one in the old release):",
                            [(row.symbol, reach) for row, reach in _bindings(api.changes)])


def release_html(release: ApiRelease, la: str, lb: str) -> str:
    api = release.api
    parts = ["<section id=release-api><h3>API changes</h3>"]
    if not api.total:
        return parts[0] + '<p class=muted>No symbol of the old release changed in a way a caller can notice.</p></section>'
    parts.append(f'<p>{_headline(api, la)}; breaking first, most used first, one line per symbol and rule (rules: '
                 f'{esc(RULES_DOC)}).</p>')
    parts.append(html_table(["Rule", "Changes", "Breaking"], _rule_rows(api, esc), numeric=(1, 2)))
    rows = []
    for group in _grouped(api.changes):
        first = group[0]
        title, changes, why = _group_cells(group)
        rows.append([f'<span class=sym>{esc(first.symbol)}</span>', esc(title),
                     f'<span class=sym>{esc(changes)}</span>', (BREAKING + " " if first.breaking else "") + esc(why),
                     f'{first.uses:,}',
                     html_loc(first) + (f' <span class=muted>was</span> {html_loc(first.old_location)}'
                                        if _moved(first) else "")])
    parts.append(html_table(["Symbol", "Change", "What changed", "Verdict", "Uses", "Where"], rows, numeric=(4,),
                            limit=HTML_ROW_LIMIT))
    bindings = _bindings(api.changes)
    if bindings:
        parts.append('<h4 id=release-bindings>Changed bindings reached from Python</h4>')
        parts.append(html_table(["Binding", "Public Python API that reaches it", "Where"],
                                [[f'<span class=sym>{esc(row.symbol)}</span>', reach_html(reach), html_loc(row)]
                                 for row, reach in bindings], limit=HTML_ROW_LIMIT))
    return "".join(parts) + "</section>"


def _bindings(rows: Sequence[ApiChange]) -> list[tuple[ApiChange, ApiReach]]:
    """The first row of each changed binding that names what reaches it, in the rows' order."""
    seen: set[str] = set()
    out = []
    for row in rows:
        if row.reached_by is not None and row.symbol not in seen:
            seen.add(row.symbol)
            out.append((row, row.reached_by))
    return out


def _summary_rows(section: Sides[ApiSummary], text: Callable[[str], str]) -> list[list[str]]:
    a, b = section
    rows = [["symbols", f"{a.symbols:,}", f"{b.symbols:,}"],
            ["with an api reason", f"{a.with_reason:,}", f"{b.with_reason:,}"],
            ["public", f"{a.public:,}", f"{b.public:,}"]]
    # keyed by the languages, kinds and reasons each side has: one a side lacks counts 0 there
    for lang in sorted(set(a.public_by_language) | set(b.public_by_language)):
        ka, kb = a.public_by_language.get(lang, {}), b.public_by_language.get(lang, {})
        for kind in sorted(set(ka) | set(kb)):
            rows.append([text(f"public {lang} {kind}"), f"{ka.get(kind, 0):,}", f"{kb.get(kind, 0):,}"])
    for reason in sorted(set(a.reasons) | set(b.reasons)):
        rows.append([text(reason), f"{a.reasons.get(reason, 0):,}", f"{b.reasons.get(reason, 0):,}"])
    return rows


def markdown(section: Sides[ApiSummary], la: str, lb: str) -> list[str]:
    out = ["## Public API", ""]
    for s, label in zip(section, (la, lb)):
        if s.empty_reason:
            out += [f"{label}: none found ({cell(s.empty_reason)}).", ""]
    return out + md_table(["", la, lb], _summary_rows(section, cell), limit=200)


def html(section: Sides[ApiSummary], la: str, lb: str) -> str:
    # labels arrive escaped: only the reason is escaped here
    empty = "".join(f'<p class="muted">{label}: none found: {esc(s.empty_reason)}.</p>'
                    for s, label in zip(section, (la, lb)) if s.empty_reason)
    return (f'<section id=api><h2>Public API</h2>{empty}'
            f'{html_table(["", la, lb], _summary_rows(section, esc), numeric=(1, 2))}</section>')
