"""Why a layout is unresolved, in terms a user can act on.

From a failed probe's first error line: the header the compiler could not find (`fatal error:
torch/all.h: No such file or directory`, nvcc's `cannot open source file "torch/all.h"`) or the
name it did not know (`'at' has not been declared`, `identifier "uint32_t" is undefined`,
`‘Tensor’ in namespace ‘at’ does not name a type`: ``at::Tensor``); and,
from ``suppliers.yaml``, what would supply it (``--headers-from pypi:torch==2.8.0``, ``apt:
libboost-dev``). The version of a PyPI package is the one the analysed project pins in its
``pyproject.toml`` build requirements, when it does.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path

from extractor.support.datafile import load_data_file

SUPPLIERS_FILE = Path(__file__).with_name("suppliers.yaml")
SCHEMA = {"suppliers": [{"supply": str, "package?": str, "headers?": [str], "symbols?": [str]}]}
_MISSING_HEADER = (re.compile(r"fatal error: ([^\s:]+): No such file or directory"),
                   re.compile(r'cannot open source file "([^"]+)"'),
                   re.compile(r"fatal error: '([^']+)' file not found"))
# A name the compiler looked for in a scope it names: ``scope::name`` is what is missing. Tried
# before the unscoped forms, which read GCC's "‘ostream’ in namespace ‘std’ does not name a type"
# as a missing ``std`` (Triton's pb_exception.h); nvcc's form has no unscoped reading at all.
_MISSING_IN_SCOPE = (re.compile(r"[‘'`](?P<name>[\w:]+)[’'`] in (?:namespace )?[‘'`](?:(?:class|struct|union|enum) )?"
                                r"(?P<scope>[^’'`]+)[’'`] does not name a (?:template )?type"),
                     re.compile(r"[‘'`](?P<name>[\w:]+)[’'`] is not a member of [‘'`](?P<scope>[^’'`]+)[’'`]"),
                     re.compile(r'(?:namespace|class|struct|union) "(?P<scope>[^"]+)" has no member '
                                r'(?:class |template )?"(?P<name>[\w:]+)"'))
_MISSING_SYMBOL = (re.compile(r"[‘'`]([\w:]+)[’'`] (?:has not been declared|was not declared|does not name a "
                              r"type|is not a (?:namespace|member|type)|not declared in this scope)"),
                   re.compile(r'identifier "([\w:]+)" is undefined'),
                   re.compile(r'name followed by "::" must be a class or namespace name.*"([\w:]+)"'),
                   re.compile(r"unknown type name '([\w:]+)'"))


@dataclasses.dataclass(frozen=True, slots=True)
class Supplier:
    supply: str
    package: str
    headers: tuple[str, ...]
    symbols: tuple[str, ...]


@functools.cache
def load_suppliers(path: Path = SUPPLIERS_FILE) -> tuple[Supplier, ...]:
    data = load_data_file(path, SCHEMA)
    return tuple(Supplier(s["supply"], s.get("package", ""), tuple(s.get("headers", ())), tuple(s.get("symbols", ())))
                 for s in data["suppliers"])


# the compiler stopped at the probe's address-space cap, not at anything the tree lacks
_OUT_OF_MEMORY = re.compile(r"out of memory|virtual memory exhausted|Cannot allocate memory|std::bad_alloc")


def ran_out_of_memory(error: str) -> bool:
    return bool(_OUT_OF_MEMORY.search(error))


def missing_from(error: str) -> str:
    """The header or name a compiler error says is missing; "" when it says something else."""
    for pattern in _MISSING_HEADER:
        if m := pattern.search(error):
            return m.group(1)
    return missing_name(error)


def missing_name(error: str) -> str:
    """The name (not a header) a compiler error says is not declared, with the scope it was
    looked for in when the error names one (``std::ostream``, ``at::Tensor``); "" for anything else."""
    for scoped in _MISSING_IN_SCOPE:
        if m := scoped.search(error):
            return f"{m.group('scope')}::{m.group('name')}"
    for pattern in _MISSING_SYMBOL:
        if m := pattern.search(error):
            return m.group(1)
    return ""


def includer_may_cure(error: str) -> bool:
    """Whether what an includer has before its #include could make the header compile: a name
    not declared yet or a type not complete yet. A missing header it cannot supply."""
    return "incomplete type" in error or bool(missing_name(error))


def supplier_for(missing: str, pins: dict[str, str] | None = None, given: Iterable[str] = ()) -> str:
    """What supplies ``missing`` (a header path or a name), "" when archdiff knows nothing. A
    header matches a rule that is its prefix (`boost/`, `cuda_fp16`) or, for rules starting with a
    dot, its suffix (`.pb.h`); the longest matching rule wins (`.grpc.pb.h` over `.pb.h`).

    ``given``: the ``--headers-from`` specs of the run. When the supplier is a distribution given
    there, asking for it again would be no fix, so the answer says what is left: a header it lacks
    needs another version of it; a name it should declare was not declared by what the header
    includes (vLLM's `selective_scan.h` uses `at::` and includes no torch header: its includers
    do; machete uses `cutlass::InterleavedNumericArrayConverter`, which vLLM's own CUTLASS
    extensions declare), or needs another version."""
    if not missing:
        return ""
    best, length = None, 0
    if "/" in missing or "." in missing:
        for s in load_suppliers():
            for h in s.headers:
                hit = missing.endswith(h) if h.startswith(".") else missing.startswith(h)
                if hit and len(h) > length:
                    best, length = s, len(h)
    else:
        first = missing.split("::", 1)[0]
        best = next((s for s in load_suppliers() if first in s.symbols), None)
    if best is None:
        return ""
    if best.package and _distribution(best.package) in {_distribution(spec) for spec in given}:
        if length:
            return f"another version of {best.package}: the one given to --headers-from lacks it"
        return (f"an #include of what declares it ({best.package} is given: the header leans on its includers), "
                "or another version")
    return _versioned(best, pins or {})


def _distribution(spec: str) -> str:
    """A distribution's normalised name from ``pypi:NAME[==VERSION]`` or an installed NAME."""
    name = re.split(r"[=<>!~\[ ]", spec.removeprefix("pypi:"), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def _versioned(s: Supplier, pins: dict[str, str]) -> str:
    version = pins.get(s.package.lower(), "") if s.package else ""
    return s.supply.replace("{version}", f"=={version}" if version else "")


def pinned_versions(roots: Iterable[Path]) -> dict[str, str]:
    """`name -> version` for `name == version` build requirements in the roots' pyproject.toml."""
    pins: dict[str, str] = {}
    for root in roots:
        try:
            data = tomllib.loads((Path(root) / "pyproject.toml").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for req in data.get("build-system", {}).get("requires", ()) or ():
            if isinstance(req, str) and (m := re.fullmatch(r"\s*([A-Za-z0-9._-]+)\s*==\s*([\w.+!-]+)\s*", req)):
                pins.setdefault(m.group(1).lower(), m.group(2))
    return pins
