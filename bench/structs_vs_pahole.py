#!/usr/bin/env python3
"""Every layout archdiff's probes resolve, against pahole and gdb ``ptype /o`` on the same objects.

    python3 -m bench.structs_vs_pahole SOURCE...|SYSTEM.yaml [--headers-from SPEC] [--include-dir DIR]
                                         [--define NAME[=VALUE]] [--compile-commands FILE] [-j 2]
                                         [--cache-dir DIR] [--list N]

Extracts the system as ``archdiff extract`` does (same options), with the probe objects kept: each
header is compiled again (the probe cache is bypassed, since a cached result has no object). Then,
for every resolved layout, the object its header's probe produced is read by the reference tools:

- **pahole** (``pahole -C NAME``, unqualified names only): the layout is compared when the object
  holds exactly one complete aggregate of that name (pahole prints the first of several:
  ``FP32Vec4::AliasReg`` and ``FP32Vec16::AliasReg`` are both ``AliasReg``); the others are
  listed as not compared, with that reason;
- **gdb** ``ptype /o QUALNAME`` (C++ only: qualified names, base classes); for an object compiled
  for another CPU (aarch64, ppc64le, s390x probes), ``gdb-multiarch``.

Compared: the size, and each member's name, offset and size (a bit-field: its first bit).
Printed: how many layouts equal each reference, and every disagreement with what differs, so none
is hidden. Exit status 0 either way: this is a measurement.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


from extractor.buildsettings import BuildSettings
from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system
from extractor.presets import system_or_sources
from extractor.structs.dwarf import read_layouts
from extractor.structs.probe import object_name
from tests.structs_refs import RefStruct, parse_gdb_ptype, parse_pahole

_BATCH = 8  # pahole 1.24 prints only some of a long -C list; gdb is started once per batch


def extract_with_objects(sources: list[str], build: BuildSettings, objects: Path, jobs: int,
                         cache_dir: Path | None) -> dict[str, Any]:
    specs, name, version, build = system_or_sources(sources, "", "", build)
    options = ExtractOptions(jobs=jobs, cache_dir=cache_dir, build=build,
                             extra={"structs_keep_objects": str(objects)})
    return extract_system(specs, name=name, version=version, options=options).bundle


def short(qualname: str) -> str:
    """The unqualified name pahole takes: after the last ``::`` outside template arguments."""
    depth, cut = 0, 0
    for i, ch in enumerate(qualname):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif depth == 0 and qualname.startswith("::", i):
            cut = i + 2
    return qualname[cut:]


def names_in(obj: Path) -> collections.Counter[str]:
    """How many complete aggregates of each unqualified name the object's DWARF holds: pahole -C
    prints the first of several (``FP32Vec4::AliasReg`` and ``FP32Vec16::AliasReg`` are both
    ``AliasReg``), so a name held twice cannot be compared by it."""
    return collections.Counter(short(raw.qualname) for raw in read_layouts(obj))


def fields_of(layout: dict[str, Any], *, vptr: bool = True) -> list[tuple[str, int, int | None]]:
    """(name, position, size) of a record's members that the references print as members: fields,
    named or not (a base sub-object is on gdb's header line, not a member). A bit-field's position
    is its first bit from the start of the struct and its size None: pahole places it by storage
    unit (``0:20 4``), gdb by byte (``2:4 | 4``), the same bit either way. ``vptr``: with the
    ``_vptr.X`` member, which gdb does not print."""
    return [(m["name"], m["offset"] * 8 + m["bit_offset"], None) if m["bit_size"] else (m["name"], m["offset"], m["size"])
            for m in layout["members"] if m["kind"] == "field" and (vptr or not m["name"].startswith("_vptr."))]


def ref_fields(ref: RefStruct) -> list[tuple[str, int, int | None]]:
    return [(n or "", o * 8 + b, None) if b is not None else (n or "", o, s) for n, o, s, b in ref.members]


def differences(layout: dict[str, Any], ref: RefStruct, tool: str) -> list[str]:
    """What differs between a record and a reference's layout of it ([] when they agree)."""
    problems = []
    # pahole 1.24 prints no size line for a union
    if layout["size"] != ref.size and not (tool == "pahole" and layout["kind"] == "union" and ref.size == 0):
        problems.append(f"size {layout['size']} vs {ref.size}")
    ours, theirs = fields_of(layout, vptr=tool != "gdb"), ref_fields(ref)
    if ours != theirs:
        mine, other = set(ours), set(theirs)
        only_ours = [m for m in ours if m not in other][:3]
        only_theirs = [m for m in theirs if m not in mine][:3]
        problems.append(f"members: ours {len(ours)}, theirs {len(theirs)}; ours only {only_ours}, theirs only {only_theirs}")
    return problems


def pahole_all(obj: Path, names: list[str]) -> dict[str, RefStruct]:
    """pahole's layouts of ``names`` in ``obj``."""
    found: dict[str, RefStruct] = {}
    for i in range(0, len(names), _BATCH):
        done = subprocess.run(["pahole", "-C", ",".join(names[i:i + _BATCH]), str(obj)], capture_output=True,
                              text=True, timeout=300)
        for name, ref in parse_pahole(done.stdout).items():
            found.setdefault(name, ref)
    return found


def gdb_all(gdb: str, obj: Path, qualnames: list[str]) -> dict[str, RefStruct]:
    found = {}
    for i in range(0, len(qualnames), _BATCH):
        argv = [gdb, "-batch", "-nx", "-ex", "set language c++", "-ex", "set width 0"]
        for n in qualnames[i:i + _BATCH]:
            # gdb's expression parser takes `(anonymous namespace)` and `Ring<short int, 3>` only
            # quoted, and a quoted one-letter name is a char literal ('Q')
            shown = f"'{n}'" if re.search(r"[\s()]", n) else n
            argv += ["-ex", f"echo @@@{n}\\n", "-ex", f"ptype /o {shown}"]
        done = subprocess.run(argv + [str(obj)], capture_output=True, text=True, timeout=300)
        for chunk in done.stdout.split("@@@")[1:]:
            name, _, body = chunk.partition("\n")
            if "type = " in body:
                found[name] = parse_gdb_ptype(name, body)
    return found


def _machine(elf: Path) -> bytes:
    with open(elf, "rb") as f:
        return f.read(20)[18:20]  # e_machine


def gdb_for(obj: Path) -> str | None:
    """gdb for this CPU's objects; gdb-multiarch (Debian's package of that name) for another's:
    plain gdb reads an aarch64 object's members with the producer string as their type."""
    if _machine(obj) == _machine(Path(sys.executable).resolve()):
        return shutil.which("gdb")
    return shutil.which("gdb-multiarch")


def compare(bundle: dict[str, Any], objects: Path) -> dict[str, Any]:
    resolved = [x for x in bundle["structs"] if x["method"] in ("probe-g++", "probe-nvcc")]
    by_object: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for x in resolved:  # a probe's layouts carry its header's path (origin may add "as included by ...")
        by_object[x["path"]].append(x)
    tally: collections.Counter[str] = collections.Counter()
    disagreements: list[tuple[str, str, str]] = []
    uncompared: list[tuple[str, str, str]] = []  # (tool, layout, why the tool could not be asked)
    for header, layouts in sorted(by_object.items()):
        obj = objects / object_name(header)
        if not obj.is_file():
            tally["no object"] += len(layouts)
            continue
        counts = names_in(obj)
        shorts = sorted({short(x["qualname"]) for x in layouts if counts[short(x["qualname"])] == 1})
        pahole = pahole_all(obj, shorts)
        gdb_exe = gdb_for(obj)
        cxx = sorted({x["qualname"] for x in layouts if x["language"] != "c"}) if gdb_exe else []
        gdb = gdb_all(gdb_exe, obj, cxx) if cxx else {}
        for x in layouts:
            where = f"{x['qualname']} ({x['path']}:{x['line']}{', ' + x['target'] if x.get('target') else ''})"
            verdicts = []  # per reference that printed the layout: equal?
            name = short(x["qualname"])
            if counts[name] > 1:
                tally["pahole: several of that name"] += 1
                uncompared.append(("pahole", where, f"{counts[name]} aggregates named {name} in the object"))
            elif name not in pahole:
                tally["pahole: not printed"] += 1
                uncompared.append(("pahole", where, f"pahole -C {name} printed nothing"))
            else:
                verdicts.append(_verdict("pahole", x, pahole[name], where, tally, disagreements))
            if x["language"] != "c" and gdb_exe is None:
                uncompared.append(("gdb", where, "another CPU's object and gdb-multiarch is not installed"))
            elif x["language"] != "c":
                if x["qualname"] in gdb:
                    verdicts.append(_verdict("gdb", x, gdb[x["qualname"]], where, tally, disagreements))
                else:
                    tally["gdb: not printed"] += 1
                    uncompared.append(("gdb", where, f"ptype /o {x['qualname']} printed no type"))
            tally["layouts: no reference printed them" if not verdicts else
                  "layouts: equal to every reference that printed them" if all(verdicts) else
                  "layouts: differ from a reference"] += 1
    return {"resolved": len(resolved), "tally": dict(sorted(tally.items())), "disagreements": disagreements,
            "uncompared": uncompared}


def _verdict(tool: str, layout: dict[str, Any], ref: RefStruct, where: str, tally, disagreements) -> bool:
    problems = differences(layout, ref, tool)
    tally[f"{tool}: equal" if not problems else f"{tool}: differs"] += 1
    if problems:
        disagreements.append((tool, where, "; ".join(problems)))
    return not problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--headers-from", action="append", default=[])
    parser.add_argument("--include-dir", action="append", default=[])
    parser.add_argument("--define", action="append", default=[])
    parser.add_argument("--compile-commands", default="")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--list", type=int, default=40, help="disagreements printed (all go to --json)")
    parser.add_argument("--json", type=Path, default=None, help="write the whole result here")
    args = parser.parse_args()
    build = BuildSettings(tuple(args.include_dir), tuple(args.define), args.compile_commands, tuple(args.headers_from))
    with tempfile.TemporaryDirectory(prefix="archdiff-pahole-objects-") as tmp:
        bundle = extract_with_objects(args.sources, build, Path(tmp), args.jobs, args.cache_dir)
        result = compare(bundle, Path(tmp))
    tally = result["tally"]
    print(f"{' '.join(args.sources)}: {result['resolved']} resolved layouts")
    for tool in ("pahole", "gdb"):
        compared = tally.get(f"{tool}: equal", 0) + tally.get(f"{tool}: differs", 0)
        if compared:
            print(f"  {tool}: {tally.get(f'{tool}: equal', 0)} of {compared} compared equal "
                  f"({100 * tally.get(f'{tool}: equal', 0) / compared:.2f}%)")
    compared = tally.get("layouts: equal to every reference that printed them", 0) + \
        tally.get("layouts: differ from a reference", 0)
    print(f"  {tally.get('layouts: equal to every reference that printed them', 0)} of {compared} layouts that a "
          f"reference printed equal every reference that printed them")
    for key, count in tally.items():
        print(f"    {key}: {count}")
    for tool, where, what in result["disagreements"][:args.list]:
        print(f"  DIFFERS from {tool}: {where}: {what}")
    for tool, where, why in result["uncompared"][:args.list]:
        print(f"  not compared with {tool}: {where}: {why}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
