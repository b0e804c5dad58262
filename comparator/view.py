"""What the renderers know of an evidence kind: its name, where it stands, how its records read
back from the findings, and how it formats them. The computing half is
:class:`comparator.kind.EvidenceKind`, which extends this one; the two are apart so that the
renderers (``render_markdown``, ``render_html``) import nothing of the extractor.

A kind's types are stated once, as the parameters of the class it extends
(``class LayersKind(EvidenceKind[LayerSide, LayersSection, LayersRelease])``): the section and
release types are read from there (:meth:`KindView.__init_subclass__`), and decide how
:meth:`read_section` and :meth:`read_release` turn the findings' JSON back into the kind's records.
A kind without parameters reads its JSON as it is (``Any``); ``None`` says the kind has no such part.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from comparator.codec import from_json
from comparator.records import Head

Section = TypeVar("Section")
Release = TypeVar("Release")


class KindView(Generic[Section, Release]):
    """The rendering half of an evidence kind. Labels arrive escaped for the format at hand."""

    key: ClassVar[str] = ""  # its section of the findings, and the anchor of its part of the HTML page
    title: ClassVar[str] = ""  # the section's name in the page's table of contents
    # Where its release changes stand in the release section and takeaways: lower comes first.
    release_rank: ClassVar[int] = 100
    # The types of its section and of its part of ``findings["release"]``, from the class's parameters.
    section_type: ClassVar[Any] = Any
    release_type: ClassVar[Any] = Any

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):
            origin = typing.get_origin(base)
            if not (isinstance(origin, type) and issubclass(origin, KindView)):
                continue
            # by the parameters' names: EvidenceKind's are (Summary, Section, Release), this class's (Section, Release)
            given = {var.__name__: arg for var, arg in zip(getattr(origin, "__parameters__", ()), typing.get_args(base))}
            for name, attribute in (("Section", "section_type"), ("Release", "release_type")):
                if name in given and not isinstance(given[name], TypeVar):
                    setattr(cls, attribute, given[name])

    def read_section(self, findings: Mapping[str, Any]) -> Section | None:
        """The kind's section of ``findings`` (JSON) as its records; None when the findings have none."""
        if self.key not in findings or self.section_type is type(None):
            return None
        value: Section = from_json(self.section_type, findings[self.key], f"findings.{self.key}")
        return value

    def read_release(self, release: Mapping[str, Any]) -> Release | None:
        """The kind's part of ``findings["release"]`` (its keys of that object) as its record; None
        for a kind that reports no release changes."""
        if self.release_type is type(None):
            return None
        value: Release = from_json(self.release_type, release, "findings.release")
        return value

    def markdown(self, section: Section, la: str, lb: str) -> list[str]:
        return []

    def html(self, section: Section, la: str, lb: str) -> str:
        return ""

    def release_markdown(self, release: Release, la: str, lb: str) -> list[str]:
        return []

    def release_html(self, release: Release, la: str, lb: str) -> str:
        return ""


K = TypeVar("K", bound=KindView[Any, Any])


def release_order(kinds: Sequence[K]) -> list[K]:
    """The kinds in release-section order: what breaks importers first, then the ABI, dashboards, drift."""
    return sorted(kinds, key=lambda k: k.release_rank)  # stable: equal ranks keep the registry's order


def read_head(findings: Mapping[str, Any]) -> Head:
    """The findings' head (systems, takeaways, differences, the cut) as records."""
    head: Head = from_json(Head, findings, "findings")
    return head
