"""The metric crosswalk: metrics of two systems that measure the same thing under different names
and units (a queue time in seconds beside one in microseconds), and the series each side gets from
libraries, set apart. The vocabulary is data (crosswalk.yaml, checked on load)."""

from __future__ import annotations

import collections
import dataclasses
import functools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from comparator.kinds.telemetry.records import CrosswalkMetric, CrosswalkRow, LibrarySeries, OwnMetric, TelemetrySide
from extractor.errors import UserInputError
from extractor.support.datafile import load_data_file

VOCABULARY_FILE = Path(__file__).with_name("crosswalk.yaml")
# Metrics per side the crosswalk pairs (every pair is scored): Triton and vLLM define dozens; a
# bundle with many thousands keeps its first ones by name, so a comparison stays seconds long.
MAX_METRICS = 3_000
VOCABULARY_SCHEMA = {
    "units": {str: [(str, float)]},  # token -> [dimension, factor to the dimension's base unit]
    "synonyms": {str: str},
    "stop": [str],
    "min_score": float,
    "min_shared": int,
}


@dataclasses.dataclass(frozen=True, slots=True)
class Vocabulary:
    """The crosswalk's words, as crosswalk.yaml states them."""

    units: Mapping[str, tuple[str, float]]  # token -> (dimension, factor to the dimension's base unit)
    synonyms: Mapping[str, str]
    stop: frozenset[str]
    min_score: float  # a pair scoring less is no pair
    min_shared: int  # concept tokens a pair must share, unless their concepts are equal


@functools.cache
def crosswalk_vocabulary(path: Path = VOCABULARY_FILE) -> Vocabulary:
    data = load_data_file(path, VOCABULARY_SCHEMA)  # the file as the schema checked it: read here, once
    for token, unit in data["units"].items():
        if len(unit) != 2 or not isinstance(unit[0], str) or isinstance(unit[1], (str, bool)):
            raise UserInputError(f"{path}: units.{token}: expected [dimension, factor], got {unit!r:.40}")
    return Vocabulary(units={token: (unit[0], float(unit[1])) for token, unit in data["units"].items()},
                      synonyms=data["synonyms"], stop=frozenset(data["stop"]), min_score=data["min_score"],
                      min_shared=data["min_shared"])


def namespace_token(names: Iterable[str]) -> str:
    """The first name token shared by at least half of a system's metrics (``vllm``, ``nv``), or ''."""
    firsts = collections.Counter(_tokens(n)[0] for n in names if _tokens(n))
    total = sum(firsts.values())
    if not total:
        return ""
    token, count = min(firsts.items(), key=lambda kv: (-kv[1], kv[0]))
    return token if count * 2 >= total and total > 1 else ""


def _tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[_:.\-{}]+", name.lower()) if t]


def metric_concept(name: str, unit: str, namespace: str) -> tuple[frozenset[str], str, float]:
    """(concept tokens, unit dimension, factor to the base unit) of a metric name."""
    vocab = crosswalk_vocabulary()
    units, synonyms, stop = vocab.units, vocab.synonyms, vocab.stop
    tokens = _tokens(name)
    if namespace and tokens and tokens[0] == namespace:
        tokens = tokens[1:]
    dimension, factor = "", 1.0
    concept = set()
    for token in [*tokens, *_tokens(unit)]:
        if token in units:
            dimension, factor = units[token]
            continue
        token = synonyms.get(token, token)  # a token without a synonym stands for itself
        if token not in stop:
            concept.add(token)
    return frozenset(concept), dimension, factor


def crosswalk_metrics(ta: TelemetrySide, tb: TelemetrySide) -> tuple[CrosswalkRow, ...]:
    """Pairs of metrics (from two telemetry summaries) that measure the same thing under different
    names or units, best first.

    Only the systems' own metrics are paired: a twin is its metric measured once more, and a
    library's series are the library's design (:func:`library_series` lists them apart). Each
    metric joins at most one pair (greedy by score), so a row is a claim a reader can check.
    """
    vocab = crosswalk_vocabulary()
    candidates = []
    side_b = _concepts(tb)
    for ma, ca, da, fa in _concepts(ta):
        for mb, cb, db, fb in side_b:
            if not ca or not cb or (da and db and da != db):
                continue
            shared = ca & cb
            if not shared:
                continue
            if len(shared) < vocab.min_shared and ca != cb:
                continue  # one common word ("request") is not evidence of one measurement
            jaccard = len(shared) / len(ca | cb)
            unit_agreement = 1.0 if (da and da == db) else (0.5 if not (da or db) else 0.25)
            score = round(0.8 * jaccard + 0.2 * unit_agreement, 3)
            if score < vocab.min_score:
                continue
            candidates.append((score, ma, mb, shared, da or db, fa, fb, da, db))
    candidates.sort(key=lambda c: (-c[0], c[1].name, c[2].name, c[1].path, c[2].path))
    used_a: set[str] = set()
    used_b: set[str] = set()
    rows = []
    for score, ma, mb, shared, dim, fa, fb, da, db in candidates:
        # by name: a metric defined twice (two code paths registering one family) pairs once
        if ma.name in used_a or mb.name in used_b:
            continue
        used_a.add(ma.name)
        used_b.add(mb.name)
        note = ""
        if da and db and fa != fb:
            note = f"units differ: 1 {_unit_word(ma)} = {fa / fb:g} {_unit_word(mb)}"
        rows.append(CrosswalkRow(score=score, shared=tuple(sorted(shared)), dimension=dim,
                                 same_name=ma.name == mb.name, unit_note=note, a=_end(ma), b=_end(mb)))
    rows.sort(key=lambda r: (-r.score, r.a.name, r.b.name))
    return tuple(rows)


def _concepts(tele: TelemetrySide) -> list[tuple[OwnMetric, frozenset[str], str, float]]:
    """Each own metric whose name is not a pattern, with its concept, unit dimension and factor."""
    metrics = [m for m in tele.metrics if not m.dynamic][:MAX_METRICS]
    ns = namespace_token(m.name for m in metrics)
    return [(m, *metric_concept(m.name, m.unit, ns)) for m in metrics]


def _end(metric: OwnMetric) -> CrosswalkMetric:
    return CrosswalkMetric(metric.name, metric.type, metric.unit, metric.path, metric.line, len(metric.thresholds))


def _unit_word(metric: OwnMetric) -> str:
    units = crosswalk_vocabulary().units
    for token in reversed(_tokens(metric.name) + _tokens(metric.unit)):
        if token in units:
            return token
    return metric.unit or "unit"


def library_series(ta: TelemetrySide, tb: TelemetrySide) -> tuple[LibrarySeries, ...]:
    """The series each side gets from a library (not paired in the crosswalk: the same library
    gives both sides the same names), by library: counts and the names both sides expose."""
    names: dict[str, tuple[set[str], set[str]]] = collections.defaultdict(lambda: (set(), set()))
    for side, tele in enumerate((ta, tb)):
        for m in tele.library_metrics:
            names[m.origin][side].add(m.name)
    return tuple(LibrarySeries(origin, len(na), len(nb), tuple(sorted(na & nb)), tuple(sorted(na - nb)),
                               tuple(sorted(nb - na)))
                 for origin, (na, nb) in sorted(names.items()))
