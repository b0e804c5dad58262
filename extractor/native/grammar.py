"""A tree-sitter grammar wheel behind the two calls the Rust and Go scanners need.

py-tree-sitter changed its query API in 0.25 and again in 0.26 (pinned in pyproject.toml); this
module and the per-language parse modules that hand it their grammar are the only places that
touch it for Rust and Go.
"""

from __future__ import annotations

import functools
from collections import Counter
from operator import attrgetter
from typing import Any

import tree_sitter


class Grammar:
    """Parser and queries of one language, built on first use (worker processes build their own)."""

    def __init__(self, language_pointer: Any) -> None:
        self._pointer = language_pointer

    @functools.cached_property
    def language(self) -> tree_sitter.Language:
        return tree_sitter.Language(self._pointer)

    @functools.cached_property
    def parser(self) -> tree_sitter.Parser:
        return tree_sitter.Parser(self.language)

    def parse(self, data: bytes) -> tree_sitter.Tree:
        return self.parser.parse(data)

    @functools.cache
    def query(self, pattern: str) -> tree_sitter.Query:
        return tree_sitter.Query(self.language, pattern)

    def captures(self, node: Any, pattern: str) -> dict[str, list[Any]]:
        """Nodes captured by a query ``pattern`` under ``node``, by capture name, each name's in
        document order (:func:`in_document_order`)."""
        return in_document_order(tree_sitter.QueryCursor(self.query(pattern)).captures(node))


_START = attrgetter("start_byte")


def in_document_order(captured: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """``captured`` with each capture name's nodes in document order: by start, an enclosing node
    before the nodes it holds (a tree's pre-order). ``QueryCursor.captures`` gives them in an order
    that changes from one parse of the same bytes to the next (py-tree-sitter issue 450), so facts
    read from them (a first match that wins, a list kept in the order found) would too.

    Two nodes of one span (a node and its descendant of the same extent, zero-width nodes side by
    side) are ordered by their paths from the root; a node listed once per match stays repeated."""
    for name, nodes in captured.items():
        if len(nodes) < 2:
            continue
        starts = list(map(_START, nodes))
        if len(set(starts)) == len(starts):  # nearly always: the start alone orders them
            captured[name] = sorted(nodes, key=_START)
            continue
        spans = [(start, -node.end_byte) for start, node in zip(starts, nodes)]
        shared = {span for span, count in Counter(spans).items() if count > 1}
        keys = [(span, _path(node) if span in shared else ()) for span, node in zip(spans, nodes)]
        captured[name] = [nodes[i] for i in sorted(range(len(nodes)), key=keys.__getitem__)]
    return captured


def _path(node: Any) -> tuple[int, ...]:
    """The child indices that lead from the root to ``node`` (a prefix of its descendants' paths)."""
    steps: list[int] = []
    while (parent := node.parent) is not None:
        index, sibling = 0, node.prev_sibling
        while sibling is not None:
            index, sibling = index + 1, sibling.prev_sibling
        steps.append(index)
        node = parent
    return tuple(reversed(steps))
