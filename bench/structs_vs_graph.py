"""Struct layouts against the symbol graph, read from an evidence file alone.

    python3 -m bench.structs_vs_graph EVIDENCE.json [...]

For each evidence file: the invariant (every struct/class/union node of the graph that is not a
template has a layout record, resolved or ``unresolved`` with a reason, for each header it is
defined in), then how many of those definitions are resolved, and the unresolved ones by missing
header and by what would supply it.
"""

from __future__ import annotations

import argparse
import collections
import json
import posixpath
import sys
from pathlib import Path
from typing import Any

from extractor.naming import unelaborated

HEADER_SUFFIXES = frozenset({".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl"})
AGGREGATE_KINDS = frozenset({"struct", "class", "union"})


def header_definitions(bundle: dict[str, Any]) -> set[tuple[str, str]]:
    """(header path, qualname) of every non-template struct/class/union definition in the graph."""
    found = set()
    for node in bundle["graph"]["nodes"]:
        if node["kind"] not in AGGREGATE_KINDS or node["language"] not in ("cpp", "cuda") or "template" in node["tags"]:
            continue
        for path in [node["path"], *(s["path"] for s in node.get("sites", ()))]:
            if posixpath.splitext(path)[1] in HEADER_SUFFIXES:
                found.add((path, unelaborated(node["qualname"])))  # as the layouts name it
    return found


def coverage(bundle: dict[str, Any]) -> dict[str, Any]:
    """The invariant's violations and the resolution of the graph's header definitions."""
    wanted = header_definitions(bundle)
    records: dict[tuple[str, str], list[dict[str, Any]]] = collections.defaultdict(list)
    for layout in bundle["structs"]:
        records[(layout["path"], layout["qualname"])].append(layout)
    without = sorted(w for w in wanted if w not in records)
    unexplained = sorted(w for w in wanted if records.get(w) and all(
        r["method"] == "unresolved" and not r["error"] for r in records[w]))
    resolved = sorted(w for w in wanted if any(r["method"] != "unresolved" for r in records.get(w, ())))
    missing = collections.Counter(r["missing"] or r["error"][:80] for w in wanted if w not in resolved
                                  for r in records.get(w, ())[:1])
    supplied = collections.Counter(r["supplied_by"] for w in wanted if w not in resolved
                                   for r in records.get(w, ())[:1] if r["supplied_by"])
    return {"definitions": len(wanted), "resolved": len(resolved), "without_record": without,
            "unresolved_without_reason": unexplained,
            "ratio": len(resolved) / len(wanted) if wanted else 1.0,
            "missing": missing.most_common(), "supplied_by": supplied.most_common()}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("evidence", nargs="+", metavar="EVIDENCE.json")
    status = 0
    for arg in parser.parse_args(argv).evidence:
        r = coverage(json.loads(Path(arg).read_text(encoding="utf-8")))
        print(f"{arg}: {r['definitions']} struct/class/union definitions in headers, {r['resolved']} resolved "
              f"({r['ratio']:.1%}); invariant: {len(r['without_record'])} without a layout record, "
              f"{len(r['unresolved_without_reason'])} unresolved without a reason")
        for path, name in r["without_record"][:20]:
            print(f"  no record: {path}: {name}")
        for what, n in r["missing"][:15]:
            print(f"  {n:4d} unresolved: {what}")
        for what, n in r["supplied_by"][:10]:
            print(f"  {n:4d} would be supplied by: {what}")
        status |= bool(r["without_record"] or r["unresolved_without_reason"])
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
