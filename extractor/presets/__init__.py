"""Curated comparisons ("battles"): YAML presets shipped beside this module, or a user's own file.

A preset names two or more systems, each a name, a version and its source specs (git URL with
``@ref``, directory, ``pypi:name==version`` or archive, as the acquire step understands them), and
optionally the build context its struct probes need (``build:``: ``headers_from``,
``include_dirs``, ``defines``, ``compile_commands``; see extractor.buildsettings). Each entry is
read by the same reader as a system file, which is one such entry on its own
(:mod:`extractor.presets.system`).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from extractor.errors import UserInputError
from extractor.presets.system import (SYSTEM_FILE_SUFFIXES, SYSTEM_SCHEMA, SystemSpec, is_system_file,
                                      load_system_file, read_system, system_or_sources)

__all__ = ["PRESETS_DIR", "PRESET_SCHEMA", "SYSTEM_FILE_SUFFIXES", "Preset", "SystemSpec", "is_system_file",
           "list_presets", "load_preset", "load_system_file", "system_or_sources"]

PRESETS_DIR = Path(__file__).parent
NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")

PRESET_SCHEMA = {
    "name": str,
    "title": str,
    "description?": str,
    "systems": [SYSTEM_SCHEMA],
}


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Preset:
    name: str
    title: str
    description: str
    systems: tuple[SystemSpec, ...]
    path: str = ""  # the file it came from (for messages); "" for presets built in code


def list_presets() -> tuple[Preset, ...]:
    """The presets shipped with archdiff, sorted by name."""
    return tuple(sorted((load_preset(p) for p in PRESETS_DIR.glob("*.yaml")), key=lambda p: p.name))


def load_preset(name_or_path: str | Path) -> Preset:
    """A shipped preset by name (``vllm-vs-triton``) or a user's preset file by path."""
    path = Path(name_or_path)
    looks_like_name = NAME.fullmatch(str(name_or_path)) and path.suffix not in (".yaml", ".yml")
    if looks_like_name and not path.exists():
        path = PRESETS_DIR / f"{name_or_path}.yaml"
        if not path.exists():
            known = ", ".join(sorted(p.stem for p in PRESETS_DIR.glob("*.yaml")))
            raise UserInputError(f"no preset named {str(name_or_path)!r}; known presets: {known} "
                                 f"(or pass the path of a preset YAML file)")
    from extractor.support.datafile import load_data_file  # YAML: only for a preset

    data = load_data_file(path, PRESET_SCHEMA)
    file = path.name
    if not NAME.fullmatch(data["name"]):
        raise UserInputError(f"{file}: name: {data['name']!r} must be lower-case letters, digits, '.', '_' or '-'")
    if len(data["systems"]) < 2:
        raise UserInputError(f"{file}: systems: a preset compares at least two systems, found {len(data['systems'])}")
    systems = [read_system(entry, file, f"systems[{i}].", path.parent) for i, entry in enumerate(data["systems"])]
    return Preset(data["name"], data["title"], data.get("description", "").strip(), tuple(systems), str(path))
