"""The Go grammar (the wheel ``tree-sitter-go``, pinned in pyproject.toml): imported here only.

A cgo preamble stays one comment node; the Go scanner reads it as C text.
"""

from __future__ import annotations

from typing import Any

import tree_sitter_go

from extractor.native.grammar import Grammar

GO = Grammar(tree_sitter_go.language())


def parse_source(data: bytes) -> Any:
    return GO.parse(data)


def capture_nodes(node: Any, pattern: str) -> dict[str, list[Any]]:
    return GO.captures(node, pattern)


def descendants(node: Any, kind: str) -> list[Any]:
    """The nodes of type ``kind`` below ``node`` (``node`` itself included), in source order, not
    looking inside one that is found."""
    out, stack = [], [node]
    while stack:
        current = stack.pop()
        if current.type == kind:
            out.append(current)
            continue
        stack.extend(reversed(current.named_children))
    return out
