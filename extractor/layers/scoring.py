"""Scoring: the role whose signals fire heaviest for a module and that its evidence corroborates,
with the rows behind it and, when the heaviest role was passed over, why.

A role resting on path words alone is weak. A role that names the kinds of signal that corroborate
it (``corroborated_by`` in the taxonomy) is never given on path words alone, so the module falls to
the next role; on equal scores a corroborated role goes before one resting on path words alone; a
role that evidence rules out (``ruled_out_by``) is not in the running at all. What is left
unassigned says why.

One word is weak too: a role that rests on one path word or one symbol says so in ``why``, and
gives way to a role that a strong match backs (a ``__global__`` kernel, a kernel tree such as
"gemm/", an architecture tag such as "sm80"): in a kernel tree, a GEMM tuner's stats.h is kernel
code, not telemetry, and a per-architecture config header is not configuration.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from extractor.layers.facts import Item, ModuleFacts, first_item
from extractor.layers.records import UNASSIGNED, Confidence, ModuleRole, RoleEvidence, describe_one_word, one_word
from extractor.layers.taxonomy import Role, Signal, Taxonomy
from extractor.support.regex_literals import Sieve

FAR_PATH_FACTOR = 0.75  # weight of a path word above the file's own directory
FACADE_SHARE = 3  # a facade's role must speak for at least one in this many of the names it re-exports


@dataclasses.dataclass(frozen=True, slots=True)
class Candidate:
    role: Role
    score: float
    named: bool  # a path word next to the file (its own name or its directory's) speaks for the role
    self_named: bool  # ... the file's own name ("utils.py"), not only its directory ("common/")
    order: int  # the taxonomy's order: the last tie-break
    rows: tuple[RoleEvidence, ...]
    corroborated: bool  # a signal the role counts as agreement fired (weight-0 ones too)
    backed: bool  # ... and one of them weighs something: evidence, not only a check
    strong: bool  # a match its signal counts as strong fired (a __global__ kernel, an "sm90" tag)
    several: bool  # a signal that needs several distinct matches (``min``) fired: never one word

    @property
    def one_word(self) -> tuple[RoleEvidence, ...]:
        """The rows, when the role rests on one word (one path word, one symbol, or both saying one
        name); () when it rests on more."""
        return () if self.several else one_word(self.rows)

    @property
    def rank(self) -> tuple[float, int, int, int, int]:
        # On equal scores: a helper role that only the file's directory names goes last (an NVTX
        # include says more than a "common/" directory; "utils.py" still names itself), then the
        # module's own name (a path word next to the file), then the role more than path words
        # back, then the taxonomy's order.
        helper = self.role.yields_to_package and not self.backed and not self.self_named
        return (-self.score, 1 if helper else 0, 0 if self.named else 1, 0 if self.backed else 1, self.order)


def score_facade(mf: ModuleFacts, taxonomy: Taxonomy) -> ModuleRole | None:
    """A facade (a module that defines nothing and imports public names) that neither its own
    evidence nor its package places presents the names it re-exports: scored with them as its
    symbols, or None when they place it nowhere either."""
    if not mf.items.get("reexport"):
        return None
    names = mf.items["reexport"]
    # its own symbols first (a facade may have some the graph found), then the names it re-exports
    symbols = [*_in_order(mf.items["symbol"]), *_in_order(names)]
    facade = dataclasses.replace(mf, items={**mf.items, "symbol": symbols}, ordered=mf.ordered | {"symbol"})
    assigned = score_module(facade, taxonomy)
    role = taxonomy.role(assigned.role)
    if role is None:
        return None
    # A package's whole interface (kserve/__init__.py: a hundred names) has no one role: the names
    # that speak for the role must be a good share of what the facade re-exports.
    speaking = {name for name, _line in names
                if any(s.kind == "symbol" and s.pattern.fullmatch(name) for s in role.signals)}
    if len(speaking) * FACADE_SHARE < len({name for name, _line in names}):
        return None
    return dataclasses.replace(assigned, why="; ".join(part for part in ("placed by the names it re-exports",
                                                                        assigned.why) if part))


def score_module(mf: ModuleFacts, taxonomy: Taxonomy) -> ModuleRole:
    index = signal_index(taxonomy)
    matches = index.match(mf)
    candidates: list[Candidate] = []
    ruled_out: list[RoleEvidence] = []
    # a package's __init__ is named by its directory
    words = [w for w, _line in mf.items["path"] if w != "__init__"]
    stem = words[-1] if words else ""
    for order, (role, signals, exclusions) in enumerate(index.roles):
        if matches.keys().isdisjoint(index.numbers[order]):
            continue  # none of the role's signals matched anything: not in the running, nor ruled out
        fired = [(signal, row) for signal, number in signals if number in matches
                 and (row := _fire(mf, role, signal, matches[number])) is not None]
        exclusion = next((row for signal, number in exclusions if number in matches
                          and (row := _fire(mf, role, signal, matches[number])) is not None), None)
        if exclusion is not None:
            if any(row.weight > 0 for _signal, row in fired):  # say so where the role was in the running
                ruled_out.append(exclusion)
            continue
        if fired:
            rows = [row for _signal, row in fired]
            named = any(signal.kind == "path" and row.weight == signal.weight for signal, row in fired)
            self_named = any(signal.kind == "path" and row.matched == stem for signal, row in fired)
            agreeing = [row for signal, row in fired if signal.corroborates or role.corroborates(signal.kind)]
            strong = any(row.weight > 0 and signal.is_strong(row.matched) for signal, row in fired)
            candidates.append(Candidate(role, sum(r.weight for r in rows), named, self_named, order,
                                        tuple(sorted(rows, key=lambda r: (-r.weight, r.signal, r.line, r.matched))),
                                        bool(agreeing), any(r.weight > 0 for r in agreeing), strong,
                                        any(signal.min > 1 and row.weight > 0 for signal, row in fired)))
    candidates.sort(key=lambda c: c.rank)
    ruled_out.sort()
    if not candidates:
        return ModuleRole(mf.file.path, 0, mf.module, UNASSIGNED, 0.0, mf.file.lines, "", 0.0, (),
                          why=_ruled_out_why(ruled_out) or "no signal of any role fired", ruled_out=tuple(ruled_out))
    # A role that names what corroborates it is never given on path words alone.
    eligible = [c for c in candidates if c.score >= taxonomy.threshold
                and (c.corroborated or c.role.corroborated_by is None)]
    chosen = eligible[0] if eligible else None
    # ... and one resting on one word gives way to a role a strong match backs (not a role set
    # apart: a test's evidence is its path, and a test of a CUDA kernel is a test).
    word = chosen.one_word if chosen is not None and not chosen.role.apart else ()
    backed = next((c for c in eligible if c.strong), None) if word else None
    yielded = chosen if backed is not None and backed is not chosen else None
    chosen = backed if yielded is not None else chosen
    heaviest = candidates[0]
    shown = chosen or heaviest  # for "unassigned": the rows behind the best guess
    runner = next((c for c in candidates if c is not shown), None)
    first = yielded or chosen
    why = "; ".join(part for part in (
        "" if first is heaviest else _passed_over_why(heaviest, first, taxonomy.threshold),
        _one_word_why(first, word, chosen if yielded is not None else None) if word else "",
        _ruled_out_why(ruled_out)) if part)
    confidence = (Confidence.NONE if chosen is None else
                  Confidence.CORROBORATED if chosen.corroborated else Confidence.PATH_ONLY)
    return ModuleRole(mf.file.path, 0, mf.module, chosen.role.id if chosen else UNASSIGNED, shown.score,
                      mf.file.lines, runner.role.id if runner else "", runner.score if runner else 0.0, shown.rows,
                      confidence, why, tuple(ruled_out))


class SignalIndex:
    """The taxonomy's signals by kind, and which of them each item text matches, remembered.

    Scoring asks, for every module and every signal of every role, which of the module's items
    the signal's pattern matches: on vLLM two million ``fullmatch`` calls over the same few
    thousand texts (``torch``, ``typing``, ``forward``, ...). Here each distinct (kind, text) is
    matched against the patterns of its kind once per taxonomy, and a module's items are read
    once: :meth:`match` gives, per signal, the positions of the items it matches, in item order."""

    def __init__(self, taxonomy: Taxonomy) -> None:
        self._ids: dict[int, int] = {}  # id(signal) -> its number
        self._by_kind: dict[str, list[tuple[int, re.Pattern[str]]]] = {}
        # per role, in the taxonomy's order: the role, its (signal, number) pairs, its exclusions'
        self.roles: list[tuple[Role, tuple[tuple[Signal, int], ...], tuple[tuple[Signal, int], ...]]] = []
        self.numbers: list[frozenset[int]] = []  # per role: the numbers of all its signals
        for role in taxonomy.roles:
            signals = tuple((s, self._number(s)) for s in role.signals)
            exclusions = tuple((s, self._number(s)) for s in role.ruled_out_by)
            self.roles.append((role, signals, exclusions))
            self.numbers.append(frozenset(n for _s, n in signals + exclusions))
        self._matched: dict[str, dict[str, tuple[int, ...]]] = {kind: {} for kind in self._by_kind}
        self.taxonomy = taxonomy  # kept alive: the numbers are keyed by its signals' ids
        # Most texts match no signal at all: one alternation of a kind's patterns says so in one call,
        # but patterns that open with a repeat ("\\w*Scheduler\\w*": symbols, path words) are slow to
        # reject that way: those are screened by the literals their matches must hold.
        self._sieves = {kind: Sieve.of(patterns) for kind, patterns in self._by_kind.items()}

    def _number(self, signal: Signal) -> int:
        number = self._ids.get(id(signal))
        if number is None:
            number = self._ids[id(signal)] = len(self._ids)
            self._by_kind.setdefault(signal.kind, []).append((number, signal.pattern))
        return number

    def matching(self, kind: str, text: str) -> tuple[int, ...]:
        """The numbers of the signals of ``kind`` whose pattern matches all of ``text``."""
        memo = self._matched[kind]
        found = memo.get(text)
        if found is None:
            found = memo[text] = self._sieves[kind].matching(text)
        return found

    def match(self, mf: ModuleFacts) -> dict[int, list[int]]:
        """Signal number -> positions (in ``mf.items[signal.kind]``) of the items it matches, in order."""
        hits: dict[int, list[int]] = {}
        for kind, memo in self._matched.items():
            for position, item in enumerate(mf.items[kind]):
                found = memo.get(item[0])
                if found is None:
                    found = self.matching(kind, item[0])
                for number in found:
                    hits.setdefault(number, []).append(position)
        return hits


_INDEXES: dict[int, SignalIndex] = {}


def signal_index(taxonomy: Taxonomy) -> SignalIndex:
    """The index of ``taxonomy``, built once per taxonomy object (a run loads its taxonomy once)."""
    index = _INDEXES.get(id(taxonomy))
    if index is None or index.taxonomy is not taxonomy:
        if len(_INDEXES) >= 8:
            _INDEXES.clear()
        index = _INDEXES[id(taxonomy)] = SignalIndex(taxonomy)
    return index


def _fire(mf: ModuleFacts, role: Role, signal: Signal, positions: list[int] | None) -> RoleEvidence | None:
    """The row a signal gives this module: the first fact that matches (``positions``: where the
    signal's pattern matched ``mf.items[signal.kind]``), or None."""
    if not positions:
        return None
    items = mf.items[signal.kind]
    if signal.kind == "path":
        # The file's own name and its directory speak for it; a word further up the tree
        # (vllm/model_executor/layers/linear.py: "model_executor") counts for less. The project's
        # own top-level package name speaks only for the roles set apart (a top-level tests/).
        hits = [i for i in positions if (role.apart or i not in mf.project_segments)
                and (not signal.top or 0 == i < len(items) - 1)]
        if not hits:
            return None
        near = hits[-1] >= len(items) - 2
        return RoleEvidence(mf.file.path, 0, role.id, "path", items[hits[-1]][0],
                            signal.weight if near else signal.weight * FAR_PATH_FACTOR)
    if signal.min > 1 and len({items[i][0] for i in positions}) < signal.min:
        return None
    hit = first_item(mf, signal.kind, positions)
    where = hit[2] if len(hit) > 2 else mf.file.path  # a companion header's include is shown in the header
    return RoleEvidence(where, hit[1], role.id, signal.kind, hit[0], signal.weight)


def _in_order(items: Sequence[Item]) -> list[Item]:
    """Distinct (name, line) items by line, then name."""
    return sorted(set(items), key=lambda item: (item[1], item[0]))


def _passed_over_why(heaviest: Candidate, chosen: Candidate | None, threshold: float) -> str:
    instead = f"; {chosen.role.id} instead" if chosen is not None else ""
    if heaviest.score < threshold:
        return f"no role reaches the threshold {threshold:g} (best: {heaviest.role.id}, {heaviest.score:g})"
    needs = (" or ".join(sorted(heaviest.role.corroborated_by)) if heaviest.role.corroborated_by is not None
             else "a signal beside path words")
    words = ", ".join(sorted({r.matched for r in heaviest.rows if r.signal == "path"}))
    if words and all(r.signal == "path" for r in heaviest.rows):
        return f"{heaviest.role.id} ({heaviest.score:g}) rests on path words alone ({words}) and needs {needs}{instead}"
    # e.g. telemetry on an import of prometheus_client alone: instrumented code, not telemetry itself
    shown = ", ".join(f"{r.signal} {r.matched}" for r in heaviest.rows)
    return f"{heaviest.role.id} ({heaviest.score:g}) rests on {shown} and needs {needs}{instead}"


def _one_word_why(weak: Candidate | None, word: tuple[RoleEvidence, ...], instead: Candidate | None) -> str:
    """Why a role resting on one word stands, or what it gave way to."""
    if weak is None:
        return ""
    rests = f"{weak.role.id} ({weak.score:g}) rests on {describe_one_word(word)}"
    if instead is None:
        return rests
    rows = ", ".join(f"{r.signal} {r.matched}" for r in instead.rows if r.weight > 0)
    return f"{rests} and gives way to {instead.role.id}, which strong evidence backs ({rows})"


def _ruled_out_why(ruled_out: list[RoleEvidence]) -> str:
    return "; ".join(f"{r.role} ruled out by {r.signal} {r.matched}" + (f" (line {r.line})" if r.line else "")
                     for r in ruled_out)
