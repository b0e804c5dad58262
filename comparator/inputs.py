"""One side of a comparison: an evidence file, a directory holding one, a system YAML file, or a
source spec extracted on the fly (through the extractor's cache, so the second run is quick)."""

from __future__ import annotations

from pathlib import Path

from extractor.errors import UserInputError
from extractor.evidence.read import Evidence, evidence_from_json, load_evidence


def load_side(arg: str, cache_dir: Path | None = None, jobs: int = 1) -> Evidence:
    """The evidence that ``arg`` names, as records.

    ``arg`` is, in the order tried: an ``evidence.json`` file (any ``.json``); a directory that
    contains ``evidence.json`` (the output of ``archdiff extract``); a system file (YAML with
    ``name``, ``version``, a ``sources`` list of specs and an optional ``build``); any other source spec
    (``pypi:vllm==0.10.2``, a git URL, a source directory, an archive), extracted now.
    """
    text = arg.strip()
    if not text:
        raise UserInputError("empty comparison side: give an evidence.json, a directory or a source spec")
    path = Path(text)
    if path.suffix == ".json":
        return load_evidence(path)
    if path.is_dir() and (path / "evidence.json").is_file():
        return load_evidence(path / "evidence.json")
    return _extract(text, cache_dir, jobs)


def _extract(arg: str, cache_dir: Path | None, jobs: int) -> Evidence:
    """A system file (read as ``archdiff extract`` reads it, build context included) or a spec."""
    # Imported here: reading an evidence file must not pay for the whole pipeline's imports.
    from extractor.buildsettings import BuildSettings
    from extractor.context import ExtractOptions
    from extractor.presets import system_or_sources
    from extractor.run.pipeline import extract_system

    specs, name, version, build = system_or_sources((arg,), "", "", BuildSettings())
    options = ExtractOptions(jobs=max(1, jobs), cache_dir=cache_dir, build=build)
    result = extract_system(specs, name=name, version=version, options=options)
    return evidence_from_json(result.bundle, "extracted evidence")
