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
in it (vendored code skipped), then the build context's, then the ``include``/``src``/``csrc``
directories the header itself sits in (a vendored library's root: :func:`own_include_roots`).
The probe includes ``<cstddef>``, ``<cstdint>`` and ``<algorithm>`` first (for nvcc also
``cuda_fp16.h``/``cuda_bf16.h``); a header that still fails, or compiles but leaves definitions
out, is tried again after its includers' earlier lines (``HeaderProbe.preambles``). A header
whose probe fails gives every struct it defines as ``unresolved`` with the compiler's first
error line (paths made relative, so evidence stays free of machine paths).

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

import collections
import concurrent.futures
import dataclasses
import hashlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from extractor.model import to_jsonable
from extractor.support.linestart import matches_at_line_starts
from extractor.support.safeproc import run_bounded
from extractor.structs.attempts import CompileAttempts, first_error
from extractor.structs.batch import (BATCH_SIZE, BatchOutcome, compile_batch, plan_batches, plan_preamble_batches,
                                    preamble_groups)
from extractor.structs.closure import Includes
from extractor.structs.compilers import (Command, Target, compile_commands, compiler_identity, find_nvcc,
                                         host_include_dirs, system_headers_digest, target_for, targets_digest,
                                         toolchain_fingerprint)
from extractor.structs.buildcontext import CUDA
from extractor.structs.header import (DEFAULT_MAX_HEADERS, DEFAULT_MEMORY, DEFAULT_TIMEOUT, HEADER_SUFFIXES,
                                      HeaderProbe, Preamble, probe_language)
from extractor.structs.probeguard import find_precompiled_headers
from extractor.structs.probecache import ProbeResult
from extractor.structs.probecache import cache_load as _cache_load
from extractor.structs.probecache import cache_store as _cache_store
from extractor.structs.probecache import layout_from_dict
from extractor.structs.objects import failed_result, read_probe, unresolved_count
from extractor.structs.records import Method, unresolved_layout
from extractor.structs.tags import tag_layout

# find_nvcc and layout_from_dict live beside the compilers and the cache; callers find them here too
__all__ = ["DEFAULT_MAX_HEADERS", "DEFAULT_MEMORY", "DEFAULT_TIMEOUT", "HEADER_SUFFIXES", "HeaderProbe", "Preamble",
           "ProbeResult", "find_include_dirs", "find_nvcc", "first_error", "layout_from_dict", "own_include_roots",
           "probe_header", "probe_headers", "probe_language", "rank_probes"]

# 9: no record for a definition the compiler laid out under other scopes at its line; 10: nvcc's
# host side alone (extractor.structs.nvcchost: a header that fails only in cicc is laid out)
PROBE_VERSION = "10"
_INCLUDE_DIR_NAMES = {"include", "src", "csrc"}
# an #include, from its `#`: found at the start of a line by extractor.support.linestart, after
# any whitespace but the newline
_INCLUDE_RE = re.compile(rb'#\s*include\s*([<"])([^>"]+)[>"]')
_SPACE_BUT_NEWLINE = b" \t\r\x0b\x0c"
_SKIP_DIRS = {".git", "node_modules", "__pycache__", "build", "dist", "third_party", "tests",
              "test", "docs", "examples", "benchmarks"}


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


def own_include_roots(probes: Sequence[HeaderProbe], include_dirs: Sequence[Path], roots: Sequence[Path]
                      ) -> tuple[HeaderProbe, ...]:
    """``probes``, each searching also the ``include``/``src``/``csrc`` directories it sits in that
    ``include_dirs`` leave out (nearest first, after the build context's): its own library's
    root, which the library's build always searches. :func:`find_include_dirs` skips vendored
    code (``third_party``, ...), yet its headers are probed: xformers' copy of CUTLASS
    (``third_party/cutlass/include/cute/arch/mma_sm80.hpp`` includes ``<cute/config.hpp>``) failed
    on every header that includes a sibling by its library path, and 1,975 layouts said to fetch
    CUTLASS that the tree holds."""
    searched = set(include_dirs)
    out = []
    for p in probes:
        root = next((r for r in roots if _is_under(p.file, r)), None)
        own = [d for d in p.file.parents if root is not None and d != root and _is_under(d, root)
               and d.name in _INCLUDE_DIR_NAMES and d not in searched and d not in p.flags.include_dirs]
        out.append(p if not own else dataclasses.replace(
            p, flags=dataclasses.replace(p.flags, include_dirs=(*p.flags.include_dirs, *own))))
    return tuple(out)


def closure_digest(header: Path, include_dirs: Sequence[Path], roots: Sequence[Path]) -> str:
    """Hash of the header and the files it includes, transitively, from inside ``roots``."""
    return IncludeClosures(roots).digest(header, include_dirs)


class IncludeClosures:
    """Closure digests of one run's probes: each file read, hashed and its includes found once.

    A run's headers share most of what they include (every header of torch's 9,000 reaches c10's
    hundreds), and each probe's cache key needs its whole closure: walked from the disk per probe,
    torch's tree spent minutes of the driver reading the same files again. Names are found by
    ``includes`` (the run's :class:`~extractor.structs.closure.Includes`, whose answers are the
    file system's, each asked once), and a preamble's digest is made once per run: torch's
    includers have hundreds of lines before a header, the same for every header they include."""

    def __init__(self, roots: Sequence[Path], includes: Includes | None = None) -> None:
        self._includes = includes if includes is not None else Includes(roots)
        self._files: dict[Path, tuple[str, list[tuple[bytes, str]]] | None] = {}
        self._found: dict[tuple[str, Path | None, tuple[Path, ...]], Path | None] = {}
        self._digests: dict[tuple[Path, tuple[Path, ...]], str] = {}
        self._preambles: dict[tuple[tuple[str, ...], Path, tuple[Path, ...]], str] = {}
        self._searches: dict[tuple[Path, ...], int] = {}  # each search's number
        self._targets: dict[tuple[Path, int], list[Path]] = {}

    def digest(self, header: Path, include_dirs: Sequence[Path]) -> str:
        start, dirs = Path(self._includes.real(str(header))), tuple(include_dirs)
        if (start, dirs) not in self._digests:
            self._digests[start, dirs] = self._walk(start, dirs)
        return self._digests[start, dirs]

    def preamble_digest(self, preamble: Preamble, include_dirs: Sequence[Path]) -> str:
        """The closure digest of each file a preamble includes (it is compiled too), and its lines."""
        key = (preamble.lines, preamble.directory, tuple(include_dirs))
        if key not in self._preambles:
            parts = list(preamble.lines)
            search = (preamble.directory, *include_dirs)
            for line in preamble.lines:
                m = _INCLUDE_RE.match(line.encode().lstrip())
                if m is None:
                    continue
                name = m.group(2).decode("utf-8", "replace")
                found = self.find(name, preamble.directory, search)
                parts.append(self.digest(found, include_dirs) if found is not None else name)
            self._preambles[key] = hashlib.sha256("\n".join(parts).encode()).hexdigest()
        return self._preambles[key]

    def _walk(self, start: Path, dirs: tuple[Path, ...]) -> str:
        seen: dict[Path, str] = {}
        search = self._searches.setdefault(dirs, len(self._searches))
        queue = [start]
        while queue:
            current = queue.pop()
            if current in seen:
                continue
            entry = self._file(current)
            if entry is None:
                continue
            seen[current] = entry[0]
            queue.extend(self._inside_targets(current, entry[1], search, dirs))
        # content only (no absolute paths), so the cache survives moving the tree
        return hashlib.sha256("\n".join(sorted(seen.values())).encode()).hexdigest()

    def _inside_targets(self, path: Path, includes: list[tuple[bytes, str]], search: int, dirs: tuple[Path, ...]
                        ) -> list[Path]:
        """The files inside the roots that ``path``'s includes reach with the search ``dirs``
        (numbered ``search``), once per file and search: the closures of a run's headers overlap."""
        key = (path, search)
        targets = self._targets.get(key)
        if targets is None:
            targets = self._targets[key] = [
                target for quote, name in includes
                if (target := self.find(name, path.parent if quote == b'"' else None, dirs)) is not None
                and self._includes.in_project(str(target))]
        return targets

    def _file(self, path: Path) -> tuple[str, list[tuple[bytes, str]]] | None:
        if path not in self._files:
            try:
                data = path.read_bytes()
            except OSError:
                self._files[path] = None
            else:
                self._files[path] = (hashlib.sha256(data).hexdigest(),
                                     [(m.group(1), m.group(2).decode("utf-8", "replace"))
                                      for m in matches_at_line_starts(_INCLUDE_RE, data, _SPACE_BUT_NEWLINE)])
        return self._files[path]

    def find(self, name: str, here: Path | None, dirs: tuple[Path, ...]) -> Path | None:
        """The file ``#include`` of ``name`` reaches, resolved, or None; ``here``: the includer's
        directory, searched first (a quoted name)."""
        key = (name, here, dirs)
        if key not in self._found:
            found = next((f for base in ([here] if here is not None else []) + list(dirs)
                          if (f := self._includes.beside(str(base), name))), None)
            self._found[key] = Path(found) if found is not None else None
        return self._found[key]


def _is_under(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def probe_header(probe: HeaderProbe, include_dirs: Sequence[Path], roots: Sequence[Path], *,
                 cache_dir: Path | None = None, timeout: float = DEFAULT_TIMEOUT,
                 root_labels: Sequence[tuple[Path, str]] = (),
                 keep_object: Path | None = None,
                 pch_headers: frozenset[Path] | None = None,
                 memory_bytes: int = DEFAULT_MEMORY, context_key: str = "", toolchain: str | None = None,
                 closures: IncludeClosures | None = None) -> ProbeResult:
    """Compile one header's probe and read its layouts; never raises for a failed compile.

    ``keep_object``: copy the probe object there (to compare it with pahole, for instance).
    ``pch_headers``: headers with a precompiled header beside them (found in ``roots`` if None).
    ``context_key``: the identity of what ``probe.flags`` names outside the tree (the build
    settings' fingerprint, generated headers): part of the cache key. ``toolchain``: the
    compilers found (``toolchain_fingerprint()``, computed here when None): part of it too.
    ``closures``: the run's include closures, when several probes share them.
    """
    single = SingleProbe(probe, include_dirs, roots, cache_dir=cache_dir, timeout=timeout, root_labels=root_labels,
                         keep_object=keep_object, pch_headers=pch_headers, memory_bytes=memory_bytes,
                         context_key=context_key, toolchain=toolchain, closures=closures)
    try:
        result = single.first()
        return result if result is not None else single.rest()
    finally:
        single.close()


class SingleProbe:
    """One header's own probe in two steps, so that a batch can stand for the attempt between
    them: ``first`` (the cache, then the first command alone), ``rest`` (every later attempt,
    exactly as one go makes them). A header whose first attempt fails, and whose next attempt is
    its first preamble, waits between the two (``waiting``): a batch of headers after that same
    preamble (extractor.structs.batch) then lays it out, or ``rest`` makes that attempt alone and
    goes on. Its temporary directory lives until ``close``."""

    def __init__(self, probe: HeaderProbe, include_dirs: Sequence[Path], roots: Sequence[Path], *,
                 cache_dir: Path | None, timeout: float, root_labels: Sequence[tuple[Path, str]],
                 keep_object: Path | None, pch_headers: frozenset[Path] | None, memory_bytes: int,
                 context_key: str, toolchain: str | None, closures: IncludeClosures | None) -> None:
        self.probe, self.include_dirs, self.roots = probe, include_dirs, roots
        self.cache_dir, self.timeout, self.root_labels = cache_dir, timeout, root_labels
        self.keep_object, self.pch_headers, self.memory_bytes = keep_object, pch_headers, memory_bytes
        self.context_key, self.toolchain, self.closures = context_key, toolchain, closures
        self._tmp = tempfile.TemporaryDirectory(prefix="archdiff-probe-")
        self.tmpdir = Path(self._tmp.name)
        self.source, self.obj = self.tmpdir / "probe", self.tmpdir / "probe.o"
        self.language = probe_language(probe)
        self.waiting: Preamble | None = None  # the first preamble, once the first attempt failed
        self._key: str | None = None
        self._commands: list[Command] = []
        self._run: CompileAttempts | None = None

    def close(self) -> None:
        self._tmp.cleanup()

    def first(self) -> ProbeResult | None:
        """The result, or None when the header waits for its first preamble (``waiting``)."""
        probe = self.probe
        commands = compile_commands(probe.file, self.language, probe.flags, self.source, self.obj, self.include_dirs)
        if isinstance(commands, str):
            return failed_result(probe, commands, "probe-no-compiler")
        self._commands = commands
        if self.cache_dir is not None:
            self._key = probe_key(probe, commands, self.include_dirs, self.roots, self.context_key,
                                  toolchain_fingerprint() if self.toolchain is None else self.toolchain,
                                  self.closures)
            hit = _cache_load(self.cache_dir, self._key)
            if hit is not None:
                return dataclasses.replace(hit, cached=True)
        pch_headers = find_precompiled_headers(self.roots) if self.pch_headers is None else self.pch_headers
        self._run = CompileAttempts(probe, self.include_dirs, self.roots, self.tmpdir, self.obj, self.timeout,
                                    self.memory_bytes, pch_headers, self._replacements())
        if self._run.first_alone(commands):
            return self._settle((commands[0], None), None)
        self.waiting = self._run.batchable_preamble(commands[0])
        return self.rest() if self.waiting is None else None

    def rest(self) -> ProbeResult:
        """The result after every attempt that follows the failed first one."""
        probe, run = self.probe, self._run
        assert run is not None, "rest() follows a first() that did not decide"
        outcome = run.first_success(self._commands, first_made=True)
        target = None
        if outcome is None and not run.timed_out and \
                (target := target_for(run.missing(), _text_of(probe.file))) is not None:
            # a header for another CPU: its cross compiler, when installed, gives that CPU's layout;
            # a header for this CPU's vector extensions: the flags that enable them
            cross = compile_commands(probe.file, self.language, probe.flags, self.source, self.obj,
                                     self.include_dirs, target)
            outcome = run.first_success(cross, own=True) if not isinstance(cross, str) else None
        return self._settle(outcome, target)

    def _replacements(self) -> list[tuple[str, str]]:
        """Machine paths as the evidence names them: the probe's directory and header, the roots
        by their labels, headers of the build context outside the tree by their directory's last
        two components (`<torch/include>/ATen/...`)."""
        replacements = [(str(self.tmpdir) + "/", ""), (str(self.probe.file), self.probe.path)]
        replacements += [(str(root) + "/", f"{label}/" if label else "") for root, label in self.root_labels]
        outside_dirs = [d for d in (*self.include_dirs, *self.probe.flags.include_dirs, *host_include_dirs())
                        if not any(_is_under(d, Path(r)) for r, _ in self.root_labels)]
        replacements += [(f"{d}/", f"<{'/'.join(d.parts[-2:])}>/") for d in
                         sorted(outside_dirs, key=lambda d: len(str(d)), reverse=True)]
        return replacements

    def _settle(self, outcome: tuple[Command, Preamble | None] | None, target: Target | None) -> ProbeResult:
        """The result of the attempt that compiled (``outcome``), or of none; cached."""
        probe, run, obj, timeout = self.probe, self._run, self.obj, self.timeout
        assert run is not None
        if outcome is None:
            result = failed_result(probe, run.error, "probe-failed")
        else:
            command, used = outcome
            target_name = target.name if target is not None else ""
            if target is not None and target.remove_sections:
                _drop_sections(target, obj, timeout)
            result = read_probe(probe, obj, command.method, used.includer if used else "", target_name)
            best = self.tmpdir / "best.o"
            shutil.copyfile(obj, best)
            for preamble in probe.preambles if used is None else ():
                if not unresolved_count(result) or run.timed_out:
                    break
                # compiled, but some definitions were left out: an includer may define what selects
                # them (`#define GGML_COMMON_DECL_C` before `#include "ggml-common.h"`)
                if not run.doomed(command, preamble) and run.may_define(command, preamble, _unresolved_names(result)) \
                        and run.attempt(command, preamble):
                    if target is not None and target.remove_sections:
                        _drop_sections(target, obj, timeout)
                    alternative = read_probe(probe, obj, command.method, preamble.includer, target_name)
                    if unresolved_count(alternative) < unresolved_count(result):
                        result = alternative
                        shutil.copyfile(obj, best)
            shutil.copyfile(best, obj)
            if self.keep_object is not None:
                shutil.copyfile(obj, self.keep_object)
        if self.cache_dir is not None and self._key is not None:
            _cache_store(self.cache_dir, self._key, result)
        return result


def _unresolved_names(result: ProbeResult) -> list[str]:
    """The names (last part) of the definitions ``result`` leaves unresolved."""
    return [x.qualname.rsplit("::", 1)[-1] for x in result.layouts if x.method is Method.UNRESOLVED]


class _Rounds:
    """The run's compiles on the probe pool: the batches and each other header's first attempt
    (``run``), then each header whose first attempt failed, from where its probe stands. One that
    would go on alone goes on at once; the others are planned by group (the headers that may
    share a batch after one first preamble, ``groups``: extractor.structs.batch.preamble_groups)
    as soon as every header of the group has had its first attempt, in batches after that
    preamble or alone (``plan_group``). A group's plan needs all of its own headers, and no
    other's: no compile waits for headers it cannot share a unit with (a 60-second nvcc probe
    once waited for the last first attempt of every other header)."""

    def __init__(self, pool: concurrent.futures.Executor, single: Callable[[HeaderProbe], SingleProbe],
                 batch: Callable[[tuple[HeaderProbe, ...], bool], BatchOutcome], done: dict[str, ProbeResult],
                 cache: Path | None, keys: dict[str, str], groups: dict[str, tuple | None],
                 plan_group: Callable[[list[HeaderProbe]], tuple[list[tuple[HeaderProbe, ...]], list[HeaderProbe]]]
                 ) -> None:
        self._pool, self._single, self._batch, self.done = pool, single, batch, done
        self._cache, self._keys = cache, keys
        self._groups, self._plan_group = groups, plan_group
        # per group, its headers whose first attempt has not ended, and those that wait for its plan
        self._pending = collections.Counter(key for key in groups.values() if key is not None)
        self._held: dict[tuple, list[str]] = collections.defaultdict(list)
        self._running: dict[concurrent.futures.Future, Callable[[Any], None]] = {}
        self.waiting: dict[str, SingleProbe] = {}  # by path: first attempt failed, first preamble next
        self.batches = 0  # batch compiles, failed ones included
        self.headers_batched = 0

    def run(self, batches: Sequence[tuple[HeaderProbe, ...]], alone: Sequence[HeaderProbe]) -> None:
        self._submit_batches(batches, False)
        # CUDA headers next, nvcc's probes being the longest (2.5 s against 0.1 for most): a long
        # compile that starts last leaves the other workers idle while it runs
        for p in sorted(alone, key=lambda p: probe_language(p) != CUDA):
            self._submit_first(p)
        self._drain()
        assert not self._held and not self.waiting, "every group is planned when its last first attempt ends"

    def _submit_batches(self, batches: Sequence[tuple[HeaderProbe, ...]], after_preamble: bool) -> None:
        # the largest batches first: the longest compiles start while the rest fill the other workers
        for members in sorted(batches, key=lambda b: (-len(b), b[0].path)):
            self._submit_batch(members, after_preamble)

    def _first_ended(self, path: str, single: SingleProbe | None) -> None:
        """A header's first attempt ended: laid out (``single`` None) or waiting for its first preamble."""
        key = self._groups.get(path)
        if single is not None:
            self.waiting[path] = single
            if key is None:
                self._submit_rest(single.probe)
                return
            self._held[key].append(path)
        if key is not None:
            self._pending[key] -= 1
            if self._pending[key] == 0:
                self._plan(key)

    def _plan(self, key: tuple) -> None:
        held = sorted(self._held.pop(key, ()))
        if held:
            after, alone = self._plan_group([self.waiting[path].probe for path in held])
            self._submit_batches(after, True)
            for p in alone:
                self._submit_rest(p)

    def _drain(self) -> None:
        while self._running:
            finished, _ = concurrent.futures.wait(self._running, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in finished:
                self._running.pop(future)(future.result())

    def _submit_first(self, p: HeaderProbe) -> None:
        def first() -> tuple[ProbeResult | None, SingleProbe]:
            single = self._single(p)
            try:
                result = single.first()
            except BaseException:
                single.close()
                raise
            if result is not None:
                single.close()
            return result, single

        def settle(outcome: tuple[ProbeResult | None, SingleProbe]) -> None:
            result, single = outcome
            if result is not None:
                self.done[p.path] = result
            self._first_ended(p.path, single if result is None else None)

        self._running[self._pool.submit(first)] = settle

    def _submit_rest(self, p: HeaderProbe) -> None:
        single = self.waiting.pop(p.path)

        def rest() -> ProbeResult:
            try:
                return single.rest()
            finally:
                single.close()

        self._running[self._pool.submit(rest)] = lambda result: self.done.__setitem__(p.path, result)

    def _submit_batch(self, members: tuple[HeaderProbe, ...], after_preamble: bool) -> None:
        def settle(outcome: BatchOutcome) -> None:
            self.batches += 1
            self.headers_batched += len(outcome.results)
            for path, result in outcome.results.items():
                self.done[path] = result
                if after_preamble:
                    self.waiting.pop(path).close()
                if self._cache is not None and path in self._keys:
                    _cache_store(self._cache, self._keys[path], result)
                if not after_preamble:
                    self._first_ended(path, None)
            for part in outcome.again:
                self._submit_batch(part, after_preamble)
            for p in outcome.alone:
                (self._submit_rest if after_preamble else self._submit_first)(p)

        self._running[self._pool.submit(self._batch, members, after_preamble)] = settle


def probe_key(probe: HeaderProbe, commands: Sequence[Command], include_dirs: Sequence[Path], roots: Sequence[Path],
              context_key: str, toolchain: str, closures: IncludeClosures | None = None) -> str:
    """The cache key of ``probe``'s result: everything it depends on (the compilers found and their
    versions, the commands, the header's include closure and its includers' preambles, the build
    context, the targets and the system headers). ``closures``: the run's, shared by its probes."""
    closures = closures if closures is not None else IncludeClosures(roots)
    ident = "\n".join(compiler_identity(c.exe) + " " + " ".join(c.argv[1:6]) for c in commands)
    digest = closures.digest(probe.file, [*include_dirs, *probe.flags.include_dirs])
    for preamble in probe.preambles:
        digest += closures.preamble_digest(preamble, [*include_dirs, *probe.flags.include_dirs])
    return hashlib.sha256(f"{PROBE_VERSION}\n{toolchain}\n{ident}\n{digest}\n{probe.path}\n"
                          f"{[to_jsonable(d) for d in probe.definitions]}\n{probe.flags.key()}\n"
                          f"{context_key}\n{[p.lines for p in probe.preambles]}\n{targets_digest()}\n"
                          f"{system_headers_digest()}".encode()).hexdigest()


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


def _text_of(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


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
                  keep_objects: Path | None = None, memory_bytes: int = DEFAULT_MEMORY,
                  batch_size: int = BATCH_SIZE) -> tuple[list[ProbeResult], dict]:
    """Probe the best ``max_headers`` headers (in parallel, in batches); list the rest as not probed.

    Headers that share a build context compile in batches (extractor.structs.batch), each header's
    result the one its own probe gives; ``batch_size`` 1 probes every header alone.
    ``keep_objects``: a directory that receives each compiled probe object as
    ``object_name(header path)``, for a reference tool to read the same object (every header is
    then compiled: a cached result has no object; a batched header's object is its batch's)."""
    started = time.monotonic()
    ranked = rank_probes(probes)
    chosen, skipped = ranked[:max_headers], ranked[max_headers:]
    toolchain = toolchain_fingerprint()  # once per run: every probe's cache key names it
    includes = Includes(roots)  # the files' scans and names found, shared by the keys and the plans
    closures = IncludeClosures(roots, includes)
    pch_headers = find_precompiled_headers(roots)
    cache = cache_dir if keep_objects is None else None
    done: dict[str, ProbeResult] = {}
    keys: dict[str, str] = {}
    if cache is not None:
        for p in chosen:
            commands = compile_commands(p.file, probe_language(p), p.flags, Path("/probe"), Path("/probe.o"),
                                        include_dirs)
            if isinstance(commands, str):
                continue
            keys[p.path] = probe_key(p, commands, include_dirs, roots, context_key, toolchain, closures)
            hit = _cache_load(cache, keys[p.path])
            if hit is not None:
                done[p.path] = dataclasses.replace(hit, cached=True)
    todo = [p for p in chosen if p.path not in done]
    # a precompiled header beside a header refuses its probe before any compile: alone, as before
    batching = batch_size > 1 and not pch_headers
    batches, alone = plan_batches(todo, include_dirs, roots, batch_size, jobs=jobs, timeout=timeout,
                                  memory_bytes=memory_bytes, includes=includes) if batching else ([], todo)
    # the headers whose first attempt fails go on batched after their shared first preamble (only
    # with batching), or alone from where their probe stands
    groups = preamble_groups(todo, include_dirs, includes) if batching else {}

    def plan_group(waiting: list[HeaderProbe]) -> tuple[list[tuple[HeaderProbe, ...]], list[HeaderProbe]]:
        return plan_preamble_batches(waiting, include_dirs, roots, batch_size, jobs=jobs, timeout=timeout,
                                     memory_bytes=memory_bytes, includes=includes)

    def single(p: HeaderProbe) -> SingleProbe:
        return SingleProbe(p, include_dirs, roots, cache_dir=cache, timeout=timeout, root_labels=root_labels,
                           pch_headers=pch_headers, context_key=context_key, memory_bytes=memory_bytes,
                           toolchain=toolchain, closures=closures,
                           keep_object=None if keep_objects is None else keep_objects / object_name(p.path))

    def batch(members: tuple[HeaderProbe, ...], after_preamble: bool) -> BatchOutcome:
        # a batch does the work of several probes: it gets twice one probe's time
        return compile_batch(members, include_dirs, roots, timeout=2 * timeout, memory_bytes=memory_bytes,
                             keep_objects=keep_objects, object_name=object_name, after_preamble=after_preamble)

    # each nvcc run peaks near 300 MB: more than 4 at once buys little and risks memory
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(jobs, 4))) as pool:
        rounds = _Rounds(pool, single, batch, done, cache, keys, groups, plan_group)
        rounds.run(batches, alone)
    results = [done[p.path] for p in chosen]
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
             "probe_seconds": round(time.monotonic() - started, 2),
             "probe_batches": rounds.batches, "headers_batched": rounds.headers_batched}
    return results, stats
