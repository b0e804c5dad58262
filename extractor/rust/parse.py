"""The one place that imports tree_sitter for Rust, with the grammar wheel ``tree-sitter-rust``.

The wheel is pinned in pyproject.toml beside py-tree-sitter 0.26 (whose query API changed in 0.25
and again in 0.26); everything else reads the trees this module returns.
"""

from __future__ import annotations

import functools
from typing import Any

import tree_sitter
import tree_sitter_rust


@functools.cache
def _language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_rust.language())


@functools.cache
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(_language())


def parse_source(data: bytes) -> tree_sitter.Tree:
    """Rust bytes to a syntax tree. No preprocessing: Rust has no textual macros to blank, and
    macro invocations stay token trees (calls inside them are not seen)."""
    return _parser().parse(data)


@functools.cache
def _query(pattern: str) -> tree_sitter.Query:
    return tree_sitter.Query(_language(), pattern)


def capture_nodes(node: Any, pattern: str) -> dict[str, list[Any]]:
    """Nodes captured by a tree-sitter query ``pattern`` under ``node``, by capture name."""
    return tree_sitter.QueryCursor(_query(pattern)).captures(node)
