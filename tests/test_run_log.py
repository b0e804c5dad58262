"""The run log says where a run's time went, and the pipeline's speed-ups change no byte.

The keys are documented in docs/performance.md; this checks they are there and add up, that a run
with some files cached and some parsed (facts decoded ahead, between the pool's results) writes the
bytes a cold run writes, that the cyclic garbage collector is back on after a run and, in
the workers, paused while an item is worked on and collecting what the item left between items,
and that a run leaves no cycle of its own for it to find."""

from __future__ import annotations

import dataclasses
import gc
import json
import shutil

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
from extractor.steps import STEPS
from tests.conftest import FIXTURES

STEP_KEYS = {"wall_s", "cpu_s", "workers_cpu_s", "peak_rss_mb"}


def test_the_run_log_has_every_key_and_they_add_up(tmp_path):
    result = extract_system([str(FIXTURES / "pysample")], options=ExtractOptions(jobs=2, cache_dir=tmp_path / "c",
                                                                                   probe_structs=False))
    log = result.log
    assert log["run_log_version"] == 1 and log["jobs"] == 2 and log["executor"] == "local"
    assert log["order"][:5] == ["acquire", "inventory", "read", "memo", "scan"] and log["order"][-1] == "bundle"
    assert set(log["steps"]) == set(log["order"]) and all(set(v) == STEP_KEYS for v in log["steps"].values())
    assert log["files"] == {"total": 6, "parsed": 6, "cached": 0, "bundle_from_cache": False}
    assert log["workers"]["bytes_sent"] == sum(p.stat().st_size for p in (FIXTURES / "pysample").rglob("*.py"))
    assert log["workers"]["bytes_received"] > 0 and log["bundle_bytes"] == len(result.data)
    assert 0 < log["pool_s"] <= log["steps"]["scan"]["wall_s"] + 0.01
    # the driver's own CPU in the window, within the scan phase's
    assert 0 < log["pool_cpu_s"] <= log["steps"]["scan"]["cpu_s"] + 0.01
    # the python graph, the layers and the bundle went to fork_map's children (-j2), the forkable steps to children
    # of their own: the driver's waits for them are not serial either; so may the files' digests (read) and the
    # held facts' writer (joined in memo)
    forked = ("read", "memo", "python", "layers", "bundle", *(step.name for step in STEPS if step.forkable))
    assert 0 < log["fork_map_s"] <= sum(log["steps"][name]["wall_s"] for name in forked) + 0.01
    assert abs(log["serial_s"] - (log["wall_s"] - log["pool_s"] - log["fork_map_s"])) < 0.01
    assert log["workers_cpu_s"] > 0  # the workers' CPU reaches the driver once they have ended
    # a high-water mark, taken at each phase's end ("memo" runs twice, and so does a forkable step:
    # forked, then read back; their last end counts)
    twice = {"memo", *(step.name for step in STEPS if step.forkable)}
    peaks = [log["steps"][name]["peak_rss_mb"] for name in log["order"] if name not in twice]
    assert 0 < peaks[0] and peaks == sorted(peaks)
    assert all(log["steps"][name]["peak_rss_mb"] <= log["peak_rss_mb"] for name in twice)
    # a forkable step's phase opens when it is forked: the C++ graph's before the python graph's
    assert log["order"].index("cpp") < log["order"].index("python")
    assert log["workers_peak_rss_mb"] > 0
    assert log["step_details"]["structs"]["compiler_processes"] == 0  # no struct probes in this run
    assert result.timings == {name: step["wall_s"] for name, step in log["steps"].items()} or all(
        abs(result.timings[name] - step["wall_s"]) < 0.001 for name, step in log["steps"].items())
    json.dumps(log)  # what the CLI writes as run-log.json

    again = extract_system([str(FIXTURES / "pysample")], options=ExtractOptions(jobs=2, cache_dir=tmp_path / "c",
                                                                                  probe_structs=False))
    assert again.log["files"] == {"total": 6, "parsed": 0, "cached": 6, "bundle_from_cache": True}
    assert again.log["pool_s"] == again.log["pool_cpu_s"] == 0 and "scan" not in again.log["steps"]
    assert again.log["fork_map_s"] == 0  # the bundle from the memo: no step ran, nothing forked


def test_some_files_cached_some_parsed_gives_the_cold_bytes(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "mini_vllm", tree)
    options = ExtractOptions(jobs=2, cache_dir=tmp_path / "warm", probe_structs=False)
    extract_system([str(tree)], name="s", version="1", options=options)
    changed = sorted(tree.rglob("*.py"), key=lambda p: -p.stat().st_size)[:2]  # two different contents
    for path in changed:
        path.write_text(path.read_text() + "\n\ndef added_later():\n    return 1\n")
    partial = extract_system([str(tree)], name="s", version="1", options=options)
    assert partial.log["files"]["parsed"] == 2 and partial.log["files"]["cached"] > 2
    cold = extract_system([str(tree)], name="s", version="1",
                          options=ExtractOptions(jobs=1, cache_dir=tmp_path / "cold", probe_structs=False))
    assert partial.data == cold.data


def test_the_collector_is_off_only_during_a_run(tmp_path):
    assert gc.isenabled()
    extract_system([str(FIXTURES / "pysample")], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c",
                                                                          probe_structs=False))
    assert gc.isenabled()
    gc.disable()
    try:
        extract_system([str(FIXTURES / "pysample")], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "d",
                                                                              probe_structs=False))
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


def test_a_run_leaves_no_cycle_of_its_own(tmp_path):
    """The collector is off during a run and what survives it is frozen, so a cycle among the
    driver's objects (a closure that calls itself holds itself) would keep everything it reaches
    for the life of the process: once more for each system or release extracted."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection finds stays in gc.garbage, to be named
    try:
        extract_system([str(FIXTURES / "mini_vllm")], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c",
                                                                             probe_structs=False))
        gc.collect()
        ours = sorted({type(o).__qualname__ for o in gc.garbage
                       if type(o).__module__.split(".")[0] in {"extractor", "archdiff"}})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert ours == []


def test_a_kept_run_is_left_to_its_caller_and_writes_the_same_bytes(tmp_path):
    """``keep`` (the console script's extract, which ends without freeing) holds the run's context:
    every file's facts and every step's result, not freed when the run returns."""
    kept: list[object] = []
    options = ExtractOptions(jobs=1, cache_dir=tmp_path / "c", probe_structs=False)
    run = extract_system([str(FIXTURES / "pysample")], options=options, keep=kept)
    freed = extract_system([str(FIXTURES / "pysample")],
                           options=dataclasses.replace(options, cache_dir=tmp_path / "d"))
    assert run.data == freed.data
    [ctx] = kept
    assert len(ctx.files) == run.summary["files"] > 0
    assert set(ctx.results) == {step.name for step in STEPS}


def test_workers_collect_the_cycles_an_item_leaves_between_items():
    from extractor.run.workerpool import run_guarded

    gc.disable()  # as the driver has it during a run
    try:
        results = list(run_guarded(["cycles", "check"], _cycles_then_check, jobs=1, timeout=60))
    finally:
        gc.enable()
    assert results == [(False, True), (False, True)]  # paused in each item, the driver's objects frozen
    assert _LEFT_BEHIND[0] is None  # in this process: nothing ran here


class _Cyclic:
    """An object in a reference cycle with itself: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


_LEFT_BEHIND: list = [None]  # in the worker: a weak reference to the first item's garbage cycle


def _cycles_then_check(item: str) -> tuple[bool, bool]:
    """``cycles``: leave garbage cycles, more than the youngest generation's threshold; ``check``:
    whether the first one is gone (the collector ran between the two items)."""
    import weakref

    if item == "cycles":
        garbage = [_Cyclic() for _ in range(2 * gc.get_threshold()[0])]
        _LEFT_BEHIND[0] = weakref.ref(garbage[0])
        del garbage
        return gc.isenabled(), gc.get_freeze_count() > 0
    return gc.isenabled(), _LEFT_BEHIND[0] is not None and _LEFT_BEHIND[0]() is None


def test_the_structs_step_counts_its_compilers_and_cached_probes(tmp_path):
    options = ExtractOptions(jobs=2, cache_dir=tmp_path / "c")
    first = extract_system([str(FIXTURES / "structs")], options=options).log["step_details"]["structs"]
    assert first["compiler_processes"] > 0 and first["headers_cached"] == 0 and first["probe_s"] > 0
    # facts and bundle gone, the probe results kept: every header from the probe cache, no compiler
    (tmp_path / "c" / "facts.sqlite").unlink()
    again = extract_system([str(FIXTURES / "structs")], options=options).log["step_details"]["structs"]
    assert again["compiler_processes"] == 0 and again["headers_cached"] > 0
