"""One side of ``archdiff compare`` as evidence: read when the argument is evidence, extracted now
when it is a system file or a source spec (through the extractor's cache, so the second run is
quick).

Extracting lives here, above the comparator, which reads evidence only. A system file is read by
the reader ``archdiff extract`` uses (extractor.presets.system), so a side extracted here is the
evidence ``archdiff extract`` writes for the same argument, build context included."""

from __future__ import annotations

from pathlib import Path

from comparator.inputs import evidence_path
from extractor.errors import UserInputError
from extractor.evidence.read import Evidence, evidence_from_json, load_evidence
from extractor.run.progress import Progress


def load_side(arg: str, cache_dir: Path | None = None, jobs: int = 1, progress: Progress | None = None) -> Evidence:
    """The evidence that ``arg`` names, as records.

    ``arg`` is, in the order tried: an ``evidence.json`` file (any ``.json``); a directory that
    contains ``evidence.json``; a system file (YAML: ``name``, ``version``, ``sources`` and an
    optional ``build``); any other source spec (``pypi:vllm==0.10.2``, a git URL, a source
    directory, an archive), extracted now.
    """
    text = arg.strip()
    if not text:
        raise UserInputError("empty comparison side: give an evidence.json, a directory or a source spec")
    if (path := evidence_path(text)) is not None:
        if progress is not None:
            progress.phase("reading evidence")
        return load_evidence(path)
    return extract_side(text, cache_dir, jobs, progress)


def check_side(arg: str) -> None:
    """Refuse ``arg`` now if it cannot be a side: a spec of no known form, a path that is not there,
    a package version the index does not have. ``compare A B`` checks both sides before it spends
    minutes extracting A only to find that B does not exist."""
    from extractor.acquire.sources import check_available, parse_spec
    from extractor.buildsettings import BuildSettings
    from extractor.presets import system_or_sources

    text = arg.strip()
    if not text:
        raise UserInputError("empty comparison side: give an evidence.json, a directory or a source spec")
    if evidence_path(text) is not None:
        return
    specs, _name, _version, _build = system_or_sources((text,), "", "", BuildSettings())
    for raw in specs:
        check_available(parse_spec(raw))


def extract_side(arg: str, cache_dir: Path | None = None, jobs: int = 1, progress: Progress | None = None,
                 name: str = "", version: str = "") -> Evidence:
    """A system file or a source spec, extracted as ``archdiff extract ARG [--name NAME] [--version
    VERSION]`` extracts it."""
    # Imported here: reading an evidence file must not pay for the whole pipeline's imports.
    from extractor.buildsettings import BuildSettings
    from extractor.context import ExtractOptions
    from extractor.presets import system_or_sources
    from extractor.run.memo import keep_unwritten
    from extractor.run.pipeline import extract_system

    specs, name, version, build = system_or_sources((arg,), name, version, BuildSettings())
    options = ExtractOptions(jobs=max(1, jobs), cache_dir=cache_dir, build=build)
    result = extract_system(specs, name=name, version=version, options=options, progress=progress)
    keep_unwritten()  # no evidence.json is written here: the memo file from the bytes, on a thread
    if progress is not None:
        progress.phase("reading evidence")
    return evidence_from_json(result.bundle, "extracted evidence")
