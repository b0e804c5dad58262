"""Text (pahole-like), JSON and byte-map renderings of struct layouts. Formatting only."""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import re
from collections.abc import Iterable, Mapping

from extractor.structs.records import CACHELINE, MemberKind, Method, StructLayout, bit_end, bit_start


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Segment:
    """One drawn run of a byte map: a member (or a run of adjacent bit-fields), a hole or padding.

    Offsets and sizes are in bytes; around bit-fields they are exact fractions of a byte (eighths),
    so that a 59-bit hole is drawn as 59 bits."""

    offset: int | float
    size: int | float
    label: str
    kind: str  # "member" | "base" | "hole" | "padding"
    type: str = ""


def _bytes(bits: int) -> int | float:
    return bits // 8 if bits % 8 == 0 else bits / 8


def byte_map(layout: StructLayout) -> tuple[Segment, ...]:
    """Members, holes and padding as segments to be drawn to scale, in address order.

    The holes and the padding are the layout's own (``holes``, ``padding``, ``bit_padding``):
    the map draws exactly those. Members are drawn bit by bit: adjacent bit-fields as one segment
    labelled with all their names. Union members all start at 0 and are drawn as one segment per
    member, overlapping.
    """
    if layout.method is Method.UNRESOLVED or layout.size <= 0:
        return ()
    if layout.kind == "union":
        segments = [Segment(0, m.size, m.name or m.type, "member", m.type) for m in layout.members]
        widest = max((m.size for m in layout.members), default=0)
        if layout.size > widest:
            segments.append(Segment(widest, layout.size - widest, "padding", "padding"))
        return tuple(segments)
    runs: list[list] = []  # [first bit, end bit, label, kind, type, bit-field run]
    for m in layout.members:
        if m.kind is MemberKind.VIRTUAL_BASE:
            continue
        start, end = bit_start(m), bit_end(m)
        label = f"{m.name or m.type}:{m.bit_size}" if m.bit_size else (m.name or m.type)
        last = runs[-1] if runs else None
        if last is not None and (start < last[1] or (m.bit_size and last[5] and start == last[1])):
            # sharing bits with the previous member (an empty base), or the next bit-field of a run
            last[1] = max(last[1], end)
            last[2] = f"{last[2]}, {label}"
            continue
        runs.append([start, end, label, "base" if m.kind is MemberKind.BASE else "member", m.type, bool(m.bit_size)])
    drawn = [(start, end - start, label, kind, type_) for start, end, label, kind, type_, _bits in runs]
    for h in layout.holes:
        drawn.append((h.offset if h.bits else h.offset * 8, h.size if h.bits else h.size * 8,
                      "bit hole" if h.bits else "hole", "hole", ""))
    tail = (layout.size - layout.padding) * 8
    if layout.bit_padding:
        drawn.append((tail - layout.bit_padding, layout.bit_padding, "bit padding", "padding", ""))
    if layout.padding:
        drawn.append((tail, layout.padding * 8, "padding", "padding", ""))
    drawn.sort(key=lambda d: (d[0], d[3] in ("hole", "padding")))
    return tuple(Segment(_bytes(start), _bytes(bits), label, kind, type_) for start, bits, label, kind, type_ in drawn)


def render_json(layouts: Iterable[StructLayout]) -> str:
    """``{"structs": [...]}``: each layout as ``extractor.model.to_jsonable`` gives it, with its
    ``byte_map``, in the bytes of ``json.dumps(..., indent=1, sort_keys=True)``.

    Written straight from the records: building the dicts and then running the standard library's
    pure-Python indenting encoder over them (it has no C path when indenting) took longer than
    reading libpython's DWARF. Equality with that path is a test (tests/test_structs_cli.py).
    """
    items = [_json(layout, 2, {"byte_map": byte_map(layout)}) for layout in layouts]
    if not items:
        return '{\n "structs": []\n}'
    return '{\n "structs": [\n  ' + ",\n  ".join(items) + "\n ]\n}"


_STRING = json.encoder.encode_basestring_ascii  # json.dumps' own escaping (ensure_ascii)
_INFINITY = float("inf")
_NO_EXTRA: Mapping = {}  # a record written with no values besides its fields


@functools.cache
def _json_fields(cls: type, extra: tuple[str, ...]) -> tuple[tuple[str, str, bool], ...]:
    """A record class's fields and the ``extra`` keys in JSON key order, as to_jsonable names
    them: ('"key": ', attribute or extra key, is an attribute)."""
    keys = [(f.name.removesuffix("_"), f.name, True) for f in dataclasses.fields(cls)]
    keys += [(key, key, False) for key in extra]
    return tuple((_STRING(key) + ": ", name, field) for key, name, field in sorted(keys, key=lambda k: k[0]))


def _json(value, level: int, extra: Mapping = _NO_EXTRA) -> str:
    """``value`` as json.dumps(to_jsonable(value), indent=1, sort_keys=True) writes it at ``level``."""
    cls = value.__class__
    if cls is str:
        return _STRING(value)
    if cls is bool:
        return "true" if value else "false"
    if cls is int:
        return int.__repr__(value)
    if isinstance(value, enum.Enum):
        return _json(value.value, level)
    if cls is float:
        return json.dumps(value)  # NaN and the infinities as json spells them
    if value is None:
        return "null"
    inner = "\n" + " " * (level + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = []
        for prefix, name, field in _json_fields(cls, tuple(extra)):
            item = getattr(value, name) if field else extra[name]
            kind = item.__class__
            if kind is str:  # the scalars of a record inline: most values of the output are these
                parts.append(prefix + _STRING(item))
            elif kind is int:
                parts.append(prefix + int.__repr__(item))
            elif kind is bool:
                parts.append(prefix + ("true" if item else "false"))
            elif kind is float and -_INFINITY < item < _INFINITY:
                parts.append(prefix + float.__repr__(item))
            else:
                parts.append(prefix + _json(item, level + 1))
        return "{" + inner + ("," + inner).join(parts) + "\n" + " " * level + "}" if parts else "{}"
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        items = sorted((str(k), v) for k, v in value.items())
        return "{" + inner + ("," + inner).join([f"{_STRING(k)}: {_json(v, level + 1)}" for k, v in items]) + \
            "\n" + " " * level + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        return "[" + inner + ("," + inner).join([_json(v, level + 1) for v in value]) + "\n" + " " * level + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, str):
        return _STRING(value)
    raise TypeError(f"{cls.__name__} is not a JSON value")


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
