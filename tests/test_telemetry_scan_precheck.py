"""The metrics scanner looks for metric class names only where the file's bytes spell one
(``python_scan._named_in``): the names must still be found where the parser's text is not the
bytes (a non-ASCII identifier NFKC-normalised to ``Counter``, a utf-7 source), and a name the
bytes spell only inside a longer word or a string is no use."""

from __future__ import annotations

import ast

from extractor.model import Language, ParsedFile
from extractor.telemetry.python_scan import scan_python_metrics


def class_uses(source: bytes) -> list[tuple[str, int, bool]]:
    facts = scan_python_metrics(ParsedFile(Language.PYTHON, source, ast.parse(source)))
    return [(u.name, u.line, u.shaped) for u in facts.class_uses] if facts is not None else []


def test_a_plain_file_keeps_its_class_uses():
    source = b"import prometheus_client as pc\nx = pc.Counter('a_total', documentation='d')\nmake(pc.Gauge)\n"
    assert class_uses(source) == [("pc.Counter", 2, True), ("pc.Gauge", 3, False)]


def test_a_fullwidth_identifier_is_the_class_the_parser_reads():
    # U+FF23 FULLWIDTH LATIN CAPITAL LETTER C: the bytes never spell "Counter", the tree does
    source = "import prometheus_client as pc\nx = pc.\uff23ounter('a_total', 'doc')\n".encode()
    assert b"Counter" not in source
    assert class_uses(source) == [("pc.Counter", 2, False)]


def test_a_utf7_source_is_read_as_its_declared_text():
    # ASCII bytes in which "Gauge" is written in utf-7's base64 form: "+AEc-auge" is "Gauge"
    source = b"# -*- coding: utf-7 -*-\nimport prometheus_client as pc\ng = pc.+AEc-auge('q', 'doc')\n"
    assert b"Gauge" not in source
    assert class_uses(source) == [("pc.Gauge", 3, False)]


def test_names_in_longer_words_or_strings_are_no_use():
    source = b"class GaugeLike:\n    pass\nx = GaugeLike('Counter', 'doc')\n"
    assert class_uses(source) == []


def test_an_encoding_declared_after_a_long_first_line_counts():
    source = b"#!/usr/bin/env python3 " + b"x" * 600 + b"\n# coding: utf-7\nimport prometheus_client as pc\ng = pc.+AEc-auge('q', 'doc')\n"
    assert class_uses(source) == [("pc.Gauge", 4, False)]
