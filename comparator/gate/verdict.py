"""The version verdict: the bump a change needs under semantic versioning, against the bump the
tree declares.

A break of what the project promises needs a major bump; an addition a minor one; anything else a
patch. A 0.x project (semver's "anything may change" range) follows the usual 0.MINOR rule that
Cargo and most Python projects keep: a break needs a minor bump (0.4 -> 0.5), an addition a patch.
Accepted breaks are still breaks: accepting one says it is meant, not that callers survive it.
"""

from __future__ import annotations

import dataclasses
import enum

from packaging.version import Version


class Bump(int, enum.Enum):
    NONE = 0
    PATCH = 1
    MINOR = 2
    MAJOR = 3

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclasses.dataclass(frozen=True, slots=True)
class Verdict:
    old: str
    declared: str  # the tree's version ("" when it declares none)
    needed: Bump
    declared_bump: Bump | None  # None when the tree declares no version
    smallest: str  # the smallest version that makes the needed bump

    @property
    def too_small(self) -> bool:
        return self.declared_bump is not None and self.declared_bump < self.needed

    def sentence(self) -> str:
        need = f"needs a {self.needed.label} bump ({self.old} -> {self.smallest} at least)"
        if self.declared_bump is None:
            return f"The change {need}; the tree declares no version."
        verdict = "too small" if self.too_small else "enough"
        return f"The change {need}; the tree declares {self.declared} ({self.declared_bump.label}): {verdict}."


def needed_bump(old: Version, breaking: bool, additions: bool) -> Bump:
    if old.major == 0:
        return Bump.MINOR if breaking else Bump.PATCH
    return Bump.MAJOR if breaking else (Bump.MINOR if additions else Bump.PATCH)


def bump_between(old: Version, new: Version) -> Bump:
    """The bump from ``old`` to ``new``: which number moved first."""
    o, n = (old.release + (0, 0, 0))[:3], (new.release + (0, 0, 0))[:3]
    if n <= o:
        return Bump.NONE
    if n[0] > o[0]:
        return Bump.MAJOR
    return Bump.MINOR if n[1] > o[1] else Bump.PATCH


def smallest_version(old: Version, needed: Bump) -> str:
    major, minor, patch = (old.release + (0, 0, 0))[:3]
    if needed is Bump.MAJOR:
        return f"{major + 1}.0.0"
    if needed is Bump.MINOR:
        return f"{major}.{minor + 1}.0"
    return f"{major}.{minor}.{patch + 1}"


def version_verdict(old: Version, declared: Version | None, breaking: bool, additions: bool) -> Verdict:
    needed = needed_bump(old, breaking, additions)
    declared_bump = bump_between(old, declared) if declared is not None else None
    return Verdict(str(old), str(declared) if declared is not None else "", needed, declared_bump,
                   smallest_version(old, needed))
