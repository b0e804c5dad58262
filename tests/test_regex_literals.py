"""The literal screen of a pattern never rejects a text the pattern matches, and says nothing when
it cannot know (extractor/support/regex_literals.py; the layers step screens symbols with it)."""

from __future__ import annotations

import itertools
import re

import pytest

from extractor.layers import load_taxonomy
from extractor.support.regex_literals import literal_screen, opens_with_repeat, required_literals


@pytest.mark.parametrize(("pattern", "expected"), [
    (r"\w*Scheduler\w*", {"Scheduler"}),
    (r"\w*(Server|Servicer|Endpoint)", {"Server", "Servicer", "Endpoint"}),
    (r"(.*\.)?\w+_pb2(_grpc)?(\..*)?", {"_pb2"}),
    (r"fastapi(\..*)?", {"fastapi"}),
    (r"(?:a\w*b)|(?:cd)", {"a", "cd"}),  # the longest literal of each alternative: "a" or "b", then "cd"
    (r"x(yz)+", {"yz"}),
    (r"(?>abc)\w", {"abc"}),
])
def test_required_literals_are_what_every_match_holds(pattern: str, expected: set[str]) -> None:
    assert required_literals(re.compile(pattern)) == expected


@pytest.mark.parametrize("pattern", [
    r"\w+",  # matches without any fixed text
    r"(abc)?\w+",  # the literal is optional
    r"abc|\w+",  # one alternative needs none
    r"(?i)scheduler",  # case ignored: "SCHEDULER" holds no "scheduler"
    r"(?i:sched)\w*",
    r"[ab]\d",  # a class of two is not read as literals
])
def test_no_literals_when_none_is_certain(pattern: str) -> None:
    assert required_literals(re.compile(pattern)) is None


def test_an_optional_tail_is_left_out() -> None:
    assert required_literals(re.compile(r"Schedul(er)?")) == {"Schedul"}


def test_opens_with_repeat() -> None:
    assert opens_with_repeat(re.compile(r"\w*Kernel"))
    assert opens_with_repeat(re.compile(r"(.*\.)?x"))
    assert opens_with_repeat(re.compile(r"(?:a|\w*b)"))
    assert not opens_with_repeat(re.compile(r"torch(\..*)?"))
    assert not opens_with_repeat(re.compile(r"a{3}b"))


def test_screen_never_rejects_a_match_of_the_shipped_taxonomy() -> None:
    """Every pattern of roles.yaml against texts built from its own literals and from neighbours:
    whatever the pattern matches, its screen finds."""
    taxonomy = load_taxonomy()
    patterns = [s.pattern for role in taxonomy.roles for s in (*role.signals, *role.ruled_out_by)]
    words = ["", "x", "_", ".", "::", "Foo", "torch", "sm90", "my_", "_kernel", "Kernel", "Batch", "Scheduler",
             "Server", "Log", "v1", "pb2", "_pb2", "grpc", "Quant", "LoRA", "tests", "bench_x"]
    texts = {"".join(parts) for parts in itertools.product(words, repeat=3)}
    checked = matched = 0
    for pattern in patterns:
        screen = literal_screen([pattern])
        if screen is None:
            continue
        checked += 1
        for text in texts:
            if pattern.fullmatch(text):
                matched += 1
                assert screen.search(text), (pattern.pattern, text)
    assert checked > 30 and matched > 1000  # the property was exercised, not vacuous
