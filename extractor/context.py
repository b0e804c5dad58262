"""What the pipeline hands to each evidence kind's ``extract``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from extractor.buildsettings import BuildSettings
from extractor.model import Contribution, Language, Step

X = TypeVar("X")
T = TypeVar("T")


@dataclasses.dataclass(frozen=True, slots=True)
class SourceTree:
    """One acquired source: a directory on disk that archdiff reads and never writes."""

    label: str  # prefix of every path from this source in a multi-source system ("" if alone)
    spec: str  # what the user wrote
    kind: str  # "git", "dir", "pypi", "archive"
    root: Path
    ref: str = ""
    commit: str = ""
    skipped_links: tuple[str, ...] = ()  # members not extracted: symbolic links leaving the tree

    def record(self) -> dict[str, str]:
        return {"label": self.label, "spec": self.spec, "kind": self.kind, "ref": self.ref,
                "commit": self.commit}


@dataclasses.dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # label-prefixed POSIX path: what evidence records carry
    rel: str  # POSIX path inside its source root
    source: str  # source label
    language: Language
    sha256: str
    size: int
    facts: Mapping[str, Any]  # step name -> what that step's scanner returned for this file
    lines: int = 0  # physical lines (for "share of code assigned" figures)
    module: str = ""  # Python files: the dotted module name (extractor.naming.module_names); else ""


@dataclasses.dataclass(frozen=True, slots=True)
class ExtractOptions:
    jobs: int = 1
    cache_dir: Path | None = None
    binaries: tuple[Path, ...] = ()  # ELF files whose DWARF struct layouts join the evidence
    probe_structs: bool = True  # compile probes from headers for struct layouts
    build: BuildSettings = BuildSettings()  # what the user's build compiles headers with (struct probes)
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(slots=True)
class Context:
    name: str
    version: str
    sources: tuple[SourceTree, ...]
    files: tuple[SourceFile, ...]  # sorted by path
    options: ExtractOptions
    results: dict[str, Contribution[Any]] = dataclasses.field(default_factory=dict)
    _once: dict[Callable[..., Any], Any] = dataclasses.field(default_factory=dict, repr=False)
    # the steps running in the background now (Step.background): their results are not there yet
    running: set[str] = dataclasses.field(default_factory=set, repr=False)
    # step name -> file path -> what the step's ``ahead`` returned for it during the scan
    done_ahead: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict, repr=False)

    def result(self, step: Step[X]) -> Contribution[X]:
        """What ``step`` contributed; it must have run (declare it in ``requires``)."""
        self._not_running(step)
        try:
            return self.results[step.name]
        except KeyError:
            raise KeyError(f"step {step.name!r} has not run before this one: add it to the step's requires") from None

    def result_if_run(self, step: Step[X]) -> Contribution[X] | None:
        """What ``step`` contributed, or None when the pipeline ran without it."""
        self._not_running(step)
        return self.results.get(step.name)

    def _not_running(self, step: Step[Any]) -> None:
        # A step that reads a background step's result without requiring it would see it or not
        # depending on the timing: refused, whatever the timing.
        if step.name in self.running:
            raise KeyError(f"step {step.name!r} runs in the background: add it to the requires of the step that reads it")

    def view(self, results: dict[str, Contribution[Any]]) -> Context:
        """The context a step in the background sees, in any run: the same system, the results
        given (those of the steps it requires) and none other, and a ``once`` of its own (nothing
        its thread shares with the driver's)."""
        return Context(self.name, self.version, self.sources, self.files, self.options, results,
                       done_ahead=self.done_ahead)

    def take_ahead(self, step: Step[Any]) -> Mapping[str, Any]:
        """What ``step.ahead`` returned during the scan, by file path (see :class:`Step`), handed
        over once: the step may build on it in place, and a second run of its ``extract`` on this
        context (a benchmark's) finds nothing and does the work itself."""
        return self.done_ahead.pop(step.name, {})

    def once(self, compute: Callable[[Context], T]) -> T:
        """``compute(self)``, computed once per system whichever step asks first (the build
        manifests that the Rust, Go and FFI steps all read)."""
        if compute not in self._once:
            self._once[compute] = compute(self)
        return self._once[compute]

    def facts(self, step: str, *languages: Language) -> Iterator[tuple[SourceFile, Any]]:
        """(file, facts) for every file that ``step``'s scanner returned something for."""
        for f in self.files:
            if languages and f.language not in languages:
                continue
            value = f.facts.get(step)
            if value is not None:
                yield f, value

    def source_root(self, file: SourceFile) -> Path:
        for s in self.sources:
            if s.label == file.source:
                return s.root
        raise KeyError(file.source)

    def abs_path(self, file: SourceFile) -> Path:
        return self.source_root(file) / file.rel
