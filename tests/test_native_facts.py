"""The native scanners' facts are typed: each scanner names its msgspec Struct as its return type,
and what a worker sends back (msgpack) decodes in the driver into the very same typed facts."""

from __future__ import annotations

import typing

import msgspec
import pytest

from extractor import cpp, go, proto, rust
from extractor.acquire.inventory import SUFFIXES
from extractor.model import Language, ParsedFile
from extractor.run import scan as worker
from extractor.run.facts import decode_result, fact_decoders
from extractor.steps import STEPS
from extractor.telemetry import METRICS_STEP, THRESHOLDS_STEP

from conftest import FIXTURES

NATIVE = (Language.CPP, Language.CUDA, Language.RUST, Language.GO, Language.PROTO)
OWN_STEPS = (cpp.STEP, rust.STEP, go.STEP, proto.STEP, METRICS_STEP, THRESHOLDS_STEP)
PARSERS = {Language.RUST: rust.parse.parse_source, Language.GO: go.parse.parse_source}


def _own_scanners():
    for step in OWN_STEPS:
        for language, scanner in step.scanners.items():
            if language is not Language.PYTHON:
                yield step, language, scanner


@pytest.mark.parametrize(("step", "language", "scanner"), list(_own_scanners()),
                         ids=lambda v: getattr(v, "name", None) or getattr(v, "value", None) or v.__name__)
def test_each_scanner_is_annotated_with_a_frozen_struct(step, language, scanner):
    returned = typing.get_type_hints(scanner)["return"]
    options = [t for t in typing.get_args(returned) or (returned,) if t is not type(None)]
    assert len(options) == 1 and issubclass(options[0], msgspec.Struct), returned
    assert options[0].__struct_config__.frozen


def _parse(language: Language, data: bytes):
    if language in (Language.CPP, Language.CUDA):
        return cpp.parse.parse_source(data, language)
    return PARSERS[language](data) if language in PARSERS else None


def _fixture_files():
    for path in sorted(FIXTURES.rglob("*")):
        language = SUFFIXES.get(path.suffix)
        if path.is_file() and language in (*NATIVE, Language.YAML, Language.JSON):
            yield path, language


def test_what_a_worker_sends_back_decodes_to_the_same_typed_facts():
    worker._init_worker(STEPS)
    decoders = fact_decoders(STEPS)
    checked = set()
    for path, language in _fixture_files():
        data = path.read_bytes()
        result = decode_result(worker.scan_file(language.value, data))
        parsed = ParsedFile(language, data, _parse(language, data))
        for step in OWN_STEPS:
            scanner = step.scanners.get(language)
            if scanner is None:
                continue
            expected = scanner(parsed)
            if expected is None:
                assert step.name not in result.facts, path
                continue
            decoded = decoders[language][step.name](result.facts[step.name])
            assert type(decoded) is type(expected) and decoded == expected, (path, step.name)
            checked.add((step.name, language))
    # every scanner met at least one fixture file that gave it something to say
    assert checked >= {("cpp", Language.CPP), ("cpp", Language.CUDA), ("rust", Language.RUST), ("go", Language.GO),
                       ("metrics", Language.CPP), ("metrics", Language.RUST), ("metrics", Language.GO),
                       ("thresholds", Language.YAML), ("thresholds", Language.JSON), ("proto", Language.PROTO)}
