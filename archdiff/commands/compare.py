"""``archdiff compare`` and ``archdiff battle``: parse arguments, write reports, set the exit code.

Progress (the side or system being extracted, its phase, files scanned) is drawn on stderr when it
is a terminal; the results (report paths, the count of differences) go to stdout.

Exit codes: 0 no differences of the kinds ``--fail-on`` asks about; 1 differences found; 2 bad input.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from archdiff.outputs import writable_dir
from archdiff.progress import open_progress
from comparator.reports import FORMATS, write_reports
from extractor.errors import UserInputError


def _formats(value: str) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(f.strip().lower() for f in value.split(",") if f.strip()))
    bad = [f for f in chosen if f not in FORMATS]
    if bad or not chosen:
        raise UserInputError(f"--format: {', '.join(bad) or 'nothing'} is not one of html, md, json "
                             "(give a comma-separated list, e.g. --format html,md)")
    return chosen


def exit_code(findings: dict[str, Any], fail_on: str) -> int:
    counts = findings["differences"]
    if fail_on == "breaking":
        return 1 if counts["breaking"] else 0
    if fail_on == "any":
        return 1 if counts["any"] else 0
    return 0


@click.command("compare")
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("report"),
              callback=writable_dir,
              show_default=True, help="Directory for report.html, report.md and report.json.")
@click.option("--format", "formats", default="html,md,json", show_default=True,
              help="Comma-separated report formats: html, md, json.")
@click.option("--mode", type=click.Choice(["auto", "systems", "release"]), default="auto", show_default=True,
              help="release: two releases of one system (symbol, ABI and metric breaks); auto: release when "
                   "both bundles carry the same system name.")
@click.option("--fail-on", type=click.Choice(["breaking", "any", "never"]), default="never", show_default=True,
              help="Exit 1 when differences of this kind are found (for CI gates).")
@click.option("-j", "--jobs", type=click.IntRange(1, 256), default=os.cpu_count() or 1, show_default=True,
              help="Worker processes when a side has to be extracted.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Extraction cache (default: $ARCHDIFF_CACHE or ~/.cache/archdiff).")
@click.option("--highlight", nargs=2, default=None, metavar="FROM TO",
              help="Mark a shortest path from FROM to TO (node id, qualname or unique suffix) over binds, calls, "
                   "launches and uses edges in the HTML report's graph view, on each side that has both.")
def compare(a: str, b: str, out_dir: Path, formats: str, mode: str, fail_on: str, jobs: int,
            cache_dir: Path | None, highlight: tuple[str, str] | None) -> None:
    """Compare A (left, older) with B (right, newer).

    Each side is an evidence.json, a directory holding one, a system YAML file (name, version,
    sources, and optionally build), or a source spec (directory, git URL@ref, pypi:NAME==VERSION,
    archive) extracted now.
    """
    from archdiff.sides import check_side, load_side
    from comparator.compare import compare_evidence

    chosen = _formats(formats)
    for side in (a, b):
        check_side(side)
    with open_progress() as progress:
        progress.section(f"A {a}")
        side_a = load_side(a, cache_dir, jobs, progress)
        progress.section(f"B {b}")
        side_b = load_side(b, cache_dir, jobs, progress)
        progress.section(f"A {a} / B {b}")
        progress.phase("comparing")
        findings = compare_evidence(side_a, side_b, mode)
        progress.phase("writing reports")
        paths = write_reports(findings, out_dir, chosen, (side_a, side_b), highlight)
    for path in paths:
        click.echo(str(path))
    d = findings["differences"]
    click.echo(f"{findings['systems'][0]['label']} -> {findings['systems'][1]['label']} ({findings['mode']}): "
               f"{d['any']:,} differences, {d['breaking']:,} breaking")
    sys.exit(exit_code(findings, fail_on))


@click.command("battle")
@click.argument("preset", metavar="PRESET_OR_FILE")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("report"),
              callback=writable_dir,
              show_default=True, help="Directory for the reports and each system's evidence.")
@click.option("--format", "formats", default="html,md,json", show_default=True,
              help="Comma-separated report formats: html, md, json.")
@click.option("-j", "--jobs", type=click.IntRange(1, 256), default=os.cpu_count() or 1, show_default=True)
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None)
def battle(preset: str, out_dir: Path, formats: str, jobs: int, cache_dir: Path | None) -> None:
    """Extract the systems of a curated preset (by name, or a preset YAML file) and compare them."""
    from comparator.compare import compare_evidence
    from extractor.context import ExtractOptions
    from extractor.evidence.read import evidence_from_json
    from extractor.presets import load_preset
    from extractor.run.pipeline import extract_system

    chosen = _formats(formats)
    loaded = load_preset(preset)
    if len(loaded.systems) != 2:
        raise UserInputError(f"preset {loaded.name!r} names {len(loaded.systems)} systems; battle compares exactly two")
    bundles = []
    with open_progress() as progress:
        for i, system in enumerate(loaded.systems):
            progress.section(f"system {i + 1}/{len(loaded.systems)} {system.name}")
            result = extract_system(system.specs(), name=system.name, version=system.version, progress=progress,
                                    options=ExtractOptions(jobs=jobs, cache_dir=cache_dir, build=system.build))
            progress.phase("writing evidence.json")
            result.write(out_dir / f"system-{i + 1}")
            progress.phase("reading evidence")
            bundles.append(evidence_from_json(result.bundle, f"system-{i + 1}/evidence.json"))
        progress.section(loaded.name)
        progress.phase("comparing")
        findings = compare_evidence(bundles[0], bundles[1], "auto")
        progress.phase("writing reports")
        paths = write_reports(findings, out_dir, chosen, (bundles[0], bundles[1]))
    for path in paths:
        click.echo(str(path))
