"""The C/C++ scanner's answers about byte positions, by bisection, equal the plain readings they
replaced (a span search and a newline count once per macro use: quadratic on asmjit's
x86emitter.h, 10,052 uses of macros that define functions)."""

from __future__ import annotations

import hypothesis
from hypothesis import strategies as st

from extractor.cpp.parse import parse_source
from extractor.cpp.scan import _Scanner, _Spans
from extractor.model import Language, ParsedFile

_SPAN = st.tuples(st.integers(0, 200), st.integers(0, 60)).map(lambda s: (s[0], s[0] + s[1]))


@hypothesis.given(spans=st.lists(_SPAN, max_size=30), points=st.lists(st.integers(-5, 270), max_size=40))
def test_a_byte_is_in_the_spans_exactly_when_one_of_them_holds_it(spans, points):
    """Spans that nest, overlap, touch or are empty, as function bodies and macro definitions may."""
    apart = _Spans(spans)
    for at in points:
        assert (at in apart) == any(start <= at < end for start, end in spans)


@hypothesis.given(lines=st.lists(st.text(alphabet="ab \t#(){};\r", max_size=12), max_size=25))
def test_the_line_of_a_byte_counts_the_newlines_before_it(lines):
    data = "\n".join(lines).encode()
    scanner = _Scanner(ParsedFile(Language.CPP, data, parse_source(data, Language.CPP)))
    for at in range(len(data) + 1):
        assert scanner.line_at(at) == data.count(b"\n", 0, at) + 1
