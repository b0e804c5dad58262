"""The compile attempts of one probe, under the probe guard: each command alone and then after an
includer's preamble, each compile bounded, its dependency list checked, its first error kept in a
form that names no file outside the allowed places and no path of this machine."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from extractor.support.safeproc import Finished
from extractor.structs.compilers import PRELUDE, Command, allowed_for, found_in, run_compiler, search_superset
from extractor.structs.doomed import certain_failure, header_lines, preprocess_flags, worth_asking
from extractor.structs.firstinclude import stopping_include
from extractor.structs.header import HeaderProbe, Preamble
from extractor.structs.nvcchost import run_probe_compile
from extractor.structs.probeguard import line_is_safe, outside, parse_depfile, precompiled_beside
from extractor.structs.reasons import includer_may_cure, missing_from
from extractor.structs.records import Method


# a preamble's include line as extractor.structs.plan writes it
_PREAMBLE_INCLUDE = re.compile(r'^#include [<"]([^<>"]+)[>"]$')


def _prelude_names(suffix: str, text: str) -> frozenset[str]:
    """The <...> names a probe's source of this suffix has included before its header (each is
    skipped by its guard when the header includes it again)."""
    names = set(re.findall(r"#include <([^>]+)>", text))
    if suffix != ".c":
        names |= {"stddef.h", "stdint.h"}  # what libstdc++'s <cstddef> and <cstdint> include
    if suffix == ".cu":
        names.add("cuda_runtime.h")  # nvcc includes it first in every .cu
    return frozenset(names)


_PRELUDE_NAMES = {suffix: _prelude_names(suffix, text) for suffix, text in PRELUDE.items()}
_REFUSED = "refused: the header includes a file outside the source roots and the include directories"


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


class CompileAttempts:
    """Compile attempts for one probe: each command alone, then after its includer's preamble;
    the first error met is kept (the one a user sees), unless a later attempt is the header's own
    compiler where the earlier one was only a quicker or a wrong try: nvcc for a CUDA header after
    g++ (``'blockIdx' was not declared`` says nothing a user can act on), a CPU's cross compiler
    after the host's (``altivec.h: No such file`` is why the cross compiler was tried, not why it
    failed). Then the first error of that compiler is kept."""

    def __init__(self, probe: HeaderProbe, include_dirs: Sequence[Path], roots: Sequence[Path], tmpdir: Path,
                 obj: Path, timeout: float, memory_bytes: int, pch_headers: frozenset[Path], replacements) -> None:
        self.probe, self.include_dirs, self.roots, self.tmpdir, self.obj = probe, include_dirs, roots, tmpdir, obj
        self.timeout, self.memory_bytes, self.pch_headers = timeout, memory_bytes, pch_headers
        self.replacements = replacements
        self._error = ""
        # the failed attempt whose message is the error kept, not worked out yet (see ``attempt``)
        self._unexplained: Callable[[], str] | None = None
        self.last_error = ""  # of the latest attempt
        self.timed_out = False
        self._own_compiler = False  # an attempt of the header's own compiler has been made
        # the explanation of a first attempt told to fail without compiling (extractor.structs.doomed)
        self._doomed: Callable[[], str] | None = None

    @property
    def error(self) -> str:
        """The error kept: the first met since the header's own compiler took over."""
        if not self._error and self._unexplained is not None:
            self._error, self._unexplained = self._unexplained(), None
        return self._error

    def missing(self) -> str:
        """What the kept error says is missing (:func:`extractor.structs.reasons.missing_from`), as
        :func:`extractor.structs.compilers.target_for` reads it, without running a compile that was
        told to fail: its error names no missing header (its preprocessor found every include),
        and a missing name is no header either, so "" stands for it."""
        if self._unexplained is not None and self._unexplained is self._doomed:
            return ""
        return missing_from(self.error)

    def _keep(self, error: str) -> None:
        if not self._error and self._unexplained is None:
            self._error = error

    def first_success(self, commands: Sequence[Command], *, own: bool = False, first_made: bool = False
                      ) -> tuple[Command, Preamble | None] | None:
        """The first command (alone, then after an includer's preamble) that compiles; ``own``:
        these are the header's own compilers (a cross compiler for the CPU it was written for);
        ``first_made``: the first command's first attempt has been made and failed (``attempt``,
        then a batch after its first preamble that did not lay it out): the loop goes on from
        there, with the error that attempt kept.

        The first preamble is always tried; the others only while the compile fails on a name
        or an incomplete type (what an includer's earlier lines provide: Triton's
        ``backend_model_instance.h`` needs ``InferenceRequest`` complete, which one of its
        includers includes first), never on a missing header, which no preamble supplies and each
        attempt would cost a whole compile again."""
        attempts = (None, *self.probe.preambles)
        for command in commands:
            self._take_over(command, own)
            for n, preamble in enumerate(attempts):
                if first_made and command is commands[0] and n == 0:
                    continue
                if self.timed_out:
                    return None  # another attempt would cost as much again
                if n > 1 and not includer_may_cure(self.last_error):
                    break
                if n > 0 and self._all_doomed(command, n - 1):
                    break  # each fails, whatever it prints: the error kept is the first attempt's
                # the next attempt asks what this one's error says, unless each after it is doomed:
                # then the loop ends whatever the error says (vLLM's includers of <torch/all.h>)
                if self.attempt(command, preamble, explain=0 < n and not self._all_doomed(command, n)):
                    return command, preamble
        return None

    def first_alone(self, commands: Sequence[Command]) -> bool:
        """Whether the first command compiles the header alone: ``first_success``'s first attempt,
        made apart so that a failure can wait for a batch after its first preamble. A failure
        that the preprocessed text makes certain (:mod:`extractor.structs.doomed`) is not compiled
        unless its message is read (``error``): a later attempt of other flags or of the header's
        own compiler usually replaces it."""
        self._take_over(commands[0], False)
        return self.attempt(commands[0], None, foresee=True)

    def _take_over(self, command: Command, own: bool) -> None:
        """The header's own compiler (nvcc, a cross compiler) starts the errors kept afresh."""
        if (own or command.method is Method.PROBE_NVCC) and not self._own_compiler:
            self._own_compiler = True
            self._error, self._unexplained = "", None

    def batchable_preamble(self, command: Command) -> Preamble | None:
        """The preamble ``first_success`` tries next after ``command`` alone failed, when a batch
        after that preamble can stand for the attempt: the first attempt did not time out, the
        loop would go on to the first preamble (not every preamble doomed), and that one is not
        doomed itself."""
        if self.timed_out or not self.probe.preambles or self._all_doomed(command, 0):
            return None
        preamble = self.probe.preambles[0]
        return None if self.doomed(command, preamble) else preamble

    def _all_doomed(self, command: Command, first: int) -> bool:
        """Whether every preamble from index ``first`` on is known to fail with ``command``
        (true of none left)."""
        return all(self.doomed(command, p) for p in self.probe.preambles[first:])

    def doomed(self, command: Command, preamble: Preamble) -> bool:
        """Whether ``command`` after ``preamble`` cannot compile, known without running it: a line
        of the preamble includes a file that no directory the compiler could search has (an
        includer's ``<torch/all.h>`` when torch's headers are not given). Those lines come first in
        the probe, outside any ``#if``, so nothing before them can make the compile skip them."""
        dirs = (str(self.tmpdir), str(preamble.directory), *search_superset(command))
        for line in preamble.lines:
            m = _PREAMBLE_INCLUDE.match(line)
            if m is not None and not found_in(m.group(1), dirs):
                return True
        return False

    def attempt(self, command: Command, preamble: Preamble | None, *, explain: bool = False,
                foresee: bool = False) -> bool:
        """Whether ``command`` (after ``preamble``) compiles the probe, under the guard.

        The message of a failure that stopped before the compiler listed what it opened (a
        missing header) needs a preprocess-only pass to be told safely. That pass runs now only
        when ``explain`` (the caller reads ``last_error``); else it runs when ``error`` is read
        and this failure's message is the one kept, and never when an earlier error is kept or
        the header's own compiler takes over: of vLLM's 33 such passes, most were for messages
        nobody read (g++ before nvcc, preamble attempts after a first error).

        ``foresee``: first ask the preprocessor whether the compile is certain to fail
        (:func:`extractor.structs.doomed.certain_failure`, when the header has the shapes it
        knows); if so, the compile runs only when ``error`` is read and this failure's message is
        the one kept."""
        self.last_error = ""
        src, text, argv, dirs = self._source(command, preamble)
        allowed = allowed_for(command, self.roots, dirs, self.tmpdir)
        if self.pch_headers:
            # Find out, without compiling, whether a precompiled header would be loaded.
            deps = preprocess_deps(command.exe, argv, self.tmpdir, self.timeout, self.memory_bytes)
            if deps is not None and (beside := precompiled_beside(deps, self.pch_headers)):
                self._keep(f"refused: a precompiled header ships beside {_shown(beside[0], self.replacements)}; "
                           "archdiff compiles headers only")
                return False
        depfile = self.tmpdir / "probe.d"
        depfile.unlink(missing_ok=True)
        self.obj.unlink(missing_ok=True)
        # the compile would stop at the header's first include (a missing dependency): its output
        # is known, and no compiler runs
        search = search_superset(command)
        stops = None if preamble is not None else \
            stopping_include(argv[-3], text.count("\n"), str(self.probe.file), search, argv,
                             _PRELUDE_NAMES[command.suffix])
        if stops is None and foresee and not explain and self._told_to_fail(command, argv, search):
            if not self._error and self._unexplained is None:
                self._unexplained = self._doomed = functools.partial(self._compile_doomed, command)
            return False
        try:
            done = Finished(1, b"", stops.encode()) if stops is not None else \
                run_probe_compile([*argv[:-2], "-MD", "-MF", str(depfile), *argv[-2:]], self.tmpdir, self.timeout,
                                  self.memory_bytes)
        except OSError as err:
            self._keep(f"cannot run {Path(command.exe).name}: {err.strerror}")
            return False
        listed = _read_depfile(depfile, self.tmpdir)
        if listed is None and not done.timed_out and (done.returncode != 0 or not self.obj.exists()) \
                and not explain:
            if not self._error and self._unexplained is None:
                self._unexplained = functools.partial(self._explain, text, src, command.exe, argv, allowed, done)
            return False
        deps = listed if listed is not None else \
            preprocess_deps(command.exe, argv, self.tmpdir, self.timeout, self.memory_bytes)
        if deps is not None and outside(deps, allowed):
            # Nothing of this compile is used: its messages may quote that file.
            self._keep(_REFUSED)
            return False
        if done.timed_out:
            self._keep(f"probe compile timed out after {self.timeout:.0f} CPU s")
            self.timed_out = True
            return False
        if done.returncode == 0 and self.obj.exists():
            return True
        stderr = done.stderr.decode("utf-8", errors="replace")
        self.last_error = _safe_error(stderr, deps is not None, allowed, self.replacements, done.returncode)
        self._keep(self.last_error)
        return False

    def _told_to_fail(self, command: Command, argv: list[str], search: Sequence[str]) -> bool:
        """Whether ``command``'s compile of the probe alone (``argv``, searching at most ``search``)
        is certain to fail, as its preprocessed text tells (nvcc's preprocessing runs twice, for
        two sides: not asked)."""
        if Path(command.exe).name.startswith("nvcc"):
            return False
        try:
            text = self.probe.file.read_bytes()
        except OSError:
            return False
        return worth_asking(text, (str(self.probe.file.parent), *search)) and certain_failure(argv, self.probe.file, self.tmpdir, self.timeout,
                                                              self.memory_bytes, command.suffix == ".cpp")

    def _compile_doomed(self, command: Command) -> str:
        """The message of a first attempt that was told to fail without compiling, now that it is
        read: that compile runs now, as ``attempt`` would have run it."""
        self._unexplained = None
        if self.attempt(command, None, explain=True):
            return "probe failed: the preprocessed text said the compile would fail, and it compiled"
        error, self._error = self._error, ""
        return error

    def _source(self, command: Command, preamble: Preamble | None) -> tuple[Path, str, list[str], list[Path]]:
        """The probe's source written for ``command`` after ``preamble``: its path, its text, the
        command's argv and the include directories it searches."""
        probe, argv = self.probe, command.argv
        src = self.tmpdir / f"probe{command.suffix}"
        text = PRELUDE.get(command.suffix, PRELUDE[".cpp"])
        dirs = [*self.include_dirs, *probe.flags.include_dirs]
        if preamble is not None:
            # as the includer sees it: its earlier lines first, its quoted includes found from its directory
            text += "".join(f"{line}\n" for line in preamble.lines)
            argv = [argv[0], f"-I{preamble.directory}", *argv[1:]]
            dirs.append(preamble.directory)
        text += f'#include "{probe.file}"\n'
        src.write_text(text, encoding="utf-8")
        return src, text, argv, dirs

    def may_define(self, command: Command, preamble: Preamble, names: Iterable[str]) -> bool:
        """Whether the compile of ``command`` after ``preamble`` may lay out a definition of one of
        ``names`` from the header: False when the preprocessor, run with that command's flags,
        leaves none of those names in any line of the header (each one's definition sits in an
        ``#if`` branch that this preamble does not select either), so that compiling would lay out
        none of them, or when it fails (the compile would stop at the same `#error` or missing
        header). Costs a preprocess-only pass where a compile costs ten to fifty times as much
        (torch's headers); True whenever that pass cannot tell (nvcc, a pass that timed out or
        could not run)."""
        if Path(command.exe).name.startswith("nvcc"):
            return True  # nvcc's -E preprocesses for one side only: the compile is what tells
        wanted = {name.encode() for name in names}
        if not wanted or not all(_WORD.fullmatch(name) for name in wanted):
            return True
        src, _text, argv, _dirs = self._source(command, preamble)
        out = self.tmpdir / "probe.i"
        try:
            done = run_compiler([argv[0], *preprocess_flags(argv), "-E", str(src), "-o", str(out)], self.tmpdir,
                                self.timeout, self.memory_bytes)
            if done.timed_out:
                return True
            if done.returncode:
                return False
            with open(out, "rb") as preprocessed:
                found = header_words(preprocessed, self.probe.file, self.tmpdir)
        except OSError:
            return True
        finally:
            out.unlink(missing_ok=True)
        return bool(wanted & found)

    def _explain(self, text: str, src: Path, exe: str, argv: list[str], allowed: Sequence[Path],
                 done: Finished) -> str:
        """The message of a failed attempt whose compile listed nothing, when it is the one kept:
        its source written again (a later attempt wrote over it), then as ``attempt`` tells it."""
        src.write_text(text, encoding="utf-8")
        deps = preprocess_deps(exe, argv, self.tmpdir, self.timeout, self.memory_bytes)
        if deps is not None and outside(deps, allowed):
            return _REFUSED
        return _safe_error(done.stderr.decode("utf-8", errors="replace"), deps is not None, allowed,
                           self.replacements, done.returncode)


_WORD = re.compile(rb"[A-Za-z_][A-Za-z_0-9]*")


def header_words(lines: Iterable[bytes], header: Path, cwd: Path) -> set[bytes]:
    """The identifiers in the lines of a preprocessor's output that come from ``header``
    (:func:`extractor.structs.doomed.header_lines`): what of the header's text the compiler saw."""
    words: set[bytes] = set()
    for line in header_lines(lines, header, cwd):
        words.update(_WORD.findall(line))
    return words


def _read_depfile(depfile: Path, tmpdir: Path) -> list[Path] | None:
    """The files the compile opened, as its ``-MD`` output lists them; None when a fatal error
    stopped it before writing that (a preprocess-only pass then tells)."""
    try:
        return parse_depfile(depfile.read_text(encoding="utf-8", errors="replace"), tmpdir)
    except OSError:
        return None


def preprocess_deps(exe: str, argv: list[str], tmpdir: Path, timeout: float, memory_bytes: int
                    ) -> list[Path] | None:
    """The files the compile ``argv`` would open, as a preprocess-only pass (``-M -MG``) lists
    them, a missing header listed as it is named; None for nvcc (no ``-MG``) or a failed pass."""
    if Path(exe).name.startswith("nvcc"):
        return None  # nvcc has no -MG; its -MD output is all there is
    try:
        done = run_compiler([exe, *preprocess_flags(argv), "-M", "-MG", argv[-3]], tmpdir, timeout, memory_bytes)
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
