#!/usr/bin/env python3
"""Struct layouts: archdiff's DWARF reader beside pahole on the same ELF.

Prints the median wall time and peak memory (of 3 runs, /usr/bin/time -v) of
``pahole ELF`` and of ``archdiff structs --json ELF``, their ratios, and checks that every
struct ``pahole -a`` lists has the same size and member offsets in archdiff's output.

    python3 -m bench.dwarf_vs_pahole [ELF]      # default: this interpreter's libpython
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 3


def default_elf() -> Path:
    libdir = Path(sysconfig.get_config_var("LIBDIR"))
    name = sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY")
    return libdir / name


def measure(argv: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MB, stdout) of one run under /usr/bin/time -v."""
    done = subprocess.run(["/usr/bin/time", "-v", *argv], capture_output=True, text=True,
                          cwd=ROOT)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", done.stderr)
    hours, minutes, seconds = (float(g) if g else 0.0 for g in wall.groups())
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    return hours * 3600 + minutes * 60 + seconds, rss / 1024, done.stdout


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


def main() -> int:
    elf = Path(sys.argv[1]) if len(sys.argv) > 1 else default_elf()
    ours_cmd = [sys.executable, "-c",
                "import sys; from archdiff.commands.structs import structs; "
                "structs(sys.argv[1:])", "--json", str(elf)]
    pahole_runs = [measure(["pahole", str(elf)]) for _ in range(RUNS)]
    ours_runs = [measure(ours_cmd) for _ in range(RUNS)]
    p_time = statistics.median(r[0] for r in pahole_runs)
    p_mem = statistics.median(r[1] for r in pahole_runs)
    o_time = statistics.median(r[0] for r in ours_runs)
    o_mem = statistics.median(r[1] for r in ours_runs)
    print(f"ELF: {elf} ({elf.stat().st_size / 1e6:.1f} MB)")
    print(f"pahole   : {p_time:6.2f} s  {p_mem:7.1f} MB   (median of {RUNS})")
    print(f"archdiff : {o_time:6.2f} s  {o_mem:7.1f} MB   (median of {RUNS})")
    print(f"ratio    : {o_time / p_time:6.1f}x time  {o_mem / p_mem:5.2f}x memory "
          "(target: <= 20x time, <= 3x memory)")
    # agreement over everything pahole can list: -a adds typedef-named anonymous structs
    listed = subprocess.run(["pahole", "-a", str(elf)], capture_output=True, text=True).stdout
    head, *mismatched = compare(listed, ours_runs[0][2])
    print(f"agreement: {head}; {len(mismatched)} differ in size or member offsets"
          + (f": {', '.join(mismatched)}" if mismatched else ""))
    return 1 if mismatched else 0


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("elf", nargs="?", metavar="ELF", help="default: this interpreter's libpython")
    parser.parse_args()  # --help; main() reads the ELF from sys.argv
    sys.exit(main())
