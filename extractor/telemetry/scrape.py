"""Live ``/metrics`` scrapes, parsed with prometheus_client's own parser and reconciled with the
metric definitions found statically.

Pure functions: text in, records out. Fetching a URL or reading a file is the CLI's job
(``archdiff/commands/telemetry.py``).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from extractor.errors import UserInputError
from extractor.telemetry.libraries import conventions
from extractor.telemetry.records import SCRAPE_TYPE, MetricType, expose_names



@dataclasses.dataclass(frozen=True, order=True, slots=True)
class ScrapedFamily:
    name: str
    type: str
    help: str
    samples: tuple[str, ...]  # distinct sample names


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Mismatch:
    family: str
    scraped_type: str
    defined_type: str
    definition: str  # "name@path:line"


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class LibraryFamily:
    family: str
    origin: str  # the library that defines it
    evidence: str  # "name@path:line" of the evidence record, or "by name" from libraries.yaml


@dataclasses.dataclass(frozen=True, slots=True)
class Reconciliation:
    matched: tuple[str, ...]  # scraped family names explained by a definition in the code
    defined_not_exposed: tuple[str, ...]  # "name@path:line" of the code's definitions no family shows
    exposed_not_found: tuple[str, ...]  # families neither the code nor a known library explains
    library_families: tuple[LibraryFamily, ...]  # families a library exposes for the code
    type_mismatches: tuple[Mismatch, ...]


def _library_family_names() -> dict[str, str]:
    """Family name -> library, for the series libraries.yaml says a library exposes by itself
    (prometheus_client's default collectors, ...): they explain a scrape even when the evidence
    did not see the code serve them (a registry handed over at run time)."""
    names: dict[str, str] = {}
    for entry in conventions().provided:
        for metric in entry["metrics"]:
            definition = {"name": metric["name"], "type": metric["type"],
                          "exposed_names": expose_names(MetricType(metric["type"]), metric["name"], entry["naming"])}
            for family in _expected_families(definition):
                names[family] = entry["library"]
    return names


def parse_exposition(text: str) -> tuple[ScrapedFamily, ...]:
    """Families of a text-format exposition; a malformed one is a one-line UserInputError."""
    try:
        families = [
            ScrapedFamily(name=f.name, type=f.type, help=f.documentation,
                          samples=tuple(sorted({s.name for s in f.samples})))
            for f in text_string_to_metric_families(text)
        ]
    except (ValueError, TypeError, IndexError) as err:
        raise UserInputError(f"not Prometheus exposition text ({err}); give a /metrics URL or a file "
                             "saved from one") from err
    return tuple(sorted(families))


def read_evidence_metrics(path: Path) -> tuple[dict[str, Any], ...]:
    """The ``metrics`` records of an evidence.json, as plain dicts.

    A small reader of our own: the bundle loader (extractor.evidence.write) validates whole bundles; this
    needs only one key and must also accept a bundle written by an older archdiff.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise UserInputError(f"cannot read evidence {path}: {err}; pass the evidence.json that "
                             "`archdiff extract` wrote") from err
    metrics = data.get("metrics") if isinstance(data, dict) else None
    if not isinstance(metrics, list):
        raise UserInputError(f"{path} has no 'metrics' list: is it an archdiff evidence.json?")
    return tuple(m for m in metrics if isinstance(m, dict) and "name" in m)


def _expected_families(definition: Mapping[str, Any]) -> dict[str, str]:
    """Family name -> type a text scrape reports for it, from one definition's exposed names."""
    name = str(definition["name"])
    kind = MetricType(definition["type"])
    families = {}
    exposed = set(definition.get("exposed_names") or ())
    main = name + "_info" if kind is MetricType.INFO else name
    families[main] = SCRAPE_TYPE[kind]
    if name + "_created" in exposed:
        families[name + "_created"] = "gauge"  # prometheus_client writes _created as its own gauge family
    return families


def _pattern(name: str) -> re.Pattern[str]:
    parts = re.split(r"\{[^}]*\}", name)
    return re.compile("^" + ".+".join(re.escape(p) for p in parts) + "$")


def _label(definition: Mapping[str, Any]) -> str:
    return f"{definition['name']}@{definition.get('path', '')}:{definition.get('line', 0)}"


def reconcile(definitions: Iterable[Mapping[str, Any]], families: Iterable[ScrapedFamily]) -> Reconciliation:
    definitions = list(definitions)
    families = list(families)
    by_family: dict[str, list[tuple[Mapping[str, Any], str]]] = {}
    dynamic: list[tuple[re.Pattern[str], Mapping[str, Any], str]] = []
    for definition in definitions:
        for family_name, scrape_type in _expected_families(definition).items():
            if definition.get("dynamic"):
                dynamic.append((_pattern(family_name), definition, scrape_type))
            else:
                by_family.setdefault(family_name, []).append((definition, scrape_type))
    seen_definitions: set[str] = set()
    matched, unknown = [], []
    library: list[LibraryFamily] = []
    known = _library_family_names()
    mismatches: list[Mismatch] = []
    for family in families:
        candidates = list(by_family.get(family.name, ()))
        if not candidates:
            candidates = [(d, t) for pattern, d, t in dynamic if pattern.match(family.name)]
        origins = sorted({(str(d["origin"]), _label(d)) for d, _ in candidates if d.get("origin")})
        if origins or (not candidates and family.name in known):
            # Exposed because the code uses a library: explained by its origin, not "unknown".
            origin, evidence = origins[0] if origins else (known[family.name], "by name")
            library.append(LibraryFamily(family.name, origin, evidence))
            for definition, _ in candidates:
                seen_definitions.add(_label(definition))
            continue
        if not candidates:
            unknown.append(family.name)
            continue
        matched.append(family.name)
        for definition, scrape_type in candidates:
            seen_definitions.add(_label(definition))
        if family.type not in ("unknown", "untyped") and all(t != family.type for _, t in candidates):
            for definition, scrape_type in candidates:
                mismatches.append(Mismatch(family.name, family.type, scrape_type, _label(definition)))
    not_exposed = sorted({_label(d) for d in definitions if not d.get("origin")} - seen_definitions)
    return Reconciliation(
        matched=tuple(sorted(set(matched))),
        defined_not_exposed=tuple(not_exposed),
        exposed_not_found=tuple(sorted(set(unknown))),
        library_families=tuple(sorted(set(library))),
        type_mismatches=tuple(sorted(set(mismatches))),
    )
