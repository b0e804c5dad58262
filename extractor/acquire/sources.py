"""Acquire what the user points at: a git URL, a local directory, a PyPI sdist or an archive.

Every spec becomes a :class:`~extractor.context.SourceTree`: a directory archdiff reads and never
writes. Remote material lands in the cache directory once; git URLs are fetched shallow, one ref at
a time (a mirror that lacks old blobs still serves the ref asked for), and turned into a plain tree
with ``git archive`` so that the tree is extracted by the same safe extractor as any archive.

Nothing from a source is imported, built or executed: an sdist is downloaded, checked against the
index's hash and unpacked, nothing more.
"""

from __future__ import annotations

import configparser
import contextlib
import dataclasses
import functools
import hashlib
import html.parser
import json
import os
import re
import shutil
import sys
import tempfile
import uuid
import urllib.error
import urllib.parse
from collections.abc import Iterable, Iterator
from pathlib import Path

from packaging.version import InvalidVersion, Version

from extractor.acquire.archives import Unpacking, extract_tar, extract_zip, skipped_links
from extractor.context import SourceTree
from extractor.errors import UserInputError
from extractor.acquire.gitdir import work_tree_commit
from extractor.acquire.stamps import TreeStamps, stamp_of
from extractor.support.locks import locked
from extractor.support.safeproc import run_bounded
from extractor.support.storage import cannot_write, default_cache_dir, is_storage_error, write_atomic

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar", ".zip")
GIT_SCHEMES = ("https", "http", "ssh", "git", "file")
NETWORK_TIMEOUT = 60  # seconds per request
GIT_TIMEOUT = 900  # seconds per git command

_LABEL = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)=(.+)$")
_PYPI = re.compile(r"^pypi:([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9][A-Za-z0-9.+!_-]*)$")
_SCP_LIKE = re.compile(r"^[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+:[^/].*")


@dataclasses.dataclass(frozen=True, slots=True)
class SourceSpec:
    """A parsed ``[label=]spec``."""

    text: str  # the spec as the user wrote it, without the label
    kind: str  # "git", "dir", "pypi", "archive"
    location: str  # URL, path or package name
    ref: str = ""  # git ref, or the package version
    label: str = ""


def split_label(raw: str) -> tuple[str, str]:
    """``(label, spec)`` of ``[label=]spec`` (label "" when none is given); the spec is not checked."""
    text = raw.strip()
    if (m := _LABEL.match(text)) and not text.startswith(("pypi:", "-")):
        return m.group(1), m.group(2)
    return "", text


def default_label(spec: str) -> str:
    """The label of a source the user gave none: its paths' prefix in a multi-source system, and
    the name of a system of one source. The repository, package, directory or archive name:
    ``https://github.com/triton-inference-server/core@r25.08`` -> ``core``, ``pypi:vllm==0.10.2``
    -> ``vllm``, ``./checkouts/server`` -> ``server``, ``vllm-0.10.2.tar.gz`` -> ``vllm-0.10.2``.

    ``spec`` is without its label. Only the text is read, so that a spec that names no release
    yet (``pypi:vllm`` and a git URL without ``@ref``, as ``archdiff releases`` takes them) and a
    system file's sources, read before anything is acquired, get the label the pipeline gives
    the same spec; a local path is resolved against the working directory, as :func:`parse_spec`
    resolves it."""
    text = spec.strip()
    if text.startswith("pypi:"):
        return re.split(r"[=<>!~]", text[5:], maxsplit=1)[0] or "pypi"
    if text.lower().startswith("git+") and "://" in text:
        text = text[4:]
    if "://" in text:
        location, kind = _without_ref(text, text.index("://") + 3), "git"
    elif _SCP_LIKE.match(text):
        location, kind = _without_ref(text, text.index(":")), "git"
    else:
        location, kind = str(Path(text).expanduser().resolve()), "dir"
    if location.lower().split("?", 1)[0].endswith(ARCHIVE_SUFFIXES):
        kind = "archive"
    base = location.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    for suffix in (".git", ".tar.gz", ".tgz", ".zip", ".tar"):
        base = base.removesuffix(suffix)
    return base or kind


def parse_spec(raw: str) -> SourceSpec:
    """Parse ``[label=]spec``; raise :class:`UserInputError` for a spec of no known form."""
    label, text = split_label(raw)
    if not text:
        raise UserInputError(f"empty source spec {raw!r}")
    if text.startswith("-"):
        raise UserInputError(f"source spec {text!r} starts with '-': refused (it would read as an option)")
    if text.startswith("pypi:"):
        m = _PYPI.match(text)
        if not m:
            raise UserInputError(f"PyPI spec {text!r} must read pypi:NAME==VERSION (e.g. pypi:vllm==0.10.2)")
        return SourceSpec(text, "pypi", m.group(1), m.group(2), label)
    lowered = text.lower()
    if "::" in text.split("/", 1)[0] or lowered.startswith(("ext:", "fd:")):
        raise UserInputError(f"git transport in {text!r} is not allowed: use https://, ssh://, git:// or file://")
    scheme = urllib.parse.urlsplit(text).scheme.lower() if "://" in text else ""
    if scheme and scheme.startswith("git+"):
        text, scheme = text[4:], scheme[4:]
    if lowered.split("?", 1)[0].endswith(ARCHIVE_SUFFIXES) and "@" not in text.rsplit("/", 1)[-1]:
        if scheme in ("http", "https"):
            return SourceSpec(text, "archive", text, "", label)
        if not scheme:
            path = Path(text).expanduser()
            if not path.is_file():
                raise UserInputError(f"archive {text!r} does not exist")
            return SourceSpec(text, "archive", str(path.resolve()), "", label)
    if scheme:
        if scheme not in GIT_SCHEMES:
            raise UserInputError(f"URL scheme {scheme!r} in {text!r} is not supported: use https, ssh, git or file")
        url, ref = _split_ref(text, after=text.index("://") + 3)
        _check_git_url(url)
        return SourceSpec(text, "git", url, ref, label)
    if _SCP_LIKE.match(text):
        url, ref = _split_ref(text, after=text.index(":"))
        _check_git_url(url)
        return SourceSpec(text, "git", url, ref, label)
    path = Path(text).expanduser()
    if path.is_dir():
        return SourceSpec(text, "dir", str(path.resolve()), "", label)
    if path.exists():
        raise UserInputError(f"{text!r} is a file but not an archive ({', '.join(ARCHIVE_SUFFIXES)})")
    raise UserInputError(
        f"{text!r} is not a git URL, an existing directory, an archive or pypi:NAME==VERSION")


def _ref_at(text: str, after: int) -> int:
    """Where the ``@`` of ``url@ref`` is (-1 if none): after the host (``after`` is where the host
    starts), so that ``ssh://git@host/repo`` has no ref."""
    slash = text.find("/", after)
    return text.rfind("@", slash if slash >= 0 else after)


def _without_ref(text: str, after: int) -> str:
    at = _ref_at(text, after)
    return text if at < 0 else text[:at]


def _split_ref(text: str, after: int) -> tuple[str, str]:
    """Split ``url@ref`` where the ``@`` comes after the host (``after`` is where the host starts)."""
    at = _ref_at(text, after)
    if at < 0:
        return text, ""
    ref = text[at + 1:]
    if not ref or ref.startswith("-") or not re.fullmatch(r"[A-Za-z0-9._/+-]+", ref):
        raise UserInputError(f"git ref {ref!r} in {text!r} is not a valid ref name")
    return text[:at], ref


def _check_git_url(url: str) -> None:
    if url.startswith("-") or "ext::" in url or any(c in url for c in "\n\r\0 "):
        raise UserInputError(f"git URL {url!r} refused")


def acquire(spec: SourceSpec, cache_dir: Path) -> SourceTree:
    """Make ``spec`` available as a directory (in the cache unless it is a local directory).

    A cache that cannot take what must be written (full, read-only) is a :class:`StorageError`
    naming it; a tree already in a read-only cache is still used."""
    tree, _unpacking = _acquire(spec, cache_dir, background=False)
    return tree


def acquire_unpacking(spec: SourceSpec, cache_dir: Path) -> tuple[SourceTree, Unpacking | None]:
    """:func:`acquire`, except that an archive unpacked for the first time may still be being
    written when this returns: then its :class:`Unpacking` serves the files from memory, and
    nothing may read ``tree.root`` before :func:`wait_unpacked` returned."""
    return _acquire(spec, cache_dir, background=True)


def wait_unpacked(unpacking: Unpacking, cache_dir: Path) -> None:
    """Wait for a tree being written; the errors :func:`acquire` would have raised."""
    try:
        unpacking.wait()
    except OSError as err:
        if is_storage_error(err):
            raise cannot_write(cache_dir, err) from None
        raise


def _acquire(spec: SourceSpec, cache_dir: Path, background: bool) -> tuple[SourceTree, Unpacking | None]:
    if spec.kind == "dir":
        # Read from the .git files, never by running git inside a tree the user does not trust.
        return SourceTree(spec.label, spec.text, "dir", Path(spec.location), "",
                          work_tree_commit(Path(spec.location))), None
    try:
        return _acquire_cached(spec, cache_dir, background)
    except OSError as err:
        if is_storage_error(err):
            raise cannot_write(cache_dir, err) from None
        raise


def _acquire_cached(spec: SourceSpec, cache_dir: Path, background: bool) -> tuple[SourceTree, Unpacking | None]:
    if spec.kind == "pypi":
        archive = download_sdist(spec.location, spec.ref, cache_dir / "sdists", stamps_in=cache_dir)
        root, unpacking = _extract_cached(archive, cache_dir, background)
        return SourceTree(spec.label, spec.text, "pypi", root, spec.ref, ""), unpacking
    if spec.kind == "archive":
        archive = Path(spec.location)
        if spec.location.startswith(("http://", "https://")):
            archive = _download(spec.location, cache_dir / "archives")
        root, unpacking = _extract_cached(archive, cache_dir, background)
        return SourceTree(spec.label, spec.text, "archive", root, "", ""), unpacking
    if spec.kind == "git":
        root, commit, skipped = _acquire_git(spec.location, spec.ref, cache_dir / "git")
        return SourceTree(spec.label, spec.text, "git", root, spec.ref, commit, skipped_links=skipped), None
    raise AssertionError(spec.kind)


# --- git ------------------------------------------------------------------------------------------

# Options for every git command archdiff runs. They disable what could run a command or reach out:
# hooks, fsmonitor, the ext:: and fd:: transports, submodule recursion. The user's own git
# configuration still applies to fetches (``url.<base>.insteadOf`` is how mirrors are used), but
# nothing of the fetched repository's configuration ever does: fetched data goes into archdiff's
# own bare repository, whose config archdiff wrote.
_GIT_SAFETY = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "protocol.ext.allow=never",
               "-c", "protocol.fd.allow=never", "-c", "fetch.recurseSubmodules=false",
               "-c", "submodule.recurse=false", "-c", "core.sshCommand=ssh")
_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "SSH_ASKPASS": "true", "GCM_INTERACTIVE": "never",
            "GIT_NO_REPLACE_OBJECTS": "1"}
# Commands that only read archdiff's own repository need no user configuration at all.
_GIT_ISOLATED_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ATTR_NOSYSTEM": "1"}


def _git(args: list[str], *, isolated: bool = False, output: Path | None = None, stdin: bytes | None = None) -> str:
    """Run git with prompts disabled and the safety options above; ``_GitFailure`` on failure.

    ``output``: write stdout to that file (large outputs such as ``git archive``)."""
    env = {**os.environ, **_GIT_ENV, **(_GIT_ISOLATED_ENV if isolated else {})}
    try:
        done = run_bounded(["git", *_GIT_SAFETY, *args], env=env, timeout=GIT_TIMEOUT, stdout_to=output, stdin=stdin)
    except OSError as err:
        raise _GitFailure(f"cannot run git: {err.strerror or err}") from err
    if done.timed_out:
        raise _GitFailure(f"git timed out after {GIT_TIMEOUT} s")
    if done.returncode:
        raise _GitFailure(done.stderr.decode("utf-8", errors="replace").strip() or f"git exited {done.returncode}")
    return done.stdout.decode("utf-8", errors="replace")


class _GitFailure(Exception):
    pass


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().removeprefix("stderr:").strip().strip("'").strip()
        if line and not line.startswith("cmdline:"):
            return line
    return text.strip()


def _acquire_git(url: str, ref: str, cache: Path) -> tuple[Path, str, tuple[str, ...]]:
    """Fetch ``ref`` of ``url`` into the cache; (tree root, resolved commit, skipped link members).

    One lock per repository serialises fetches of the same URL from concurrent runs; each run
    fetches into a ref of its own and resolves the commit from that ref, never from the shared
    ``FETCH_HEAD``, so a run records the commit it actually extracted.
    """
    key = hashlib.sha256(url.encode()).hexdigest()[:16]
    home = cache / key
    repo = home / "repo.git"
    with locked(home / ".lock"):
        _ensure_bare_repo(repo)
        commit = ref if re.fullmatch(r"[0-9a-f]{40}", ref or "") else ""
        if not commit or not (home / "trees" / commit).is_dir():
            commit = _fetch_ref(repo, url, ref)
        tree = home / "trees" / commit
        if not tree.is_dir() and not _git(["--git-dir", str(repo), "ls-tree", "--name-only", commit], isolated=True):
            # An empty tree: git archive writes only a pax header, which tar readers reject.
            _ensure_parent(tree)
            tree.mkdir(exist_ok=True)
        if not tree.is_dir():
            with tempfile.TemporaryDirectory(prefix=".archive-", dir=_ensure_parent(tree)) as tmp:
                tar_path = Path(tmp) / "tree.tar"
                try:
                    _git(["--git-dir", str(repo), "archive", "--format=tar", commit], isolated=True,
                         output=tar_path)
                except _GitFailure as err:
                    raise UserInputError(f"cannot read commit {commit} of {url}: {_first_line(str(err))}") from None
                with tar_path.open("rb") as fh:
                    extract_tar(fh, tree, name=f"{url}@{commit}", outside_links="skip")
    return tree, commit, skipped_links(tree)


def _ensure_bare_repo(repo: Path) -> None:
    """Make ``repo`` an empty bare repository unless it is one (made aside and renamed in whole)."""
    if (repo / "HEAD").exists():
        return
    fresh = Path(tempfile.mkdtemp(prefix=".init-", dir=_ensure_parent(repo)))
    try:
        _git(["init", "--bare", "-q", str(fresh)], isolated=True)
        fresh.rename(repo)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)


def _fetch_ref(repo: Path, url: str, ref: str) -> str:
    want = ref or "HEAD"
    run_ref = f"refs/archdiff/run-{os.getpid()}-{uuid.uuid4().hex}"
    try:
        _git(["--git-dir", str(repo), "fetch", "-q", "--depth", "1", "--no-tags", "--no-write-fetch-head",
              "--", url, f"+{want}:{run_ref}"])
    except _GitFailure as err:
        message = _first_line(str(err))
        if "couldn't find remote ref" in message or "not our ref" in message or "no such remote ref" in message \
                or "unadvertised object" in message or "invalid refspec" in message:
            raise UserInputError(f"ref {want!r} does not exist in {url}") from None
        if re.fullmatch(r"[0-9a-f]{7,40}", want):
            # Servers that refuse fetching a commit by id: fetch every branch once, then look it up.
            try:
                _git(["--git-dir", str(repo), "fetch", "-q", "--no-tags", "--no-write-fetch-head", "--", url,
                      "+refs/heads/*:refs/remotes/origin/*"])
                return _git(["--git-dir", str(repo), "rev-parse", "--verify", "--end-of-options",
                             f"{want}^{{commit}}"], isolated=True).strip()
            except _GitFailure:
                raise UserInputError(f"ref {want!r} does not exist in {url}") from None
        raise UserInputError(f"cannot fetch {url}: {message}") from None
    try:
        return _git(["--git-dir", str(repo), "rev-parse", "--verify", "--end-of-options", f"{run_ref}^{{commit}}"],
                    isolated=True).strip()
    except _GitFailure:
        raise UserInputError(f"ref {want!r} of {url} does not name a commit") from None
    finally:
        try:
            _git(["--git-dir", str(repo), "update-ref", "-d", run_ref], isolated=True)
        except _GitFailure:
            pass  # a leftover ref only keeps a commit alive in the cache


def list_git_tags(url: str) -> list[str]:
    """The tag names of the repository at ``url`` (``git ls-remote --tags``), sorted.

    Run with the safety options of every fetch and outside any analysed tree, so the user's own
    ``url.<base>.insteadOf`` rewriting applies and nothing of the remote's configuration does."""
    _check_git_url(url)
    try:
        listing = _git(["ls-remote", "--tags", "--refs", "--", url])
    except _GitFailure as err:
        raise UserInputError(f"cannot list the tags of {url}: {_first_line(str(err))}") from None
    tags = set()
    for line in listing.splitlines():
        _sha, _, ref = line.partition("\t")
        if ref.startswith("refs/tags/"):
            tags.add(ref.removeprefix("refs/tags/"))
    return sorted(tags)


def tags_reachable_from_head(url: str, cache_dir: Path) -> list[str]:
    """The tags of ``url`` whose commit its ``HEAD`` contains (a tag made on another branch is left
    out), sorted: ``HEAD`` and the tags are fetched with their history into a bare repository of
    archdiff's cache (one per URL, beside the one ``_acquire_git`` fills shallowly), never by
    running git in the repository's own tree beyond what a fetch from it runs."""
    _check_git_url(url)
    home = cache_dir / "git" / hashlib.sha256(url.encode()).hexdigest()[:16]
    repo = home / "history.git"
    run_ref = f"refs/archdiff/reach-{os.getpid()}-{uuid.uuid4().hex}"
    with locked(home / ".lock"):
        _ensure_bare_repo(repo)
        try:
            _git(["--git-dir", str(repo), "fetch", "-q", "--no-tags", "--no-write-fetch-head", "--", url,
                  f"+HEAD:{run_ref}/HEAD", f"+refs/tags/*:{run_ref}/tags/*"])
            listing = _git(["--git-dir", str(repo), "for-each-ref", "--format=%(refname)",
                            f"--merged={run_ref}/HEAD", f"{run_ref}/tags/"], isolated=True)
            made = _git(["--git-dir", str(repo), "for-each-ref", "--format=delete %(refname)", f"{run_ref}/"],
                        isolated=True)
        except _GitFailure as err:
            raise UserInputError(f"cannot read the history of {url}: {_first_line(str(err))}") from None
        try:
            _git(["--git-dir", str(repo), "update-ref", "--stdin"], isolated=True, stdin=made.encode())
        except _GitFailure:
            pass  # a leftover ref only keeps commits alive in the cache
    return sorted(line.removeprefix(f"{run_ref}/tags/") for line in listing.splitlines() if line)


# --- package index --------------------------------------------------------------------------------

def canonical_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pip_index_urls() -> list[str]:
    """The index URLs pip would use here: ``PIP_INDEX_URL``/``PIP_EXTRA_INDEX_URL`` or pip's config
    files (global, user, site, ``PIP_CONFIG_FILE``), main index first."""
    index = os.environ.get("PIP_INDEX_URL", "")
    extra = os.environ.get("PIP_EXTRA_INDEX_URL", "").split()
    if not index or not extra:
        cfg = configparser.RawConfigParser()
        files = [Path("/etc/pip.conf"), *[Path(d) / "pip" / "pip.conf" for d in
                 os.environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(":") if d],
                 Path.home() / ".pip" / "pip.conf",
                 Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config")) / "pip" / "pip.conf",
                 Path(sys.prefix) / "pip.conf"]
        if env_file := os.environ.get("PIP_CONFIG_FILE"):
            files.append(Path(env_file))
        cfg.read([str(f) for f in files if f.is_file()])
        for section in ("global", "download"):
            if cfg.has_option(section, "index-url") and not os.environ.get("PIP_INDEX_URL"):
                index = cfg.get(section, "index-url").strip()
            if cfg.has_option(section, "extra-index-url") and not os.environ.get("PIP_EXTRA_INDEX_URL"):
                extra = cfg.get(section, "extra-index-url").split()
    return [index or "https://pypi.org/simple", *extra]


class _Anchors(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href") or ""

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self.links.append((data.strip(), self._href))
            self._href = None


def _open(url: str, accept: str = "*/*") -> bytes:
    import urllib.request  # HTTP, TLS and e-mail parsing: 15 ms of imports a run from a checkout never needs

    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": "archdiff"})
    with urllib.request.urlopen(request, timeout=NETWORK_TIMEOUT) as response:  # noqa: S310 (http/file only)
        return response.read()


def _index_files(index: str, name: str) -> list[tuple[str, str, str]]:
    """(filename, url, sha256) of every file the simple index lists for ``name`` (PEP 691, then 503).

    A link is kept only when its scheme is the index's own (``https`` links may also come from an
    ``http`` index): a remote index that links a distribution to ``file:///etc/...`` must not make
    archdiff read a local file into its cache. ``file://`` links are followed only from a local
    ``file://`` index, which the user configured."""
    page = index.rstrip("/") + "/" + canonical_name(name) + "/"
    if page.startswith("file:"):
        page += "index.html"  # a local index is a folder tree, read the way pip reads it
    body = _open(page, "application/vnd.pypi.simple.v1+json, text/html;q=0.1")
    try:
        data = json.loads(body)
        found = [(f["filename"], urllib.parse.urljoin(page, f["url"]), f.get("hashes", {}).get("sha256", ""))
                 for f in data.get("files", [])]
    except (ValueError, AttributeError, KeyError, TypeError):
        parser = _Anchors()
        parser.feed(body.decode("utf-8", errors="replace"))
        found = []
        for text, href in parser.links:
            url, _, fragment = urllib.parse.urljoin(page, href).partition("#")
            sha = fragment.removeprefix("sha256=") if fragment.startswith("sha256=") else ""
            found.append((text or url.rsplit("/", 1)[-1], url, sha))
    allowed = _link_schemes(page)
    return [f for f in found if isinstance(f[0], str) and urllib.parse.urlsplit(f[1]).scheme.lower() in allowed]


def _link_schemes(page: str) -> frozenset[str]:
    scheme = urllib.parse.urlsplit(page).scheme.lower()
    return frozenset({"http", "https"}) if scheme == "http" else frozenset({scheme})


def index_listings(name: str) -> Iterator[tuple[str, list[tuple[str, str, str]]]]:
    """(index, its files of ``name``) for each configured index that answers, in the user's order;
    a UserInputError once every index has failed to answer."""
    indexes, problems = pip_index_urls(), []
    for index in indexes:
        try:
            files = _index_files(index, name)
        except (urllib.error.URLError, OSError, ValueError) as err:
            problems.append(f"{index}: {getattr(err, 'reason', err)}")
            continue
        yield index, files
    if problems and len(problems) == len(indexes):
        raise UserInputError(f"package index unreachable: {problems[0]}")


def list_sdist_versions(name: str) -> list[str]:
    """The versions of ``name`` that have an sdist on the configured indexes (the same indexes and
    link rules as :func:`download_sdist`), as the file names spell them, sorted as text."""
    return sorted({version for _index, _filename, version, _url, _sha in _sdists_on_indexes(name)})


def _sdists_on_indexes(name: str) -> Iterator[tuple[str, str, str, str, str]]:
    """(index, file name, version, url, sha256) of every sdist of ``name`` on the configured
    indexes, index by index."""
    wanted = canonical_name(name)
    for index, files in index_listings(name):
        for filename, url, sha in sorted(files):
            dist, version = _sdist_name_version(filename)
            if dist is not None and canonical_name(dist) == wanted:
                yield index, filename, version, url, sha


def _sdist_name_version(filename: str) -> tuple[str | None, str]:
    """(distribution, version) of an sdist file name, or (None, "") for anything else."""
    stem = next((filename[: -len(s)] for s in (".tar.gz", ".zip") if filename.endswith(s)), None)
    if stem is None or "-" not in stem:
        return None, ""
    dist, _, version = stem.rpartition("-")
    return dist, version


def download_sdist(name: str, version: str, dest: Path, stamps_in: Path | None = None) -> Path:
    """Download the sdist of ``name==version`` from the configured indexes into ``dest`` (once);
    ``stamps_in``: a cache directory that remembers its hash (:func:`_sha256`).

    A file that matched the sha256 its index listed is used again without asking the index, as
    long as it still matches that hash (noted beside it): a release's files never change on the
    package index, so a warm run need not wait for the network (10-50 ms), and works offline."""
    dest.mkdir(parents=True, exist_ok=True)
    checked = _checked_download(name, version, dest, stamps_in)
    if checked is not None:
        return checked
    listed: set[str] = set()
    for index, filename, found, url, sha in _sdists_on_indexes(name):
        listed.add(found)
        if found != version:
            continue
        target = dest / filename
        if not (target.is_file() and (not sha or _sha256(target, stamps_in) == sha)):
            data = _fetch(url)
            if sha and hashlib.sha256(data).hexdigest() != sha:
                raise UserInputError(f"{filename} from {index} does not match the index's sha256: refused")
            write_atomic(target, data)
        if sha:
            write_atomic(target.with_name(target.name + _CHECKED), sha)
        return target
    raise _no_sdist(name, version, listed)


_CHECKED = ".index-sha256"  # beside a downloaded sdist: the hash its index listed, which it matched


def _checked_download(name: str, version: str, dest: Path, stamps_in: Path | None) -> Path | None:
    """The sdist of ``name==version`` in ``dest`` that still has the hash its index listed, if any."""
    wanted = canonical_name(name)
    for note in sorted(dest.glob(f"*{_CHECKED}")):
        archive = note.with_name(note.name.removesuffix(_CHECKED))
        dist, found = _sdist_name_version(archive.name)
        if dist is None or canonical_name(dist) != wanted or found != version or not archive.is_file():
            continue
        try:
            if _sha256(archive, stamps_in) == note.read_text(encoding="ascii").strip():
                return archive
        except (OSError, ValueError):
            continue
    return None


def check_available(spec: SourceSpec) -> None:
    """What can be known of ``spec`` before fetching it: that the index has its package version
    (a command with two sides checks both before extracting either)."""
    if spec.kind == "pypi":
        versions = list_sdist_versions(spec.location)
        if spec.ref not in versions:
            raise _no_sdist(spec.location, spec.ref, versions)


def _no_sdist(name: str, version: str, listed: Iterable[str]) -> UserInputError:
    near = nearest_versions(version, listed)
    label = "nearest" if _parses(version) else "newest"
    hint = f" ({label}: {', '.join(near)})" if near else " (no version of it has an sdist there)"
    return UserInputError(f"no sdist of {name}=={version} on {', '.join(pip_index_urls())}{hint}")


def nearest_versions(wanted: str, versions: Iterable[str], around: int = 2) -> list[str]:
    """The versions next to ``wanted`` in PEP 440 order (``around`` below it, ``around`` above), for
    an error to suggest; versions that do not parse are left out."""
    parsed = {}
    for v in versions:
        with contextlib.suppress(InvalidVersion):
            parsed[v] = Version(v)
    ordered = sorted(parsed, key=parsed.__getitem__)
    if not _parses(wanted):
        return ordered[-around:]  # nothing to place it by: the newest
    key = Version(wanted)
    below = [v for v in ordered if parsed[v] < key][-around:]
    above = [v for v in ordered if parsed[v] > key][:around]
    return below + above


def _parses(version: str) -> bool:
    try:
        Version(version)
    except InvalidVersion:
        return False
    return True


def _download(url: str, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    filename = urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1] or "archive"
    target = dest / (hashlib.sha256(url.encode()).hexdigest()[:12] + "-" + filename)
    if not target.is_file():
        write_atomic(target, _fetch(url))
    return target


def _fetch(url: str) -> bytes:
    try:
        return _open(url)
    except (urllib.error.URLError, OSError) as err:
        raise UserInputError(f"cannot download {url}: {getattr(err, 'reason', err)}") from None


def _sha256(path: Path, stamps_in: Path | None = None) -> str:
    """The file's sha256, hashed once per process for the same file (an sdist is checked against
    the index's hash and then names its tree: one hash, not two, 30 ms each for vLLM's), and with
    ``stamps_in`` (a cache directory) remembered by the file's stamp from one run to the next
    (extractor.acquire.stamps: a warm run then hashes nothing)."""
    st = path.stat()
    stamps = TreeStamps.load(stamps_in, path) if stamps_in is not None else None
    known = stamps.digest(path.name, stamp_of(st)) if stamps is not None else None
    if known is not None:
        return known
    digest = _sha256_of(str(path), st.st_ino, st.st_size, st.st_mtime_ns)
    if stamps is not None:
        stamps.record(path.name, stamp_of(st), digest)
        stamps.save()
    return digest


@functools.lru_cache(maxsize=64)
def _sha256_of(path: str, _ino: int, _size: int, _mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# --- archives -------------------------------------------------------------------------------------

def _extract_cached(archive: Path, cache_dir: Path, background: bool = False) -> tuple[Path, Unpacking | None]:
    """Extract ``archive`` once (keyed by its hash) under ``cache_dir/trees``; the tree root (its
    single top folder), and the :class:`Unpacking` still writing it (``background``, a tar that
    allows it: see extract_tar)."""
    target = cache_dir / "trees" / _sha256(archive, cache_dir)[:20]
    if not target.is_dir():
        if archive.name.lower().endswith(".zip"):
            extract_zip(archive, target)
        else:
            try:
                fh = archive.open("rb")
            except OSError as err:
                raise UserInputError(f"{archive.name} is not a readable archive: {err.strerror or err}") from None
            with fh:
                unpacking = extract_tar(fh, target, name=archive.name, background=background)
            if unpacking is not None:
                return target / unpacking.root if unpacking.root else target, unpacking
    entries = [p for p in target.iterdir()]
    return (entries[0] if len(entries) == 1 and entries[0].is_dir() else target), None


def _ensure_parent(target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    return target.parent
