"""Where extraction work runs: this machine's process pool (the default), or a Ray cluster.

An executor does two things for the pipeline: it scans files (``scan_files``: ``(language, bytes)``
items in, per-file results out, in input order) and it opens the fact store of a cache directory
(``open_store``: the content-hash cache of :mod:`extractor.run.cache`). For many systems or releases
it also runs whole extractions (``extract_many``), and any other pure function over many items
(``map``: release tracking compares pairs of releases with it). The pipeline never knows which executor it
has: evidence is the same bytes either way, because the work is the same pure functions
(:func:`extractor.run.scan.scan_file`, each step's ``extract``) and results come back in input order.

:class:`LocalExecutor` needs nothing beyond archdiff; :func:`open_executor` imports the Ray
executor (:mod:`extractor.run.raytasks`) only when asked for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import Any, Protocol

from extractor.context import ExtractOptions
from extractor.errors import UserInputError
from extractor.run.pipeline import Extraction, ExtractionJob, extract_system
from extractor.run.progress import Progress
from extractor.run.workplace import LocalWorkplace, Workplace


class Executor(Workplace, Protocol):
    """A workplace that also runs whole extractions and any pure function over many items."""

    def extract_many(self, jobs: Sequence[ExtractionJob], options: ExtractOptions) -> Generator[Extraction, None, None]: ...

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]: ...

    def close(self) -> None: ...


class LocalExecutor(LocalWorkplace):
    """This machine: files scanned in a process pool of ``options.jobs`` workers, one extraction
    after another, facts in ``CACHE/facts.sqlite``. ``progress`` (a display's) is told about
    each extraction of :meth:`extract_many`."""

    def __init__(self, progress: Progress | None = None) -> None:
        self.progress = progress

    def extract_many(self, jobs: Sequence[ExtractionJob], options: ExtractOptions) -> Generator[Extraction, None, None]:
        for job in jobs:
            yield extract_system(job.specs, name=job.name, version=job.version, options=options, executor=self,
                                 progress=self.progress)

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        """``fn`` over ``items``, here, one after another (items are taken as they are needed)."""
        return map(fn, items)

    def close(self) -> None:
        pass


LOCAL = LocalExecutor()
_RAY_ADDRESS = re.compile(r"^ray://[A-Za-z0-9_.\[\]:-]+(:\d+)?/?$")


def open_executor(text: str, *, num_cpus: int | None = None, progress: Progress | None = None) -> Executor:
    """``local``, ``ray`` (a local Ray runtime, or the cluster that ``RAY_ADDRESS`` names) or
    ``ray://HOST:PORT`` (a Ray cluster through Ray Client). ``progress`` is drawn for local
    extractions only (Ray's run elsewhere)."""
    value = text.strip()
    if value == "local":
        return LOCAL if progress is None else LocalExecutor(progress)
    if value == "ray" or _RAY_ADDRESS.match(value):
        from extractor.run.raytasks import RayExecutor

        return RayExecutor(None if value == "ray" else value, num_cpus=num_cpus)
    raise UserInputError(f"--executor {text!r}: give local, ray, or ray://HOST:PORT for a Ray cluster")
