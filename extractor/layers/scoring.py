"""Scoring: the role whose signals fire heaviest for a module and that its evidence corroborates,
with the rows behind it and, when the heaviest role was passed over, why.

A role resting on path words alone is weak. A role that names the kinds of signal that corroborate
it (``corroborated_by`` in the taxonomy) is never given on path words alone, so the module falls to
the next role; on equal scores a corroborated role goes before one resting on path words alone; a
role that evidence rules out (``ruled_out_by``) is not in the running at all. What is left
unassigned says why.
"""

from __future__ import annotations

import dataclasses

from extractor.layers.facts import ModuleFacts
from extractor.layers.records import UNASSIGNED, Confidence, ModuleRole, RoleEvidence
from extractor.layers.taxonomy import Role, Signal, Taxonomy

FAR_PATH_FACTOR = 0.75  # weight of a path word above the file's own directory


@dataclasses.dataclass(frozen=True, slots=True)
class Candidate:
    role: Role
    score: float
    named: bool  # a path word next to the file (its own name or its directory's) speaks for the role
    order: int  # the taxonomy's order: the last tie-break
    rows: tuple[RoleEvidence, ...]
    corroborated: bool  # a signal the role counts as agreement fired (weight-0 ones too)
    backed: bool  # ... and one of them weighs something: evidence, not only a check

    @property
    def rank(self) -> tuple[float, int, int, int]:
        # On equal scores: the module's own name (a path word next to the file), then the role more
        # than path words back, then the taxonomy's order.
        return (-self.score, 0 if self.named else 1, 0 if self.backed else 1, self.order)


def score_module(mf: ModuleFacts, taxonomy: Taxonomy) -> ModuleRole:
    candidates: list[Candidate] = []
    ruled_out: list[RoleEvidence] = []
    for order, role in enumerate(taxonomy.roles):
        fired = [(signal, row) for signal in role.signals if (row := fire(mf, role, signal)) is not None]
        exclusion = next((row for signal in role.ruled_out_by if (row := fire(mf, role, signal)) is not None), None)
        if exclusion is not None:
            if any(row.weight > 0 for _signal, row in fired):  # say so where the role was in the running
                ruled_out.append(exclusion)
            continue
        if fired:
            rows = [row for _signal, row in fired]
            named = any(signal.kind == "path" and row.weight == signal.weight for signal, row in fired)
            agreeing = [row for signal, row in fired if signal.corroborates or role.corroborates(signal.kind)]
            candidates.append(Candidate(role, sum(r.weight for r in rows), named, order,
                                        tuple(sorted(rows, key=lambda r: (-r.weight, r.signal, r.line, r.matched))),
                                        bool(agreeing), any(r.weight > 0 for r in agreeing)))
    candidates.sort(key=lambda c: c.rank)
    ruled_out.sort()
    if not candidates:
        return ModuleRole(mf.file.path, 0, mf.module, UNASSIGNED, 0.0, mf.file.lines, "", 0.0, (),
                          why=_ruled_out_why(ruled_out) or "no signal of any role fired", ruled_out=tuple(ruled_out))
    # A role that names what corroborates it is never given on path words alone.
    chosen = next((c for c in candidates if c.score >= taxonomy.threshold
                   and (c.corroborated or c.role.corroborated_by is None)), None)
    heaviest = candidates[0]
    shown = chosen or heaviest  # for "unassigned": the rows behind the best guess
    runner = next((c for c in candidates if c is not shown), None)
    why = "; ".join(part for part in ("" if chosen is heaviest else _passed_over_why(heaviest, chosen, taxonomy.threshold),
                                      _ruled_out_why(ruled_out)) if part)
    confidence = (Confidence.NONE if chosen is None else
                  Confidence.CORROBORATED if chosen.corroborated else Confidence.PATH_ONLY)
    return ModuleRole(mf.file.path, 0, mf.module, chosen.role.id if chosen else UNASSIGNED, shown.score,
                      mf.file.lines, runner.role.id if runner else "", runner.score if runner else 0.0, shown.rows,
                      confidence, why, tuple(ruled_out))


def fire(mf: ModuleFacts, role: Role, signal: Signal) -> RoleEvidence | None:
    """The row a signal gives this module: the first fact that matches, or None."""
    items = mf.items[signal.kind]
    if signal.kind == "path":
        # The file's own name and its directory speak for it; a word further up the tree
        # (vllm/model_executor/layers/linear.py: "model_executor") counts for less. The project's
        # own top-level package name speaks only for the roles set apart (a top-level tests/).
        hits = [i for i, item in enumerate(items) if signal.pattern.fullmatch(item[0])
                and (role.apart or i not in mf.project_segments) and (not signal.top or 0 == i < len(items) - 1)]
        if not hits:
            return None
        near = hits[-1] >= len(items) - 2
        return RoleEvidence(mf.file.path, 0, role.id, "path", items[hits[-1]][0],
                            signal.weight if near else signal.weight * FAR_PATH_FACTOR)
    if signal.min > 1 and len({item[0] for item in items if signal.pattern.fullmatch(item[0])}) < signal.min:
        return None
    hit = next((item for item in items if signal.pattern.fullmatch(item[0])), None)
    if hit is None:
        return None
    where = hit[2] if len(hit) > 2 else mf.file.path  # a companion header's include is shown in the header
    return RoleEvidence(where, hit[1], role.id, signal.kind, hit[0], signal.weight)


def _passed_over_why(heaviest: Candidate, chosen: Candidate | None, threshold: float) -> str:
    instead = f"; {chosen.role.id} instead" if chosen is not None else ""
    if heaviest.score < threshold:
        return f"no role reaches the threshold {threshold:g} (best: {heaviest.role.id}, {heaviest.score:g})"
    words = ", ".join(sorted({r.matched for r in heaviest.rows if r.signal == "path"}))
    needs = (" or ".join(sorted(heaviest.role.corroborated_by)) if heaviest.role.corroborated_by is not None
             else "a signal beside path words")
    return f"{heaviest.role.id} ({heaviest.score:g}) rests on path words alone ({words}) and needs {needs}{instead}"


def _ruled_out_why(ruled_out: list[RoleEvidence]) -> str:
    return "; ".join(f"{r.role} ruled out by {r.signal} {r.matched}" + (f" (line {r.line})" if r.line else "")
                     for r in ruled_out)
