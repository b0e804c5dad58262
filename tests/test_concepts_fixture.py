"""Concept detection on the handwritten mini_vllm package, and the detectors file's schema check."""

from __future__ import annotations

from pathlib import Path

import pytest
from handmade_context import build_context

from extractor.concepts import (DETECTORS_FILE, cap_evidence, extract_concepts, load_detectors,
                                match_detectors, resolve_relative)
from extractor.context import SourceFile
from extractor.errors import UserInputError
from extractor.model import Language

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "mini_vllm"


@pytest.fixture(scope="module")
def concepts():
    ctx = build_context({"": FIXTURE})
    return {c.id: c for c in extract_concepts(ctx).records}


def hits(concept) -> set[tuple[str, int, str]]:
    return {(e.path, e.line, e.matched) for e in concept.evidence}


def test_priority_queue_from_python_heap_and_cpp_std(concepts):
    assert hits(concepts["priority-queue"]) == {
        ("mini_vllm/core/scheduler.py", 20, "heapq.heappush"),
        ("mini_vllm/core/scheduler.py", 29, "heapq.heappop"),
        ("csrc/shm_transport.cpp", 27, "std::priority_queue"),
    }


def test_shared_memory_cuda_ipc_and_pinned_memory(concepts):
    assert hits(concepts["shared-memory"]) == {
        ("mini_vllm/distributed/parallel_state.py", 19, "multiprocessing.shared_memory.SharedMemory"),
        ("csrc/shm_transport.cpp", 16, "shm_open"),
        ("csrc/shm_transport.cpp", 33, "/dev/shm"),
    }
    assert ("csrc/shm_transport.cpp", 23, "cudaIpcGetMemHandle") in hits(concepts["cuda-ipc"])
    assert hits(concepts["pinned-memory"]) == {("mini_vllm/core/block_pool.py", 19, "pin_memory=True")}


def test_name_rules_and_symbol_rules(concepts):
    assert ("mini_vllm/entrypoints/api_server.py", 21, "fastapi.responses.StreamingResponse") in hits(concepts["streaming"])
    assert ("mini_vllm/core/block_pool.py", 13, "BlockPool") in hits(concepts["paged-kv-cache"])
    assert ("mini_vllm/distributed/parallel_state.py", 14, "torch.distributed.all_reduce") in hits(concepts["nccl-collectives"])


def test_tests_directory_is_not_evidence(concepts):
    # tests/check_scheduler.py calls heapq.heappush too; a test is not the system's mechanism
    assert all(not e.path.startswith("tests/") for c in concepts.values() for e in c.evidence)
    assert "speculative-decoding" not in concepts  # nothing in the fixture looks like it


def test_evidence_is_sorted_and_capped_but_counts_stay(tmp_path):
    data = DETECTORS_FILE.read_text().replace("evidence_per_concept: 25", "evidence_per_concept: 1")
    custom = tmp_path / "detectors.yaml"
    custom.write_text(data)
    ctx = build_context({"": FIXTURE}, options={"detectors": str(custom)})
    pq = {c.id: c for c in extract_concepts(ctx).records}["priority-queue"]
    assert pq.count == 3 and pq.files == 2
    assert len(pq.evidence) == 1


def test_cap_spreads_evidence_over_files():
    found = [("a.py", i, "x", "names") for i in range(1, 6)] + [("b.py", 3, "x", "names")]
    assert cap_evidence(found, 3) == [("a.py", 1, "x", "names"), ("a.py", 2, "x", "names"), ("b.py", 3, "x", "names")]


def _py(rel: str, module: str) -> SourceFile:
    return SourceFile(rel, rel, "", Language.PYTHON, "", 0, {}, module=module)


def test_relative_names_resolve_against_the_module():
    runner = _py("src/pkg/v1/worker/runner.py", "pkg.v1.worker.runner")  # a src/ layout: src is no package
    assert resolve_relative("..core.block_pool.BlockPool", runner) == "pkg.v1.core.block_pool.BlockPool"
    assert resolve_relative(".utils", _py("pkg/sub/__init__.py", "pkg.sub")) == "pkg.sub.utils"
    assert resolve_relative("heapq.heappush", _py("pkg/x.py", "pkg.x")) == "heapq.heappush"


@pytest.mark.parametrize("text, key", [
    ("version: 1\nconcepts:\n  - id: a\n    title: A\n    match: {names: ['(unclosed']}\n", "concepts[0].match.names[0]"),
    ("version: 1\nconcepts:\n  - id: a\n    match: {}\n", "concepts[0].title"),
    ("version: 1\nconcepts:\n  - id: a\n    title: A\n    match: {nmes: ['x']}\n", "concepts[0].match.nmes"),
    ("version: one\nconcepts: []\n", "version"),
    ("version: 1\nconcepts: [\n", "detectors.yaml:"),
])
def test_a_malformed_detectors_file_is_one_line_naming_file_and_key(tmp_path, text, key):
    path = tmp_path / "detectors.yaml"
    path.write_text(text)
    with pytest.raises(UserInputError) as err:
        load_detectors(path)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("detectors.yaml") or message.startswith(str(path))
    assert key in message


def test_shipped_detectors_load():
    ids = [d.id for d in load_detectors().detectors]
    assert len(ids) == len(set(ids))
    assert {"priority-queue", "shared-memory", "cuda-ipc", "pinned-memory", "paged-kv-cache", "streaming"} <= set(ids)


def test_a_block_manager_is_paged_kv_cache_evidence_only_when_its_name_says_so():
    """Memory pools, CUDA VMM allocators (Triton's `CudaBlockManager`) and storage layers name their
    own blocks' managers: Triton was said to share vLLM's paged KV cache on that one class."""
    names = ["CudaBlockManager", "BlockManager", "KVBlockManager", "PagedBlockManager", "KVCacheManager"]
    texts = [(f"f{i}", name, i, name) for i, name in enumerate(names)]
    found = {e.matched for d, e in match_detectors(load_detectors(), ["symbols"], lambda _kind: texts)
             if d.id == "paged-kv-cache"}
    assert found == {"KVBlockManager", "PagedBlockManager", "KVCacheManager"}


def test_an_event_loop_run_from_a_thread_or_from_cpp_is_an_async_runtime():
    """Triton's Python API hands coroutines to a loop (`asyncio.run_coroutine_threadsafe`, results in an
    `asyncio.Queue`) and its Python backend's stub runs one from C++ (`py::module_::import("asyncio")
    .attr("new_event_loop")()`): the report said only vLLM had an async runtime."""
    names = ["asyncio.run_coroutine_threadsafe", "asyncio.Queue", "asyncio.get_running_loop", "asyncio.sleep",
             "asyncio.iscoroutine"]
    texts = {"names": [(f"n{i}", name, i, name) for i, name in enumerate(names)],
             "strings": [("stub.cc", "asyncio", 916, "asyncio"), ("x.py", "asyncio_mode", 3, "asyncio_mode")]}
    found = {e.matched for d, e in match_detectors(load_detectors(), ["names", "strings"], lambda kind: texts[kind])
             if d.id == "async-runtime"}
    assert found == {"asyncio.run_coroutine_threadsafe", "asyncio.Queue", "asyncio.get_running_loop", "asyncio"}


def test_continuous_batching_from_the_budgets_of_an_iteration():
    """SGLang schedules by `max_prefill_tokens` and `max_running_requests` (TGI by
    `max_batch_total_tokens`): the report said only vLLM batched continuously."""
    attrs = ["max_prefill_tokens", "max_running_requests", "max_batch_total_tokens", "max_batch_size"]
    texts = [(f"a{i}", name, i, name) for i, name in enumerate(attrs)]
    found = {e.matched for d, e in match_detectors(load_detectors(), ["attrs"], lambda _kind: texts)
             if d.id == "continuous-batching"}
    assert found == {"max_prefill_tokens", "max_running_requests", "max_batch_total_tokens"}
