"""Concepts on the real vLLM 0.10.2 sdist: evidence a reader can open and agree with."""

from __future__ import annotations

import pytest

from extractor.concepts import extract_concepts
from extractor.context import ExtractOptions
from tests.conftest import cache_root, extract_real_with_context

pytestmark = pytest.mark.real


@pytest.fixture(scope="module")
def vllm_concepts(vllm_src):
    """The pipeline's context of vLLM 0.10.2, its files' facts from the cache the other real tests
    share (struct probes play no part in concepts), and the concepts found in it."""
    _extraction, ctx = extract_real_with_context(
        vllm_src, options=ExtractOptions(jobs=2, cache_dir=cache_root() / "archdiff", probe_structs=False))
    return ctx, {c.id: c for c in extract_concepts(ctx).records}


def source_line(ctx, path: str, line: int) -> str:
    file = next(f for f in ctx.files if f.path == path)
    return ctx.abs_path(file).read_text(encoding="utf-8", errors="replace").splitlines()[line - 1]


@pytest.mark.parametrize("concept, must_include", [
    ("priority-queue", "vllm/v1/core/sched/request_queue.py"),
    ("shared-memory", "vllm/distributed/device_communicators/shm_broadcast.py"),
    ("cuda-ipc", "csrc/custom_all_reduce.cu"),
    ("paged-kv-cache", "vllm/v1/core/block_pool.py"),
    ("streaming", "vllm/entrypoints/openai/api_server.py"),
])
def test_concept_evidence_opens_at_the_matched_text(vllm_concepts, concept, must_include):
    ctx, concepts = vllm_concepts
    found = concepts[concept]
    assert must_include in {e.path for e in found.evidence}
    for e in found.evidence:
        text = source_line(ctx, e.path, e.line)
        # The resolved name's last part is what a reader sees on that line (heappush, SharedMemory,
        # shm_open, BlockPool, "text/event-stream").
        shown = e.matched.split("=")[0].replace("::", ".").split(".")[-1]
        assert shown in text, f"{e.path}:{e.line} does not show {e.matched!r}: {text!r}"


def test_priority_queue_is_the_scheduler_heap(vllm_concepts):
    ctx, concepts = vllm_concepts
    lines = {(e.path, e.matched) for e in concepts["priority-queue"].evidence}
    assert ("vllm/v1/core/sched/request_queue.py", "heapq.heappush") in lines
    assert concepts["priority-queue"].count >= 5


def test_no_evidence_comes_from_tests_or_benchmarks(vllm_concepts):
    _ctx, concepts = vllm_concepts
    for c in concepts.values():
        assert not any(e.path.startswith(("tests/", "benchmarks/", "examples/")) for e in c.evidence), c.id
