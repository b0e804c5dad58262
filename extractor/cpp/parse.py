"""The one place that imports tree_sitter and its grammar wheels.

py-tree-sitter changed its query API in 0.25 and again in 0.26; it is pinned in pyproject.toml
and used only here, so an upgrade touches one module.
"""

from __future__ import annotations

import functools

import tree_sitter
import tree_sitter_cpp
import tree_sitter_cuda

from extractor.model import Language


@functools.cache
def _parser(language: Language) -> tree_sitter.Parser:
    grammar = tree_sitter_cuda.language() if language is Language.CUDA else tree_sitter_cpp.language()
    return tree_sitter.Parser(tree_sitter.Language(grammar))


def parse_source(data: bytes, language: Language) -> tree_sitter.Tree:
    """Parse C/C++ (``Language.CPP``) or CUDA (``Language.CUDA``) bytes into a syntax tree."""
    return _parser(language).parse(data)
