"""Graph statistics in the report: counts by kind, central symbols, the layer matrix and its
cycles. Formatting only."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from comparator.kinds.graph.records import GraphStats
from comparator.markup import at, cell, esc, html_loc, html_table, md_table, none_found
from comparator.records import Sides


def _count_rows(ga: GraphStats, gb: GraphStats, text: Callable[[str], str]) -> list[list[str]]:
    """The two systems' counts side by side; ``text`` makes a kind's name safe for the format."""
    rows = [["symbols", f"{ga.nodes:,}", f"{gb.nodes:,}"], ["edges", f"{ga.edges:,}", f"{gb.edges:,}"],
            ["density", f"{ga.density:.2e}", f"{gb.density:.2e}"],
            ["cross-language binds", f"{ga.binds:,}", f"{gb.binds:,}"]]
    for prefix, ca, cb in (("symbols: ", ga.nodes_by_kind, gb.nodes_by_kind),
                           ("language: ", ga.nodes_by_language, gb.nodes_by_language),
                           ("edges: ", ga.edges_by_kind, gb.edges_by_kind)):
        # keyed by what each graph holds: a kind or language one side lacks is 0 there
        for k in sorted(set(ca) | set(cb)):
            rows.append([text(prefix + k), f"{ca.get(k, 0):,}", f"{cb.get(k, 0):,}"])
    return rows


def markdown(graph: Sides[GraphStats], la: str, lb: str) -> list[str]:
    out = ["## Symbol graph", ""]
    out += md_table(["", la, lb], _count_rows(graph.a, graph.b, cell), limit=200)
    for g, label in zip(graph, (la, lb)):
        out += [f"### Most depended-upon symbols in {label}", ""]
        if g.central:
            out += md_table(["Symbol", "Kind", "Dependents", "Where"],
                            [[cell(c.id), cell(c.kind), c.dependents, at(c)] for c in g.central])
        else:
            out += [f"none found ({cell(g.empty_reason or 'no calls, imports or inherits edges')}).", ""]
        if g.layer_cycles:
            for cycle in g.layer_cycles:
                both = "; ".join(f"{cell(m.a)} ⇄ {cell(m.b)} ({m.a_to_b:,}/{m.b_to_a:,})" for m in cycle.mutual[:8])
                out.append(f"- Cycle between layers: {cell(', '.join(cycle.layers))} "
                           f"({len(cycle.edges):,} layer-to-layer links)" + (f"; both ways: {both}" if both else ""))
            out.append("")
    return out


def _matrix(matrix: Mapping[str, Mapping[str, int]]) -> str:
    roles = sorted(set(matrix) | {r for row in matrix.values() for r in row})
    if not roles:
        return '<p class=muted>None found: no dependency edges between modules that have layers.</p>'
    peak = max([v for row in matrix.values() for v in row.values()] + [1])
    head = "".join(f'<th title="{esc(r)}">{esc(r[:10])}</th>' for r in roles)
    body = []
    for ra in roles:
        cells = []
        row = matrix.get(ra, {})  # keyed by the roles the system has: only the pairs that depend on each other
        for rb in roles:
            v = row.get(rb, 0)
            alpha = 0.08 + 0.8 * (v / peak) ** 0.5 if v else 0
            style = f' style="background:rgba(37,99,235,{alpha:.2f})"' if v else ""
            cells.append(f'<td{style} title="{esc(ra)} → {esc(rb)}: {v}">{v or ""}</td>')
        body.append(f'<tr><th>{esc(ra)}</th>{"".join(cells)}</tr>')
    return (f'<div style="overflow:auto"><table class=matrix><thead><tr><th>from \\ to</th>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def html(graph: Sides[GraphStats], la: str, lb: str) -> str:
    rows = _count_rows(graph.a, graph.b, esc)
    cols = []
    for (side, g), label in zip(graph.items(), (la, lb)):
        central = html_table(["Symbol", "Kind", "Dependents", "Defined at"], [
            [f'<span class=sym>{esc(c.id)}</span>', esc(c.kind), f'{c.dependents:,}', html_loc(c)]
            for c in g.central], numeric=(2,)) if g.central else none_found(g.empty_reason or "no dependency edges")
        cycles = "".join(
            f'<div><b>Cycle</b> between {esc(", ".join(c.layers))}: '
            + "; ".join(f'{esc(e.from_)}→{esc(e.to)} ({e.count:,}, e.g. {html_loc(e.example)})' for e in c.edges[:12])
            + (f' … {len(c.edges) - 12} more links' if len(c.edges) > 12 else "")
            + (('<div class=muted>Both ways: ' + "; ".join(
                f'{esc(m.a)}⇄{esc(m.b)} ({m.a_to_b:,}/{m.b_to_a:,})' for m in c.mutual[:15])
                + "</div>") if c.mutual else "") + "</div>"
            for c in g.layer_cycles) or '<p class=muted>No cycles between layers.</p>'
        cols.append(f'<div id="graph-{side}"><h3 class=sys-{side}>{label}</h3><h4>Most depended-upon symbols</h4>'
                    f'{central}<h4>Layer-to-layer dependencies</h4>{_matrix(g.layer_matrix)}{cycles}</div>')
    return (f'<section id=graph><h2>Graph statistics</h2>{html_table(["", la, lb], rows, numeric=(1, 2))}'
            f'<div class=cols>{"".join(cols)}</div></section>')
