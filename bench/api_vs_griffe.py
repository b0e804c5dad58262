#!/usr/bin/env python3
"""archdiff's API diff against griffe's, on two releases of one package, side by side.

    python3 -m bench.api_vs_griffe OLD_TREE NEW_TREE --package vllm [--review FILE] [--write-review]

OLD_TREE and NEW_TREE are unpacked source trees (an sdist) holding the package directory. griffe
2.x loads ``PACKAGE`` from each (static analysis only, inspection off) and runs
``griffe.find_breaking_changes``; archdiff extracts the same trees (through its cache) and runs
``comparator.apidiff.find_breakages``. Printed: griffe's breakages (object path + kind) that
archdiff reports breaking, and archdiff's breaking rows that griffe lacks, both ways, and the
times side by side: griffe's load-and-diff against archdiff's release diff of two cached
extractions (load both evidence bundles, diff them).

``--review FILE`` compares the disagreements with a review file (every one listed with its reason)
and exits 1 when they differ; ``--write-review`` rewrites it, keeping the reasons already written.
``--report report.json`` checks that the API section of an ``archdiff compare`` release report of
the same two releases has exactly archdiff's breaking rows here (symbol, rule, subject), and exits 1
when it does not.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from comparator.apidiff import Breakage, BreakageKind, find_breakages
from extractor.python import graph as pysymbols
from extractor.context import ExtractOptions
from extractor.model import Binding, Edge, EdgeKind, Location, Node, NodeKind, Parameter, ParamKind, Signature
from extractor.run.pipeline import extract_system
from extractor.steps import STEPS
from extractor.acquire.sources import default_cache_dir

# archdiff's kinds by the griffe kind that names the same change.
GRIFFE_KIND = {
    BreakageKind.PARAMETER_REMOVED: "PARAMETER_REMOVED",
    BreakageKind.PARAMETER_MOVED: "PARAMETER_MOVED",
    BreakageKind.PARAMETER_KIND_CHANGED: "PARAMETER_CHANGED_KIND",
    BreakageKind.PARAMETER_ADDED_REQUIRED: "PARAMETER_ADDED_REQUIRED",
    BreakageKind.PARAMETER_NOW_REQUIRED: "PARAMETER_CHANGED_REQUIRED",
    BreakageKind.DEFAULT_CHANGED: "PARAMETER_CHANGED_DEFAULT",
    BreakageKind.RETURN_CHANGED: "RETURN_CHANGED_TYPE",
    BreakageKind.BASE_REMOVED: "CLASS_REMOVED_BASE",
    BreakageKind.OBJECT_KIND_CHANGED: "OBJECT_CHANGED_KIND",
    BreakageKind.OBJECT_REMOVED: "OBJECT_REMOVED",
    BreakageKind.ATTRIBUTE_REMOVED: "OBJECT_REMOVED",
    BreakageKind.ATTRIBUTE_RETYPED: "ATTRIBUTE_CHANGED_TYPE",
    BreakageKind.OVERLOAD_REMOVED: "OVERLOAD_REMOVED",  # griffe has no such kind
    BreakageKind.BINDING_CHANGED: "BINDING_CHANGED",  # griffe has no such kind (never breaking)
}


# --- evidence bundles back into graph records ---------------------------------------------------

_NODE_KINDS = {k.value: k for k in NodeKind}
_EDGE_KINDS = {k.value: k for k in EdgeKind}
_PARAM_KINDS = {k.value: k for k in ParamKind}


def graph_records(bundle: Mapping[str, Any]) -> tuple[list[Node], list[Edge]]:
    """The bundle's graph as ``Node``/``Edge`` records (a local reader until the typed loader lands)."""
    params: dict[tuple, Parameter] = {}

    def param(p: Mapping[str, Any]) -> Parameter:
        key = (p["name"], p["kind"], p["annotation"], p["default"])
        found = params.get(key)
        if found is None:
            found = params[key] = Parameter(key[0], _PARAM_KINDS[key[1]], key[2], key[3])
        return found

    nodes = []
    for n in bundle["graph"]["nodes"]:
        nodes.append(Node(
            n["id"], _NODE_KINDS[n["kind"]], n["name"], n["qualname"], n["language"], n["path"], n["line"], n["doc"],
            n["signature"], tuple(n["tags"]), tuple(param(p) for p in n.get("params", ())), n.get("returns", ""),
            tuple(n.get("decorators", ())),
            tuple(Signature(tuple(param(p) for p in o["params"]), o["returns"], o["path"], o["line"])
                  for o in n.get("overloads", ())),
            tuple(Location(s["path"], s["line"]) for s in n.get("sites", ())), n.get("annotation", ""),
            n.get("value_kind", ""), n.get("api", ""),
            tuple(Binding(b["name"], b["line"], b["form"], b["target"]) for b in n.get("bound", ()))))
    kinds = _EDGE_KINDS
    edges = [Edge(e["source"], e["target"], kinds[e["kind"]], e["path"], e["line"]) for e in bundle["graph"]["edges"]]
    return nodes, edges


# --- the two tools ------------------------------------------------------------------------------

def griffe_breakages(old_tree: Path, new_tree: Path, package: str) -> tuple[set[tuple[str, str]], dict[tuple[str, str], str]]:
    """(object path, kind) of griffe's breakages, and one explanation line for each."""
    import griffe

    logging.getLogger("griffe").setLevel(logging.CRITICAL)
    old = griffe.load(package, search_paths=[str(package_parent(old_tree, package))], allow_inspection=False)
    new = griffe.load(package, search_paths=[str(package_parent(new_tree, package))], allow_inspection=False)
    rows: dict[tuple[str, str], str] = {}
    for breakage in griffe.find_breaking_changes(old, new):
        key = (breakage.obj.path, breakage.kind.name)
        rows.setdefault(key, breakage.explain().split(": ", 1)[-1])
    return set(rows), rows


def package_parent(tree: Path, package: str) -> Path:
    """The directory holding the package: the tree itself, or its src/ (a src layout)."""
    for parent in (tree, tree / "src"):
        if (parent / package / "__init__.py").is_file():
            return parent
    raise SystemExit(f"{tree}: no {package}/__init__.py here or under src/")


def extract(tree: Path, cache_dir: Path, python_only: bool) -> dict[str, Any]:
    steps = (pysymbols.STEP,) if python_only else STEPS
    return extract_system([str(tree)], options=ExtractOptions(jobs=2, cache_dir=cache_dir), steps=steps).bundle


def in_package(path: str, package: str) -> bool:
    return path == package or path.startswith(package + ".")


# --- agreement ------------------------------------------------------------------------------------

@dataclass
class Comparison:
    package: str
    griffe: set[tuple[str, str]]
    archdiff: dict[tuple[str, str], Breakage]  # breaking rows in the package, by (path, griffe kind)
    every: dict[tuple[str, str], list[Breakage]]  # all rows (breaking or not), by the same key
    griffe_text: dict[tuple[str, str], str]
    times: dict[str, float] = field(default_factory=dict)
    old_nodes: dict[str, Node] = field(default_factory=dict)
    new_nodes: dict[str, Node] = field(default_factory=dict)
    bases: dict[str, dict[str, int]] = field(default_factory=dict)  # side -> class id -> number of bases

    @property
    def agreed(self) -> set[tuple[str, str]]:
        return self.griffe & set(self.archdiff)

    @property
    def missed(self) -> set[tuple[str, str]]:
        return self.griffe - set(self.archdiff)

    @property
    def extra(self) -> set[tuple[str, str]]:
        return set(self.archdiff) - self.griffe

    @property
    def breaking_rows(self) -> set[tuple[str, str, str]]:
        """Every breaking row in the package as (symbol path, rule, subject): what a report lists."""
        return {(b.path, b.kind.value, b.subject) for rows in self.every.values() for b in rows
                if b.breaking and in_package(b.path, self.package)}

    @property
    def recall(self) -> float:
        return len(self.agreed) / len(self.griffe) if self.griffe else 1.0


def compare(old_tree: Path, new_tree: Path, package: str, cache_dir: Path, *, python_only: bool = False,
            griffe_rows: tuple[set, dict] | None = None) -> Comparison:
    times: dict[str, float] = {}
    if griffe_rows is None:
        start = time.perf_counter()
        griffe_rows = griffe_breakages(old_tree, new_tree, package)
        times["griffe load and diff"] = time.perf_counter() - start
    extract(old_tree, cache_dir, python_only)  # fill the cache: the timed run reads cached evidence
    extract(new_tree, cache_dir, python_only)
    start = time.perf_counter()
    old_graph = graph_records(extract(old_tree, cache_dir, python_only))
    new_graph = graph_records(extract(new_tree, cache_dir, python_only))
    found = find_breakages(*old_graph, *new_graph)
    times["archdiff release diff (cached)"] = time.perf_counter() - start
    breaking: dict[tuple[str, str], Breakage] = {}
    every: dict[tuple[str, str], list[Breakage]] = {}
    for b in found:
        key = (b.path, GRIFFE_KIND[b.kind])
        every.setdefault(key, []).append(b)
        if b.breaking and in_package(b.path, package):
            breaking.setdefault(key, b)
    griffe = {key for key in griffe_rows[0] if in_package(key[0], package)}
    bases = {side: dict(Counter(e.source for e in g[1] if e.kind is EdgeKind.INHERITS))
             for side, g in (("old", old_graph), ("new", new_graph))}
    return Comparison(package, griffe, breaking, every, griffe_rows[1], times, {n.id: n for n in old_graph[0]},
                      {n.id: n for n in new_graph[0]}, bases)


def cached_griffe_breakages(old_tree: Path, new_tree: Path, package: str, cache_dir: Path) -> tuple[set, dict]:
    """griffe's rows, kept on disk per griffe version and pair of trees (the trees never change)."""
    import griffe

    version = getattr(griffe, "__version__", "") or _distribution_version("griffe")
    path = cache_dir / f"griffe-{version}-{package}-{old_tree.name}-{new_tree.name}.json"
    if path.exists():
        rows = {(r[0], r[1]): r[2] for r in json.loads(path.read_text())}
        return set(rows), rows
    keys, rows = griffe_breakages(old_tree, new_tree, package)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")  # renamed whole: never half a file
    partial.write_text(json.dumps(sorted([k[0], k[1], rows[k]] for k in keys)))
    partial.replace(path)
    return keys, rows


def _distribution_version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def report(c: Comparison, out=sys.stdout) -> None:
    print(f"{c.package}: griffe reports {len(c.griffe)} breakages (object path + kind); archdiff reports "
          f"{len(c.agreed)} of them breaking ({c.recall:.2%}) and {len(c.extra)} breaking rows griffe lacks.", file=out)
    kinds = sorted({k for _, k in c.griffe} | {k for _, k in c.archdiff})
    print(f"  {'kind':<28} {'griffe':>7} {'both':>6} {'missed':>7} {'extra':>6}", file=out)
    for kind in kinds:
        g = sum(1 for _, k in c.griffe if k == kind)
        both = sum(1 for _, k in c.agreed if k == kind)
        print(f"  {kind:<28} {g:>7} {both:>6} {g - both:>7} {sum(1 for _, k in c.extra if k == kind):>6}", file=out)
    print(f"  archdiff: {len(c.breaking_rows)} breaking rows in {c.package} ({len(c.archdiff)} by object path + kind)",
          file=out)
    for label, seconds in c.times.items():
        print(f"  {label:<34} {seconds:8.2f} s", file=out)
    if len(c.times) == 2:
        griffe_t, archdiff_t = c.times["griffe load and diff"], c.times["archdiff release diff (cached)"]
        print(f"  archdiff is {griffe_t / archdiff_t:.1f}x faster" if archdiff_t < griffe_t
              else f"  archdiff is {archdiff_t / griffe_t:.1f}x SLOWER", file=out)


# --- the review file ------------------------------------------------------------------------------

def review_entries(c: Comparison, reasons: Mapping[tuple[str, str, str], str]) -> dict[str, list[dict[str, str]]]:
    """Every disagreement with its reason: one a reviewer wrote ("by": "review"), else the one the
    evidence gives ("by": "evidence"), recomputed on every rewrite."""
    out: dict[str, list[dict[str, str]]] = {"missed": [], "extra": []}
    for side, keys in (("missed", c.missed), ("extra", c.extra)):
        for path, kind in sorted(keys):
            written = reasons.get((side, path, kind))
            reason = written or suggest_reason(c, side, path, kind)
            out[side].append({"path": path, "kind": kind, "reason": reason, "by": "review" if written else "evidence"})
    return out


def suggest_reason(c: Comparison, side: str, path: str, kind: str) -> str:
    """The reason the evidence gives for a disagreement, for the categories that recur; else TODO."""
    rows = c.every.get((path, kind), [])
    if side == "missed":
        row = rows[0] if rows else None
        if row is not None and not row.breaking:
            return f"archdiff lists it as not breaking: {row.why}"
        return "TODO"
    row = c.archdiff[(path, kind)]
    generated = c.new_nodes.get(row.symbol)
    if generated is not None and "generated" in generated.tags and generated.doc != "generated by dataclasses.dataclass":
        return (f"a constructor {generated.doc}; griffe 2.4 generates constructors for dataclasses.dataclass only, "
                "so it has no such method to compare")
    if row.kind is BreakageKind.RETURN_CHANGED and row.new != "(no annotation)":
        return f"return annotation {row.old} -> {row.new}; griffe 2.4 flags a return type only when it is removed"
    if row.kind is BreakageKind.ATTRIBUTE_RETYPED:
        return f"annotation {row.old} -> {row.new}; griffe 2.4 does not compare attribute types"
    if row.kind is BreakageKind.OVERLOAD_REMOVED:
        return "griffe 2.4 does not compare @overload variants"
    if row.kind is BreakageKind.BASE_REMOVED:
        old_n, new_n = c.bases["old"].get(row.old_symbol, 0), c.bases["new"].get(row.symbol, 0)
        if new_n >= old_n:
            return (f"base {row.subject} replaced, not dropped ({old_n} -> {new_n} bases): griffe 2.4 flags only a "
                    "class with fewer bases")
    if row.old_symbol and row.symbol and row.old_symbol != row.symbol:
        was, now = row.old_symbol.split(":", 1)[-1], row.symbol.split(":", 1)[-1]
        return (f"callers reach {path} as {was} in the old release and as {now} in the new one (an override added "
                "or removed, a name now imported from elsewhere); griffe 2.4 compares such a member at most once, "
                "under the first path it meets, or stops at the import")
    return "TODO"


def load_review(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {}


def write_review(c: Comparison, path: Path, old: str, new: str) -> dict[str, Any]:
    previous = load_review(path)
    reasons = {(side, e["path"], e["kind"]): e["reason"] for side in ("missed", "extra")
               for e in previous.get(side, ()) if e.get("by") == "review" and not e["reason"].startswith("TODO")}
    data = {"package": c.package, "old": old, "new": new, "griffe_breakages": len(c.griffe),
            "agreed": len(c.agreed), **review_entries(c, reasons)}
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return data


def review_differences(c: Comparison, review: Mapping[str, Any]) -> list[str]:
    """What the review file does not match: disagreements it lacks, lists it keeps that are gone."""
    problems = []
    for side, keys in (("missed", c.missed), ("extra", c.extra)):
        listed = {(e["path"], e["kind"]) for e in review.get(side, ())}
        problems += [f"{side} but not in the review file: {p} {k}" for p, k in sorted(keys - listed)]
        problems += [f"in the review file but no longer {side}: {p} {k}" for p, k in sorted(listed - keys)]
        problems += [f"{side} without a reason: {e['path']} {e['kind']}" for e in review.get(side, ())
                     if not e.get("reason") or e["reason"].startswith("TODO")]
    return problems


def report_rows(report: Mapping[str, Any], package: str) -> set[tuple[str, str, str]]:
    """The breaking rows of a release report's API section in the package, as :attr:`Comparison.breaking_rows`."""
    rows = report["release"]["api"]["changes"]
    if len(rows) < report["release"]["api"]["total"]:
        raise SystemExit("the report's API rows were cut to size (report.json 'capped'): compare the counts instead")
    return {(r["symbol"], r["rule"], r["subject"]) for r in rows if r["breaking"] and in_package(r["symbol"], package)}


def report_differences(c: Comparison, report: Mapping[str, Any]) -> list[str]:
    """Breaking rows the report and this comparison do not share (empty: the same set)."""
    mine, theirs = c.breaking_rows, report_rows(report, c.package)
    return ([f"only here: {' '.join(r)}" for r in sorted(mine - theirs)]
            + [f"only in the report: {' '.join(r)}" for r in sorted(theirs - mine)])


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--package", required=True)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--python-only", action="store_true", help="extract the Python graph only (faster)")
    parser.add_argument("--review", type=Path, help="the review file listing every disagreement")
    parser.add_argument("--write-review", action="store_true")
    parser.add_argument("--list", action="store_true", help="print every disagreement")
    parser.add_argument("--griffe-cache", type=Path, help="reuse griffe's rows kept here (no griffe timing then)")
    parser.add_argument("--report", type=Path, help="a report.json of the same two releases to check against")
    args = parser.parse_args(list(argv) if argv is not None else None)
    rows = cached_griffe_breakages(args.old, args.new, args.package, args.griffe_cache) if args.griffe_cache else None
    c = compare(args.old, args.new, args.package, args.cache_dir or default_cache_dir(), python_only=args.python_only,
                griffe_rows=rows)
    report(c)
    if args.list:
        for side, keys in (("missed", c.missed), ("extra", c.extra)):
            for key in sorted(keys):
                rows = c.every.get(key) or []
                print(f"{side}: {key[0]} {key[1]}: griffe: {c.griffe_text.get(key, '-')}; archdiff: "
                      f"{rows[0].explain() if rows else '-'}")
    status = 0
    if args.report:
        report_data = json.loads(args.report.read_text(encoding="utf-8"))
        problems = report_differences(c, report_data)
        print(f"report {args.report}: {len(report_rows(report_data, c.package))} breaking rows in {c.package}, "
              + ("the same as here" if not problems else f"{len(problems)} differ"))
        for p in problems:
            print(f"report: {p}")
        status = 1 if problems else 0
    if args.review and args.write_review:
        write_review(c, args.review, args.old.name, args.new.name)
    if args.review:
        problems = review_differences(c, load_review(args.review))
        for p in problems:
            print(f"review: {p}")
        return 1 if problems else status
    return status


if __name__ == "__main__":
    sys.exit(main())
