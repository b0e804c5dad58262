"""Package context: a module whose own evidence is weak takes the role its package holds.

A reader places ``runner/utils.py`` or ``parallel/messages.py`` by the package around it, not by
the word "utils". A module that nothing assigns, or a helper file that its own name places (a role
marked ``yields_to_package``, such as utilities: ``utils.py``, not ``utils/x.py``), takes the role
that the corroborated modules beside it (same directory) hold by a clear majority of their lines;
the row that says so names the directory, and the module's confidence says "package", never
"corroborated". Only modules of the same language family speak for a package (a C++ file does
not take the role of the Python modules beside it), and the role must hold a good share of all
the directory's lines, not only of its corroborated modules' (four processor files do not make
a directory of thirty model-weight files tokenization).
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterable, Mapping

from extractor.layers.records import UNASSIGNED, Confidence, ModuleRole, RoleEvidence
from extractor.layers.taxonomy import Taxonomy


def settle_by_package(assignments: Iterable[ModuleRole], taxonomy: Taxonomy,
                      families: Mapping[str, str] | None = None) -> list[ModuleRole]:
    """``families``: path -> language family ("python", "c" for C/C++/CUDA, ...); a module takes a
    role only from siblings of its own family (all are one family when not given)."""
    assignments = list(assignments)
    family = families or {}
    rule = taxonomy.package
    if rule is None:
        return assignments
    apart = {r.id for r in taxonomy.roles if r.apart}
    by_dir: dict[str, list[ModuleRole]] = collections.defaultdict(list)
    # lines of a directory's modules of one language family, those set apart left out
    dir_lines: collections.Counter[tuple[str, str]] = collections.Counter()
    for a in assignments:
        by_dir[_directory(a.path)].append(a)
        if a.role not in apart:
            dir_lines[_directory(a.path), family.get(a.path, "")] += a.lines
    settled = []
    yielding = {r.id for r in taxonomy.roles if r.yields_to_package}
    for a in assignments:
        # Only what has no role of its own, or a helper file ("utils.py" placed by its own name): a
        # file that its name places in a role (kernel.h, logging.py) keeps that place, and so does a
        # module in a helpers directory ("utils/"), which is shared.
        if a.role != UNASSIGNED and not (a.role in yielding and _named_by_itself(a)
                                         and not _in_helper_directory(a, taxonomy)):
            settled.append(a)
            continue
        siblings = [s for s in by_dir[_directory(a.path)] if s is not a and s.confidence is Confidence.CORROBORATED
                    and s.role not in apart and family.get(s.path) == family.get(a.path)]
        lines: collections.Counter[str] = collections.Counter()
        for s in siblings:
            lines[s.role] += s.lines
        total = sum(lines.values())
        # most lines first; equal lines: the role id, so the result never depends on file order
        role, held = min(lines.items(), key=lambda kv: (-kv[1], kv[0]), default=("", 0))
        count = sum(1 for s in siblings if s.role == role)
        if not role or role == a.role or count < rule.min_modules or held <= rule.min_share * total \
                or held < rule.min_directory_share * dir_lines[_directory(a.path), family.get(a.path, "")]:
            settled.append(a)
            continue
        directory = _directory(a.path)
        was = (f"{a.role} on path words alone" if a.role != UNASSIGNED else
               "no role of its own" + (f" ({a.why})" if a.why else ""))
        why = (f"{was}; takes {role} from its package {directory}/, where {count} of {len(siblings)} "
               f"corroborated modules ({held:,} of {total:,} lines) hold it")
        row = RoleEvidence(a.path, 0, role, "package", f"{directory}/", 0.0)
        settled.append(dataclasses.replace(
            a, role=role, score=0.0, runner_up=a.role if a.role != UNASSIGNED else a.runner_up,
            runner_up_score=a.score if a.role != UNASSIGNED else a.runner_up_score, evidence=(row,),
            confidence=Confidence.PACKAGE, why=why))
    return settled


def _in_helper_directory(a: ModuleRole, taxonomy: Taxonomy) -> bool:
    """The file's directory is itself named for its helper role ("common/error.h"): the helpers
    there serve the whole tree, not one package."""
    role = taxonomy.role(a.role)
    directory = _directory(a.path).rsplit("/", 1)[-1].lower()
    return role is not None and any(s.kind == "path" and s.pattern.fullmatch(directory) for s in role.signals)


def _named_by_itself(a: ModuleRole) -> bool:
    stem = a.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return any(r.signal == "path" and r.matched == stem for r in a.evidence)


def _directory(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""
