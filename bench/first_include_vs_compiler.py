#!/usr/bin/env python3
"""Struct probes that stop at their header's first #include, told without a compiler, against
the compiler itself: every prediction of one extraction compiled anyway.

    python3 -m bench.first_include_vs_compiler [SOURCE|SYSTEM.yaml ...] [--jobs 2] [--code DIR]

SOURCE defaults to the unpacked vLLM 0.10.2 sdist the real-input tests use; a system file
(Triton's five repositories) works as it does for ``archdiff extract``. One cold extraction with
default probes, in this process. Each time a probe's compile is predicted to stop at a missing
include (``extractor.structs.firstinclude``), the real compiler runs the same command on the
same source (its object and dependency list written elsewhere, so the probe does not see them),
and its output, source excerpts left out, is compared with the prediction. Prints how many
predictions agree, the CPU seconds the compiles cost (what the prediction saves), and every
disagreement with both texts. Never asserts.
"""

from __future__ import annotations

import argparse
import collections
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

if "--code" in sys.argv:  # measure another checkout's code (the benchmark itself stays this one)
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--code") + 1]).resolve()))
sys.path.insert(1 if "--code" in sys.argv else 0, str(Path(__file__).resolve().parent.parent))

DEFAULT_TREE = Path.home() / ".cache" / "archdiff-tests" / "vllm-0.10.2"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", default=[str(DEFAULT_TREE)])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--code", help="another checkout to measure")
    args = parser.parse_args(argv)

    from archdiff.cli import cli
    from extractor.structs import attempts
    from extractor.structs.firstinclude import without_excerpts

    predict = attempts.stopping_include
    checked: list[tuple[str, str, str | None, float]] = []  # compiler, header, differing output, CPU s

    def compared(source: str, line: int, header: str, search, command_argv, included=frozenset()):
        predicted = predict(source, line, header, search, command_argv, included)
        if predicted is not None:
            scratch = Path(source).parent
            real = [*command_argv[:-2], "-MD", "-MF", str(scratch / "check.d"), "-o", str(scratch / "check.o")]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run(real, cwd=scratch, capture_output=True, text=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            stderr = without_excerpts(done.stderr)
            differs = None if done.returncode != 0 and stderr == predicted else \
                f"exit {done.returncode}\n--- predicted\n{predicted}--- compiler\n{stderr}"
            checked.append((Path(command_argv[0]).name, header, differs, cpu))
        return predicted

    attempts.stopping_include = compared
    with tempfile.TemporaryDirectory(prefix="archdiff-bench-first-include-") as tmp:
        status = cli.main(args=["extract", *args.sources, "-j", str(args.jobs), "--cache-dir", f"{tmp}/cache",
                                "-o", f"{tmp}/out"], prog_name="archdiff", standalone_mode=False)
    if status:
        print(f"the extraction failed (exit {status})")
        return status
    by_compiler: dict[str, list[float]] = collections.defaultdict(list)
    for compiler, _header, _differs, cpu in checked:
        by_compiler[compiler].append(cpu)
    agree = sum(1 for _c, _h, differs, _cpu in checked if differs is None)
    print(f"{len(checked)} compiles predicted to stop at a first include; {agree} agree with the compiler")
    print(f"{'compiler':28} {'predicted':>9} {'CPU s the compiles cost':>24}")
    for compiler, cpus in sorted(by_compiler.items()):
        print(f"{compiler:28} {len(cpus):>9} {sum(cpus):>24.2f}")
    for compiler, header, differs, _cpu in checked:
        if differs is not None:
            print(f"\nDISAGREES: {compiler} {header}\n{differs}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
