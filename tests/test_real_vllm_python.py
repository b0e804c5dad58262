"""On the real vLLM 0.10.2 sdist: the graph holds exactly the definitions Python's ast finds."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

from extractor.context import ExtractOptions
from tests.conftest import cache_root, extract_real

pytestmark = pytest.mark.real


def _ast_qualnames(tree: ast.Module) -> set[str]:
    """__qualname__ of every class and function, computed independently of archdiff's scanner."""
    found: set[str] = set()

    def visit(node: ast.AST, prefix: str, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = prefix + child.name
                found.add(qual)
                is_function = not isinstance(child, ast.ClassDef)
                visit(child, qual + (".<locals>." if is_function else "."), is_function)
            else:
                visit(child, prefix, in_function)

    visit(tree, "", False)
    return found


@pytest.fixture(scope="module")
def vllm_bundle(vllm_src):
    return extract_real(vllm_src, name="vllm", version="0.10.2",
                        options=ExtractOptions(jobs=2, cache_dir=cache_root() / "archdiff")).bundle


def test_qualnames_equal_ast_none_missing_none_invented(vllm_src: Path, vllm_bundle):
    expected: set[tuple[str, str]] = set()
    unparsable: set[str] = set()
    for path in sorted(vllm_src.rglob("*.py")):
        rel = path.relative_to(vllm_src).as_posix()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            unparsable.add(rel)
            continue
        expected.update((rel, q) for q in _ast_qualnames(tree))
    modules = {n["path"]: n["qualname"] for n in vllm_bundle["graph"]["nodes"] if n["kind"] == "module"}
    got: set[tuple[str, str]] = set()
    functional: set[tuple[str, str]] = set()
    for node in vllm_bundle["graph"]["nodes"]:
        # Every def and class is a node (a property one of kind attribute); constructors that
        # dataclasses and friends generate are nodes too, and classes made by a call
        # (namedtuple(...)), but no def or class statement of the source.
        is_def = node["kind"] in ("class", "function", "method") or node.get("value_kind") == "property"
        if node["language"] == "python" and is_def and "generated" not in node["tags"] \
                and node["path"] not in unparsable:
            key = (node["path"], node["qualname"][len(modules[node["path"]]) + 1:])
            (functional if "functional" in node["tags"] else got).add(key)
    assert len(expected) > 20_000
    assert sorted(expected - got)[:10] == [] and sorted(got - expected)[:10] == []
    # vllm/collect_env.py:28 and vllm/distributed/parallel_state.py:56 are `X = namedtuple("X", [...])`
    assert functional == {("vllm/collect_env.py", "SystemEnv"), ("vllm/distributed/parallel_state.py", "TensorMetadata")}
    # Files the running Python cannot parse are said to be so, never dropped in silence.
    flagged = {d["path"] for d in vllm_bundle["diagnostics"] if d["code"] in ("syntax-error", "newer-syntax")}
    assert unparsable == flagged


def test_known_vllm_symbols_and_edges(vllm_bundle):
    nodes = {n["id"]: n for n in vllm_bundle["graph"]["nodes"]}
    scheduler = nodes["py:vllm.v1.core.sched.scheduler.Scheduler"]
    assert scheduler["path"] == "vllm/v1/core/sched/scheduler.py" and scheduler["kind"] == "class"
    edges = {(e["source"], e["target"], e["kind"]) for e in vllm_bundle["graph"]["edges"]}
    # class Scheduler(SchedulerInterface), imported from vllm.v1.core.sched.interface
    assert ("py:vllm.v1.core.sched.scheduler.Scheduler", "py:vllm.v1.core.sched.interface.SchedulerInterface",
            "inherits") in edges
    assert ("py:vllm.v1.core.sched.scheduler", "py:vllm.v1.core.kv_cache_manager", "imports") in edges
    stats = vllm_bundle["stats"]["python"]
    assert stats["calls_resolved"] / stats["call_sites"] > 0.2
