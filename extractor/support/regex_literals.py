"""The literal text a regular expression's every match must contain: a cheap screen before it runs.

Data files (the role taxonomy, concept detectors) hold patterns such as ``\\w*Scheduler\\w*``:
``re`` tries each of them at every length of the text, and one alternation of a hundred of
them costs about 20 µs per text. Every match of that pattern contains "Scheduler", and a search
for a set of literals is several times cheaper, so a text that holds none of a pattern's literals
is rejected without running it. The literals are derived from the parsed pattern, so the screen
never rejects a text the pattern matches; where they cannot be derived (a pattern that may match
without any fixed text, such as ``\\w+``, or one that ignores case) there is no screen.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Iterable, Sequence
from typing import Any

_sre: Any
_sre_parse: Any
try:  # the parser ``re`` compiles with; private, so its absence only means no screen
    _sre = importlib.import_module("re._constants")
    _sre_parse = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - Python < 3.11
    _sre = _sre_parse = None

Literals = frozenset[str]


def required_literals(pattern: re.Pattern[str]) -> Literals | None:
    """Strings one of which is a substring of every text ``pattern`` matches (search, match or
    fullmatch alike), or None when no such set is known."""
    if _sre_parse is None or not isinstance(pattern.pattern, str) or pattern.flags & re.IGNORECASE:
        return None
    try:
        found = _required(_sre_parse.parse(pattern.pattern, pattern.flags))
    except (re.error, TypeError, ValueError, AttributeError, RecursionError):
        return None
    return frozenset(found) if found else None


def literal_screen(patterns: Iterable[re.Pattern[str]]) -> re.Pattern[str] | None:
    """One pattern whose ``search`` finds something in every text any of ``patterns`` matches
    (the union of their literals, longest first), or None when one of them has no literals."""
    union: set[str] = set()
    for pattern in patterns:
        literals = required_literals(pattern)
        if literals is None:
            return None
        union |= literals
    if not union:
        return None
    return re.compile("|".join(re.escape(text) for text in sorted(union, key=lambda t: (-len(t), t))))


def opens_with_repeat(pattern: re.Pattern[str]) -> bool:
    """Whether a match may begin with a repeat of no fixed length (``\\w*x``, ``(.*\\.)?x``): the
    patterns ``re`` is slowest to reject, trying the repeat at every length."""
    if _sre_parse is None or not isinstance(pattern.pattern, str):
        return False
    try:
        return _opens_with_repeat(_sre_parse.parse(pattern.pattern, pattern.flags))
    except (re.error, TypeError, ValueError, AttributeError, RecursionError):
        return False


@dataclasses.dataclass(frozen=True, slots=True)
class Sieve:
    """Which of several keyed patterns match all of a text, each text rejected the fastest way.

    ``anchored`` patterns are rejected together by one alternation of them (``any_anchored``; None
    when they cannot be joined); ``floating`` ones (opening with a repeat) by a search for their
    literals, all of theirs and then each one's."""

    anchored: tuple[tuple[int, re.Pattern[str]], ...]
    any_anchored: re.Pattern[str] | None
    floating: tuple[tuple[int, re.Pattern[str], re.Pattern[str]], ...]  # (key, pattern, its literals)
    any_floating: re.Pattern[str] | None

    @classmethod
    def of(cls, patterns: Sequence[tuple[int, re.Pattern[str]]]) -> Sieve:
        floating = []
        anchored = []
        for key, pattern in patterns:
            needs = literal_screen([pattern]) if opens_with_repeat(pattern) else None
            if needs is None:
                anchored.append((key, pattern))
            else:
                floating.append((key, pattern, needs))
        return cls(tuple(anchored), any_of([p for _k, p in anchored]) if anchored else None, tuple(floating),
                   literal_screen(p for _k, p, _needs in floating) if floating else None)

    def matching(self, text: str) -> tuple[int, ...]:
        """The keys of the patterns that match all of ``text``, in increasing order."""
        found: tuple[int, ...] = ()
        if self.anchored and (self.any_anchored is None or self.any_anchored.fullmatch(text) is not None):
            found = tuple(key for key, pattern in self.anchored if pattern.fullmatch(text))
        if self.any_floating is not None and self.any_floating.search(text) is not None:
            more = tuple(key for key, pattern, needs in self.floating if needs.search(text) and pattern.fullmatch(text))
            if more:
                found = tuple(sorted(found + more))
        return found


def any_of(patterns: list[re.Pattern[str]]) -> re.Pattern[str] | None:
    """One pattern that matches all of a text exactly when one of ``patterns`` does (None when they
    cannot be joined: flags that differ, or a global inline flag that must open its pattern)."""
    if len({p.flags for p in patterns}) != 1:
        return None
    try:
        return re.compile("|".join(f"(?:{p.pattern})" for p in patterns), patterns[0].flags)
    except re.error:
        return None


def _required(items: Iterable[tuple[Any, Any]]) -> set[str] | None:
    """For a sequence: the best requirement of any of its parts (a run of literals is one part),
    each being a substring of every match of the whole sequence."""
    best: set[str] | None = None
    run: list[str] = []

    def consider(candidate: set[str] | None) -> None:
        nonlocal best
        if candidate and (best is None or _better(candidate, best)):
            best = candidate

    for op, av in items:
        if op is _sre.LITERAL:
            run.append(chr(av))
            continue
        if run:
            consider({"".join(run)})
            run = []
        consider(_required_of(op, av))
    if run:
        consider({"".join(run)})
    return best


def _required_of(op: Any, av: Any) -> set[str] | None:
    if op is _sre.SUBPATTERN:
        _group, add_flags, _del_flags, inner = av
        return None if add_flags & re.IGNORECASE else _required(inner)
    if op is _sre.ATOMIC_GROUP:
        return _required(av)
    if op is _sre.BRANCH:
        union: set[str] = set()
        for branch in av[1]:
            needs = _required(branch)
            if not needs:
                return None  # an alternative that needs no fixed text: the alternation needs none
            union |= needs
        return union
    if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
        low, _high, inner = av
        return _required(inner) if low >= 1 else None
    return None  # a class, any character, an anchor, a look-around, a back-reference: no fixed text


def _better(a: set[str], b: set[str]) -> bool:
    """Fewer false passes: the longer shortest literal, then fewer literals."""
    return (min(map(len, a)), -len(a)) > (min(map(len, b)), -len(b))


def _opens_with_repeat(items: Any) -> bool:
    if not items:
        return False
    op, av = items[0]
    if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
        low, high, _inner = av
        return low != high
    if op is _sre.SUBPATTERN:
        return _opens_with_repeat(av[3])
    if op is _sre.ATOMIC_GROUP:
        return _opens_with_repeat(av)
    if op is _sre.BRANCH:
        return any(_opens_with_repeat(branch) for branch in av[1])
    return False
