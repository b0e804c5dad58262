"""Running the real CLI on hostile input, inside a sandbox that shows what it touched.

Each case gets a fresh HOME, TMPDIR, working directory and cache; after the run the sandbox must
hold nothing but the output and the cache: no marker file created by a command hidden in the
input, no temporary file left behind, nothing written anywhere else.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
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

    def run(self, *args: str, timeout: float = CASE_TIMEOUT, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "archdiff.cli", *args], capture_output=True, text=True,
                              cwd=self.base / "cwd", env=self.env(**env), timeout=timeout)

    def extract(self, *specs: str, timeout: float = CASE_TIMEOUT, **env: str) -> subprocess.CompletedProcess:
        return self.run("extract", *specs, "-o", str(self.out), "--cache-dir", str(self.cache), "-j", "1",
                        timeout=timeout, **env)

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
