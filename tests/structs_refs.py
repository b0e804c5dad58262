"""Parsers for the two reference tools the struct tests compare against: pahole and gdb.

Only the outermost level of each aggregate is parsed (nested anonymous aggregates are checked
as one member: their closing line carries their offset and size).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess

_PAHOLE_POS = re.compile(r"/\*\s*(\d+)(?::\s*(\d+))?\s+(\d+)\s*\*/\s*$")
_GDB_POS = re.compile(r"^/\*\s+(?:(\d+)(?::\s*(\d+))?\s+\|)?\s+(\d+) \*/\s+(.*)$")


@dataclasses.dataclass
class RefStruct:
    name: str
    size: int = 0
    members: list = dataclasses.field(default_factory=list)  # (name, offset, size, bit_offset|None)
    holes: list = dataclasses.field(default_factory=list)  # (size, "bytes"|"bits")
    padding: int = 0
    bit_padding: int = 0
    sum_members: int | None = None
    sum_holes: int = 0


def member_name(decl: str) -> str:
    # pahole writes vector members as `float v __attribute__ ((__vector_size__ (16)));`
    decl = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", "", decl).strip().rstrip(";").strip()
    vptr = re.search(r"\b_vptr\.\w+", decl)  # `int ()(void) * * _vptr.Polymorphic`
    if vptr:
        return vptr.group(0)
    fn = re.search(r"\(\*\s*(\w+)\)", decl)
    if fn:
        return fn.group(1)
    if decl in ("}", ""):
        return ""
    decl = re.sub(r"(\[[^\]]*\])+", "", decl)
    decl = re.sub(r"\s*:\s*\d+$", "", decl)
    ident = re.findall(r"\w+", decl)
    if decl.startswith("}"):
        return ident[-1] if ident else ""
    return ident[-1] if ident else ""


def require_tool(name: str, package: str) -> None:
    """A reference tool that is missing fails the test that needs it, naming what installs it
    (tests/run.sh does); it never turns into a skip."""
    assert shutil.which(name), f"{name} is required (Debian package {package}; bash tests/run.sh installs it)"


def run_pahole(obj, *names, anonymous: bool = False) -> dict[str, RefStruct]:
    """pahole's layouts; ``anonymous`` adds typedef-named anonymous structs (``-a``).
    (pahole 1.24 prints only some of a long ``-C a,b,c`` list: keep name lists short.)"""
    require_tool("pahole", "dwarves")
    argv = ["pahole"] + (["-a"] if anonymous else []) + \
        (["-C", ",".join(names)] if names else []) + [str(obj)]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return parse_pahole(out)


def parse_pahole(text: str) -> dict[str, RefStruct]:
    found: dict[str, RefStruct] = {}
    current = None
    depth = 0
    for line in text.splitlines():
        if current is None:
            head = re.match(r"^(?:typedef )?(?:struct|union|class) (\S+ )?\{", line)
            if head:  # "typedef struct {" is named by its closing line
                current = RefStruct((head.group(1) or "").strip())
                depth = 1
            continue
        stripped = line.strip()
        if line.startswith("}"):
            if not current.name:
                current.name = re.sub(r"__attribute__\(\(.*?\)\)", "", line).strip("}; \t")
            found.setdefault(current.name, current)
            current = None
            continue
        if depth == 1:
            summary = re.match(r"/\* size: (\d+), cachelines", stripped)
            if summary:
                current.size = int(summary.group(1))
            sums = re.match(r"/\* sum members: (\d+), holes: (\d+), sum holes: (\d+)", stripped)
            if sums:
                current.sum_members, current.sum_holes = int(sums.group(1)), int(sums.group(3))
            pad = re.match(r"/\* padding: (\d+) \*/", stripped)
            if pad:
                current.padding = int(pad.group(1))
            bpad = re.match(r"/\* bit_padding: (\d+) bits \*/", stripped)
            if bpad:
                current.bit_padding = int(bpad.group(1))
            hole = re.match(r"/\* XXX (\d+) (byte|bit)s? hole", stripped)
            if hole:
                current.holes.append((int(hole.group(1)), hole.group(2) + "s"))
        if stripped.endswith("{"):
            depth += 1
            continue
        pos = _PAHOLE_POS.search(line)
        if stripped.startswith("}"):
            depth -= 1
            if depth == 1 and pos:
                bit = int(pos.group(2)) if pos.group(2) is not None else None
                current.members.append((member_name(line[:pos.start()].strip()),
                                        int(pos.group(1)), int(pos.group(3)), bit))
            continue
        if depth == 1 and pos and not stripped.startswith("/*"):
            bit = int(pos.group(2)) if pos.group(2) is not None else None
            decl = line[:pos.start()].strip()
            current.members.append((member_name(decl), int(pos.group(1)), int(pos.group(3)), bit))
    return found


def run_gdb_ptype(obj, *names) -> dict[str, RefStruct]:
    require_tool("gdb", "gdb")
    argv = ["gdb", "-batch", "-nx", "-ex", "set language c++", "-ex", "set width 0"]
    for n in names:
        argv += ["-ex", f"echo @@@{n}\\n", "-ex", f"ptype /o {n}"]
    out = subprocess.run(argv + [str(obj)], capture_output=True, text=True, check=True).stdout
    result = {}
    for chunk in out.split("@@@")[1:]:
        name, _, body = chunk.partition("\n")
        result[name] = parse_gdb_ptype(name, body)
    return result


def parse_gdb_ptype(name: str, text: str) -> RefStruct:
    ref = RefStruct(name)
    depth = 0
    is_union = None
    for line in text.splitlines():
        stripped = line.strip()
        if "type = " in line:
            depth = 1
            is_union = " union " in line or "type = union" in line
            continue
        if depth == 1:
            hole = re.match(r"/\* XXX\s+(\d+)-(byte|bit) (hole|padding)", stripped)
            if hole:
                size, unit, what = int(hole.group(1)), hole.group(2) + "s", hole.group(3)
                if what == "hole":
                    ref.holes.append((size, unit))
                elif unit == "bytes":
                    ref.padding = size
                else:
                    ref.bit_padding = size
            total = re.match(r"/\* total size \(bytes\):\s+(\d+) \*/", stripped)
            if total:
                ref.size = int(total.group(1))
        pos = _GDB_POS.match(line)
        if pos and depth == 1:
            offset = int(pos.group(1)) if pos.group(1) is not None else 0
            bit = int(pos.group(2)) if pos.group(2) is not None else None
            decl = pos.group(4)
            ref.members.append((member_name(decl.rstrip("{").strip()) if not decl.endswith("{")
                                else None, offset, int(pos.group(3)), bit))
        if stripped.endswith("{"):
            depth += 1
        elif stripped.startswith("}"):
            depth -= 1
            if depth == 1 and ref.members and ref.members[-1][0] is None:
                pending = ref.members.pop()
                ref.members.append((member_name(stripped), *pending[1:]))
    return ref


def gdb_base_offsets(obj, derived: str, bases: list[str]) -> dict[str, int]:
    require_tool("gdb", "gdb")
    argv = ["gdb", "-batch", "-nx", "-ex", "set language c++"]
    for b in bases:
        argv += ["-ex", f"print (long)({b}*)({derived}*)4096 - 4096"]
    out = subprocess.run(argv + [str(obj)], capture_output=True, text=True, check=True).stdout
    values = [int(v) for v in re.findall(r"^\$\d+ = (-?\d+)", out, re.MULTILINE)]
    return dict(zip(bases, values))
