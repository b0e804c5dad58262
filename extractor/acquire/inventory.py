"""List the files of a source tree by language, without following links out of it."""

from __future__ import annotations

import dataclasses
import os
import re
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from extractor.context import SourceTree
from extractor.model import Diagnostic, Language, Severity
from extractor.acquire.stamps import stamp_of

SUFFIXES: dict[str, Language] = {
    ".py": Language.PYTHON,
    # `.inc`, `.ipp`, `.tcc`: source included into a translation unit (rwkv.cpp's `#include
    # "rwkv_eval.inc"` holds the functions its header declares), read as the files that include them are
    **{s: Language.CPP for s in (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl", ".inc", ".ipp",
                                 ".tcc")},
    # Metal Shading Language: C++14 with address spaces and kernel qualifiers, read as C++ with those
    # blanked (extractor.cpp.parse.blank_metal_qualifiers); its kernels are kernels
    ".metal": Language.CPP,
    ".cu": Language.CUDA,
    ".cuh": Language.CUDA,
    ".rs": Language.RUST,
    ".go": Language.GO,
    ".proto": Language.PROTO,
    # SWIG's interface files (extractor.bindings.swig); `.swg` is its library's own suffix
    **{s: Language.SWIG for s in (".i", ".swig", ".swg")},
    ".yaml": Language.YAML,
    ".yml": Language.YAML,
    ".json": Language.JSON,
}
# Languages archdiff does not read, by suffix (lower case): a tree with files in one of them gets
# one info diagnostic per language (``language-not-read``), so that a part of a system written in
# one (TorchServe's Java frontend, a TypeScript UI, Thrift services) is said to be missing
# rather than silently absent. Build scripts and documents are no language of the architecture.
UNREAD_SUFFIXES: dict[str, str] = {
    ".java": "Java", ".kt": "Kotlin", ".scala": "Scala", ".groovy": "Groovy", ".cs": "C#", ".fs": "F#",
    **{s: "TypeScript" for s in (".ts", ".tsx", ".mts", ".cts")},
    **{s: "JavaScript" for s in (".js", ".jsx", ".mjs", ".cjs")},
    ".swift": "Swift", ".m": "Objective-C", ".mm": "Objective-C++", ".rb": "Ruby", ".php": "PHP",
    ".zig": "Zig", ".jl": "Julia", ".lua": "Lua", ".dart": "Dart", ".hs": "Haskell", ".ml": "OCaml",
    ".ex": "Elixir", ".exs": "Elixir", ".erl": "Erlang", ".clj": "Clojure", ".mojo": "Mojo",
    ".pyx": "Cython", ".pxd": "Cython", ".f90": "Fortran",
    ".hip": "HIP", ".cl": "OpenCL", ".glsl": "GLSL", ".wgsl": "WGSL",
    ".thrift": "Thrift", ".fbs": "FlatBuffers",
    ".td": "TableGen",  # MLIR and LLVM dialects, operations and passes: C++ generated at build time
}
READ_LANGUAGES = "Python, C/C++, CUDA, Rust, Go and Protocol Buffers"  # what a reader is told the others are not
NOT_READ = "language-not-read"  # the diagnostics' code
# Version-control metadata and caches are never part of a system's architecture.
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".tox",
                       "node_modules", ".eggs"})
MAX_FILE_BYTES = {Language.JSON: 8 * 1024**2, Language.YAML: 4 * 1024**2}
DEFAULT_MAX_FILE_BYTES = 4 * 1024**2


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class InventoryEntry:
    path: str  # label-prefixed POSIX path
    rel: str
    language: Language
    size: int
    # the file's status when it was listed (extractor.run.stamps): empty for a tree being unpacked
    stamp: tuple[int, ...] = dataclasses.field(default=(), compare=False)


def evidence_path(label: str, rel: str) -> str:
    return f"{label}/{rel}" if label else rel


def list_files(tree: SourceTree) -> tuple[list[InventoryEntry], list[Diagnostic]]:
    """Every file of a known language under ``tree.root``, sorted by path.

    Symbolic links are never followed: one that stays inside the tree is indexed at its target
    (an info diagnostic says so); one that leaves the tree is a warning.
    """
    root = tree.root
    entries: list[InventoryEntry] = []
    diagnostics: list[Diagnostic] = []
    unread: dict[str, list[str]] = {}  # language not read -> its files
    real_root = Path(os.path.realpath(root))
    # Plain strings and one lstat per file: pathlib objects per file cost more than the walk itself.
    top = os.fspath(root)

    def unlisted(err: OSError) -> None:
        # A directory that cannot be listed hides every file under it: said, like a file that
        # cannot be read (strerror only: the error's text carries the machine's absolute path).
        rel = os.fspath(err.filename or top)[len(top):].lstrip(os.sep).replace(os.sep, "/")
        diagnostics.append(Diagnostic(evidence_path(tree.label, f"{rel}/" if rel else "."), 0, "unreadable",
                                      f"directory not listed: {err.strerror or type(err).__name__}",
                                      Severity.ERROR))

    for dirpath, dirnames, filenames in os.walk(top, onerror=unlisted, followlinks=False):
        rel_dir = dirpath[len(top):].lstrip(os.sep).replace(os.sep, "/")
        prefix = f"{rel_dir}/" if rel_dir else ""
        kept = []
        for d in sorted(dirnames):
            if d in SKIP_DIRS:
                continue
            full = os.path.join(dirpath, d)
            if os.path.islink(full):
                diagnostics.append(_link_diagnostic(tree, Path(full), real_root))
                continue
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            suffix = _suffix(name)
            language = SUFFIXES.get(suffix)
            if language is None:
                if suffix in UNREAD_SUFFIXES:
                    unread.setdefault(UNREAD_SUFFIXES[suffix], []).append(prefix + name)
                if "." in name:
                    continue
                # (no suffix: a C++ header written so, below, or no file of a language read)
            rel = prefix + name
            full = os.path.join(dirpath, name)
            try:
                info = os.lstat(full)
            except OSError as err:
                # strerror only: str(err) carries the absolute path of the user's machine
                diagnostics.append(Diagnostic(evidence_path(tree.label, rel), 0, "unreadable",
                                              err.strerror or type(err).__name__, Severity.ERROR))
                continue
            if stat.S_ISLNK(info.st_mode):
                diagnostics.append(_link_diagnostic(tree, Path(full), real_root))
                continue
            if not stat.S_ISREG(info.st_mode):
                # A FIFO named x.py would block the reader forever, a device would never end.
                diagnostics.append(Diagnostic(evidence_path(tree.label, rel), 0, "not-a-file",
                                              f"{_file_type(info.st_mode)}, not a regular file: not read",
                                              Severity.WARNING))
                continue
            if language is None:
                if not _is_header_without_suffix(full):
                    continue
                language = Language.CPP
            _add(entries, diagnostics, tree, rel, language, info.st_size, stamp_of(info))
    diagnostics.extend(_not_read(tree, unread))
    diagnostics.extend(absent_submodules(tree))
    entries.sort()
    diagnostics.sort()
    return entries, diagnostics


SUBMODULE_ABSENT = "submodule-absent"  # the diagnostics' code
_GITMODULES = ".gitmodules"
_SUBMODULE = re.compile(r'^\s*\[\s*submodule\s+"([^"]*)"\s*\]\s*$')
_SETTING = re.compile(r"^\s*(path|url)\s*=\s*(.*?)\s*$")


def absent_submodules(tree: SourceTree) -> list[Diagnostic]:
    """One warning per git submodule that the tree's ``.gitmodules`` declares and the tree does not
    hold (a clone without ``--recursive``, a shallow clone, an export of the tree: flash-attention's
    vendored CUTLASS): its files are not read, so its definitions are missing and the includes into
    it unresolved; said at the line of its ``path``, rather than silently absent. A path that leaves
    the tree, or a folder reached through a link, is not looked at."""
    listed = tree.root / _GITMODULES
    try:
        if not stat.S_ISREG(os.lstat(listed).st_mode):
            return []
        text = read_regular_file(listed, 1024**2).decode("utf-8", errors="replace")
    except OSError:
        return []
    out = []
    name, url, path_at = "", "", None  # the submodule being read; (path, line) of its path setting
    for number, line in enumerate([*text.splitlines(), "[submodule \"\"]"], 1):
        header = _SUBMODULE.match(line)
        if header is not None:
            if path_at is not None and not _held(tree.root, path_at[0]):
                source = f" ({url})" if url else ""
                out.append(Diagnostic(evidence_path(tree.label, _GITMODULES), path_at[1], SUBMODULE_ABSENT,
                                      f"submodule {path_at[0]}{source} is not in the tree: none of its files "
                                      "is read, and includes into it stay unresolved", Severity.WARNING))
            name, url, path_at = header.group(1), "", None
            continue
        setting = _SETTING.match(line)
        if setting is not None and name:
            if setting.group(1) == "url":
                url = setting.group(2)
            else:
                path_at = (setting.group(2).strip('"').strip("/"), number)
    return out


def _held(root: Path, rel: str) -> bool:
    """Whether the folder ``rel`` (a submodule's path) holds anything; True for a path that is not
    one to look at (it leaves the tree, or a link is on its way)."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or ".." in parts:
        return True
    current = root
    for part in parts:
        current = current / part
        try:
            info = os.lstat(current)
        except OSError:
            return False  # not there
        if stat.S_ISLNK(info.st_mode):
            return True
        if not stat.S_ISDIR(info.st_mode):
            return True  # a file where the folder would be: not a submodule's to judge
    try:
        return any(True for _ in os.scandir(current))
    except OSError:
        return True  # not listed: the walk says so


def list_unpacked(tree: SourceTree, sizes: Mapping[str, int], head: Callable[[str], bytes]
                  ) -> tuple[list[InventoryEntry], list[Diagnostic]]:
    """What :func:`list_files` will list in ``tree`` once it is written, from the sizes of the
    regular files it is being written with, and the first bytes (``head``) of those whose names say no
    language (extractor.acquire.archives.Unpacking: a tree of regular files and folders only, so no link,
    special file or unreadable folder to report)."""
    entries: list[InventoryEntry] = []
    diagnostics: list[Diagnostic] = []
    unread: dict[str, list[str]] = {}
    for rel, size in sizes.items():
        folder, _, name = rel.rpartition("/")
        suffix = _suffix(name)
        language = SUFFIXES.get(suffix)
        if folder and not SKIP_DIRS.isdisjoint(folder.split("/")):
            continue
        if language is None and suffix in UNREAD_SUFFIXES:
            unread.setdefault(UNREAD_SUFFIXES[suffix], []).append(rel)
            continue
        if language is None:
            if "." in name or not _is_header_start(head(rel)):
                continue
            language = Language.CPP
        _add(entries, diagnostics, tree, rel, language, size)
    diagnostics.extend(_not_read(tree, unread))
    entries.sort()
    diagnostics.sort()
    return entries, diagnostics


def _add(entries: list[InventoryEntry], diagnostics: list[Diagnostic], tree: SourceTree, rel: str,
         language: Language, size: int, stamp: tuple[int, ...] = ()) -> None:
    """A regular file of a known language: listed, or said to be over its language's cap."""
    if size > file_limit(language):
        diagnostics.append(Diagnostic(evidence_path(tree.label, rel), 0, "too-large",
                                      f"{size} bytes is over the {language.value} cap; not parsed",
                                      Severity.WARNING))
    else:
        entries.append(InventoryEntry(evidence_path(tree.label, rel), rel, language, size, stamp))


def _not_read(tree: SourceTree, unread: Mapping[str, list[str]]) -> list[Diagnostic]:
    """One info diagnostic per language of ``unread`` (language -> its files' paths), at the
    top folder that holds most of its files (the tree's root when none does)."""
    out = []
    for language, paths in unread.items():
        tops = Counter(p.split("/", 1)[0] + "/" if "/" in p else "" for p in paths)
        top, held = min(tops.items(), key=lambda item: (-item[1], item[0]))
        folder = evidence_path(tree.label, top)  # named as the evidence names paths: with its source's label
        where = "" if not top else f", {held:,} of them under {folder}" if held < len(paths) else \
            f", under {folder}" if held == 1 else f", all under {folder}"
        files = "file" if len(paths) == 1 else "files"
        out.append(Diagnostic(evidence_path(tree.label, top or "."), 0, NOT_READ,
                              f"{len(paths):,} {language} {files} not read{where}", Severity.INFO))
    return out


def not_read_notes(diagnostics: Iterable[Mapping[str, Any]]) -> list[str]:
    """The lines a run ends with for the languages it did not read (info diagnostics, said all the
    same: a part of the system its evidence does not cover), from the bundle's diagnostics."""
    return [f"note: {d['message']} (archdiff reads {READ_LANGUAGES}) [{NOT_READ}]"
            for d in diagnostics if d["code"] == NOT_READ]


# The first lines of a header with no suffix (Eigen's `Eigen/Core`, libc++'s `vector`, Qt's `QtCore/QString`),
# after its comments: an include guard (`#ifndef X` / `#define X`), `#pragma once` or an `#include` of a header,
# written with no blank after the `#` (a shell script's or a Makefile's comment, `# include the flags`, is prose)
_HEADER_START = re.compile(rb"(?:\s*(?://[^\n]*|/\*.*?\*/))*\s*#(?:"
                           rb"ifndef[ \t]+(\w+)[ \t]*\r?\n\s*#[ \t]*define[ \t]+\1\b|"  # an include guard
                           rb"pragma[ \t]+once\b|include[ \t]*[<\"])", re.S)
SNIFFED_BYTES = 4096


def _is_header_without_suffix(full: str) -> bool:
    """Whether a file whose name has no suffix is a C/C++ header, by its first line of code: Eigen's
    public headers (`#include <Eigen/Core>`, which includes the rest of the library) are named so, and
    without them no file of Eigen saw the macros `Eigen/Core` includes first (`EIGEN_STRONG_INLINE`,
    `EIGEN_DEVICE_FUNC`: an ERROR node at each use, in 140 files of FastDeploy's vendored copy)."""
    try:
        fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        head = os.read(fd, SNIFFED_BYTES)
    except OSError:
        return False
    finally:
        os.close(fd)
    return _is_header_start(head)


def _is_header_start(head: bytes) -> bool:
    """Whether a file's first bytes (:data:`SNIFFED_BYTES` of them) are a C/C++ header's (:data:`_HEADER_START`):
    a file on disk's, or an archive's being unpacked (:func:`list_unpacked`)."""
    return _HEADER_START.match(head[:SNIFFED_BYTES]) is not None


class NotARegularFile(OSError):
    pass


def read_regular_file(path: Path, limit: int) -> bytes:
    """The bytes of ``path`` if it is still a regular file of at most ``limit`` bytes.

    Checked on the open descriptor (no link followed, never blocking on a FIFO), so a file swapped
    for a pipe or a device after the inventory is refused rather than read."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFile(0, f"{_file_type(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise NotARegularFile(0, f"{info.st_size} bytes, over the cap of {limit}")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(limit + 1)[:limit]
    finally:
        os.close(fd)


def file_limit(language: Language) -> int:
    return MAX_FILE_BYTES.get(language, DEFAULT_MAX_FILE_BYTES)


def _file_type(mode: int) -> str:
    for test, word in ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return word
    return "a special file"


# Build recipes named after what they build or the variant they are (TorchServe's docker/Dockerfile.cpp,
# Makefile.inc, Dockerfile.cuda): their suffix names no language of the file.
_RECIPES = frozenset({"dockerfile", "containerfile", "makefile", "gnumakefile", "jenkinsfile", "vagrantfile"})


def _suffix(name: str) -> str:
    dot = name.rfind(".")
    if dot <= 0 or name[:name.find(".")].lower() in _RECIPES:
        return ""
    return name[dot:].lower()


def _link_diagnostic(tree: SourceTree, full: Path, real_root: Path) -> Diagnostic:
    rel = full.relative_to(tree.root).as_posix()
    target = Path(os.path.realpath(full))
    if target == real_root or real_root in target.parents:
        return Diagnostic(evidence_path(tree.label, rel), 0, "symlink-inside",
                          f"symbolic link to {target.relative_to(real_root).as_posix()}: indexed there, not here",
                          Severity.INFO)
    return Diagnostic(evidence_path(tree.label, rel), 0, "symlink-outside",
                      "symbolic link leaves the source tree: not followed", Severity.WARNING)
