"""The comment above a declaration in a tree-sitter tree (C/C++ and Go alike): a block of `//`
lines is several comment nodes, so the block is walked back to its first line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def leading_comment(node: Any, text: Callable[[Any], str], strip: str, skip: tuple[str, ...] = ()) -> str:
    """First line of the comment block ending on the line right above ``node`` (``strip`` taken
    off its start, lines starting with ``skip`` passed over), cut at 200 characters; '' if none."""
    prev = node.prev_named_sibling
    if prev is None or prev.type != "comment" or prev.end_point[0] < node.start_point[0] - 1:
        return ""
    while True:
        before = prev.prev_named_sibling
        if before is None or before.type != "comment" or before.end_point[0] < prev.start_point[0] - 1:
            break
        prev = before
    for line in text(prev).splitlines():
        line = line.strip().lstrip(strip).strip().rstrip("*/").strip()
        if line and not (skip and line.startswith(skip)):
            return line[:200]
    return ""
