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
import dataclasses
import hashlib
import html.parser
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

from extractor.context import SourceTree
from extractor.errors import UserInputError

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar", ".zip")
GIT_SCHEMES = ("https", "http", "ssh", "git", "file")
MAX_ARCHIVE_BYTES = 4 * 1024**3  # uncompressed, whole archive
MAX_ARCHIVE_MEMBERS = 200_000
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


def default_cache_dir() -> Path:
    if env := os.environ.get("ARCHDIFF_CACHE"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "archdiff"


def parse_spec(raw: str) -> SourceSpec:
    """Parse ``[label=]spec``; raise :class:`UserInputError` for a spec of no known form."""
    text = raw.strip()
    label = ""
    if (m := _LABEL.match(text)) and not text.startswith(("pypi:", "-")):
        label, text = m.group(1), m.group(2)
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


def _split_ref(text: str, after: int) -> tuple[str, str]:
    """Split ``url@ref`` where the ``@`` comes after the host (``after`` is where the host starts)."""
    slash = text.find("/", after)
    tail_from = slash if slash >= 0 else after
    at = text.rfind("@", tail_from)
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
    """Make ``spec`` available as a directory (in the cache unless it is a local directory)."""
    if spec.kind == "dir":
        return SourceTree(spec.label, spec.text, "dir", Path(spec.location), "", _work_tree_commit(Path(spec.location)))
    if spec.kind == "pypi":
        archive = download_sdist(spec.location, spec.ref, cache_dir / "sdists")
        root = _extract_cached(archive, cache_dir / "trees")
        return SourceTree(spec.label, spec.text, "pypi", root, spec.ref, "")
    if spec.kind == "archive":
        archive = Path(spec.location)
        if spec.location.startswith(("http://", "https://")):
            archive = _download(spec.location, cache_dir / "archives")
        return SourceTree(spec.label, spec.text, "archive", _extract_cached(archive, cache_dir / "trees"), "", "")
    if spec.kind == "git":
        root, commit = _acquire_git(spec.location, spec.ref, cache_dir / "git")
        return SourceTree(spec.label, spec.text, "git", root, spec.ref, commit)
    raise AssertionError(spec.kind)


# --- git ------------------------------------------------------------------------------------------

def _git(args: list[str], cwd: Path | None = None) -> str:
    """Run git with prompts disabled; user config (``url.<base>.insteadOf``) still applies."""
    import git  # GitPython: only for locating and running the git binary consistently

    env = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "GCM_INTERACTIVE": "never"}
    try:
        cmd = git.Git(str(cwd) if cwd else None)
        cmd.update_environment(**env)
        return cmd.execute(["git", *args], kill_after_timeout=GIT_TIMEOUT, stdout_as_string=True)
    except git.GitCommandError as err:
        raise _GitFailure(str(err.stderr or err).strip()) from err


class _GitFailure(Exception):
    pass


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().removeprefix("stderr:").strip().strip("'").strip()
        if line and not line.startswith("cmdline:"):
            return line
    return text.strip()


def _acquire_git(url: str, ref: str, cache: Path) -> tuple[Path, str]:
    key = hashlib.sha256(url.encode()).hexdigest()[:16]
    repo = cache / key / "repo.git"
    if not (repo / "HEAD").exists():
        repo.mkdir(parents=True, exist_ok=True)
        _git(["init", "--bare", "-q", str(repo)])
    commit = ref if re.fullmatch(r"[0-9a-f]{40}", ref or "") else ""
    if not commit or not (cache / key / "trees" / commit).is_dir():
        commit = _fetch_ref(repo, url, ref)
    tree = cache / key / "trees" / commit
    if not tree.is_dir():
        _safe_extract_tar(io.BytesIO(_git_archive(repo, commit)), tree, name=f"{url}@{commit}")
    return tree, commit


def _fetch_ref(repo: Path, url: str, ref: str) -> str:
    want = ref or "HEAD"
    try:
        _git(["--git-dir", str(repo), "fetch", "-q", "--depth", "1", "--no-tags", url, want])
    except _GitFailure as err:
        message = _first_line(str(err))
        if "couldn't find remote ref" in message or "not our ref" in message or "no such remote ref" in message \
                or "unadvertised object" in message:
            raise UserInputError(f"ref {want!r} does not exist in {url}") from None
        if re.fullmatch(r"[0-9a-f]{7,40}", want):
            # Servers that refuse fetching a commit by id: fetch everything once, then look it up.
            try:
                _git(["--git-dir", str(repo), "fetch", "-q", "--no-tags", url, "+refs/heads/*:refs/remotes/origin/*"])
                return _git(["--git-dir", str(repo), "rev-parse", "--verify", f"{want}^{{commit}}"]).strip()
            except _GitFailure:
                raise UserInputError(f"ref {want!r} does not exist in {url}") from None
        raise UserInputError(f"cannot fetch {url}: {message}") from None
    return _git(["--git-dir", str(repo), "rev-parse", "FETCH_HEAD^{commit}"]).strip()


def _git_archive(repo: Path, commit: str) -> bytes:
    try:
        proc = subprocess.run(["git", "--git-dir", str(repo), "archive", "--format=tar", commit],
                              capture_output=True, timeout=GIT_TIMEOUT, check=False)
    except subprocess.TimeoutExpired as err:
        raise UserInputError(f"git archive of {commit} timed out") from err
    if proc.returncode:
        raise UserInputError(f"cannot read commit {commit}: {_first_line(proc.stderr.decode(errors='replace'))}")
    return proc.stdout


def _work_tree_commit(path: Path) -> str:
    try:
        import git

        repo = git.Repo(path, search_parent_directories=True)
        return repo.head.commit.hexsha
    except Exception:  # not a work tree, or an empty one: no commit to record
        return ""


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
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": "archdiff"})
    with urllib.request.urlopen(request, timeout=NETWORK_TIMEOUT) as response:  # noqa: S310 (http/file only)
        return response.read()


def _index_files(index: str, name: str) -> list[tuple[str, str, str]]:
    """(filename, url, sha256) of every file the simple index lists for ``name`` (PEP 691, then 503)."""
    page = index.rstrip("/") + "/" + canonical_name(name) + "/"
    if page.startswith("file:"):
        page += "index.html"  # a local index is a folder tree, read the way pip reads it
    body = _open(page, "application/vnd.pypi.simple.v1+json, text/html;q=0.1")
    try:
        data = json.loads(body)
        return [(f["filename"], urllib.parse.urljoin(page, f["url"]), f.get("hashes", {}).get("sha256", ""))
                for f in data.get("files", [])]
    except (ValueError, AttributeError, KeyError):
        parser = _Anchors()
        parser.feed(body.decode("utf-8", errors="replace"))
        files = []
        for text, href in parser.links:
            url, _, fragment = urllib.parse.urljoin(page, href).partition("#")
            sha = fragment.removeprefix("sha256=") if fragment.startswith("sha256=") else ""
            files.append((text or url.rsplit("/", 1)[-1], url, sha))
        return files


def download_sdist(name: str, version: str, dest: Path) -> Path:
    """Download the sdist of ``name==version`` from the configured indexes into ``dest`` (once)."""
    dest.mkdir(parents=True, exist_ok=True)
    wanted = (canonical_name(name), version)
    problems = []
    for index in pip_index_urls():
        try:
            files = _index_files(index, name)
        except (urllib.error.URLError, OSError, ValueError) as err:
            problems.append(f"{index}: {getattr(err, 'reason', err)}")
            continue
        for filename, url, sha in sorted(files):
            stem = next((filename[: -len(s)] for s in (".tar.gz", ".zip") if filename.endswith(s)), None)
            if stem is None or "-" not in stem:
                continue
            dist, _, ver = stem.rpartition("-")
            if (canonical_name(dist), ver) != wanted:
                continue
            target = dest / filename
            if target.is_file() and (not sha or _sha256(target) == sha):
                return target
            try:
                data = _open(url)
            except (urllib.error.URLError, OSError) as err:
                raise UserInputError(f"cannot download {url}: {getattr(err, 'reason', err)}") from None
            if sha and hashlib.sha256(data).hexdigest() != sha:
                raise UserInputError(f"{filename} from {index} does not match the index's sha256: refused")
            _write_atomic(target, data)
            return target
    if problems and len(problems) == len(pip_index_urls()):
        raise UserInputError(f"package index unreachable: {problems[0]}")
    raise UserInputError(f"no sdist of {name}=={version} on {', '.join(pip_index_urls())}")


def _download(url: str, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    filename = urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1] or "archive"
    target = dest / (hashlib.sha256(url.encode()).hexdigest()[:12] + "-" + filename)
    if not target.is_file():
        try:
            _write_atomic(target, _open(url))
        except (urllib.error.URLError, OSError) as err:
            raise UserInputError(f"cannot download {url}: {getattr(err, 'reason', err)}") from None
    return target


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _write_atomic(target: Path, data: bytes) -> None:
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    tmp.write_bytes(data)
    tmp.replace(target)


# --- archives -------------------------------------------------------------------------------------

def _extract_cached(archive: Path, trees: Path) -> Path:
    """Extract ``archive`` once (keyed by its hash); return the tree root (its single top folder)."""
    target = trees / _sha256(archive)[:20]
    if not target.is_dir():
        if archive.name.lower().endswith(".zip"):
            _safe_extract_zip(archive, target)
        else:
            try:
                with archive.open("rb") as fh:
                    _safe_extract_tar(fh, target, name=archive.name)
            except (tarfile.TarError, EOFError, OSError) as err:
                raise UserInputError(f"{archive.name} is not a readable archive: {err}") from None
    entries = [p for p in target.iterdir()]
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else target


def _check_member(name: str, archive: str) -> None:
    parts = Path(name).parts
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) or ".." in parts:
        raise UserInputError(f"archive {archive} has member {name!r} that leaves the tree: refused")


def _safe_extract_tar(fileobj, target: Path, name: str) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=".extract-", dir=_ensure_parent(target)))
    try:
        with tarfile.open(fileobj=fileobj, mode="r:*") as tar:
            members = tar.getmembers()
            if len(members) > MAX_ARCHIVE_MEMBERS:
                raise UserInputError(f"archive {name} has {len(members)} members (cap {MAX_ARCHIVE_MEMBERS}): refused")
            total = 0
            for member in members:
                _check_member(member.name, name)
                if member.issym() or member.islnk():
                    link = Path(member.name).parent / member.linkname if member.issym() else Path(member.linkname)
                    if member.linkname.startswith("/") or ".." in Path(os.path.normpath(link)).parts:
                        raise UserInputError(f"archive {name} has link {member.name!r} -> {member.linkname!r} "
                                             "that leaves the tree: refused")
                total += max(member.size, 0)
                if total > MAX_ARCHIVE_BYTES:
                    raise UserInputError(f"archive {name} unpacks to more than {MAX_ARCHIVE_BYTES} bytes: refused")
            # The "data" filter also drops device files, setuid bits and anything else a source tree
            # has no business containing.
            tar.extractall(tmp, members=members, filter="data")
        tmp.rename(target)
    except tarfile.FilterError as err:
        raise UserInputError(f"archive {name} refused: {err}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _safe_extract_zip(archive: Path, target: Path) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=".extract-", dir=_ensure_parent(target)))
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_ARCHIVE_MEMBERS:
                raise UserInputError(f"archive {archive.name} has too many members: refused")
            if sum(i.file_size for i in infos) > MAX_ARCHIVE_BYTES:
                raise UserInputError(f"archive {archive.name} unpacks to more than {MAX_ARCHIVE_BYTES} bytes: refused")
            for info in infos:
                _check_member(info.filename, archive.name)
            for info in infos:
                if (info.external_attr >> 16) & 0o170000 == 0o120000:
                    continue  # a symbolic link: never recreated from a zip
                zf.extract(info, tmp)
        tmp.rename(target)
    except zipfile.BadZipFile as err:
        raise UserInputError(f"{archive.name} is not a readable zip archive: {err}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _ensure_parent(target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    return target.parent
