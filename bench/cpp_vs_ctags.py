"""Recall of the C/C++/CUDA graph against universal-ctags, and its cost against a raw parse.

    python3 -m bench.cpp_vs_ctags DIR [DIR ...]
    python3 -m bench.cpp_vs_ctags --evidence EVIDENCE.json --root DIR [--prefix PATH/] [--missing]

The second form measures the evidence itself: every definition the evidence carries (a node's
own path and each of its ``sites``), by file and name, against ctags' definitions under DIR
(``--prefix``: the evidence path of DIR, e.g. ``csrc/`` or ``core/src/``).

For each tree: ctags' class, struct, union and function definitions (`.cu/.cuh` mapped to C++,
prototypes excluded, anonymous `__anon*` aggregates excluded) are looked up among the graph's
definition sites. A tag is found when a node with the same short name (operator names compared
without spaces) has a definition site in the same file whose line span contains ctags' line: name +
file + line, because qualified names differ between the tools for anonymous namespaces and
specialisations while a definition's span does not. Also printed: the time of the raw tree-sitter
parse of the same files against the time of archdiff's parse (macro blanking included) + scan +
graph build (target: within 3x).

Where the tools name one definition differently on purpose, the difference is listed, with its
reason, rather than dropped: ctags reports a test body `TEST_F(Fixture, Name) { ... }` as a function
`TEST_F`; archdiff names it as the framework's expansion does (extractor/cpp/testmacros.yaml), the
method `Fixture_Name_Test::TestBody`, and the tag is looked up under that method's name
(``expanded`` in the results; printed as a count per macro, each one with ``--missing``). And
ctags reports a macro's use in a class body, `DISALLOW_COPY_AND_ASSIGN(Engine);`, as the prototype
of a member DISALLOW_COPY_AND_ASSIGN; archdiff records no member for it (extractor/cpp/scan.py).
Prototypes are not compared, so recall does not move, but each such prototype that archdiff has no
definition of is listed (``macro_uses``; a count per macro, each one with ``--missing``).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from extractor.cpp.graph import build_cpp_graph
from extractor.cpp.parse import macro_config, parse_raw, parse_source
from extractor.cpp.scan import scan_cpp
from extractor.cpp.names import MACRO_NAME, split_args
from extractor.cpp.standalone import SUFFIXES
from extractor.cpp.testmacros import expand_test, load_test_macros
from extractor.model import ParsedFile

CTAGS_KINDS = frozenset({"class", "struct", "union", "function"})
# the line ctags' pattern holds for a test body: `/^TEST_F(Fixture, Name)$/`, `/^TEST(Suite, Name) {$/`
_MACRO_USE = re.compile(r"/\^\s*(\w+)\s*\((.*?)\)\s*(?:\{.*)?\$?/")


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class ExpandedTag:
    """A ctags definition named after a test macro, and the name archdiff gives it (the
    framework's expansion): the one deliberate disagreement between the two tools."""

    path: str
    line: int
    ctags_name: str  # the macro, `TEST_F`
    archdiff_name: str  # `Fixture_Name_Test::TestBody` (`?::TestBody` when ctags' line holds no arguments)
    framework: str

    def reason(self) -> str:
        return f"{self.framework} test body, named as the macro expands (extractor/cpp/testmacros.yaml)"


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class MacroUseTag:
    """A ctags prototype in a class body with no return type and a macro's name that is not the
    class's (`DISALLOW_COPY_AND_ASSIGN(Engine);`), of which archdiff records no member."""

    path: str
    line: int
    name: str

    def reason(self) -> str:
        return ("a macro's use in a class body: read as a member without a return type, which only "
                "constructors, destructors and conversion functions are, archdiff records no member "
                "(its class-macro diagnostic)")


def ctags_definitions(root: Path) -> tuple[list[tuple[str, str, int]], int, list[ExpandedTag], list[MacroUseTag]]:
    """(path, name, line) of ctags' class/struct/union/function definitions under ``root``; how
    many tags were dropped because ctags took a macro for the defined name (it reports
    `TORCH_LIBRARY(ns, m) { ... }` as a function TORCH_LIBRARY and `__global__ void
    __launch_bounds__(256) k(...)` as a function `__launch_bounds__`); and the tags named after a
    test macro, whose (path, name, line) carries the name of the method archdiff gives the body;
    and the prototypes in class bodies that read as macros' uses (:class:`MacroUseTag`)."""
    tests = load_test_macros().expand
    cfg = macro_config()
    macros = {n for key in cfg for n in cfg[key]}
    cmd = ["ctags", "-R", "--languages=C++,C", "--langmap=C++:+.cu.cuh", "--langmap=C:.c",
           "--kinds-C++=csufp", "--kinds-C=sufp", "--fields=+neKz", "--output-format=json",
           "--sort=no", "-f", "-", "."]
    out = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=True).stdout
    tags, macro_named, expanded, macro_uses = [], 0, [], []
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") == "tag" and tag.get("kind") == "prototype":
            if _is_macro_use(tag):
                path = tag["path"][2:] if tag["path"].startswith("./") else tag["path"]
                macro_uses.append(MacroUseTag(path, int(tag["line"]), tag["name"]))
            continue
        if tag.get("_type") != "tag" or tag.get("kind") not in CTAGS_KINDS:
            continue
        if tag["name"].startswith("__anon"):
            continue
        if tag["name"] in macros:
            macro_named += 1
            continue
        path = tag["path"][2:] if tag["path"].startswith("./") else tag["path"]
        name = tag["name"].replace(" ", "")
        if name in tests and tag["kind"] == "function":
            renamed = _expanded_tag(path, int(tag["line"]), name, tag.get("pattern", ""))
            if renamed is not None:
                expanded.append(renamed)
                name = renamed.archdiff_name.rsplit("::", 1)[-1]
        tags.append((path, name, int(tag["line"])))
    return sorted(set(tags)), macro_named, sorted(set(expanded)), sorted(set(macro_uses))


def _is_macro_use(tag: dict[str, Any]) -> bool:
    """A prototype in a class body without a return type whose name is written as macros are and
    is not the class's (a constructor)."""
    return (tag.get("scopeKind") in ("class", "struct", "union") and "typeref" not in tag
            and MACRO_NAME.fullmatch(tag["name"]) is not None
            and tag["name"] != tag.get("scope", "").rsplit("::", 1)[-1])


def _expanded_tag(path: str, line: int, macro: str, pattern: str) -> ExpandedTag | None:
    """How archdiff names the test body ctags calls ``macro`` at ``path:line``; None when the
    arguments on ctags' line do not fit the macro (archdiff keeps the name as written then)."""
    rule = load_test_macros().expand[macro]
    m = _MACRO_USE.fullmatch(pattern)
    if m is None or m.group(1) != macro:  # the arguments on lines of their own: the method's name alone
        return ExpandedTag(path, line, macro, f"?::{rule.method}", rule.framework)
    test = expand_test(rule, split_args(m.group(2)))
    if test is None:
        return None
    qual = "::".join(filter(None, (test.namespace, test.aggregate, test.method)))
    return ExpandedTag(path, line, macro, qual, test.framework)


def measure_recall(root: Path) -> dict[str, Any]:
    """Recall of ctags' definitions among the graph's nodes for the tree at ``root``, and timings."""
    root = Path(root)
    files = sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file())
    blobs = [(p.relative_to(root).as_posix(), SUFFIXES[p.suffix], p.read_bytes(), p) for p in files]

    # Best of two runs each: the machines are shared, and one slow run says nothing of the code.
    raw_seconds = ours_seconds = float("inf")
    for _ in range(2):
        t0 = time.perf_counter()
        for _, lang, data, _ in blobs:
            parse_raw(data, lang)
        raw_seconds = min(raw_seconds, time.perf_counter() - t0)

        t0 = time.perf_counter()
        facts = [(rel, lang, scan_cpp(ParsedFile(lang, data, parse_source(data, lang))), p)
                 for rel, lang, data, p in blobs]
        contribution = build_cpp_graph(facts)
        ours_seconds = min(ours_seconds, time.perf_counter() - t0)

    sites: dict[tuple[str, str], list[tuple[int, int]]] = {}
    names = {n.id: n.name.replace(" ", "") for n in contribution.nodes}
    shared = contribution.shared
    assert shared is not None  # build_cpp_graph always shares its definition sites
    for s in shared.definition_sites:
        sites.setdefault((s.path, names[s.node]), []).append((s.start, s.end))
    tags, macro_named, expanded, prototypes = ctags_definitions(root)
    missing = [t for t in tags if not any(a <= t[2] <= b for a, b in sites.get((t[0], t[1]), ()))]
    macro_uses = [u for u in prototypes if not any(a <= u.line <= b for a, b in sites.get((u.path, u.name), ()))]
    found = len(tags) - len(missing)
    return {
        "root": str(root),
        "files": len(blobs),
        "ctags_definitions": len(tags),
        "ctags_macro_named_dropped": macro_named,
        "found": found,
        "recall": found / len(tags) if tags else 1.0,
        "missing": missing,
        "expanded": expanded,
        "macro_uses": macro_uses,
        "raw_parse_seconds": raw_seconds,
        "archdiff_seconds": ours_seconds,
        "time_ratio": ours_seconds / raw_seconds if raw_seconds else 0.0,
        "stats": dict(contribution.stats),
    }


EVIDENCE_KINDS = frozenset({"class", "struct", "union", "function", "method", "kernel"})


def evidence_definitions(bundle: dict[str, Any]) -> set[tuple[str, str]]:
    """(path, name) of every C/C++/CUDA definition site an evidence bundle carries."""
    found = set()
    for node in bundle["graph"]["nodes"]:
        if node["kind"] not in EVIDENCE_KINDS or node["language"] not in ("cpp", "cuda"):
            continue
        name = node["name"].replace(" ", "")
        found.add((node["path"], name))
        for site in node.get("sites", ()):
            found.add((site["path"], name))
    return found


def evidence_recall(bundle: dict[str, Any], root: Path, prefix: str = "") -> dict[str, Any]:
    """ctags' definitions under ``root`` found in the evidence by file and name; ``prefix`` is
    the evidence path of ``root`` (``csrc/``, ``core/src/``)."""
    carried = evidence_definitions(bundle)
    tags, macro_named, expanded, prototypes = ctags_definitions(Path(root))
    wanted = sorted({(prefix + path, name) for path, name, _ in tags})
    missing = [t for t in wanted if t not in carried]
    expanded = [dataclasses.replace(e, path=prefix + e.path) for e in expanded]
    macro_uses = [u for u in (dataclasses.replace(u, path=prefix + u.path) for u in prototypes)
                  if (u.path, u.name) not in carried]
    return {"root": str(root), "ctags_definitions": len(wanted), "ctags_macro_named_dropped": macro_named,
            "found": len(wanted) - len(missing), "missing": missing, "expanded": expanded, "macro_uses": macro_uses,
            "recall": (len(wanted) - len(missing)) / len(wanted) if wanted else 1.0}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="*", type=Path, help="C/C++ source trees to parse and compare with ctags")
    parser.add_argument("--evidence", type=Path, help="read the definitions from this evidence.json instead")
    parser.add_argument("--root", type=Path, help="with --evidence: the source tree the evidence was extracted from")
    parser.add_argument("--prefix", default="", help="with --evidence: the label prefix of that tree's paths")
    parser.add_argument("--missing", action="store_true", help="list each definition ctags has and archdiff lacks")
    args = parser.parse_args(argv)
    if args.evidence and not args.root:
        parser.error("--evidence needs --root")
    if not args.evidence and not args.dirs:
        parser.error("give DIR... or --evidence EVIDENCE.json --root DIR")
    show_missing = args.missing
    if args.evidence:
        bundle = json.loads(args.evidence.read_text(encoding="utf-8"))
        root, prefix = args.root, args.prefix
        r = evidence_recall(bundle, root, prefix)
        print(f"{prefix or root}: evidence recall {r['recall']:.2%} ({r['found']}/{r['ctags_definitions']} "
              f"ctags definitions by file and name)")
        print_expanded(r["expanded"], show_missing)
        print_macro_uses(r["macro_uses"], show_missing)
        if show_missing:
            for path, name in r["missing"]:
                print(f"  missing {path}: {name}")
        return 0
    for arg in args.dirs:
        r = measure_recall(arg)
        print(f"{r['root']}: {r['files']} files, recall {r['recall']:.2%} "
              f"({r['found']}/{r['ctags_definitions']} ctags definitions, "
              f"{r['ctags_macro_named_dropped']} macro-named tags dropped); "
              f"raw parse {r['raw_parse_seconds']:.2f}s, archdiff {r['archdiff_seconds']:.2f}s, "
              f"ratio {r['time_ratio']:.2f}x")
        print_expanded(r["expanded"], show_missing)
        print_macro_uses(r["macro_uses"], show_missing)
        if show_missing:
            for path, name, line in r["missing"]:
                print(f"  missing {path}:{line}: {name}")
    return 0


def print_expanded(expanded: list[ExpandedTag], each: bool) -> None:
    """The test bodies the tools name differently: a count per macro, and with ``each`` every one."""
    _print_by_macro([(e.ctags_name, e.reason()) for e in expanded],
                    "ctags function(s) {} compared under archdiff's name",
                    [f"expanded {e.path}:{e.line}: ctags {e.ctags_name}, archdiff {e.archdiff_name}"
                     for e in expanded] if each else [])


def print_macro_uses(uses: list[MacroUseTag], each: bool) -> None:
    """The ctags prototypes that are macros' uses in class bodies: a count per macro, and with ``each``
    every one."""
    _print_by_macro([(u.name, u.reason()) for u in uses], "ctags prototype(s) {} with no archdiff member",
                    [f"macro use {u.path}:{u.line}: ctags prototype {u.name}, archdiff none" for u in uses]
                    if each else [])


def _print_by_macro(rows: list[tuple[str, str]], counted: str, lines: list[str]) -> None:
    """A count per (macro, reason), ``counted`` naming the macro, then ``lines`` one by one."""
    for (macro, reason), count in sorted(collections.Counter(rows).items()):
        print(f"  {count} {counted.format(macro)}: {reason}")
    for line in lines:
        print(f"  {line}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
