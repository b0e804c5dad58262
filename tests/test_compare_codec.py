"""The findings are typed records written as JSON and read back by the renderers: every kind's
section and release part must read back as exactly the records the kind computed, and findings that
are not what the comparator wrote fail with the field named."""

from __future__ import annotations

import dataclasses
import enum

import pytest

from comparator.codec import FindingsFormatError, from_json, omitted_when_none, to_json
from comparator.compare import compare_evidence
from comparator.records import Sides
from comparator.registry import KINDS
from comparator.view import read_head
from extractor.evidence.read import load_evidence
from tests.compare_support import INPUTS

PAIRS = [("mini_vllm", "triton_like"), ("pysample", "pysample_v2"), ("telemetry_ops", "telemetry_ops_v2"),
         ("telemetry_ops_v2", "telemetry_ops"), ("triton_like", "mini_vllm")]


@pytest.mark.parametrize("left,right", PAIRS)
def test_every_part_of_the_findings_reads_back_as_the_records_it_was_written_from(left, right):
    a, b = load_evidence(INPUTS / f"{left}.evidence.json"), load_evidence(INPUTS / f"{right}.evidence.json")
    findings = compare_evidence(a, b)
    assert "capped" not in findings  # no list was cut: what reads back is all that was computed
    for kind in KINDS:
        sa, sb = kind.summarize(a), kind.summarize(b)
        assert kind.read_section(findings) == kind.compare(sa, sb), kind.key
        if findings["mode"] == "release":
            assert kind.read_release(findings["release"]) == kind.diff_release(sa, sb), kind.key
    head = read_head(findings)
    assert to_json(head.systems) == findings["systems"] and to_json(head.takeaways) == findings["takeaways"]


class Colour(str, enum.Enum):
    RED = "red"


@dataclasses.dataclass(frozen=True, slots=True)
class Row:
    path: str
    line: int
    for_: str
    colour: Colour
    size: int | float
    note: str | None = omitted_when_none()


def test_keywords_enums_numbers_and_absent_keys_keep_their_json_form():
    row = Row("a.py", 3, "5m", Colour.RED, 0.625)
    written = to_json(Sides(row, row))
    assert written["a"] == {"path": "a.py", "line": 3, "for": "5m", "colour": "red", "size": 0.625}
    assert from_json(Sides[Row], written) == Sides(row, row)
    noted = dataclasses.replace(row, note="x", size=8)
    assert to_json(noted)["note"] == "x" and from_json(Row, to_json(noted)) == noted


@pytest.mark.parametrize("value,message", [
    ({"a": {"path": "a.py", "line": "3", "for": "", "colour": "red", "size": 1}}, "findings.a.line: expected an integer"),
    ({"a": {"path": "a.py", "line": 3, "colour": "red", "size": 1}}, "findings.a.for: required key is missing"),
    ({"a": {"path": "a.py", "line": 3, "for": "", "colour": "blue", "size": 1}}, "findings.a.colour: expected one of red"),
])
def test_findings_the_comparator_did_not_write_name_the_field(value, message):
    with pytest.raises(FindingsFormatError, match=message):
        from_json(Sides[Row], {**value, "b": value["a"]})
