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


# Kinds no rule calls breaking: the change is listed, reading and calling work as before.
INFORMATIONAL = frozenset({BreakageKind.BINDING_CHANGED})


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
}
