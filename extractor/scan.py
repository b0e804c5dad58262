"""Parse each file once and run every step's scanner on it, in a process pool.

A worker gets ``(language, bytes)`` and returns plain data (facts per step plus the file's own
diagnostics), so results are cacheable by content hash and identical whatever the pool size: the
caller receives them in input order.
"""

from __future__ import annotations

import ast
import concurrent.futures
import multiprocessing
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from extractor.model import Language, ParsedFile, Severity, Step

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
    except (ValueError, MemoryError, RecursionError) as err:  # NUL bytes, absurd nesting
        return None, None, [[0, "syntax-error", str(err), Severity.ERROR.value]]
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


def count_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def scan_file(language: str, data: bytes) -> dict[str, Any]:
    """Facts of every step for one file. Path-independent: the result is cached by content."""
    lang = Language(language)
    diagnostics: list[list[Any]] = []
    tree: Any = None
    fallback: Any = None
    if lang is Language.PYTHON:
        tree, fallback, diagnostics = parse_python(data)
    elif lang in (Language.CPP, Language.CUDA):
        from extractor.cpp.parse import parse_source

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
    return {"facts": facts, "lines": count_lines(data), "diagnostics": diagnostics}


def _scan_packed(item: tuple[str, bytes]) -> dict[str, Any]:
    return scan_file(*item)


def scan_files(items: Sequence[tuple[str, bytes]], steps: tuple[Step, ...], jobs: int,
               progress: Callable[[int], None] | None = None) -> Iterator[dict[str, Any]]:
    """Scan ``(language, data)`` items, yielding results in input order."""
    if jobs <= 1 or len(items) < 8:
        _init_worker(steps)
        for item in items:
            yield _scan_packed(item)
            if progress:
                progress(1)
        return
    context = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init_worker,
                                                initargs=(steps,)) as pool:
        chunk = max(1, min(32, len(items) // (jobs * 8)))
        for result in pool.map(_scan_packed, items, chunksize=chunk):
            yield result
            if progress:
                progress(1)
