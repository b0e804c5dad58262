"""What an API diff finds: one typed record per change, with the rule that decided it."""

from __future__ import annotations

import dataclasses

from comparator.apidiff.rules import RULES, TITLES, BreakageKind
from extractor.model import Location

__all__ = ["RULES", "TITLES", "Breakage", "BreakageKind"]


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Breakage:
    """One change of a symbol between two releases, breaking or not, with where and how much used."""

    path: str  # the symbol as users spell it: "vllm.entrypoints.llm.LLM.generate", "triton::core::Model"
    kind: BreakageKind
    subject: str = ""  # the parameter, base or overload concerned; "" for the symbol itself
    old: str = ""  # the old value as text (a kind, a default, an annotation)
    new: str = ""
    breaking: bool = False
    why: str = ""  # why it is breaking, or why not
    old_location: Location | None = None
    new_location: Location | None = None
    uses: int = 0  # places in the old release that call, subclass or import the symbol
    symbol: str = ""  # graph id (old side when it is gone, else new)
    language: str = ""
    old_symbol: str = ""  # graph id in the old release (another id when reached through a base or a re-export)

    @property
    def title(self) -> str:
        return TITLES[self.kind]

    def explain(self) -> str:
        """One line: ``path:line: symbol(subject): kind: old -> new [breaking: rule] (N uses)``."""
        where = self.new_location or self.old_location
        at = f"{where.path}:{where.line}: " if where else ""
        subject = f"({self.subject})" if self.subject else ""
        change = " -> ".join(v for v in (self.old, self.new) if v)
        verdict = f"breaking: {self.why}" if self.breaking else f"not breaking: {self.why}"
        uses = f" ({self.uses} use{'s' if self.uses != 1 else ''} in the old release)" if self.uses else ""
        return f"{at}{self.path}{subject}: {self.title}" + (f": {change}" if change else "") + f" [{verdict}]{uses}"
