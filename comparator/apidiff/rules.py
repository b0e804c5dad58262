"""The rules of the API diff: one :class:`BreakageKind` per rule, how it reads and why it breaks
callers. Free of the extractor, so that the API kind's records (and its renderer) can name a rule."""

from __future__ import annotations

import enum


class BreakageKind(str, enum.Enum):
    PARAMETER_REMOVED = "parameter-removed"
    PARAMETER_MOVED = "parameter-moved"
    PARAMETER_KIND_CHANGED = "parameter-kind-changed"
    PARAMETER_ADDED_REQUIRED = "parameter-added-required"
    PARAMETER_NOW_REQUIRED = "parameter-now-required"
    DEFAULT_CHANGED = "default-changed"
    RETURN_CHANGED = "return-changed"
    BASE_REMOVED = "base-removed"
    OBJECT_KIND_CHANGED = "object-kind-changed"
    OBJECT_REMOVED = "object-removed"
    ATTRIBUTE_REMOVED = "attribute-removed"
    ATTRIBUTE_RETYPED = "attribute-retyped"
    OVERLOAD_REMOVED = "overload-removed"
    BINDING_CHANGED = "binding-changed"
    # Protocol Buffers: the wire contract of a .proto (comparator.apidiff.proto)
    FIELD_RENUMBERED = "field-renumbered"
    FIELD_RETYPED = "field-retyped"
    FIELD_LABEL_CHANGED = "field-label-changed"
    FIELD_ONEOF_CHANGED = "field-oneof-changed"
    FIELD_REMOVED = "field-removed"
    FIELD_RENAMED = "field-renamed"
    ENUM_VALUE_RENUMBERED = "enum-value-renumbered"
    ENUM_VALUE_REMOVED = "enum-value-removed"
    ENUM_VALUE_RENAMED = "enum-value-renamed"
    RPC_REQUEST_CHANGED = "rpc-request-changed"
    RPC_RESPONSE_CHANGED = "rpc-response-changed"
    RPC_STREAMING_CHANGED = "rpc-streaming-changed"


# The rules of the wire contract of a .proto (comparator.apidiff.proto); the other kinds are the
# language-level rules (a removed rpc or message is object-removed, as a removed class is).
PROTOBUF = frozenset({
    BreakageKind.FIELD_RENUMBERED, BreakageKind.FIELD_RETYPED, BreakageKind.FIELD_LABEL_CHANGED,
    BreakageKind.FIELD_ONEOF_CHANGED, BreakageKind.FIELD_REMOVED, BreakageKind.FIELD_RENAMED,
    BreakageKind.ENUM_VALUE_RENUMBERED, BreakageKind.ENUM_VALUE_REMOVED, BreakageKind.ENUM_VALUE_RENAMED,
    BreakageKind.RPC_REQUEST_CHANGED, BreakageKind.RPC_RESPONSE_CHANGED, BreakageKind.RPC_STREAMING_CHANGED})

# Kinds no rule calls breaking: the change is listed, reading and calling work as before.
INFORMATIONAL = frozenset({BreakageKind.BINDING_CHANGED, BreakageKind.FIELD_RENAMED, BreakageKind.ENUM_VALUE_RENAMED})


# How each kind reads, and the rule that makes it breaking (for a public symbol).
TITLES = {
    BreakageKind.PARAMETER_REMOVED: "parameter removed",
    BreakageKind.PARAMETER_MOVED: "positional parameter moved",
    BreakageKind.PARAMETER_KIND_CHANGED: "parameter kind changed",
    BreakageKind.PARAMETER_ADDED_REQUIRED: "parameter added as required",
    BreakageKind.PARAMETER_NOW_REQUIRED: "parameter now required",
    BreakageKind.DEFAULT_CHANGED: "default changed",
    BreakageKind.RETURN_CHANGED: "return annotation changed",
    BreakageKind.BASE_REMOVED: "base class removed",
    BreakageKind.OBJECT_KIND_CHANGED: "object kind changed",
    BreakageKind.OBJECT_REMOVED: "public object removed",
    BreakageKind.ATTRIBUTE_REMOVED: "attribute removed",
    BreakageKind.ATTRIBUTE_RETYPED: "attribute retyped",
    BreakageKind.OVERLOAD_REMOVED: "overload removed",
    BreakageKind.BINDING_CHANGED: "now bound by another statement",
    BreakageKind.FIELD_RENUMBERED: "field renumbered",
    BreakageKind.FIELD_RETYPED: "field type changed",
    BreakageKind.FIELD_LABEL_CHANGED: "field label changed",
    BreakageKind.FIELD_ONEOF_CHANGED: "field moved into or out of a oneof",
    BreakageKind.FIELD_REMOVED: "field removed",
    BreakageKind.FIELD_RENAMED: "field renamed (same number)",
    BreakageKind.ENUM_VALUE_RENUMBERED: "enum value renumbered",
    BreakageKind.ENUM_VALUE_REMOVED: "enum value removed",
    BreakageKind.ENUM_VALUE_RENAMED: "enum value renamed (same number)",
    BreakageKind.RPC_REQUEST_CHANGED: "rpc request type changed",
    BreakageKind.RPC_RESPONSE_CHANGED: "rpc response type changed",
    BreakageKind.RPC_STREAMING_CHANGED: "rpc streaming changed",
}
RULES = {
    BreakageKind.PARAMETER_REMOVED: "a call passing it fails (unless *args/**kwargs of the right kind take it)",
    BreakageKind.PARAMETER_MOVED: "a positional call binds its argument to another parameter",
    BreakageKind.PARAMETER_KIND_CHANGED: "calls passing it the old way (by position or by keyword) fail",
    BreakageKind.PARAMETER_ADDED_REQUIRED: "every existing call lacks it",
    BreakageKind.PARAMETER_NOW_REQUIRED: "calls that relied on its default lack it",
    BreakageKind.DEFAULT_CHANGED: "calls that omit it get another value (literals compared by value, "
                                  "other expressions as written)",
    BreakageKind.RETURN_CHANGED: "callers using the result get another type (a narrower union, or a "
                                 "function that returned None, is not breaking)",
    BreakageKind.BASE_REMOVED: "isinstance checks and inherited members of that base are gone",
    BreakageKind.OBJECT_KIND_CHANGED: "code using it as the old kind (calling, subclassing, reading) fails",
    BreakageKind.OBJECT_REMOVED: "importing or using it fails",
    BreakageKind.ATTRIBUTE_REMOVED: "reading it fails",
    BreakageKind.ATTRIBUTE_RETYPED: "readers and writers of it see another type",
    BreakageKind.OVERLOAD_REMOVED: "calls shaped like that overload no longer match any signature",
    BreakageKind.BINDING_CHANGED: "the module still binds the name (an import, a loop or with target, a global): "
                                  "reading it works",
    # protobuf's "Updating A Message Type" (protobuf.dev/programming-guides/proto3/#updating)
    BreakageKind.FIELD_RENUMBERED: "the number is the field on the wire: old readers see an unknown field, and "
                                   "the old number read by new code is lost (protobuf: wire-unsafe)",
    BreakageKind.FIELD_RETYPED: "readers of the old .proto parse the field's bytes as another type (not one of the "
                                "wire-compatible changes protobuf lists)",
    BreakageKind.FIELD_LABEL_CHANGED: "singular and repeated differ on the wire except for string, bytes and "
                                      "messages (packed numbers, required presence)",
    BreakageKind.FIELD_ONEOF_CHANGED: "moving a field into an existing oneof (or out of one with other fields) "
                                      "lets a writer set two members an old reader keeps one of (protobuf: unsafe)",
    BreakageKind.FIELD_REMOVED: "its number is not reserved: a later field may reuse it, and old readers parse "
                                "that field as this one (protobuf: reserve deleted field numbers)",
    BreakageKind.FIELD_RENAMED: "the binary wire format carries the number, not the name; ProtoJSON and text "
                                "format carry the name (old JSON readers do not know the new one), and generated "
                                "accessors are renamed",
    BreakageKind.ENUM_VALUE_RENUMBERED: "the number is the value on the wire: stored and sent data read as "
                                        "another value",
    BreakageKind.ENUM_VALUE_REMOVED: "senders of the old .proto still send it (new readers see an unknown value) "
                                     "and code naming it fails",
    BreakageKind.ENUM_VALUE_RENAMED: "the binary wire format carries the number, not the name; ProtoJSON writes "
                                     "enum values by name (old JSON readers reject the new one), and generated "
                                     "constants are renamed",
    BreakageKind.RPC_REQUEST_CHANGED: "clients of the old .proto send the old message: the server parses its "
                                      "bytes as another type",
    BreakageKind.RPC_RESPONSE_CHANGED: "clients of the old .proto parse the new response as the old message type",
    BreakageKind.RPC_STREAMING_CHANGED: "stubs of the old .proto call it the other way (one message or a stream): "
                                        "client and server disagree on how many messages the call carries",
}
