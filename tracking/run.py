"""Track the releases of one system: extract each release through the cache, compare each with the
release before it, and keep OUT_DIR's history, index and timeline up to date.

    OUT/state.json                      what is done (tracking.state)
    OUT/releases/<version>/evidence.json
    OUT/pairs/<old>..<new>/report.{html,md,json}   the same reports as ``archdiff compare``
    OUT/index.html, OUT/timeline.html, OUT/timeline.json

This layer sits above the comparator (it runs the extractor, then the comparator's
``compare_evidence`` and ``write_reports``); the CLI above it only parses options and prints.
Extractions and comparisons go through an executor (:mod:`extractor.run.executor`): this machine's
process pool, or Ray, where releases are extracted and pairs compared side by side; the files, the
state and the pages are written here, in version order.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from packaging.version import Version

from comparator.reports import FORMATS, write_texts
from extractor.buildsettings import merge
from extractor.context import ExtractOptions
from extractor.errors import UserInputError
from extractor.evidence.read import evidence_from_json
from extractor.run.executor import LOCAL, Executor
from extractor.run.pipeline import ExtractionJob
from extractor.run.progress import Progress
from extractor.support.locks import locked
from extractor.support.storage import write_atomic
from tracking.listing import list_releases
from tracking.render import render_index, render_timeline
from tracking.state import State, load_state, save_state, sha256_of
from tracking.pairs import PairJob, compare_pair
from tracking.timeline import build_timeline, release_row
from tracking.versions import Release, select


@dataclasses.dataclass(frozen=True, slots=True)
class Selection:
    since: str = ""
    until: str = ""
    last: int = 0
    pre: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class PairOutcome:
    old: str
    new: str
    report: Path
    any: int
    breaking: int


@dataclasses.dataclass(frozen=True, slots=True)
class TrackResult:
    system: str
    extracted: tuple[str, ...]  # release names extracted in this run, in version order
    pairs: tuple[PairOutcome, ...]  # pairs compared in this run
    index: Path | None  # None when there was nothing to do
    timeline: Path | None


def track_releases(spec: str, out_dir: Path, selection: Selection = Selection(), *, new_only: bool = False,
                   options: ExtractOptions | None = None, executor: Executor = LOCAL,
                   formats: tuple[str, ...] = FORMATS,
                   on_release: Callable[[str, Any], None] | None = None,
                   progress: Progress | None = None) -> TrackResult:
    """Bring OUT_DIR up to date for the releases of ``spec`` that ``selection`` takes.

    Without ``new_only`` every selected release is extracted again (through the cache: unchanged
    releases cost a cache look-up) and its pairs compared again; with it, only releases that OUT_DIR
    lacks, and pairs that lack a report. Releases already in OUT_DIR stay in the history.
    ``progress`` is told which release is extracted and which pair compared (a display draws it;
    the executor draws the extraction's own phases when it runs them here)."""
    progress = progress or Progress()
    tracked = list_releases(spec)
    # a system file's build context, extended by the caller's, as `archdiff extract` merges them
    options = options or ExtractOptions()
    if not tracked.build.empty:
        options = dataclasses.replace(options, build=merge(tracked.build, options.build))
    chosen = select(tracked.releases, since=selection.since, until=selection.until, last=selection.last,
                    pre=selection.pre)
    if not chosen:
        raise UserInputError(f"no release of {spec} matches {_describe(selection)} "
                             f"({len(tracked.releases)} versions listed upstream)")
    with locked(out_dir / ".lock"):
        state = load_state(out_dir, spec, tracked.name)
        todo = [r for r in chosen if not (new_only and r.slug in state.releases)]
        versions = sorted(set(state.releases) | {r.slug for r in chosen}, key=Version)
        wanted_pairs = list(zip(versions, versions[1:]))
        redone = {r.slug for r in todo}
        pairs_todo = [p for p in wanted_pairs if p not in state.pairs or p[0] in redone or p[1] in redone]
        if new_only and not todo and not pairs_todo:
            return TrackResult(tracked.name, (), (), None, None)
        outcomes = _process(tracked.evidence_name, todo, pairs_todo, state, out_dir, options, executor, formats,
                            on_release, progress)
        for stale in set(state.pairs) - set(wanted_pairs):  # no longer consecutive: a release came between
            shutil.rmtree(out_dir / state.pairs.pop(stale)["report"], ignore_errors=True)
        save_state(out_dir, state)
        index, timeline = write_pages(out_dir, state, [r.slug for r in todo])
    return TrackResult(tracked.name, tuple(r.name for r in todo), tuple(outcomes), index, timeline)


def _process(evidence_name: str, todo: Sequence[Release], pairs_todo: Sequence[tuple[str, str]], state: State, out_dir: Path,
             options: ExtractOptions, executor: Executor, formats, on_release, progress: Progress) -> list[PairOutcome]:
    """Extract ``todo`` (the executor returns them in order), then compare the pairs."""
    jobs = [ExtractionJob(r.specs, name=evidence_name) for r in todo]
    with contextlib.closing(executor.extract_many(jobs, options)) as extracted:
        for release, extraction in _announced(todo, extracted, progress):
            _keep_release(release, extraction, state, out_dir, on_release)
    return _compare_pairs(pairs_todo, state, out_dir, executor, formats, progress)


def _announced(todo: Sequence[Release], extracted: Iterable[Any], progress: Progress) -> Iterator[tuple[Release, Any]]:
    """``zip(todo, extracted)``, telling ``progress`` of each release before its extraction is
    taken (a local executor runs it then)."""
    results = iter(extracted)
    for i, release in enumerate(todo, 1):
        progress.section(f"release {i}/{len(todo)} {release.name}")
        try:
            extraction = next(results)
        except StopIteration:
            return
        yield release, extraction


def _keep_release(release: Release, extraction, state: State, out_dir: Path, on_release) -> None:
    folder = out_dir / "releases" / release.slug
    path = extraction.write(folder)
    state.releases[release.slug] = {"version": release.slug, "name": release.name, "specs": list(release.specs),
                                    "evidence": path.relative_to(out_dir).as_posix(), "sha256": sha256_of(extraction.data),
                                    "row": release_row(evidence_from_json(extraction.bundle, str(path)))}
    save_state(out_dir, state)
    if on_release:
        on_release(release.name, extraction)


def _compare_pairs(pairs: Sequence[tuple[str, str]], state: State, out_dir: Path, executor: Executor,
                   formats: tuple[str, ...], progress: Progress | None = None) -> list[PairOutcome]:
    """Each pair compared by the executor (in version order, the evidence read as the pair's turn
    comes), its reports written and the state saved as each one arrives."""
    progress = progress or Progress()

    def jobs() -> Iterator[PairJob]:
        for i, (old, new) in enumerate(pairs, 1):
            progress.section(f"pair {i}/{len(pairs)} {old} -> {new}")
            progress.phase("comparing")
            texts = [(out_dir / state.releases[v]["evidence"]).read_text(encoding="utf-8") for v in (old, new)]
            yield PairJob(old, new, texts[0], texts[1], formats)

    outcomes = []
    for result in executor.map(compare_pair, jobs()):
        folder = out_dir / "pairs" / f"{result.old}..{result.new}"
        write_texts(result.reports, folder)
        state.pairs[(result.old, result.new)] = {"old": result.old, "new": result.new,
                                                 "report": folder.relative_to(out_dir).as_posix(), "row": result.row}
        save_state(out_dir, state)
        outcomes.append(PairOutcome(result.old, result.new, folder, result.differences["any"],
                                    result.differences["breaking"]))
    return outcomes


def write_pages(out_dir: Path, state: State, new: Iterable[str] = ()) -> tuple[Path, Path]:
    """``timeline.json``, ``timeline.html`` and ``index.html`` from the state (``new``: the
    versions this run added, marked on the index)."""
    releases = [state.releases[k] for k in sorted(state.releases, key=Version)]
    pairs = list(state.pairs.values())
    data = build_timeline(state.system, state.spec, releases, pairs)
    write_atomic(out_dir / "timeline.json", json.dumps(data, indent=1, sort_keys=True) + "\n")
    timeline = write_atomic(out_dir / "timeline.html", render_timeline(data))
    index = write_atomic(out_dir / "index.html", render_index(data, list(new)))
    return index, timeline


def _describe(selection: Selection) -> str:
    parts = [f"--from {selection.since}" if selection.since else "", f"--to {selection.until}" if selection.until else "",
             f"--last {selection.last}" if selection.last else "", "--pre" if selection.pre else "without --pre"]
    return " ".join(p for p in parts if p)
