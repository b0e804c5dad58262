"""Probes in batches: headers that share a build context compile in one translation unit.

A header's probe parses everything it includes; for vLLM that is torch's and CUTLASS's headers,
the same tens of thousands of lines for every header. A batch includes several headers after one
prelude, so those are parsed once, and the object is read back once: each header's layouts are
the aggregates DWARF declares in its own file (``DW_AT_decl_file``, extractor.structs.objects).

**The same result as alone.** A batch stands for each member's *first* single-header attempt (its
first compiler, no preamble). It is used for a member only when that attempt would give the same
layouts, so:

- members share the command of that attempt (compiler, flags, defines, standard; the include
  directories differ only by the members' own directories, and no include any member's closure
  makes finds another file through another member's directory);
- a member is placed only after headers that cannot change what it means (``_may_follow``): every
  file outside the tree an earlier member includes, the later one includes too (so a header that
  leans on its includer for torch or ``<vector>`` cannot lean on an earlier member instead), the
  names an earlier member's own files declare are not used by the later one unless it declares
  them itself, nor the other way (an inline function's templates are instantiated at the end
  of the unit, after the later member: a type it only declares would be complete there), no
  earlier member includes it (its text would be read in that member's context),
  none changes what follows it (``#pragma pack``, ``using namespace``, a ``#define`` before an
  ``#include``), and none ``#undef``s a name the later one or a file it reads after them
  mentions (torch's ``#undef DEFINE_TOKEN`` after its own use changes nothing a later header reads);
- a header whose closure misses an unconditional include here, or that defines a name another
  member defines, is not batched (it would stop or break the batch);
- the files a member brings in are the ones its own probe reads, as its compiler's preprocessor
  lists them (``-M``, a few percent of a compile), not the text's closure: the text counts every
  ``#include`` under an ``#if`` as maybe read, and torch's headers reach 450 CUDA and system
  headers that way, which kept every two of them apart (a member whose preprocessing fails, or
  lists a header that is not there, is probed alone; nvcc has no such pass: its text closure);
- a member that the batch leaves with any definition unresolved is probed alone, by the same
  code as before (``probe.probe_header``), which then tries preambles, nvcc, cross compilers and
  keeps the error of the compiler the header was written for: every unresolved record keeps the
  reason its own probe gives.

**After a shared preamble.** A header whose first attempt fails (alone, or as a failed batch's
culprit) and whose next attempt is its includer's earlier lines waits (``probe.SingleProbe``);
the waiting headers whose includers have the same lines in the same directory are planned by
the same rules with those lines as the prelude (``plan_preamble_batches``) and compiled after
them once. A member such a batch does not lay out goes on alone from that attempt, so it keeps
the origin and the first error its own probe gives.

**Failures are bisected.** A batch that does not compile is split at the member its first error
names (the ``probe.cpp:N`` of GCC's include chain, else the file of the error line): that member is
probed alone, the members before and after it form two batches again. When the error names none
(a timeout, a memory cap, an error deep in a shared header), the batch is halved. Nothing a
failed batch printed reaches the evidence; a batch that read a file outside the allowed places
(``-MD``) is treated as failed, and its members' own probes then say so. The members that
share a failed first-attempt batch's culprit's first preamble go alone with it at once.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from extractor.structs.attempts import preprocess_deps
from extractor.structs.closure import Closure, Includes
from extractor.structs.compilers import (PRELUDE, allowed_for, compile_commands, cuda_include_dir,
                                         host_include_dirs)
from extractor.structs.header import DEFAULT_MEMORY, DEFAULT_TIMEOUT, HeaderProbe, Preamble, probe_language
from extractor.structs.nvcchost import run_probe_compile
from extractor.structs.objects import read_batch, unresolved_count
from extractor.structs.probecache import ProbeResult
from extractor.structs.probeguard import outside, parse_depfile, system_include_dirs

BATCH_SIZE = 24  # bounded so that a batch's compiler stays well inside the probe memory cap
_MAX_OUTSIDE = 600  # files from outside the tree one placement question reads at most
_LOCATION = re.compile(r"^(.*?)(?::\d+(?::\d+)?:|\(\d+\):)")


@dataclasses.dataclass(frozen=True, slots=True)
class _Member:
    probe: HeaderProbe
    file: str  # resolved
    own_dir: str  # the directory its own probe searches first (-I)
    context: tuple  # what must be equal to share a translation unit
    closure: Closure
    listed: bool = False  # its closure's files are what its preprocessor read, not the text's


@dataclasses.dataclass(frozen=True, slots=True)
class BatchOutcome:
    results: dict[str, ProbeResult]  # members the batch laid out exactly as their own probe would
    alone: tuple[HeaderProbe, ...]  # members to probe alone
    again: tuple[tuple[HeaderProbe, ...], ...]  # parts of a failed batch to compile again


def plan_batches(probes: Sequence[HeaderProbe], include_dirs: Sequence[Path], roots: Sequence[Path],
                 size: int = BATCH_SIZE, *, jobs: int = 1, timeout: float = DEFAULT_TIMEOUT,
                 memory_bytes: int = DEFAULT_MEMORY, includes: Includes | None = None
                 ) -> tuple[list[tuple[HeaderProbe, ...]], list[HeaderProbe]]:
    """(batches of two or more headers, headers to probe alone), deterministic for given inputs;
    ``jobs`` preprocess-only passes run at once, each bounded as a probe compile is. ``includes``:
    the run's closures (of ``roots``), shared with its other plans."""
    includes = includes if includes is not None else Includes(roots)
    candidates: list[_Member] = []
    alone: list[HeaderProbe] = []
    for p in probes:
        m = _member(p, include_dirs, includes)
        (candidates.append(m) if m is not None else alone.append(p))
    members: list[_Member] = []
    for m, read in zip(candidates, _files_read([m.probe for m in candidates], include_dirs, roots, jobs, timeout,
                                               memory_bytes)):
        if read is None:
            alone.append(m.probe)
        else:
            members.append(m if read is _UNLISTED else _with_files(m, read, includes))
    groups: dict[tuple, list[_Member]] = {}
    for m in members:
        groups.setdefault(m.context, []).append(m)
    planner = _Planner(includes)
    batches = _form(groups, planner, size, alone, lambda group: planner.prelude(group[0]))
    return batches, sorted(alone, key=lambda p: p.path)


def plan_preamble_batches(probes: Sequence[HeaderProbe], include_dirs: Sequence[Path], roots: Sequence[Path],
                          size: int = BATCH_SIZE, *, jobs: int = 1, timeout: float = DEFAULT_TIMEOUT,
                          memory_bytes: int = DEFAULT_MEMORY, includes: Includes | None = None
                          ) -> tuple[list[tuple[HeaderProbe, ...]], list[HeaderProbe]]:
    """(batches after a shared preamble, headers to probe alone) for headers whose first attempt
    failed and whose next is their first preamble (``HeaderProbe.preambles[0]``): torch's 65
    ``ATen/ops/*_ops.h`` use ``TORCH_API`` and lean on their includer ``ATen/ops/X.h``, whose 14
    lines before the include are the same in each; one unit holds those lines once, then the
    headers, where each was one parse of torch.

    A batch stands for each member's preamble attempt, so the planner's rules apply with the
    preamble as the prelude: members share the command, the preamble's lines and its directory
    (their own directory, so that the search is the same as alone: members elsewhere are probed
    alone); a member's files are what its preprocessor lists after the preamble's lines, less
    what those lines read alone (a header the preamble reads already is read there in both
    units); nvcc members (no listing) are probed alone.

    Each group (:func:`preamble_groups`) is planned on its own: planning the headers of one group
    gives that group's batches whatever else is planned with it."""
    includes = includes if includes is not None else Includes(roots)
    alone: list[HeaderProbe] = []
    candidates: list[_Member] = []
    for p in probes:
        m = _preamble_member(p, include_dirs, includes)
        if m is None:
            alone.append(p)
        else:
            candidates.append(m)
    firsts: dict[tuple, _Member] = {}
    for m in candidates:
        firsts.setdefault(_preamble_key(m), m)
    shared_keys = sorted(firsts, key=repr)
    read = _files_read([*(firsts[k].probe for k in shared_keys), *(m.probe for m in candidates)], include_dirs,
                       roots, jobs, timeout, memory_bytes, after_preamble=True,
                       header=[False] * len(shared_keys) + [True] * len(candidates))
    shared = dict(zip(shared_keys, read))
    groups: dict[tuple, list[_Member]] = {}
    for m, files in zip(candidates, read[len(shared_keys):]):
        before = shared[_preamble_key(m)]
        if files is None or files is _UNLISTED or before is None or before is _UNLISTED:
            alone.append(m.probe)
        else:
            groups.setdefault(_preamble_key(m), []).append(
                _with_files(m, tuple(sorted(set(files) - set(before))), includes))
    batches = _form(groups, _Planner(includes), size, alone, lambda group: frozenset())
    return batches, sorted(alone, key=lambda p: p.path)


def preamble_groups(probes: Sequence[HeaderProbe], include_dirs: Sequence[Path], includes: Includes
                    ) -> dict[str, tuple | None]:
    """Per header with a first preamble, by path, the group :func:`plan_preamble_batches` would
    place it in should its first attempt fail (None: it would be probed alone), known before any
    compile: a group can be planned once its own headers' first attempts have ended."""
    groups: dict[str, tuple | None] = {}
    for p in probes:
        if p.preambles:
            m = _preamble_member(p, include_dirs, includes)
            # an nvcc group has no listing to plan on: each of its headers goes on alone
            groups[p.path] = None if m is None or _unlisted(m.context[0]) else _preamble_key(m)
    return groups


def _preamble_member(p: HeaderProbe, include_dirs: Sequence[Path], includes: Includes) -> _Member | None:
    """``p`` as a member of a batch after its first preamble, None when it is probed alone: it
    cannot batch at all, or lies outside its preamble's directory (so that alone its search would
    differ)."""
    m = _member(p, include_dirs, includes)
    return None if m is None or m.own_dir != str(p.preambles[0].directory) else m


def _preamble_key(m: _Member) -> tuple:
    """What members of one batch after a preamble share: the command, the preamble's lines and directory."""
    first = _first_preamble(m.probe)
    assert first is not None, "a header waits for its first preamble only when it has one"
    return (m.context, *first)


def _form(groups: dict[tuple, list[_Member]], planner: _Planner, size: int, alone: list[HeaderProbe],
          prelude_of: Callable[[list[_Member]], frozenset[str]]) -> list[tuple[HeaderProbe, ...]]:
    """Each group's members placed in batches of at most ``size`` (the first batch that takes
    one, at the last place that keeps every member as it is alone); a member no batch took is
    appended to ``alone``."""
    batches: list[tuple[HeaderProbe, ...]] = []
    for key in sorted(groups, key=repr):
        group = groups[key]
        prelude = prelude_of(group)
        formed: list[list[_Member]] = []
        for m in _ordered(group):
            for batch in formed:
                at = planner.place(batch, m, prelude) if len(batch) < size else None
                if at is not None:
                    batch.insert(at, m)
                    break
            else:
                formed.append([m])
        for batch in formed:
            if len(batch) == 1:
                alone.append(batch[0].probe)
            else:
                batches.append(tuple(x.probe for x in batch))
    return batches


def _member(p: HeaderProbe, include_dirs: Sequence[Path], includes: Includes) -> _Member | None:
    language = probe_language(p)
    commands = compile_commands(p.file, language, p.flags, Path("/probe"), Path("/probe.o"), include_dirs)
    if isinstance(commands, str):
        return None
    command = commands[0]
    search = tuple(Path(a[2:]) for a in command.argv if a.startswith("-I"))
    closure = includes.closure(p.file, (*search, *_system_dirs(command.exe, command.suffix)))
    if closure.missing:
        return None  # it stops at a missing include: its own probe says which, and fails as fast
    context = (command.exe, command.suffix, tuple(a for a in command.argv[1:-3] if not a.startswith("-I")),
               tuple(str(d) for d in p.flags.include_dirs), tuple(str(d) for d in include_dirs))
    return _Member(p, os.path.realpath(p.file), str(p.file.parent), context, closure)


# a member whose compiler lists nothing without compiling (nvcc): its text closure stands
_UNLISTED: tuple[str, ...] = ()


def _files_read(probes: Sequence[HeaderProbe], include_dirs: Sequence[Path], roots: Sequence[Path], jobs: int,
                timeout: float, memory_bytes: int, *, after_preamble: bool = False,
                header: Sequence[bool] | None = None) -> list[tuple[str, ...] | None]:
    """Per probe, the files its attempt reads (see ``_read_alone``), ``jobs`` passes at once;
    ``header[i]`` False: the shared lines alone, without the header."""
    def read(i: int) -> tuple[str, ...] | None:
        return _read_alone(probes[i], include_dirs, roots, timeout, memory_bytes, after_preamble=after_preamble,
                           with_header=header is None or header[i])

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(jobs, 4))) as pool:
        return list(pool.map(read, range(len(probes))))


def _read_alone(p: HeaderProbe, include_dirs: Sequence[Path], roots: Sequence[Path], timeout: float,
                memory_bytes: int, *, after_preamble: bool = False, with_header: bool = True
                ) -> tuple[str, ...] | None:
    """The files the first attempt of ``p``'s own probe opens (``after_preamble``: its attempt
    after its first preamble; not ``with_header``: those lines alone), as its preprocessor lists
    them: the ``#if``s evaluated as that compile evaluates them. None when it would not compile
    that far (the pass fails, a listed header is not there) or would be refused (a file outside
    the allowed places): its own probe says why. ``_UNLISTED`` for nvcc, which has no such pass."""
    with tempfile.TemporaryDirectory(prefix="archdiff-deps-") as tmp:
        tmpdir = Path(tmp)
        commands = compile_commands(p.file, probe_language(p), p.flags, tmpdir / "probe", tmpdir / "probe.o",
                                    include_dirs)
        if isinstance(commands, str):
            return None
        command = commands[0]
        if _unlisted(command.exe):
            return _UNLISTED
        source = tmpdir / f"probe{command.suffix}"
        preamble = p.preambles[0] if after_preamble else None
        source.write_text(_unit(command.suffix, preamble, [p.file] if with_header else []), encoding="utf-8")
        deps = preprocess_deps(command.exe, _after(command.argv, preamble), tmpdir, timeout, memory_bytes)
        if deps is None:
            return None
        deps = [d for d in deps if d != source]
        searched = [*include_dirs, *p.flags.include_dirs, *([preamble.directory] if preamble else [])]
        if not all(d.exists() for d in deps) or outside(deps, allowed_for(command, roots, searched, tmpdir)):
            return None
        return tuple(str(d) for d in deps)


def _unit(suffix: str, preamble: Preamble | None, headers: Sequence[Path]) -> str:
    """A probe's source: the prelude, a preamble's lines, then each header by its absolute path."""
    text = PRELUDE.get(suffix, PRELUDE[".cpp"])
    if preamble is not None:
        text += "".join(f"{line}\n" for line in preamble.lines)
    return text + "".join(f'#include "{h}"\n' for h in headers)


def _after(argv: Sequence[str], preamble: Preamble | None) -> list[str]:
    """``argv`` with the preamble's directory searched first, as its includer finds its quoted includes."""
    return list(argv) if preamble is None else [argv[0], f"-I{preamble.directory}", *argv[1:]]


def _with_files(m: _Member, read: tuple[str, ...], includes: Includes) -> _Member:
    """``m`` with the files its probe reads in place of its text closure's (the names it searches
    stay the text's: every name that may be searched is asked about, a superset)."""
    files = {includes.real(f) for f in read}
    project = frozenset(f for f in files if includes.in_project(f))
    external = frozenset(files - project)
    return dataclasses.replace(m, closure=Closure(project, external, external, m.closure.searched, ()), listed=True)


def _unlisted(exe: str) -> bool:
    """Whether the compiler ``exe`` lists nothing without compiling (nvcc)."""
    return Path(exe).name.startswith("nvcc")


def _system_dirs(exe: str, suffix: str) -> tuple[Path, ...]:
    """Where a command searches after its -I directories (nvcc: the toolkit's, then its host compiler's)."""
    if suffix == ".cu":
        cuda = cuda_include_dir()
        gxx = shutil.which("g++")
        return (*([cuda] if cuda else []), *(system_include_dirs(gxx, "c++") if gxx else ()))
    return (*system_include_dirs(exe, "c" if suffix == ".c" else "c++"), *host_include_dirs())


def _ordered(group: list[_Member]) -> list[_Member]:
    """A header after the members it includes, then fewer outside files first, then by path."""
    files = {m.file: m for m in group}
    level: dict[str, int] = {}

    def depth(m: _Member, stack: frozenset[str] = frozenset()) -> int:
        if m.file not in level:
            inner = [files[f] for f in m.closure.project if f in files and f != m.file and f not in stack]
            level[m.file] = 1 + max((depth(x, stack | {m.file}) for x in inner), default=-1)
        return level[m.file]

    return sorted(group, key=lambda m: (depth(m), len(m.closure.external), m.probe.path))


class _Planner:
    def __init__(self, includes: Includes) -> None:
        self._includes = includes
        self._pairs: dict[tuple[str, str], bool] = {}
        self._preludes: dict[tuple, frozenset[str]] = {}
        self._member_names: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self._open_names: dict[str, frozenset[str]] = {}
        self._searched: dict[str, dict[str, list[tuple[str, str]]]] = {}
        self._listed: dict[str, frozenset[str]] = {}

    def names(self, m: _Member) -> tuple[frozenset[str], frozenset[str]]:
        """(declared names, identifiers) of ``m``'s own files, once per member: every pair it is in
        asks, and a closure of torch's has hundreds of files whose names were joined again per pair."""
        if m.file not in self._member_names:
            self._member_names[m.file] = self._includes.names_of(m.closure.project)
        return self._member_names[m.file]

    def open_names(self, m: _Member) -> frozenset[str]:
        """The identifiers of ``m``'s own files that they do not declare: what an earlier member
        (or a later one's instantiations) may give a meaning it does not have alone."""
        if m.file not in self._open_names:
            declared, mentioned = self.names(m)
            self._open_names[m.file] = mentioned - declared
        return self._open_names[m.file]

    def prelude(self, m: _Member) -> frozenset[str]:
        """The files outside the tree that every probe of this context includes first."""
        if m.context not in self._preludes:
            with tempfile.TemporaryDirectory(prefix="archdiff-prelude-") as tmp:
                suffix = m.context[1]
                source = Path(tmp) / f"prelude{suffix}"
                source.write_text(PRELUDE.get(suffix, PRELUDE[".cpp"]), encoding="utf-8")
                closure = self._includes.rootless().closure(source, ("", *_system_dirs(m.context[0], suffix)))
                self._preludes[m.context] = frozenset(f for f in closure.external if f != os.path.realpath(source))
        return self._preludes[m.context]

    def place(self, batch: list[_Member], m: _Member, prelude: frozenset[str]) -> int | None:
        """Where ``m`` can join ``batch`` (the last place that keeps every member as it is alone),
        or None."""
        if not self.dirs_agree(batch, m):
            return None
        for at in range(len(batch), -1, -1):
            if all(self.may_follow(x, m, prelude) for x in batch[:at]) and \
                    all(self.may_follow(m, x, prelude) for x in batch[at:]):
                return at
        return None

    def may_follow(self, a: _Member, b: _Member, prelude: frozenset[str]) -> bool:
        """Whether ``b`` compiles after ``a`` exactly as it does alone (see the module docstring)."""
        key = (a.file, b.file)
        if key not in self._pairs:
            self._pairs[key] = self._may_follow(a, b, prelude)
        return self._pairs[key]

    def _may_follow(self, a: _Member, b: _Member, prelude: frozenset[str]) -> bool:
        ca, cb = a.closure, b.closure
        if b.file in ca.project:
            return False  # b would be read inside a, after a's earlier lines
        if {d.qualname for d in a.probe.definitions} & {d.qualname for d in b.probe.definitions}:
            return False  # alternative definitions of one name (a header per CPU): a redefinition
        # the prelude's text closure holds more than it reads (what <algorithm> includes under an
        # #if: <string>'s files); listed files are what each reads, the prelude's among them
        extra = ca.external - cb.certain_external - (frozenset() if a.listed and b.listed else prelude)
        if extra and not self._harmless_outside(extra, a, b):
            return False
        only_a = ca.project - cb.project
        if only_a:
            includes = self._includes
            undefines: set[str] = set()
            for f in only_a:
                scan = includes.scan(f)
                if scan is not None:
                    if scan.changes_context or scan.defines_before_include:
                        return False
                    undefines |= scan.undefines
            if includes.declares_any(only_a, self.open_names(b)):
                return False  # b uses a name that only a's own files declare
            _, mentioned_b = self.names(b)
            if undefines and (undefines & mentioned_b or includes.mentions_any(cb.external - ca.external, undefines)):
                return False  # b, or a file it reads after a, names a macro a's own files #undef
        only_b = cb.project - ca.project
        if only_b:
            # the other way: what a's inline functions instantiate is compiled at the end of the unit,
            # after b (a `std::unique_ptr<Request>` destroyed where a only declares `struct Request;`
            # compiles once b has defined it, and fails alone)
            if self._includes.declares_any(only_b, self.open_names(a)):
                return False
        if a.file in cb.project:
            # b includes a: a is read before b's lines that precede that #include; none may matter to it
            includes = self._includes
            macros: set[str] = set()
            for f in (cb.project | cb.external) - (ca.project | ca.external):
                scan = includes.scan(f)
                if scan is not None:
                    macros |= scan.defines
            _, mentioned_a = self.names(a)
            if macros & mentioned_a:
                return False
        return True

    def _harmless_outside(self, extra: frozenset[str], a: _Member, b: _Member) -> bool:
        """Whether the files from outside the tree that ``a`` brings in and ``b`` does not
        (torch's CUDA guards before a header that includes only torch/all.h) leave ``b`` as it is
        alone: ``b``'s own files use no name they declare unless they declare it themselves (a
        header that leans on its includer for what those files declare would compile only in the
        batch), the files ``b`` reads after them from outside the tree mention none of their macros
        and none of their ``#undef``'s, and they leave no ``#pragma pack`` behind."""
        later = b.closure.external - a.closure.external
        if len(extra) > _MAX_OUTSIDE or len(later) > _MAX_OUTSIDE:
            return False  # too many files to read for the question: kept apart, at the cost of a parse
        includes = self._includes
        undefines: set[str] = set()
        for f in extra:
            scan = includes.scan(f)
            if scan is not None:
                if not scan.pack_balanced:
                    return False
                undefines |= scan.undefines
        _, mentioned_b = self.names(b)
        if undefines & mentioned_b or includes.declares_any(extra, self.open_names(b)):
            return False
        if later:
            macros: set[str] = set()
            for f in extra:
                scan = includes.scan(f)
                if scan is not None:
                    macros |= scan.defines
            if includes.mentions_any(later, macros | undefines):
                return False
        return True

    def dirs_agree(self, batch: list[_Member], new: _Member) -> bool:
        """Whether every member still finds each file its own probe finds when the batch's
        command searches every member's directory."""
        dirs = {m.own_dir for m in batch}
        for d in dirs - {new.own_dir}:
            if not self._finds_same(d, new):
                return False
        if new.own_dir not in dirs:
            for m in batch:
                if not self._finds_same(new.own_dir, m):
                    return False
        return True

    def _finds_same(self, directory: str, m: _Member) -> bool:
        """Whether ``m`` finds the files it searches for the same with ``directory`` searched too.
        Only the names whose first component ``directory`` holds can be found there: torch's best
        160 headers asked 7,000 times, each over a few thousand names (3 million look-ups, 4 of
        the planner's 10 CPU s), of which a few dozen could be."""
        if directory == m.own_dir:
            return True
        heads = self._heads(m)
        for head in (self._entries(directory) & heads.keys()) | ({""} & heads.keys()):
            for name, target in heads[head]:
                found = self._includes.beside(directory, name)
                if found and found != target:
                    return False
        return True

    def _heads(self, m: _Member) -> dict[str, list[tuple[str, str]]]:
        """``m``'s searched names by first component, "" for one that may resolve outside the
        directory it is joined to (absolute, or beginning with `.`)."""
        if m.file not in self._searched:
            heads: dict[str, list[tuple[str, str]]] = {}
            for name, target in m.closure.searched:
                head = name.split("/", 1)[0]
                heads.setdefault("" if not head or head.startswith(".") else head, []).append((name, target))
            self._searched[m.file] = heads
        return self._searched[m.file]

    def _entries(self, directory: str) -> frozenset[str]:
        if directory not in self._listed:
            try:
                self._listed[directory] = frozenset(os.listdir(directory))
            except OSError:
                self._listed[directory] = frozenset()
        return self._listed[directory]


def compile_batch(members: Sequence[HeaderProbe], include_dirs: Sequence[Path], roots: Sequence[Path], *,
                  timeout: float, memory_bytes: int, keep_objects: Path | None = None,
                  object_name=None, after_preamble: bool = False) -> BatchOutcome:
    """Compile ``members`` in one translation unit with their first command (``after_preamble``:
    after their shared first preamble, ``plan_preamble_batches``); never raises."""
    with tempfile.TemporaryDirectory(prefix="archdiff-batch-") as tmp:
        tmpdir = Path(tmp)
        obj = tmpdir / "probe.o"
        first = members[0]
        others = [m.file.parent for m in members[1:]]
        commands = compile_commands(first.file, probe_language(first), first.flags, tmpdir / "probe", obj,
                                    [*others, *include_dirs])
        if isinstance(commands, str):
            return BatchOutcome({}, tuple(members), ())
        command = commands[0]
        source = tmpdir / f"probe{command.suffix}"
        preamble = first.preambles[0] if after_preamble else None
        source.write_text(_unit(command.suffix, preamble, [m.file for m in members]), encoding="utf-8")
        searched = [*include_dirs, *first.flags.include_dirs, *(m.file.parent for m in members),
                    *([preamble.directory] if preamble else [])]
        allowed = allowed_for(command, roots, searched, tmpdir)
        depfile = tmpdir / "probe.d"
        argv = _after(command.argv, preamble)
        try:
            done = run_probe_compile([*argv[:-2], "-MD", "-MF", str(depfile), *argv[-2:]], tmpdir, timeout,
                                     memory_bytes)
        except OSError:
            return BatchOutcome({}, tuple(members), ())
        try:
            deps = parse_depfile(depfile.read_text(encoding="utf-8", errors="replace"), tmpdir)
        except OSError:
            deps = None
        if done.timed_out or done.returncode != 0 or not obj.exists():
            culprit = None if done.timed_out else _culprit(done.stderr.decode("utf-8", "replace"), source.name,
                                                           _unit(command.suffix, preamble, []).count("\n"),
                                                           members)
            return _split(members, culprit, alike=not after_preamble)
        if deps is None or outside(deps, allowed):
            return _split(members, None)  # each member's own probe refuses what must be refused
        results = read_batch(members, obj, command.method,
                             {m.path: m.preambles[0].includer for m in members} if after_preamble else None)
        accepted = {path: r for path, r in results.items() if not unresolved_count(r) and not r.diagnostics}
        if keep_objects is not None and object_name is not None:
            for path in accepted:
                shutil.copyfile(obj, keep_objects / object_name(path))
        return BatchOutcome(accepted, tuple(m for m in members if m.path not in accepted), ())


def _culprit(stderr: str, source_name: str, prelude_lines: int, members: Sequence[HeaderProbe]) -> int | None:
    """The member the first error of a failed batch belongs to, or None when it does not say; -1
    when it is in the lines every member shares (the prelude, a preamble): each fails there."""
    lines = stderr.splitlines()
    first = next((i for i, line in enumerate(lines) if re.search(r"\berror\b", line)), None)
    if first is None:
        return None
    chain = re.compile(re.escape(source_name) + r":(\d+)")
    for line in reversed(lines[:first + 1]):
        if (m := chain.search(line)) is not None:
            index = int(m.group(1)) - prelude_lines - 1
            return max(index, -1) if index < len(members) else None
    if (m := _LOCATION.match(lines[first].strip())) is not None:
        named = os.path.realpath(m.group(1))
        for index, member in enumerate(members):
            if os.path.realpath(member.file) == named:
                return index
    return None


def _split(members: Sequence[HeaderProbe], culprit: int | None, *, alike: bool = False) -> BatchOutcome:
    """A failed batch's members: the culprit alone, the members before and after it two batches
    again (halves when none is named); all alone when the shared lines failed. ``alike``: the
    members that share the culprit's first preamble go alone with it (torch's ``*_ops.h``, 24 to
    a batch, each fails alone on ``TORCH_API``: peeled off one failed batch compile at a time,
    70 compiles on the best 160 headers). A part of a batch is a batch the planner would allow:
    its rules are about pairs, each of which keeps its order."""
    if culprit == -1:
        return BatchOutcome({}, tuple(members), ())
    if culprit is None:
        half = len(members) // 2
        parts = [tuple(members[:half]), tuple(members[half:])]
        alone: list[HeaderProbe] = []
    else:
        first = _first_preamble(members[culprit])
        out = {m.path for m in members if alike and first is not None and _first_preamble(m) == first}
        out.add(members[culprit].path)
        parts = [tuple(m for m in members[:culprit] if m.path not in out),
                 tuple(m for m in members[culprit + 1:] if m.path not in out)]
        alone = [m for m in members if m.path in out]
    again = []
    for part in parts:
        if len(part) == 1:
            alone.append(part[0])
        elif part:
            again.append(part)
    return BatchOutcome({}, tuple(alone), tuple(again))


def _first_preamble(p: HeaderProbe) -> tuple[tuple[str, ...], str] | None:
    """What the attempt after a header's first preamble compiles before it (lines, directory)."""
    return (p.preambles[0].lines, str(p.preambles[0].directory)) if p.preambles else None
