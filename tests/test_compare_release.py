"""The release diff on fixtures/pysample against a copy with exactly three changes, extracted by the
real pipeline: it must find those three and nothing else."""

from __future__ import annotations

import pytest

from comparator.compare import compare_evidence
from comparator.kinds.symbols.breaking import signature_breaks
from extractor.context import ExtractOptions
from extractor.evidence import evidence_from_json
from extractor.pipeline import extract_system
from tests.compare_support import (CHANGED_SIGNATURE, REMOVED_FUNCTION, RENAMED_CLASS, ROOT,
                                   make_pysample_v2)


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("release")
    options = ExtractOptions(jobs=1, cache_dir=tmp / "cache")
    old = extract_system([str(ROOT / "fixtures" / "pysample")], name="servekit", version="1", options=options)
    new = extract_system([str(make_pysample_v2(tmp))], name="servekit", version="2", options=options)
    return compare_evidence(evidence_from_json(old.bundle), evidence_from_json(new.bundle))


def test_release_mode_is_chosen_for_one_system(release):
    assert release["mode"] == "release"


def test_finds_exactly_the_removed_function(release):
    symbols = release["release"]["symbols"]
    assert [r["id"] for r in symbols["removed"]] == [REMOVED_FUNCTION]
    assert symbols["removed"][0]["breaking"] is True
    # its nested make() (two definitions of one qualified name: one node) goes with it
    assert symbols["removed"][0]["members"] == 1
    assert symbols["added"] == []
    assert symbols["moved"] == []


def test_finds_exactly_the_changed_signature(release):
    sigs = release["release"]["symbols"]["signatures"]
    assert [s["id"] for s in sigs] == [CHANGED_SIGNATURE]
    assert sigs[0]["breaking"] is True
    assert sigs[0]["reasons"] == ["positional parameters reordered or shifted"]
    assert sigs[0]["path"] == "src/servekit/engine/scheduler.py" and sigs[0]["line"] == 16


def test_finds_exactly_the_renamed_class(release):
    renamed = release["release"]["symbols"]["renamed"]
    assert [(r["from"]["id"], r["to"]["id"]) for r in renamed] == [RENAMED_CLASS]


def test_counts_three_breaking_differences(release):
    assert release["differences"] == {"any": 3, "breaking": 3}


@pytest.mark.parametrize("old,new,expected", [
    ("(self, a, b)", "(self, a, b, c=1)", []),
    ("(self, a, b)", "(self, a, b, c)", ["required parameter 'c' added"]),
    ("(self, a, b=2)", "(self, a, b)", ["parameter 'b' lost its default"]),
    ("(self, a, b)", "(self, a)", ["parameter 'b' removed"]),
    ("(self, a, b)", "(self, a, **kw)", []),
    ("(self, a, *, k=1)", "(self, a, *, k=1, j=2)", []),
    ("(self, a, *, k)", "(self, a)", ["parameter 'k' removed"]),
    ("(a, *args)", "(a)", ["*args removed"]),
    ("(x: int) -> int", "(x: int) -> str", []),
    ("(a, b)", "(b, a)", ["positional parameters reordered or shifted"]),
])
def test_signature_rules(old, new, expected):
    assert signature_breaks(old, new) == expected


@pytest.mark.parametrize("old,new,expected", [
    # the graph truncates long signatures with an ellipsis: only what both show is judged
    ("(q, k, scale: float=1.0, causal: bool=False)", "(q, k, scale: float=1.0, causal: bool=False, extra: int=0, mo…",
     []),
    ("(q, k, scale: float=1.0, causal: bool=False)", "(k, q, scale: float=1.0, caus…",
     ["positional parameters reordered or shifted"]),
    # a complete new signature shows what went, even when the old one was cut
    ("(q, k, v, scale, causal, window, sinks, al…", "(q, k, v, scale)",
     ["parameter 'causal' removed", "parameter 'window' removed", "parameter 'sinks' removed"]),
    ("(q, k, v, scale, causal, window, sinks, al…", "(q, k, v, sca…", []),
])
def test_truncated_signatures(old, new, expected):
    assert signature_breaks(old, new) == expected


def test_signature_cut_in_the_return_annotation_keeps_its_parameters():
    assert signature_breaks("(self, a: int, b: int=0) -> tuple[int, Opt…", "(self, a: int) -> X") == \
        ["parameter 'b' removed"]
