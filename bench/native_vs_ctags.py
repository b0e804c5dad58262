"""Recall of the Rust and Go graphs against universal-ctags, read from evidence.json, and the cost of
parse+scan+graph against a raw tree-sitter parse of the same files.

    python3 -m bench.native_vs_ctags SPEC [SPEC ...] [--missing] [--evidence OUT/evidence.json]

SPEC is any source spec archdiff reads (``file:///work/.mirror/ollama+ollama/repo@v0.11.10``,
``pypi:tokenizers==0.22.0``, a directory); several make one system. The system is extracted
with the normal pipeline (or ``--evidence`` names an evidence.json already made from the same
specs), then ctags runs over each source root and its definitions are looked up in the bundle's
graph: a tag is found when a node of that language has the tag's name and the tag's file as its
path or as one of its ``sites``. File + name, because the two tools qualify names differently
(ctags scopes a Go method by its receiver type, archdiff by the import path).

Definitions compared, per language (ctags kinds): Rust ``module`` (inline and `mod x;`),
``struct``, ``enum``, ``interface`` (trait), ``function``, ``method`` (in impl and trait
blocks), ``field`` (named fields of structs), ``enumerator`` (enum variants); Go ``func``
(functions and methods), ``struct``, ``interface``, ``type`` (defined types), ``member`` and
``anonMember`` (struct fields, embedded ones), ``methodSpec`` (interface methods). Left out on both
sides: constants, variables, type aliases, macros (Rust ``macro_rules!`` is not a graph node),
Go package clauses and imports. Recall is printed per ctags kind too.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


from extractor.context import ExtractOptions
from extractor.go import build_go_graph, scan_go
from extractor.go.parse import parse_source as parse_go
from extractor.acquire.inventory import list_files
from extractor.native.manifests import read_manifests
from extractor.model import Language, ParsedFile
from extractor.run.pipeline import acquire_sources, extract_system
from extractor.rust import build_rust_graph, scan_rust
from extractor.rust.parse import parse_source as parse_rust
from extractor.acquire.sources import default_cache_dir

CTAGS_KINDS = {
    "rust": ("Rust", {"module", "struct", "enum", "interface", "function", "method", "field", "enumerator"}),
    "go": ("Go", {"func", "struct", "interface", "type", "member", "anonMember", "methodSpec"}),
}
_PARSE = {Language.RUST: parse_rust, Language.GO: parse_go}
_SCAN = {Language.RUST: scan_rust, Language.GO: scan_go}
_BUILD = {Language.RUST: build_rust_graph, Language.GO: build_go_graph}


def ctags_definitions(root: Path, language: str) -> list[tuple[str, str, int, str]]:
    """(path, name, line, kind) of ctags' definitions of ``language`` under ``root``."""
    ctags_lang, kinds = CTAGS_KINDS[language]
    cmd = ["ctags", "-R", f"--languages={ctags_lang}", "--fields=+nKz", "--output-format=json",
           "--exclude=.git", "--sort=no", "-f", "-", "."]
    out = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=True).stdout
    tags = set()
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag" or tag.get("kind") not in kinds:
            continue
        path = tag["path"][2:] if tag["path"].startswith("./") else tag["path"]
        tags.add((path, tag["name"].removeprefix("r#"), int(tag["line"]), tag["kind"]))
    return sorted(tags)


def recall_from_bundle(bundle: dict[str, Any], roots: Sequence[tuple[str, Path]], language: str) -> dict[str, Any]:
    have: set[tuple[str, str]] = set()
    for node in bundle["graph"]["nodes"]:
        if node.get("language") != language or node["kind"] == "external":
            continue
        have.add((node["path"], node["name"]))
        for site in node.get("sites", ()):
            have.add((site["path"], node["name"]))
    tags: list[tuple[str, str, int, str]] = []
    for label, root in roots:
        for path, name, line, kind in ctags_definitions(root, language):
            tags.append((f"{label}/{path}" if label else path, name, line, kind))
    missing = [t for t in tags if (t[0], t[1]) not in have]
    lacking = set(missing)
    per_kind = {kind: (sum(1 for t in tags if t[3] == kind and t not in lacking), sum(1 for t in tags if t[3] == kind))
                for kind in sorted({t[3] for t in tags})}
    return {"language": language, "ctags_definitions": len(tags), "found": len(tags) - len(missing),
            "recall": (len(tags) - len(missing)) / len(tags) if tags else 1.0, "missing": missing,
            "per_kind": per_kind}


def time_against_raw_parse(roots: Sequence[tuple[str, Path]], language: Language, runs: int = 3) -> dict[str, Any]:
    """Medians of ``runs``: raw tree-sitter parse vs archdiff's parse + scan + graph, same files."""
    blobs = []
    for label, root in roots:
        from extractor.context import SourceTree

        entries, _ = list_files(SourceTree(label, str(root), "dir", Path(root)))
        for e in entries:
            if e.language is language:
                blobs.append((e.path, (Path(root) / e.rel).read_bytes()))
    manifests = read_manifests(roots)
    raw, ours = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _path, data in blobs:
            _PARSE[language](data)
        raw.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        facts = [(path, _SCAN[language](ParsedFile(language, data, _PARSE[language](data)))) for path, data in blobs]
        _BUILD[language](facts, manifests)
        ours.append(time.perf_counter() - t0)
    raw_s, ours_s = statistics.median(raw), statistics.median(ours)
    return {"files": len(blobs), "raw_parse_seconds": raw_s, "archdiff_seconds": ours_s,
            "time_ratio": ours_s / raw_s if raw_s else 0.0}


def measure(specs: Sequence[str], evidence: Path | None = None, jobs: int = 2, runs: int = 5) -> list[dict[str, Any]]:
    sources = acquire_sources(specs, default_cache_dir())
    if evidence is not None:
        bundle = json.loads(evidence.read_text(encoding="utf-8"))
    else:
        bundle = extract_system(specs, options=ExtractOptions(jobs=jobs)).bundle
    return measure_bundle(bundle, [(s.label, s.root) for s in sources], runs)


def measure_bundle(bundle: dict[str, Any], roots: Sequence[tuple[str, Path]], runs: int = 5) -> list[dict[str, Any]]:
    """Recall and timing for each of Rust and Go that the bundle has files of."""
    results = []
    for language in (Language.RUST, Language.GO):
        if not bundle.get("stats", {}).get("files", {}).get(language.value):
            continue
        r = recall_from_bundle(bundle, roots, language.value)
        r.update(time_against_raw_parse(roots, language, runs))
        results.append(r)
    return results


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("specs", nargs="+", metavar="SPEC", help="source specs of one system (pypi:NAME==V, a directory, ...)")
    parser.add_argument("--evidence", type=Path, help="read the definitions from this evidence.json of that system")
    parser.add_argument("--missing", action="store_true", help="list each definition ctags has and archdiff lacks")
    args = parser.parse_args(argv)
    show_missing, evidence, specs = args.missing, args.evidence, args.specs
    for r in measure(specs, evidence):
        print(f"{' '.join(specs)} [{r['language']}]: recall {r['recall']:.2%} ({r['found']}/{r['ctags_definitions']} "
              f"ctags definitions), {r['files']} files; raw parse {r['raw_parse_seconds']:.2f}s, "
              f"archdiff parse+scan+graph {r['archdiff_seconds']:.2f}s, ratio {r['time_ratio']:.2f}x (medians of 5)")
        print("  per kind: " + ", ".join(f"{kind} {found}/{total}" for kind, (found, total) in r["per_kind"].items()))
        if show_missing:
            for path, name, line, kind in r["missing"]:
                print(f"  missing {path}:{line}: {kind} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
