"""Text (pahole-like) and byte-map renderings of struct layouts. Formatting only."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from extractor.structs.records import CACHELINE, MemberKind, Method, StructLayout


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Segment:
    """One drawn run of bytes in a byte map: a member, a hole or tail padding."""

    offset: int
    size: int
    label: str
    kind: str  # "member" | "base" | "hole" | "padding"


def byte_map(layout: StructLayout) -> tuple[Segment, ...]:
    """Members, holes and padding as contiguous segments, to be drawn to scale.

    Bit-fields that share a storage unit are drawn as one segment labelled with all their names;
    union members all start at 0 and are drawn as one segment per member, overlapping.
    """
    if layout.method is Method.UNRESOLVED:
        return ()
    segments: list[Segment] = []
    if layout.kind == "union":
        for m in layout.members:
            segments.append(Segment(0, m.size, m.name or m.type, "member"))
        if layout.members:
            widest = max(m.size for m in layout.members)
            if layout.size > widest:
                segments.append(Segment(widest, layout.size - widest, "padding", "padding"))
        return tuple(segments)
    for m in layout.members:
        if m.kind is MemberKind.VIRTUAL_BASE:
            continue
        kind = "base" if m.kind is MemberKind.BASE else "member"
        label = m.name or m.type
        if m.bit_size:
            label = f"{label}:{m.bit_size}"
        last = segments[-1] if segments else None
        if last is not None and m.offset < last.offset + last.size:
            # sharing storage with the previous member (bit-fields, overlapping empty bases)
            if m.offset + m.size > last.offset + last.size:
                segments[-1] = Segment(last.offset, m.offset + m.size - last.offset,
                                       f"{last.label}, {label}", last.kind)
            else:
                segments[-1] = Segment(last.offset, last.size, f"{last.label}, {label}", last.kind)
            continue
        segments.append(Segment(m.offset, m.size, label, kind))
    filled: list[Segment] = []
    cursor = 0
    for seg in segments:
        if seg.offset > cursor:
            filled.append(Segment(cursor, seg.offset - cursor, "hole", "hole"))
        filled.append(seg)
        cursor = max(cursor, seg.offset + seg.size)
    if layout.size > cursor:
        filled.append(Segment(cursor, layout.size - cursor, "padding", "padding"))
    return tuple(filled)


def render_text(layouts: Iterable[StructLayout]) -> str:
    return "".join(_render_one(layout) for layout in layouts)


def _render_one(layout: StructLayout) -> str:
    head = f"{layout.kind} {layout.qualname} {{"
    where = f"/* {layout.path}:{layout.line} [{layout.method.value}]"
    if layout.tags:
        where += f" tags: {', '.join(layout.tags)}"
    lines = [where + " */", head]
    if layout.method is Method.UNRESOLVED:
        lines.append(f"\t/* unresolved: {layout.error} */")
        lines.append("};")
        return "\n".join(lines) + "\n"
    holes_before: dict[int, list] = {}
    for h in layout.holes:
        holes_before.setdefault(h.before, []).append(h)
    line_seen = 0
    for index, m in enumerate(layout.members):
        holes = holes_before.pop(index, ())
        if holes:  # one block per gap, bit hole first, as pahole prints them
            lines.append("")
            for h in holes:
                unit = "bits" if h.bits else "bytes"
                if h.size == 1:
                    unit = unit[:-1]
                lines.append(f"\t/* XXX {h.size} {unit} hole, try to pack */")
            lines.append("")
        if layout.kind != "union" and m.offset // CACHELINE > line_seen:
            line_seen = m.offset // CACHELINE
            boundary = line_seen * CACHELINE
            ago = m.offset - boundary
            note = f" was {ago} bytes ago" if ago else ""
            lines.append(f"\t/* --- cacheline {line_seen} boundary ({boundary} bytes){note} --- */")
        decl = _declaration(m)
        if m.kind is MemberKind.VIRTUAL_BASE:
            lines.append(f"\t{decl}")
            continue
        if m.bit_size:
            where = f"/* {m.offset:5d}:{m.bit_offset:2d} {m.size:3d} */"
        else:
            where = f"/* {m.offset:5d} {m.size:5d} */"
        lines.append(f"\t{decl:<48} {where}")
    lines.append("")
    lines.append(f"\t/* size: {layout.size}, cachelines: {layout.cachelines}, "
                 f"members: {len(layout.members)} */")
    byte_holes = [h for h in layout.holes if not h.bits]
    if byte_holes:
        lines.append(f"\t/* sum members: {layout.sum_members}, holes: {len(byte_holes)}, "
                     f"sum holes: {layout.sum_holes} */")
    if layout.bit_padding:
        lines.append(f"\t/* bit_padding: {layout.bit_padding} bits */")
    if layout.padding:
        lines.append(f"\t/* padding: {layout.padding} */")
    last = layout.size % CACHELINE
    if last:
        lines.append(f"\t/* last cacheline: {last} bytes */")
    tail = "}"
    if layout.packed:
        tail += " __attribute__((__packed__))"
    elif layout.align > 8:
        tail += f" __attribute__((__aligned__({layout.align})))"
    lines.append(tail + ";")
    return "\n".join(lines) + "\n"


def _declaration(m) -> str:
    if m.kind is MemberKind.BASE:
        return f"{m.type} <ancestor>;"
    if m.kind is MemberKind.VIRTUAL_BASE:
        return f"virtual {m.type} <ancestor>; /* placed at run time, through the vtable */"
    type_name, name = m.type, m.name
    suffix = f":{m.bit_size}" if m.bit_size else ""
    declarator = re.search(r"\((\*+|&+)\)", type_name)
    if declarator:  # function pointer: the name goes inside the declarator
        return f"{type_name[:declarator.end() - 1]}{name}{type_name[declarator.end() - 1:]};"
    if "[" in type_name:
        base, _, dims = type_name.partition("[")
        return f"{base:<26} {name}[{dims}{suffix};"
    return f"{type_name:<26} {name}{suffix};"
