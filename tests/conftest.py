"""Shared fixtures. Real input (the vLLM sdists) is downloaded once into a cache that outlives
the test run (``$ARCHDIFF_TEST_CACHE``, default ``~/.cache/archdiff-tests``)."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def cache_root() -> Path:
    path = Path(os.environ.get("ARCHDIFF_TEST_CACHE", Path.home() / ".cache" / "archdiff-tests"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def sdist_root(name: str, version: str) -> Path:
    """The extracted sdist of ``name==version`` from the package index, cached between runs."""
    from extractor.acquire.sources import download_sdist  # the same code users run

    cache = cache_root()
    target = cache / f"{name}-{version}"
    if not (target / "PKG-INFO").exists():
        archive = download_sdist(name, version, cache / "sdists")
        with tarfile.open(archive) as tar:
            tar.extractall(cache, filter="data")
    return target


def vllm_sdist_root(version: str) -> Path:
    """The extracted sdist of ``vllm==version`` from the package index, cached between runs."""
    return sdist_root("vllm", version)


@pytest.fixture(scope="session")
def vllm_src() -> Path:
    """Root of the real vLLM 0.10.2 sdist (``csrc/`` and ``vllm/`` inside)."""
    return vllm_sdist_root("0.10.2")


@pytest.fixture(scope="session")
def vllm_prev_src() -> Path:
    """Root of the real vLLM 0.10.1 sdist, for release-drift tests."""
    return vllm_sdist_root("0.10.1")
