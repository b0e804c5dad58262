"""The release report names the public Python API that reaches each changed struct layout, on a
handwritten pair (fixtures/struct_reach and a copy with three layouts changed): Python method ->
private wrapper -[binds]-> C++ torch-op implementation -[calls]-> launcher -[uses]-> struct; a
kernel launched from there takes the second struct; an unbound helper takes the third.

The ``uses`` edges and the walk are checked without a compiler; the report needs struct layouts,
so it probes the header with g++."""

from __future__ import annotations

import shutil

import pytest

from comparator.compare import compare_evidence
from comparator.registry import KINDS
from comparator.render_html import render_html
from comparator.render_markdown import render_markdown
from extractor.context import ExtractOptions
from extractor.cpp.uses import type_names
from extractor.evidence.index import build_index
from extractor.evidence.query import impact_seeds, public_python, python_nodes, reached_by
from extractor.evidence.read import evidence_from_json
from extractor.run.pipeline import extract_system
from tests.conftest import FIXTURES

FIXTURE = FIXTURES / "struct_reach"
LAUNCHER = "cpp:blockcopy::launch_copy"


def _extract(root, tmp, version, probes=True):
    options = ExtractOptions(jobs=1, cache_dir=tmp / "cache", probe_structs=probes)
    return evidence_from_json(extract_system([str(root)], name="blockcopy", version=version, options=options).bundle)


def _next_release(tmp):
    """The fixture with BlockTable::block_size widened, Scratch::size widened, a member added to
    Workspace, CopyStats removed, and a parameter added to the copy_blocks operator's schema."""
    target = tmp / "struct_reach_v2"
    shutil.copytree(FIXTURE, target)
    header = target / "csrc" / "block_table.h"
    text = header.read_text()
    for old, new in (("  int32_t block_size;\n", "  int64_t block_size;\n"),
                     ("  uint32_t size;\n", "  uint64_t size;\n"),
                     ("  uint32_t align;\n", "  uint32_t align;\n  uint32_t flags;\n"),
                     # CopyStats goes from the header (the old release's kernel and launcher took it)
                     ("struct CopyStats {\n  uint64_t bytes;\n  uint32_t blocks;\n};\n", "")):
        assert old in text
        text = text.replace(old, new)
    header.write_text(text)
    bindings = target / "csrc" / "torch_bindings.cpp"
    text = bindings.read_text()
    old = 'ops.def("copy_blocks(Tensor! dst, Tensor src, Tensor table) -> ()");'
    assert old in text
    bindings.write_text(text.replace(old, 'ops.def("copy_blocks(Tensor! dst, Tensor src, Tensor table, int n) -> ()");'))
    return target


@pytest.fixture(scope="module")
def graph_only(tmp_path_factory):
    return _extract(FIXTURE, tmp_path_factory.mktemp("graph"), "1", probes=False)


def test_type_names_reach_into_template_arguments():
    assert list(type_names("const std::vector<blockcopy::RankData*>&")) == ["std::vector", "blockcopy::RankData"]
    assert list(type_names("const unsigned int* __restrict__")) == []
    assert list(type_names(":: ns :: T &")) == ["::ns::T"]


def test_uses_edges_come_from_signatures_with_their_line(graph_only):
    uses = {(e.source, e.target, e.path, e.line) for e in graph_only.graph.edges if e.kind.value == "uses"}
    assert uses == {
        ("cpp:blockcopy::copy_blocks_kernel", "cpp:blockcopy::CopyStats", "csrc/copy_blocks.cu", 7),
        (LAUNCHER, "cpp:blockcopy::BlockTable", "csrc/copy_blocks.cu", 13),
        (LAUNCHER, "cpp:blockcopy::CopyStats", "csrc/copy_blocks.cu", 13),
        ("cpp:blockcopy::scratch_size", "cpp:blockcopy::Scratch", "csrc/copy_blocks.cu", 17),
        ("cpp:blockcopy::plan_workspace", "cpp:blockcopy::Workspace", "csrc/copy_blocks.cu", 19),  # a return type
    }
    # torch::Tensor, int64_t, int: not the system's, counted rather than given an edge
    assert graph_only.stats["cpp"]["uses_external"] > 0


def test_one_walk_names_the_public_api_per_target(graph_only):
    index = build_index(graph_only)
    at = {nid: i for i, nid in enumerate(index.ids)}
    names = ("cpp:blockcopy::BlockTable", "cpp:blockcopy::CopyStats", "cpp:blockcopy::Scratch",
             "cpp:blockcopy::Workspace")
    targets = [(at[n], impact_seeds(index, at[n])) for n in names]
    table, stats, scratch, workspace = reached_by(index, targets, public_python(index))
    assert [h.node.id for h in table.hits] == ["py:blockcopy.engine.Engine.step"]
    chain = [(s.node.id, s.edge.kind if s.edge else "") for s in table.hits[0].chain]
    assert chain == [("py:blockcopy.engine.Engine.step", ""), ("py:blockcopy._custom_ops.copy_blocks", "calls"),
                     ("cpp:copy_blocks", "binds"), (LAUNCHER, "calls"), ("cpp:blockcopy::BlockTable", "uses")]
    # CopyStats is taken by the launcher too: the shortest chain, not the one through the kernel
    assert stats.hits[0].depth == 4 and stats.hits[0].chain[-2].node.id == LAUNCHER
    assert (scratch.hits, scratch.total) == ((), 0)
    assert (workspace.hits, workspace.total) == ((), 0)
    (private,) = reached_by(index, targets[3:], python_nodes(index, public=False))
    assert [h.node.id for h in private.hits] == ["py:blockcopy._custom_ops.workspace_bytes",
                                                  "py:blockcopy.engine.Engine._reserve"]


def test_a_torch_operator_is_reached_through_its_implementation(graph_only):
    index = build_index(graph_only)
    op = index.ids.index("torchop:_C::copy_blocks")
    (reach,) = reached_by(index, [(op, impact_seeds(index, op))], public_python(index))
    assert [h.node.id for h in reach.hits] == ["py:blockcopy.engine.Engine.step"]
    assert reach.hits[0].chain[-1].node.id == "cpp:copy_blocks"


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("struct_reach")
    return compare_evidence(_extract(FIXTURE, tmp, "1"), _extract(_next_release(tmp), tmp, "2"))


def test_each_changed_layout_names_the_api_that_reaches_it(release):
    changed = {row["qualname"]: row for row in release["release"]["structs"]["changed"]}
    assert set(changed) == {"blockcopy::BlockTable", "blockcopy::Scratch", "blockcopy::Workspace"}
    table = changed["blockcopy::BlockTable"]["reached_by"]
    assert [a["id"] for a in table["apis"]] == ["py:blockcopy.engine.Engine.step"] and table["total"] == 1
    assert [(link["node"], link["edge"], link["path"], link["line"]) for link in table["witness"]] == [
        ("py:blockcopy.engine.Engine.step", "", "blockcopy/engine.py", 9),
        ("py:blockcopy._custom_ops.copy_blocks", "calls", "blockcopy/engine.py", 10),
        ("cpp:copy_blocks", "binds", "blockcopy/_custom_ops.py", 7),
        (LAUNCHER, "calls", "csrc/copy_blocks.cu", 25),
        ("cpp:blockcopy::BlockTable", "uses", "csrc/copy_blocks.cu", 13)]
    # a removed struct: what reached it in the old release
    (removed,) = release["release"]["structs"]["removed"]
    assert removed["qualname"] == "blockcopy::CopyStats"
    assert [a["qualname"] for a in removed["reached_by"]["apis"]] == ["blockcopy.engine.Engine.step"]
    assert removed["reached_by"]["witness"][-1]["edge"] == "uses"
    scratch = changed["blockcopy::Scratch"]["reached_by"]
    assert (scratch["apis"], scratch["total"], scratch["private"], scratch["unresolved"]) == ([], 0, [], "")
    # only a private method calls the operator that returns a Workspace: named (the farthest up), with its chain
    workspace = changed["blockcopy::Workspace"]["reached_by"]
    assert (workspace["apis"], workspace["total"]) == ([], 0)
    assert [(p["id"], p["api"]) for p in workspace["private"]][0] == ("py:blockcopy.engine.Engine._reserve",
                                                                      "private: underscore name")
    assert [link["edge"] for link in workspace["witness"]] == ["", "calls", "binds", "calls", "uses"]


def test_markdown_and_html_state_the_api_and_the_chain(release):
    md = render_markdown(release, KINDS)
    assert ("- blockcopy::BlockTable: blockcopy.engine.Engine.step; witness: blockcopy.engine.Engine.step "
            "-\\[calls blockcopy/engine.py:10\\]-&gt; blockcopy.\\_custom\\_ops.copy\\_blocks") in md
    assert "- blockcopy::Scratch: no Python reaches it over the graph's edges\n" in md
    assert ("- blockcopy::Workspace: no public Python API reaches it over the graph's edges; its chains stop at "
            "the Python caller blockcopy.engine.Engine.\\_reserve (private: underscore name); witness:") in md
    page = render_html(release, KINDS)
    assert "reached from Python by: <span class=reach>blockcopy.engine.Engine.step</span>" in page
    assert "-[uses csrc/copy_blocks.cu:13]-&gt;" in page


def test_a_changed_binding_names_the_api_that_reaches_it(release):
    rows = [r for r in release["release"]["api"]["changes"] if r["id"] == "torchop:_C::copy_blocks"]
    assert [(r["rule"], r["subject"]) for r in rows] == [("parameter-added-required", "n")]
    reach = rows[0]["reached_by"]
    assert [a["id"] for a in reach["apis"]] == ["py:blockcopy.engine.Engine.step"]
    # the operator is reached through the C++ function implementing it, which Python binds to
    assert [link["node"] for link in reach["witness"]][-2:] == ["py:blockcopy._custom_ops.copy_blocks",
                                                                "cpp:copy_blocks"]
    # a Python change is no binding: its rows carry no reached_by
    assert all("reached_by" not in r for r in release["release"]["api"]["changes"] if r["language"] == "python")
    md = render_markdown(release, KINDS)
    assert "- \\_C::copy\\_blocks: blockcopy.engine.Engine.step; witness:" in md
