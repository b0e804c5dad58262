"""extractor.support.linestart: matches at the start of a line, found from their first literal,
are the matches of the same pattern after ``^[blanks]*`` under ``re.M``."""

from __future__ import annotations

import random
import re

import pytest

from extractor.support.linestart import at_line_starts, matches_at_line_starts, sub_lines

# Patterns of the scanners' shapes: a directive to its line's end, one that runs on through line
# continuations, one that stops mid-line, one whose whitespace may cross lines.
PATTERNS = [
    (rb"#[ \t]*(include|if|ifdef|define|pragma)\b(.*)$", b" \t"),
    (rb"#(?:[^\n]*\\\n)*[^\n]*", b" \t\r\x0b\x0c"),
    (rb"#[ \t]*undef[ \t]+([A-Za-z_]\w*)", b" \t"),
    (rb"using\s+namespace\b", b" \t"),
    (rb"#[ \t]*pragma[ \t]+(?:pack|GCC\s+push_options)", b" \t"),
    (rb"#[ \t]*define[ \t]+([A-Za-z_]\w*)(?!\w)(?:[^\n\\]|\\\r?\n|\\(?!\r?\n))*$", b" \t"),  # through continuations
]
# Fragments that make the hard cases: a `#` mid-line, a line continued by a backslash (into a
# line that starts with a directive), CRLF, blanks and other whitespace before the `#`.
FRAGMENTS = [b"#include <a.h>", b"# define X 1", b"#undef Y", b"x = a # include b", b" \\", b"\n", b"\r\n",
             b"  ", b"\t", b"\x0b", b"#pragma pack(1)", b"#pragma GCC\n push_options", b"using namespace std;",
             b"  using\n  namespace n;", b"int a; // # define Z", b"#if A", b"#", b"##include", b"y"]


def _reference(pattern: bytes, blanks: bytes) -> re.Pattern[bytes]:
    return re.compile(b"^[" + re.escape(blanks) + b"]*" + pattern, re.M)


def _texts(count: int) -> list[bytes]:
    rng = random.Random(7)
    return [b"".join(rng.choice(FRAGMENTS) for _ in range(rng.randrange(1, 30))) for _ in range(count)]


@pytest.mark.parametrize("pattern, blanks", PATTERNS)
def test_the_matches_are_those_of_the_pattern_after_blanks_at_a_line_start(pattern, blanks):
    fast, reference = re.compile(pattern, re.M), _reference(pattern, blanks)
    seen = 0
    for text in _texts(3000):
        expected = [(m.start(), m.end(), m.groups()) for m in reference.finditer(text)]
        found = [(line, m.end(), m.groups()) for line, m in at_line_starts(fast, text, blanks)]
        assert found == expected, text
        assert [m.groups() for m in matches_at_line_starts(fast, text, blanks)] == [g for *_s, g in expected]
        assert sub_lines(fast, b" ", text, blanks) == reference.sub(b" ", text), text
        seen += len(expected)
    assert seen > 200  # the texts hold many matches, not only misses


def test_a_continued_mid_line_match_hides_no_directive_on_the_next_line():
    """A `#` mid-line whose match would run on through a backslash into the next line: the
    directive that starts that line is still found (the search resumes after the `#`)."""
    text = b"int a = 1; /* # */ \\\n#include <b.h>\n"
    fast = re.compile(rb"#(?:[^\n]*\\\n)*[^\n]*")
    assert [m.group(0) for m in matches_at_line_starts(fast, text)] == [b"#include <b.h>"]
    assert sub_lines(fast, b" ", text) == b"int a = 1; /* # */ \\\n \n"


def test_a_directive_continued_over_lines_hides_the_lines_it_covers():
    text = b"#define F(x) \\\n  #x \\\n  y\n#if A\n"
    fast = re.compile(rb"#(?:[^\n]*\\\n)*[^\n]*")
    assert [line for line, _m in at_line_starts(fast, text)] == [0, text.index(b"#if")]


def test_an_include_after_blank_lines_is_found_as_a_multi_line_blank_prefix_finds_it():
    """``^\\s*#\\s*include`` (re.M) may start its match lines before the `#`, over blank lines: its
    groups are those of the `#` with only blanks but newlines before it on its own line."""
    reference = re.compile(rb'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
    fast = re.compile(rb'#\s*include\s*([<"])([^>"]+)[>"]')
    seen = 0
    for text in _texts(3000):
        expected = reference.findall(text)
        assert [m.groups() for m in matches_at_line_starts(fast, text, b" \t\r\x0b\x0c")] == expected, text
        seen += len(expected)
    assert seen > 300
