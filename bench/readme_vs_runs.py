"""The figures the README quotes, against the real runs they come from.

    python3 -m bench.readme_vs_runs [--only api,griffe,releases,labels] [--cache-dir DIR] [--write]

Runs what the README says it ran, on the same real input, and prints each figure beside the one
``docs/figures.json`` holds. The README's numbers are that file's: ``tests/test_readme_figures.py``
fails when the README says something else (the API excerpt line for line, every other figure where
the README's sentence holds it, by the patterns in ``README_FIGURES`` below), and the ``real``
tests recompute the figures whose input they already have (``tests/test_compare_real.py``: the
API excerpt and counts of vLLM 0.10.1 -> 0.10.2; ``tests/test_api_vs_griffe.py``: the agreement
with griffe), so a change of the code's output fails a test until the figures are written again.

``--write`` stores what this run found in docs/figures.json and writes it into the README: the
excerpt between its ``<!-- figures:`` markers, and each figure into its sentence.

- ``api``: ``archdiff compare pypi:vllm==0.10.1 pypi:vllm==0.10.2``: the API section of report.md
  (headline, rule table, first rows), the uses of the two generated constructors it names, and the
  breaking rows inside the ``vllm`` package.
- ``griffe``: ``bench.api_vs_griffe`` on vLLM, datasets and accelerate (griffe's breakages, how
  many archdiff reports breaking, the breaking rows griffe lacks).
- ``releases``: vLLM 0.10.0, 0.10.1 and 0.10.1.1 extracted in order on one empty cache (as
  ``archdiff releases pypi:vllm --from 0.10.0`` does them one after another): files parsed per
  release. The only figures no test recomputes: they cost a cold extraction of vLLM.
- ``labels``: the hand-made layer labels under tests/layers_benchmark (systems, paths each).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "docs" / "figures.json"
README = ROOT / "README.md"

OLD, NEW = "0.10.1", "0.10.2"
COMMAND = f"archdiff compare pypi:vllm=={OLD} pypi:vllm=={NEW}"
EXCERPT_ROWS = 7  # symbol rows of the API table the README shows
CONSTRUCTORS = ("vllm.engine.arg_utils.EngineArgs.__init__", "vllm.config.cache.CacheConfig.__init__")
GRIFFE_PAIRS = (("vllm", OLD, NEW), ("datasets", "2.21.0", "3.0.0"), ("accelerate", "0.34.2", "1.0.0"))
RELEASES = ("0.10.0", "0.10.1", "0.10.1.1")

# Each sentence of the README that quotes a figure: a pattern whose named groups are figures, and
# the key in docs/figures.json of each group. Whitespace in a pattern matches any run of it (the
# README wraps its lines).
README_FIGURES: tuple[tuple[str, dict[str, str]], ...] = (
    (r"\((?P<a>[\d,]+) and (?P<b>[\d,]+) places in 0\.10\.1 use them\)",
     {"a": f"api.uses.{CONSTRUCTORS[0]}", "b": f"api.uses.{CONSTRUCTORS[1]}"}),
    (r"archdiff reports (?P<a>[\d,]+) of griffe's (?P<g>[\d,]+) breakages \(object path \+ kind\) as breaking, "
     r"and (?P<x>[\d,]+) breaking rows griffe lacks",
     {"a": "griffe.vllm.agreed", "g": "griffe.vllm.griffe", "x": "griffe.vllm.extra"}),
    (r"datasets 2\.21\.0 -> 3\.0\.0: (?P<a>[\d,]+)/(?P<g>[\d,]+)",
     {"a": "griffe.datasets.agreed", "g": "griffe.datasets.griffe"}),
    (r"accelerate 0\.34\.2 -> 1\.0\.0: (?P<a>[\d,]+)/(?P<g>[\d,]+)",
     {"a": "griffe.accelerate.agreed", "g": "griffe.accelerate.griffe"}),
    (r"The report's breaking rows inside `vllm` are exactly the script's \((?P<n>[\d,]+);",
     {"n": "api.breaking_in_package"}),
    (r"of the other (?P<n>[\d,]+), (?P<c>[\d,]+) are C\+\+ functions and torch operators \(`csrc/`\) and "
     r"(?P<p>[\d,]+) break a module at the sdist's root",
     {"n": "api.breaking_outside_package", "c": "api.breaking_outside_in_cpp", "p": "api.breaking_outside_in_python"}),
    (r"vLLM 0\.10\.1 after 0\.10\.0: (?P<p>[\d,]+) of (?P<f>[\d,]+) files parsed, 0\.10\.1\.1 after it: (?P<q>[\d,]+)\)",
     {"p": "releases.0.10.1.parsed", "f": "releases.0.10.1.files", "q": "releases.0.10.1.1.parsed"}),
    (r"for (?P<n>[\d,]+) systems \(vLLM, SGLang", {"n": "labels.systems"}),
    (r"(?P<lo>[\d,]+)-(?P<hi>[\d,]+) module paths each", {"lo": "labels.fewest_paths", "hi": "labels.most_paths"}),
)
EXCERPT_BEGIN = "<!-- figures:api.excerpt"
EXCERPT_END = "<!-- /figures -->"


def locate(figures: Mapping[str, Any], key: str) -> tuple[Any, str]:
    """The mapping that holds the figure ``key`` names, and its name there: ``api.uses.vllm.engine…``
    is ``figures["api"]["uses"]["vllm.engine…"]``. A part of the key is tried whole before it is
    split at its dots (symbol paths and versions hold dots)."""
    node: Any = figures
    rest = key
    while True:
        for cut in [len(rest)] + [i for i in range(len(rest) - 1, 0, -1) if rest[i] == "."]:
            if isinstance(node, Mapping) and rest[:cut] in node:
                if cut == len(rest):
                    return node, rest
                node, rest = node[rest[:cut]], rest[cut + 1:]
                break
        else:
            raise KeyError(key)


def lookup(figures: Mapping[str, Any], key: str) -> Any:
    parent, name = locate(figures, key)
    return parent[name]


def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text.replace(" ", r"\s+"))


def _number(text: str) -> int:
    return int(text.replace(",", ""))


# --- what the README says ------------------------------------------------------------------------

def readme_excerpt(readme: str) -> list[str]:
    """The lines between the README's ``<!-- figures:api.excerpt … -->`` and ``<!-- /figures -->``."""
    lines = readme.splitlines()
    begin = [i for i, line in enumerate(lines) if line.startswith(EXCERPT_BEGIN)]
    end = [i for i, line in enumerate(lines) if line.strip() == EXCERPT_END]
    if len(begin) != 1 or len(end) != 1 or end[0] < begin[0]:
        raise ValueError(f"README.md needs one {EXCERPT_BEGIN} … -->/{EXCERPT_END} block")
    return [line for line in lines[begin[0] + 1:end[0]]]


def readme_differences(readme: str, figures: Mapping[str, Any]) -> list[str]:
    """Where the README does not say what docs/figures.json holds (empty: it says the same)."""
    problems = []
    excerpt = figures["api"]["excerpt"]
    if readme_excerpt(readme) != ["", *excerpt, ""]:
        problems.append("the API excerpt is not docs/figures.json's api.excerpt")
    for pattern, keys in README_FIGURES:
        found = list(_pattern(pattern).finditer(readme))
        if len(found) != 1:
            problems.append(f"{len(found)} sentences of the README match {pattern!r} (one expected)")
            continue
        for group, key in keys.items():
            said, holds = _number(found[0].group(group)), lookup(figures, key)
            if said != holds:
                problems.append(f"README says {said:,} where {key} is {holds:,}: {found[0].group(0)!r}")
    return problems


def write_readme(readme: str, figures: Mapping[str, Any]) -> str:
    """The README with docs/figures.json's excerpt and figures written in."""
    lines = readme.splitlines()
    begin = next(i for i, line in enumerate(lines) if line.startswith(EXCERPT_BEGIN))
    end = next(i for i, line in enumerate(lines) if line.strip() == EXCERPT_END)
    text = "\n".join([*lines[:begin + 1], "", *figures["api"]["excerpt"], "", *lines[end:]]) + "\n"
    for pattern, keys in README_FIGURES:
        def put(match: re.Match[str], keys: Mapping[str, str] = keys) -> str:
            out, last = [], match.start()
            for group in sorted(keys, key=match.start):
                out += [match.string[last:match.start(group)], f"{lookup(figures, keys[group]):,}"]
                last = match.end(group)
            return "".join(out) + match.string[last:match.end()]
        text = _pattern(pattern).sub(put, text)
    return text


# --- what the code gives --------------------------------------------------------------------------

def api_figures(findings: Mapping[str, Any]) -> dict[str, Any]:
    """The README's API figures from the findings of ``compare_evidence(vllm 0.10.1, vllm 0.10.2)``."""
    from bench.api_vs_griffe import in_package, report_rows
    from comparator.registry import KINDS
    from comparator.render_markdown import render_markdown

    api = findings["release"]["api"]
    uses = {symbol: max((r["uses"] for r in api["changes"] if r["symbol"] == symbol), default=0)
            for symbol in CONSTRUCTORS}
    inside = len(report_rows(findings, "vllm"))
    outside = [r for r in api["changes"] if r["breaking"] and not in_package(r["symbol"], "vllm")]
    in_python = sum((r["new_location"] or r["old_location"])["path"].endswith(".py") for r in outside)
    return {
        "command": COMMAND,
        "changes": api["total"],
        "breaking": api["breaking"],
        "broken_symbols": api["broken_symbols"],
        "breaking_in_package": inside,
        "breaking_outside_package": len(outside),
        "breaking_outside_in_cpp": len(outside) - in_python,
        "breaking_outside_in_python": in_python,
        "uses": uses,
        "excerpt": markdown_excerpt(render_markdown(findings, KINDS)),
    }


def markdown_excerpt(report_md: str) -> list[str]:
    """report.md's API section as the README shows it: the headline, the rule table, and the
    header and first rows of the symbol table."""
    lines = report_md.splitlines()
    start = lines.index("### API changes") + 2
    headline, rules_start = lines[start], start + 2
    rules_end = lines.index("", rules_start)
    rows_start = rules_end + 1
    return [headline, "", *lines[rules_start:rules_end], "", *lines[rows_start:rows_start + 2 + EXCERPT_ROWS]]


def griffe_figures(comparison: Any) -> dict[str, int]:
    return {"griffe": len(comparison.griffe), "agreed": len(comparison.agreed), "extra": len(comparison.extra)}


def label_figures() -> dict[str, int]:
    from bench.layers_vs_labels import load_labels

    systems = load_labels(ROOT / "tests" / "layers_benchmark")
    sizes = [len(s.labels) for s in systems]
    return {"systems": len(systems), "fewest_paths": min(sizes), "most_paths": max(sizes)}


def run_api(cache_dir: Path, log: Callable[[str], None]) -> dict[str, Any]:
    from comparator.compare import compare_evidence
    from extractor.context import ExtractOptions
    from extractor.evidence.read import evidence_from_json
    from extractor.run.pipeline import extract_system

    options = ExtractOptions(jobs=2, cache_dir=cache_dir)
    bundles = []
    for version in (OLD, NEW):
        log(f"extracting pypi:vllm=={version} (cache {cache_dir})")
        bundles.append(evidence_from_json(extract_system([f"pypi:vllm=={version}"], options=options).bundle))
    return api_figures(compare_evidence(*bundles))


def run_griffe(cache_dir: Path, log: Callable[[str], None]) -> dict[str, Any]:
    from bench.api_vs_griffe import cached_griffe_breakages, compare
    from tests.conftest import sdist_root

    out = {}
    for package, old, new in GRIFFE_PAIRS:
        log(f"griffe against archdiff on {package} {old} -> {new}")
        old_tree, new_tree = sdist_root(package, old), sdist_root(package, new)
        rows = cached_griffe_breakages(old_tree, new_tree, package, cache_dir / "griffe")
        out[package] = griffe_figures(compare(old_tree, new_tree, package, cache_dir / "api-extractions",
                                              python_only=True, griffe_rows=rows))
    return out


def run_releases(log: Callable[[str], None]) -> dict[str, Any]:
    """Each release after the one before it, one at a time on one empty cache: what ``archdiff
    releases`` prints for it when it runs them in order (side by side, which release parses a file
    both have depends on timing)."""
    from extractor.context import ExtractOptions
    from extractor.run.pipeline import extract_system

    counts: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        options = ExtractOptions(jobs=2, cache_dir=Path(tmp) / "cache")
        for version in RELEASES:
            cache = extract_system([f"pypi:vllm=={version}"], options=options).cache
            counts[version] = {"parsed": cache.get("misses", 0), "files": cache.get("misses", 0) + cache.get("hits", 0)}
            log(f"  vllm {version}: {counts[version]['parsed']:,} of {counts[version]['files']:,} files parsed")
    return {"command": f"archdiff extract pypi:vllm==V for V in {', '.join(RELEASES)}, in order, on one empty cache",
            **counts}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="api,griffe,releases,labels",
                        help="comma-separated: api, griffe, releases, labels (default: all)")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="archdiff's cache for the api and griffe runs (default: the test cache, "
                             "$ARCHDIFF_TEST_CACHE or $XDG_CACHE_HOME/archdiff-tests)")
    parser.add_argument("--write", action="store_true", help="store the figures in docs/figures.json and the README")
    args = parser.parse_args(argv)
    from tests.conftest import cache_root

    cache = args.cache_dir or cache_root()
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    stored = json.loads(FIGURES.read_text(encoding="utf-8")) if FIGURES.exists() else {}
    runs = {"api": lambda: run_api(cache / "archdiff", log), "griffe": lambda: run_griffe(cache, log),
            "releases": lambda: run_releases(log), "labels": label_figures}
    found = dict(stored)
    for name in args.only.split(","):
        found[name] = runs[name.strip()]()
        if found[name] != stored.get(name):
            print(f"{name}: changed\n  was: {json.dumps(stored.get(name), sort_keys=True)[:2000]}\n"
                  f"  now: {json.dumps(found[name], sort_keys=True)[:2000]}")
        else:
            print(f"{name}: as docs/figures.json says")
    readme = README.read_text(encoding="utf-8")
    if args.write:
        FIGURES.write_text(json.dumps(found, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
        README.write_text(write_readme(readme, found), encoding="utf-8")
        readme = README.read_text(encoding="utf-8")
    problems = readme_differences(readme, found)
    for problem in problems:
        print(f"README.md: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
