"""Per-file facts cached by content hash, in one SQLite file under the cache directory.

The key is the content's sha256, its language and a fingerprint of the scanners (their step
versions and archdiff's own source), so a second run over the same tree, or over the next release,
parses only what changed, and a changed scanner never serves stale facts.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import sqlite3
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from extractor.support import deflate

if TYPE_CHECKING:
    from extractor.model import Step

log = logging.getLogger("archdiff")
BUSY_TIMEOUT = 30.0  # seconds to wait for another run's write before giving the cache up

_PACKAGE = Path(__file__).resolve().parent.parent  # the whole extractor package, not this folder
_SCHEMA = "CREATE TABLE IF NOT EXISTS facts (key TEXT PRIMARY KEY, value BLOB NOT NULL)"


def code_fingerprint(steps: Iterable[Step[Any]]) -> str:
    """Hash of the scanners' declared versions, of the extractor package's own source files, and of
    the source of any module outside the package that defines a step's ``extract`` or scanners (a
    library caller's own kind: changing its code must not serve facts or a bundle it computed before)."""
    steps = list(steps)
    h = hashlib.sha256()
    for name, version in sorted((s.name, s.version) for s in steps):
        h.update(f"{name}={version};".encode())
    h.update(package_digest().encode())
    for path in sorted(_outside_sources(steps, _PACKAGE)):
        h.update(path.as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


@functools.cache
def package_digest() -> str:
    """Hash of the extractor package's own source files (Python and data), by path and content;
    once per process (its code is what it imported: the files changed since do not run in it)."""
    h = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*")):
        if path.suffix in (".py", ".yaml") and "__pycache__" not in path.parts:
            h.update(path.relative_to(_PACKAGE).as_posix().encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def _outside_sources(steps: list[Step[Any]], package: Path) -> set[Path]:
    """The source files, outside ``package``, of the modules that define the steps' functions."""
    found: set[Path] = set()
    for step in steps:
        for function in (step.extract, *step.scanners.values()):
            module = sys.modules.get(getattr(function, "__module__", "") or "")
            source = getattr(module, "__file__", None)
            if source and source.endswith(".py"):
                path = Path(source).resolve()
                if not path.is_relative_to(package):
                    found.add(path)
    return found


def _file_system_reason(directory: Path) -> str:
    """What the file system says when asked to create a file in ``directory`` ("" if it can):
    SQLite's own message ("unable to open database file") does not say why."""
    try:
        with tempfile.TemporaryFile(dir=directory):
            return ""
    except OSError as err:
        return err.strerror or ""


class FactCache:
    """A tiny key/value store; ``None`` as a path means no caching at all.

    The cache only ever saves time, so a cache that cannot be used (a read-only or full disk, a
    database another process holds too long) turns itself off for the rest of the run, logs why
    once, and the run goes on computing everything. Writes are SQLite transactions: an entry is
    whole or absent, never half-written.
    """

    def __init__(self, path: Path | None, *, quiet: bool = False) -> None:
        self._db: sqlite3.Connection | None = None
        self._path = path
        self.problem = ""  # why the cache was turned off ("" while it works)
        self._quiet = quiet  # the problem is only kept, for a caller that says it
        # A cache that does not exist yet has nothing to read: it is created by the first write,
        # so a run that fails before it has anything to store (a disk too full for the sources
        # themselves) reports that alone, not first a cache that gave itself up.
        self._created_by_write = path is not None and not path.exists()
        if path is None or self._created_by_write:
            return
        self._connect(path)

    def _connect(self, path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._db = self._open(path)
            except sqlite3.DatabaseError as err:
                if isinstance(err, sqlite3.OperationalError):
                    raise  # locked, read-only, full: not a corrupt file, never deleted
                # A corrupt cache is only a cache: start it again rather than fail the run.
                path.unlink(missing_ok=True)
                self._db = self._open(path)
        except (OSError, sqlite3.Error) as err:
            self._turn_off(err)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)
        except sqlite3.Error:
            db.close()
            raise
        return db

    @property
    def path(self) -> Path | None:
        return self._path

    def _turn_off(self, err: BaseException) -> None:
        directory = self._path.parent if self._path is not None else Path(".")
        reason = getattr(err, "strerror", None) or _file_system_reason(directory) or str(err) or type(err).__name__
        self.give_up(f"cache {directory} cannot be used ({reason}): working without it")

    def give_up(self, problem: str) -> None:
        """Off for the rest of the run, ``problem`` logged once: what this store met, or what
        another process writing the same file met (a forked child's log reaches no one)."""
        self._created_by_write = False  # not even created by a later write
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
        self.problem = problem
        if not self._quiet:
            log.warning(problem)

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        """The stored bytes of each key that has them, as :meth:`put_many` was given them."""
        if self._db is None or not keys:
            return {}
        found: dict[str, bytes] = {}
        try:
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                rows = self._db.execute(
                    f"SELECT key, value FROM facts WHERE key IN ({','.join('?' * len(chunk))})", chunk)
                found.update(rows)
        except sqlite3.Error as err:
            self._turn_off(err)
            return {}
        return found

    def _writable(self) -> sqlite3.Connection | None:
        if self._created_by_write and self._path is not None:
            self._created_by_write = False
            self._connect(self._path)
        return self._db

    def put_many(self, items: Mapping[str, bytes]) -> None:
        """Store values as they are: scan results come packed from the workers
        (extractor.run.facts.pack_result), so the driver does not compress them again. An entry
        that does not unpack is the reader's miss, scanned again and rewritten."""
        db = self._writable() if items else None
        if db is None:
            return
        rows = list(items.items())
        try:
            with db:
                db.executemany("INSERT OR REPLACE INTO facts (key, value) VALUES (?, ?)", rows)
        except sqlite3.Error as err:
            self._turn_off(err)

    def get_bytes(self, key: str) -> bytes | None:
        if self._db is None:
            return None
        try:
            row = self._db.execute("SELECT value FROM facts WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as err:
            self._turn_off(err)
            return None
        if row is None:
            return None
        try:
            return deflate.decompress(row[0])
        except deflate.ZlibError:
            return None

    def put_bytes(self, key: str, data: bytes) -> None:
        self.put_compressed(key, deflate.compress(data))

    def put_compressed(self, key: str, compressed: bytes) -> None:
        """Store zlib data as :meth:`put_bytes` stores bytes (:meth:`get_bytes` decompresses them):
        for a caller that compressed them elsewhere (the bundle's memo, in the processes that
        encoded it, extractor.support.deflate)."""
        db = self._writable()
        if db is None:
            return
        try:
            with db:
                db.execute("INSERT OR REPLACE INTO facts (key, value) VALUES (?, ?)", (key, compressed))
        except sqlite3.Error as err:
            self._turn_off(err)

    def get_json(self, key: str) -> Any:
        """One value stored with :meth:`put_json`; None when absent or unreadable."""
        data = self.get_bytes(key)
        try:
            return json.loads(data) if data is not None else None
        except ValueError:
            return None

    def put_json(self, key: str, value: Any) -> None:
        self.put_bytes(key, json.dumps(value, separators=(",", ":")).encode())

    def close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
