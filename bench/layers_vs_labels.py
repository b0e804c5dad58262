#!/usr/bin/env python3
"""Layer roles against hand-made labels: agreement per system and overall, and the confusions.

    python3 -m bench.layers_vs_labels [--system NAME ...] [--pypi-only] [--jobs N] [--json]
                                       [--source SYSTEM:LABEL=SPEC ...]

The labels (``tests/layers_benchmark/*.yaml``: module path -> expected role, with a one-line reason
each) were written by reading each system's code before archdiff was measured on it, and are not
changed to match its output. Each system is extracted by the pipeline users run, through the cache
(struct probes off: they do not touch layers), and every labelled module's role is compared with
its label. Also checked: no module that the generated-code step recognised holds an architectural
role. Systems whose sources are not reachable here (a local mirror that is absent) are skipped
with a line saying so; the PyPI ones are the ones CI measures. ``--source`` replaces one source of
a system by another spec of the same tree (a local checkout where a mirror cannot serve the ref).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any


from extractor.context import ExtractOptions, SourceFile, SourceTree
from extractor.support.datafile import load_data_file
from extractor.errors import ArchdiffError
from extractor.generated import CODE_LANGUAGES, detect_generated, load_generator_rules, scan_generated
from extractor.acquire.inventory import file_limit, list_files, read_regular_file
from extractor.layers import TAXONOMY_FILE, UNASSIGNED, load_taxonomy
from extractor.model import ParsedFile
from extractor.run.pipeline import acquire_sources, extract_system
from extractor.acquire.sources import default_cache_dir, parse_spec

LABELS_DIR = Path(__file__).resolve().parent.parent / "tests" / "layers_benchmark"
LABELS_SCHEMA = {
    "system": str,
    "version": str,
    "sources": [str],
    "pypi": bool,
    # miss: why archdiff's rules still disagree, when they do (one line; the label stays the reader's)
    "labels": [{"path": str, "role": str, "why": str, "miss?": str}],
}
TARGET_OVERALL, TARGET_SYSTEM = 0.90, 0.80  # issue 17's bar


@dataclasses.dataclass(frozen=True, slots=True)
class Label:
    path: str
    role: str
    why: str
    miss: str = ""  # the known reason archdiff disagrees, if it does


@dataclasses.dataclass(frozen=True, slots=True)
class LabelledSystem:
    name: str
    version: str
    sources: tuple[str, ...]
    pypi: bool  # reachable from CI (GitHub is not)
    labels: tuple[Label, ...]
    file: str


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Miss:
    path: str
    expected: str
    got: str
    decided_by: str  # archdiff's deciding row, or its why when it passed a role over
    reason: str = ""  # the label file's one-line reason for this disagreement ("" = not explained yet)


@dataclasses.dataclass(frozen=True, slots=True)
class SystemScore:
    name: str
    agreed: int
    total: int
    misses: tuple[Miss, ...]
    # modules the generated-code step recognised that hold an architectural (not apart) role
    generated_in_architecture: tuple[str, ...]
    generated_modules: int

    @property
    def share(self) -> float:
        return self.agreed / self.total if self.total else 0.0


def load_labels(directory: Path = LABELS_DIR) -> list[LabelledSystem]:
    systems = []
    for file in sorted(directory.glob("*.yaml")):
        data = load_data_file(file, LABELS_SCHEMA)
        systems.append(LabelledSystem(data["system"], data["version"], tuple(data["sources"]), data["pypi"],
                                      tuple(Label(**entry) for entry in data["labels"]), file.name))
    return systems


def score_layers(system: LabelledSystem, layers: Iterable[Mapping[str, Any]],
                 generated_paths: Iterable[str] = ()) -> SystemScore:
    """Compare the layer records of a bundle (``bundle["layers"]``) with a system's labels."""
    apart = {r.id for r in load_taxonomy(TAXONOMY_FILE).roles if r.apart}
    modules = {m["path"]: (layer["role"], m) for layer in layers for m in layer["modules"]}
    misses = []
    for label in system.labels:
        role, module = modules.get(label.path, ("(not extracted)", None))
        if role == label.role:
            continue
        decided = ""
        if module is not None:
            rows = module.get("evidence") or ()
            decided = module.get("why") or (f"{rows[0]['signal']} {rows[0]['matched']}" if rows else "")
        misses.append(Miss(label.path, label.role, role, decided, label.miss))
    generated = sorted(generated_paths)
    wrong = tuple(p for p in generated if modules.get(p, (UNASSIGNED,))[0] not in apart)
    return SystemScore(system.name, len(system.labels) - len(misses), len(system.labels), tuple(sorted(misses)),
                       wrong, len(generated))


def reachable(system: LabelledSystem) -> str:
    """"" when every source can be acquired here, else why not (a local mirror that is absent)."""
    for raw in system.sources:
        spec = parse_spec(raw)
        if spec.kind == "git" and spec.location.startswith("file://"):
            if not Path(spec.location.removeprefix("file://")).exists():
                return f"{spec.location} is not on this machine"
    return ""


def measure(systems: Sequence[LabelledSystem], *, cache_dir: Path | None = None, jobs: int = 2,
            log=print) -> list[SystemScore]:
    scores = []
    for system in systems:
        missing = reachable(system)
        if missing:
            log(f"  {system.name}: skipped ({missing})")
            continue
        cache = cache_dir or default_cache_dir()
        try:
            extraction = extract_system(system.sources, name=system.name, version=system.version,
                                        options=ExtractOptions(jobs=jobs, cache_dir=cache, probe_structs=False))
            generated = generated_paths(acquire_sources(system.sources, cache))
        except ArchdiffError as err:  # a mirror that cannot serve the ref: say so, measure the rest
            log(f"  {system.name}: skipped ({err})")
            continue
        scores.append(score_layers(system, extraction.bundle["layers"], generated))
    return scores


def generated_paths(sources: Iterable[SourceTree]) -> list[str]:
    """Every file the generated-code rules recognise, found again from the bytes on disk: the check
    that none holds an architectural role must not lean on the layers step's own rows."""
    rules, found = load_generator_rules(), []
    for source in sources:
        entries, _problems = list_files(source)
        for entry in entries:
            if entry.language not in CODE_LANGUAGES:
                continue
            try:
                data = read_regular_file(source.root / entry.rel, file_limit(entry.language))
            except OSError:
                continue
            fact = scan_generated(ParsedFile(entry.language, data, None))
            file = SourceFile(entry.path, entry.rel, source.label, entry.language, "", len(data),
                              {"generated": fact} if fact else {})
            if detect_generated(file, rules) is not None:
                found.append(entry.path)
    return found


def render(scores: Sequence[SystemScore]) -> str:
    agreed, total = sum(s.agreed for s in scores), sum(s.total for s in scores)
    lines = [f"Layer roles against hand-made labels ({len(scores)} systems, {total} modules):",
             f"  {'system':<18} {'agree':>7} {'share':>7}  generated modules (in architecture)"]
    for s in scores:
        lines.append(f"  {s.name:<18} {s.agreed:>3}/{s.total:<3} {s.share:>7.1%}  "
                     f"{s.generated_modules} ({len(s.generated_in_architecture)})")
    overall = agreed / total if total else 0.0
    lines.append(f"  {'overall':<18} {agreed:>3}/{total:<3} {overall:>7.1%}")
    lowest = min(scores, key=lambda s: s.share) if scores else None
    lines.append(f"targets: overall >= {TARGET_OVERALL:.0%}: {'yes' if overall >= TARGET_OVERALL else 'NO'}; "
                 f"every system >= {TARGET_SYSTEM:.0%}: "
                 f"{'yes' if lowest and lowest.share >= TARGET_SYSTEM else 'NO'}"
                 + (f" (lowest: {lowest.name} {lowest.share:.1%})" if lowest else "")
                 + f"; generated code in an architectural role: "
                   f"{sum(len(s.generated_in_architecture) for s in scores)}")
    confusions = collections.Counter((m.expected, m.got) for s in scores for m in s.misses)
    if confusions:
        lines.append("confusions (labelled -> archdiff), most frequent first:")
        lines += [f"  {n:>3}  {expected} -> {got}" for (expected, got), n in
                  sorted(confusions.items(), key=lambda kv: (-kv[1], kv[0]))]
    unexplained = 0
    for s in scores:
        for m in s.misses:
            lines.append(f"  {s.name}: {m.path}: labelled {m.expected}, got {m.got}"
                         + (f" ({m.decided_by})" if m.decided_by else ""))
            lines.append(f"      why: {m.reason}" if m.reason else "      why: (no reason recorded yet)")
            unexplained += not m.reason
    if any(s.misses for s in scores):
        lines.append(f"disagreements without a recorded reason: {unexplained}")
    return "\n".join(lines)


def to_json(scores: Sequence[SystemScore]) -> dict[str, Any]:
    agreed, total = sum(s.agreed for s in scores), sum(s.total for s in scores)
    return {"overall": {"agreed": agreed, "total": total, "share": round(agreed / total, 4) if total else 0.0},
            "systems": [{**dataclasses.asdict(s), "share": round(s.share, 4)} for s in scores]}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--system", action="append", default=[], help="only this system (repeatable)")
    parser.add_argument("--pypi-only", action="store_true", help="only the systems CI can reach (PyPI sdists)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--source", action="append", default=[], metavar="SYSTEM:LABEL=SPEC",
                        help="measure SYSTEM with SPEC as its source LABEL (repeatable)")
    args = parser.parse_args(argv)
    systems = [s for s in load_labels() if (not args.system or s.name in args.system) and (s.pypi or not args.pypi_only)]
    for override in args.source:
        name, _, rest = override.partition(":")
        label, _, spec = rest.partition("=")
        if not (name and label and spec):
            parser.error(f"--source {override!r}: expected SYSTEM:LABEL=SPEC")
        systems = [dataclasses.replace(s, sources=tuple(f"{label}={spec}" if src.partition("=")[0] == label else src
                                                        for src in s.sources)) if s.name == name else s
                   for s in systems]
    scores = measure(systems, cache_dir=args.cache_dir or default_cache_dir(), jobs=args.jobs,
                     log=lambda line: print(line, file=sys.stderr))
    print(json.dumps(to_json(scores), indent=1, sort_keys=True) if args.json else render(scores))
    return 0 if scores else 2


if __name__ == "__main__":
    sys.exit(main())
