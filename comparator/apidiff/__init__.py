"""The API diff of two releases: every change a caller can notice, and which of them break callers.

Modelled on griffe's ``_internal/diff.py`` (a :class:`BreakageKind` per rule, typed records with
``explain()``, rules over structured parameters, never over signature strings), run over the
graph's ``Node``/``Edge`` records of both releases, so C++ symbols with parameter records are
diffed by the same rules as Python ones. What a caller can reach is what a node's ``api`` says
is public; a change of anything else is listed as changed, not breaking.

The rules (``records.RULES`` says why each breaks; ``signatures`` holds the parameter rules):

- parameter removed, positional parameter moved, parameter kind changed (when old calls no longer
  bind), parameter added as required, parameter now required: griffe's rules;
- default changed: breaking, since every call that omits the argument gets the new value; literals
  compare by value (``1_000`` is ``1000``), other expressions by their text, so only a respelling
  of the same literal is not a change;
- return annotation changed: breaking unless the new type is a narrower union or the old one was
  ``None`` (griffe only flags a removed annotation);
- base class removed: a class no longer has a former ancestor (direct or not) in its MRO;
- object kind changed: module / class / function / attribute, a re-export counted as what it names;
- public object removed, including a removed re-export (``vllm.LLM``) and a member a public class
  inherited; attribute removed; attribute retyped (its annotation changed, respellings aside);
- overload removed: an ``@overload`` variant no new variant matches; breaking when no new variant
  (or the implementation, if none are left) accepts calls shaped like it;
- Protocol Buffers (``proto``, the wire contract as protobuf's "Updating A Message Type" states it,
  https://protobuf.dev/programming-guides/proto3/#updating): field renumbered; field retyped
  (not breaking for the pairs protobuf lists as wire-compatible: int32/uint32/int64/uint64/bool,
  sint32/sint64, string/bytes, message/bytes, fixed32/sfixed32, fixed64/sfixed64, enum/int32-family);
  field label changed (singular/repeated: not breaking for string, bytes and messages; required
  added or removed); field moved into an existing oneof; field removed (not breaking when the new
  message reserves its number); field or enum value renamed with its number kept (not breaking:
  a ProtoJSON/text-format change); enum value renumbered or removed; rpc request or response type
  changed, rpc streaming changed; an rpc, service, message or enum removed is ``object removed``.

Every record carries the old and new location and the number of places in the old release that
call, subclass, import or re-export the symbol (its uses), so a reader sees impact first.
"""

from comparator.apidiff.diff import find_breakages
from comparator.apidiff.records import RULES, TITLES, Breakage, BreakageKind

__all__ = ["RULES", "TITLES", "Breakage", "BreakageKind", "find_breakages"]
