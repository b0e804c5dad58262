"""The role taxonomy (roles.yaml, or the user's own file): roles, their signals and the stack order."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from extractor.support.datafile import Regex, load_data_file, parsed_once
from extractor.errors import UserInputError
from extractor.layers.records import UNASSIGNED

TAXONOMY_FILE = Path(__file__).with_name("roles.yaml")
SIGNAL_KINDS = ("path", "import", "include", "name", "call", "base", "symbol", "method", "defines", "concept",
                "language", "generator")

TAXONOMY_SCHEMA = {
    "version": int,
    "threshold": float,
    "stack": [(str, [str])],
    "package?": {"min_modules": int, "min_share": float, "min_directory_share?": float},
    "roles": [{
        "id": str,
        "title": str,
        "apart?": bool,
        "yields_to_package?": bool,
        "description?": str,
        "corroborated_by?": [str],
        "signals": [{"kind": str, "weight": float, "any": [Regex], "min?": int, "top?": bool, "corroborates?": bool,
                     "strong?": [Regex]}],
        "ruled_out_by?": [{"kind": str, "any": [Regex], "min?": int}],
    }],
}


@dataclasses.dataclass(frozen=True, slots=True)
class Signal:
    kind: str
    weight: float
    pattern: re.Pattern[str]
    min: int = 1  # distinct matching items needed: one incidental torch.ops call is not a kernel module
    top: bool = False  # path only: the word must name a directory at the top of the source ("tools/")
    corroborates: bool = False  # counts as agreement whatever the role's corroborated_by says ("lora/")
    # The matches that are strong evidence for the role ("__global__" kernels, "sm90" tags): a role
    # resting on one path word or one symbol never beats one that a strong match backs. None: no
    # match is.
    strong: re.Pattern[str] | None = None

    def is_strong(self, matched: str) -> bool:
        return self.strong is not None and self.strong.fullmatch(matched) is not None


@dataclasses.dataclass(frozen=True, slots=True)
class Role:
    id: str
    title: str
    apart: bool
    signals: tuple[Signal, ...]
    # Kinds of signal that corroborate the role beside path words. None: the file does not say, so
    # any kind but path corroborates and a path-only assignment stands, marked as such. A set: path
    # words alone are too weak for this role and such an assignment falls to the next role.
    corroborated_by: frozenset[str] | None = None
    ruled_out_by: tuple[Signal, ...] = ()  # any of these firing takes the role out of the running
    yields_to_package: bool = False  # on path words alone, a module gives way to its package's role

    def corroborates(self, kind: str) -> bool:
        return kind in self.corroborated_by if self.corroborated_by is not None else kind != "path"


@dataclasses.dataclass(frozen=True, slots=True)
class PackageRule:
    """When a module without corroborated evidence of its own takes its package's role."""

    min_modules: int  # corroborated modules beside it that hold the role
    min_share: float  # the role must hold more than this share of the lines of all corroborated modules beside it
    min_directory_share: float = 0.0  # ... and at least this share of all the lines in the directory


@dataclasses.dataclass(frozen=True, slots=True)
class Taxonomy:
    roles: tuple[Role, ...]  # in precedence order: ties go to the earlier role
    threshold: float
    stack: tuple[tuple[str, ...], ...]  # levels, top (client) to bottom (hardware); roles in one level are peers
    package: PackageRule | None = None  # None: modules keep what their own evidence gives

    def role(self, role_id: str) -> Role | None:
        return next((r for r in self.roles if r.id == role_id), None)


def load_taxonomy(path: Path | str = TAXONOMY_FILE) -> Taxonomy:
    """The taxonomy in ``path``; the same object again for the same content (a process that
    extracts several systems or releases parses roles.yaml once, and scoring's index of the
    taxonomy's patterns, keyed by the object, keeps what it matched)."""
    return _load_taxonomy(path)


def _parse_taxonomy(path: Path) -> Taxonomy:
    data = load_data_file(path, TAXONOMY_SCHEMA)
    roles, seen = [], set()
    for i, entry in enumerate(data["roles"]):
        if entry["id"] in seen or entry["id"] == UNASSIGNED:
            raise UserInputError(f"{path}: roles[{i}].id: {entry['id']!r} is used twice or reserved")
        seen.add(entry["id"])
        signals = [_signal(path, f"roles[{i}].signals[{j}]", sig) for j, sig in enumerate(entry["signals"])]
        ruled_out = [_signal(path, f"roles[{i}].ruled_out_by[{j}]", sig)
                     for j, sig in enumerate(entry.get("ruled_out_by", ()))]
        corroborated_by = entry.get("corroborated_by")
        for j, kind in enumerate(corroborated_by or ()):
            _check_kind(path, f"roles[{i}].corroborated_by[{j}]", kind)
        roles.append(Role(entry["id"], entry["title"], bool(entry.get("apart", False)), tuple(signals),
                          frozenset(corroborated_by) if corroborated_by is not None else None, tuple(ruled_out),
                          bool(entry.get("yields_to_package", False))))
    levels = []
    for i, level in enumerate(data["stack"]):
        level = (level,) if isinstance(level, str) else tuple(level)
        for role_id in level:
            if role_id not in seen:
                raise UserInputError(f"{path}: stack[{i}]: {role_id!r} is not a role id defined under roles")
        levels.append(level)
    package = data.get("package")
    return Taxonomy(tuple(roles), float(data["threshold"]), tuple(levels),
                    PackageRule(package["min_modules"], float(package["min_share"]),
                                float(package.get("min_directory_share", 0.0))) if package else None)


_load_taxonomy = parsed_once(_parse_taxonomy)


def _signal(path: Path, where: str, entry: dict) -> Signal:
    _check_kind(path, f"{where}.kind", entry["kind"])
    strong = entry.get("strong")
    return Signal(entry["kind"], float(entry.get("weight", 0.0)),
                  re.compile("|".join(f"(?:{p})" for p in entry["any"])), entry.get("min", 1),
                  bool(entry.get("top", False)), bool(entry.get("corroborates", False)),
                  re.compile("|".join(f"(?:{p})" for p in strong)) if strong else None)


def _check_kind(path: Path, where: str, kind: str) -> None:
    if kind not in SIGNAL_KINDS:
        raise UserInputError(f"{path}: {where}: {kind!r} is not one of {', '.join(SIGNAL_KINDS)}")
