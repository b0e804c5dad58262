"""The API diff's rules for Protocol Buffers: what a .proto change does to the wire contract.

A .proto is an interface declaration: every message, field, enum, value, service and rpc is public
(the extractor says so in each node's ``api``). What breaks is decided as protobuf's own guide
decides it: "Updating A Message Type" (https://protobuf.dev/programming-guides/proto3/#updating: its
lists of binary wire-unsafe, wire-safe and wire-compatible changes), "Deleting Fields" and
"Reserved Field Numbers" (the same page, ``#deleting``), and "ProtoJSON Wire Safety"
(https://protobuf.dev/programming-guides/json/#json-wire-safety) for what a name carries.

- A field's number changed: breaking ("Changing field numbers for any existing field is not safe").
- A field's type changed: breaking, unless protobuf lists the pair as wire-compatible: int32, uint32,
  int64, uint64 and bool; sint32 and sint64; string and bytes (valid UTF-8); an embedded message and
  bytes (holding its encoding); fixed32 and sfixed32; fixed64 and sfixed64; an enum and int32,
  uint32, int64, uint64. Those are listed as changed, not breaking, with protobuf's condition (it
  calls them "conditionally safe": a value out of the reader's range is truncated). Types compare as
  the extractor resolved them (its ``uses`` edges), so ``Tensor`` respelled ``.pkg.Tensor`` is no
  change and the same text now naming another message is one; two different messages or enums are
  breaking even when their fields agree. A ``map<K, V>`` against a ``repeated`` field is breaking:
  protobuf allows the repeated *entry* message, whose shape archdiff does not check (conservative).
- Singular against ``repeated``: not breaking for string, bytes and message fields (protobuf: a
  singular reader keeps the last value, or merges the messages), breaking for the others (numbers,
  bools and enums are packed by default: a singular reader misparses them). ``required`` added or
  removed: breaking (readers of one side reject messages that lack it). Implicit against
  ``optional``: the same encoding, not breaking (only presence tracking changes).
- A field moved into a oneof that already existed, or out of a oneof with other members: breaking
  ("Moving fields into an existing oneof is not safe"; out of one: conservative). Into a new oneof,
  or out of a oneof it was alone in: not breaking (protobuf lists both as safe).
- A field removed: breaking unless the new message reserves its number ("you **must** reserve the
  deleted field number"; with it reserved the deletion is wire-safe). A field of the same number
  under another name is the field renamed: not breaking on the binary wire, a break for ProtoJSON
  and text format (they carry the name), listed as changed.
- An enum value renumbered or removed: breaking; added: no row (nothing existing changed); renamed
  with the same number: not breaking on the binary wire (ProtoJSON writes the name), listed.
- An rpc's request or response type changed, or its client or server streaming: breaking. A service,
  rpc, message or enum removed (renamed is removed under the old name) is the diff's ``object-removed``
  (an rpc's clients get UNIMPLEMENTED; a service's rpcs are its one row).
"""

from __future__ import annotations

from comparator.apidiff.rules import RULES
from comparator.apidiff.rules import BreakageKind as K
from comparator.apidiff.surface import Surface
from extractor.model import Node, NodeKind
from extractor.proto.graph import PREFIX, SCALARS

LANGUAGE = "proto"
MAX_NUMBER = 536_870_911  # `reserved 40 to max`
# (kind, subject, old, new, breaking, why): ``why`` says which case of the rule applies
ProtoChange = tuple[K, str, str, str, bool, str]
# A resolved type: (category, name); the category is the scalar itself, "message", "enum", "group"
# or "unresolved" (the text as written); a map is ("map", key, value category, value name).
TypeRef = tuple[str, ...]

# protobuf's binary wire-compatible pairs ("Binary Wire-compatible Changes (Conditionally Safe)")
_COMPATIBLE = (
    (frozenset({"int32", "uint32", "int64", "uint64", "bool"}),
     "int32, uint32, int64, uint64 and bool are wire-compatible (protobuf): a value out of the reader's "
     "range is truncated as a C++ cast truncates it"),
    (frozenset({"sint32", "sint64"}),
     "sint32 and sint64 are wire-compatible (protobuf): a value beyond 32 bits reads as another number"),
    (frozenset({"string", "bytes"}), "string and bytes are wire-compatible as long as the bytes are valid UTF-8 "
                                     "(protobuf)"),
    (frozenset({"message", "bytes"}), "an embedded message is wire-compatible with bytes holding its encoding "
                                      "(protobuf)"),
    (frozenset({"fixed32", "sfixed32"}), "fixed32 and sfixed32 are wire-compatible (protobuf): the same four "
                                         "bytes, read with or without a sign"),
    (frozenset({"fixed64", "sfixed64"}), "fixed64 and sfixed64 are wire-compatible (protobuf): the same eight "
                                         "bytes, read with or without a sign"),
    (frozenset({"enum", "int32", "uint32", "int64", "uint64"}),
     "an enum is wire-compatible with int32, uint32, int64 and uint64 (protobuf); how a reader shows a "
     "number its enum lacks depends on its language"),
)
_LENGTH_DELIMITED = frozenset({"string", "bytes", "message"})  # singular and repeated compatible


def is_proto(node: Node) -> bool:
    return node.language == LANGUAGE


def is_field(node: Node) -> bool:
    return "field" in node.tags


def is_enum_value(node: Node) -> bool:
    return node.value_kind == "enum-member"


def number(node: Node) -> int | None:
    for tag in node.tags:
        if tag.startswith("number:"):
            return int(tag[7:])
    return None


def proto_changes(before: Node, after: Node, old: Surface, new: Surface) -> list[ProtoChange]:
    """The changes from ``before`` to ``after`` (one symbol of two releases, or a field or value
    renamed with its number kept), each breaking or not with why."""
    if before.kind is not after.kind:
        return [(K.OBJECT_KIND_CHANGED, "", before.kind.value, after.kind.value, True, "")]
    if is_field(before) and is_field(after):
        return _field_changes(before, after, old, new)
    if is_enum_value(before) and is_enum_value(after):
        return _numbered(before, after, K.ENUM_VALUE_RENAMED, K.ENUM_VALUE_RENUMBERED)
    if before.kind is NodeKind.METHOD:
        return _rpc_changes(before, after, old, new)
    return []  # a message, enum or service: its members are compared under their own ids


def renamed(before: Node, old: Surface, new: Surface, container: str) -> str | None:
    """The field or enum value of ``container`` (the new release's message or enum) that has
    ``before``'s number under a name the old release did not have: ``before`` renamed."""
    if not (is_field(before) or is_enum_value(before)):
        return None
    wanted = number(before)
    found = sorted(nid for nid in new.children.get(container, {}).values()
                   if nid not in old.nodes and number(node := new.nodes[nid]) == wanted
                   and is_field(node) == is_field(before) and is_enum_value(node) == is_enum_value(before))
    return found[0] if found else None


def removed(before: Node, new: Surface, container: str | None) -> tuple[ProtoChange, Node | None] | None:
    """The row of a field or enum value gone from its message or enum, with the new release's
    message or enum (where to reserve it); of an rpc or a service gone, with None; None for a message
    or an enum gone (the diff's own ``object-removed``: code using it fails)."""
    holder = new.nodes.get(container) if container is not None else None
    if before.kind in (NodeKind.METHOD, NodeKind.INTERFACE):
        why = "clients of the old .proto still call it: the server answers UNIMPLEMENTED"
        return (K.OBJECT_REMOVED, "", before.kind.value, "", True, why), None
    if not (is_field(before) or is_enum_value(before)):
        return None
    wanted = number(before)
    numbers, names = _reserved(holder)
    kept = wanted is not None and any(lo <= wanted <= hi for lo, hi in numbers)
    taken = sorted(new.nodes[nid].name for nid in (new.children.get(container, {}).values() if container else ())
                   if number(new.nodes[nid]) == wanted and is_field(new.nodes[nid]) == is_field(before))
    now = f"number {wanted} " + (f"now {taken[0]}'s" if taken else "reserved" if kept else "not reserved")
    if is_enum_value(before):
        return (K.ENUM_VALUE_REMOVED, "", before.signature, now, True, ""), holder
    if taken:
        why = f"its number is now field {taken[0]}'s: old readers parse that field as this one"
        return (K.FIELD_REMOVED, "", before.signature, now, True, why), holder
    if not kept:
        return (K.FIELD_REMOVED, "", before.signature, now, True, ""), holder
    why = "its number is reserved in the new release: protobuf's wire-safe deletion"
    if before.name not in names:
        why += " (its name is not reserved: JSON and text format readers may meet it reused)"
    return (K.FIELD_REMOVED, "", before.signature, now, False, why), holder


def _numbered(before: Node, after: Node, renamed_kind: K, renumbered_kind: K) -> list[ProtoChange]:
    found: list[ProtoChange] = []
    if before.name != after.name:
        found.append((renamed_kind, "", before.name, after.name, False, RULES[renamed_kind]))
    a, b = number(before), number(after)
    if a != b:
        found.append((renumbered_kind, "", f"number {a}", f"number {b}", True, ""))
    return found


def _field_changes(before: Node, after: Node, old: Surface, new: Surface) -> list[ProtoChange]:
    found = _numbered(before, after, K.FIELD_RENAMED, K.FIELD_RENUMBERED)
    was, now = _field_type(before, old), _field_type(after, new)
    if was != now:
        why = _compatible_types(was, now)
        shown = (before.annotation, after.annotation) if before.annotation != after.annotation else \
            (_shown(was), _shown(now))
        found.append((K.FIELD_RETYPED, "", *shown, why is None, why or ""))
    la, lb = _label(before), _label(after)
    oa, ob = _oneof(before), _oneof(after)
    # a map's label change is its type's; presence gained or lost with a oneof is the oneof's row
    if la != lb and "map" not in (la, lb) and not (oa != ob and {la, lb} <= {"", "optional"}):
        found.append(_label_change(la, lb, was, now))
    if oa != ob:
        found.append(_oneof_change(oa, ob, _oneofs(old, old.parent.get(before.id)),
                                   _oneofs(new, new.parent.get(after.id))))
    return found


def _label_change(la: str, lb: str, was: TypeRef, now: TypeRef) -> ProtoChange:
    shown = (la or "singular", lb or "singular")
    if "required" in (la, lb):
        why = "required added or removed: readers of one side reject messages that lack the field"
        return (K.FIELD_LABEL_CHANGED, "", *shown, True, why)
    if "repeated" not in (la, lb):
        return (K.FIELD_LABEL_CHANGED, "", *shown, False,
                "implicit and optional presence encode the same: only presence tracking (has_…) changes")
    if {was[0], now[0]} <= _LENGTH_DELIMITED:
        return (K.FIELD_LABEL_CHANGED, "", *shown, False,
                "singular and repeated are wire-compatible for string, bytes and message fields (protobuf): a "
                "singular reader keeps the last value, or merges the messages")
    return (K.FIELD_LABEL_CHANGED, "", *shown, True,
            "numbers, bools and enums: a repeated one is packed by default, which a singular reader misparses")


def _oneof_change(oa: str, ob: str, before: dict[str, int], after: dict[str, int]) -> ProtoChange:
    """Moved into or out of a oneof; ``before`` and ``after`` count the members of each oneof of
    the message in the two releases."""
    # protobuf: into an existing oneof is unsafe; a single field into a new oneof, or a oneof of one
    # field back to a field, is safe; several fields into a new oneof, or out of a shared one, is not
    # listed: an old writer may set two members that a oneof reader keeps one of (conservative)
    into = bool(ob) and (ob in before or after.get(ob, 0) > 1)
    out_of_shared = bool(oa) and before.get(oa, 0) > 1
    shown = (f"oneof {oa}" if oa else "no oneof", f"oneof {ob}" if ob else "no oneof")
    if into or out_of_shared:
        return (K.FIELD_ONEOF_CHANGED, "", *shown, True, "")
    why = "alone into a new oneof, or out of a oneof it was alone in: protobuf lists both as wire-safe"
    return (K.FIELD_ONEOF_CHANGED, "", *shown, False, why)


def _rpc_changes(before: Node, after: Node, old: Surface, new: Surface) -> list[ProtoChange]:
    found: list[ProtoChange] = []
    sides = ((K.RPC_REQUEST_CHANGED, _request(before), _request(after)),
             (K.RPC_RESPONSE_CHANGED, before.returns, after.returns))
    for kind, wa, wb in sides:
        ra, rb = _named(old, (before.id,), before.line, wa), _named(new, (after.id,), after.line, wb)
        if ra != rb:
            found.append((kind, "", *((wa, wb) if wa != wb else (_shown(ra), _shown(rb))), True, ""))
    for tag, which in (("client-streaming", "request"), ("server-streaming", "response")):
        sa, sb = tag in before.tags, tag in after.tags
        if sa != sb:
            found.append((K.RPC_STREAMING_CHANGED, which, "stream" if sa else "unary", "stream" if sb else "unary",
                          True, ""))
    return found


def _request(rpc: Node) -> str:
    return rpc.params[0].annotation if rpc.params else ""


def _field_type(field: Node, surface: Surface) -> TypeRef:
    holders = (surface.parent.get(field.id, ""), field.id)  # an extension at a file's top names itself
    written = field.annotation
    if written.startswith("map<") and written.endswith(">"):
        key, _, value = written[4:-1].partition(",")
        return ("map", key.strip(), *_named(surface, holders, field.line, value.strip()))
    if written.startswith("group "):
        return ("group", _named(surface, holders, field.line, written[6:])[1])
    return _named(surface, holders, field.line, written)


def _named(surface: Surface, holders: tuple[str, ...], line: int, written: str) -> TypeRef:
    """A type as the extractor resolved it: the ``uses`` edge of the field's (or rpc's) line whose
    target's full name is, or ends with, the name as written."""
    if written in SCALARS:
        return (written, written)
    wanted = written.lstrip(".")
    for holder in holders:
        hits = {t for t in surface.proto_uses.get((holder, line), ())
                if t[len(PREFIX):] == wanted or t.endswith("." + wanted)}
        if len(hits) == 1:
            target = hits.pop()
            node = surface.nodes.get(target)  # None: outside the system (google.protobuf.*), a message
            return ("enum" if node is not None and node.kind is NodeKind.ENUM else "message", target[len(PREFIX):])
    return ("unresolved", wanted)


def _shown(ref: TypeRef) -> str:
    if ref[0] == "map":
        return f"map<{ref[1]}, {ref[3]}>"
    return f"group {ref[1]}" if ref[0] == "group" else ref[1]


def _compatible_types(was: TypeRef, now: TypeRef) -> str | None:
    """Why two field types are wire-compatible (None: they are not, or archdiff cannot tell)."""
    if was[0] == "map" and now[0] == "map":
        reasons = []
        for a, b in (((was[1], was[1]), (now[1], now[1])), (was[2:], now[2:])):
            if a != b:
                reason = _compatible(a, b)
                if reason is None:
                    return None
                reasons.append(reason)
        return "; ".join(reasons)
    if "map" in (was[0], now[0]) or "group" in (was[0], now[0]):
        return None  # the repeated entry message is not checked; a group is its own wire type
    return _compatible(was, now)


def _compatible(was: TypeRef, now: TypeRef) -> str | None:
    pair = {was[0], now[0]}
    if "unresolved" in pair or len(pair) == 1:
        return None  # another message or enum (or a type the extractor did not resolve)
    return next((reason for members, reason in _COMPATIBLE if pair <= members), None)


def _label(field: Node) -> str:
    if "map" in field.tags:
        return "map"
    written = next((t for t in ("repeated", "optional", "required") if t in field.tags), "")
    return written or ("optional" if _oneof(field) else "")  # a oneof's member has explicit presence


def _oneof(field: Node) -> str:
    return next((t[6:] for t in field.tags if t.startswith("oneof:")), "")


def _oneofs(surface: Surface, message: str | None) -> dict[str, int]:
    """A message's oneofs and how many fields each has."""
    counts: dict[str, int] = {}
    for nid in surface.children.get(message or "", {}).values():
        name = _oneof(surface.nodes[nid])
        if name:
            counts[name] = counts.get(name, 0) + 1
    return counts


def _reserved(holder: Node | None) -> tuple[list[tuple[int, int]], set[str]]:
    """What a message or enum reserves (``reserved:8``, ``reserved:10..12``, ``reserved:"old"``)."""
    numbers, names = [], set()
    for tag in holder.tags if holder is not None else ():
        if not tag.startswith("reserved:"):
            continue
        entry = tag[9:]
        if entry.startswith('"'):
            names.add(entry.strip('"'))
            continue
        lo, _, hi = entry.partition("..")
        numbers.append((int(lo), MAX_NUMBER if hi == "max" else int(hi or lo)))
    return numbers, names
