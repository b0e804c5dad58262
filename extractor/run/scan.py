"""Parse each file once and run every step's scanner on it, in worker processes.

A worker gets ``(language, bytes)`` and returns bytes (:mod:`extractor.run.facts`: each step's facts
plus the file's own diagnostics), so results are cacheable by content hash, cheap to send between
processes, and identical whatever the number of workers: the caller receives them in input order.

Untrusted files are parsed in a guarded way. Before a parser sees a file, its bracket nesting is
measured on the raw bytes (cheap: one ``bytes.translate`` and a pass over the brackets alone);
deeper than the limits below, the file is a ``too-deep`` diagnostic and no parser runs. Python
goes to libcst only when the interpreter's own parser rejected the file (newer syntax), and that
parser already refuses more than 200 nested brackets; libcst does not, and overflows its native
stack at about 1,250 (SIGSEGV). Nesting that no bracket count sees (thousands of chained lambdas,
unary operators, attribute accesses) is left to the worker pool (``extractor/run/workerpool.py``):
a worker that crashes or overruns :data:`FILE_TIMEOUT` costs that one file a diagnostic.
"""

from __future__ import annotations

import ast
import itertools
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from extractor.model import Language, ParsedFile, Severity, Step
from extractor.run.facts import encode_result, pack_result, pack_result_with_plain
from extractor.run.workerpool import Failure, run_guarded

MAX_PYTHON_NESTING = 200  # CPython's own limit (its tokenizer's MAXLEVEL): deeper code runs nowhere
# Braces in C/C++/CUDA, Rust, Go and .proto; the deepest real files measured: 12 (Triton core), 11 (vLLM
# csrc). The scanners walk scopes recursively and name each level, so past this a file would be
# cut short by Python's recursion limit, silently; it is a ``too-deep`` diagnostic instead.
MAX_BRACE_NESTING = 256
FILE_TIMEOUT = 120.0  # seconds for one file's parse and scans in a worker (a batch's: extractor.run.workerpool)
# Files that a worker takes together, up to this many bytes (16 at most): vLLM's 2,468 files in
# 479 messages, each costing the driver as much as a file's (extractor.run.workerpool).
BATCH_BYTES = 64 * 1024
WORKER_MEMORY = 2 * 1024**3  # bytes of address space a worker may add to what it starts with

_STEPS: tuple[Step, ...] = ()


def _init_worker(steps: tuple[Step, ...]) -> None:
    global _STEPS
    _STEPS = steps


def parse_python(data: bytes) -> tuple[Any, Any, list[list[Any]]]:
    """``(ast_tree, libcst_tree, diagnostics)``: the interpreter's ast when it accepts the file;
    otherwise libcst, whose grammar also covers syntax newer than the running interpreter."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences etc. in analysed code
            return ast.parse(data), None, []
    except SyntaxError as err:
        problem = [err.lineno or 0, "syntax-error", _syntax_message(err), Severity.ERROR.value]
    except ValueError as err:  # NUL bytes
        return None, None, [[0, "syntax-error", str(err), Severity.ERROR.value]]
    except (MemoryError, RecursionError):  # the interpreter's parser gave up on absurd nesting
        return None, None, [_too_deep("too deeply nested for the interpreter's parser")]
    depth = nesting_depth(data, b"([{", b")]}")
    if depth > MAX_PYTHON_NESTING:
        return None, None, [_too_deep(f"brackets nest {depth} levels deep, the limit is {MAX_PYTHON_NESTING}")]
    try:
        import libcst

        tree = libcst.parse_module(data)
    except Exception:  # libcst rejects it too: the file really is not Python 3
        return None, None, [problem]
    note = [problem[0], "newer-syntax",
            f"the running Python rejects it ({problem[2]}); parsed with libcst: definitions and imports only",
            Severity.INFO.value]
    return None, tree, [note]


def _syntax_message(err: SyntaxError) -> str:
    where = f"{err.lineno}:{err.offset}" if err.lineno else "?"
    text = (err.text or "").rstrip("\n")
    caret = f" | {text.strip()}" if text.strip() else ""
    return f"{err.msg} at {where}{caret}"


def nesting_depth(data: bytes, opening: bytes, closing: bytes) -> int:
    """How deep ``opening``/``closing`` bytes nest in ``data``, counted on the raw bytes (brackets
    inside strings and comments count too: an upper bound, which is what a guard needs)."""
    keep = opening + closing
    brackets = data.translate(None, bytes(b for b in range(256) if b not in keep))
    if not brackets:
        return 0
    steps = (1 if b in opening else -1 for b in brackets)
    return max(itertools.accumulate(steps, lambda depth, step: max(0, depth + step), initial=0))


def _too_deep(why: str) -> list[Any]:
    return [0, "too-deep", f"{why}: not analysed", Severity.ERROR.value]


def count_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def scan_file(language: str, data: bytes) -> bytes:
    """Facts of every step for one file, encoded (:func:`extractor.run.facts.decode_result` reads
    them). Path-independent: the result is cached by content."""
    lang = Language(language)
    diagnostics: list[list[Any]] = []
    tree: Any = None
    fallback: Any = None
    if lang is Language.PYTHON:
        tree, fallback, diagnostics = parse_python(data)
    elif lang in (Language.CPP, Language.CUDA, Language.RUST, Language.GO, Language.PROTO):
        depth = nesting_depth(data, b"{", b"}")
        if depth > MAX_BRACE_NESTING:
            return encode_result(count_lines(data),
                                 [_too_deep(f"braces nest {depth} levels deep, the limit is {MAX_BRACE_NESTING}")], {})
    if lang in (Language.CPP, Language.CUDA):
        from extractor.cpp.parse import grammar_language, parse_source

        lang = grammar_language(data, lang)  # a C++ file that launches kernels is read as CUDA
        tree = parse_source(data, lang)
    elif lang is Language.RUST:
        from extractor.rust.parse import parse_source as parse_rust

        tree = parse_rust(data)
    elif lang is Language.GO:
        from extractor.go.parse import parse_source as parse_go

        tree = parse_go(data)
    facts: dict[str, Any] = {}
    for step in _STEPS:
        scanner = step.scanners.get(lang)
        if scanner is None:
            continue
        if lang is Language.PYTHON and tree is None and not (fallback is not None and step.python_fallback):
            continue
        parsed = ParsedFile(lang, data, tree if tree is not None else fallback)
        try:
            value = scanner(parsed)
        except RecursionError:
            diagnostics.append([0, "scanner-failed", f"{step.name}: nesting too deep", Severity.WARNING.value])
            continue
        except Exception as err:  # one scanner's bug must not cost the other kinds this file
            diagnostics.append([0, "scanner-failed", f"{step.name}: {type(err).__name__}: {err}",
                                Severity.WARNING.value])
            continue
        if value is not None:
            facts[step.name] = value
    return encode_result(count_lines(data), diagnostics, facts)


def scan_files(items: Sequence[tuple[str, bytes]], steps: tuple[Step, ...], jobs: int,
               progress: Callable[[int], None] | None = None, *, plain_too: bool = False) -> Iterator[bytes]:
    """Scan ``(language, data)`` items in ``jobs`` worker processes, yielding results in input order,
    packed (:func:`extractor.run.facts.pack_result`: compressed in the workers, stored as they are);
    ``plain_too``: with their plain bytes as well (:func:`extractor.run.facts.pack_result_with_plain`,
    for a driver on the same machine).

    A file whose worker crashed or overran :data:`FILE_TIMEOUT` yields a result with one error
    diagnostic, marked ``transient``: it is not cached, so a later run tries it again."""
    results = run_guarded(items, _scan_item_with_plain if plain_too else _scan_item, jobs=max(1, jobs),
                          timeout=FILE_TIMEOUT, memory_bytes=WORKER_MEMORY, init=_init_worker, initargs=(steps,),
                          weight=_size, batch_weight=BATCH_BYTES)
    for (_language, data), result in zip(items, results):
        yield _failed(data, result) if isinstance(result, Failure) else result
        if progress:
            progress(1)


def _size(item: tuple[str, bytes]) -> int:
    return len(item[1])


def _scan_item(item: tuple[str, bytes]) -> bytes:
    return pack_result(scan_file(*item))


def _scan_item_with_plain(item: tuple[str, bytes]) -> bytes:
    return pack_result_with_plain(scan_file(*item))


_FAILURES = {
    "crashed": ("parser-crashed", "the parser process died ({detail}) on this file: not analysed"),
    "timed-out": ("parse-timeout", "parsing and scanning took over {detail}: not analysed"),
    "failed": ("parse-failed", "parsing failed ({detail}): not analysed"),
}


def _failed(data: bytes, failure: Failure) -> bytes:
    code, message = _FAILURES[failure.kind]
    return failed_result(data, code, message.format(detail=failure.detail))


def failed_result(data: bytes, code: str, message: str) -> bytes:
    """The result of a file no scanner could finish (packed, as workers send theirs): one error,
    and never cached."""
    return pack_result(encode_result(count_lines(data), [[0, code, message, Severity.ERROR.value]], {},
                                     transient=True))
