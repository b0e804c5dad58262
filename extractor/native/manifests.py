"""Build manifests that name code: Cargo.toml (crates), go.mod (Go module paths), pyproject.toml
(the Python name of a maturin/PyO3 extension).

Rust and Go name their code after these files, not after directories: a crate's items are
``<crate>::<module path under src/>``, a Go package is ``<module path>/<directory under go.mod>``.
The manifests are read (never executed) from the source trees with tomllib and a line reader for
go.mod; a manifest that does not parse is a diagnostic and the files under it fall back to names
built from their directories.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import posixpath
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from extractor.acquire.inventory import SKIP_DIRS, evidence_path, read_regular_file
from extractor.model import Diagnostic, Severity

MANIFEST_NAMES = frozenset({"Cargo.toml", "go.mod", "pyproject.toml"})
# Build output and vendored dependency trees hold other projects' manifests.
_SKIP = SKIP_DIRS | {"target", "vendor", "testdata"}
_GO_MODULE = re.compile(r"^\s*module\s+\"?([^\s\"/][^\s\"]*)\"?\s*$", re.M)
_MAX_MANIFEST_BYTES = 1024 * 1024


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Crate:
    dir: str  # label-prefixed directory of its Cargo.toml ("" for a lone source's root)
    name: str  # the package name with '-' as '_': the crate's id prefix
    lib: str  # the library name other crates `use` it by
    lib_path: str  # file of the library root, relative to ``dir`` ("src/lib.rs" by default)
    line: int = 1


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class GoModule:
    dir: str
    path: str  # the module path of its go.mod
    line: int = 1


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class PythonExtension:
    dir: str
    module: str  # dotted Python name of the native module (`tokenizers.tokenizers`)
    manifest: str  # the Cargo.toml it builds, relative to ``dir`` ("" for the default)


@dataclasses.dataclass(frozen=True, slots=True)
class Manifests:
    crates: tuple[Crate, ...] = ()
    go_modules: tuple[GoModule, ...] = ()
    extensions: tuple[PythonExtension, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()

    def crate_of(self, path: str) -> Crate | None:
        return _deepest(self.crates, path)

    def go_module_of(self, path: str) -> GoModule | None:
        return _deepest(self.go_modules, path)


def _deepest(items: Iterable, path: str):
    best = None
    for item in items:
        if item.dir == "" or path.startswith(item.dir + "/"):
            if best is None or len(item.dir) > len(best.dir):
                best = item
    return best


def read_manifests(sources: Iterable[tuple[str, Path]]) -> Manifests:
    """Every Cargo.toml, go.mod and pyproject.toml under the (label, root) source trees."""
    crates, modules, extensions, diagnostics = [], [], [], []
    for label, root in sources:
        for rel in _manifest_files(Path(root)):
            where = evidence_path(label, rel)
            directory = posixpath.dirname(where)
            try:
                text = read_regular_file(Path(root) / rel, _MAX_MANIFEST_BYTES).decode("utf-8")
            except OSError as err:  # strerror only: str(err) names a path of this machine
                diagnostics.append(Diagnostic(where, 0, "manifest-unreadable", err.strerror or type(err).__name__,
                                              Severity.WARNING))
                continue
            except UnicodeDecodeError as err:
                diagnostics.append(Diagnostic(where, 0, "manifest-unreadable", f"not UTF-8: {err.reason}",
                                              Severity.WARNING))
                continue
            name = posixpath.basename(rel)
            if name == "go.mod":
                m = _GO_MODULE.search(text)
                if m:
                    modules.append(GoModule(directory, m.group(1), text.count("\n", 0, m.start()) + 1))
                continue
            try:
                doc = tomllib.loads(text)
            except tomllib.TOMLDecodeError as err:
                diagnostics.append(Diagnostic(where, 0, "manifest-unparsable", f"TOML: {err}", Severity.WARNING))
                continue
            if name == "Cargo.toml":
                crate = _crate(directory, doc)
                if crate is not None:
                    crates.append(crate)
            else:
                ext = _extension(directory, doc)
                if ext is not None:
                    extensions.append(ext)
    return Manifests(tuple(sorted(crates)), tuple(sorted(modules)), tuple(sorted(extensions)),
                     tuple(sorted(diagnostics)))


def manifests_digest(sources: Iterable[tuple[str, Path]]) -> str:
    """A hash of every manifest's path and content: manifests name code, so the evidence depends on
    them as much as on the files that are parsed (the pipeline keys its bundle memo with this)."""
    h = hashlib.sha256()
    for label, root in sources:
        for rel in _manifest_files(Path(root)):
            h.update(f"{evidence_path(label, rel)}\0".encode())
            try:
                h.update(hashlib.sha256(read_regular_file(Path(root) / rel, _MAX_MANIFEST_BYTES)).digest())
            except OSError as err:
                h.update(f"unreadable:{err.strerror}".encode())
    return h.hexdigest()


def _manifest_files(root: Path) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP and not (Path(dirpath) / d).is_symlink())
        for name in sorted(filenames):
            if name in MANIFEST_NAMES and not (Path(dirpath) / name).is_symlink():
                found.append((Path(dirpath) / name).relative_to(root).as_posix())
    return found


def _crate(directory: str, doc: dict) -> Crate | None:
    package = doc.get("package")
    if not isinstance(package, dict) or not isinstance(package.get("name"), str):
        return None  # a workspace root only
    name = package["name"].replace("-", "_")
    lib = doc.get("lib")
    lib_name = lib.get("name") if isinstance(lib, dict) else None
    lib_path = lib.get("path") if isinstance(lib, dict) else None
    return Crate(directory, name, (lib_name if isinstance(lib_name, str) else name).replace("-", "_"),
                 posixpath.normpath(lib_path if isinstance(lib_path, str) else "src/lib.rs"))


def _extension(directory: str, doc: dict) -> PythonExtension | None:
    """`[tool.maturin] module-name` (and the Cargo.toml it builds: `manifest-path`)."""
    tool = doc.get("tool")
    maturin = tool.get("maturin") if isinstance(tool, dict) else None
    if not isinstance(maturin, dict):
        return None
    module = maturin.get("module-name")
    manifest = maturin.get("manifest-path") if isinstance(maturin.get("manifest-path"), str) else ""
    if not isinstance(module, str):
        project = doc.get("project")
        name = project.get("name") if isinstance(project, dict) else None
        module = name.replace("-", "_") if isinstance(name, str) else ""
    if not module:
        return None
    return PythonExtension(directory, module, posixpath.normpath(manifest) if manifest else "")


def system_manifests(ctx: Any) -> Manifests:
    """The manifests of a pipeline context's sources; steps read them through ``ctx.once`` so that
    the first one to need them reads them for all."""
    return read_manifests((s.label, s.root) for s in ctx.sources)
