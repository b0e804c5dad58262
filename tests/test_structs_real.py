"""Real input: vLLM 0.10.2's custom all-reduce header, probed with nvcc, equals pahole."""

from __future__ import annotations

import time

import pytest

from extractor.model import Language
from extractor.structs.probe import HeaderProbe, find_include_dirs, find_nvcc, probe_header
from extractor.structs.records import Method
from extractor.structs.source import find_struct_definitions
from structs_refs import run_pahole


@pytest.mark.real
def test_vllm_custom_all_reduce_structs_resolve_through_nvcc(vllm_src, tmp_path):
    assert find_nvcc(), "nvcc is required (CUDA toolkit)"
    header = vllm_src / "csrc" / "custom_all_reduce.cuh"
    probe = HeaderProbe("csrc/custom_all_reduce.cuh", header, Language.CUDA,
                        find_struct_definitions(header.read_bytes(), Language.CUDA))
    obj = tmp_path / "probe.o"
    started = time.monotonic()
    result = probe_header(probe, find_include_dirs([vllm_src]), [vllm_src], keep_object=obj)
    assert time.monotonic() - started < 120
    ours = {x.qualname: x for x in result.layouts}
    ref = run_pahole(obj, "Signal", "RankData", "RankSignals")
    for name in ("Signal", "RankData", "RankSignals"):
        mine, theirs = ours[f"vllm::{name}"], ref[name]
        assert mine.method is Method.PROBE_NVCC and mine.path == "csrc/custom_all_reduce.cuh"
        assert mine.size == theirs.size
        assert [(m.name, m.offset, m.size) for m in mine.members] == \
            [(n, o, s) for n, o, s, _b in theirs.members]
        assert mine.padding == theirs.padding
    signal = ours["vllm::Signal"]
    assert (signal.size, signal.align, signal.padding) == (2560, 128, 112)
    assert [m.offset for m in signal.members] == [0, 1152, 2304]
    assert ours["vllm::RankData"].align == ours["vllm::RankSignals"].align == 16
    assert "shared-memory" in signal.tags  # declared in custom_all_reduce.cuh
