"""A tree-sitter grammar wheel behind the two calls the Rust and Go scanners need.

py-tree-sitter changed its query API in 0.25 and again in 0.26 (pinned in pyproject.toml); this
module and the per-language parse modules that hand it their grammar are the only places that
touch it for Rust and Go.
"""

from __future__ import annotations

import functools
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
        """Nodes captured by a query ``pattern`` under ``node``, by capture name."""
        return tree_sitter.QueryCursor(self.query(pattern)).captures(node)
