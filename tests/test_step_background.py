"""A ``background`` step runs in a thread of the driver beside the steps after it, from the moment
the steps it requires are done or forked; it sees the results of those steps and no other, in any
run, and the driver joins it before a step that requires it and before the bundle."""

from __future__ import annotations

import threading

import pytest

from extractor import cpp, python
from extractor.context import Context, ExtractOptions
from extractor.model import Contribution, Node, NodeKind, Step
from extractor.run.pipeline import extract_system
from extractor.steps import STEPS
from tests.conftest import FIXTURES

_LATER_RAN = threading.Event()


def _waits_for_a_later_step(ctx: Context) -> Contribution:
    # In the background the step after it runs meanwhile and sets the event; in order it cannot
    # have run yet. A pipeline that ran this step in order with two jobs waits 20 s, then fails.
    ran = _LATER_RAN.wait(timeout=20 if ctx.options.jobs > 1 else 0)
    return Contribution(stats={"later_ran_first": ran, "saw": sorted(ctx.results),
                               "cpp_nodes": len(ctx.result(cpp.STEP).nodes)})


def _sets_the_event(_ctx: Context) -> Contribution:
    _LATER_RAN.set()
    return Contribution()


# requires a step the driver runs (python) and one forked into a child (cpp, read back by the thread)
WAITER = Step("waiter", _waits_for_a_later_step, requires=(python.STEP, cpp.STEP), background=True)
LATER = Step("later", _sets_the_event)
REQUIRER = Step("requirer", lambda ctx: Contribution(stats={"waiter": dict(ctx.result(WAITER).stats)}),
                requires=(WAITER,))


def _run(tmp_path, steps, jobs):
    kept: list[object] = []
    _LATER_RAN.clear()
    result = extract_system([str(FIXTURES / "mini_vllm")], steps=steps, keep=kept,
                            options=ExtractOptions(jobs=jobs, cache_dir=tmp_path / f"c{jobs}", probe_structs=False))
    [ctx] = kept
    return result, ctx


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_background_step_runs_beside_the_steps_after_it_and_sees_only_what_it_requires(jobs, tmp_path):
    steps = (*STEPS, WAITER, LATER, REQUIRER)
    result, ctx = _run(tmp_path, steps, jobs)
    waited = ctx.results["waiter"].stats
    assert waited["later_ran_first"] is (jobs > 1)
    assert waited["saw"] == ["cpp", "python"]  # its requires, in any run; not the steps before it
    assert waited["cpp_nodes"] == len(ctx.results["cpp"].nodes) > 0  # the forked C++ graph, read back once
    assert ctx.results["cpp"] is not None and ctx.results["requirer"].stats["waiter"] == waited
    assert list(ctx.results) == [step.name for step in steps]  # joined late, standing in its place
    assert ("waiter" in result.log["background"]) is (jobs > 1)
    assert ("structs" in result.log["background"]) is (jobs > 1)  # the struct probes' step is one
    if jobs > 1:
        # the probes start before the python graph (they need only the forked C++ graph), the
        # waiter once the python graph is done, at the C++ graph's turn
        assert result.log["background"]["structs"]["started_during"] == "python"
        assert result.log["background"]["waiter"]["started_during"] == "cpp"


def test_reading_a_running_background_step_without_requiring_it_is_refused(tmp_path):
    def reader(ctx: Context) -> Contribution:
        try:
            return Contribution(stats={"saw": bool(ctx.result_if_run(WAITER))})
        finally:
            _LATER_RAN.set()  # let it finish: the run reports the read

    with pytest.raises(KeyError, match="runs in the background"):
        _run(tmp_path, (*STEPS, WAITER, Step("reader", reader)), 2)


def test_a_background_step_that_raises_raises_in_the_driver(tmp_path):
    def broken(_ctx: Context) -> Contribution:
        raise ValueError("a broken background step")

    with pytest.raises(ValueError, match="a broken background step"):
        _run(tmp_path, (*STEPS, Step("broken", broken, background=True)), 2)


def test_a_background_step_may_not_add_graph_parts(tmp_path):
    node = Node("x:y", NodeKind.MODULE, "y", "y", "python", "y.py", 1)

    def adds_a_node(_ctx: Context) -> Contribution:
        return Contribution(nodes=(node,))

    with pytest.raises(ValueError, match="may not add graph parts"):
        _run(tmp_path, (*STEPS, Step("grapher", adds_a_node, background=True)), 2)
