"""What one header's probe compiles with: include directories, defines, language and standard.

Sources, in order: the user's build settings for every probe (``--include-dir``, ``--define``,
``--headers-from``); then, with ``--compile-commands``, the flags of the header's nearest
translation unit — the compile-database entry reached in the fewest ``#include`` steps up from
the header (the graph's resolved includes), else the one sharing the longest directory with it.

Only flags that change what a header means are taken from a compile database: ``-I``/``-isystem``/
``-iquote``/``-idirafter``, ``-D``/``-U``, ``-std=``, and target flags (``-m64``, ``-march=``,
``-mavx2``, ...) that decide ``#ifdef __AVX512F__``-style branches. Anything else (plugins,
``-specs=``, response files, output options) is ignored and counted. Include directories are the
build machine's: one that exists here is used as is (the user's own build tree, with its generated
headers); one that does not is mapped into the source root whose files the database names (the
database's ``/home/u/vllm/csrc/x.cu`` is the tree's ``csrc/x.cu``, so ``/home/u/vllm/csrc`` is
the tree's ``csrc``), or dropped.

The language a header is probed as: CUDA for ``.cuh`` (and for a header whose nearest translation
units are all ``.cu``, or that uses CUDA qualifiers where no other translation unit includes it),
C for a ``.h`` that a C translation unit includes (one that C++ also includes is C first, C++ if
that fails; one no translation unit includes: C when it has no C++ in a project of C sources),
else C++. The standard: the translation unit's
``-std=``, else the one the project's build files name (``CMAKE_CXX_STANDARD 17``,
``C_STANDARD 11``, ``-std=gnu99``), else GNU C++17 for C++ and the compiler's default for C.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import posixpath
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from extractor.buildsettings import BuildSettings
from extractor.errors import UserInputError

C, CXX, CUDA = "c", "c++", "cuda"
_TU_SUFFIXES = {".c": C, ".cc": CXX, ".cpp": CXX, ".cxx": CXX, ".c++": CXX, ".cu": CUDA, ".m": C}
_PATH_FLAGS = ("-I", "-isystem", "-iquote", "-idirafter", "--include-path")
_MACHINE = re.compile(r"^-m(?:64|32|x32|arch=[\w.+-]+|tune=[\w.+-]+|(?:no-)?(?:avx\w*|sse\w*|fma\w*|f16c|bmi\w*|"
                      r"popcnt|lzcnt|amx[\w-]*|vsx|altivec|neon|fp16\w*))$")
_NVCC_KEEP = frozenset({"--expt-relaxed-constexpr", "--expt-extended-lambda", "-expt-relaxed-constexpr",
                        "-extended-lambda", "--extended-lambda"})
_CXX_ONLY = re.compile(rb"^\s*(?:namespace\b|template\s*<|class\s+\w+\s*[:{]|extern\s+\"C\+\+\")|::|\bnullptr\b",
                       re.M)
_CUDA_MARKS = re.compile(rb"\b__(?:global|device|shared|constant)__\b")
_STD_PATTERNS = (
    (re.compile(rb"CMAKE_CXX_STANDARD\s+(\d+)"), CXX), (re.compile(rb"\bCXX_STANDARD\s+(\d+)"), CXX),
    (re.compile(rb"CMAKE_C_STANDARD\s+(\d+)"), C), (re.compile(rb"\bC_STANDARD\s+(\d+)"), C),
    (re.compile(rb"-std=((?:gnu|c)\+\+\w+)"), CXX), (re.compile(rb"-std=((?:gnu|c)(?:\d\w*|1x|2x))\b"), C),
    (re.compile(rb"cpp_std\s*=\s*'?((?:gnu|c)\+\+\w+)"), CXX), (re.compile(rb"c_std\s*=\s*'?((?:gnu|c)\d\w*)"), C),
)
_BUILD_FILES = ("CMakeLists.txt", "Makefile", "meson.build", "configure.ac", "setup.py")
_MAX_BUILD_FILE = 1 << 20


@dataclasses.dataclass(frozen=True, slots=True)
class ProbeFlags:
    """Compile options of one probe beyond archdiff's own (``-g``, the tree's include dirs)."""

    include_dirs: tuple[Path, ...] = ()
    defines: tuple[str, ...] = ()  # "-DNAME=1" / "-UNAME", in order
    std: str = ""  # "c++17", "gnu11"; "" for the default
    language: str = ""  # C, CXX, CUDA; "" decides by the file name
    machine: tuple[str, ...] = ()  # target flags (-mavx2, -march=...), nvcc's --expt-* flags
    origin: str = ""  # the translation unit whose flags these are (evidence path), "" if none

    def key(self) -> str:
        """A stable text for cache keys (machine paths included: they name the user's headers)."""
        return json.dumps([[str(d) for d in self.include_dirs], list(self.defines), self.std, self.language,
                           list(self.machine), self.origin])


@dataclasses.dataclass(frozen=True, slots=True)
class CompileEntry:
    path: str  # evidence path of the translation unit
    language: str
    flags: ProbeFlags


def read_compile_commands(path: Path, files: Mapping[str, Path], roots: Sequence[tuple[Path, str]]
                          ) -> tuple[dict[str, CompileEntry], dict[str, int]]:
    """Entries of a compile database for the files of the system (evidence path -> file on disk),
    and counts (entries, matched, include dirs mapped/dropped, flags ignored)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise UserInputError(f"--compile-commands {path}: not a readable JSON compile database ({err})") from None
    if not isinstance(data, list):
        raise UserInputError(f"--compile-commands {path}: a compile database is a JSON list of entries")
    by_suffix: dict[str, list[str]] = collections.defaultdict(list)
    for evidence_path, disk in files.items():
        parts = Path(disk).as_posix().split("/")
        for i in range(len(parts) - 1, 0, -1):
            by_suffix["/".join(parts[i:])].append(evidence_path)
    stats: collections.Counter[str] = collections.Counter(entries=len(data))
    raw: list[tuple[str, str, list[str], str]] = []  # (evidence path, directory, argv, file)
    prefixes: dict[str, str] = {}  # build-machine prefix -> this machine's directory
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
            raise UserInputError(f"--compile-commands {path}: entry {i} has no \"file\"")
        directory = str(entry.get("directory", ""))
        if isinstance(entry.get("arguments"), list):
            argv = [str(a) for a in entry["arguments"]]
        else:
            try:
                argv = shlex.split(str(entry.get("command", "")))
            except ValueError:
                stats["entries_unparsable"] += 1
                continue
        file = posixpath.normpath(posixpath.join(directory, entry["file"]))
        parts = file.split("/")
        hit = ""
        for i in range(1, len(parts)):  # longest suffix first
            candidates = sorted(by_suffix.get("/".join(parts[i:]), ()))
            if candidates:
                hit = candidates[0]
                on_disk = Path(files[hit]).as_posix()
                common = "/".join(parts[i:])
                prefixes.setdefault(file[: len(file) - len(common)], on_disk[: len(on_disk) - len(common)])
                break
        if hit:
            raw.append((hit, directory, argv, file))
    stats["entries_matched"] = len(raw)
    out: dict[str, CompileEntry] = {}
    for hit, directory, argv, file in sorted(raw):
        if hit in out:
            continue  # the first entry of a file (several configurations): deterministic
        out[hit] = _entry(hit, directory, argv, file, prefixes, stats)
    return out, dict(stats)


def _entry(path: str, directory: str, argv: list[str], file: str, prefixes: Mapping[str, str],
           stats: collections.Counter[str]) -> CompileEntry:
    compiler = posixpath.basename(argv[0]) if argv else ""
    language = _TU_SUFFIXES.get(posixpath.splitext(file)[1].lower(), CXX)
    if compiler.startswith("nvcc"):
        language = CUDA
    dirs: list[Path] = []
    defines: list[str] = []
    machine: list[str] = []
    std = ""
    i = 1
    while i < len(argv):
        arg = argv[i]
        value = None
        flag = next((f for f in _PATH_FLAGS if arg == f or (arg.startswith(f) and not arg.startswith(f + "-"))), None)
        if flag is not None:
            value = arg[len(flag):].lstrip("=") or (argv[i + 1] if i + 1 < len(argv) else "")
            i += 1 if arg != flag else 2
            mapped = _map_dir(value, directory, prefixes)
            if mapped is None:
                stats["include_dirs_dropped"] += 1
            else:
                dirs.append(mapped)
                stats["include_dirs_used"] += 1
            continue
        if arg in ("-D", "-U") or (arg.startswith(("-D", "-U")) and len(arg) > 2):
            value = arg[2:] or (argv[i + 1] if i + 1 < len(argv) else "")
            defines.append(arg[:2] + value)
            i += 1 if len(arg) > 2 else 2
            continue
        if arg.startswith(("-std=", "--std=")):
            std = arg.split("=", 1)[1]
        elif _MACHINE.match(arg) or arg in _NVCC_KEEP:
            machine.append(arg)
        elif arg in ("-c", "-o") or arg == file or arg.endswith(posixpath.basename(file)):
            if arg == "-o":
                i += 1
        elif arg.startswith("-"):
            stats["flags_ignored"] += 1
        i += 1
    flags = ProbeFlags(tuple(dict.fromkeys(dirs)), tuple(defines), std, language, tuple(machine), path)
    return CompileEntry(path, language, flags)


def _map_dir(value: str, directory: str, prefixes: Mapping[str, str]) -> Path | None:
    if not value:
        return None
    full = posixpath.normpath(posixpath.join(directory, value))
    if os.path.isdir(full):
        return Path(full)
    for build, here in sorted(prefixes.items(), key=lambda kv: -len(kv[0])):
        if (full + "/").startswith(build):
            candidate = Path(here + full[len(build):])
            if candidate.is_dir():
                return candidate
    return None


def nearest_translation_unit(header: str, entries: Mapping[str, CompileEntry],
                             includers: Mapping[str, Iterable[str]]) -> CompileEntry | None:
    """The compile-database entry nearest ``header``: fewest #include steps up, then the longest
    shared directory, then path order."""
    if not entries:
        return None
    seen, level = {header}, [header]
    while level:
        hits = sorted(p for p in level if p in entries)
        if hits:
            return entries[hits[0]]
        nxt: set[str] = set()
        for p in level:
            nxt.update(q for q in includers.get(p, ()) if q not in seen)
        seen |= nxt
        level = sorted(nxt)
    return max(entries.values(), key=lambda e: (len(posixpath.commonpath([e.path, header])), [-ord(c) for c in e.path]))


def reverse_includes(includes: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = collections.defaultdict(list)
    for src, targets in includes.items():
        for t in targets:
            out[t].append(src)
    return {k: sorted(set(v)) for k, v in out.items()}


def detect_standards(roots: Iterable[Path]) -> dict[str, str]:
    """The C and C++ standards the project's build files name ({"c": "gnu11", "c++": "c++17"})."""
    votes: dict[str, collections.Counter[str]] = {C: collections.Counter(), CXX: collections.Counter()}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            depth = os.path.relpath(dirpath, root).count(os.sep)
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and depth < 2
                                 and d not in ("third_party", "tests", "test", "docs", "examples"))
            for name in sorted(filenames):
                if name not in _BUILD_FILES and not name.endswith(".cmake"):
                    continue
                full = os.path.join(dirpath, name)
                try:
                    if os.path.getsize(full) > _MAX_BUILD_FILE or not os.path.isfile(full) or os.path.islink(full):
                        continue
                    data = Path(full).read_bytes()
                except OSError:
                    continue
                for pattern, lang in _STD_PATTERNS:
                    for m in pattern.finditer(data):
                        votes[lang][_std_name(m.group(1).decode(), lang)] += 1
    out = {}
    for lang, counter in votes.items():
        if counter:
            # most named; a tie goes to the newer standard
            out[lang] = max(counter.items(), key=lambda kv: (kv[1], kv[0]))[0]
    return out


def _std_name(value: str, language: str) -> str:
    if value.isdigit():
        # CMake's default (CXX_EXTENSIONS on) is the GNU dialect
        return f"gnu++{value}" if language == CXX else f"gnu{value}"
    return value


def header_language(path: str, data: bytes, nearest_units: Sequence[str], project_is_c: bool) -> str:
    """CUDA, C or C++ for a header (see module docstring)."""
    suffix = posixpath.splitext(path)[1].lower()
    if suffix in (".cuh", ".cu"):
        return CUDA
    kinds = {_TU_SUFFIXES.get(posixpath.splitext(u)[1].lower(), CXX) for u in nearest_units}
    if kinds == {CUDA} or (_CUDA_MARKS.search(data) and not kinds - {CUDA}):
        return CUDA  # g++ first, then nvcc (extractor.structs.compilers)
    if suffix != ".h":
        return CXX
    if C in kinds:
        return C  # a C header that C++ also includes is probed as C (with C++ to fall back on)
    if not kinds and project_is_c and not _CXX_ONLY.search(data):
        return C
    return CXX


def nearest_units(header: str, includers: Mapping[str, Iterable[str]], translation_units: set[str],
                  limit: int = 4) -> list[str]:
    """Translation units that include ``header``, those the fewest #include steps away."""
    seen, level = {header}, [header]
    for _ in range(limit):
        nxt: set[str] = set()
        for p in level:
            nxt.update(q for q in includers.get(p, ()) if q not in seen)
        hits = sorted(p for p in nxt if p in translation_units)
        if hits:
            return hits
        seen |= nxt
        level = sorted(nxt)
        if not level:
            break
    return []


def base_flags(settings: BuildSettings) -> ProbeFlags:
    """The flags every probe gets from the user's settings."""
    return ProbeFlags(settings.all_include_dirs(), tuple(f"-D{d}" for d in settings.defines))


def combine(base: ProbeFlags, unit: CompileEntry | None, language: str, std: str) -> ProbeFlags:
    """The user's flags, then the translation unit's; the language and standard decided."""
    if unit is None:
        return dataclasses.replace(base, language=language, std=std)
    f = unit.flags
    return ProbeFlags(tuple(dict.fromkeys(base.include_dirs + f.include_dirs)), base.defines + f.defines,
                      f.std or std, language, f.machine, f.origin)


def is_translation_unit(path: str) -> bool:
    return posixpath.splitext(path)[1].lower() in _TU_SUFFIXES


def mostly_c(paths: Iterable[str]) -> bool:
    """True when the system's translation units are C only."""
    kinds = collections.Counter(_TU_SUFFIXES[posixpath.splitext(p)[1].lower()] for p in paths if is_translation_unit(p))
    return bool(kinds) and set(kinds) == {C}

