"""Struct tags come from the rules in extractor/structs/tags.yaml, not from code."""

from __future__ import annotations

import subprocess
from pathlib import Path

from extractor.structs import read_binary_layouts
from extractor.structs.records import unresolved_layout
from extractor.structs.tags import load_rules, tag_layout

SRC = Path(__file__).resolve().parent.parent / "fixtures" / "structs" / "src"


def test_shipped_rules_tag_fixture_structs(tmp_path):
    obj = tmp_path / "ring.o"
    subprocess.run(["gcc", "-g", "-c", str(SRC / "ring.c"), "-o", str(obj)], check=True)
    tags = {x.qualname: x.tags for x in read_binary_layouts(obj)}
    assert tags["shm_ring_header"] == ("shared-memory",)  # name pattern
    assert tags["packed_msg"] == ("packed",)  # members off their natural alignment
    assert tags["aligned_block"] == ("cacheline-aligned",)  # alignment >= 64
    assert tags["ring_slot"] == () and tags["tensor_desc"] == ()


def test_rules_are_data(tmp_path):
    rules_file = tmp_path / "tags.yaml"
    rules_file.write_text("rules:\n  - tag: kv-cache\n    name: ['Block(Table|Manager)']\n"
                          "  - tag: big\n    min_size: 4096\n    name: ['.']\n")
    rules = load_rules(rules_file)
    stub = unresolved_layout("vllm::BlockTable", "struct", "csrc/block.h", 3, "x")
    assert tag_layout(stub, rules) == ("kv-cache",)  # min_size fails for an unresolved size 0
    # and a path rule from the shipped file applies to unresolved structs too
    stub = unresolved_layout("vllm::Anything", "struct", "csrc/custom_all_reduce.cuh", 1, "x")
    assert "shared-memory" in tag_layout(stub)


def test_one_search_per_rule_finds_what_each_pattern_finds(tmp_path):
    """A rule's patterns are searched as one alternation; the reference is searching each. Every
    string the shipped rules look at in libpython and the fixtures, plus patterns that must not
    be joined (a back-reference, an inline global flag)."""
    import re
    import sysconfig

    from extractor.structs.tags import PATTERN_KEYS, _any_of

    obj = tmp_path / "ring.o"
    subprocess.run(["gcc", "-g", "-c", str(SRC / "ring.c"), "-o", str(obj)], check=True)
    layouts = list(read_binary_layouts(obj))
    libpython = Path(sysconfig.get_config_var("LIBDIR")) / (
        sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY"))
    if libpython.is_file():
        layouts += read_binary_layouts(libpython)
    texts = {x.qualname for x in layouts} | {x.path for x in layouts} | \
        {m.type for x in layouts for m in x.members} | {m.name for x in layouts for m in x.members}
    texts |= {"shm_key", "cudaIpcMemHandle_t", "HALF", "abcabc", "x_shm", "Pinned", "std::atomic<int>"}
    odd = (re.compile(r"(abc)\1", re.I), re.compile("shm", re.I)), (re.compile("(?i)half"), re.compile("x"))
    groups = [getattr(rule, key) for rule in load_rules() for key in PATTERN_KEYS] + list(odd)
    assert sum(len(g) > 1 for g in groups) >= 5
    for patterns in groups:
        search = _any_of(patterns)
        for text in texts:
            assert bool(search(text) if search else False) == any(p.search(text) for p in patterns), \
                ([p.pattern for p in patterns], text)
