"""What an evidence bundle holds, derived from the steps: its schema version and its record lists.

The lists of records in ``evidence.json`` (``layers``, ``structs``, ``metrics``, ...) are the
:class:`~extractor.model.RecordKind` each step declares in ``records``: a new kind's step is the
one place its key and record type are named, and the writer and the loader follow from it.
"""

from __future__ import annotations

from collections.abc import Iterable

from extractor.model import RecordKind, Step
from extractor.steps import STEPS

SCHEMA_VERSION = 3  # written by extractor.evidence.write, checked by extractor.evidence.read
GRAPH_KEYS = ("schema_version", "system", "sources", "graph")  # before the record lists
TAIL_KEYS = ("diagnostics", "stats")  # after them


def record_kinds(steps: Iterable[Step]) -> tuple[RecordKind, ...]:
    """The record lists ``steps`` write, in step order; two steps never share a key."""
    kinds: dict[str, RecordKind] = {}
    for step in steps:
        if step.records is None:
            continue
        if step.records.key in kinds or step.records.key in GRAPH_KEYS + TAIL_KEYS:
            raise ValueError(f"step {step.name!r}: the bundle key {step.records.key!r} is already taken")
        kinds[step.records.key] = step.records
    return tuple(kinds.values())


RECORD_KINDS = record_kinds(STEPS)  # what the shipped steps write, and what load_evidence reads by default
