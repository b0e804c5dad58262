"""The Triton-like fixture (three repositories) is layered the way a Triton engineer would."""

from __future__ import annotations

import pytest

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
from tests.conftest import FIXTURES


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    root = FIXTURES / "triton_like"
    specs = [f"{name}={root / name}" for name in ("server", "core", "common")]
    cache = tmp_path_factory.mktemp("cache")
    return extract_system(specs, name="tritonish", options=ExtractOptions(jobs=1, cache_dir=cache,
                                                                          probe_structs=False)).bundle


def _role_of(bundle) -> dict[str, str]:
    roles = {}
    for layer in bundle["layers"]:
        for module in layer["modules"]:
            roles[module if isinstance(module, str) else module["path"]] = layer["role"]
    return roles


@pytest.mark.parametrize("path, role", [
    ("server/src/http_server.cc", "ingress"),
    ("server/src/grpc/grpc_server.cc", "ingress"),
    ("core/src/dynamic_batch_scheduler.cc", "scheduling"),
    ("server/src/shared_memory_manager.cc", "memory"),
    ("core/src/metrics.cc", "telemetry"),
    ("common/src/logging.cc", "telemetry"),
    ("core/src/cuda_memory_kernels.cu", "kernels"),
    ("server/src/command_line_parser.cc", "configuration"),
    # the in-process API: a header declaring an extern "C" API, and a pybind11 module
    ("core/include/triton/core/tritonserver.h", "ingress"),
    ("server/src/python/frontend_pybind.cc", "ingress"),
])
def test_triton_like_files_get_the_role_a_reader_expects(bundle, path, role):
    assert _role_of(bundle)[path] == role


def test_triton_like_concepts_and_share_assigned(bundle):
    assert {"shared-memory", "cuda-ipc", "dynamic-batching"} <= {c["id"] for c in bundle["concepts"]}
    assert bundle["stats"]["layers"]["assigned_share"] >= 0.8
