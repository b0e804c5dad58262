"""Struct layouts from source: compile a generated probe per header, read the probe's DWARF.

The probe translation unit only ``#include``s the header (by absolute path): it is compiled with
``-g -fno-eliminate-unused-debug-types``, which makes GCC (and nvcc's host compiler) emit the
complete type of every aggregate the header defines, used or not. That avoids the trap of a
probe that only names a type through pointers (a declaration-only DIE, no layout) and works for
types that cannot be default-constructed. ``-femit-class-debug-always`` is needed as well: GCC
otherwise describes a polymorphic class only in the object that holds its vtable. Class
templates have no layout until instantiated and are not probed.

Compilers: g++ (C++17) for C/C++ headers, nvcc for ``.cuh``; a ``.h`` that fails as C++ is tried
once more as C. Include directories: each source root, every directory named ``include``,
``src`` or ``csrc`` in it, the header's own directory, and the CUDA toolkit's headers. Each
compile runs in a temporary directory with a timeout. The probe includes ``<cstddef>``,
``<cstdint>`` and ``<algorithm>`` first (for nvcc also ``cuda_fp16.h``/``cuda_bf16.h``), since
kernel headers often rely on their includer for them. A header whose probe fails gives every struct it defines as
``unresolved`` with the compiler's first error line (paths made relative, so evidence stays
free of machine paths).

Budget: at most ``max_headers`` headers are compiled (default 64), chosen by the tags their
struct names and path already earn (shared-memory, ipc, signal, ... first), then by how many
structs they define, then by path, so the choice is deterministic. Measured here with 2 jobs:
vLLM 0.10.2 (25 headers with structs) 27 s cold, 0.8 s cached; Triton r25.08 (112 headers,
64 probed) 29 s cold, most failing fast on boost/protobuf/rapidjson headers that are not
installed. The rest are listed ``unresolved`` with "not probed". Results are cached in
``cache_dir`` under the hash of the compiler, the flags and the header's include closure (the
header and every file it includes, transitively, from inside the source roots).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sysconfig
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from extractor.model import Diagnostic, Language, Severity, to_jsonable
from extractor.safeproc import run_bounded
from extractor.structs.dwarf import DwarfReadError, read_layouts
from extractor.structs.buildcontext import C, CUDA, CXX, ProbeFlags
from extractor.structs.probeguard import (allowed_dirs, find_precompiled_headers, line_is_safe, outside,
                                          parse_depfile, precompiled_beside, system_include_dirs)
from extractor.structs.records import Method, StructLayout, layout_from_raw, unresolved_layout
from extractor.structs.source import StructDefinition
from extractor.structs.tags import tag_layout

PROBE_VERSION = "5"
HEADER_SUFFIXES = {".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl"}
DEFAULT_MAX_HEADERS = 64
DEFAULT_TIMEOUT = 120.0
# Address-space cap per compiler process: nvcc's front ends need about 1 GB on vLLM's heaviest
# headers; a template-instantiation bomb took 4.1 GB before the cap.
DEFAULT_MEMORY = 3 * 1024**3
_INCLUDE_DIR_NAMES = {"include", "src", "csrc"}
_INCLUDE_RE = re.compile(rb'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.MULTILINE)
_SKIP_DIRS = {".git", "node_modules", "__pycache__", "build", "dist", "third_party", "tests",
              "test", "docs", "examples", "benchmarks"}


@dataclasses.dataclass(frozen=True, slots=True)
class HeaderProbe:
    path: str  # label-prefixed repository path: what records carry
    file: Path  # on disk
    language: Language
    definitions: tuple[StructDefinition, ...]
    flags: ProbeFlags = ProbeFlags()  # the build context: include dirs, defines, language, standard
    # The #include lines its nearest includer has before it, and that includer's directory: a
    # second attempt for a header that relies on its includer for what it uses.
    preamble: tuple[str, ...] = ()
    includer: str = ""  # evidence path of that includer
    includer_dir: Path | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ProbeResult:
    path: str
    layouts: tuple[StructLayout, ...]
    diagnostics: tuple[Diagnostic, ...] = ()
    cached: bool = False
    compiled: bool = False


def find_include_dirs(roots: Sequence[Path], max_dirs: int = 64) -> tuple[Path, ...]:
    """Each root and the ``include``/``src``/``csrc`` directories under it (shallow first)."""
    found: list[Path] = []
    for root in roots:
        found.append(root)
        queue = [(root, 0)]
        while queue:
            here, depth = queue.pop(0)
            try:
                entries = sorted(os.scandir(here), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if not entry.is_dir(follow_symlinks=False) or entry.name in _SKIP_DIRS or \
                        entry.name.startswith("."):
                    continue
                path = Path(entry.path)
                if entry.name in _INCLUDE_DIR_NAMES:
                    found.append(path)
                if depth < 4:
                    queue.append((path, depth + 1))
    unique = list(dict.fromkeys(found))
    return tuple(unique[:max_dirs])


def closure_digest(header: Path, include_dirs: Sequence[Path], roots: Sequence[Path]) -> str:
    """Hash of the header and the files it includes, transitively, from inside ``roots``."""
    roots_resolved = [r.resolve() for r in roots]
    seen: dict[Path, str] = {}
    queue = [header.resolve()]
    while queue:
        current = queue.pop()
        if current in seen:
            continue
        try:
            data = current.read_bytes()
        except OSError:
            continue
        seen[current] = hashlib.sha256(data).hexdigest()
        for quote, name in _INCLUDE_RE.findall(data):
            target = _resolve_include(name.decode("utf-8", "replace"), current.parent if quote == b'"'
                                      else None, include_dirs)
            if target is not None and any(_is_under(target, r) for r in roots_resolved):
                queue.append(target)
    # content only (no absolute paths), so the cache survives moving the tree
    return hashlib.sha256("\n".join(sorted(seen.values())).encode()).hexdigest()


def _resolve_include(name: str, here: Path | None, include_dirs: Sequence[Path]) -> Path | None:
    for base in ([here] if here is not None else []) + list(include_dirs):
        candidate = base / name
        if candidate.is_file():
            return candidate.resolve()
    return None


def _is_under(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


@functools.cache
def _compiler_identity(compiler: str) -> str:
    try:
        out = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return compiler


def find_nvcc() -> str | None:
    return shutil.which("nvcc") or next(
        (p for p in ("/usr/local/cuda/bin/nvcc",) if os.access(p, os.X_OK)), None)


@functools.cache
def _cuda_include_dir() -> Path | None:
    """The CUDA toolkit's include directory (nvcc itself may be a wrapper script elsewhere)."""
    nvcc = find_nvcc()
    if nvcc is None:
        return None
    candidates = [Path(nvcc).resolve().parent.parent / "include"]
    candidates += [Path(os.environ[v]) / "include" for v in ("CUDA_HOME", "CUDA_PATH")
                   if os.environ.get(v)]
    candidates.append(Path("/usr/local/cuda/include"))
    return next((c for c in candidates if (c / "cuda_runtime_api.h").is_file()), None)


@functools.cache
def _python_include_dir() -> Path | None:
    """The running interpreter's C headers (Python.h), as torch's own extension builds add them."""
    found = sysconfig.get_paths().get("include")
    return Path(found) if found and (Path(found) / "Python.h").is_file() else None


def _host_include_dirs() -> list[Path]:
    """Directories a C/C++ host of CUDA or Python code finds its headers in here: the CUDA toolkit's
    (and its CCCL, `cuda/std/...`), the interpreter's."""
    out = []
    cuda = _cuda_include_dir()
    if cuda is not None:
        out.append(cuda)
        if (cuda / "cccl").is_dir():
            out.append(cuda / "cccl")
    if (python := _python_include_dir()) is not None:
        out.append(python)
    return out


def probe_language(probe: HeaderProbe) -> str:
    """C, C++ or CUDA: the build context's decision, else by the file's suffix and language."""
    if probe.flags.language:
        return probe.flags.language
    return CUDA if probe.file.suffix == ".cuh" or probe.language is Language.CUDA else CXX


def _commands(probe: HeaderProbe, source: Path, obj: Path, include_dirs: Sequence[Path]
              ) -> list[tuple[str, Method, list[str]]] | str:
    """The compile commands to try in order, or the reason none can run."""
    flags = probe.flags
    incs = [f"-I{d}" for d in dict.fromkeys([probe.file.parent, *include_dirs, *flags.include_dirs])]
    language = probe_language(probe)
    machine = [m for m in flags.machine if m.startswith("-m")]
    if language == CUDA:
        nvcc = find_nvcc()
        if nvcc is None:
            return "nvcc not installed: CUDA header not probed"
        host = ",".join(["-fno-eliminate-unused-debug-types", "-femit-class-debug-always", *machine])
        extra = [m for m in flags.machine if not m.startswith("-m")]
        python = [f"-I{d}" for d in [_python_include_dir()] if d is not None]
        return [(nvcc, Method.PROBE_NVCC,
                 [nvcc, f"-std={flags.std or 'c++17'}", "-g", "-c", "-w", *extra, "-Xcompiler", host,
                  *flags.defines, *incs, *python, str(source.with_suffix(".cu")), "-o", str(obj)])]
    commands = []
    if language == CXX:
        gxx = shutil.which("g++")
        if gxx is None:
            return "g++ not installed: header not probed"
        # C++ hosts of CUDA code include <cuda.h>/<cuda_runtime_api.h> without nvcc
        cuda = [f"-I{d}" for d in _host_include_dirs()]
        commands.append((gxx, Method.PROBE_GXX,
                         [gxx, f"-std={flags.std or 'c++17'}", "-g", "-c", "-w", "-fmax-errors=1",
                          "-fno-eliminate-unused-debug-types", "-femit-class-debug-always", *machine, *flags.defines,
                          *incs, *cuda, str(source.with_suffix(".cpp")), "-o", str(obj)]))
    gcc = shutil.which("gcc")
    # a .h that fails as C++ (and was not decided C++ by its translation unit) is tried as C
    if gcc and (language == C or (probe.file.suffix == ".h" and not flags.origin)):
        std = flags.std if language == C and flags.std else ""
        commands.append((gcc, Method.PROBE_GXX,
                         [gcc, *([f"-std={std}"] if std else []), "-g", "-c", "-w", "-fmax-errors=1",
                          "-fno-eliminate-unused-debug-types", *machine, *flags.defines, *incs,
                          str(source.with_suffix(".c")), "-o", str(obj)]))
    if not commands:
        return "gcc not installed: C header not probed"
    return commands


def first_error(stderr: str, replacements: Iterable[tuple[str, str]] = ()) -> str:
    """The compiler's first error line, with machine paths replaced."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    pick = next((line for line in lines if re.search(r"\berror\b", line)), lines[0] if lines else
                "compiler failed without a message")
    for old, new in replacements:
        pick = pick.replace(old, new)
    previous = None
    while previous != pick:  # "src/filesystem/../status.h" -> "src/status.h"
        previous, pick = pick, re.sub(r"(?<![\w.])(?!\.\./)[\w.-]+/\.\./", "", pick, count=1)
    return pick[:300]


def probe_header(probe: HeaderProbe, include_dirs: Sequence[Path], roots: Sequence[Path], *,
                 cache_dir: Path | None = None, timeout: float = DEFAULT_TIMEOUT,
                 root_labels: Sequence[tuple[Path, str]] = (),
                 keep_object: Path | None = None,
                 pch_headers: frozenset[Path] | None = None,
                 memory_bytes: int = DEFAULT_MEMORY, context_key: str = "") -> ProbeResult:
    """Compile one header's probe and read its layouts; never raises for a failed compile.

    ``keep_object``: copy the probe object there (to compare it with pahole, for instance).
    ``pch_headers``: headers with a precompiled header beside them (found in ``roots`` if None).
    ``context_key``: the identity of what ``probe.flags`` names outside the tree (the build
    settings' fingerprint, generated headers): part of the cache key.
    """
    with tempfile.TemporaryDirectory(prefix="archdiff-probe-") as tmp:
        tmpdir = Path(tmp)
        source = tmpdir / "probe"
        obj = tmpdir / "probe.o"
        commands = _commands(probe, source, obj, include_dirs)
        if isinstance(commands, str):
            return _failed(probe, commands, Method.UNRESOLVED, "probe-no-compiler")
        key = None
        if cache_dir is not None:
            ident = "\n".join(_compiler_identity(c[0]) + " " + " ".join(c[2][1:6]) for c in commands)
            digest = closure_digest(probe.file, [*include_dirs, *probe.flags.include_dirs], roots)
            if probe.preamble:
                digest += _preamble_digest(probe, [*include_dirs, *probe.flags.include_dirs], roots)
            key = hashlib.sha256(f"{PROBE_VERSION}\n{ident}\n{digest}\n{probe.path}\n"
                                 f"{[to_jsonable(d) for d in probe.definitions]}\n{probe.flags.key()}\n"
                                 f"{context_key}\n{probe.preamble}".encode()).hexdigest()
            hit = _cache_load(cache_dir, key)
            if hit is not None:
                return dataclasses.replace(hit, cached=True)
        if pch_headers is None:
            pch_headers = find_precompiled_headers(roots)
        replacements = [(str(tmpdir) + "/", ""), (str(probe.file), probe.path)]
        replacements += [(str(root) + "/", f"{label}/" if label else "") for root, label in root_labels]
        error = ""
        method = None
        attempts = [(c, False) for c in commands] + [(c, True) for c in commands if probe.preamble]
        for (exe, method_try, argv), with_preamble in attempts:
            src = Path(argv[argv.index("-o") - 1])
            text = _PRELUDE.get(src.suffix, _PRELUDE[".cpp"])
            if with_preamble:
                # as the includer sees it: its earlier #include lines first, found from its directory
                text += "".join(f"{line}\n" for line in probe.preamble)
                argv = [*argv[:-2], f"-I{probe.includer_dir}", *argv[-2:]]
            src.write_text(f'{text}#include "{probe.file}"\n', encoding="utf-8")
            dirs = [*include_dirs, *probe.flags.include_dirs, *([probe.includer_dir] if with_preamble else [])]
            allowed = _allowed(exe, src.suffix, roots, dirs, tmpdir)
            if pch_headers:
                # Find out, without compiling, whether a precompiled header would be loaded.
                deps = _preprocess_deps(exe, argv, tmpdir, timeout, memory_bytes)
                if deps is not None and (beside := precompiled_beside(deps, pch_headers)):
                    error = error or (f"refused: a precompiled header ships beside "
                                      f"{_shown(beside[0], replacements)}; archdiff compiles headers only")
                    continue
            depfile = tmpdir / "probe.d"
            depfile.unlink(missing_ok=True)
            try:
                done = run_bounded([*argv[:-2], "-MD", "-MF", str(depfile), *argv[-2:]], cwd=tmpdir,
                                   timeout=timeout, memory_bytes=memory_bytes)
            except OSError as err:
                error = error or f"cannot run {Path(exe).name}: {err.strerror}"
                continue
            deps = _deps(depfile, exe, argv, tmpdir, timeout, memory_bytes)
            if deps is not None and outside(deps, allowed):
                # Nothing of this compile is used: its messages may quote that file.
                error = error or ("refused: the header includes a file outside the source roots and the "
                                  "include directories")
                continue
            if done.timed_out:
                error = error or f"probe compile timed out after {timeout:.0f} s"
                break  # another attempt would cost as much again
            if done.returncode == 0 and obj.exists():
                method = method_try
                used_preamble = with_preamble
                break
            stderr = done.stderr.decode("utf-8", errors="replace")
            error = error or _safe_error(stderr, deps is not None, allowed, replacements, done.returncode)
        if method is None:
            result = _failed(probe, error, Method.UNRESOLVED, "probe-failed")
        else:
            if keep_object is not None:
                shutil.copyfile(obj, keep_object)
            result = _read_probe(probe, obj, method, probe.includer if used_preamble else "")
        if key is not None:
            _cache_store(cache_dir, key, result)
        return result


# headers that lean on their includer for <cstdint> (common in kernel code) still probe
_PRELUDE = {".c": "#include <stddef.h>\n#include <stdint.h>\n",
            ".cu": "#include <cstddef>\n#include <cstdint>\n#include <algorithm>\n"
                   "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n",
            ".cpp": "#include <cstddef>\n#include <cstdint>\n#include <algorithm>\n"}


def _allowed(exe: str, suffix: str, roots: Sequence[Path], include_dirs: Sequence[Path], tmpdir: Path
             ) -> tuple[Path, ...]:
    extra: list[Path] = [tmpdir]
    if suffix == ".cu":
        gxx = shutil.which("g++")
        extra += system_include_dirs(gxx, "c++") if gxx else ()
        toolkit = _cuda_include_dir()
        if toolkit is not None:
            # nvcc reaches its own headers as <toolkit>/bin/../targets/<arch>/include/...
            extra.append(Path(os.path.realpath(toolkit)).parent)
    else:
        extra += system_include_dirs(exe, "c" if suffix == ".c" else "c++")
        extra += _host_include_dirs()
    if (python := _python_include_dir()) is not None:
        extra.append(python)
    return allowed_dirs(roots, include_dirs, extra)


def _deps(depfile: Path, exe: str, argv: list[str], tmpdir: Path, timeout: float, memory_bytes: int
          ) -> list[Path] | None:
    """The files the compile opened: its ``-MD`` output, or (when a fatal error stopped it before
    writing that) a preprocess-only pass; None when neither can tell."""
    try:
        return parse_depfile(depfile.read_text(encoding="utf-8", errors="replace"), tmpdir)
    except OSError:
        return _preprocess_deps(exe, argv, tmpdir, timeout, memory_bytes)


def _preprocess_deps(exe: str, argv: list[str], tmpdir: Path, timeout: float, memory_bytes: int
                     ) -> list[Path] | None:
    if Path(exe).name.startswith("nvcc"):
        return None  # nvcc has no -MG; its -MD output is all there is
    flags = [a for a in argv[1:-2] if a not in ("-c", "-g")]
    try:
        done = run_bounded([exe, *flags, "-M", "-MG", argv[-3]], cwd=tmpdir, timeout=timeout,
                           memory_bytes=memory_bytes)
    except OSError:
        return None
    if done.timed_out or done.returncode:
        return None
    return parse_depfile(done.stdout.decode("utf-8", errors="replace"), tmpdir)


def _safe_error(stderr: str, deps_known: bool, allowed: Sequence[Path], replacements, returncode: int) -> str:
    if not deps_known:
        # The compile stopped before listing what it opened: keep only a missing-include line.
        missing = next((line for line in stderr.splitlines() if "No such file or directory" in line), "")
        if missing and line_is_safe(missing, allowed):
            return first_error(missing, replacements)
        return f"probe failed (exit {returncode}); compiler output withheld: the files it read are unknown"
    line = first_error(stderr)
    if not line_is_safe(line, allowed):
        return "probe failed; compiler message withheld: it names a file outside the source roots"
    return first_error(line, replacements)


def _shown(path: Path, replacements) -> str:
    text = str(path)
    for old, new in replacements:
        text = text.replace(old, new)
    return text


def _read_probe(probe: HeaderProbe, obj: Path, method: Method, includer: str = "") -> ProbeResult:
    """The layouts of ``probe``'s definitions in ``obj``; ``includer``: the file whose earlier
    includes the probe needed (said in each layout's ``origin``)."""
    origin = f"{probe.path} as included by {includer}" if includer else probe.path
    target = os.path.realpath(probe.file)
    try:
        raws = read_layouts(obj, decl_filter=lambda name: os.path.realpath(name) == target)
    except DwarfReadError as err:
        return _failed(probe, f"probe object unreadable: {err.message}", Method.UNRESOLVED,
                       "probe-failed")
    layouts: dict[str, StructLayout] = {}
    for raw in raws:
        layout = layout_from_raw(raw, path=probe.path, method=method, origin=origin)
        layout = dataclasses.replace(layout, tags=tag_layout(layout))
        layouts.setdefault(layout.qualname, layout)
    out = list(layouts.values())
    by_name: dict[str, list[StructDefinition]] = {}
    for d in probe.definitions:
        by_name.setdefault(d.qualname, []).append(d)
    for name, defs in sorted(by_name.items()):
        found = layouts.get(name)
        for d in defs:
            if found is not None and (len(defs) == 1 or found.line == d.line):
                continue
            if found is not None:
                # several definitions of one name (`#if` branches): the compiled one is laid out
                error = (f"another definition of {name} (line {found.line}) is the one compiled with this "
                         "build context; this one is in a branch the preprocessor left out")
            else:
                error = ("compiled, but no complete type was emitted (conditionally compiled out, or a "
                         "name the probe could not see)")
            stub = unresolved_layout(d.qualname, d.kind, probe.path, d.line, error, origin=origin)
            out.append(dataclasses.replace(stub, tags=tag_layout(stub)))
    return ProbeResult(probe.path, tuple(sorted(out)), compiled=True)


def _preamble_digest(probe: HeaderProbe, include_dirs: Sequence[Path], roots: Sequence[Path]) -> str:
    """The closure digest of each file a preamble includes (it is compiled too)."""
    parts = []
    for line in probe.preamble:
        m = _INCLUDE_RE.match(line.encode())
        if m is None:
            continue
        name = m.group(2).decode("utf-8", "replace")
        found = _resolve_include(name, probe.includer_dir, [*(p for p in [probe.includer_dir] if p), *include_dirs])
        parts.append(closure_digest(found, include_dirs, roots) if found is not None else name)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _failed(probe: HeaderProbe, error: str, method: Method, code: str) -> ProbeResult:
    layouts = []
    for d in probe.definitions:
        stub = unresolved_layout(d.qualname, d.kind, probe.path, d.line, error, origin=probe.path)
        layouts.append(dataclasses.replace(stub, tags=tag_layout(stub)))
    diag = Diagnostic(probe.path, 0, code, f"struct probe failed: {error}", Severity.WARNING)
    return ProbeResult(probe.path, tuple(sorted(layouts)), (diag,))


def _cache_load(cache_dir: Path, key: str) -> ProbeResult | None:
    path = cache_dir / "structs-probe" / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ProbeResult(
            data["path"], tuple(layout_from_dict(d) for d in data["layouts"]),
            tuple(Diagnostic(d["path"], d["line"], d["code"], d["message"],
                             Severity(d["severity"])) for d in data["diagnostics"]),
            compiled=data.get("compiled", False))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _cache_store(cache_dir: Path, key: str, result: ProbeResult) -> None:
    folder = cache_dir / "structs-probe"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{key}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps({"path": result.path, "compiled": result.compiled,
                                   "layouts": to_jsonable(result.layouts),
                                   "diagnostics": to_jsonable(result.diagnostics)},
                                  sort_keys=True), encoding="utf-8")
        tmp.replace(folder / f"{key}.json")
    except OSError:
        pass  # a cache that cannot be written only costs time


def layout_from_dict(data: dict) -> StructLayout:
    """Inverse of ``to_jsonable`` for a StructLayout."""
    from extractor.structs.records import Hole, Member, MemberKind

    members = tuple(Member(**{**m, "kind": MemberKind(m["kind"])}) for m in data["members"])
    holes = tuple(Hole(**h) for h in data["holes"])
    fields = {**data, "members": members, "holes": holes, "method": Method(data["method"]),
              "tags": tuple(data["tags"])}
    return StructLayout(**fields)


def rank_probes(probes: Sequence[HeaderProbe]) -> list[HeaderProbe]:
    """Most telling headers first: tagged struct names/paths, then more structs, then path."""
    def score(p: HeaderProbe):
        tagged = sum(1 for d in p.definitions
                     if tag_layout(unresolved_layout(d.qualname, d.kind, p.path, d.line, "")))
        return (-tagged, -len(p.definitions), p.path)
    return sorted(probes, key=score)


def probe_headers(probes: Sequence[HeaderProbe], include_dirs: Sequence[Path],
                  roots: Sequence[Path], *, cache_dir: Path | None = None, jobs: int = 1,
                  max_headers: int = DEFAULT_MAX_HEADERS, timeout: float = DEFAULT_TIMEOUT,
                  root_labels: Sequence[tuple[Path, str]] = (), context_key: str = ""
                  ) -> tuple[list[ProbeResult], dict]:
    """Probe the best ``max_headers`` headers (in parallel); list the rest as not probed."""
    started = time.monotonic()
    ranked = rank_probes(probes)
    chosen, skipped = ranked[:max_headers], ranked[max_headers:]
    results: list[ProbeResult] = []
    # each nvcc run peaks near 300 MB: more than 4 at once buys little and risks memory
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(jobs, 4))) as pool:
        pch_headers = find_precompiled_headers(roots)
        futures = [pool.submit(probe_header, p, include_dirs, roots, cache_dir=cache_dir,
                               timeout=timeout, root_labels=root_labels, pch_headers=pch_headers,
                               context_key=context_key)
                   for p in chosen]
        for future in futures:
            results.append(future.result())
    for p in skipped:
        error = f"not probed: over the budget of {max_headers} headers per system"
        layouts = tuple(sorted(
            dataclasses.replace(stub, tags=tag_layout(stub)) for stub in (
                unresolved_layout(d.qualname, d.kind, p.path, d.line, error, origin=p.path)
                for d in p.definitions)))
        results.append(ProbeResult(p.path, layouts))
    results.sort(key=lambda r: r.path)
    stats = {"headers_with_structs": len(probes), "headers_probed": len(chosen),
             "headers_compiled": sum(1 for r in results if r.compiled),
             "headers_cached": sum(1 for r in results if r.cached),
             "probe_seconds": round(time.monotonic() - started, 2)}
    return results, stats
