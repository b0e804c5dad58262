"""One extraction per native fixture for the Rust/Go tests (struct probes off: no headers to probe)."""

from __future__ import annotations

import ast
import functools
import hashlib
from collections.abc import Mapping
from pathlib import Path

from extractor import cpp, naming, python
from extractor.bindings import PYTHON_CPP_STEP
from extractor.context import Context, ExtractOptions, SourceFile, SourceTree
from extractor.cpp.parse import parse_source
from extractor.model import Language, ParsedFile
from extractor.run.pipeline import extract_system

from tests.apidiff_support import write_tree
from tests.conftest import FIXTURES


def written_bundle(root: Path, files: Mapping[str, str]) -> dict:
    """The evidence of a mini-repo written under ``root`` from ``files`` (relative path -> text,
    dedented), extracted with one job, no cache and no struct probes."""
    write_tree(root, dict(files))
    return extract_system([str(root)], options=ExtractOptions(jobs=1, cache_dir=None, probe_structs=False)).bundle


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


def scanned_context(fixture: Path, name: str, languages: Mapping[str, Language]) -> Context:
    """A run's context over ``fixture``'s files of the suffixes ``languages`` maps, each scanned in
    this process by the Python, C++ and bindings steps' scanners: what a binding test hands to one
    part of the bindings step."""
    files = []
    for p in sorted(fixture.rglob("*")):
        language = languages.get(p.suffix)
        if language is None:
            continue
        data = p.read_bytes()
        tree = ast.parse(data) if language is Language.PYTHON else parse_source(data, language)
        facts = {}
        for step in (python.STEP, cpp.STEP, PYTHON_CPP_STEP):
            scanner = step.scanners.get(language)
            found = scanner(ParsedFile(language, data, tree)) if scanner else None
            if found is not None:
                facts[step.name] = found
        rel = p.relative_to(fixture).as_posix()
        files.append(SourceFile(rel, rel, "", language, hashlib.sha256(data).hexdigest(), len(data), facts,
                                data.count(b"\n")))
    return Context(name, "", (SourceTree("", str(fixture), "dir", fixture),),
                   tuple(naming.with_module_names(files)), ExtractOptions())
