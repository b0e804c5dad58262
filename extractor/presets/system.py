"""A system as a user declares it: a name, a version, one or more sources and the build context
its struct probes need. One reader for a system file (one system, YAML) and for each entry of a
preset's ``systems`` list, so that every command that takes a system file (``extract``,
``compare``, ``releases``, and ``battle`` through its preset) gets the same record from it.

    name: triton                        # optional in a system file: the first source's name
    version: r25.08                     # optional in a system file: the first source's ref
    sources:                            # specs, or {label, spec}; "label=spec" works too
      - server=https://github.com/triton-inference-server/server@r25.08
      - {label: core, spec: 'https://github.com/triton-inference-server/core@r25.08'}
    build:                              # optional; see extractor.buildsettings
      include_dirs: [sdk/include]       # relative paths: relative to the file's directory
      defines: [TRITON_ENABLE_GPU]
      compile_commands: build/compile_commands.json
      headers_from: ['pypi:torch==2.8.0']

Source specs are kept as written (a local path in them is the working directory's, as on the
command line; the evidence records the spec as the user wrote it). A source of a several-source
system that has no label gets :func:`extractor.acquire.sources.default_label`, the label the
pipeline gives the same spec on the command line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from extractor.acquire.sources import default_label, split_label
from extractor.buildsettings import BUILD_SCHEMA, BuildSettings, build_settings_from, merge
from extractor.errors import UserInputError

SYSTEM_FILE_SUFFIXES = (".yaml", ".yml")

# A preset's system states what it compares; a system file may leave its name and version to the
# sources (a file for `archdiff releases` has no version: each release is one).
SYSTEM_SCHEMA = {
    "name": str,
    "version": str,
    "sources": [(str, {"label": str, "spec": str})],
    "build?": BUILD_SCHEMA,
}
SYSTEM_FILE_SCHEMA = {"name?": str, "version?": str, "sources": SYSTEM_SCHEMA["sources"], "build?": BUILD_SCHEMA}


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class SystemSpec:
    name: str  # "" when a system file leaves it to the first source
    version: str  # "" when a system file leaves it to the first source's ref
    sources: tuple[str, ...]  # source specs without their labels, in the order the file lists them
    labels: tuple[str, ...] = ()  # one per source: the path prefix of that source ("" when alone)
    build: BuildSettings = BuildSettings()  # what struct probes compile the headers with

    def specs(self) -> list[str]:
        """The source specs with their labels, as ``extract_system`` takes them."""
        labels = [*self.labels, *[""] * len(self.sources)]
        return [f"{label}={spec}" if label else spec for spec, label in zip(self.sources, labels)]


def is_system_file(arg: str) -> bool:
    """Whether a SOURCE argument names a system file (by its suffix, so that a missing file is
    reported as one, not as a spec of no known form)."""
    text = arg.strip()
    return (Path(text).suffix.lower() in SYSTEM_FILE_SUFFIXES and "://" not in text
            and not Path(text).is_dir())


def load_system_file(path: Path | str) -> SystemSpec:
    """The system a YAML file declares; a malformed file is one :class:`UserInputError` line naming
    the file and the key. Relative paths of its ``build:`` are relative to the file's directory."""
    path = Path(path)
    from extractor.support.datafile import check_data, read_yaml_file  # YAML: only for a system file

    data = read_yaml_file(path)
    if isinstance(data, dict) and "systems" in data and "sources" not in data:
        raise UserInputError(f"{path}: this is a preset (it lists systems): run `archdiff battle {path}`")
    check_data(data, SYSTEM_FILE_SCHEMA, str(path))
    # absolute: extractions may run in other processes (a Ray worker) with another working directory
    return read_system(data, str(path), "", path.absolute().parent)


def read_system(entry: Mapping[str, Any], file: str, where: str, base: Path) -> SystemSpec:
    """A schema-checked system mapping as a record; ``file`` and ``where`` (the key path up to it,
    ``systems[1].`` in a preset) name it in errors, ``base`` is the directory of its file."""
    if not entry["sources"]:
        raise UserInputError(f"{file}: {where}sources: at least one source spec is needed")
    specs, labels = [], []
    for j, source in enumerate(entry["sources"]):
        label, spec = split_label(source) if isinstance(source, str) else (source["label"], source["spec"].strip())
        if not spec:
            raise UserInputError(f"{file}: {where}sources[{j}]: empty source spec")
        specs.append(spec)
        labels.append(label or (default_label(spec) if len(entry["sources"]) > 1 else ""))
    if len(set(labels)) != len(labels):
        raise UserInputError(f"{file}: {where}sources: labels must differ between sources "
                             f"(got {', '.join(labels)}); give each a label")
    return SystemSpec(entry.get("name", ""), entry.get("version", ""), tuple(specs), tuple(labels),
                      build_settings_from(entry.get("build"), base))


def system_or_sources(sources: Sequence[str], name: str, version: str, build: BuildSettings
                      ) -> tuple[tuple[str, ...], str, str, BuildSettings]:
    """What a command given SOURCE... extracts: a single SOURCE that is a system file gives its
    specs, its name and version (unless given) and its build settings extended by ``build`` (the
    command line's); any other SOURCE list is taken as it is."""
    if len(sources) == 1 and is_system_file(sources[0]):
        system = load_system_file(sources[0].strip())
        return tuple(system.specs()), name or system.name, version or system.version, merge(system.build, build)
    return tuple(sources), name, version, build
