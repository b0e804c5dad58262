"""Where a command writes, checked before the command does any work.

Every ``-o`` option passes through one of these click callbacks. A run whose result could not be
kept (an output directory on a read-only filesystem, inside a directory the user may not write, or
under a regular file) stops at once with one line and exit 2, instead of extracting for minutes
and then failing on its first write as an internal error.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from extractor.errors import UserInputError
from extractor.support.storage import cannot_write, ensure_dir


def writable_dir(_ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path | None:
    """``value`` as a directory that exists (made, parents too, if missing) and takes a new file."""
    if value is not None:
        _check(value, make=True)
    return value


def writable_file(_ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path | None:
    """``value`` as a file whose directory exists and takes a new file (``value`` is written atomically
    beside itself, so the directory must be writable, not only the file)."""
    if value is not None:
        if value.is_dir():
            raise UserInputError(f"cannot write {value}: it is a directory")
        _check(value.parent, make=False)
    return value


def _check(directory: Path, *, make: bool) -> None:
    if make:
        ensure_dir(directory)
    probe = directory / f".archdiff-write-check-{os.getpid()}"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
        os.unlink(probe)
    except OSError as err:
        raise cannot_write(directory, err) from None
