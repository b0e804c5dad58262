"""Bar charts drawn as inline SVG: nothing to fetch or run when the page is opened, readable from
file://, and every label escaped (release names are tags: repository text).

One chart is one ``<svg class=chart>``: a bar group per release along x, stacked series, an
optional second set drawn downwards (what was removed), a ``<title>`` on every bar for the exact
number, and a link on the bars of a release when there is a page that explains them.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Sequence

PALETTE = ("#2563eb", "#d97706", "#059669", "#7c3aed", "#db2777", "#0891b2", "#65a30d", "#dc2626", "#4b5563",
           "#9333ea", "#ca8a04", "#0d9488")
BAD, GOOD, NEUTRAL = "#b91c1c", "#15803d", "#6b7280"

_SLOT = 46  # px per release along x
_HEIGHT = 190  # px of the plot area
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 12, 12, 58


@dataclasses.dataclass(frozen=True, slots=True)
class Series:
    name: str
    values: tuple[float, ...]  # one per release
    color: str
    down: bool = False  # drawn below the axis (removals)


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def bar_chart(chart_id: str, title: str, labels: Sequence[str], series: Sequence[Series],
              links: Sequence[str | None] = (), unit: str = "") -> str:
    """Stacked bars per label; ``links[i]`` (a relative URL or None) wraps release i's bars."""
    n = len(labels)
    up = [sum(s.values[i] for s in series if not s.down) for i in range(n)]
    down = [sum(s.values[i] for s in series if s.down) for i in range(n)]
    top, bottom = max(up, default=0), max(down, default=0)
    span = (top + bottom) or 1
    axis_y = _TOP + _HEIGHT * top / span if bottom else _TOP + _HEIGHT
    scale = _HEIGHT / span
    width = _LEFT + _RIGHT + _SLOT * max(n, 1)
    height = _TOP + _HEIGHT + _BOTTOM
    parts = [f'<svg class=chart id="{esc(chart_id)}" role=img aria-label="{esc(title)}" width={width} '
             f'height={height} viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
             f'<title>{esc(title)}</title>']
    for value, sign in ((top, -1), (bottom, 1)):  # gridlines at whole numbers: every series counts things
        if not value:
            continue
        for tick in sorted({0, int(value // 2), value} - ({0} if sign == 1 else set())):
            y = axis_y + sign * tick * scale
            parts.append(f'<line x1={_LEFT} x2={width - _RIGHT} y1="{y:.1f}" y2="{y:.1f}" class=grid />'
                         f'<text x={_LEFT - 6} y="{y + 4:.1f}" class=tick text-anchor=end>{_number(tick)}</text>')
    for i, label in enumerate(labels):
        x = _LEFT + _SLOT * i + 8
        bars = []
        y_up, y_down = axis_y, axis_y
        for s in series:
            value = s.values[i]
            if not value:
                continue
            h = max(value * scale, 1.0)
            if s.down:
                y, y_down = y_down, y_down + h
            else:
                y_up -= h
                y = y_up
            bars.append(f'<rect x={x} y="{y:.1f}" width={_SLOT - 16} height="{h:.1f}" fill="{esc(s.color)}">'
                        f'<title>{esc(label)}: {esc(s.name)} {_number(value)}{esc(unit)}</title></rect>')
        group = "".join(bars)
        link = links[i] if i < len(links) else None
        if link and group:
            group = f'<a href="{esc(link)}" class=bar-link>{group}</a>'
        parts.append(group)
        name = label if len(label) <= 12 else label[:11] + "…"
        parts.append(f'<text x={x + (_SLOT - 16) / 2:.1f} y={_TOP + _HEIGHT + 14} class=xlabel '
                     f'transform="rotate(35 {x + (_SLOT - 16) / 2:.1f} {_TOP + _HEIGHT + 14})">{esc(name)}</text>')
    parts.append(f'<line x1={_LEFT} x2={width - _RIGHT} y1="{axis_y:.1f}" y2="{axis_y:.1f}" class=axis />')
    parts.append("</svg>")
    legend = "".join(f'<span><i style="background:{esc(s.color)}"></i>{esc(s.name)}</span>' for s in series)
    return f'<figure class=chart-box><figcaption>{esc(title)}</figcaption><div class=scroll>{"".join(parts)}</div>' \
           f'<div class=legend>{legend}</div></figure>'


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 or value == int(value) else f"{value:,.1f}"
