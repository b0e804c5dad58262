"""The concepts step in two parts: the files' own facts matched in a child that starts with the steps
(beside the Python graph), the graph's symbols and the generated files' filter once the graph steps
are done. The records must be those of the step in one pass, the generated files' hits dropped
although the first part matched them."""

from __future__ import annotations

import pytest

from extractor import concepts, generated
from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
from tests.conftest import FIXTURES


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("fixture", ["mini_platform", "mini_vllm"])
def test_the_two_parts_give_the_one_pass_records(tmp_path, jobs, fixture):
    """mini_platform: a concept matched in a generated file; mini_vllm: concepts found by symbol names."""
    kept: list[object] = []
    result = extract_system([str(FIXTURES / fixture)], keep=kept,
                            options=ExtractOptions(jobs=jobs, cache_dir=tmp_path / "c", probe_structs=False))
    ctx = next(item for item in kept if hasattr(item, "results"))
    split = ctx.results[concepts.STEP.name]
    matched = ctx.results[concepts.FILES_STEP.name].shared
    written = set(generated.generated_files(ctx))
    evidence = [e for c in split.records for e in c.evidence]
    if fixture == "mini_platform":  # the first part saw the generated files; the records leave them out
        assert {path for _id, path, *_rest in matched.hits} & written
        assert not {e.path for e in evidence} & written and not set(split.shared.by_file) & written
    else:  # the second part's own hits
        assert any(e.via == "symbols" for e in evidence)

    del ctx.results[concepts.FILES_STEP.name]  # as a pipeline without the first part: one pass
    one_pass = concepts.extract_concepts(ctx)
    assert (split.records, split.stats, split.shared) == (one_pass.records, one_pass.stats, one_pass.shared)
    assert sorted(c["id"] for c in result.bundle["concepts"]) == sorted(c.id for c in one_pass.records)


def test_the_second_part_reads_no_facts_of_files_the_graph_covers(tmp_path, monkeypatch):
    """Its symbols come from the graph's nodes: decoding every file's facts again would put the
    first part's cost back on the path after the graph."""
    kept: list[object] = []
    extract_system([str(FIXTURES / "mini_vllm")], keep=kept,
                   options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c", probe_structs=False))
    ctx = next(item for item in kept if hasattr(item, "results"))
    read: list[str] = []

    class Reading(dict):  # the file's facts, each read of the concepts' noted
        def __init__(self, facts, path):
            super().__init__()
            self.facts, self.path = facts, path

        def get(self, step, default=None):
            if step == concepts.STEP.name:
                read.append(self.path)
            return self.facts.get(step, default)

    for f in ctx.files:
        object.__setattr__(f, "facts", Reading(f.facts, f.path))  # a frozen record, changed for the test only
    concepts.extract_concepts(ctx)
    covered = {n.path for step in concepts.GRAPH_STEPS if (r := ctx.results.get(step.name))
               for n in r.nodes if n.kind in concepts.SYMBOL_KINDS}
    assert covered and not set(read) & covered
