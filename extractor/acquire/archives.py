"""Safe, bounded extraction of untrusted archives (sdists, tarballs, zips, ``git archive`` output).

An archive is refused as a whole, with one line, when a member would leave the tree (absolute
paths, ``..``, drive letters), when it holds too many members or unpacks to too many bytes, or when
decompressing it takes too long. Compressed tars are first decompressed in memory (up to
:data:`SPOOL_BYTES`, then into a temporary file) through a reader that counts bytes and watches the
clock, because a small bzip2/xz stream can expand without bound and ``tarfile`` would otherwise
decompress all of it just to list members.

Symbolic links: a link whose target leaves the tree is refused for archives the user downloads;
for git trees (``outside_links="skip"``) it is skipped and named, since a legitimate repository can
hold such links. The names of skipped links are written beside the tree so that a cached tree
reports them again.

Concurrent runs may extract the same archive into the same cache: each extracts into a temporary
directory of its own and renames it into place; whoever loses the race uses the winner's tree.

Writing the tree is mostly the kernel creating files (vLLM's sdist: 3,433 members, about 3 s of a
first run, 60% of it in ``open()``; threads did not speed it up). The pipeline need not wait for
it: the scan reads files' bytes, and those are in the decompressed tar already. So a tar asked for
``background=True`` whose files are all plain (regular files and directories, no links, no two
members at one path: see :func:`_plain_files`) and which fits in memory is written by a forked
child process (a thread where there is no ``fork``), while :class:`Unpacking` serves its files'
sizes and bytes from memory; whoever reads the tree from disk (manifests, probes) waits for the
writer (:meth:`Unpacking.wait`). Any other tar is written before ``extract_tar`` returns, as it
always was.

A process, not a thread, because each of the writer's 17,000 system calls gives up the
interpreter's lock and must take it back: while the driver's own thread works (decoding the
scan's results, which with many cores is all of the pool's window) a thread waits up to the
switch interval (5 ms) for it after every call, and the tree that takes 0.2-3 s of the kernel's
time alone took minutes beside a busy thread. The child shares nothing with the driver's lock,
and its CPU is counted as a child's (the run log's ``unpack`` phase, ``workers_cpu_s``).
"""

from __future__ import annotations

import bz2
import contextlib
import functools
import io
import json
import lzma
import os
import posixpath
import re
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from extractor.acquire.inventory import SNIFFED_BYTES
from extractor.errors import UserInputError
from extractor.support import deflate
from extractor.support.forkmap import finish_call, start_call
from extractor.support.storage import is_storage_error, write_atomic

MAX_ARCHIVE_BYTES = 4 * 1024**3  # uncompressed, whole archive
MAX_ARCHIVE_MEMBERS = 200_000
MAX_EXTRACT_SECONDS = 600.0
# A decompressed tar up to this size stays in memory (vLLM's sdist: 50 MB) rather than being
# written to disk and read back; a larger one spills into the scratch directory.
SPOOL_BYTES = 256 * 1024**2
_CHUNK = 1 << 20
_DECOMPRESSORS = ((b"\x1f\x8b", deflate.GzipFile), (b"BZh", bz2.BZ2File), (b"\xfd7zXZ\x00", lzma.LZMAFile))
_BROKEN = (tarfile.TarError, EOFError, OSError, lzma.LZMAError, zlib.error, deflate.ZlibError, ValueError)


def skipped_links_file(tree: Path) -> Path:
    return tree.with_name(tree.name + ".skipped-links.json")


def skipped_links(tree: Path) -> tuple[str, ...]:
    """Members skipped when ``tree`` was extracted (links that left it)."""
    try:
        return tuple(json.loads(skipped_links_file(tree).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return ()


class Unpacking:
    """A tar's tree being written into place by a forked child (or a thread), and its regular
    files meanwhile: their paths (relative to the tree's root, the archive's single top folder
    when it has one), sizes and bytes, read from the decompressed tar in memory."""

    def __init__(self, data: bytes, files: dict[str, tuple[int, int]], root: str, write: Callable[[], None]) -> None:
        self._data = memoryview(data)
        self._files = files  # path under root -> (offset, size) in data
        self.root = root  # "" or the top folder: the tree's root is target / root
        self._error: BaseException | None = None
        self._write = write
        self._lock = threading.Lock()
        # a child that outlives the driver: a run that stops before it waits (a failed step, an
        # interrupt) still leaves the tree whole, or its scratch folder removed, as a thread the
        # interpreter waits for at exit did
        self._child = start_call(functools.partial(_outcome, write), outlive=True)
        self._thread: threading.Thread | None = None
        if self._child is None:
            self._thread = threading.Thread(target=self._run, args=(write,), name="archdiff-unpack")
            self._thread.start()

    def _run(self, write: Callable[[], None]) -> None:
        self._error = _outcome(write)

    def sizes(self) -> dict[str, int]:
        """Every regular file's size, by its POSIX path under the root."""
        return {path: size for path, (_offset, size) in self._files.items()}

    def read(self, path: str) -> bytes:
        offset, size = self._files[path]
        return bytes(self._data[offset:offset + size])

    def head(self, path: str) -> bytes:
        """The first bytes of a file (:data:`extractor.acquire.inventory.SNIFFED_BYTES`), what the inventory
        reads of a file whose name says no language."""
        offset, size = self._files[path]
        return bytes(self._data[offset:offset + min(size, SNIFFED_BYTES)])

    def wait(self) -> None:
        """Return once the tree is in place; raise what writing it raised. A child that ended
        without saying how it went (killed, crashed) leaves the writing to this process."""
        with self._lock:
            if self._child is not None:
                child, self._child = self._child, None
                told: tuple[BaseException | None] | None = finish_call(child)
                if told is None:
                    self._run(self._write)
                else:
                    self._error = told[0]
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error


def _outcome(write: Callable[[], None]) -> BaseException | None:
    """What ``write`` raised, or None (:meth:`Unpacking.wait` raises it in the caller's thread)."""
    try:
        write()
    except BaseException as err:  # noqa: BLE001 (raised again by Unpacking.wait, in the driver)
        return err
    return None


def extract_tar(fileobj, target: Path, name: str, *, outside_links: str = "refuse",
                background: bool = False) -> Unpacking | None:
    """Extract a (possibly compressed) tar from ``fileobj`` into ``target``, which must not exist.

    ``background``: when the tar allows it (see the module's docstring), return at once with the
    tree being written by a child process (:class:`Unpacking`); otherwise (and always without it)
    return None once the tree is in place."""
    parent = _ensure_parent(target)
    deadline = time.monotonic() + MAX_EXTRACT_SECONDS
    with tempfile.TemporaryDirectory(prefix=".extract-", dir=parent) as scratch:
        with _refusals(name):
            decompressed = _decompress_bounded(fileobj, name, deadline, scratch)
            plain: IO[bytes]
            if isinstance(decompressed, bytes):
                data, plain = decompressed, io.BytesIO(decompressed)
            else:
                data, plain = None, decompressed  # past SPOOL_BYTES: in a file
            with plain:
                files = None
                if background and data is not None:
                    listed = list_plain_tar(data)
                    if listed is not None:
                        members, _none_skipped = _checked_members(listed, name, outside_links, deadline)
                        files = _plain_files(members)
                if files is None:
                    with tarfile.open(fileobj=plain, mode="r:") as tar:
                        members, skipped = _checked_members(tar, name, outside_links, deadline)
                        files = _plain_files(members) if background and data is not None and not skipped else None
                        if files is None:
                            tree = _unpack_into(tar, members, scratch)
        if files is None:
            _move_into_place(tree, target, skipped)
            return None
    assert data is not None  # files are served only from a tar in memory
    root = _single_top_folder(members)
    under_root = {path[len(root) + 1:] if root else path: place for path, place in files.items()}
    listing = [_listed(m) for m in members]
    return Unpacking(data, under_root, root, lambda: _write_in_background(data, listing, target, name, parent))


def _listed(member: tarfile.TarInfo) -> tuple[str, bytes, int, int]:
    return member.name, member.type, member.size, member.offset_data


def _write_in_background(data: bytes, listing: list[tuple[str, bytes, int, int]], target: Path, name: str,
                         parent: Path) -> None:
    """Write the tree of the tar ``data`` as ``tarfile`` lists it, once that listing is the one the
    driver served files from (``listing``: each member's name, type, size and data offset)."""
    with tempfile.TemporaryDirectory(prefix=".extract-", dir=parent) as scratch:
        with _refusals(name), tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            members = tar.getmembers()
            if [_listed(m) for m in members] != listing:
                raise UserInputError(f"archive {name} refused: its members list differently from one reading "
                                     "to the next")
            tree = _unpack_into(tar, members, scratch)
        _move_into_place(tree, target, [])


def _unpack_into(tar: tarfile.TarFile, members: list[tarfile.TarInfo], scratch: str) -> Path:
    tmp = Path(scratch) / "tree"
    tmp.mkdir()
    # The "data" filter also drops device files, setuid bits and anything else a source tree has
    # no business containing.
    linked = any(m.issym() or m.islnk() for m in members)
    tar.extractall(tmp, members=members, filter="data" if linked else data_filter_without_links)
    return tmp


@contextlib.contextmanager
def _refusals(name: str) -> Iterator[None]:
    """A tar that cannot be read or is refused: one line naming it (a full or read-only cache is
    not the archive's fault, and stays the storage error it is)."""
    try:
        yield
    except tarfile.FilterError as err:
        raise UserInputError(f"archive {name} refused: {err}") from None
    except UserInputError:
        raise
    except _BROKEN as err:
        if is_storage_error(err):
            raise
        raise UserInputError(f"{name} is not a readable archive: {_reason(err)}") from None


def _plain_files(members: list[tarfile.TarInfo]) -> dict[str, tuple[int, int]] | None:
    """Where each regular file's bytes sit in the tar, by its normalized path, when the written
    tree will hold exactly those files with exactly those bytes; None when it might not: a link,
    a sparse or special member, two members at one path (the later one would win), or a file
    where another member needs a folder."""
    files: dict[str, tuple[int, int]] = {}
    folders: set[str] = set()
    for member in members:
        path = posixpath.normpath(member.name)
        if path == ".":
            continue
        if member.isdir():
            if path in folders or path in files:
                return None
            folders.add(path)
        elif member.isreg() and not member.issparse() and path not in files and path not in folders:
            files[path] = (member.offset_data, member.size)
        else:
            return None
    clear: set[str] = set()  # folders already known to have no file on their way up
    for path in [*files, *folders]:
        parent = posixpath.dirname(path)
        while parent and parent not in clear:
            if parent in files:
                return None
            clear.add(parent)
            parent = posixpath.dirname(parent)
    return files


def _single_top_folder(members: list[tarfile.TarInfo]) -> str:
    """The tree's root under the target, as the synchronous path finds it (its only entry, when a
    folder): the top folder every member sits in, or ""."""
    tops = {posixpath.normpath(m.name).split("/", 1)[0] for m in members} - {"."}
    if len(tops) != 1:
        return ""
    (top,) = tops
    folder = any(posixpath.normpath(m.name) != top or m.isdir() for m in members if posixpath.normpath(m.name) != ".")
    return top if folder else ""


def extract_zip(archive: Path, target: Path, keep: Callable[[str], bool] | None = None) -> None:
    """Extract ``archive`` into ``target``, which must not exist; ``keep``: only the members whose
    name it accepts (limits then count those members only)."""
    parent = _ensure_parent(target)
    deadline = time.monotonic() + MAX_EXTRACT_SECONDS
    with tempfile.TemporaryDirectory(prefix=".extract-", dir=parent) as scratch:
        tmp = Path(scratch) / "tree"
        try:
            with zipfile.ZipFile(archive) as zf:
                infos = [i for i in zf.infolist() if keep is None or keep(i.filename)]
                if len(infos) > MAX_ARCHIVE_MEMBERS:
                    raise UserInputError(f"archive {archive.name} has too many members: refused")
                if sum(i.file_size for i in infos) > MAX_ARCHIVE_BYTES:
                    raise UserInputError(f"archive {archive.name} unpacks to more than {MAX_ARCHIVE_BYTES} bytes: "
                                         "refused")
                for info in infos:
                    _check_member(info.filename, archive.name)
                    if info.flag_bits & 0x1:
                        raise UserInputError(f"archive {archive.name} has encrypted member {info.filename!r}: refused")
                tmp.mkdir()  # an archive of nothing (or only of links) is an empty tree
                for info in infos:
                    if time.monotonic() > deadline:
                        raise UserInputError(f"archive {archive.name} took over {MAX_EXTRACT_SECONDS:.0f} s to "
                                             "extract: refused")
                    if (info.external_attr >> 16) & 0o170000 == 0o120000:
                        continue  # a symbolic link: never recreated from a zip
                    # ZipExtFile stops at the declared size and checks the CRC, so a member
                    # cannot expand past what the sum above allowed.
                    zf.extract(info, tmp)
        except UserInputError:
            raise
        except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, *_BROKEN) as err:
            if is_storage_error(err):
                raise
            raise UserInputError(f"{archive.name} is not a readable zip archive: {_reason(err)}") from None
        _move_into_place(tmp, target, [])


def data_filter_without_links(member: tarfile.TarInfo, dest_path: str) -> tarfile.TarInfo:
    """``tarfile.data_filter`` for an archive that holds no link, extracted into a fresh directory.

    The data filter resolves every member's path with ``os.path.realpath`` (an ``lstat`` per path
    component: 45,000 for vLLM's sdist, a quarter of its unpacking) to catch a path that a link
    extracted earlier would lead out of the tree. With no link in the archive and a fresh
    directory, there is none on the way, and the names are already checked (no absolute path, no
    ``..``: :func:`_check_member`): the lexical path is the real one. What is left is the filter's
    treatment of modes, file types and owners, done here as it does it (tests compare the two)."""
    if member.issym() or member.islnk() or member.name.startswith(("/", os.sep)) or os.path.isabs(member.name):
        return tarfile.data_filter(member, dest_path)  # not what this fast path is for: the real filter
    attrs: dict[str, Any] = {}
    mode: int | None = member.mode
    if mode is not None:
        mode = mode & 0o755  # no high bits, no group/other write
        if member.isreg():
            if not mode & 0o100:
                mode &= ~0o111  # not executable by its owner: by nobody
            mode |= 0o600
        elif member.isdir():
            mode = None
        else:
            raise tarfile.SpecialFileError(member)
        if mode != member.mode:
            attrs["mode"] = mode
    for owner in ("uid", "gid", "uname", "gname"):
        if getattr(member, owner) is not None:
            attrs[owner] = None
    return member.replace(**attrs, deep=False) if attrs else member


def _decompress_bounded(fileobj, name: str, deadline: float, scratch: str) -> bytes | IO[bytes]:
    """``fileobj`` decompressed within the size and time limits: its bytes when they fit in
    :data:`SPOOL_BYTES`, else a temporary file in ``scratch`` that holds them, at its start.

    The chunks are kept and joined once: a ``SpooledTemporaryFile`` copied each into its buffer,
    and all of it again when read back (vLLM's sdist, 40 MB: 0.09 s where decompressing is 0.06)."""
    head = fileobj.read(8)
    fileobj.seek(0)
    opener = next((cls for magic, cls in _DECOMPRESSORS if head.startswith(magic)), None)
    stream = opener(fileobj=fileobj) if opener is deflate.GzipFile else opener(fileobj) if opener else fileobj
    chunks: list[bytes] = []
    spilled: IO[bytes] | None = None
    total = 0
    try:
        while chunk := stream.read(_CHUNK):
            total += len(chunk)
            if total > MAX_ARCHIVE_BYTES:
                raise UserInputError(f"archive {name} unpacks to more than {MAX_ARCHIVE_BYTES} bytes: refused")
            if time.monotonic() > deadline:
                raise UserInputError(f"archive {name} took over {MAX_EXTRACT_SECONDS:.0f} s to decompress: refused")
            if spilled is None and total > SPOOL_BYTES:
                spilled = tempfile.TemporaryFile(dir=scratch)
                spilled.writelines(chunks)
                chunks.clear()
            if spilled is None:
                chunks.append(chunk)
            else:
                spilled.write(chunk)
    except BaseException:
        if spilled is not None:
            spilled.close()
        raise
    if spilled is None:
        return b"".join(chunks)
    spilled.seek(0)
    return spilled


def _checked_members(listed: Iterable[tarfile.TarInfo], name: str, outside_links: str, deadline: float
                     ) -> tuple[list[tarfile.TarInfo], list[str]]:
    """The members of ``listed`` (a tar, or :func:`list_plain_tar`'s list) to extract, and the
    links skipped; a member that would leave the tree, or too many of them, refuses the archive."""
    members: list[tarfile.TarInfo] = []
    skipped: list[str] = []
    total = 0
    for member in listed:
        if len(members) >= MAX_ARCHIVE_MEMBERS:
            raise UserInputError(f"archive {name} has more than {MAX_ARCHIVE_MEMBERS} members: refused")
        if time.monotonic() > deadline:
            raise UserInputError(f"archive {name} took over {MAX_EXTRACT_SECONDS:.0f} s to list: refused")
        _check_member(member.name, name)
        if (member.issym() or member.islnk()) and _link_leaves(member):
            if outside_links == "skip" and member.issym():
                skipped.append(member.name)
                continue
            raise UserInputError(f"archive {name} has link {member.name!r} -> {member.linkname!r} "
                                 "that leaves the tree: refused")
        total += max(member.size, 0)
        if total > MAX_ARCHIVE_BYTES:
            raise UserInputError(f"archive {name} unpacks to more than {MAX_ARCHIVE_BYTES} bytes: refused")
        members.append(member)
    return members, skipped


# The pax keywords a plain member may carry: the ones that name it or size it (read here) and the
# ones that only set its times and owners (left to tarfile when the tree is written). Any other
# (a link's target, a charset, GNU sparse maps) sends the tar through tarfile's own listing.
_PAX_NAMING = frozenset({"path", "size"})
_PAX_IGNORED = frozenset({"mtime", "atime", "ctime", "uid", "gid", "uname", "gname", "comment"})
_PLAIN_TYPES = (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE)
_MAGIC = (b"ustar\x0000", b"ustar  \0")  # POSIX (ustar, pax) and GNU headers; tarfile reads both alike
BLOCK = tarfile.BLOCKSIZE


def list_plain_tar(data: bytes) -> list[tarfile.TarInfo] | None:
    """The members of an uncompressed POSIX tar whose members are all plain (regular files and
    directories, ustar headers, pax headers that name or size them), with the names, types, sizes
    and data offsets ``tarfile`` gives them; None for any other tar, which ``tarfile`` then lists.

    ``tarfile`` builds each header through a dozen Python-level calls (vLLM's sdist, 3,433 members
    under as many pax headers: 0.11 s of the driver, the serial part of a first run); this reads
    the fields the listing needs from each 512-byte block, 0.03 s. Whoever writes the tree lists it
    with ``tarfile`` again and checks the two agree (:func:`_write_in_background`)."""
    if sys.getfilesystemencoding().lower() not in ("utf-8", "utf8"):
        return None  # tarfile decodes names in the file system's encoding: its listing then
    members: list[tarfile.TarInfo] = []
    end, pos, header = len(data), 0, 0
    pax: dict[str, str] | None = None
    long_name: str | None = None
    while pos + BLOCK <= end:
        block = data[pos:pos + BLOCK]
        if not block.strip(b"\0"):
            break  # the end-of-archive block, as tarfile stops at the first one
        kind = block[156:157]
        if block[257:265] not in _MAGIC or _octal(block[148:156]) != _byte_sum(block) - sum(block[148:156]) + 256:
            return None  # another format, or a damaged header: tarfile's listing says which
        size = _octal(block[124:136])
        start = pos + BLOCK
        if size is None:
            return None
        pos = start + _padded(size)
        if pos > end and kind != tarfile.DIRTYPE:
            return None  # cut short inside the member's blocks: tarfile reports the end of data
        if kind in (tarfile.XHDTYPE, tarfile.GNUTYPE_LONGNAME):
            if pax is not None or long_name is not None:
                return None  # two extended headers for one member: tarfile's listing
            header = start - BLOCK
            if kind == tarfile.XHDTYPE:
                pax = _pax_records(data[start:start + size])
                if pax is None:
                    return None
            else:
                long_name = _text(data[start:pos])  # as tarfile reads it: the whole blocks
            continue
        if kind not in _PLAIN_TYPES:
            return None
        member_name, prefix = _text(block[0:100]), _text(block[345:500])
        if kind == tarfile.AREGTYPE and member_name.endswith("/"):
            kind = tarfile.DIRTYPE  # an old tar's folder, as tarfile reads it
        if kind == tarfile.DIRTYPE:
            member_name = member_name.rstrip("/")
            pos = start  # a folder's size field holds no data
        if prefix:
            member_name = f"{prefix}/{member_name}"
            if kind == tarfile.DIRTYPE:
                member_name = member_name.rstrip("/")  # tarfile strips a folder's name once more after the join
        if long_name is not None:
            # a GNU long name replaces the header's whole name; a folder's loses one slash
            member_name = long_name.removesuffix("/") if kind == tarfile.DIRTYPE else long_name
            long_name = None
        elif pax is not None:
            member_name = pax["path"].rstrip("/") if "path" in pax else member_name
            if "size" in pax:
                if not pax["size"].isdigit():
                    return None
                size = int(pax["size"])
                if kind != tarfile.DIRTYPE:
                    pos = start + _padded(size)
                    if pos > end:
                        return None
            pax = None
        else:
            header = start - BLOCK
        member = tarfile.TarInfo(member_name)
        member.type, member.size, member.offset, member.offset_data = kind, size, header, start
        members.append(member)
    if not members or pax is not None or long_name is not None:
        return None  # nothing listed, or an extended header with no member after it: tarfile's errors
    return members


def _byte_sum(block: bytes) -> int:
    """The sum of a 512-byte header's bytes (its checksum counts them), from Adler-32's first
    half, 1 + the bytes' sum modulo 65,521, over each 256-byte half: at most 65,280 there, so
    exact. ``sum(block)`` makes an int per byte: 0.015 s of vLLM's 6,866 headers, this 0.003."""
    return (zlib.adler32(block[:256]) & 0xFFFF) + (zlib.adler32(block[256:]) & 0xFFFF) - 2


def _padded(size: int) -> int:
    """``size`` bytes rounded up to whole tar blocks."""
    return -(-size // BLOCK) * BLOCK


def _text(field: bytes) -> str:
    """A header's text field as tarfile decodes it (the file system's encoding, UTF-8 here, bytes
    that are not UTF-8 kept as surrogates: a name cut at 100 bytes may end inside a character)."""
    return field.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def _octal(field: bytes) -> int | None:
    digits = field.split(b"\0", 1)[0].strip()
    if not digits:
        return 0
    if not digits.isdigit() or b"8" in digits or b"9" in digits:
        return None  # base-256 (huge sizes) or garbage: tarfile's reading
    return int(digits, 8)


def _pax_records(buf: bytes) -> dict[str, str] | None:
    """The records of a pax extended header (``"%d %s=%s\\n"``), when each is well formed, UTF-8,
    and one of the keywords a plain member may carry."""
    records: dict[str, str] = {}
    pos = 0
    while pos < len(buf) and buf[pos]:
        space = buf.find(b" ", pos)
        if space < 0 or not buf[pos:space].isdigit():
            return None
        length = int(buf[pos:space])
        record = buf[space + 1:pos + length]
        if length <= 0 or pos + length > len(buf) or not record.endswith(b"\n") or b"=" not in record:
            return None
        keyword, _, value = record[:-1].partition(b"=")
        try:
            key, text = keyword.decode("utf-8"), value.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if key not in _PAX_NAMING and key not in _PAX_IGNORED:
            return None
        records[key] = text
        pos += length
    return records


def _link_leaves(member: tarfile.TarInfo) -> bool:
    link = Path(member.name).parent / member.linkname if member.issym() else Path(member.linkname)
    return member.linkname.startswith("/") or ".." in Path(os.path.normpath(link)).parts


def _check_member(name: str, archive: str) -> None:
    if not name.strip("/"):
        raise UserInputError(f"archive {archive} has a member without a name: refused")
    # on POSIX the components between slashes are Path(name).parts ("." and "" aside, which are
    # not ".."): a string split, where pathlib parses each name (vLLM's 3,433: 0.03 s)
    parts = name.split("/") if os.sep == "/" else Path(name).parts
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) or ".." in parts:
        raise UserInputError(f"archive {archive} has member {name!r} that leaves the tree: refused")


def _move_into_place(tmp: Path, target: Path, skipped: list[str]) -> None:
    if skipped:
        write_atomic(skipped_links_file(target), json.dumps(sorted(skipped)))
    try:
        tmp.rename(target)
    except OSError:
        if not target.is_dir():  # not a lost race: a real failure
            raise


def _reason(err: BaseException) -> str:
    return str(err) or type(err).__name__


def _ensure_parent(target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    return target.parent
