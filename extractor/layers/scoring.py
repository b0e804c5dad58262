"""Scoring: the role whose signals fire heaviest for a module, with the rows behind it."""

from __future__ import annotations

from extractor.layers.facts import ModuleFacts
from extractor.layers.records import UNASSIGNED, ModuleRole, RoleEvidence
from extractor.layers.taxonomy import Role, Taxonomy

FAR_PATH_FACTOR = 0.75  # weight of a path word above the file's own directory


def score_module(mf: ModuleFacts, taxonomy: Taxonomy) -> ModuleRole:
    scored: list[tuple[float, int, int, Role, list[RoleEvidence]]] = []  # score, unnamed, order, role, rows
    for order, role in enumerate(taxonomy.roles):
        rows = []
        for signal in role.signals:
            if signal.kind == "path":
                # The file's own name and its directory speak for it; a word further up the tree
                # (vllm/model_executor/layers/linear.py: "model_executor") counts for less.
                segments = mf.items["path"]
                hits = [i for i, item in enumerate(segments) if signal.pattern.fullmatch(item[0])]
                if hits:
                    near = hits[-1] >= len(segments) - 2
                    rows.append(RoleEvidence(mf.file.path, 0, role.id, "path", segments[hits[-1]][0],
                                             signal.weight if near else signal.weight * FAR_PATH_FACTOR))
                continue
            if signal.min > 1:
                matched = {item[0] for item in mf.items[signal.kind] if signal.pattern.fullmatch(item[0])}
                if len(matched) < signal.min:
                    continue
            hit = next((item for item in mf.items[signal.kind] if signal.pattern.fullmatch(item[0])), None)
            if hit is not None:
                rows.append(RoleEvidence(mf.file.path, hit[1], role.id, signal.kind, hit[0], signal.weight))
        if rows:
            # On equal scores the module's own name decides (a path word next to the file), then
            # the taxonomy's order.
            named = any(r.signal == "path" and r.weight == s.weight for r in rows for s in role.signals
                        if s.kind == "path")
            scored.append((sum(r.weight for r in rows), 0 if named else 1, order, role, rows))
    scored.sort(key=lambda s: (-s[0], s[1], s[2]))
    if not scored:
        return ModuleRole(mf.file.path, 0, mf.module, UNASSIGNED, 0.0, mf.file.lines, "", 0.0, ())
    best_score, _named, _order, best, rows = scored[0]
    runner = scored[1] if len(scored) > 1 else None
    role = best.id if best_score >= taxonomy.threshold else UNASSIGNED
    return ModuleRole(mf.file.path, 0, mf.module, role, best_score, mf.file.lines,
                      runner[3].id if runner else "", runner[0] if runner else 0.0,
                      tuple(sorted(rows, key=lambda r: (-r.weight, r.signal, r.line, r.matched))))
