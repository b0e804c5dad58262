"""nvcc's host side alone: a CUDA probe's layout without compiling its device code.

A probe reads the layouts from the host object's DWARF: what nvcc's host compiler lays out. nvcc
also compiles the device side (a second preprocessing, cicc, ptxas, fatbinary), a third of its
CPU: 0.9 of custom_all_reduce.cuh's 2.8 CPU s, 18.5 of 60 for a header that includes torch's.
Here nvcc's own pipeline for the probe's command (``nvcc --dryrun``, which only prints it) runs
without cicc, ptxas and fatbinary, in one process group under the same CPU budget:

1. the device-side preprocessing (nvcc runs it first when asked for ``-MD``: an ``#include`` that
   only device code makes fails there, as under nvcc), and the host side's;
2. the dependency list nvcc would write: both passes' ``-MD`` output, merged;
3. cudafe++, which splits the host code from the device code;
4. the host compiler on cudafe++'s output, with an empty stub where cicc writes the kernels'
   registration code (it defines functions, no type a probed header declares).

The layouts, the failures of every step it runs and their messages are nvcc's; a header that
would fail only in cicc (device code the host side never sees) is laid out. The pipeline is used
only in the shape this module knows (the tools in the order CUDA 13 runs them, for one GPU
architecture); any other shape, a path or flag with a character a shell would read, or a
``--dryrun`` that fails leaves the compile to nvcc itself (:func:`host_script` returns None).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from extractor.structs.compilers import run_compiler
from extractor.structs.probeguard import parse_depfile
from extractor.support.safeproc import Finished

# Characters a path or flag of the pipeline may hold for it to be written into a script
_PLAIN = re.compile(r"[\w./+=,:@%-]*")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)=(.*)")
_VARIABLE = re.compile(r"\$([A-Za-z_][A-Za-z_0-9]*)")
_FILTER = re.compile(r"-- Filter Dependencies -- > (.*)")
# the tools of nvcc -c -MD's pipeline for one architecture, in order (each line's program name)
_SHAPE = ("gcc", "gcc", "filter", "cudafe++", "cicc", "ptxas", "fatbinary", "rm", "gcc")
_DEVICE_DEPS, _HOST_DEPS = "nvcchost-device.d", "nvcchost-host.d"


def run_probe_compile(argv: Sequence[str], tmpdir: Path, timeout: float, memory_bytes: int) -> Finished:
    """Run a probe's compile ``argv`` (``... -MD -MF DEPFILE ... SOURCE -o OBJECT``) in ``tmpdir``
    as :func:`~extractor.structs.compilers.run_compiler` does; nvcc's as its host side alone
    where this module knows its pipeline."""
    if Path(argv[0]).name.startswith("nvcc"):
        host = host_script(argv, tmpdir, timeout, memory_bytes)
        if host is not None:
            script, depfile, scratch = host
            # the source named after the script (which ignores it): what a reader of the process
            # list sees compiled
            source = next((a for a in reversed(argv) if a.endswith(".cu")), "")
            done = run_compiler([str(script), source], tmpdir, timeout, memory_bytes)
            merge_dependencies(tmpdir, depfile, argv[-1])
            for path in scratch:  # nvcc removes its intermediate files (torch's run to tens of MB)
                path.unlink(missing_ok=True)
            return done
    return run_compiler(argv, tmpdir, timeout, memory_bytes)


def host_script(argv: Sequence[str], tmpdir: Path, timeout: float, memory_bytes: int
                ) -> tuple[Path, Path, list[Path]] | None:
    """A shell script that runs nvcc's pipeline for ``argv`` (an ``nvcc ... -MD -MF DEPFILE ... -c
    SOURCE -o OBJECT`` command) without its device compile, the dependency file nvcc would write,
    and the intermediate files the script leaves; None when the pipeline is not the one this
    module knows."""
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    done = run_compiler([*argv, "--dryrun"], tmpdir, timeout, memory_bytes, env=env)
    if done.returncode != 0:
        return None
    variables: dict[str, str] = {}
    steps: list[list[str]] = []
    names: list[str] = []
    depfile = ""
    for line in done.stderr.decode("utf-8", errors="replace").splitlines():
        if not line.startswith("#$ "):
            continue
        body = line[3:].strip()
        if (filtered := _FILTER.fullmatch(body)) is not None:
            depfile = filtered.group(1).strip().strip('"')
            names.append("filter")
            continue
        try:
            words = shlex.split(body)
        except ValueError:
            return None
        if not words:
            return None
        assigned = _ASSIGNMENT.fullmatch(words[0])
        if assigned is not None:
            name, value = assigned.groups()
            variables[name] = " ".join([value, *words[1:]]).strip()
            continue
        words = [_VARIABLE.sub(lambda m: variables.get(m.group(1), ""), w) for w in words]
        names.append(Path(words[0]).name)
        steps.append(words)
    if tuple(names) != _SHAPE or not depfile:
        return None
    device, host, cudafe, cicc, _ptxas, _fatbinary, _rm, compile_ = steps
    stub = _value_of(cicc, "--stub_file_name")
    run = (device, host, cudafe, compile_)
    if "-E" not in device or "-E" not in host or "-c" not in compile_ or not stub or \
            not all(_PLAIN.fullmatch(w) for w in (stub, depfile, *(w for step in run for w in step))):
        return None
    for name in (_DEVICE_DEPS, _HOST_DEPS):
        (tmpdir / name).unlink(missing_ok=True)
    lines = ["#!/bin/sh", "# nvcc's pipeline without its device compile (extractor/structs/nvcchost.py)",
             f"TMPDIR={shlex.quote(str(tmpdir))}", "export TMPDIR"]
    for name in ("PATH", "LD_LIBRARY_PATH"):
        if name in variables:
            lines += [f"{name}={shlex.quote(variables[name])}", f"export {name}"]
    lines += [_quoted([*device, "-MD", "-MF", _DEVICE_DEPS]) + " || exit $?",
              _quoted([*host, "-MD", "-MF", _HOST_DEPS]) + " || exit $?",
              _quoted(cudafe) + " || exit $?",
              f": > {shlex.quote(stub)}",
              "exec " + _quoted(compile_)]
    script = tmpdir / "nvcc-host.sh"
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    script.chmod(0o700)
    scratch = [_value_of(device, "-o"), _value_of(host, "-o"), _value_of(cudafe, "--gen_c_file_name"),
               _value_of(cudafe, "--module_id_file_name"), stub, _DEVICE_DEPS, _HOST_DEPS]
    return script, Path(depfile), [tmpdir / name for name in scratch if name and (tmpdir / name).parent == tmpdir]


def merge_dependencies(tmpdir: Path, depfile: Path, target: str) -> None:
    """Write ``depfile`` as nvcc does once both preprocessing passes have run: every file either
    pass read, in the order they were first read. Not written when a pass failed (nvcc stops
    before writing it too)."""
    seen: dict[str, None] = {}
    for name in (_DEVICE_DEPS, _HOST_DEPS):
        try:
            text = (tmpdir / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        for path in parse_depfile(text, tmpdir):
            seen.setdefault(str(path).replace(" ", "\\ "), None)
    depfile.write_text(f"{target} : " + " \\\n    ".join(seen) + "\n", encoding="utf-8")


def _value_of(words: Sequence[str], flag: str) -> str:
    for n, word in enumerate(words[:-1]):
        if word == flag:
            return words[n + 1]
    return ""


def _quoted(words: Sequence[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)
