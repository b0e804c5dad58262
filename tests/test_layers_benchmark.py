"""The labelled layer benchmark: the labels are well formed, the scoring counts what it should, and
on the systems CI can reach (PyPI sdists) archdiff's roles agree with the labels at least as well
as when the labels were measured, with no generated module in an architectural role.

The figures for all nine systems (three are local mirrors CI cannot reach) come from
``python3 -m bench.layers_vs_labels``; ``bench/extract_vs_baselines.py`` prints them too."""

from __future__ import annotations

import collections

import pytest

from extractor.layers import TAXONOMY_FILE, UNASSIGNED, load_taxonomy
from bench.layers_vs_labels import Label, LabelledSystem, load_labels, measure, render, score_layers
from tests.conftest import cache_root

SYSTEMS = load_labels()

# What the PyPI systems score with the general rules of the second pass (first measured, before any
# tuning: vllm 1.00, sglang 0.806, kserve 0.895, mlserver 0.694, bentoml 0.806, 0.84 overall): a
# floor, so that a change that makes the layers worse on real systems fails here. litellm, the
# gateway issue 25 added, scored 0.393 before its rules and 0.929 after.
FLOORS = {"vllm": 0.97, "sglang": 0.80, "kserve": 0.97, "mlserver": 0.91, "bentoml": 0.91, "litellm": 0.92}
OVERALL_FLOOR = 0.92


def test_labels_cover_six_or_more_systems_of_different_shapes():
    roles = {r.id for r in load_taxonomy(TAXONOMY_FILE).roles} | {UNASSIGNED}
    assert len(SYSTEMS) >= 6
    for system in SYSTEMS:
        assert 20 <= len(system.labels) <= 40, system.name
        paths = [label.path for label in system.labels]
        assert len(paths) == len(set(paths)), system.name
        for label in system.labels:
            assert label.role in roles, (system.name, label)
            assert len(label.why.split()) >= 2, (system.name, label)  # a reason, not a word
    with_generated = [s.name for s in SYSTEMS if any(label.role == "generated" for label in s.labels)]
    assert len(with_generated) >= 2
    # CI reaches the PyPI ones; C++ (Triton's multi-repo server) and a Kubernetes platform are there too
    assert sum(s.pypi for s in SYSTEMS) >= 5
    assert any(any(label.path.endswith((".cc", ".cu", ".h")) for label in s.labels) for s in SYSTEMS)
    # a C++/CUDA engine whose kernel tree is labelled file by file, and an LLM API gateway
    assert any(sum(label.role == "kernels" and label.path.endswith((".cu", ".cuh", ".h")) for label in s.labels) >= 10
               for s in SYSTEMS)
    assert any(sum(label.path.split("/")[1:2] == ["llms"] for label in s.labels) >= 3 for s in SYSTEMS)


def test_scoring_counts_agreement_misses_and_generated_code_in_the_architecture():
    system = LabelledSystem("toy", "1", ("dir:.",), False, (
        Label("a/server.py", "ingress", "serves"), Label("a/x_pb2.py", "generated", "protoc"),
        Label("a/util.py", "utilities", "helpers", miss="nothing names a helper"),
        Label("a/gone.py", "memory", "not extracted")), "toy.yaml")
    layers = [
        {"role": "ingress", "modules": [{"path": "a/server.py", "evidence": [{"signal": "import", "matched": "grpc"}]},
                                        {"path": "a/y_pb2.py", "evidence": [], "why": ""}]},
        {"role": "generated", "modules": [{"path": "a/x_pb2.py", "evidence": []}]},
        {"role": "unassigned", "modules": [{"path": "a/util.py", "evidence": [], "why": "no signal of any role fired"}]},
    ]
    score = score_layers(system, layers, generated_paths=["a/x_pb2.py", "a/y_pb2.py"])
    assert (score.agreed, score.total, score.generated_modules) == (2, 4, 2)
    assert [(m.path, m.expected, m.got, m.decided_by, m.reason) for m in score.misses] == [
        ("a/gone.py", "memory", "(not extracted)", "", ""),
        ("a/util.py", "utilities", "unassigned", "no signal of any role fired", "nothing names a helper")]
    assert score.generated_in_architecture == ("a/y_pb2.py",)
    text = render([score])
    assert "toy" in text and "2/4" in text and "generated code in an architectural role: 1" in text
    assert "1  utilities -> unassigned" in text
    # each disagreement shows the label file's reason, and those without one are counted
    assert "why: nothing names a helper" in text and "disagreements without a recorded reason: 1" in text


@pytest.fixture(scope="module")
def pypi_scores():
    systems = [s for s in SYSTEMS if s.pypi]
    # the cache the other real tests extract vLLM 0.10.2 into: its files' facts are found there
    scores = measure(systems, cache_dir=cache_root() / "archdiff", jobs=2, log=lambda line: None)
    print("\n" + render(scores))
    return {s.name: s for s in scores}


@pytest.mark.real
def test_every_labelled_module_is_extracted_and_no_generated_code_holds_an_architectural_role(pypi_scores):
    assert set(pypi_scores) == {s.name for s in SYSTEMS if s.pypi}
    for score in pypi_scores.values():
        assert not [m for m in score.misses if m.got == "(not extracted)"], score.name
        assert score.generated_in_architecture == (), score.name
    # the two PyPI platforms with generated code: OpenAPI data classes and protoc/grpc modules
    assert pypi_scores["kserve"].generated_modules >= 100 and pypi_scores["mlserver"].generated_modules >= 4


@pytest.mark.real
def test_agreement_with_the_labels_holds_its_floor(pypi_scores):
    below = {name: round(s.share, 3) for name, s in pypi_scores.items() if s.share < FLOORS[name]}
    assert below == {}
    agreed = sum(s.agreed for s in pypi_scores.values())
    total = sum(s.total for s in pypi_scores.values())
    assert agreed / total >= OVERALL_FLOOR
    # what archdiff gets wrong is spread over confusions, not one systematic swap
    confusions = collections.Counter((m.expected, m.got) for s in pypi_scores.values() for m in s.misses)
    assert max(confusions.values()) <= 6
