"""What a run reports while it works: the interface the pipeline calls and a display implements.

Kept apart from the pipeline (and free of imports) so that the command line can draw progress
without importing the whole extractor first.
"""

from __future__ import annotations

from collections.abc import Sequence


class Progress:
    """The pipeline's progress calls, each a no-op here: the CLI draws them on a terminal
    (archdiff/progress.py), tests and library callers ignore them."""

    def section(self, label: str) -> None:
        """What the work below is for: a comparison side, a release, a system of a battle."""

    def plan(self, phases: Sequence[str]) -> None:
        """The phases this run will go through, in order (a display may number them)."""

    def phase(self, name: str, total: int | None = None) -> None:
        """A phase begins; ``total``: the items it will :meth:`advance` through, if it counts any."""

    def advance(self, n: int = 1) -> None:
        """``n`` more items of the current phase are done."""
