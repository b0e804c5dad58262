"""The probe cache: one JSON file per probe, named by the hash of everything the probe depends on
(compiler, flags, the header's include closure, the build context), so it is shared by every run,
release and system that probes the same bytes the same way."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from extractor.model import Diagnostic, Severity, to_jsonable
from extractor.structs.records import Hole, Member, MemberKind, Method, StructLayout


@dataclasses.dataclass(frozen=True, slots=True)
class ProbeResult:
    path: str
    layouts: tuple[StructLayout, ...]
    diagnostics: tuple[Diagnostic, ...] = ()
    cached: bool = False
    compiled: bool = False


def cache_load(cache_dir: Path, key: str) -> ProbeResult | None:
    path = cache_dir / "structs-probe" / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ProbeResult(
            data["path"], tuple(layout_from_dict(d) for d in data["layouts"]),
            tuple(Diagnostic(d["path"], d["line"], d["code"], d["message"],
                             Severity(d["severity"])) for d in data["diagnostics"]),
            compiled=data.get("compiled", False))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def cache_store(cache_dir: Path, key: str, result: ProbeResult) -> None:
    folder = cache_dir / "structs-probe"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{key}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps({"path": result.path, "compiled": result.compiled,
                                   "layouts": to_jsonable(result.layouts),
                                   "diagnostics": to_jsonable(result.diagnostics)},
                                  sort_keys=True), encoding="utf-8")
        tmp.replace(folder / f"{key}.json")
    except OSError:
        pass  # a cache that cannot be written only costs time


def layout_from_dict(data: dict) -> StructLayout:
    """Inverse of ``to_jsonable`` for a StructLayout."""
    members = tuple(Member(**{**m, "kind": MemberKind(m["kind"])}) for m in data["members"])
    holes = tuple(Hole(**h) for h in data["holes"])
    fields = {**data, "members": members, "holes": holes, "method": Method(data["method"]),
              "tags": tuple(data["tags"])}
    return StructLayout(**fields)


