#!/usr/bin/env python3
"""Struct probe compiles that the preprocessed text says must fail, against the compiler itself:
every such prediction of one extraction compiled anyway.

    python3 -m bench.doomed_vs_compiler [SOURCE] [--headers-from SPEC ...] [--jobs 2] [--code DIR]

SOURCE defaults to the unpacked vLLM 0.10.2 sdist the real-input tests use; a system file
(Triton's five repositories) works as it does for ``archdiff extract``; ``--headers-from``
gives the build's dependencies as ``archdiff extract`` takes them (wheels already unpacked in the
shared test cache are used, as ``bench.probe_compilers`` does). One cold extraction with default
probes, in this process. Each time ``extractor.structs.doomed.certain_failure`` says a compile
must fail, the real compiler runs the same command on the same source, and must fail. Prints how
many predictions the compiler confirms, the CPU seconds those compiles cost (what the prediction
saves when nobody reads their message), and every compile that did not fail. Never asserts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

if "--code" in sys.argv:  # measure another checkout's code (the benchmark itself stays this one)
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--code") + 1]).resolve()))
sys.path.insert(1 if "--code" in sys.argv else 0, str(Path(__file__).resolve().parent.parent))

from bench.probe_compilers import DEFAULT_TREE, WHEELS  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", nargs="?", default=str(DEFAULT_TREE))
    parser.add_argument("--headers-from", action="append", default=[])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--code", help="another checkout to measure")
    args = parser.parse_args(argv)

    from archdiff.cli import cli
    from extractor.structs import attempts

    predict = attempts.certain_failure
    checked: list[tuple[str, str, int, float]] = []  # compiler, header, the compile's exit status, its CPU s

    def compared(argv, header, tmpdir, timeout, memory_bytes, cxx):
        told = predict(argv, header, tmpdir, timeout, memory_bytes, cxx)
        if told:
            scratch = Path(tmpdir)
            real = [*argv[:-2], "-o", str(scratch / "check.o")]
            # its own CPU (wait4), not the children's of this process: probe compiles end meanwhile
            child = subprocess.Popen(real, cwd=scratch, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _pid, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            (scratch / "check.o").unlink(missing_ok=True)
            checked.append((Path(argv[0]).name, str(header), child.returncode, usage.ru_utime + usage.ru_stime))
        return told

    attempts.certain_failure = compared
    with tempfile.TemporaryDirectory(prefix="archdiff-bench-doomed-") as tmp:
        cache = Path(tmp) / "cache"
        if args.headers_from and WHEELS.is_dir():
            shutil.copytree(WHEELS, cache / "wheels")
        headers = [flag for spec in args.headers_from for flag in ("--headers-from", spec)]
        status = cli.main(args=["extract", args.spec, *headers, "-j", str(args.jobs), "--cache-dir", str(cache),
                                "-o", f"{tmp}/out"], prog_name="archdiff", standalone_mode=False)
    if status:
        print(f"the extraction failed (exit {status})")
        return status
    failed = sum(1 for _c, _h, status, _cpu in checked if status != 0)
    print(f"{len(checked)} compiles told to fail by their preprocessed text; the compiler failed {failed} of them, "
          f"in {sum(cpu for *_rest, cpu in checked):.2f} CPU s")
    for compiler, header, status, cpu in checked:
        print(f"  {'failed' if status else 'COMPILED':8} {cpu:6.2f} s  {compiler:12} {header}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
