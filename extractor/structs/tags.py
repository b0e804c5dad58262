"""Tags for struct layouts, from the rules in ``tags.yaml`` next to this module (checked on load)."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable
from pathlib import Path

from extractor.support.datafile import Regex, load_data_file
from extractor.structs.records import StructLayout

RULES_FILE = Path(__file__).with_name("tags.yaml")
PATTERN_KEYS = ("name", "member_type", "member_name", "path")
RULES_SCHEMA = {"rules": [{"tag": str, **{f"{key}?": [Regex] for key in PATTERN_KEYS}, "min_align?": int,
                           "packed?": bool, "max_size?": int, "min_size?": int}]}


@dataclasses.dataclass(frozen=True, slots=True)
class TagRule:
    """Adds ``tag`` when any pattern or condition matches, within the size bounds."""

    tag: str
    name: tuple[re.Pattern[str], ...] = ()
    member_type: tuple[re.Pattern[str], ...] = ()
    member_name: tuple[re.Pattern[str], ...] = ()
    path: tuple[re.Pattern[str], ...] = ()
    min_align: int | None = None
    packed: bool = False
    max_size: int | None = None
    min_size: int | None = None


@functools.cache
def load_rules(path: Path = RULES_FILE) -> tuple[TagRule, ...]:
    data = load_data_file(path, RULES_SCHEMA)
    return tuple(TagRule(**{**rule, **{key: tuple(re.compile(p, re.IGNORECASE) for p in rule[key])
                                        for key in PATTERN_KEYS if key in rule}})
                 for rule in data["rules"])


def tag_layout(layout: StructLayout, rules: tuple[TagRule, ...] | None = None) -> tuple[str, ...]:
    """The sorted tags that the rules give ``layout`` (resolved or not)."""
    tags = set()
    for rule in load_rules() if rules is None else rules:
        if _matches(rule, layout):
            tags.add(rule.tag)
    return tuple(sorted(tags))


def _matches(rule: TagRule, layout: StructLayout) -> bool:
    if rule.max_size is not None and not (layout.size and layout.size <= rule.max_size):
        return False
    if rule.min_size is not None and layout.size < rule.min_size:
        return False
    name, member_type, member_name, path = _searches(rule)  # PATTERN_KEYS order
    if name is not None and name(layout.qualname):
        return True
    if path is not None and path(layout.path):
        return True
    if member_type is not None or member_name is not None:
        for m in layout.members:
            if member_type is not None and member_type(m.type):
                return True
            if member_name is not None and m.name and member_name(m.name):
                return True
    if rule.min_align is not None and layout.align >= rule.min_align:
        return True
    return rule.packed and layout.packed


@functools.cache
def _searches(rule: TagRule) -> tuple[Callable[[str], object] | None, ...]:
    """For ``name``, ``path``, ``member_type`` and ``member_name``: one call that tells whether
    any of the rule's patterns is found in a string (None when there is none)."""
    return tuple(_any_of(getattr(rule, key)) for key in PATTERN_KEYS)


def _any_of(patterns: tuple[re.Pattern[str], ...]) -> Callable[[str], object] | None:
    """``any(p.search(text) for p in patterns)`` as one search of their alternation, which finds a
    match exactly when one of them does -- unless a pattern numbers its groups (a back-reference
    would then point elsewhere) or does not compile inside a group: then one search each."""
    if not patterns:
        return None
    if len(patterns) == 1:
        return patterns[0].search
    flags = patterns[0].flags
    if all(p.groups == 0 and p.flags == flags for p in patterns):
        try:
            return re.compile("|".join(f"(?:{p.pattern})" for p in patterns), flags).search
        except re.error:
            pass
    return lambda text: any(p.search(text) for p in patterns)
