"""The compilers a probe runs, and the exact commands: g++/gcc for C/C++, nvcc for CUDA, a cross
compiler for headers written for another CPU (``targets.yaml``), and where each may read from.

Every command compiles archdiff's own probe source with ``-g -fno-eliminate-unused-debug-types``
(GCC then describes every aggregate the header defines, used or not) and
``-femit-class-debug-always`` (a polymorphic class is described even without its vtable here).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import re
import shutil
import subprocess
import sysconfig
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from extractor.support.datafile import load_data_file
from extractor.support.linestart import found_at_line_start
from extractor.support.safeproc import Finished, run_bounded
from extractor.structs.buildcontext import C, CUDA, CXX, ProbeFlags
from extractor.structs.probeguard import allowed_dirs, system_include_dirs
from extractor.structs.records import Method

TARGETS_FILE = Path(__file__).with_name("targets.yaml")
TARGETS_SCHEMA = {"targets": [{"name": str, "headers": [str], "cxx": str, "cc": str, "flags": [str],
                                 "cxx_flags?": [str], "native?": bool, "objcopy?": str,
                                 "remove_sections?": [str]}]}
# headers that lean on their includer for <cstdint> (common in kernel code) still probe
PRELUDE = {".c": "#include <stddef.h>\n#include <stdint.h>\n",
           ".cu": "#include <cstddef>\n#include <cstdint>\n#include <algorithm>\n"
                  "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n",
           ".cpp": "#include <cstddef>\n#include <cstdint>\n#include <algorithm>\n"}
# A probe compile is bounded by CPU time, so that its outcome (a layout, or "timed out") does not
# depend on the machine's load; the wall clock only stops a compiler that waits without computing
# (an include of a FIFO), after this many times the CPU budget.
WALL_SLACK = 4
_started = [0]  # probe compiler processes this process has started (the run log's count)
_counting = threading.Lock()  # probe threads start compilers side by side

_DEBUG = ("-fno-eliminate-unused-debug-types", "-femit-class-debug-always")


@dataclasses.dataclass(frozen=True, slots=True)
class Command:
    exe: str
    method: Method
    argv: list[str]
    suffix: str  # of the probe source: ".cpp", ".c", ".cu"


@dataclasses.dataclass(frozen=True, slots=True)
class Target:
    name: str
    headers: tuple[str, ...]
    cxx: str
    cc: str
    flags: tuple[str, ...]
    native: bool = False  # this machine's compiler, other flags (its headers exist here)
    cxx_flags: tuple[str, ...] = ()  # C++ only
    objcopy: str = ""  # drops ``remove_sections`` from the probe object before it is read
    remove_sections: tuple[str, ...] = ()


@functools.cache
def load_targets(path: Path = TARGETS_FILE) -> tuple[Target, ...]:
    data = load_data_file(path, TARGETS_SCHEMA)
    return tuple(Target(t["name"], tuple(t["headers"]), t["cxx"], t["cc"], tuple(t["flags"]), t.get("native", False),
                        tuple(t.get("cxx_flags", ())), t.get("objcopy", ""), tuple(t.get("remove_sections", ())))
                 for t in data["targets"])


@functools.cache
def system_headers_digest() -> str:
    """A cheap fingerprint of the headers installed on this machine: the entries (and their
    modification times) of the compilers' system include directories, one level deep. Installing
    or upgrading a -dev package changes it, so probes that failed for want of its headers are
    tried again instead of being served from the cache."""
    h = hashlib.sha256()
    dirs: set[Path] = set()
    for exe, language in (("g++", "c++"), ("gcc", "c")):
        if shutil.which(exe):
            dirs.update(system_include_dirs(shutil.which(exe), language))
    for directory in sorted(dirs):
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            try:
                h.update(f"{directory}/{entry.name}:{entry.stat(follow_symlinks=False).st_mtime_ns}\n".encode())
            except OSError:
                continue
    return h.hexdigest()


@functools.cache
def targets_digest() -> str:
    """The targets and the cross compilers installed for them: a probe's result depends on both."""
    installed = [f"{t.name}:{compiler_identity(t.cxx) if shutil.which(t.cxx) else ''}" for t in load_targets()]
    return hashlib.sha256((TARGETS_FILE.read_text(encoding="utf-8") + "\n".join(installed)).encode()).hexdigest()


def target_for(missing_header: str, header_text: bytes = b"") -> Target | None:
    """The target to try again with after a failed probe: the installed cross compiler for a
    header that only another CPU's compiler has, or (``header_text``) the flags for this CPU's
    vector extensions when the header includes their intrinsics (`immintrin.h`)."""
    for t in load_targets():
        if not shutil.which(t.cxx):
            continue
        if missing_header in t.headers:
            return t
        if header_text and any(f"<{h}>".encode() in header_text for h in t.headers) and t.native:
            return t
    return None


def toolchain_fingerprint() -> str:
    """Which compilers a probe could use here, each with the first line of its ``--version``
    (the last for nvcc, whose first line is its name): g++, gcc, nvcc and every cross compiler of
    ``targets.yaml``, "not installed" for those missing. Part of every probe's cache key, so a
    header that failed for want of a compiler (``nvcc not installed``) or whose layout came from a
    fallback (g++ before nvcc, the host before a cross compiler) is probed again once the
    compiler is installed or upgraded. Not cached here: the caller computes it once per run."""
    names = ["g++", "gcc"] + [exe for t in load_targets() for exe in (t.cxx, t.cc)]
    lines = []
    for name in dict.fromkeys(names):
        found = shutil.which(name)
        lines.append(f"{name}: {_version_line(found) if found else 'not installed'}")
    nvcc = find_nvcc()
    lines.append(f"nvcc: {_version_line(nvcc, last=True) if nvcc else 'not installed'}")
    return "\n".join(lines)


def _version_line(exe: str, last: bool = False) -> str:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return f"{exe} (no version)"
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    if not lines:
        return f"{exe} (no version)"
    return lines[-1] if last else lines[0]


@functools.cache
def compiler_identity(compiler: str) -> str:
    try:
        return subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return compiler


def find_nvcc() -> str | None:
    return shutil.which("nvcc") or next((p for p in ("/usr/local/cuda/bin/nvcc",) if os.access(p, os.X_OK)), None)


@functools.cache
def cuda_include_dir() -> Path | None:
    """The CUDA toolkit's include directory (nvcc itself may be a wrapper script elsewhere)."""
    nvcc = find_nvcc()
    if nvcc is None:
        return None
    candidates = [Path(nvcc).resolve().parent.parent / "include"]
    candidates += [Path(os.environ[v]) / "include" for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    candidates.append(Path("/usr/local/cuda/include"))
    return next((c for c in candidates if (c / "cuda_runtime_api.h").is_file()), None)


@functools.cache
def python_include_dir() -> Path | None:
    """The running interpreter's C headers (Python.h), as torch's own extension builds add them."""
    found = sysconfig.get_paths().get("include")
    return Path(found) if found and (Path(found) / "Python.h").is_file() else None


def host_include_dirs() -> list[Path]:
    """Where a C/C++ host of CUDA or Python code finds those headers here: the CUDA toolkit's
    (with its CCCL, `cuda/std/...`), the interpreter's."""
    out = []
    cuda = cuda_include_dir()
    if cuda is not None:
        out.append(cuda)
        if (cuda / "cccl").is_dir():
            out.append(cuda / "cccl")
    if (python := python_include_dir()) is not None:
        out.append(python)
    return out


def compile_commands(header: Path, language: str, flags: ProbeFlags, source: Path, obj: Path,
                     include_dirs: Sequence[Path], target: Target | None = None) -> list[Command] | str:
    """The commands to try in order for ``header`` probed as ``language``, or why none can run.

    A CUDA header other than `.cuh` is tried with g++ first (its host-side layout is what nvcc's
    host compiler gives, in a fraction of the time), then with nvcc, unless it includes a `.cuh`
    itself (:func:`includes_cuda_header`); a `.h` not decided by a translation unit that fails as
    C++ is tried as C."""
    incs = [f"-I{d}" for d in dict.fromkeys([header.parent, *include_dirs, *flags.include_dirs])]
    machine = [m for m in flags.machine if m.startswith("-m")]
    out = obj.as_posix()
    commands: list[Command] = []
    if target is not None:
        cross = [f"-I{d}" for d in host_include_dirs()]
        gxx, gcc = shutil.which(target.cxx), shutil.which(target.cc)
        if language != C and gxx:
            commands.append(Command(gxx, Method.PROBE_GXX, [gxx, f"-std={flags.std or 'gnu++17'}", "-g", "-c", "-w",
                                    "-fmax-errors=1", *_DEBUG, *target.flags, *target.cxx_flags, *flags.defines, *incs, *cross,
                                    str(source.with_suffix(".cpp")), "-o", out], ".cpp"))
        if language == C and gcc:
            commands.append(Command(gcc, Method.PROBE_GXX, [gcc, *([f"-std={flags.std}"] if flags.std else []), "-g",
                                    "-c", "-w", "-fmax-errors=1", _DEBUG[0], *target.flags, *flags.defines, *incs,
                                    str(source.with_suffix(".c")), "-o", out], ".c"))
        return commands or f"{target.cxx} not installed"
    nvcc = find_nvcc()
    if language == CUDA and (header.suffix == ".cuh" or includes_cuda_header(header)):
        if nvcc is None:
            return "nvcc not installed: CUDA header not probed"
        return [_nvcc(nvcc, flags, incs, source, out)]
    if language in (CXX, CUDA):
        gxx = shutil.which("g++")
        if gxx is not None:
            # C++ hosts of CUDA code include <cuda.h>/<cuda_runtime_api.h> without nvcc
            host = [f"-I{d}" for d in host_include_dirs()]
            commands.append(Command(gxx, Method.PROBE_GXX, [gxx, f"-std={flags.std or 'gnu++17'}", "-g", "-c", "-w",
                                    "-fmax-errors=1", *_DEBUG, *machine, *flags.defines, *incs, *host,
                                    str(source.with_suffix(".cpp")), "-o", out], ".cpp"))
        if language == CUDA and nvcc is not None:
            commands.append(_nvcc(nvcc, flags, incs, source, out))
    gcc = shutil.which("gcc")
    if gcc and (language == C or (language == CXX and header.suffix == ".h" and not flags.origin)):
        std = flags.std if language == C else ""
        commands.append(Command(gcc, Method.PROBE_GXX, [gcc, *([f"-std={std}"] if std else []), "-g", "-c", "-w",
                                "-fmax-errors=1", _DEBUG[0], *machine, *flags.defines, *incs,
                                str(source.with_suffix(".c")), "-o", out], ".c"))
    gxx = shutil.which("g++")
    if language == C and header.suffix == ".h" and gxx and not flags.origin:
        # a C header that C++ code includes too may use what only C++ has around it
        commands.append(Command(gxx, Method.PROBE_GXX, [gxx, "-std=gnu++17", "-g", "-c", "-w", "-fmax-errors=1",
                                *_DEBUG, *machine, *flags.defines, *incs, str(source.with_suffix(".cpp")),
                                "-o", out], ".cpp"))
    if not commands:
        return {C: "gcc not installed: C header not probed", CUDA: "nvcc not installed: CUDA header not probed"
                }.get(language, "g++ not installed: header not probed")
    return commands


# `#include <x.cuh>` or `"x.cuh"` (matched at the start of a line)
_CUDA_INCLUDE = re.compile(rb'#[ \t]*include[ \t]*[<"][^<>"\n]*\.cuh[>"]')


def includes_cuda_header(header: Path) -> bool:
    """Whether ``header`` includes a `.cuh` itself: it is written for nvcc as much as a `.cuh` is,
    and g++ stops in what it includes (vLLM's moe_permute_unpermute_kernel.h includes CUB's
    `cub.cuh`, whose `threadIdx` g++ does not know: 12-40 CPU s to parse all of torch first, for
    a message that nvcc's layout replaces). An unreadable header is probed as before."""
    try:
        data = header.read_bytes()
    except OSError:
        return False
    return found_at_line_start(_CUDA_INCLUDE, data)


def _nvcc(nvcc: str, flags: ProbeFlags, incs: list[str], source: Path, out: str) -> Command:
    machine = [m for m in flags.machine if m.startswith("-m")]
    extra = [m for m in flags.machine if not m.startswith("-m")]
    host = ",".join([*_DEBUG, *machine])
    python = [f"-I{d}" for d in [python_include_dir()] if d is not None]
    std = (flags.std or "c++17").replace("gnu++", "c++")  # nvcc knows the ISO names; its host compiler is GNU
    return Command(nvcc, Method.PROBE_NVCC, [nvcc, f"-std={std}", "-g", "-c", "-w", *extra,
                                             "-Xcompiler", host, *flags.defines, *incs, *python,
                                             str(source.with_suffix(".cu")), "-o", out], ".cu")


def search_superset(command: Command) -> tuple[str, ...]:
    """Every directory ``command`` could find an ``#include`` in, and more: its ``-I`` directories,
    the system directories of its compiler and of g++ and gcc (nvcc's host), CUDA's (the
    toolkit's as nvcc names it, and its CCCL) and Python's. A name none of them has is missing
    for that command, whatever the order it searches them in."""
    dirs = [a[2:] for a in command.argv if a.startswith("-I")]
    for exe, language in ((command.exe, "c++"), (command.exe, "c"), (shutil.which("g++"), "c++"),
                          (shutil.which("gcc"), "c")):
        if exe and not Path(exe).name.startswith("nvcc"):
            dirs.extend(str(d) for d in system_include_dirs(exe, language))
    dirs.extend(str(d) for d in host_include_dirs())
    if (cuda := cuda_include_dir()) is not None:
        dirs.extend((str(cuda / "cccl"), os.path.realpath(cuda), os.path.join(os.path.realpath(cuda), "cccl")))
    return tuple(dict.fromkeys(dirs))


def found_in(name: str, dirs: Sequence[str | Path]) -> bool:
    """Whether the ``#include`` name ``name`` is in one of ``dirs`` (with :func:`search_superset`'s
    directories: whether it could be found at all)."""
    return any(os.path.exists(os.path.join(d, name)) for d in dirs)


def allowed_for(command: Command, roots: Sequence[Path], include_dirs: Sequence[Path], tmpdir: Path
                ) -> tuple[Path, ...]:
    """Where ``command`` may read: the roots, the include directories, its own system directories."""
    extra: list[Path] = [tmpdir]
    if command.suffix == ".cu":
        gxx = shutil.which("g++")
        extra += system_include_dirs(gxx, "c++") if gxx else ()
        toolkit = cuda_include_dir()
        if toolkit is not None:
            # nvcc reaches its own headers as <toolkit>/bin/../targets/<arch>/include/...
            extra.append(Path(os.path.realpath(toolkit)).parent)
    else:
        extra += system_include_dirs(command.exe, "c" if command.suffix == ".c" else "c++")
        extra += host_include_dirs()
    if (python := python_include_dir()) is not None:
        extra.append(python)
    return allowed_dirs(roots, include_dirs, extra)


def run_compiler(argv: Sequence[str], cwd: Path, cpu_seconds: float, memory_bytes: int,
                 env: Mapping[str, str] | None = None) -> Finished:
    """Run one probe compile (or preprocessing) within ``cpu_seconds`` of its process group's CPU,
    ``memory_bytes`` of address space per process, and :data:`WALL_SLACK` times the budget of wall
    time."""
    with _counting:
        _started[0] += 1
    return run_bounded(argv, cwd=cwd, timeout=WALL_SLACK * cpu_seconds, cpu_seconds=cpu_seconds,
                       memory_bytes=memory_bytes, env=env)


def compilers_started() -> int:
    """Probe compiler processes this process has started so far: a run counts the difference."""
    return _started[0]
