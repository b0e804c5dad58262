"""Curated comparisons ("battles"): YAML presets shipped beside this module, or a user's own file;
and system files (one system: what ``archdiff extract`` and ``compare`` take as a side).

A preset names two or more systems, each a name, a version and its source specs (git URL with
``@ref``, directory, ``pypi:name==version`` or archive, as the acquire step understands them), and
optionally the build context its struct probes need (``build:``: ``headers_from``,
``include_dirs``, ``defines``, ``compile_commands``; see extractor.buildsettings). A system file
is one such entry on its own.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path

from extractor.acquire.sources import default_label
from extractor.buildsettings import BUILD_SCHEMA, BuildSettings, build_settings_from, merge
from extractor.support.datafile import load_data_file
from extractor.errors import UserInputError

PRESETS_DIR = Path(__file__).parent
NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")

SYSTEM_SCHEMA = {
    "name": str,
    "version": str,
    "sources": [(str, {"label": str, "spec": str})],
    "build?": BUILD_SCHEMA,
}
PRESET_SCHEMA = {
    "name": str,
    "title": str,
    "description?": str,
    "systems": [SYSTEM_SCHEMA],
}


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class SystemSpec:
    name: str
    version: str
    sources: tuple[str, ...]  # source specs, in the order the preset lists them
    labels: tuple[str, ...] = ()  # one per source: the path prefix of that source ("" when alone)
    build: BuildSettings = BuildSettings()  # what struct probes compile the headers with

    def specs(self) -> list[str]:
        """The source specs with their labels, as ``extract_system`` takes them."""
        labels = [*self.labels, *[""] * len(self.sources)]
        return [f"{label}={spec}" if label else spec for spec, label in zip(self.sources, labels)]


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
    data = load_data_file(path, PRESET_SCHEMA)
    file = path.name
    if not NAME.fullmatch(data["name"]):
        raise UserInputError(f"{file}: name: {data['name']!r} must be lower-case letters, digits, '.', '_' or '-'")
    if len(data["systems"]) < 2:
        raise UserInputError(f"{file}: systems: a preset compares at least two systems, found {len(data['systems'])}")
    systems = [_system(entry, file, f"systems[{i}].", path.parent) for i, entry in enumerate(data["systems"])]
    return Preset(data["name"], data["title"], data.get("description", "").strip(), tuple(systems), str(path))


def load_system_file(path: Path | str) -> SystemSpec:
    """One system from a YAML file with ``name``, ``version``, ``sources`` and optionally ``build``."""
    path = Path(path)
    return _system(load_data_file(path, SYSTEM_SCHEMA), path.name, "", path.parent)


def system_or_sources(sources: Sequence[str], name: str, version: str, build: BuildSettings
                      ) -> tuple[tuple[str, ...], str, str, BuildSettings]:
    """What ``archdiff extract SOURCE...`` extracts: a single SOURCE that is a system file gives its
    specs, its name and version (unless given) and its build settings extended by ``build``; any
    other SOURCE list is taken as it is."""
    if len(sources) == 1 and sources[0].endswith((".yaml", ".yml")) and Path(sources[0]).is_file():
        system = load_system_file(sources[0])
        return tuple(system.specs()), name or system.name, version or system.version, merge(system.build, build)
    return tuple(sources), name, version, build


def _system(entry: dict, file: str, where: str, base: Path) -> SystemSpec:
    if not entry["sources"]:
        raise UserInputError(f"{file}: {where}sources: at least one source spec is needed")
    specs, labels = [], []
    for j, source in enumerate(entry["sources"]):
        spec, label = (source, "") if isinstance(source, str) else (source["spec"], source["label"])
        if not spec.strip():
            raise UserInputError(f"{file}: {where}sources[{j}]: empty source spec")
        specs.append(spec)
        labels.append(label or (default_label(spec) if len(entry["sources"]) > 1 else ""))
    if len(set(labels)) != len(labels):
        raise UserInputError(f"{file}: {where}sources: labels must differ between sources "
                             f"(got {', '.join(labels)}); give each a label")
    return SystemSpec(entry["name"], entry["version"], tuple(specs), tuple(labels),
                      build_settings_from(entry.get("build"), base))

