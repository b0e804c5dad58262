"""Tags for struct layouts, from the rules in ``tags.yaml`` next to this module (checked on load)."""

from __future__ import annotations

import dataclasses
import functools
import re
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
    if any(p.search(layout.qualname) for p in rule.name):
        return True
    if any(p.search(layout.path) for p in rule.path):
        return True
    for m in layout.members:
        if any(p.search(m.type) for p in rule.member_type):
            return True
        if m.name and any(p.search(m.name) for p in rule.member_name):
            return True
    if rule.min_align is not None and layout.align >= rule.min_align:
        return True
    return rule.packed and layout.packed
