"""Prometheus text a Python file writes by hand (``lines.append("# TYPE x_total counter")`` and a
sample ``f"x_total{{...}} {value}"``), read from its string literals and f-strings.

A ``# TYPE`` line is the code's own family only when the file also writes a sample of it whose
value (or labels) it computes: an f-string, or literals joined to one, that starts with the name.
A test's expected scrape (``patterns = ["# TYPE m counter", 'm{k="v"} 0']``, all literal) is text
the code compares, not text it serves: counted (``python_exposition_lines_compared``), no record.
A ``# TYPE`` line whose name or type is an f-string's replacement field is said unresolved.
"""

from __future__ import annotations

import ast
import re

from extractor.telemetry.exposition import ExpositionLine

_HOLE = "\x00"  # where an f-string's replacement field stands in the text
_TYPE_LINE = re.compile(r"# TYPE ([^\n]*)")
_FAMILY = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary)[ \t]*")
_VALUE = re.compile(r'="(?:[^"\\]|\\.)*"')
_SAMPLE_KEY = re.compile(r'[{,]\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*="')


def scan_python_exposition(tree: ast.Module) -> tuple[tuple[ExpositionLine, ...], int]:
    """The file's written ``# TYPE`` families, and how many literal-only ones it compares."""
    texts = _texts(tree)
    out: list[ExpositionLine] = []
    compared = 0
    for line, text, exact in texts:
        for found in _TYPE_LINE.finditer(text):
            at = line + text.count("\n", 0, found.start()) if exact else line
            family = _FAMILY.fullmatch(found.group(1))
            if family is None:
                if _HOLE in found.group(1):
                    out.append(ExpositionLine(at, written=found.group(1).replace(_HOLE, "{…}").strip()[:80]))
                continue
            name = family.group(1)
            written, labels = _sample(texts, name, family.group(2) in ("histogram", "summary"))
            if not written:
                compared += 1
                continue
            out.append(ExpositionLine(at, name, family.group(2), help=_help_of(texts, name), labels=labels))
    return tuple(out), compared


def _texts(tree: ast.Module) -> list[tuple[int, str, bool]]:
    """Each string literal and f-string as (line, text, whether its lines are the file's): an
    f-string's replacement fields stand as ``_HOLE``; literals joined by the parser are one text."""
    out: list[tuple[int, str, bool]] = []
    inner: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                inner.add(id(value))
                parts.append(value.value if isinstance(value, ast.Constant) and isinstance(value.value, str)
                             else _HOLE)
            out.append((node.lineno, "".join(parts), False))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in inner:
            # a triple-quoted literal's newlines are the file's; escaped or joined ones are not
            exact = (node.end_lineno or node.lineno) - node.lineno == node.value.count("\n")
            out.append((node.lineno, node.value, exact))
    return sorted(out)


def _sample(texts: list[tuple[int, str, bool]], name: str, series: bool) -> tuple[bool, tuple[str, ...] | None]:
    """Whether the file writes a sample of ``name`` (of its ``_count``, ``_sum`` or ``_bucket`` series
    when it has them) with a computed part (module docstring), and that sample's label keys (``None``
    when they are computed; a ``_bucket``'s ``le`` or a quantile's ``quantile`` among them as written)."""
    suffix = "(?:_count|_sum|_bucket)?" if series else ""
    pattern = re.compile(r"(?:^|\n)" + re.escape(name) + suffix + r"(?=[{ " + _HOLE + r"])([^\n]*)")
    for _line, text, _exact in texts:
        for m in pattern.finditer(text):
            rest = m.group(1)
            if _HOLE not in rest:
                continue  # a literal sample: text to compare with, not one the code writes
            if not rest.startswith("{"):
                return True, None if rest.startswith(_HOLE) else ()
            labels = rest[:rest.find("}") + 1] if "}" in rest else rest
            # a value may be computed (`k="{v}"`), a key may not: then the keys are the caller's
            keys_only = _VALUE.sub('=""', labels)
            return True, None if _HOLE in keys_only else tuple(_SAMPLE_KEY.findall(labels))
    return False, None


def _help_of(texts: list[tuple[int, str, bool]], name: str) -> str | None:
    pattern = re.compile(r"# HELP " + re.escape(name) + r"(?: ([^\n]*))?(?:\n|$)")
    for _line, text, _exact in texts:
        m = pattern.search(text)
        if m is not None:
            return (m.group(1) or "") if _HOLE not in (m.group(1) or "") else None
    return None
