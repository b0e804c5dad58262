"""Build the Python graph of tiny packages written into a temp dir, and diff two of them.

The per-file scanner and the per-system graph step run as the pipeline runs them, without its
cache and process pool, so a table of (old code, new code, expected) stays fast.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import textwrap
from pathlib import Path

from comparator.apidiff import Breakage, find_breakages
from extractor import naming
from extractor.python import graph as pysymbols
from extractor.context import Context, ExtractOptions, SourceFile, SourceTree
from extractor.model import Edge, Language, Node, ParsedFile


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def graph(root: Path) -> tuple[tuple[Node, ...], tuple[Edge, ...]]:
    files = []
    for path in sorted(root.rglob("*.py")):
        data = path.read_bytes()
        rel = path.relative_to(root).as_posix()
        facts = pysymbols.scan_python(ParsedFile(Language.PYTHON, data, ast.parse(data)))
        files.append(SourceFile(rel, rel, "", Language.PYTHON, hashlib.sha256(data).hexdigest(), len(data),
                                {"python": facts}, data.count(b"\n")))
    ctx = Context("t", "0", (SourceTree("", str(root), "dir", root),), naming.with_module_names(files),
                  ExtractOptions())
    result = pysymbols.extract_python_graph(ctx)
    return result.nodes, result.edges


def nodes_of(root: Path) -> dict[str, Node]:
    return {n.id: n for n in graph(root)[0]}


def diff_trees(tmp: Path, old: dict[str, str], new: dict[str, str]) -> tuple[Breakage, ...]:
    a = graph(write_tree(tmp / "old", old))
    b = graph(write_tree(tmp / "new", new))
    return find_breakages(*a, *b)


@functools.cache
def api_comparison(package: str, old: str, new: str):
    """griffe against archdiff on two real releases (``bench.api_vs_griffe.compare``), once per test
    run: griffe's rows come from the test cache, archdiff's from cached Python-only extractions."""
    from bench.api_vs_griffe import cached_griffe_breakages, compare
    from tests.conftest import cache_lock, sdist_root

    old_tree, new_tree = sdist_root(package, old), sdist_root(package, new)
    # test_api_vs_griffe and test_compare_real ask for vLLM's on two workers: griffe's rows are
    # computed and written once, and the other worker reads them whole
    with cache_lock(f"api-{package}-{old}-{new}") as cache:
        rows = cached_griffe_breakages(old_tree, new_tree, package, cache / "griffe")
        return compare(old_tree, new_tree, package, cache / "api-extractions", python_only=True, griffe_rows=rows)
