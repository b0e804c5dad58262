"""tests/run.sh, the README's test command and CI's, on a PATH of stand-ins for dpkg-query, apt-get,
sudo, id and python3 that record how they were called: it asks apt-get for the missing Debian
packages only (as root directly, through sudo otherwise), stops with the list when it can do
neither, and then installs the test extra and runs pytest with the arguments it was given."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "tests" / "run.sh"
INSTALLED = {"dwarves", "gdb", "universal-ctags", "protobuf-compiler", "protobuf-compiler-grpc", "libprotobuf-dev",
             "g++-aarch64-linux-gnu", "g++-powerpc64le-linux-gnu", "g++-s390x-linux-gnu", "chromium", "graphviz"}

# Each stand-in appends "name args..." to $CALLS; dpkg-query says installed for $INSTALLED_PACKAGES.
STANDINS = {
    "dpkg-query": 'for p in $INSTALLED_PACKAGES; do [ "$p" = "${@: -1}" ] && { printf "install ok installed"; exit 0; }; done\n'
                  'exit 1\n',
    # install takes a moment, fails when $APT_FAILS is set: pytest must wait for it either way
    "apt-get": '[ "$1" = install ] && sleep 1 && [ -n "$APT_FAILS" ] && exit 100\necho "apt-get $*" >> "$CALLS"\n',
    "sudo": 'echo "sudo $1" >> "$CALLS"\nexec "$@"\n',
    "id": 'echo "$FAKE_UID"\n',
    "python3": 'echo "python3 $*" >> "$CALLS"\n',
}


def _run(tmp_path: Path, installed: set[str], uid: int, with_sudo: bool = True, *args: str, apt_fails: bool = False):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in STANDINS.items():
        if name == "sudo" and not with_sudo:
            continue
        path = bin_dir / name
        path.write_text("#!/bin/bash\n" + body)
        path.chmod(0o755)
    for tool in ("bash", "grep", "env", "dirname", "sleep"):  # the real ones the script (and apt-get's stand-in) need
        (bin_dir / tool).unlink(missing_ok=True)
        (bin_dir / tool).symlink_to(shutil.which(tool))
    calls = tmp_path / "calls"
    calls.write_text("")
    env = {"PATH": str(bin_dir), "CALLS": str(calls), "INSTALLED_PACKAGES": " ".join(sorted(installed)),
           "FAKE_UID": str(uid), "HOME": str(tmp_path), "APT_FAILS": "1" if apt_fails else ""}
    proc = subprocess.run([str(bin_dir / "bash"), str(SCRIPT), *args], env=env, capture_output=True, text=True,
                          timeout=60)
    return proc, calls.read_text().splitlines()


def test_with_everything_installed_it_goes_straight_to_pip_and_pytest(tmp_path):
    proc, calls = _run(tmp_path, INSTALLED, 1000, True, "-m", "not real")
    assert proc.returncode == 0, proc.stderr
    assert calls == ["python3 -m pip install -q -e .[test]", "python3 -m pytest -m not real"]


@pytest.mark.parametrize("uid, through", [(0, []), (1000, ["sudo env"])])
def test_missing_packages_are_installed_as_root_or_through_sudo(tmp_path, uid, through):
    proc, calls = _run(tmp_path, INSTALLED - {"gdb", "chromium"}, uid)
    assert proc.returncode == 0, proc.stderr
    apt = [c for c in calls if c.startswith("apt-get")]
    assert [c for c in calls if c.startswith("sudo")] == through * 2  # update, then install
    assert apt == ["apt-get update -qq", "apt-get install -y -qq --no-install-recommends gdb chromium"]
    # apt-get runs beside pip (a fresh machine's half minute each), and pytest only after both
    assert [c for c in calls if c.startswith("python3")] == ["python3 -m pip install -q -e .[test]", "python3 -m pytest"]
    assert calls[-1] == "python3 -m pytest"


def test_a_failed_apt_get_stops_before_pytest(tmp_path):
    proc, calls = _run(tmp_path, INSTALLED - {"gdb"}, 0, apt_fails=True)
    assert proc.returncode == 2
    assert "apt-get could not install gdb" in proc.stderr
    assert "python3 -m pytest" not in calls


def test_without_root_or_sudo_it_stops_naming_the_packages(tmp_path):
    proc, calls = _run(tmp_path, INSTALLED - {"dwarves"}, 1000, False)
    assert proc.returncode == 2
    assert "dwarves" in proc.stderr and "apt-get install dwarves" in proc.stderr
    assert calls == []  # neither apt-get nor pytest ran


def test_ci_runs_the_readme_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "\nbash tests/run.sh " in readme.split("```", 2)[1]  # the README's second command
    assert [line for line in ci.splitlines() if line and not line.startswith("#")][-1] == "exec bash tests/run.sh"
    assert os.access(ROOT / ".ci" / "run", os.X_OK)
