"""The bounded YAML reader: hostile documents are refused before they are built, ordinary ones
read exactly as ``yaml.safe_load`` reads them."""

from __future__ import annotations

import time
import tracemalloc

import pytest
import yaml

from extractor.support.safeyaml import Limits, YamlLimitError, load_all, safe_load


def billion_laughs(levels: int = 9) -> str:
    text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    previous = "a"
    for name in "bcdefghijk"[: levels - 1]:
        text += f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 10) + "]\n"
        previous = name
    return text


def test_billion_laughs_is_refused_fast_and_small():
    text = billion_laughs()
    assert len(text) < 1_000  # 10**9 strings once expanded
    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(YamlLimitError, match="expands to more than"):
        load_all(text)
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert elapsed < 2.0 and peak < 20 * 1024**2, (elapsed, peak)


def test_small_alias_expansion_is_read_like_pyyaml():
    text = billion_laughs(levels=3)  # 1,000 strings: well inside the limits
    assert safe_load(text) == yaml.safe_load(text)
    with pytest.raises(YamlLimitError):
        safe_load(text, Limits(max_nodes=500))


def test_alias_count_cycle_and_depth_limits():
    many = "x: &x 1\nl: [" + ", ".join(["*x"] * 30) + "]\n"
    assert safe_load(many)["l"] == [1] * 30
    with pytest.raises(YamlLimitError, match="more than 20 aliases"):
        safe_load(many, Limits(max_aliases=20))
    with pytest.raises(YamlLimitError, match="cycle") as cycle:
        safe_load("a: &x [1, *x]\n")
    assert cycle.value.problem_mark.line == 0
    with pytest.raises(YamlLimitError, match="nested deeper"):
        safe_load("[" * 5_000 + "]" * 5_000)


def test_lines_merge_keys_and_documents():
    text = "base: &b {x: 1, y: 1}\nd:\n  <<: *b\n  y: 2\nwhen: 2020-01-02\n---\n- 1\n- {k: v}\n"
    first, second = load_all(text, lines=True)
    assert first == {"base": {"x": 1, "y": 1}, "d": {"x": 1, "y": 2}, "when": "2020-01-02"}
    assert (first.line, first["d"].line, second.line, second[1].line) == (1, 3, 7, 8)
    with pytest.raises(yaml.YAMLError):
        safe_load(text)  # two documents where one is expected
    with pytest.raises(yaml.YAMLError):
        load_all("a: [1, 2\n")  # plain syntax errors stay yaml.YAMLError with a mark


def test_nodes_are_counted_while_composing_so_a_wide_document_stops_early():
    wide = "- a\n" * 5_000
    assert len(safe_load(wide)) == 5_000
    with pytest.raises(YamlLimitError, match="more than 1000 nodes") as over:
        safe_load(wide, Limits(max_nodes=1_000))
    assert over.value.problem_mark.line == 999  # the node past the limit, not the document's end


def test_strict_tags_refuse_a_tagged_collection_that_lenient_reading_keeps():
    text = "run: !!python/object/apply:os.system ['touch x']\ncf: !GetAtt [a, b]\n"
    assert safe_load(text) == {"run": ["touch x"], "cf": ["a", "b"]}  # a repository's file still reads
    with pytest.raises(yaml.constructor.ConstructorError, match="python/object/apply"):
        safe_load(text, strict_tags=True)
    assert safe_load("a: !!map {b: [1]}\n", strict_tags=True) == {"a": {"b": [1]}}


def _graph(nodes: list[yaml.Node]) -> list[tuple]:
    """What a composed graph says, in document order: kind, tag, start, value, a block style."""
    out, stack, seen = [], list(reversed(nodes)), set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            out.append(("alias",))
            continue
        seen.add(id(node))
        value = node.value if isinstance(node, yaml.ScalarNode) else None
        style = (node.style or None) if isinstance(node, yaml.ScalarNode) else None
        out.append((type(node).__name__, node.tag, node.start_mark.line, node.start_mark.column, value, style))
        if isinstance(node, yaml.MappingNode):
            stack.extend(child for pair in reversed(node.value) for child in reversed(pair))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
    return out


MIXED = """\
%YAML 1.1
---
base: &b {x: 1, "y": 'two', z: [a, b, ~]}
d:
  <<: *b
  block: |
    {"panels": []}
  folded: >-
    one
    two
  when: 2020-01-02
  yes_: yes
  hex: 0x1F
  tagged: !!str 12
  custom: !Ref thing
? [complex, key]
: value
...
---
- plain
- "quoted \\u00e9"
- - nested
  - {k: v}
"""


def test_libyaml_events_compose_the_pure_loaders_graph():
    """With libyaml, the events come from C and the counting composer is PyYAML's own: the node
    graph is the one the pure-Python loader composes."""
    from extractor.support import safeyaml

    assert safeyaml._CParser is not None  # the wheel CI installs has libyaml
    for text in (MIXED, billion_laughs(levels=3), "a:\n  - 1\n  -\n  - {b: [c, {d: e}]}\n"):
        fast = safeyaml._compose(safeyaml._CountingCLoader(text, safeyaml.DEFAULT_LIMITS), safeyaml.DEFAULT_LIMITS)
        pure = safeyaml._compose(safeyaml._CountingLoader(text, safeyaml.DEFAULT_LIMITS), safeyaml.DEFAULT_LIMITS)
        assert _graph(fast) == _graph(pure)
    with pytest.raises(YamlLimitError, match="nested deeper"):
        safeyaml._compose(safeyaml._CountingCLoader("[" * 500 + "]" * 500, safeyaml.DEFAULT_LIMITS),
                          safeyaml.DEFAULT_LIMITS)


def test_compose_all_reads_through_libyaml_and_reports_in_pyyamls_words(monkeypatch):
    from extractor.support import safeyaml

    pure_reads = []
    real = safeyaml._CountingLoader

    def counted(text, limits):
        pure_reads.append(text)
        return real(text, limits)

    monkeypatch.setattr(safeyaml, "_CountingLoader", counted)
    assert len(safeyaml.compose_all(MIXED)) == 2 and pure_reads == []  # libyaml's events were enough
    # a problem libyaml finds is reported as PyYAML reports it: the pure loader reads the text again
    bad = "a: [1, 2\nb: 3\n"
    with pytest.raises(yaml.YAMLError) as ours:
        safeyaml.compose_all(bad)
    with pytest.raises(yaml.YAMLError) as theirs:
        list(yaml.compose_all(bad, Loader=yaml.SafeLoader))
    assert pure_reads == [bad]
    assert (str(ours.value), type(ours.value)) == (str(theirs.value), type(theirs.value))
    # a lone surrogate (a file decoded with surrogateescape) does not encode for libyaml: read in Python
    odd = "a: x\udc80y\n"
    with pytest.raises(yaml.YAMLError, match="special characters are not allowed"):
        safeyaml.compose_all(odd)
    assert pure_reads[-1] == odd


def test_without_libyaml_the_pure_loader_reads_the_same(monkeypatch):
    """A PyYAML built without libyaml: every text is read by the pure-Python loader, to the same
    objects and the same refusals."""
    from extractor.support import safeyaml

    with_c = load_all(MIXED.replace("!Ref thing", "thing"), lines=True)
    monkeypatch.setattr(safeyaml, "_CParser", None)
    assert load_all(MIXED.replace("!Ref thing", "thing"), lines=True) == with_c
    assert [d.line for d in with_c] == [3, 20]
    with pytest.raises(YamlLimitError, match="expands to more than"):
        load_all(billion_laughs())
