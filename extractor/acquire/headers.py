"""Headers of a Python distribution, for struct probes: ``--headers-from SPEC``.

Projects such as vLLM compile against headers that ship inside wheels: torch's ``torch/include``,
pybind11's ``pybind11/include``, CUTLASS/CuTe in ``nvidia-cutlass``. A user who builds the project
has those wheels installed; archdiff gets the same headers without installing anything:

- ``pypi:NAME==VERSION`` (or ``pypi:NAME`` for the newest release): the wheel is downloaded from
  the package indexes pip is configured with (the same lookup as sdists), checked against the
  index's sha256, and only its ``include`` directories are unpacked into the cache. It is never
  installed and nothing in it is run.
- ``NAME``: a distribution installed in the running Python; its ``include`` directories are used
  in place.

Which wheel: the first this interpreter and platform would install (``packaging.tags``), else a
Linux x86_64 wheel of any Python version (headers do not depend on it), else any wheel; always
the same one for the same index listing. Its file name and sha256 go into the evidence (they are
what the probe cache keys on: a downloaded wheel never changes, so its headers are never hashed).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import json
import os
import re
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from packaging.tags import sys_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from extractor.acquire.archives import extract_zip
from extractor.buildsettings import BuildSettings, HeaderPackage
from extractor.errors import UserInputError
from extractor.support.locks import locked
from extractor.acquire.sources import NETWORK_TIMEOUT, canonical_name, index_listings, pip_index_urls

HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc", ".ipp", ".tcc", ".def")
_SPEC = re.compile(r"^pypi:([A-Za-z0-9][A-Za-z0-9._-]*)(?:==([A-Za-z0-9][A-Za-z0-9.+!_-]*))?$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_CHUNK = 1 << 20


def resolve_headers_from(spec: str, cache_dir: Path) -> HeaderPackage:
    """The include directories of ``spec`` (see module docstring); UserInputError when it cannot be had."""
    spec = spec.strip()
    m = _SPEC.match(spec)
    if m:
        return _from_index(spec, m.group(1), m.group(2) or "", cache_dir / "wheels")
    if spec.startswith("pypi:"):
        raise UserInputError(f"--headers-from {spec!r}: write pypi:NAME or pypi:NAME==VERSION "
                             "(e.g. pypi:torch==2.8.0)")
    if not _NAME.match(spec):
        raise UserInputError(f"--headers-from {spec!r} is neither pypi:NAME[==VERSION] nor the name of an "
                             "installed distribution")
    return _from_installed(spec)


def _from_installed(name: str) -> HeaderPackage:
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        raise UserInputError(f"--headers-from {name}: no distribution of that name is installed here; "
                             f"use pypi:{name}==VERSION to download its wheel instead") from None
    files = [str(f) for f in dist.files or ()]
    dirs = include_dirs_of(files)
    record = dist.read_text("RECORD") or "\n".join(sorted(files))
    roots = tuple(Path(str(dist.locate_file(d))).resolve() for d in dirs)
    return HeaderPackage(name, dist.metadata["Name"] or name, dist.version, "installed",
                         hashlib.sha256(record.encode()).hexdigest(), roots)


def include_dirs_of(members: list[str]) -> list[str]:
    """Directories named ``include`` that hold headers (at any depth below them), shallow first."""
    found = set()
    for member in members:
        if not member.endswith(HEADER_SUFFIXES):
            continue
        parts = member.split("/")
        for i, part in enumerate(parts[:-1]):
            if part == "include":
                found.add("/".join(parts[: i + 1]))
    return sorted(found, key=lambda d: (d.count("/"), d))


def _from_index(spec: str, name: str, version: str, dest: Path) -> HeaderPackage:
    wanted = canonical_name(name)
    listing: list[tuple[str, str, str]] = []
    for _index, files in index_listings(name):
        for filename, url, sha in files:
            try:
                dist, ver, _build, tags = parse_wheel_filename(filename)
            except (InvalidWheelFilename, InvalidVersion):
                continue
            if canonical_name(dist) == wanted:
                listing.append((filename, url, sha))
        if listing:
            break  # the first index that has the distribution decides, as for sdists
    if not listing:
        raise UserInputError(f"--headers-from {spec}: no wheel of {name} on {', '.join(pip_index_urls())}")
    versions = sorted({parse_wheel_filename(f)[1] for f, _, _ in listing})
    if version:
        chosen_version = next((v for v in versions if v == Version(version)), None)
        if chosen_version is None:
            raise UserInputError(f"--headers-from {spec}: no wheel of {name}=={version} (versions with wheels: "
                                 f"{', '.join(str(v) for v in versions[-5:])})")
    else:
        stable = [v for v in versions if not v.is_prerelease]
        chosen_version = (stable or versions)[-1]
    candidates = [f for f in listing if parse_wheel_filename(f[0])[1] == chosen_version]
    filename, url, sha = _pick_wheel(candidates)
    if not sha:
        raise UserInputError(f"--headers-from {spec}: the index gives no sha256 for {filename}: refused")
    root = dest / sha[:20]
    listing_file = dest / f"{sha[:20]}.include-dirs.json"
    with locked(dest / f".{sha[:20]}.lock"):
        # The unpacked include directories are keyed by the wheel's hash: once they exist, the
        # (large) wheel itself is not read again.
        try:
            dirs = json.loads(listing_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            wheel = _download(url, sha, dest / filename)
            with zipfile.ZipFile(wheel) as zf:
                dirs = include_dirs_of(zf.namelist())
            if not root.is_dir():
                extract_zip(wheel, root, keep=_in_include_dir)
            listing_file.write_text(json.dumps(dirs), encoding="utf-8")
            wheel.unlink()  # only its include directories are ever read: the rest is not kept
    return HeaderPackage(spec, name, str(chosen_version), filename, sha, tuple(root / d for d in dirs))


def _in_include_dir(member: str) -> bool:
    return "include" in member.split("/")[:-1]


def _pick_wheel(candidates: list[tuple[str, str, str]]) -> tuple[str, str, str]:
    rank = {str(t): i for i, t in enumerate(sys_tags())}

    def score(entry: tuple[str, str, str]) -> tuple[int, int, str]:
        tags = parse_wheel_filename(entry[0])[3]
        best = min((rank.get(str(t), len(rank)) for t in tags), default=len(rank))
        linux_x86 = any(t.platform.endswith("linux_x86_64") or t.platform == "any" for t in tags)
        return (best, 0 if linux_x86 else 1, entry[0])

    return min(candidates, key=score)


def _download(url: str, sha: str, target: Path) -> Path:
    """Stream ``url`` to ``target`` (once: a complete, verified file is reused)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with locked(target.with_name(f".{target.name}.lock")):
        if target.is_file() and _sha256(target) == sha:
            return target
        tmp = target.with_name(f".{target.name}.{os.getpid()}.part")
        digest = hashlib.sha256()
        request = urllib.request.Request(url, headers={"User-Agent": "archdiff"})
        try:
            with urllib.request.urlopen(request, timeout=NETWORK_TIMEOUT) as response, tmp.open("wb") as out:  # noqa: S310
                while chunk := response.read(_CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
        except (urllib.error.URLError, OSError) as err:
            tmp.unlink(missing_ok=True)
            raise UserInputError(f"cannot download {url}: {getattr(err, 'reason', err)}") from None
        if digest.hexdigest() != sha:
            tmp.unlink(missing_ok=True)
            raise UserInputError(f"{target.name} does not match the index's sha256: refused")
        tmp.replace(target)
    return target


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


_DEFINE = re.compile(r"^[A-Za-z_]\w*(?:=.*)?$", re.S)


def resolve_build_settings(settings: BuildSettings, cache_dir: Path) -> BuildSettings:
    """Check the settings, fetch ``headers_from`` and compute the fingerprint; UserInputError on a
    directory, file or define that cannot be used."""
    if settings.fingerprint or settings.empty:
        return settings
    for d in settings.include_dirs:
        if not Path(d).is_dir():
            raise UserInputError(f"--include-dir {d}: no such directory")
    for define in settings.defines:
        if not _DEFINE.match(define):
            raise UserInputError(f"--define {define!r}: write NAME or NAME=VALUE")
    if settings.compile_commands and not Path(settings.compile_commands).is_file():
        raise UserInputError(f"--compile-commands {settings.compile_commands}: no such file")
    packages = tuple(resolve_headers_from(spec, cache_dir) for spec in settings.headers_from)
    h = hashlib.sha256()
    h.update(json.dumps([list(settings.defines), [p.record() for p in packages]], sort_keys=True).encode())
    for d in settings.include_dirs:
        h.update(directory_digest(str(Path(d).resolve())).encode())
    if settings.compile_commands:
        h.update(hashlib.sha256(Path(settings.compile_commands).read_bytes()).digest())
    return dataclasses.replace(settings, packages=packages, fingerprint=h.hexdigest())


@functools.cache
def directory_digest(root: str) -> str:
    """Hash of the relative names and contents of the files under ``root``: once per run and
    directory, however many probes use it (torch's headers are 9,000 files)."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            try:
                with open(full, "rb") as fh:
                    digest = hashlib.file_digest(fh, "sha256").hexdigest()
            except OSError:
                digest = "unreadable"
            h.update(f"{os.path.relpath(full, root)}\0{digest}\n".encode())
    return h.hexdigest()
