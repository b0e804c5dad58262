"""Per-file facts cached by content hash, in one SQLite file under the cache directory.

The key is the content's sha256, its language and a fingerprint of the scanners (their step
versions and archdiff's own source), so a second run over the same tree, or over the next release,
parses only what changed, and a changed scanner never serves stale facts.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

_SCHEMA = "CREATE TABLE IF NOT EXISTS facts (key TEXT PRIMARY KEY, value BLOB NOT NULL)"


def code_fingerprint(step_versions: Iterable[tuple[str, str]]) -> str:
    """Hash of the scanners' declared versions and of the extractor package's own source files."""
    h = hashlib.sha256()
    for name, version in sorted(step_versions):
        h.update(f"{name}={version};".encode())
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*")):
        if path.suffix in (".py", ".yaml") and "__pycache__" not in path.parts:
            h.update(path.relative_to(package).as_posix().encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


class FactCache:
    """A tiny key/value store; ``None`` as a path means no caching at all."""

    def __init__(self, path: Path | None) -> None:
        self._db: sqlite3.Connection | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._db = sqlite3.connect(str(path), timeout=30)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute(_SCHEMA)
            except sqlite3.DatabaseError:
                # A corrupt cache is only a cache: start it again rather than fail the run.
                path.unlink(missing_ok=True)
                self._db = sqlite3.connect(str(path), timeout=30)
                self._db.execute(_SCHEMA)

    def get_many(self, keys: list[str]) -> dict[str, Any]:
        if self._db is None or not keys:
            return {}
        found: dict[str, Any] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            rows = self._db.execute(
                f"SELECT key, value FROM facts WHERE key IN ({','.join('?' * len(chunk))})", chunk)
            for key, value in rows:
                try:
                    found[key] = json.loads(zlib.decompress(value))
                except (zlib.error, ValueError):
                    continue  # unreadable entry: treated as a miss and rewritten
        return found

    def put_many(self, items: Mapping[str, Any]) -> None:
        if self._db is None or not items:
            return
        rows = [(k, zlib.compress(json.dumps(v, separators=(",", ":")).encode(), 1)) for k, v in items.items()]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO facts (key, value) VALUES (?, ?)", rows)

    def get_bytes(self, key: str) -> bytes | None:
        if self._db is None:
            return None
        row = self._db.execute("SELECT value FROM facts WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return zlib.decompress(row[0])
        except zlib.error:
            return None

    def put_bytes(self, key: str, data: bytes) -> None:
        if self._db is None:
            return
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO facts (key, value) VALUES (?, ?)", (key, zlib.compress(data, 1)))

    def get_json(self, key: str) -> Any:
        """One value stored with :meth:`put_json` (or :meth:`put_many`); None when absent or unreadable."""
        return self.get_many([key]).get(key)

    def put_json(self, key: str, value: Any) -> None:
        self.put_many({key: value})

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
