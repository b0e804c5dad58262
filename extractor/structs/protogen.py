"""Protobuf headers a tree generates at build time (`#include "model_config.pb.h"`), generated here.

Triton's C++ includes `model_config.pb.h`, which its build makes from `model_config.proto`. When
``protoc`` is installed, the tree's ``.proto`` files are compiled with it (``--cpp_out``, and
``--grpc_out`` when ``grpc_cpp_plugin`` is installed too) into a temporary directory that the
probes get as an include directory. protoc only parses the ``.proto`` files; nothing of the
analysed project is run. Its imports are bounded like a probe's includes: a directory of
``.proto`` files whose dependency list (``--dependency_out``) reaches a file outside the source
roots and protoc's own include directory is dropped, and what it generated is not used.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from extractor.support.safeproc import run_bounded
from extractor.structs.compilers import compiler_identity
from extractor.structs.probeguard import allowed_dirs, outside, parse_depfile

_SKIP_DIRS = {".git", "node_modules", "__pycache__", "third_party", "build", "dist"}
_TIMEOUT = 120.0
_MEMORY = 2 * 1024**3


@dataclasses.dataclass(frozen=True, slots=True)
class Generated:
    directory: Path | None  # where the headers are; None when nothing was generated
    digest: str  # of the .proto inputs and the generators: part of every probe's cache key
    protos: int = 0  # .proto files found
    generated: int = 0  # .pb.h files written
    refused: int = 0  # .proto directories dropped (imports outside the tree, or protoc failed)


def find_protos(roots: Sequence[Path]) -> list[Path]:
    found: list[Path] = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
            found.extend(Path(dirpath) / f for f in sorted(filenames)
                         if f.endswith(".proto") and not os.path.islink(os.path.join(dirpath, f)))
    return found


def _generate(protoc: str, plugin: str | None, directory: Path, system: Path, proto: Path, into: Path,
              allowed) -> Path | None:
    """Compile one .proto into a staging directory under ``into``; None when protoc failed or read a
    file outside the allowed places (nothing it wrote is kept then)."""
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=into))
    depfile = staging / "deps.d"
    argv = [protoc, f"-I{directory}", f"-I{system}", f"--cpp_out={staging}", f"--dependency_out={depfile}"]
    if plugin:
        argv += [f"--plugin=protoc-gen-grpc={plugin}", f"--grpc_out={staging}"]
    argv.append(str(proto))
    try:
        done = run_bounded(argv, cwd=staging, timeout=_TIMEOUT, memory_bytes=_MEMORY)
    except OSError:
        done = None
    deps = parse_depfile(depfile.read_text(encoding="utf-8", errors="replace"), staging) if depfile.is_file() else None
    if done is None or done.returncode or done.timed_out or deps is None or outside(deps, allowed):
        shutil.rmtree(staging, ignore_errors=True)
        return None
    return staging


def generate_protobuf_headers(roots: Sequence[Path], into: Path) -> Generated:
    """Compile every ``.proto`` of ``roots`` into ``into`` (per directory, that directory as the
    import root); the directory is returned only if something was generated."""
    protoc = shutil.which("protoc")
    protos = find_protos(roots)
    if protoc is None or not protos:
        return Generated(None, "", len(protos))
    plugin = shutil.which("grpc_cpp_plugin")
    h = hashlib.sha256(f"{compiler_identity(protoc)}\n{bool(plugin)}\n".encode())
    for p in protos:
        h.update(hashlib.sha256(p.read_bytes()).digest())
    by_dir: dict[Path, list[Path]] = {}
    for p in protos:
        by_dir.setdefault(p.parent, []).append(p)
    system = Path(protoc).resolve().parent.parent / "include"  # google/protobuf/*.proto
    allowed = allowed_dirs(roots, [system], [into])
    generated = refused = 0
    for directory, files in sorted(by_dir.items()):
        # one file per run: protoc writes a dependency list for one input only
        staged = [_generate(protoc, plugin, directory, system, f, into, allowed) for f in files]
        ready = [staging for staging in staged if staging is not None]
        if len(ready) < len(staged):
            refused += 1
            for staging in ready:
                shutil.rmtree(staging, ignore_errors=True)
            continue
        for staging in ready:
            for produced in sorted(staging.rglob("*")):
                if produced.is_file() and produced.name != "deps.d":
                    target = into / produced.relative_to(staging)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if not target.exists():  # two directories generating one name: the first keeps it
                        produced.replace(target)
                        generated += target.name.endswith(".pb.h")
            shutil.rmtree(staging, ignore_errors=True)
    # what was generated is part of the identity too: a run whose protoc failed must not share
    # its cached probes with one where it worked
    h.update("\n".join(sorted(p.relative_to(into).as_posix() for p in into.rglob("*.h"))).encode())
    return Generated(into if generated else None, h.hexdigest(), len(protos), generated, refused)
