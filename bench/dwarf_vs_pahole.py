#!/usr/bin/env python3
"""Struct layouts: ``archdiff structs`` beside pahole on the same ELF -- the command that proves
"DWARF at pahole's pace" (archdiff's time at most 1.5x pahole's on this machine's libpython).

Runs ``pahole ELF`` and ``python -m archdiff.cli structs --json ELF`` (the real console command)
alternately, :data:`RUNS` times each, every run under ``/usr/bin/time -v``, and prints the
medians of wall time, CPU time (user + system) and peak RSS, and archdiff's ratios to pahole from
those medians. Alternating runs share the machine's load (it has 2 cores and other users), so
the ratio holds better than either time. archdiff runs as an installed package would: its
bytecode is compiled once, before the timed runs (this environment sets PYTHONDONTWRITEBYTECODE,
which would make every run compile every module again), into a temporary PYTHONPYCACHEPREFIX.

It then checks that every struct ``pahole -a`` lists has the same size and member offsets in
archdiff's output (exit status 1 if one differs). The load average is printed with the figures.

``--before DIR`` runs a second archdiff source tree (another checkout: ``git worktree add DIR REF``)
in the same rounds, so that a change's before and after ratios come from one run, under the same
load; both outputs are checked against pahole.

    python3 -m bench.dwarf_vs_pahole [ELF] [--before DIR]   # default ELF: this interpreter's libpython
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 3
TARGET = 1.5  # archdiff's wall time, at most this many times pahole's


def default_elf() -> Path:
    libdir = Path(sysconfig.get_config_var("LIBDIR"))
    name = sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY")
    return libdir / name


def measure(argv: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT
            ) -> tuple[float, float, float, str]:
    """(wall seconds, CPU seconds, peak RSS MB, stdout) of one run under /usr/bin/time -v, in
    ``cwd`` (``python -m`` imports from there first)."""
    done = subprocess.run(["/usr/bin/time", "-v", *argv], capture_output=True, text=True,
                          cwd=cwd, env=env)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", done.stderr)
    hours, minutes, seconds = (float(g) if g else 0.0 for g in wall.groups())
    cpu = sum(float(re.search(rf"{kind} time \(seconds\): ([\d.]+)", done.stderr).group(1))
              for kind in ("User", "System"))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    return hours * 3600 + minutes * 60 + seconds, cpu, rss / 1024, done.stdout


def compare(pahole_text: str, archdiff_json: str) -> list[str]:
    """Structs pahole lists whose size or member offsets archdiff does not reproduce."""
    from tests.structs_refs import parse_pahole  # the same parser the tests use

    ours: dict[str, list[dict]] = {}
    for layout in json.loads(archdiff_json)["structs"]:
        ours.setdefault(layout["qualname"], []).append(layout)
    problems = []
    for name, ref in sorted(parse_pahole(pahole_text).items()):
        want = [(m[0], m[1], m[3]) for m in ref.members]
        match = False
        for layout in ours.get(name, []):
            got = [(m["name"], m["offset"], m["bit_offset"] if m["bit_size"] else None)
                   for m in layout["members"]]
            if got == want and (ref.size == 0 or ref.size == layout["size"]):
                match = True
        if not match:
            problems.append(name)
    problems.insert(0, f"{len(parse_pahole(pahole_text))} structs listed by pahole")
    return problems


def tree_env(pycache: str, tree: Path) -> dict[str, str]:
    """The environment that runs ``tree``'s archdiff, its bytecode kept under ``pycache``."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = f"{pycache}/{tree.name}"
    env["PYTHONPATH"] = str(tree)
    return env


def main(elf: Path, before: Path | None = None) -> int:
    ours_cmd = [sys.executable, "-m", "archdiff.cli", "structs", "--json", str(elf)]
    trees = {"archdiff": ROOT, **({"before": before.resolve()} if before is not None else {})}
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-structs-pyc-") as pycache:
        envs = {label: tree_env(pycache, tree) for label, tree in trees.items()}
        for label, env in envs.items():
            measure(ours_cmd, env, trees[label])  # compiles the bytecode, as installing the package would
        runs: dict[str, list[tuple[float, float, float, str]]] = {"pahole": [], **{label: [] for label in trees}}
        for _ in range(RUNS):
            runs["pahole"].append(measure(["pahole", str(elf)]))
            for label, env in envs.items():
                runs[label].append(measure(ours_cmd, env, trees[label]))
    load = tuple(max(a, b) for a, b in zip(load, os.getloadavg()))
    p_wall, p_cpu, p_mem = (statistics.median(r[i] for r in runs["pahole"]) for i in range(3))
    print(f"ELF: {elf} ({elf.stat().st_size / 1e6:.1f} MB); load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} "
          "(the higher of before and after the runs)")
    print(f"pahole   : {p_wall:6.2f} s wall  {p_cpu:6.2f} s CPU  {p_mem:7.1f} MB peak RSS   (medians of {RUNS})")
    for label, tree in trees.items():
        o_wall, o_cpu, o_mem = (statistics.median(r[i] for r in runs[label]) for i in range(3))
        where = "" if tree == ROOT else f" ({tree})"
        print(f"{label:9s}: {o_wall:6.2f} s wall  {o_cpu:6.2f} s CPU  {o_mem:7.1f} MB peak RSS   (medians of {RUNS}){where}")
        print(f"  ratio  : {o_wall / p_wall:6.2f}x wall   {o_cpu / p_cpu:.2f}x CPU   {o_mem / p_mem:.2f}x memory   "
              f"{label}/pahole, same run (target: <= {TARGET}x wall)")
    # agreement over everything pahole can list: -a adds typedef-named anonymous structs
    listed = subprocess.run(["pahole", "-a", str(elf)], capture_output=True, text=True).stdout
    failed = False
    for label in trees:
        head, *mismatched = compare(listed, runs[label][0][3])
        print(f"agreement ({label}): {head}; {len(mismatched)} differ in size or member offsets"
              + (f": {', '.join(mismatched)}" if mismatched else ""))
        failed = failed or bool(mismatched)
    return 1 if failed else 0


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("elf", nargs="?", metavar="ELF", type=Path, help="default: this interpreter's libpython")
    parser.add_argument("--before", type=Path, metavar="DIR",
                        help="another archdiff source tree, timed in the same rounds")
    args = parser.parse_args()
    sys.exit(main(args.elf or default_elf(), args.before))
