"""User data files that are not what they claim: a binary, another encoding, a YAML nested past
any parser's recursion, a number of a hundred thousand digits, a 2 GB file. Each --taxonomy,
--detectors and preset is one line naming the file, exit 2."""

from __future__ import annotations

import pytest

from tests.hostile.support import one_line_error

HOSTILE = {
    "binary": (b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4, "not a UTF-8 text file"),
    "utf16": ("roles: []\n".encode("utf-16"), "not a UTF-8 text file"),
    "deep-flow": (b"[" * 50_000 + b"]" * 50_000, "nested too deeply to be a data file"),
    "deep-block": ("".join("  " * i + "k:\n" for i in range(2000)).encode(), "nested too deeply"),
    "huge-int": (b"roles: " + b"9" * 100_000 + b"\n", "a value cannot be read"),
    "nul": (b"roles: \x00\n", "not valid YAML (special characters are not allowed)"),
    "python-tag": (b"!!python/object/apply:os.system ['touch x']\n", "not valid YAML"),
}


def _write(sandbox, data: bytes):
    path = sandbox.input / "user.yaml"
    path.write_bytes(data)
    tree = sandbox.input / "tree"
    tree.mkdir(exist_ok=True)
    (tree / "a.py").write_text("def a():\n    pass\n")
    return path, tree


@pytest.mark.parametrize("option, case", [("--taxonomy", case) for case in sorted(HOSTILE)]
                         + [("--detectors", "binary"), ("--detectors", "deep-flow")])
def test_a_hostile_taxonomy_or_detector_file_is_one_line_naming_it(sandbox, option, case):
    data, expected = HOSTILE[case]
    path, tree = _write(sandbox, data)
    proc = sandbox.run("extract", str(tree), "-o", str(sandbox.out), "--cache-dir", str(sandbox.cache),
                       "-j", "1", "--no-probes", option, str(path))
    assert proc.returncode == 2, proc.stderr
    line = one_line_error(proc)
    assert line.startswith(f"archdiff: error: {path}") and expected in line, line
    assert not (sandbox.out / "evidence.json").exists()
    sandbox.assert_contained()


@pytest.mark.parametrize("case", ["binary", "deep-block", "huge-int"])
def test_a_hostile_preset_file_is_one_line_naming_it(sandbox, case):
    data, expected = HOSTILE[case]
    path, _ = _write(sandbox, data)
    proc = sandbox.run("battle", str(path), "-o", str(sandbox.out), "--cache-dir", str(sandbox.cache))
    assert proc.returncode == 2, proc.stderr
    line = one_line_error(proc)
    assert line.startswith(f"archdiff: error: {path}") and expected in line, line
    sandbox.assert_contained()


def test_a_data_file_that_never_ends_is_refused_at_the_size_cap(sandbox):
    tree = sandbox.input / "tree"
    tree.mkdir()
    (tree / "a.py").write_text("A = 1\n")
    proc = sandbox.run("extract", str(tree), "-o", str(sandbox.out), "--cache-dir", str(sandbox.cache), "-j", "1",
                       "--no-probes", "--taxonomy", "/dev/zero", timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert one_line_error(proc) == "archdiff: error: /dev/zero: larger than 16 MiB: not a data file"
