"""The role taxonomy (roles.yaml, or the user's own file): roles, their signals and the stack order."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from extractor.datafile import Regex, load_data_file
from extractor.errors import UserInputError
from extractor.layers.records import UNASSIGNED

TAXONOMY_FILE = Path(__file__).with_name("roles.yaml")
SIGNAL_KINDS = ("path", "import", "include", "name", "base", "symbol", "defines", "concept", "language")

TAXONOMY_SCHEMA = {
    "version": int,
    "threshold": float,
    "stack": [(str, [str])],
    "roles": [{
        "id": str,
        "title": str,
        "apart?": bool,
        "description?": str,
        "signals": [{"kind": str, "weight": float, "any": [Regex], "min?": int}],
    }],
}



@dataclasses.dataclass(frozen=True, slots=True)
class Signal:
    kind: str
    weight: float
    pattern: re.Pattern[str]
    min: int = 1  # distinct matching items needed: one incidental torch.ops call is not a kernel module


@dataclasses.dataclass(frozen=True, slots=True)
class Role:
    id: str
    title: str
    apart: bool
    signals: tuple[Signal, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Taxonomy:
    roles: tuple[Role, ...]  # in precedence order: ties go to the earlier role
    threshold: float
    stack: tuple[tuple[str, ...], ...]  # levels, top (client) to bottom (hardware); roles in one level are peers

    def role(self, role_id: str) -> Role | None:
        return next((r for r in self.roles if r.id == role_id), None)


def load_taxonomy(path: Path | str = TAXONOMY_FILE) -> Taxonomy:
    path = Path(path)
    data = load_data_file(path, TAXONOMY_SCHEMA)
    roles, seen = [], set()
    for i, entry in enumerate(data["roles"]):
        if entry["id"] in seen or entry["id"] == UNASSIGNED:
            raise UserInputError(f"{path}: roles[{i}].id: {entry['id']!r} is used twice or reserved")
        seen.add(entry["id"])
        signals = []
        for j, sig in enumerate(entry["signals"]):
            if sig["kind"] not in SIGNAL_KINDS:
                raise UserInputError(f"{path}: roles[{i}].signals[{j}].kind: {sig['kind']!r} is not one of "
                                     f"{', '.join(SIGNAL_KINDS)}")
            signals.append(Signal(sig["kind"], float(sig["weight"]),
                                  re.compile("|".join(f"(?:{p})" for p in sig["any"])), sig.get("min", 1)))
        roles.append(Role(entry["id"], entry["title"], bool(entry.get("apart", False)), tuple(signals)))
    levels = []
    for i, level in enumerate(data["stack"]):
        level = (level,) if isinstance(level, str) else tuple(level)
        for role_id in level:
            if role_id not in seen:
                raise UserInputError(f"{path}: stack[{i}]: {role_id!r} is not a role id defined under roles")
        levels.append(level)
    return Taxonomy(tuple(roles), float(data["threshold"]), tuple(levels))
