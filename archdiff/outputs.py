"""Where a command writes, checked before the command does any work.

Every ``-o`` option passes through one of these click callbacks. A run whose result could not be
kept (an output directory on a read-only filesystem, inside a directory the user may not write, or
under a regular file) stops at once with one line and exit 2, instead of extracting for minutes
and then failing on its first write as an internal error.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import click

from extractor.errors import UserInputError
from extractor.support.storage import cannot_write


def writable_dir(_ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path | None:
    """``value`` as a directory the command can make (if missing) and write new files in."""
    if value is not None:
        _check(value)
    return value


def writable_file(_ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path | None:
    """``value`` as a file the command can write (atomically, beside itself: so its directory must
    take a new file, not only the file be writable)."""
    if value is not None:
        if value.is_dir():
            raise UserInputError(f"cannot write {value}: it is a directory")
        _check(value.parent)
    return value


def _check(directory: Path) -> None:
    """Nothing is made here: a run refused later (bad input) leaves no empty directory behind. The
    check writes and removes one file in ``directory``, or, if it does not exist yet, in the
    nearest directory above it that does (where it would be made)."""
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise cannot_write(directory, NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)))
    probe = existing / f".archdiff-write-check-{os.getpid()}"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
        os.unlink(probe)
    except OSError as err:
        raise cannot_write(directory, err) from None
