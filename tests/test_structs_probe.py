"""Probes: layouts from headers compiled by archdiff itself (g++ and nvcc), failures, cache."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from extractor.context import Context, ExtractOptions, SourceFile, SourceTree
from extractor.model import Language, Severity
from extractor.structs import STEP, extract_structs, read_binary_layouts
from extractor.structs import compilers
from extractor.structs import probe as probe_mod
from extractor.structs.attempts import CompileAttempts
from extractor.structs.header import Preamble
from extractor.structs.probe import HeaderProbe, find_include_dirs, probe_header
from extractor.structs.records import Method
from extractor.structs.source import StructDefinition, find_struct_definitions
from structs_refs import run_gdb_ptype, run_pahole

REPO = Path(__file__).resolve().parent.parent / "fixtures" / "structs"
SRC = REPO / "src"


def header_probe(rel: str, language: Language = Language.CPP) -> HeaderProbe:
    path = REPO / rel
    return HeaderProbe(rel, path, language, find_struct_definitions(path.read_bytes(), language))


def test_finder_sees_definitions_but_not_templates():
    found = [(d.qualname, d.line) for d in header_probe("src/engine.hpp").definitions]
    assert ("engine::Request::Header", 41) in found and ("engine::Mixed", 25) in found
    assert not any("Ring" in name for name, _ in found)  # class template: no layout
    cuda = [d.qualname for d in header_probe("src/cuda/ipc_buffer.cuh", Language.CUDA).definitions]
    assert cuda == ["peer::PeerPointers", "peer::IpcBufferHandle", "peer::LaunchFlags"]


def test_gxx_probe_equals_a_normal_debug_build(tmp_path):
    result = probe_header(header_probe("src/engine.hpp"), find_include_dirs([REPO]), [REPO])
    probed = {x.qualname: x for x in result.layouts}
    obj = tmp_path / "engine.o"
    subprocess.run(["g++", "-std=c++17", "-g", "-c", str(SRC / "engine.cpp"), "-o", str(obj)],
                   check=True)
    built = {x.qualname: x for x in read_binary_layouts(obj)}
    # non-default-constructible or unused types come out too: Polymorphic, Header, Hidden
    for name in ("engine::Base", "engine::Derived", "engine::Polymorphic", "engine::Mixed",
                 "engine::Request", "engine::Request::Header", "engine::PaddedCounter",
                 "engine::(anonymous namespace)::Hidden"):
        assert probed[name].method is Method.PROBE_GXX
        assert probed[name].path == "src/engine.hpp"
        assert (probed[name].size, probed[name].members, probed[name].holes) == \
            (built[name].size, built[name].members, built[name].holes), name
    assert probed["engine::Request"].line == 40
    assert not result.diagnostics


def test_failed_probe_lists_structs_unresolved_with_first_error():
    result = probe_header(header_probe("src/needs_torch.hpp"), find_include_dirs([REPO]), [REPO],
                          root_labels=[(REPO, "")])
    (layout,) = result.layouts
    assert layout.qualname == "KernelArgs" and layout.method is Method.UNRESOLVED
    assert layout.line == 5 and layout.size == 0
    assert layout.error.startswith("src/needs_torch.hpp:3:")
    assert "torch/all.h: No such file or directory" in layout.error
    assert "/" + str(REPO).strip("/") not in layout.error  # no machine paths in evidence
    (diag,) = result.diagnostics
    assert diag.code == "probe-failed" and diag.path == "src/needs_torch.hpp"


@pytest.mark.compilers
def test_the_error_kept_is_told_from_its_own_attempt_after_later_attempts(tmp_path):
    """The first attempt stops at a missing header, so its message is told (by a preprocess-only
    pass) only once it is known to be the one kept, after the preamble attempt has written its
    own source over the first: that source reaches a file outside the tree, and must not turn
    the first attempt's missing header into a refusal."""
    outside = tmp_path / "outside" / "private.h"
    outside.parent.mkdir()
    outside.write_text("#define PRIVATE 1\n")
    root = tmp_path / "proj"
    header = root / "inc" / "needs.hpp"
    header.parent.mkdir(parents=True)
    header.write_text('#pragma once\n#include "missing_a.h"\nstruct Needs { int a; };\n')
    preamble = Preamble((f'#include "{outside}"',), "inc/user.cpp", header.parent)
    probe = HeaderProbe("inc/needs.hpp", header, Language.CPP, (StructDefinition(3, "Needs", "struct"),),
                        preambles=(preamble,))
    result = probe_header(probe, [], [root], root_labels=[(root, "")])
    (layout,) = result.layouts
    assert layout.method is Method.UNRESOLVED
    assert layout.error == "inc/needs.hpp:2:10: fatal error: missing_a.h: No such file or directory"


def test_an_attempt_whose_preamble_includes_what_no_directory_has_is_known_to_fail(tmp_path):
    """The includer's ``#include <torch/all.h>`` without torch's headers: that attempt cannot
    compile, so it is not run; one whose includes exist somewhere it searches is."""
    header = tmp_path / "proj" / "inc" / "needs.hpp"
    header.parent.mkdir(parents=True)
    header.write_text("struct Needs { int a; };\n")
    (header.parent / "sibling.h").write_text("")
    probe = HeaderProbe("inc/needs.hpp", header, Language.CPP, (StructDefinition(1, "Needs", "struct"),))
    (command,) = compilers.compile_commands(header, "c++", probe.flags, tmp_path / "probe", tmp_path / "probe.o", [])
    run = CompileAttempts(probe, [], [tmp_path / "proj"], tmp_path, tmp_path / "probe.o", 60, 2**30, frozenset(), [])

    def preamble(*lines: str) -> Preamble:
        return Preamble(lines, "inc/user.cpp", header.parent)

    assert run.doomed(command, preamble("#define X 1", "#include <torch/all.h>"))
    assert run.doomed(command, preamble('#include "no_such_sibling.h"'))
    assert not run.doomed(command, preamble("#include <cstdint>", '#include "sibling.h"', "#define X 1"))
    assert not run.doomed(command, preamble(f'#include "{header}"'))


def test_a_cuda_header_that_includes_a_cuh_is_compiled_by_nvcc_alone(tmp_path, monkeypatch):
    """g++ first for a CUDA header, except one that includes a `.cuh` itself (g++ stops in it, after
    parsing everything before: vLLM's moe_permute_unpermute_kernel.h and CUB's cub.cuh)."""
    from extractor.structs.buildcontext import CUDA, ProbeFlags

    monkeypatch.setattr(compilers, "find_nvcc", lambda: "/opt/cuda/bin/nvcc")
    monkeypatch.setattr(compilers.shutil, "which", lambda name: f"/usr/bin/{name}")
    inc = tmp_path / "inc"
    inc.mkdir()
    kernel = inc / "kernel.h"
    kernel.write_text("#pragma once\n  #  include <cub/cub.cuh>\nstruct K { int a; };\n")
    host = inc / "host.h"
    host.write_text('#pragma once\n#include "cuda_runtime.h"\n// #include "x.cuh"\nstruct H { int a; };\n')

    def compilers_for(header: Path) -> list[str]:
        commands = compilers.compile_commands(header, CUDA, ProbeFlags(), tmp_path / "probe", tmp_path / "probe.o", [])
        assert not isinstance(commands, str)
        return [Path(c.exe).name for c in commands]

    assert compilers_for(kernel) == ["nvcc"]
    assert compilers_for(host) == ["g++", "nvcc"]
    assert compilers_for(inc / "gone.h") == ["g++", "nvcc"]  # unreadable: as before


def test_a_preamble_attempt_followed_only_by_doomed_ones_is_not_explained(tmp_path, monkeypatch):
    """A failed preamble attempt's message is told (a preprocess-only pass) only for the next
    attempt to read; when every later preamble is known to fail, none will, and the only pass
    left is the one that tells the error kept, which stays the first attempt's."""
    import extractor.structs.compilers as compilers_mod

    root = tmp_path / "proj"
    header = root / "inc" / "needs.hpp"
    header.parent.mkdir(parents=True)
    # (a #define before the include: a compile that stops at a first include is not run at all)
    header.write_text('#pragma once\n#define NEEDS 1\n#include "missing_a.h"\nstruct Needs { int a; };\n')
    (header.parent / "sibling.h").write_text("")
    runs, real = [], compilers_mod.run_bounded
    monkeypatch.setattr(compilers_mod, "run_bounded", lambda argv, **kw: runs.append(argv) or real(argv, **kw))
    preambles = (Preamble(('#include "sibling.h"',), "inc/user.cpp", header.parent),
                 Preamble(("#include <torch/all.h>",), "inc/other.cpp", header.parent))
    probe = HeaderProbe("inc/needs.hpp", header, Language.CPP, (StructDefinition(3, "Needs", "struct"),),
                        preambles=preambles)
    (layout,) = probe_header(probe, [], [root], root_labels=[(root, "")]).layouts
    assert layout.error == "inc/needs.hpp:3:10: fatal error: missing_a.h: No such file or directory"
    compiles = [argv for argv in runs if "-MD" in argv]
    passes = [argv for argv in runs if "-MG" in argv]
    assert (len(compiles), len(passes)) == (2, 1)  # alone, after sibling.h; the kept error told


def test_nvcc_probe_matches_pahole_on_the_probe_object(tmp_path):
    assert probe_mod.find_nvcc(), "nvcc is required (CUDA toolkit)"
    obj = tmp_path / "probe.o"
    result = probe_header(header_probe("src/cuda/ipc_buffer.cuh", Language.CUDA),
                          find_include_dirs([REPO]), [REPO], keep_object=obj)
    ours = {x.qualname: x for x in result.layouts}
    assert {x.method for x in result.layouts} == {Method.PROBE_NVCC}
    ref = run_pahole(obj, "PeerPointers", "IpcBufferHandle", "LaunchFlags")
    # a C++ layout's holes and padding follow gdb's ptype /o (pahole groups bit-field holes its own way)
    gdb = run_gdb_ptype(obj, *(f"peer::{name}" for name in ref))
    for name in ("PeerPointers", "IpcBufferHandle", "LaunchFlags"):
        mine, theirs = ours[f"peer::{name}"], ref[name]
        assert mine.size == theirs.size
        assert [(m.name, m.offset, m.size) for m in mine.members] == \
            [(n, o, s) for n, o, s, _b in theirs.members]
        told = gdb[f"peer::{name}"]
        assert [(h.size, "bits" if h.bits else "bytes") for h in mine.holes] == told.holes
        assert (mine.padding, mine.bit_padding) == (told.padding, told.bit_padding)
    assert [(h.size, h.bits) for h in ours["peer::LaunchFlags"].holes] == [(2, True), (61, False)]
    handle = ours["peer::IpcBufferHandle"]
    assert (handle.size, [h.size for h in handle.holes]) == (88, [4])
    assert "ipc" in handle.tags
    assert ours["peer::PeerPointers"].align == 16
    assert ours["peer::LaunchFlags"].align == 64 and ours["peer::LaunchFlags"].size == 128


def test_missing_nvcc_is_unresolved_not_a_crash(monkeypatch):
    monkeypatch.setattr(compilers, "find_nvcc", lambda: None)
    result = probe_header(header_probe("src/cuda/ipc_buffer.cuh", Language.CUDA),
                          find_include_dirs([REPO]), [REPO])
    assert {x.method for x in result.layouts} == {Method.UNRESOLVED}
    assert {x.error for x in result.layouts} == {"nvcc not installed: CUDA header not probed"}
    assert result.diagnostics[0].code == "probe-no-compiler"


def test_cache_reuses_result_until_an_included_file_changes(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(SRC, repo / "src")
    (repo / "src" / "wrap.hpp").write_text('#pragma once\n#include "engine.hpp"\n'
                                           "struct Wrapper { engine::Base base; char c; };\n")
    probe = HeaderProbe("src/wrap.hpp", repo / "src" / "wrap.hpp", Language.CPP,
                        find_struct_definitions((repo / "src" / "wrap.hpp").read_bytes(),
                                                Language.CPP))
    dirs = find_include_dirs([repo])
    first = probe_header(probe, dirs, [repo], cache_dir=tmp_path / "cache")
    again = probe_header(probe, dirs, [repo], cache_dir=tmp_path / "cache")
    assert not first.cached and again.cached and again.layouts == first.layouts
    wrapper = {x.qualname: x for x in first.layouts}["Wrapper"]
    assert wrapper.size == 12
    engine = repo / "src" / "engine.hpp"  # an included file changes the closure hash
    engine.write_text(engine.read_text().replace("char flag;", "char flag; long extra;"))
    changed = probe_header(probe, dirs, [repo], cache_dir=tmp_path / "cache")
    assert not changed.cached
    assert {x.qualname: x for x in changed.layouts}["Wrapper"].size == 24


def _context(jobs: int, binaries=(), cache_dir=None, extra=None) -> Context:
    files = []
    for path in sorted(SRC.rglob("*")):
        if path.suffix not in (".h", ".hpp", ".cuh", ".c", ".cpp"):
            continue
        rel = path.relative_to(REPO).as_posix()
        language = Language.CUDA if path.suffix == ".cuh" else Language.CPP
        data = path.read_bytes()
        files.append(SourceFile(rel, rel, "", language, hashlib.sha256(data).hexdigest(),
                                len(data), {}))
    source = SourceTree("", str(REPO), "dir", REPO)
    return Context("fixture", "0", (source,), tuple(files),
                   ExtractOptions(jobs=jobs, binaries=tuple(binaries), cache_dir=cache_dir,
                                  extra=extra or {}))


@pytest.mark.compilers
def test_extract_structs_is_deterministic_and_reports_failures(tmp_path):
    assert probe_mod.find_nvcc(), "nvcc is required (CUDA toolkit): the fixture's CUDA header is probed with it"
    obj = tmp_path / "ring.o"
    subprocess.run(["gcc", "-g", "-c", str(SRC / "ring.c"), "-o", str(obj)], check=True, cwd=REPO)
    bad = tmp_path / "broken.so"
    bad.write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 40)
    one = extract_structs(_context(1, binaries=(obj, bad)))
    two = extract_structs(_context(2, binaries=(obj, bad)))
    assert one.records == two.records and one.diagnostics == two.diagnostics
    assert STEP.bundle_key == "structs" and STEP.extract is extract_structs
    methods = {x.qualname: x.method for x in one.records}
    assert methods["KernelArgs"] is Method.UNRESOLVED
    assert methods["peer::IpcBufferHandle"] is Method.PROBE_NVCC
    codes = {(d.path, d.code, d.severity) for d in one.diagnostics}
    assert ("broken.so", "corrupt-elf", Severity.ERROR) in codes
    assert ("src/needs_torch.hpp", "probe-failed", Severity.WARNING) in codes
    # engine.hpp, ring.h, needs_torch.hpp, cuda/ipc_buffer.cuh, bitfields.h
    assert one.stats["headers_with_structs"] == 5 and one.stats["headers_probed"] == 5
    # ring.h is probed too: a .h that is valid C++ is compiled by g++ and maps to its repo path
    ring = [x for x in one.records if x.qualname == "ring_slot"]
    assert {(x.method, x.path) for x in ring} == {(Method.DWARF_BINARY, "src/ring.h"),
                                                  (Method.PROBE_GXX, "src/ring.h")}


def test_probe_budget_lists_the_rest_as_not_probed():
    out = extract_structs(_context(1, extra={"structs_max_headers": 1}))
    probed = {x.path for x in out.records if not x.error.startswith("not probed")}
    # ring.h and ipc_buffer.cuh each have one struct whose name earns a tag (shm_ring_header,
    # IpcBufferHandle); ring.h defines more structs, so it goes first; engine.hpp (no tag) last
    assert probed == {"src/ring.h"}
    ranked = [p.path for p in probe_mod.rank_probes([
        header_probe("src/engine.hpp"), header_probe("src/cuda/ipc_buffer.cuh", Language.CUDA),
        header_probe("src/ring.h")])]
    assert ranked == ["src/ring.h", "src/cuda/ipc_buffer.cuh", "src/engine.hpp"]
    assert out.stats["headers_probed"] == 1


@pytest.mark.parametrize("stderr, expected", [
    ("In file included from /tmp/x/probe.cpp:3:\n/repo/core/src/filesystem/../status.h:30:10: "
     "fatal error: triton/common/error.h: No such file or directory\ncompilation terminated.\n",
     "core/src/status.h:30:10: fatal error: triton/common/error.h: No such file or directory"),
    ("/repo/csrc/q.cuh(12): error: identifier \"uint32_t\" is undefined\n1 error detected\n",
     'csrc/q.cuh(12): error: identifier "uint32_t" is undefined'),
    ("", "compiler failed without a message"),
])
def test_first_error_line_is_relative_and_normalised(stderr, expected):
    assert probe_mod.first_error(stderr, [("/repo/", "")]) == expected


def test_the_graph_step_drives_the_probes_like_a_direct_scan():
    """Through the pipeline the aggregates come from the C++ graph step (its per-file facts cached
    by content hash); the step then gives what a context without those results gives."""
    import dataclasses

    from extractor import cpp
    from extractor.cpp.parse import parse_source
    from extractor.model import ParsedFile

    plain = _context(1)
    files = []
    for f in plain.files:
        data = (REPO / f.rel).read_bytes()
        parsed = ParsedFile(f.language, data, parse_source(data, f.language))
        files.append(dataclasses.replace(f, facts={"cpp": cpp.STEP.scanners[f.language](parsed)}))
    scanned = dataclasses.replace(plain, files=tuple(files))
    scanned.results["cpp"] = cpp.STEP.extract(scanned)
    aggregates = {(a.path, a.line, a.qualname) for a in scanned.results["cpp"].shared.aggregates}
    assert {("src/cuda/ipc_buffer.cuh", 11, "peer::PeerPointers"), ("src/cuda/ipc_buffer.cuh", 15, "peer::IpcBufferHandle"),
            ("src/cuda/ipc_buffer.cuh", 22, "peer::LaunchFlags")} <= aggregates
    a, b = extract_structs(plain), extract_structs(scanned)
    assert a.records == b.records and a.diagnostics == b.diagnostics


@pytest.mark.compilers
def test_a_header_with_thread_local_variables_is_laid_out(tmp_path):
    # thread-local variables give the probe object TLS relocations in .debug_info
    # (R_X86_64_DTPOFF32), which pyelftools 0.33 refuses: the object was "unreadable" and every
    # struct of the header unresolved (Triton's python_backend pb_stub.h)
    header = tmp_path / "src" / "frames.h"
    header.parent.mkdir()
    header.write_text("#pragma once\nstruct Frame { int depth; char tag; long long since; };\n"
                      "inline thread_local Frame current_frame{};\nstatic thread_local int local_depth = 0;\n"
                      "inline int bump() { return ++local_depth + current_frame.depth; }\n")
    probe = HeaderProbe("src/frames.h", header, Language.CPP, find_struct_definitions(header.read_bytes(), Language.CPP))
    obj = tmp_path / "frames.o"
    result = probe_header(probe, find_include_dirs([tmp_path]), [tmp_path], keep_object=obj)
    relocations = subprocess.run(["readelf", "-r", str(obj)], capture_output=True, text=True, check=True).stdout
    assert "R_X86_64_DTPOFF32" in relocations  # the case is what it claims to be
    (frame,) = result.layouts
    assert frame.method is Method.PROBE_GXX, frame.error
    ref = run_pahole(obj, "Frame")["Frame"]
    assert frame.size == ref.size == 16
    assert [(m.name, m.offset, m.size) for m in frame.members] == [(n, o, s) for n, o, s, _b in ref.members]


def test_a_compiler_stopped_by_the_memory_cap_says_so(tmp_path):
    # what stops it is the probe's own cap, not anything the tree lacks: the reason says which
    from extractor.run.pipeline import extract_system

    header = tmp_path / "proj" / "include" / "big.h"
    header.parent.mkdir(parents=True)
    header.write_text("#pragma once\n#include <map>\n#include <string>\nstruct Big { std::map<std::string, int> m; };\n")

    def big(memory: int) -> dict:
        options = ExtractOptions(jobs=1, cache_dir=tmp_path / f"c{memory}", extra={"structs_probe_memory": memory})
        (layout,) = extract_system([str(tmp_path / "proj")], options=options).bundle["structs"]
        return layout

    capped = big(80 * 1024**2)  # cc1plus starts, then runs out of address space
    assert capped["method"] == "unresolved" and "memory exhausted" in capped["error"], capped
    assert capped["missing"] == "memory" and "structs_probe_memory" in capped["supplied_by"]
    assert big(probe_mod.DEFAULT_MEMORY)["size"] == 48
