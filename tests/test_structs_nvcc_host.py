"""nvcc's host side alone (extractor.structs.nvcchost): the layouts, dependency lists and failures
of a CUDA probe are nvcc's own, without compiling the device code; a pipeline of another shape is
left to nvcc."""

from __future__ import annotations

from pathlib import Path

import pytest

from extractor.model import Language
from extractor.structs import compilers, nvcchost, read_binary_layouts
from extractor.structs.buildcontext import ProbeFlags
from extractor.structs.compilers import PRELUDE, compile_commands, run_compiler
from extractor.structs.probe import HeaderProbe, find_include_dirs, probe_header
from extractor.structs.probeguard import parse_depfile
from extractor.structs.records import Method
from extractor.structs.source import find_struct_definitions

REPO = Path(__file__).resolve().parent.parent / "fixtures" / "structs"
TIMEOUT, MEMORY = 120.0, 8 * 2**30
# a type of CUDA's own that only the kernels' registration stub (written by cicc) brings in
_STUB_ONLY = {"__fatBinC_Wrapper_t"}


@pytest.fixture(autouse=True)
def _nvcc():
    assert compilers.find_nvcc(), "nvcc is required (CUDA toolkit)"


def _compile_both(header: Path, tmp: Path, include_dirs=()) -> dict[str, tuple]:
    """The probe compile of ``header`` run by nvcc and by its host side alone, each in a
    directory of its own: (exit status, stderr, dependencies, layouts) by "nvcc" and "host"."""
    out = {}
    for how in ("nvcc", "host"):
        tmpdir = tmp / how
        tmpdir.mkdir()
        commands = compile_commands(header, "cuda", ProbeFlags(), tmpdir / "probe", tmpdir / "probe.o",
                                    list(include_dirs))
        assert not isinstance(commands, str)
        (command,) = commands
        (tmpdir / "probe.cu").write_text(PRELUDE[".cu"] + f'#include "{header}"\n')
        argv = [*command.argv[:-2], "-MD", "-MF", str(tmpdir / "probe.d"), *command.argv[-2:]]
        if how == "host":
            assert nvcchost.host_script(argv, tmpdir, TIMEOUT, MEMORY) is not None, "the pipeline's shape is known"
            done = nvcchost.run_probe_compile(argv, tmpdir, TIMEOUT, MEMORY)
        else:
            done = run_compiler(argv, tmpdir, TIMEOUT, MEMORY)
        depfile = tmpdir / "probe.d"
        deps = {str(p).replace(str(tmpdir), "TMP") for p in parse_depfile(depfile.read_text(), tmpdir)} \
            if depfile.exists() else None
        obj = tmpdir / "probe.o"
        layouts = {x.qualname: x for x in read_binary_layouts(obj) if x.qualname not in _STUB_ONLY} \
            if done.returncode == 0 and obj.exists() else None
        out[how] = (done.returncode, done.stderr.decode().replace(str(tmpdir), "TMP"), deps, layouts)
    return out


def test_the_host_side_lays_out_and_lists_what_nvcc_does(tmp_path):
    both = _compile_both(REPO / "src" / "cuda" / "ipc_buffer.cuh", tmp_path, find_include_dirs([REPO]))
    (status, _, deps, layouts), (h_status, _, h_deps, h_layouts) = both["nvcc"], both["host"]
    assert status == h_status == 0
    assert layouts and h_layouts == layouts
    assert deps and h_deps == deps  # the probe guard reads this list: the same files, from both sides


@pytest.mark.parametrize("text, where", [
    ('struct S { int a; };\nstatic_assert(sizeof(S) == 8, "host too");\n', "cudafe++"),
    ("#ifdef __CUDA_ARCH__\n#include <only_on_device.h>\n#endif\nstruct S { int a; };\n", "device preprocessing"),
    ("#include <nowhere_at_all.h>\nstruct S { int a; };\n", "host preprocessing"),
])
def test_a_failure_before_the_device_compile_is_nvccs_own(tmp_path, text, where):
    header = tmp_path / "bad.cuh"
    header.write_text(text)
    both = _compile_both(header, tmp_path)
    (status, err, deps, _), (h_status, h_err, h_deps, _) = both["nvcc"], both["host"]
    assert status != 0 and h_status != 0, where
    assert h_err == err, where
    assert h_deps == deps, where  # written by neither, or (a cudafe++ error) by both


def test_an_error_only_device_code_has_is_not_seen(tmp_path):
    """The documented difference: a header that fails only in cicc is laid out from the host side."""
    header = tmp_path / "device_only.cuh"
    header.write_text('struct S { int a; };\n#ifdef __CUDA_ARCH__\nstatic_assert(sizeof(S) == 8, "device");\n#endif\n')
    both = _compile_both(header, tmp_path)
    assert both["nvcc"][0] != 0 and "device" in both["nvcc"][1]
    assert both["host"][0] == 0 and both["host"][3]["S"].size == 4


def test_a_pipeline_of_another_shape_is_left_to_nvcc(tmp_path):
    header = tmp_path / "plain.cuh"
    header.write_text("struct S { int a; };\n")
    (command,) = compile_commands(header, "cuda", ProbeFlags(), tmp_path / "probe", tmp_path / "probe.o", [])
    (tmp_path / "probe.cu").write_text(PRELUDE[".cu"] + f'#include "{header}"\n')
    argv = [*command.argv[:-2], "-MD", "-MF", str(tmp_path / "probe.d"), *command.argv[-2:]]
    assert nvcchost.host_script(argv, tmp_path, TIMEOUT, MEMORY) is not None
    two_archs = [argv[0], "-gencode", "arch=compute_75,code=sm_75", "-gencode", "arch=compute_80,code=sm_80",
                 *argv[1:]]
    assert nvcchost.host_script(two_archs, tmp_path, TIMEOUT, MEMORY) is None  # two device compiles
    odd = tmp_path / "a$(b)"
    odd.mkdir()
    assert nvcchost.host_script([argv[0], f"-I{odd}", *argv[1:]], tmp_path, TIMEOUT, MEMORY) is None


def test_a_probe_through_the_host_side_gives_nvccs_records(tmp_path, monkeypatch):
    path = REPO / "src" / "cuda" / "ipc_buffer.cuh"
    probe = HeaderProbe("src/cuda/ipc_buffer.cuh", path, Language.CUDA,
                        find_struct_definitions(path.read_bytes(), Language.CUDA))
    host = probe_header(probe, find_include_dirs([REPO]), [REPO]).layouts
    monkeypatch.setattr(nvcchost, "host_script", lambda *args: None)
    plain = probe_header(probe, find_include_dirs([REPO]), [REPO]).layouts
    assert {x.method for x in host} == {Method.PROBE_NVCC} and host == plain
