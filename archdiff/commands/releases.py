"""``archdiff releases``: the release history of one system, kept up to date in OUT_DIR.

Exit codes: 0 done (also when ``--new-only`` found nothing new); 1 a pair compared in this run has
differences of the kind ``--fail-on`` names; 2 bad input.

On a terminal, stderr shows the release being extracted (or the pair compared) with its phase;
stdout gets each release as it is done and the summary.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from archdiff.outputs import writable_dir


@click.command("releases")
@click.argument("spec", metavar="SPEC")
@click.option("--from", "since", default="", metavar="V", help="First release to take (included).")
@click.option("--to", "until", default="", metavar="V", help="Last release to take (included).")
@click.option("--last", type=click.IntRange(1, None), default=None, metavar="N",
              help="Only the N newest releases (after --from/--to).")
@click.option("--pre", is_flag=True, help="Take pre-releases and development releases too.")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("releases"),
              callback=writable_dir,
              show_default=True, help="Directory holding the history: evidence, reports, index and timeline.")
@click.option("--executor", default="local", show_default=True, metavar="local|ray|ray://HOST:PORT",
              help="Where extractions run: this machine's process pool, a local Ray runtime (or the cluster "
                   "RAY_ADDRESS names), or a Ray cluster through Ray Client.")
@click.option("--new-only", is_flag=True, help="Do only what OUT_DIR lacks: new releases and their pairs.")
@click.option("--fail-on", type=click.Choice(["breaking", "any", "never"]), default="never", show_default=True,
              help="Exit 1 when a pair compared in this run has differences of this kind.")
@click.option("--format", "formats", default="html,md,json", show_default=True,
              help="Comma-separated report formats for each pair: html, md, json.")
@click.option("-j", "--jobs", type=click.IntRange(1, 256), default=os.cpu_count() or 1, show_default=True,
              help="Worker processes (local), or CPUs of the local Ray runtime.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Cache for downloads, clones and parsed facts (default: $ARCHDIFF_CACHE or ~/.cache/archdiff).")
def releases(spec: str, since: str, until: str, last: int | None, pre: bool, out_dir: Path, executor: str,
             new_only: bool, fail_on: str, formats: str, jobs: int, cache_dir: Path | None) -> None:
    """Extract every release of SPEC, compare each with the one before, draw the timeline.

    SPEC is pypi:NAME (its sdists), a git URL without @ref (its tags that are versions), or a
    system file (YAML: name and sources, each a git URL or pypi:NAME, and optionally build; a
    version is a release when every source has it).
    """
    from archdiff.commands.compare import _formats, exit_code
    from archdiff.progress import open_progress
    from extractor.context import ExtractOptions
    from extractor.run.executor import open_executor
    from tracking.run import Selection, track_releases

    chosen = _formats(formats)
    with open_progress() as progress:
        engine = open_executor(executor, num_cpus=jobs, progress=progress)
        try:
            def done(name: str, extraction) -> None:
                c = extraction.cache
                how = ("from the cache" if c.get("memo") else
                       f"{c.get('misses', 0):,} files parsed, {c.get('hits', 0):,} cached")
                if c.get("shared"):
                    how += f", {c['shared']:,} parsed for it by a release extracted beside it"
                progress.echo(f"extracted {name} ({how})")

            result = track_releases(spec, out_dir, Selection(since, until, last or 0, pre), new_only=new_only,
                                    options=ExtractOptions(jobs=jobs, cache_dir=cache_dir), executor=engine,
                                    formats=chosen, on_release=done, progress=progress)
        finally:
            engine.close()
    if result.index is None:
        click.echo(f"{result.system}: no new releases")
        sys.exit(0)
    click.echo(f"{result.system}: new releases: {', '.join(result.extracted) or 'none'}")
    for pair in result.pairs:
        click.echo(f"{pair.old} -> {pair.new}: {pair.any:,} differences, {pair.breaking:,} breaking "
                   f"({pair.report / 'report.html'})")
    click.echo(str(result.index))
    click.echo(str(result.timeline))
    worst = max((exit_code({"differences": {"any": p.any, "breaking": p.breaking}}, fail_on) for p in result.pairs),
                default=0)
    sys.exit(worst)
