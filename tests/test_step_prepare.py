"""A step's ``prepare`` (work that needs only the options) runs while the pool scans, on a thread
of its own, before the step's extract; a prepare that fails leaves the step to meet the error."""

from __future__ import annotations

import threading

from extractor.context import ExtractOptions
from extractor.model import Contribution, Step
from extractor.run.pipeline import extract_system
from extractor.steps import STEPS
from tests.conftest import FIXTURES


def _steps(prepare) -> tuple[list[str], tuple[Step, ...]]:
    seen: list[str] = []

    def extract(_ctx) -> Contribution:
        seen.append("extract")
        return Contribution()

    return seen, (*STEPS, Step("watched", extract, prepare=lambda options: prepare(seen, options)))


def test_prepare_runs_on_another_thread_before_extract(tmp_path):
    def prepare(seen: list[str], options: ExtractOptions) -> None:
        seen.append(f"prepare {threading.current_thread().name} jobs={options.jobs}")

    seen, steps = _steps(prepare)
    extract_system([str(FIXTURES / "pysample")], steps=steps,
                   options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c", probe_structs=False))
    assert seen == ["prepare archdiff-prepare jobs=1", "extract"]


def test_a_prepare_that_fails_does_not_stop_the_run(tmp_path):
    def prepare(seen: list[str], _options: ExtractOptions) -> None:
        seen.append("prepare")
        raise ValueError("a malformed data file: the step's extract reports it")

    seen, steps = _steps(prepare)
    run = extract_system([str(FIXTURES / "pysample")], steps=steps,
                         options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c", probe_structs=False))
    assert seen == ["prepare", "extract"] and run.summary["files"] > 0
