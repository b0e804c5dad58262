"""Tags for struct layouts, from the rules in ``tags.yaml`` next to this module."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import yaml

from extractor.structs.records import StructLayout

RULES_FILE = Path(__file__).with_name("tags.yaml")


@functools.cache
def load_rules(path: Path = RULES_FILE) -> tuple[dict, ...]:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    rules = []
    for rule in data.get("rules", ()):
        compiled = dict(rule)
        for key in ("name", "member_type", "member_name", "path"):
            if key in rule:
                compiled[key] = tuple(re.compile(p, re.IGNORECASE) for p in rule[key])
        rules.append(compiled)
    return tuple(rules)


def tag_layout(layout: StructLayout, rules: tuple[dict, ...] | None = None) -> tuple[str, ...]:
    """The sorted tags that the rules give ``layout`` (resolved or not)."""
    tags = set()
    for rule in load_rules() if rules is None else rules:
        if _matches(rule, layout):
            tags.add(rule["tag"])
    return tuple(sorted(tags))


def _matches(rule: dict, layout: StructLayout) -> bool:
    if "max_size" in rule and not (layout.size and layout.size <= rule["max_size"]):
        return False
    if "min_size" in rule and layout.size < rule["min_size"]:
        return False
    if any(p.search(layout.qualname) for p in rule.get("name", ())):
        return True
    if any(p.search(layout.path) for p in rule.get("path", ())):
        return True
    for m in layout.members:
        if any(p.search(m.type) for p in rule.get("member_type", ())):
            return True
        if m.name and any(p.search(m.name) for p in rule.get("member_name", ())):
            return True
    if "min_align" in rule and layout.align >= rule["min_align"]:
        return True
    if rule.get("packed") and layout.packed:
        return True
    return False
