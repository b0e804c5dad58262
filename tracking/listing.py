"""The releases a SPEC has: the tags of a git repository, the sdist versions of a PyPI project, or
the versions every repository of a system file is tagged with.

    pypi:NAME                  sdists on the package index (the user's pip index configuration)
    URL (git, without @ref)    tags that are versions (``git ls-remote --tags``, archdiff's hardened git)
    system.yaml                name + sources (git URLs or pypi:NAME, no ref): a version is a release of
                               the system when every source has it (one version scheme; ``v`` prefixes
                               may differ between repositories); read by the system-file reader every
                               command uses (extractor.presets.system), ``build:`` included
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

from extractor.acquire.sources import default_label, list_git_tags, list_sdist_versions, parse_spec, split_label
from extractor.buildsettings import BuildSettings
from extractor.errors import UserInputError
from extractor.presets.system import is_system_file, load_system_file
from tracking.versions import Release, parse_version

_PYPI_PROJECT = re.compile(r"^pypi:([A-Za-z0-9][A-Za-z0-9._-]*)$")


@dataclasses.dataclass(frozen=True, slots=True)
class Tracked:
    """What a SPEC tracks: the system's name (as its evidence will carry it) and its releases."""

    spec: str
    name: str
    releases: tuple[Release, ...]
    # A system file names its system, and its evidence carries that name; a single repository or
    # project keeps the name `archdiff extract` gives it, so its evidence is the same bytes.
    evidence_name: str = ""
    build: BuildSettings = BuildSettings()  # a system file's build context, for every release


@dataclasses.dataclass(frozen=True, slots=True)
class _Source:
    label: str  # "" for a system of one source
    names: Callable[[], list[str]]  # the upstream names of its versions (tags, package versions)
    spec_for: Callable[[str], str]  # upstream name -> a spec that fetches it


def list_releases(spec: str) -> Tracked:
    """Every release of ``spec`` (pre-releases included; :func:`tracking.versions.select` filters)."""
    text = spec.strip()
    if is_system_file(text):
        system = load_system_file(Path(text))
        if not system.name:
            raise UserInputError(f"{text}: name: a system file for `archdiff releases` names its system")
        # the labels the reader gave (none for a system of one source), as `archdiff extract` on
        # the same file at one release gives them: the release's evidence is the same bytes
        sources = [_source(s, label) for s, label in zip(system.sources, system.labels)]
        return Tracked(text, system.name, tuple(_common_releases(sources)), evidence_name=system.name,
                       build=system.build)
    label, rest = split_label(text)
    source = _source(rest, label)
    project = _PYPI_PROJECT.match(rest) if rest.startswith("pypi:") else None
    name = project.group(1) if project is not None else default_label(rest)
    return Tracked(text, name, tuple(_common_releases([source])))


def _source(rest: str, label: str) -> _Source:
    if m := _PYPI_PROJECT.match(rest):
        project = m.group(1)
        return _Source(label, lambda: list_sdist_versions(project), lambda v: _labelled(label, f"pypi:{project}=={v}"))
    if rest.startswith("pypi:"):
        raise UserInputError(f"{rest!r}: give the project without a version (pypi:NAME) to track its releases")
    parsed = parse_spec(rest)
    if parsed.kind != "git":
        raise UserInputError(f"{rest!r} has no releases to list: give pypi:NAME, a git URL or a system file")
    if parsed.ref:
        raise UserInputError(f"{rest!r}: give the repository without @{parsed.ref}; its tags are the releases")
    url = parsed.location
    return _Source(label, lambda: list_git_tags(url), lambda tag: _labelled(label, f"{url}@{tag}"))


def _labelled(label: str, spec: str) -> str:
    return f"{label}={spec}" if label else spec


def _common_releases(sources: list[_Source]) -> list[Release]:
    """Versions every source has, each source fetched at its own spelling of the version."""
    per_source = []
    for source in sources:
        by_version: dict = {}
        for upstream in sorted(source.names()):
            version = parse_version(upstream)
            if version is not None:
                by_version.setdefault(version, upstream)  # "v1.0" and "1.0": the first in text order
        per_source.append(by_version)
    common = set(per_source[0]).intersection(*per_source[1:]) if per_source else set()
    return sorted(Release(v, per_source[0][v], tuple(s.spec_for(found[v]) for s, found in zip(sources, per_source)))
                  for v in common)
