"""Running the real CLI on hostile input, inside a sandbox that shows what it touched.

Each case gets a fresh HOME, TMPDIR, working directory and cache; after the run the sandbox must
hold nothing but the output and the cache: no marker file created by a command hidden in the
input, no temporary file left behind, nothing written anywhere else.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASE_TIMEOUT = 120  # seconds: a hostile case that hangs fails instead of hanging the suite


@dataclasses.dataclass
class Sandbox:
    base: Path

    def __post_init__(self) -> None:
        for name in ("home", "tmp", "cwd", "out", "cache", "input", "markers"):
            (self.base / name).mkdir(parents=True, exist_ok=True)

    @property
    def input(self) -> Path:
        return self.base / "input"

    @property
    def out(self) -> Path:
        return self.base / "out"

    @property
    def cache(self) -> Path:
        return self.base / "cache"

    @property
    def markers(self) -> Path:
        """Where hostile commands in the inputs would write: it must stay empty."""
        return self.base / "markers"

    def env(self, **extra: str) -> dict[str, str]:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.base / "home"),
               "TMPDIR": str(self.base / "tmp"), "XDG_CACHE_HOME": str(self.base / "home" / ".cache"),
               "PYTHONPATH": os.environ.get("PYTHONPATH", str(ROOT)), "LANG": "C.UTF-8",
               "GIT_CONFIG_NOSYSTEM": "1"}
        for key in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CONFIG_FILE", "CUDA_HOME"):
            if key in os.environ:
                env[key] = os.environ[key]
        return {**env, **extra}

    def run(self, *args: str, timeout: float = CASE_TIMEOUT, fault: Fault | None = None,
            **env: str) -> subprocess.CompletedProcess:
        """The real CLI in the sandbox. Whatever the case expects, a hostile input never ends in
        archdiff's "internal error" nor in a traceback: checked here for every case."""
        argv = [sys.executable, "-m", "archdiff.cli", *args]
        proc = subprocess.run([*fault.prefix, *argv] if fault else argv, capture_output=True, text=True,
                              cwd=self.base / "cwd", env=self.env(**env, **(fault.env if fault else {})),
                              timeout=timeout, preexec_fn=fault.preexec if fault else None)
        assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        return proc

    def extract(self, *specs: str, timeout: float = CASE_TIMEOUT, fault: Fault | None = None,
                **env: str) -> subprocess.CompletedProcess:
        return self.run("extract", *specs, "-o", str(self.out), "--cache-dir", str(self.cache), "-j", "1",
                        timeout=timeout, fault=fault, **env)

    def assert_contained(self) -> None:
        """Nothing but output and cache was written; no hostile command ran."""
        assert list(self.markers.iterdir()) == [], "a command from the input ran"
        assert list((self.base / "cwd").iterdir()) == [], "wrote into the working directory"
        assert list((self.base / "tmp").iterdir()) == [], "left temporary files behind"
        home = [p for p in (self.base / "home").rglob("*")]
        assert home == [], f"wrote into HOME: {home[:3]}"


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return lines[0]


# -- file system faults ------------------------------------------------------------------------
#
# Tests run as root here, and permission bits do not stop root. A real read-only or full file
# system is made in a private mount namespace (``unshare -m``, or ``unshare -r -m`` in a user
# namespace), which vanishes with the process: a read-only bind mount of the directory over
# itself, or a small tmpfs. Where mounting is not allowed (a container without CAP_SYS_ADMIN or
# user namespaces; ``ARCHDIFF_TEST_NO_MOUNT=1`` forces it), the error is injected at the
# boundary instead: a ``sitecustomize`` module makes every write under the directory (opening
# for writing, mkdir, rename, sqlite3.connect) fail with that errno, as the kernel would.

@dataclasses.dataclass(frozen=True)
class Fault:
    """A condition of the machine a run meets: how to set it up, and what the run should see."""

    prefix: tuple[str, ...] = ()  # argv before the command: enters the namespace and mounts
    preexec: Callable[[], None] | None = None
    reason: str = ""  # the strerror the run meets
    how: str = ""
    env: dict[str, str] = dataclasses.field(default_factory=dict)


@functools.cache
def _unshare_flags() -> tuple[str, ...] | None:
    if os.environ.get("ARCHDIFF_TEST_NO_MOUNT") or not shutil.which("unshare"):
        return None
    with tempfile.TemporaryDirectory() as probe:
        for flags in (("-m",), ("-r", "-m")):
            try:
                done = subprocess.run(["unshare", *flags, "sh", "-c", 'mount -t tmpfs -o size=4k tmpfs "$1"', "sh",
                                       probe], capture_output=True, timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                return None
            if done.returncode == 0:
                return flags
    return None


def memory_cap(nbytes: int) -> Fault:
    """Run with at most ``nbytes`` of address space: a regression that inflates a bomb fails
    with MemoryError instead of taking the machine's memory."""
    return Fault((), lambda: resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes)), "", "RLIMIT_AS")


_INJECT = """
import builtins, errno, io, os, sqlite3

_code, _, _root = os.environ["ARCHDIFF_TEST_FAULT"].partition(":")
_number = getattr(errno, _code)
_root = os.path.realpath(_root)


def _under(path):
    try:
        real = os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return False
    return real == _root or real.startswith(_root + os.sep)


def _fail(path):
    raise OSError(_number, os.strerror(_number), os.fsdecode(path))


def _guard(real, writes=lambda *a, **k: True):
    def guarded(path, *args, **kwargs):
        if isinstance(path, (str, bytes, os.PathLike)) and _under(path) and writes(*args, **kwargs):
            _fail(path)
        return real(path, *args, **kwargs)
    return guarded


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT
os.open = _guard(os.open, lambda flags, *a, **k: flags & _WRITE_FLAGS)
builtins.open = io.open = _guard(io.open, lambda mode="r", *a, **k: any(c in mode for c in "wax+"))
_mkdir = os.mkdir
os.mkdir = lambda path, *a, **k: _mkdir(path, *a, **k) if os.path.exists(path) or not _under(path) else _fail(path)
for _name in ("rename", "replace", "symlink", "link", "unlink", "rmdir"):
    setattr(os, _name, _guard(getattr(os, _name)))
_connect = sqlite3.connect
sqlite3.connect = lambda db, *a, **k: (_connect(db, *a, **k) if not _under(db)
                                       else (_ for _ in ()).throw(sqlite3.OperationalError("unable to open database file")))
"""


def _injected(directory: Path, code: str, how: str) -> Fault:
    inject = directory.parent / f".inject-{directory.name}"
    inject.mkdir(exist_ok=True)
    (inject / "sitecustomize.py").write_text(_INJECT)
    path = os.pathsep.join([str(inject), os.environ.get("PYTHONPATH", str(ROOT))])
    return Fault(env={"PYTHONPATH": path, "ARCHDIFF_TEST_FAULT": f"{code}:{directory}"},
                 reason=os.strerror(getattr(errno, code)), how=how)


def read_only(directory: Path) -> Fault:
    """Run with ``directory`` and everything in it read-only."""
    directory.mkdir(parents=True, exist_ok=True)
    flags = _unshare_flags()
    if flags:
        script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
        return Fault(("unshare", *flags, "sh", "-c", script, "sh", str(directory)), None,
                     "Read-only file system", "read-only bind mount")
    return _injected(directory, "EROFS", "injected EROFS")


def full(directory: Path, kib: int, seed: Path | None = None) -> Fault:
    """Run with ``directory`` on a file system of ``kib`` KiB (holding a copy of ``seed``'s files);
    injected, it is full from the start."""
    directory.mkdir(parents=True, exist_ok=True)
    flags = _unshare_flags()
    if flags:
        # The tmpfs vanishes with the namespace: what it held at the end is listed beside it.
        copy = f'cp -a "{seed}/." "$d"/ || exit 99; ' if seed else ""
        script = (f'd="$1"; shift; mount -t tmpfs -o size={kib}k tmpfs "$d" || exit 99; {copy}"$@"; rc=$?; '
                  '(cd "$d" && find . -mindepth 1 -printf "%P\\t%s\\n") > "$d.after"; exit $rc')
        return Fault(("unshare", *flags, "sh", "-c", script, "sh", str(directory)), None,
                     "No space left on device", "tmpfs")
    if seed:
        shutil.copytree(seed, directory, dirs_exist_ok=True)
    return _injected(directory, "ENOSPC", "injected ENOSPC")


def contents(directory: Path) -> dict[str, int]:
    """Relative path -> size of what ``directory`` held when the run ended (also for a tmpfs
    that vanished with its namespace)."""
    listing = directory.with_name(directory.name + ".after")
    if listing.exists():
        rows = (line.split("\t") for line in listing.read_text().splitlines() if line)
        return {path: int(size) for path, size in rows}
    return {p.relative_to(directory).as_posix(): p.stat().st_size for p in directory.rglob("*")}
