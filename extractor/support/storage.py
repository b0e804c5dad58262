"""Writing into the output and cache directories: a whole file or nothing, and one line naming the
directory when it cannot be written.

Every file archdiff produces (evidence, run log, graph exports, reports, downloads, cache entries)
is written to a temporary name of its own beside the target and renamed over it only once
complete. A full disk, a read-only mount or a run killed halfway therefore leaves the previous
file or none, never a truncated one that a later run or a ``compare`` would accept; and two runs
writing the same file never write into each other's temporary file (a fixed ``x.tmp`` name did).

A write that fails for want of space or permission is a :class:`StorageError`, exit code 2, one
line naming the directory; other ``OSError`` s stay what they are.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

from extractor.errors import StorageError

# The errors that say "this directory cannot take the file", as opposed to a bad input.
_STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EACCES, errno.EPERM})


_NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def default_cache_dir() -> Path:
    """$ARCHDIFF_CACHE, else archdiff's directory under the XDG cache (``~/.cache/archdiff``)."""
    if env := os.environ.get("ARCHDIFF_CACHE"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "archdiff"


def is_storage_error(err: BaseException) -> bool:
    return isinstance(err, OSError) and err.errno in _STORAGE_ERRNOS


def cannot_write(directory: Path | str, err: OSError) -> StorageError:
    reason = err.strerror or type(err).__name__
    hint = "free some space there or choose" if err.errno in _NO_SPACE else "choose"
    return StorageError(f"cannot write to {directory} ({reason}): {hint} another directory "
                        "(-o for output, --cache-dir or ARCHDIFF_CACHE for the cache)")


def ensure_dir(directory: Path) -> Path:
    """``mkdir -p``, with a :class:`StorageError` naming the directory when it cannot be made."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise cannot_write(directory, err) from None
    return directory


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """A fresh temporary path beside ``target`` for the block to write; renamed over ``target``
    when the block completes, removed when it does not."""
    directory = ensure_dir(target.parent)
    tmp = directory / f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp"
    try:
        yield tmp
        os.replace(tmp, target)
    except OSError as err:
        if is_storage_error(err):
            raise cannot_write(directory, err) from None
        raise
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def write_atomic(target: Path, data: bytes | str) -> Path:
    """Write ``data`` (text is UTF-8) to ``target`` whole, or not at all."""
    written_atomic(target, data)
    return target


def written_atomic(target: Path, data: bytes | str) -> os.stat_result:
    """:func:`write_atomic`, and the status of the file written (its inode, size and modification
    time), taken from the file itself before it is renamed into place: what the caller knows is
    its own file even if another process replaces ``target`` a moment later."""
    with atomic_path(target) as tmp, os.fdopen(_create(tmp), "wb") as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        fh.flush()
        return os.fstat(fh.fileno())


def link_atomic(target: Path, source: Path, inode: int) -> Path:
    """``target`` made the file ``source`` (a hard link: no byte copied), whole or not at all, and
    only while ``source`` is still the file ``inode`` (another process may have renamed another
    file over it). Raises ``OSError`` where the file system refuses the link (another device, no
    links) and :class:`StorageError` as :func:`write_atomic` does."""
    with atomic_path(target) as tmp:
        os.link(source, tmp)
        if os.stat(tmp).st_ino != inode:
            raise OSError(errno.ESTALE, f"{source} was replaced before it could be linked")
    return target


def copy_atomic(target: Path, source_fd: int, size: int) -> Path:
    """Copy the first ``size`` bytes of the open file ``source_fd`` to ``target`` whole, or not at
    all, by the kernel (``sendfile``: no pass through this process's memory)."""
    with atomic_path(target) as tmp:
        fd = _create(tmp)
        try:
            offset = 0
            while offset < size:
                sent = os.sendfile(fd, source_fd, offset, size - offset)
                if sent == 0:
                    raise OSError(f"the source of {target.name} ended early")
                offset += sent
        finally:
            os.close(fd)
    return target


def _create(tmp: Path) -> int:
    # O_EXCL: the name is ours alone; 0o666 lets the umask decide, as for any created file
    return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
