"""A ``forkable`` step runs in a forked child beside the driver's steps, from the moment the steps
it requires are done; the driver reads it back before any later step of its own runs, so every step
sees what a run in order shows it, and the results stand in the steps' order whoever computed them."""

from __future__ import annotations

import os

import pytest

from extractor.context import Context, ExtractOptions
from extractor.model import Contribution, Step
from extractor.run.pipeline import extract_system
from extractor.steps import STEPS
from tests.conftest import FIXTURES


def _pid_of(_ctx: Context) -> Contribution:
    return Contribution(stats={"pid": os.getpid()})


AHEAD = Step("ahead", _pid_of, forkable=True)  # requires nothing: starts before the python graph


def _reads_ahead(ctx: Context) -> Contribution:
    # not declared in ``requires``: read as result_if_run is, from the step list's order
    ahead = ctx.result_if_run(AHEAD)
    return Contribution(stats={"pid": os.getpid(), "saw": ahead.stats["pid"] if ahead else 0})


READER = Step("reader", _reads_ahead)
CHAINED = Step("chained", _pid_of, requires=(READER,), forkable=True)


@pytest.mark.parametrize("jobs", [1, 2])
def test_forkable_steps_run_in_children_and_stand_in_the_steps_order(jobs, tmp_path):
    kept: list[object] = []
    steps = (STEPS[0], AHEAD, *STEPS[1:], READER, CHAINED)
    extract_system([str(FIXTURES / "pysample")], steps=steps, keep=kept,
                   options=ExtractOptions(jobs=jobs, cache_dir=tmp_path / "c", probe_structs=False))
    [ctx] = kept
    assert list(ctx.results) == [step.name for step in steps]
    ahead, reader, chained = (ctx.results[name].stats["pid"] for name in ("ahead", "reader", "chained"))
    assert reader == os.getpid() and ctx.results["reader"].stats["saw"] == ahead
    if jobs == 1:
        assert ahead == chained == os.getpid()
    else:
        assert len({ahead, chained, os.getpid()}) == 3


def test_a_forkable_step_that_raises_raises_in_the_driver(tmp_path):
    def broken(_ctx: Context) -> Contribution:
        raise ValueError("a broken step")

    with pytest.raises(ValueError, match="a broken step"):
        extract_system([str(FIXTURES / "pysample")], steps=(*STEPS, Step("broken", broken, forkable=True)),
                       options=ExtractOptions(jobs=2, cache_dir=tmp_path / "c", probe_structs=False))
