"""The CMake files of a system's trees, read once each: struct probes' `option(...)`s
(:mod:`extractor.structs.conditions`) and the compile definitions that name pybind11 modules
(:mod:`extractor.bindings.cmake_defines`) read the same files. The latter reads the Makefiles too."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

_CMAKE_FILES = ("CMakeLists.txt",)
_MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
_MAX_CMAKE_FILES = 400  # per tree: a bound on what a system of many sub-projects makes a run read


def cmake_files(roots: Iterable[tuple[Path, str]]) -> Iterator[tuple[str, str]]:
    """(evidence path, text) of every CMakeLists.txt and *.cmake under the roots (``(root, source
    label)``), by path within each root, at most 400 a root; links and unreadable files left out."""
    return _build_files(roots, lambda p: p.name in _CMAKE_FILES or p.suffix == ".cmake")


def makefiles(roots: Iterable[tuple[Path, str]]) -> Iterator[tuple[str, str]]:
    """(evidence path, text) of every Makefile (``makefile``, ``GNUmakefile``) and *.mk under the
    roots, as :func:`cmake_files` gives CMake's."""
    return _build_files(roots, lambda p: p.name in _MAKEFILES or p.suffix == ".mk")


def _build_files(roots: Iterable[tuple[Path, str]], wanted: Callable[[Path], bool]) -> Iterator[tuple[str, str]]:
    for root, label in roots:
        files = sorted(p for p in Path(root).rglob("*") if wanted(p)
                       and p.is_file() and not p.is_symlink())[:_MAX_CMAKE_FILES]
        for path in files:
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            rel = path.relative_to(root).as_posix()
            yield (f"{label}/{rel}" if label else rel), text
