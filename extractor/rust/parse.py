"""The Rust grammar (the wheel ``tree-sitter-rust``, pinned in pyproject.toml): imported here only.

No preprocessing: Rust has no textual macros to blank; macro invocations stay token trees, so
calls inside them (``vec![f(x)]``, ``lazy_static! { ... }``) are not in the tree.
"""

from __future__ import annotations

from typing import Any

import tree_sitter_rust

from extractor.native.grammar import Grammar

RUST = Grammar(tree_sitter_rust.language())


def parse_source(data: bytes) -> Any:
    return RUST.parse(data)


def capture_nodes(node: Any, pattern: str) -> dict[str, list[Any]]:
    return RUST.captures(node, pattern)
