"""One extraction per native fixture for the Rust/Go tests (struct probes off: no headers to probe)."""

from __future__ import annotations

import functools
from pathlib import Path

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system

from tests.conftest import FIXTURES


@functools.cache
def fixture_bundle(name: str) -> dict:
    return extract_system([str(FIXTURES / name)], options=ExtractOptions(jobs=1, cache_dir=None,
                                                                         probe_structs=False)).bundle


def edges(bundle: dict, kind: str) -> set[tuple[str, str]]:
    return {(e["source"], e["target"]) for e in bundle["graph"]["edges"] if e["kind"] == kind}


def nodes(bundle: dict) -> dict[str, dict]:
    return {n["id"]: n for n in bundle["graph"]["nodes"]}


def metrics_by_name(bundle: dict, language: str) -> dict[str, dict]:
    return {m["name"]: m for m in bundle["metrics"] if m["language"] == language}


def source_root(name: str) -> Path:
    return FIXTURES / name
