"""Struct layouts from source: compile a generated probe per header, read the probe's DWARF.

The probe translation unit only ``#include``s the header (by absolute path): it is compiled with
``-g -fno-eliminate-unused-debug-types``, which makes GCC (and nvcc's host compiler) emit the
complete type of every aggregate the header defines, used or not. That avoids the trap of a
probe that only names a type through pointers (a declaration-only DIE, no layout) and works for
types that cannot be default-constructed. ``-femit-class-debug-always`` is needed as well: GCC
otherwise describes a polymorphic class only in the object that holds its vtable. Class
templates have no layout until instantiated and are not probed.

Which compiler, flags and language: extractor.structs.compilers (C, C++, CUDA, another CPU) with
the header's build context (``HeaderProbe.flags``, extractor.structs.buildcontext). Include
directories: the header's own, each source root and every ``include``/``src``/``csrc`` directory
in it, then the build context's. The probe includes ``<cstddef>``, ``<cstdint>`` and
``<algorithm>`` first (for nvcc also ``cuda_fp16.h``/``cuda_bf16.h``); a header that still fails,
or compiles but leaves definitions out, is tried again after its includers' earlier lines
(``HeaderProbe.preambles``). A header whose probe fails gives every struct it defines as
``unresolved`` with the compiler's first error line (paths made relative, so evidence stays
free of machine paths).

Budget: at most ``max_headers`` headers are compiled (default 160), chosen by the tags their
struct names and path already earn (shared-memory, ipc, signal, ... first), then by how many
structs they define, then by path, so the choice is deterministic; the rest are listed
``unresolved`` with "not probed". Measured here with 2 jobs on a shared machine (load ~10 on 2
cores): vLLM 0.10.2 with torch and CUTLASS (27 headers, torch's in most) 13 min cold; Triton
r25.08 (112 headers, boost/protobuf/gRPC installed) 7 min cold. Results are cached in
``cache_dir`` under the hash of the compiler, the flags, the build context and the header's
include closure (the header and every file it includes, transitively, from inside the source
roots; headers outside them are identified by the build context's fingerprint), so the next
release re-probes only the headers whose closure changed.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from extractor.model import Diagnostic, Language, Severity, to_jsonable
from extractor.structs.dwarf import DwarfReadError, read_layouts
from extractor.structs.buildcontext import CUDA, CXX, ProbeFlags
from extractor.support.safeproc import run_bounded
from extractor.structs.attempts import CompileAttempts, first_error
from extractor.structs.compilers import (compile_commands, compiler_identity, find_nvcc, host_include_dirs,
                                         system_headers_digest, target_for, targets_digest)
from extractor.structs.probeguard import find_precompiled_headers
from extractor.structs.probecache import ProbeResult
from extractor.structs.probecache import cache_load as _cache_load
from extractor.structs.probecache import cache_store as _cache_store
from extractor.structs.probecache import layout_from_dict
from extractor.structs.reasons import missing_from as missing_from_error
from extractor.structs.records import Method, StructLayout, layout_from_raw, unresolved_layout
from extractor.structs.source import StructDefinition
from extractor.structs.tags import tag_layout

# find_nvcc and layout_from_dict live beside the compilers and the cache; callers find them here too
__all__ = ["DEFAULT_MAX_HEADERS", "DEFAULT_MEMORY", "DEFAULT_TIMEOUT", "HEADER_SUFFIXES", "HeaderProbe", "Preamble",
           "ProbeResult", "find_include_dirs", "find_nvcc", "first_error", "layout_from_dict", "probe_header",
           "probe_headers", "probe_language", "rank_probes"]

PROBE_VERSION = "7"
# a definition the compile left out; extractor.structs.conditions names the `#if` around it
NOT_EMITTED = ("compiled, but no complete type was emitted (conditionally compiled out, or a name the probe "
               "could not see)")
HEADER_SUFFIXES = {".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl"}
DEFAULT_MAX_HEADERS = 160
DEFAULT_TIMEOUT = 300.0
# Address-space cap per compiler process. nvcc's front ends need about 1 GB on most of vLLM's
# headers, but with the CUDA math libraries' headers (cuBLAS, cuSPARSE, cuSOLVER wheels beside torch)
# its CUTLASS dispatch headers (scaled_mm_c2x_sm89_fp8_dispatch.cuh, the machete launchers) ran out
# of 3 GB ("catastrophic error: out of memory") and compile in 6; a template-instantiation bomb
# took 4.1 GB before a cap stopped it.
DEFAULT_MEMORY = 6 * 1024**3
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
    # What its nearest includers have before including it (#include and #define lines): another
    # attempt for a header that relies on its includer for what it uses or selects.
    preambles: tuple[Preamble, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class Preamble:
    lines: tuple[str, ...]
    includer: str  # evidence path of the includer
    directory: Path  # its directory, searched first for its quoted includes


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


def probe_language(probe: HeaderProbe) -> str:
    """C, C++ or CUDA: the build context's decision, else by the file's suffix and language."""
    if probe.flags.language:
        return probe.flags.language
    return CUDA if probe.file.suffix == ".cuh" or probe.language is Language.CUDA else CXX


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
        source, obj = tmpdir / "probe", tmpdir / "probe.o"
        language = probe_language(probe)
        commands = compile_commands(probe.file, language, probe.flags, source, obj, include_dirs)
        if isinstance(commands, str):
            return _failed(probe, commands, Method.UNRESOLVED, "probe-no-compiler")
        key = None
        if cache_dir is not None:
            ident = "\n".join(compiler_identity(c.exe) + " " + " ".join(c.argv[1:6]) for c in commands)
            digest = closure_digest(probe.file, [*include_dirs, *probe.flags.include_dirs], roots)
            for preamble in probe.preambles:
                digest += _preamble_digest(preamble, [*include_dirs, *probe.flags.include_dirs], roots)
            key = hashlib.sha256(f"{PROBE_VERSION}\n{ident}\n{digest}\n{probe.path}\n"
                                 f"{[to_jsonable(d) for d in probe.definitions]}\n{probe.flags.key()}\n"
                                 f"{context_key}\n{[p.lines for p in probe.preambles]}\n{targets_digest()}\n{system_headers_digest()}".encode()).hexdigest()
            hit = _cache_load(cache_dir, key)
            if hit is not None:
                return dataclasses.replace(hit, cached=True)
        if pch_headers is None:
            pch_headers = find_precompiled_headers(roots)
        replacements = [(str(tmpdir) + "/", ""), (str(probe.file), probe.path)]
        replacements += [(str(root) + "/", f"{label}/" if label else "") for root, label in root_labels]
        # headers of the build context outside the tree are named by their directory's last two
        # components (`<torch/include>/ATen/...`): no path of this machine reaches the evidence
        outside_dirs = [d for d in (*include_dirs, *probe.flags.include_dirs, *host_include_dirs())
                        if not any(_is_under(d, Path(r)) for r, _ in root_labels)]
        replacements += [(f"{d}/", f"<{'/'.join(d.parts[-2:])}>/") for d in
                         sorted(outside_dirs, key=lambda d: len(str(d)), reverse=True)]
        run = CompileAttempts(probe, include_dirs, roots, tmpdir, obj, timeout, memory_bytes, pch_headers, replacements)
        outcome = run.first_success(commands)
        target = None
        if outcome is None and not run.timed_out and \
                (target := target_for(missing_from_error(run.error), _text_of(probe.file))) is not None:
            # a header for another CPU: its cross compiler, when installed, gives that CPU's layout;
            # a header for this CPU's vector extensions: the flags that enable them
            cross = compile_commands(probe.file, language, probe.flags, source, obj, include_dirs, target)
            outcome = run.first_success(cross, own=True) if not isinstance(cross, str) else None
        if outcome is None:
            result = _failed(probe, run.error, Method.UNRESOLVED, "probe-failed")
        else:
            command, used = outcome
            target_name = target.name if target is not None else ""
            if target is not None and target.remove_sections:
                _drop_sections(target, obj, timeout)
            result = _read_probe(probe, obj, command.method, used.includer if used else "", target_name)
            best = tmpdir / "best.o"
            shutil.copyfile(obj, best)
            for preamble in probe.preambles if used is None else ():
                if not _unresolved(result) or run.timed_out:
                    break
                # compiled, but some definitions were left out: an includer may define what selects
                # them (`#define GGML_COMMON_DECL_C` before `#include "ggml-common.h"`)
                if run.attempt(command, preamble):
                    if target is not None and target.remove_sections:
                        _drop_sections(target, obj, timeout)
                    alternative = _read_probe(probe, obj, command.method, preamble.includer, target_name)
                    if _unresolved(alternative) < _unresolved(result):
                        result = alternative
                        shutil.copyfile(obj, best)
            shutil.copyfile(best, obj)
            if keep_object is not None:
                shutil.copyfile(obj, keep_object)
        if key is not None:
            _cache_store(cache_dir, key, result)
        return result


def _drop_sections(target, obj: Path, timeout: float) -> None:
    """Sections the DWARF reader cannot relocate for ``target`` (not those it reads) are removed."""
    objcopy = shutil.which(target.objcopy) if target.objcopy else None
    if objcopy is None:
        return
    argv = [objcopy, *(f"--remove-section={name}" for name in target.remove_sections), str(obj)]
    try:
        run_bounded(argv, cwd=obj.parent, timeout=timeout, memory_bytes=DEFAULT_MEMORY)
    except OSError:
        pass  # the object is read as it is, and says so if it cannot be


def _unresolved(result: ProbeResult) -> int:
    return sum(1 for x in result.layouts if x.method is Method.UNRESOLVED)


def _text_of(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _read_probe(probe: HeaderProbe, obj: Path, method: Method, includer: str = "", target: str = "") -> ProbeResult:
    """The layouts of ``probe``'s definitions in ``obj``; ``includer``: the file whose earlier
    includes the probe needed (said in each layout's ``origin``)."""
    origin = f"{probe.path} as included by {includer}" if includer else probe.path
    header = os.path.realpath(probe.file)
    try:
        raws = read_layouts(obj, decl_filter=lambda name: os.path.realpath(name) == header)
    except DwarfReadError as err:
        return _failed(probe, f"probe object unreadable: {err.message}", Method.UNRESOLVED,
                       "probe-failed")
    layouts: dict[str, StructLayout] = {}
    for raw in raws:
        layout = layout_from_raw(raw, path=probe.path, method=method, origin=origin)
        layout = dataclasses.replace(layout, tags=tag_layout(layout), target=target)
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
                error = NOT_EMITTED
            stub = unresolved_layout(d.qualname, d.kind, probe.path, d.line, error, origin=origin)
            out.append(dataclasses.replace(stub, tags=tag_layout(stub), target=target))
    return ProbeResult(probe.path, tuple(sorted(out)), compiled=True)


def _preamble_digest(preamble: Preamble, include_dirs: Sequence[Path], roots: Sequence[Path]) -> str:
    """The closure digest of each file a preamble includes (it is compiled too), and its lines."""
    parts = list(preamble.lines)
    for line in preamble.lines:
        m = _INCLUDE_RE.match(line.encode())
        if m is None:
            continue
        name = m.group(2).decode("utf-8", "replace")
        found = _resolve_include(name, preamble.directory, [preamble.directory, *include_dirs])
        parts.append(closure_digest(found, include_dirs, roots) if found is not None else name)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _failed(probe: HeaderProbe, error: str, method: Method, code: str) -> ProbeResult:
    layouts = []
    for d in probe.definitions:
        stub = unresolved_layout(d.qualname, d.kind, probe.path, d.line, error, origin=probe.path)
        layouts.append(dataclasses.replace(stub, tags=tag_layout(stub)))
    diag = Diagnostic(probe.path, 0, code, f"struct probe failed: {error}", Severity.WARNING)
    return ProbeResult(probe.path, tuple(sorted(layouts)), (diag,))


def object_name(header: str) -> str:
    """The file name a kept probe object of ``header`` (its evidence path) has."""
    return hashlib.sha256(header.encode()).hexdigest()[:16] + ".o"


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
                  root_labels: Sequence[tuple[Path, str]] = (), context_key: str = "",
                  keep_objects: Path | None = None, memory_bytes: int = DEFAULT_MEMORY
                  ) -> tuple[list[ProbeResult], dict]:
    """Probe the best ``max_headers`` headers (in parallel); list the rest as not probed.

    ``keep_objects``: a directory that receives each compiled probe object as
    ``object_name(header path)``, for a reference tool to read the same object (every header is
    then compiled: a cached result has no object)."""
    started = time.monotonic()
    ranked = rank_probes(probes)
    chosen, skipped = ranked[:max_headers], ranked[max_headers:]
    results: list[ProbeResult] = []
    # each nvcc run peaks near 300 MB: more than 4 at once buys little and risks memory
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(jobs, 4))) as pool:
        pch_headers = find_precompiled_headers(roots)
        futures = [pool.submit(probe_header, p, include_dirs, roots,
                               cache_dir=cache_dir if keep_objects is None else None,
                               timeout=timeout, root_labels=root_labels, pch_headers=pch_headers,
                               context_key=context_key, memory_bytes=memory_bytes,
                               keep_object=None if keep_objects is None else keep_objects / object_name(p.path))
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
