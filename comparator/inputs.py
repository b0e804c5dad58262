"""One side of a comparison: an evidence file, a directory holding one, a system YAML file, or a
source spec extracted on the fly (through the extractor's cache, so the second run is quick)."""

from __future__ import annotations

from pathlib import Path

from extractor.support.datafile import read_yaml_file
from extractor.errors import UserInputError
from extractor.evidence.read import Evidence, evidence_from_json, load_evidence

SYSTEM_FILE_SUFFIXES = (".yaml", ".yml")


def load_side(arg: str, cache_dir: Path | None = None, jobs: int = 1) -> Evidence:
    """The evidence that ``arg`` names, as records.

    ``arg`` is, in the order tried: an ``evidence.json`` file (any ``.json``); a directory that
    contains ``evidence.json`` (the output of ``archdiff extract``); a system file (YAML with
    ``name``, ``version`` and a ``sources`` list of specs); any other source spec
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
    if path.suffix in SYSTEM_FILE_SUFFIXES:
        name, version, specs = read_system_file(path)
        return _extract(specs, name, version, cache_dir, jobs)
    return _extract([text], "", "", cache_dir, jobs)


def read_system_file(path: Path) -> tuple[str, str, list[str]]:
    """(name, version, source specs) of a system file; a malformed file is one clear error."""
    data = read_yaml_file(path)
    if not isinstance(data, dict):
        raise UserInputError(f"{path}: a system file is a mapping with name, version and sources")
    sources = data.get("sources")
    if "systems" in data and sources is None:
        raise UserInputError(f"{path}: this is a preset (it lists systems): run `archdiff battle {path}`")
    if not isinstance(sources, list) or not sources:
        raise UserInputError(f"{path}: sources: give a non-empty list of source specs")
    specs: list[str] = []
    for i, source in enumerate(sources):
        if isinstance(source, dict) and isinstance(source.get("spec"), str):
            label = source.get("label")
            specs.append(f"{label}={source['spec']}" if label else source["spec"])
        elif isinstance(source, str) and source.strip():
            specs.append(source.strip())
        else:
            raise UserInputError(f"{path}: sources[{i}]: a spec string or {{label, spec}}")
    for key in ("name", "version"):
        if key in data and not isinstance(data[key], (str, int, float)):
            raise UserInputError(f"{path}: {key}: must be a string")
    return str(data.get("name", "") or ""), str(data.get("version", "") or ""), specs


def _extract(specs: list[str], name: str, version: str, cache_dir: Path | None, jobs: int) -> Evidence:
    # Imported here: reading an evidence file must not pay for the whole pipeline's imports.
    from extractor.context import ExtractOptions
    from extractor.run.pipeline import extract_system

    options = ExtractOptions(jobs=max(1, jobs), cache_dir=cache_dir)
    result = extract_system(specs, name=name, version=version, options=options)
    return evidence_from_json(result.bundle, "extracted evidence")
