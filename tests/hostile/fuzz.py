"""A seeded random mutator over archdiff's readers of untrusted bytes.

Each target has seeds generated here (PromQL expressions, rule files and dashboards, archives,
ELF objects compiled from tiny C and C++ files, an evidence file), a mutator that flips, inserts,
deletes, repeats and splices bytes, and an oracle: the reader must return a clean result or raise
archdiff's own error type. Anything else is a failure: another exception, a worker that crashed
(SIGSEGV, an abort) or overran its time. Inputs run in archdiff's own guarded worker pool
(``extractor.run.workerpool``), so a hang or a crash is reported instead of taking the suite down.

Everything is derived from ``(seed, target, iteration)``: a failure prints the command that
replays that one input::

    python -m tests.hostile.fuzz TARGET SEED ITERATION
"""

from __future__ import annotations

import dataclasses
import io
import json
import random
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from extractor.run.workerpool import Failure, run_guarded

INPUT_TIMEOUT = 20.0  # seconds for one input: far above what any of these readers needs
WORKER_MEMORY = 1024**3
_BATCH = 64


# -- the mutator -------------------------------------------------------------------------------

_INTERESTING = [b"\x00", b"\xff", b"\x7f", b"\x80", b"\n", b"\r\n", b"\t", b" ", b"{", b"}", b"[", b"]", b"(", b")",
                b'"', b"'", b"\\", b":", b",", b"-", b"#", b"&a ", b"*a", b"!!", b"---", b"0", b"-1", b"1e309",
                b"NaN", b"\xef\xbb\xbf", b"\xc3", b"\xed\xa0\x80"]
_INTEGERS = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 2**63 - 1, 2**64 - 1]


def mutate(rng: random.Random, seeds: list[bytes], words: list[bytes]) -> bytes:
    """One input: a seed with 1 to 8 random edits."""
    data = bytearray(rng.choice(seeds))
    for _ in range(rng.randint(1, 8)):
        choice = rng.randrange(10)
        pos = rng.randint(0, len(data))
        if choice == 0 and data:  # flip a bit
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        elif choice == 1:  # an interesting byte sequence
            data[pos:pos] = rng.choice(_INTERESTING)
        elif choice == 2:  # a word of the target's language
            data[pos:pos] = rng.choice(words) if words else b""
        elif choice == 3 and data:  # delete a range
            data[pos:pos + rng.randint(1, 64)] = b""
        elif choice == 4 and data:  # repeat a range: long runs, deep nesting
            end = min(len(data), pos + rng.randint(1, 16))
            data[pos:pos] = data[pos:end] * rng.choice([2, 8, 64, 512])
        elif choice == 5 and len(data) >= 8:  # overwrite with an edge-case integer (binary formats)
            i = rng.randrange(len(data) - 7)
            width = rng.choice([1, 2, 4, 8])
            value = rng.choice(_INTEGERS) & ((1 << (8 * width)) - 1)
            data[i:i + width] = value.to_bytes(width, "little")
        elif choice == 6:  # splice in part of another seed
            other = rng.choice(seeds)
            start = rng.randint(0, len(other))
            data[pos:pos] = other[start:start + rng.randint(1, 256)]
        elif choice == 7 and data:  # truncate
            del data[rng.randint(0, len(data) - 1):]
        elif choice == 8 and data:  # a random byte
            data[rng.randrange(len(data))] = rng.randrange(256)
        else:  # copy a range over another place
            start = rng.randint(0, len(data))
            chunk = bytes(data[start:start + rng.randint(1, 32)])
            data[pos:pos + len(chunk)] = chunk
    return bytes(data)


# -- targets -----------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Target:
    name: str
    seeds: Callable[[Path], list[bytes]]  # generated into a scratch directory
    words: list[bytes]
    run: Callable[[bytes], Any]  # in a worker: the reader on one input; raises what it raises
    allowed: Callable[[], tuple[type[BaseException], ...]]  # archdiff's own error types for it


def _promql_seeds(_scratch: Path) -> list[bytes]:
    metrics = ["vllm:num_requests_waiting", "nv_inference_queue_duration_us", "http_requests_total", "up"]
    exprs = [
        'sum(rate({m}[5m])) by (model_name) > 10',
        'histogram_quantile(0.99, sum by (le) (rate({m}_bucket{{job="x", model=~"l.*"}}[1m]))) >= 0.5',
        '{m} offset 5m / ignoring(instance) group_left {m} < bool 3',
        'avg_over_time({m}[$__rate_interval]) * on(pod) ${{var}} + [[legacy]] - <<.Series>>{{<<.LabelMatchers>>}}',
        '-{m} # comment\n or vector(0) unless count_values("v", {m}) != 1e3',
        'topk(5, {m}{{__name__="{m}"}}) and absent({m}) == 0x1F',
    ]
    return [e.format(m=m).encode() for e in exprs for m in metrics]


def _run_promql(data: bytes) -> Any:
    from extractor.telemetry.promql import Analysis, analyse, tokenize

    text = data.decode("utf-8", errors="replace")
    result = analyse(text)
    assert isinstance(result, Analysis) and all(isinstance(m, str) for m in result.metrics), result
    try:
        tokenize(text)
    except ValueError as err:
        from extractor.telemetry.promql import PromQLError

        if not isinstance(err, PromQLError):
            raise
    return result


_RULES = b"""groups:
  - name: vllm
    rules:
      - alert: QueueTooLong
        expr: sum(vllm:num_requests_waiting) by (model_name) > 10
        for: 5m
        labels: {severity: warning}
      - record: job:latency:p99
        expr: histogram_quantile(0.99, rate(vllm:e2e_request_latency_seconds_bucket[5m]))
"""
_HPA = b"""apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
spec:
  metrics:
    - type: Pods
      pods:
        metric: {name: vllm_waiting}
        target: {type: AverageValue, averageValue: {{ .Values.target }}}
---
rules:
  - seriesQuery: 'vllm:num_requests_waiting{namespace!=""}'
    name: {matches: "^(.*)$", as: "${1}_avg"}
    metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
"""
_QUEUE_PANEL = {"title": "Queue", "type": "timeseries", "targets": [{"expr": "vllm:num_requests_waiting"}],
                "fieldConfig": {"defaults": {"thresholds": {"mode": "absolute", "steps": [
                    {"color": "green", "value": None}, {"color": "red", "value": 80}]}}}}
_OLD_PANEL = {"title": "Old", "targets": [{"expr": "up > 0"}], "thresholds": [{"value": 3, "op": "gt"}],
              "alert": {"conditions": [{"evaluator": {"type": "gt", "params": [5]}}]}}
_DASHBOARD = json.dumps({"dashboard": {"title": "vLLM", "schemaVersion": 39, "panels": [
    _QUEUE_PANEL, {"title": "Row", "type": "row", "panels": [_OLD_PANEL]}]}}, indent=1).encode()
_OLD_DASHBOARD = json.dumps({"rows": [{"panels": [{"targets": [{"expr": "rate(x[1m])"}], "thresholds": "80,90"}]}],
                             "schemaVersion": 12}).encode()


def _scan_thresholds(language: str, data: bytes) -> Any:
    """The threshold readers as a run calls them: through the scan boundary, which turns a
    reader's RecursionError on absurd nesting into a "nesting too deep" diagnostic by design.
    Any other exception a reader lets out is a bug the boundary would only hide: a finding."""
    from extractor.run import scan
    from extractor.telemetry import THRESHOLDS_STEP

    scan._init_worker((THRESHOLDS_STEP,))
    from extractor.run.facts import decode_result

    result = decode_result(scan.scan_file(language, data))  # what is cached decodes again
    bugs = [d for d in result.diagnostics if d[1] == "scanner-failed" and not d[2].endswith("nesting too deep")]
    assert not bugs, bugs
    return result


def _run_yaml_thresholds(data: bytes) -> Any:
    return _scan_thresholds("yaml", data)


def _run_json_thresholds(data: bytes) -> Any:
    return _scan_thresholds("json", data)


def _archive_seeds(_scratch: Path) -> list[bytes]:
    members = {"pkg-1.0/pkg/__init__.py": b"def f():\n    return 1\n", "pkg-1.0/pkg/sub/x.h": b"struct S { int a; };\n",
               "pkg-1.0/README": b"readme\n"}
    seeds = []
    for mode in ("w", "w:gz", "w:bz2", "w:xz"):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode=mode) as tar:
            for name, body in members.items():
                info = tarfile.TarInfo(name)
                info.size = len(body)
                tar.addfile(info, io.BytesIO(body))
            link = tarfile.TarInfo("pkg-1.0/link.py")
            link.type, link.linkname = tarfile.SYMTYPE, "pkg/__init__.py"
            tar.addfile(link)
        seeds.append(buffer.getvalue())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, body in members.items():
            zf.writestr(name, body)
    seeds.append(buffer.getvalue())
    return seeds


def _run_archive(data: bytes) -> Any:
    from extractor.acquire import archives

    with tempfile.TemporaryDirectory(prefix="fuzz-archive-") as scratch:
        base = Path(scratch)
        target = base / "cache" / "tree"
        if data.startswith(b"PK"):
            (base / "in.zip").write_bytes(data)
            archives.extract_zip(base / "in.zip", target)
        else:
            archives.extract_tar(io.BytesIO(data), target, name="in.tar")
        outside = [p for p in base.rglob("*") if p != base / "in.zip"
                   and not (p == target.parent or p.is_relative_to(target))]
        assert not outside, f"wrote outside the tree: {outside[:3]}"
        return sorted(p.relative_to(target).as_posix() for p in target.rglob("*"))


_C_SOURCE = b"""
#include <stdint.h>
struct inner { char c; double d; };
struct bits { unsigned a : 3; unsigned b : 7; int c : 1; uint64_t wide; };
union u { int i; float f; struct inner in; };
typedef struct { struct inner arr[4]; struct bits *next; union u un; char tail; } padded_t;
struct bits b_; union u u_; padded_t p_;
""" + b"".join(b"struct S%d { int a; char b[%d]; double c; } s%d_;\n" % (i, i + 1, i) for i in range(30))
# (enough types that the assembler compresses .debug_info for the -gz=zlib seed)
_CPP_SOURCE = b"""
namespace outer { namespace inner {
template <typename T> struct Box { T value; char flag; };
struct Base { virtual ~Base(); int id; };
struct Derived : Base { Box<double> box; Box<short> small[3]; long long big; };
Base::~Base() {}
} }
outer::inner::Derived d_;
"""


def _elf_seeds(scratch: Path) -> list[bytes]:
    seeds = []
    for name, source, compiler, flags in [("c.c", _C_SOURCE, "gcc", ["-gdwarf-4"]),
                                          ("cpp.cc", _CPP_SOURCE, "g++", ["-gdwarf-5"]),
                                          ("z.c", _C_SOURCE, "gcc", ["-gdwarf-5", "-gz=zlib"])]:
        (scratch / name).write_bytes(source)
        out = scratch / (name + ".o")
        subprocess.run([compiler, *flags, "-c", str(scratch / name), "-o", str(out)], check=True,
                       capture_output=True)
        seeds.append(out.read_bytes())
    with (scratch / "z.c.o").open("rb") as fh:
        from elftools.elf.elffile import ELFFile

        assert ELFFile(fh).get_section_by_name(".debug_info").compressed, "the -gz seed is not compressed"
    return seeds


def _run_dwarf(data: bytes) -> Any:
    from extractor.structs.dwarf import read_layouts

    with tempfile.TemporaryDirectory(prefix="fuzz-elf-") as scratch:
        path = Path(scratch) / "in.o"
        path.write_bytes(data)
        return len(read_layouts(path))


def _evidence_seeds(scratch: Path) -> list[bytes]:
    from extractor.context import ExtractOptions
    from extractor.run.pipeline import extract_system

    tree = scratch / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("from pkg.core import Engine\n")
    (tree / "pkg" / "core.py").write_text("class Engine:\n    def step(self) -> int:\n        return helper()\n\n\n"
                                          "def helper() -> int:\n    return 1\n")
    (tree / "pkg" / "k.h").write_text("struct Slot { int a; char b; };\n")
    (tree / "rules.yaml").write_bytes(_RULES)
    result = extract_system([str(tree)], options=ExtractOptions(cache_dir=scratch / "cache", probe_structs=False))
    return [result.text.encode()]


def _run_evidence(data: bytes) -> Any:
    from extractor.evidence.read import load_bundle

    with tempfile.TemporaryDirectory(prefix="fuzz-evidence-") as scratch:
        path = Path(scratch) / "evidence.json"
        path.write_bytes(data)
        bundle = load_bundle(path)
        assert isinstance(bundle, dict)
        return len(bundle)


def _user_yaml_seeds(_scratch: Path) -> list[bytes]:
    """A user's taxonomy: the shipped one cut to three roles, and the same with anchors and aliases."""
    import yaml

    from extractor.layers.taxonomy import TAXONOMY_FILE

    data = yaml.safe_load(TAXONOMY_FILE.read_text(encoding="utf-8"))
    small = yaml.safe_dump({**data, "roles": data["roles"][:3]}, sort_keys=False).encode()
    return [small, small.replace(b"stack:", b"x: &s [a, b]\nstack:", 1) + b"extra: [*s, *s]\n"]


def _run_user_yaml(data: bytes) -> Any:
    from extractor.support.datafile import load_data_file
    from extractor.layers.taxonomy import TAXONOMY_SCHEMA

    with tempfile.TemporaryDirectory(prefix="fuzz-user-yaml-") as scratch:
        path = Path(scratch) / "roles.yaml"
        path.write_bytes(data)
        return len(load_data_file(path, TAXONOMY_SCHEMA))


def _user_errors() -> tuple[type[BaseException], ...]:
    from extractor.errors import ArchdiffError

    return (ArchdiffError,)


def _dwarf_errors() -> tuple[type[BaseException], ...]:
    from extractor.structs.dwarf import DwarfReadError

    return (DwarfReadError,)


def _none() -> tuple[type[BaseException], ...]:
    return ()


_PROMQL_WORDS = [b"sum", b"rate", b"by", b"without", b"on", b"ignoring", b"group_left", b"offset", b"bool", b"[5m]",
                 b"{", b"=~", b"!~", b"${x}", b"[[x]]", b"<<.Series>>", b"__name__", b'"', b"`", b"1e3", b"0x"]
_YAML_WORDS = [b"groups:", b"rules:", b"expr:", b"- ", b"{{ .Values.x }}", b"{{- if x }}", b"&anchor ", b"*anchor",
               b"<<: ", b"!!str ", b"? ", b"|\n", b">-\n", b"\n---\n", b"seriesQuery:", b"averageValue:"]
_JSON_WORDS = [b'"panels"', b'"targets"', b'"expr"', b'"rows"', b'"thresholds"', b'"steps"', b'"value"', b"null",
               b"true", b"1e999", b"[", b"{", b'"alert"', b'"fieldConfig"', b'"\\ud800"']

TARGETS = {
    "promql": Target("promql", _promql_seeds, _PROMQL_WORDS, _run_promql, _none),
    "yaml-thresholds": Target("yaml-thresholds", lambda _: [_RULES, _HPA], _YAML_WORDS, _run_yaml_thresholds, _none),
    "json-thresholds": Target("json-thresholds", lambda _: [_DASHBOARD, _OLD_DASHBOARD], _JSON_WORDS,
                              _run_json_thresholds, _none),
    "archive": Target("archive", _archive_seeds, [b"../", b"/etc/", b"\x00", b"ustar"], _run_archive, _user_errors),
    "dwarf": Target("dwarf", _elf_seeds, [b".debug_info", b"\x00" * 8, b"\xff" * 8], _run_dwarf, _dwarf_errors),
    "evidence": Target("evidence", _evidence_seeds, [b'"schema_version"', b'"graph"', b'"nodes"', b"null", b"[]",
                                                    b"{}", b'"id"', b"1e999", b"-0"], _run_evidence, _user_errors),
    "user-yaml": Target("user-yaml", _user_yaml_seeds, [*_YAML_WORDS, b"roles:", b"signals:", b"weight:"],
                        _run_user_yaml, _user_errors),
}


# -- the loop ----------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Finding:
    target: str
    seed: int
    iteration: int
    problem: str
    data: bytes

    def render(self) -> str:
        shown = repr(self.data[:300]) + ("..." if len(self.data) > 300 else "")
        return (f"{self.target} seed {self.seed} iteration {self.iteration}: {self.problem}\n"
                f"  replay: python -m tests.hostile.fuzz {self.target} {self.seed} {self.iteration}\n"
                f"  input ({len(self.data)} bytes): {shown}")


def _check(item: tuple[str, bytes]) -> str:
    """In a worker: "" when the target's reader behaved, else what it did."""
    name, data = item
    target = TARGETS[name]
    try:
        target.run(data)
    except target.allowed() as err:
        if not str(err):
            return f"{type(err).__name__} without a message"
    except BaseException as err:  # noqa: BLE001 (this is the oracle)
        return f"{type(err).__name__}: {str(err)[:200]}"
    return ""


def input_for(target: Target, seeds: list[bytes], seed: int, iteration: int) -> bytes:
    return mutate(random.Random(f"{seed}:{target.name}:{iteration}"), seeds, target.words)


def fuzz(name: str, seed: int, seconds: float, scratch: Path, max_iterations: int = 1_000_000
         ) -> tuple[int, list[Finding]]:
    """Run ``name``'s target for about ``seconds``; (inputs tried, findings)."""
    target = TARGETS[name]
    seeds = target.seeds(scratch)
    findings: list[Finding] = []
    tried = 0
    deadline = time.monotonic() + seconds
    # the seeds themselves first: an oracle that rejects them is a broken oracle, not a finding
    for data in seeds:
        problem = _check((name, data))
        assert not problem, f"{name}: an unmutated seed fails: {problem}"
    while time.monotonic() < deadline and tried < max_iterations and not findings:
        batch = [input_for(target, seeds, seed, tried + i) for i in range(min(_BATCH, max_iterations - tried))]
        results = run_guarded([(name, data) for data in batch], _check, jobs=1, timeout=INPUT_TIMEOUT,
                              memory_bytes=WORKER_MEMORY)
        for i, (data, result) in enumerate(zip(batch, results)):
            if isinstance(result, Failure):
                problem = f"the reader's process {result.kind} ({result.detail})"
            else:
                problem = result
            if problem:
                findings.append(Finding(name, seed, tried + i, problem, data))
        tried += len(batch)
    return tried, findings


def _replay(name: str, seed: int, iteration: int) -> None:
    target = TARGETS[name]
    with tempfile.TemporaryDirectory() as scratch:
        data = input_for(target, target.seeds(Path(scratch)), seed, iteration)
    out = Path(f"fuzz-{name}-{seed}-{iteration}.bin")
    out.write_bytes(data)
    print(f"input written to {out}; running the reader in this process")
    print(target.run(data))


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: python -m tests.hostile.fuzz {{{','.join(TARGETS)}}} SEED ITERATION")
    _replay(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
