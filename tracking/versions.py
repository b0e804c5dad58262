"""Which tags or package versions are releases, in what order, and which of them a run takes.

A tag is a release when it parses as a PEP 440 version (``packaging.version``), with one leading
``v`` allowed (``v0.10.2``); anything else (``latest``, ``r25.08``, ``nightly-2024``) is not one.
Releases sort as versions, not as text (``0.10.1.1`` before ``0.10.2``, ``0.9`` before ``0.10``).
Pre- and development releases are taken only when asked for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from packaging.version import InvalidVersion, Version

from extractor.errors import UserInputError


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Release:
    """One release: its version (sorts), the name it has upstream (a tag or a package version) and
    the source specs that fetch it."""

    key: Version
    name: str = dataclasses.field(compare=False)
    specs: tuple[str, ...] = dataclasses.field(compare=False)

    @property
    def slug(self) -> str:
        """The release's folder name under OUT: the normalised version (``v0.10.2`` -> ``0.10.2``)."""
        return str(self.key)


def parse_version(text: str) -> Version | None:
    """The version a tag or package version names, or None when it names none."""
    candidate = text.strip()
    if candidate[:1] in ("v", "V") and candidate[1:2].isdigit():
        candidate = candidate[1:]
    if not candidate[:1].isdigit():
        return None  # packaging also accepts "v1" and odd spellings; a release tag starts with its number
    try:
        return Version(candidate)
    except InvalidVersion:
        return None


def user_version(text: str, option: str) -> Version:
    version = parse_version(text)
    if version is None:
        raise UserInputError(f"{option} {text!r} is not a version (PEP 440, e.g. 0.10.2 or v0.10.2)")
    return version


def select(releases: Sequence[Release], *, since: str = "", until: str = "", last: int = 0,
           pre: bool = False) -> list[Release]:
    """The releases a run takes: from ``since`` to ``until`` (both included), pre-releases only when
    ``pre``, then the ``last`` N of those (0: all)."""
    low = user_version(since, "--from") if since else None
    high = user_version(until, "--to") if until else None
    if low is not None and high is not None and low > high:
        raise UserInputError(f"--from {since} comes after --to {until}")
    chosen = [r for r in sorted(releases)
              if (pre or not r.key.is_prerelease)
              and (low is None or r.key >= low) and (high is None or r.key <= high)]
    if last:
        chosen = chosen[-last:]
    return chosen
