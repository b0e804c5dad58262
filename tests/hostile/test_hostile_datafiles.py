"""User data files that are not what they claim: a binary, another encoding, a YAML nested past
any parser's recursion, a number of a hundred thousand digits, a 2 GB file, YAML bombs (a billion
laughs of aliases, too many aliases, an alias cycle, a document of too many nodes, a huge scalar).
Each --taxonomy, --detectors, preset and system file is one line naming the file, exit 2, in a
bounded time and memory."""

from __future__ import annotations

import pytest

from tests.hostile.support import memory_cap, one_line_error

# The first key each kind of file checks: a bomb there is what the schema check meets first (before
# the bounded loader, its repr of the expanded value in the error message took gigabytes).
FIRST_KEY = {"--taxonomy": "version", "--detectors": "version", "preset": "name", "system": "sources"}


def laughs(key: str) -> bytes:
    """The billion laughs under ``key``: nine anchored lists, each ten aliases of the one before."""
    levels = ["&l0 [" + ", ".join(["lol"] * 10) + "]"]
    levels += [f"&l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 10)]
    return f"{key}: [{', '.join(levels)}]\n".encode()


HOSTILE = {
    "binary": (lambda key: b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4, "not a UTF-8 text file"),
    "utf16": (lambda key: f"{key}: []\n".encode("utf-16"), "not a UTF-8 text file"),
    "deep-flow": (lambda key: b"[" * 50_000 + b"]" * 50_000, "refused: nested deeper than 128 levels"),
    "deep-block": (lambda key: "".join("  " * i + "k:\n" for i in range(600)).encode(),
                   "refused: nested deeper than 128 levels"),
    "huge-int": (lambda key: f"{key}: ".encode() + b"9" * 100_000 + b"\n", "a value cannot be read"),
    "nul": (lambda key: f"{key}: \x00\n".encode(), "not valid YAML (special characters are not allowed)"),
    "python-tag": (lambda key: b"!!python/object/apply:os.system ['touch x']\n",
                   "not valid YAML (could not determine a constructor for the tag"),
    "billion-laughs": (laughs, ":1: refused: expands to more than 50000 nodes"),
    "aliases": (lambda key: f"{key}: [&a x{', *a' * 1001}]\n".encode(), ":1: refused: more than 1000 aliases"),
    "cycle": (lambda key: f"{key}: &a [*a]\n".encode(), "refused: an alias refers to a node that contains it"),
    "wide": (lambda key: f"{key}:\n".encode() + b"- a\n" * 60_000, "refused: more than 50000 nodes"),
    "huge-scalar": (lambda key: f"{key}: ".encode() + b"a" * (2 * 1024**2) + b"\n", "larger than 1024 KiB"),
}
BOMBS = ("billion-laughs", "aliases", "cycle", "huge-scalar", "deep-flow")
# The CLI starts at a few hundred MiB of address space; a bomb expanded would need gigabytes.
MEMORY = memory_cap(2 * 1024**3)
BOUND = 60  # seconds for any refusal (the slowest, "wide", composes 50,000 nodes in pure Python)


def _write(sandbox, data: bytes, name: str = "user.yaml"):
    path = sandbox.input / name
    path.write_bytes(data)
    tree = sandbox.input / "tree"
    tree.mkdir(exist_ok=True)
    (tree / "a.py").write_text("def a():\n    pass\n")
    return path, tree


@pytest.mark.parametrize("option, case", [("--taxonomy", case) for case in sorted(HOSTILE)]
                         + [("--detectors", case) for case in ("binary", *BOMBS)])  # "wide" once: one loader for all
def test_a_hostile_taxonomy_or_detector_file_is_one_line_naming_it(sandbox, option, case):
    make, expected = HOSTILE[case]
    path, tree = _write(sandbox, make(FIRST_KEY[option]))
    proc = sandbox.run("extract", str(tree), "-o", str(sandbox.out), "--cache-dir", str(sandbox.cache),
                       "-j", "1", "--no-probes", option, str(path), timeout=BOUND, fault=MEMORY)
    assert proc.returncode == 2, proc.stderr
    line = one_line_error(proc)
    assert line.startswith(f"archdiff: error: {path}") and expected in line, line
    assert not (sandbox.out / "evidence.json").exists()
    sandbox.assert_contained()


@pytest.mark.parametrize("case", ["binary", "deep-block", "huge-int", "python-tag", *BOMBS])
def test_a_hostile_preset_file_is_one_line_naming_it(sandbox, case):
    make, expected = HOSTILE[case]
    path, _ = _write(sandbox, make(FIRST_KEY["preset"]))
    proc = sandbox.run("battle", str(path), "-o", str(sandbox.out), "--cache-dir", str(sandbox.cache),
                       timeout=BOUND, fault=MEMORY)
    assert proc.returncode == 2, proc.stderr
    line = one_line_error(proc)
    assert line.startswith(f"archdiff: error: {path}") and expected in line, line
    sandbox.assert_contained()


@pytest.mark.parametrize("case", ["binary", "huge-int", "python-tag", *BOMBS])
def test_a_hostile_system_file_is_one_line_naming_it(sandbox, case):
    """A system file is one side of ``archdiff compare``; the other side is never reached."""
    make, expected = HOSTILE[case]
    path, tree = _write(sandbox, make(FIRST_KEY["system"]), name="system.yaml")
    proc = sandbox.run("compare", str(path), str(tree), "-o", str(sandbox.out), "--cache-dir", str(sandbox.cache),
                       timeout=BOUND, fault=MEMORY)
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
    assert one_line_error(proc) == "archdiff: error: /dev/zero: larger than 1024 KiB: not a data file"
