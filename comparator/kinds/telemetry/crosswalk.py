"""The metric crosswalk: metrics of two systems that measure the same thing under different names
and units (a queue time in seconds beside one in microseconds), and the series each side gets from
libraries, set apart. The vocabulary is data (crosswalk.yaml, checked on load)."""

from __future__ import annotations

import collections
import functools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from extractor.support.datafile import load_data_file
from extractor.errors import UserInputError

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


@functools.cache
def crosswalk_vocabulary(path: Path = VOCABULARY_FILE) -> dict[str, Any]:
    vocab = load_data_file(path, VOCABULARY_SCHEMA)
    for token, unit in vocab["units"].items():
        if len(unit) != 2 or not isinstance(unit[0], str) or isinstance(unit[1], (str, bool)):
            raise UserInputError(f"{path}: units.{token}: expected [dimension, factor], got {unit!r:.40}")
    return vocab


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
    units, synonyms, stop = vocab["units"], vocab["synonyms"], set(vocab["stop"])
    tokens = _tokens(name)
    if namespace and tokens and tokens[0] == namespace:
        tokens = tokens[1:]
    dimension, factor = "", 1.0
    concept = set()
    for token in [*tokens, *_tokens(unit)]:
        if token in units:
            dimension, factor = units[token][0], float(units[token][1])
            continue
        token = synonyms.get(token, token)
        if token not in stop:
            concept.add(token)
    return frozenset(concept), dimension, factor


def crosswalk_metrics(ta: Mapping[str, Any], tb: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Pairs of metrics (from two telemetry summaries) that measure the same thing under different
    names or units, best first.

    Only the systems' own metrics are paired: a twin is its metric measured once more, and a
    library's series are the library's design (:func:`library_series` lists them apart). Each
    metric joins at most one pair (greedy by score), so a row is a claim a reader can check.
    """
    vocab = crosswalk_vocabulary()
    sides = {}
    for side, tele in (("a", ta), ("b", tb)):
        metrics = [m for m in tele["metrics"] if not m["dynamic"]][:MAX_METRICS]
        ns = namespace_token(m["name"] for m in metrics)
        sides[side] = [(m, *metric_concept(m["name"], m["unit"], ns)) for m in metrics]
    candidates = []
    for ma, ca, da, fa in sides["a"]:
        for mb, cb, db, fb in sides["b"]:
            if not ca or not cb or (da and db and da != db):
                continue
            shared = ca & cb
            if not shared:
                continue
            if len(shared) < vocab["min_shared"] and ca != cb:
                continue  # one common word ("request") is not evidence of one measurement
            jaccard = len(shared) / len(ca | cb)
            unit_agreement = 1.0 if (da and da == db) else (0.5 if not (da or db) else 0.25)
            score = round(0.8 * jaccard + 0.2 * unit_agreement, 3)
            if score < vocab["min_score"]:
                continue
            candidates.append((score, ma, mb, shared, da or db, fa, fb, da, db))
    candidates.sort(key=lambda c: (-c[0], c[1]["name"], c[2]["name"], c[1]["path"], c[2]["path"]))
    used_a: set[str] = set()
    used_b: set[str] = set()
    rows = []
    for score, ma, mb, shared, dim, fa, fb, da, db in candidates:
        # by name: a metric defined twice (two code paths registering one family) pairs once
        ka, kb = ma["name"], mb["name"]
        if ka in used_a or kb in used_b:
            continue
        used_a.add(ka)
        used_b.add(kb)
        note = ""
        if da and db and fa != fb:
            note = f"units differ: 1 {_unit_word(ma)} = {fa / fb:g} {_unit_word(mb)}"
        rows.append({
            "score": score,
            "shared": sorted(shared),
            "dimension": dim,
            "same_name": ma["name"] == mb["name"],
            "unit_note": note,
            "a": {k: ma[k] for k in ("name", "type", "unit", "path", "line")} | {"thresholds": len(ma["thresholds"])},
            "b": {k: mb[k] for k in ("name", "type", "unit", "path", "line")} | {"thresholds": len(mb["thresholds"])},
        })
    rows.sort(key=lambda r: (-r["score"], r["a"]["name"], r["b"]["name"]))
    return rows


def _unit_word(metric: Mapping[str, Any]) -> str:
    units = crosswalk_vocabulary()["units"]
    for token in reversed(_tokens(metric["name"]) + _tokens(metric["unit"])):
        if token in units:
            return token
    return metric["unit"] or "unit"


def library_series(ta: Mapping[str, Any], tb: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The series each side gets from a library (not paired in the crosswalk: the same library
    gives both sides the same names), by library: counts and the names both sides expose."""
    names: dict[str, dict[str, set[str]]] = collections.defaultdict(lambda: {"a": set(), "b": set()})
    for side, tele in (("a", ta), ("b", tb)):
        for m in tele["library_metrics"]:
            names[m["origin"]][side].add(m["name"])
    return [{"origin": origin, "a": len(n["a"]), "b": len(n["b"]), "shared": sorted(n["a"] & n["b"]),
             "only_a": sorted(n["a"] - n["b"]), "only_b": sorted(n["b"] - n["a"])}
            for origin, n in sorted(names.items())]
