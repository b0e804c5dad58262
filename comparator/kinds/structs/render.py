"""Struct layouts in the report: family tables and byte maps drawn to scale. Formatting only."""

from __future__ import annotations

from collections.abc import Sequence

from comparator.kinds.structs.records import Segment, StructRow, StructsRelease, StructsSection
from comparator.markup import at, cell, esc, html_loc, html_table, md_table, none_found, reach_html, reach_list
from comparator.records import ApiReach

MIN_BAR = 30.0  # per cent of the family's widest struct


def markdown(structs: StructsSection, la: str, lb: str) -> list[str]:
    out = ["## Struct layouts", ""]
    for t, label in zip(structs.totals, (la, lb)):
        if t.empty_reason:
            out.append(f"- {label}: none found ({cell(t.empty_reason)}).")
        else:
            out.append(f"- {label}: {t.count:,} structs ({t.resolved:,} with a layout, {t.unresolved:,} "
                       f"unresolved), {t.total_bytes:,} bytes, {t.hole_bytes:,} bytes in holes.")
    out.append("")
    out += md_table(["Family", la, lb], [[cell(f.tag), f"{f.a.count:,} structs, {f.a.total_bytes:,} B",
                                          f"{f.b.count:,} structs, {f.b.total_bytes:,} B"]
                                         for f in structs.families])
    for family in structs.families:
        if family.tag == "untagged":
            continue
        rows = [[label, cell(s.qualname), f"{s.size:,}", f"{s.hole_bytes:,}", cell(s.method), at(s)]
                for side, label in ((family.a, la), (family.b, lb)) for s in side.structs]
        out += [f"### Family {cell(family.tag)}", ""]
        out += md_table(["System", "Struct", "Size (B)", "Holes (B)", "Method", "Where"], rows)
    return out


def release_markdown(release: StructsRelease, la: str, lb: str) -> list[str]:
    st = release.structs
    out = ["### Struct layouts", ""]
    if st.changed or st.removed or st.added:
        rows = [[cell(x.qualname), "changed", cell("; ".join(x.changes)), "yes" if x.breaking else "", at(x)]
                for x in st.changed]
        rows += [[cell(x.qualname), "removed", f"{x.size:,} B", "yes", at(x)] for x in st.removed]
        rows += [[cell(x.qualname), "added", f"{x.size:,} B", "", at(x)] for x in st.added]
        out += md_table(["Struct", "Change", "Detail", "ABI-breaking", "Where"], rows)
        out += reach_list("Public Python API that reaches each changed or removed struct (nearest first, through "
                          "binds, calls, launches and uses edges; a removed one in the old release):",
                          [(x.qualname, x.reached_by) for x in st.changed if x.reached_by is not None]
                          + [(x.qualname, x.reached_by) for x in st.removed if x.reached_by is not None])
    else:
        out += ["No struct layout changed between the releases (among the structs both bundles resolve).", ""]
    return out


def _reached(reach: ApiReach | None) -> str:
    return f'<div class=reached-by>reached from Python by: {reach_html(reach)}</div>' if reach is not None else ""


def _bytemap(size: int, segments: Sequence[Segment], scale_bytes: int, error: str = "") -> str:
    size = max(1, size)
    if not segments:
        return f'<div class=muted>{esc(error or "no layout (unresolved)")}</div>'
    # To scale within the family, except that a bar under MIN_BAR of the widest is enlarged (and
    # says so): a 64-byte struct beside a 2,560-byte one would otherwise be a sliver.
    natural = 100.0 * size / max(1, scale_bytes)
    width = max(natural, MIN_BAR)
    zoom = f'<div class=muted style="font-size:11px">bar enlarged ×{width / natural:.0f} to be readable</div>' \
        if width > natural * 1.5 else ""
    segs = []
    for k, s in enumerate(segments):
        left = 100.0 * s.offset / size
        w = 100.0 * s.size / size
        cls = s.kind + (" alt" if s.kind == "member" and k % 2 else "")
        tip = f'{s.label} {s.type} @{s.offset} +{s.size} B'.replace("  ", " ")
        segs.append(f'<div class="seg {esc(cls)}" style="left:{left:.3f}%;width:{w:.3f}%" title="{esc(tip)}">'
                    f'{esc(s.label)}</div>')
    return f'<div class=bytemap style="width:{width:.2f}%">{"".join(segs)}</div>{zoom}'


def _struct_block(s: StructRow, scale: int) -> str:
    holes = f', <span style="color:var(--hole)">{s.hole_bytes} B in holes</span>' if s.hole_bytes else ""
    return (f'<div class=bytemap-row><div class=title><span class=sym>{esc(s.qualname)}</span> '
            f'{s.size:,} B, align {s.align}{holes} · {esc(s.method)} · {html_loc(s)}</div>'
            f'{_bytemap(s.size, s.segments, scale, s.error or _no_segments(s))}</div>')


def _no_segments(s: StructRow) -> str:
    if s.method == "unresolved":
        return "no layout (unresolved)"
    return "no members: an empty struct (its byte is neither a member nor padding)" if not s.members else ""


LEGEND = ('<div class=legend><span><i style="background:#3b82f6"></i>member</span><span><i style="background:#7c3aed">'
          '</i>base</span><span><i style="background:var(--hole)"></i>hole</span><span><i style="background:var(--pad)">'
          '</i>tail padding</span><span class=muted>bars drawn to scale within a family (very small ones enlarged, '
          'as marked); hover a segment for its type, offset and size</span></div>')


def html(structs: StructsSection, la: str, lb: str) -> str:
    intro = []
    for t, label in zip(structs.totals, (la, lb)):
        if t.empty_reason:
            intro.append(none_found(f"{label}: {t.empty_reason}"))
        else:
            intro.append(f'<p>{label}: {t.count:,} structs ({t.resolved:,} with a layout, '
                         f'{t.unresolved:,} unresolved), {t.total_bytes:,} bytes, '
                         f'{t.hole_bytes:,} bytes in holes.</p>')
    summary = html_table(["Family", f"{la}: structs", f"{la}: bytes", f"{lb}: structs", f"{lb}: bytes"],
                         [[f'<a href="#structs-{esc(f.tag)}">{esc(f.tag)}</a>', f'{f.a.count:,}',
                           f'{f.a.total_bytes:,}', f'{f.b.count:,}', f'{f.b.total_bytes:,}']
                          for f in structs.families], numeric=(1, 2, 3, 4))
    blocks = []
    for family in structs.families:
        scale = max([s.size for fam in (family.a, family.b) for s in fam.structs] + [1])
        cols = []
        for (side, fam), label in zip((("a", family.a), ("b", family.b)), (la, lb)):
            body = "".join(_struct_block(s, scale) for s in fam.structs) or '<p class=muted>none in this family</p>'
            more = f'<p class=muted>{fam.more:,} more in the JSON report.</p>' if fam.more else ""
            cols.append(f'<div><h4 class=sys-{side}>{label}: {fam.count:,} structs, {fam.total_bytes:,} bytes'
                        f'</h4>{body}{more}</div>')
        inner = f'<div class=cols>{"".join(cols)}</div>'
        if family.tag == "untagged":
            inner = (f"<details><summary>show {family.a.count + family.b.count:,} untagged structs"
                     f"</summary>{inner}</details>")
        blocks.append(f'<section id="structs-{esc(family.tag)}"><h3>Family {esc(family.tag)}</h3>{inner}</section>')
    return f'<section id=structs><h2>Struct layouts</h2>{"".join(intro)}{summary}{LEGEND}{"".join(blocks)}</section>'


def release_html(release: StructsRelease, la: str, lb: str) -> str:
    st = release.structs
    parts = ["<section id=release-structs><h3>Struct layout changes</h3>"]
    if st.changed or st.removed or st.added:
        for x in st.changed:
            scale = max(x.old.size, x.new.size, 1)
            bad = '<span class="pill bad">ABI-breaking</span>' if x.breaking else ""
            parts.append(f'<div class=bytemap-row><div class=title><span class=sym>{esc(x.qualname)}</span> {bad} '
                         f'{html_loc(x)}: {esc("; ".join(x.changes))}</div>'
                         f'<div class=muted>before ({x.old.size:,} B)</div>'
                         f'{_bytemap(x.old.size, x.segments_old, scale)}'
                         f'<div class=muted>after ({x.new.size:,} B)</div>'
                         f'{_bytemap(x.new.size, x.segments_new, scale)}'
                         f'{_reached(x.reached_by)}</div>')
        parts.append(html_table(["Struct", "Change", "Size", "Where", "Reached from Python by"],
                                [[f'<span class=sym>{esc(x.qualname)}</span>', "removed", f'{x.size:,}',
                                  html_loc(x), reach_html(x.reached_by) if x.reached_by is not None else ""]
                                 for x in st.removed]
                                + [[f'<span class=sym>{esc(x.qualname)}</span>', "added", f'{x.size:,}',
                                    html_loc(x), ""] for x in st.added]))
    else:
        parts.append('<p class=muted>No struct layout changed among the structs both releases resolve.</p>')
    return "".join(parts) + "</section>"
