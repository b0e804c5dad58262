"""The build context a user gives struct probes: what their own build compiles headers with.

Four settings, from the command line (``--include-dir``, ``--define``, ``--compile-commands``,
``--headers-from``), a system file or a preset (a ``build:`` mapping with the same four keys):

- ``include_dirs``: directories searched for ``#include``s, after the source roots';
- ``defines``: ``NAME`` or ``NAME=VALUE``, for every probe;
- ``compile_commands``: a CMake ``compile_commands.json``; each header is probed with the include
  directories, defines and language standard of its nearest translation unit
  (extractor.structs.buildcontext);
- ``headers_from``: ``pypi:NAME[==VERSION]`` or an installed distribution whose include
  directories join ``include_dirs`` (extractor.acquire.headers).

These are the user's own configuration: the probe guard allows what they name, as it allows the
compiler's system directories, and nothing else outside the source roots.

:func:`extractor.acquire.headers.resolve_build_settings` downloads what ``headers_from`` names and fingerprints every input
once per run; the fingerprint is part of the extraction's cache key and of each probe's.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


BUILD_SCHEMA = {"include_dirs?": [str], "defines?": [str], "compile_commands?": str, "headers_from?": [str]}


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class HeaderPackage:
    """The include directories one ``--headers-from`` spec supplies."""

    spec: str  # as the user wrote it
    name: str
    version: str
    source: str  # the wheel's file name, or "installed"
    sha256: str  # of the wheel; of the installed distribution's RECORD
    include_dirs: tuple[Path, ...]

    def record(self) -> dict[str, object]:
        """What the evidence says about it (no machine paths)."""
        return {"spec": self.spec, "name": self.name, "version": self.version, "source": self.source,
                "sha256": self.sha256, "include_dirs": len(self.include_dirs)}


@dataclasses.dataclass(frozen=True, slots=True)
class BuildSettings:
    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    compile_commands: str = ""
    headers_from: tuple[str, ...] = ()
    # filled by resolve_build_settings
    packages: tuple[HeaderPackage, ...] = ()
    fingerprint: str = ""

    @property
    def empty(self) -> bool:
        return not (self.include_dirs or self.defines or self.compile_commands or self.headers_from)

    def all_include_dirs(self) -> tuple[Path, ...]:
        """User directories first, then each package's, in the order given."""
        dirs = [Path(d) for d in self.include_dirs]
        for p in self.packages:
            dirs.extend(p.include_dirs)
        return tuple(dict.fromkeys(dirs))

    def record(self) -> dict[str, Any]:
        """What the evidence says about the build context (no machine paths)."""
        return {"include_dirs": len(self.include_dirs), "defines": list(self.defines),
                "compile_commands": bool(self.compile_commands),
                "headers_from": [p.record() for p in self.packages]}


def build_settings_from(data: Mapping[str, Any] | None, base: Path | None = None) -> BuildSettings:
    """BuildSettings from a system file's or preset's ``build:`` mapping (already schema-checked);
    relative paths are relative to ``base`` (the file's directory)."""
    if not data:
        return BuildSettings()

    def path(p: str) -> str:
        return str((base / p) if base is not None and not os.path.isabs(p) else Path(p))

    return BuildSettings(tuple(path(p) for p in data.get("include_dirs", ())), tuple(data.get("defines", ())),
                         path(data["compile_commands"]) if data.get("compile_commands") else "",
                         tuple(data.get("headers_from", ())))


def merge(first: BuildSettings, second: BuildSettings) -> BuildSettings:
    """``first`` (a file's settings) extended by ``second`` (the command line's)."""
    return BuildSettings(first.include_dirs + second.include_dirs, first.defines + second.defines,
                         second.compile_commands or first.compile_commands,
                         tuple(dict.fromkeys(first.headers_from + second.headers_from)))
