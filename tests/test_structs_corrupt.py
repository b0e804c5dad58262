"""Corrupt DWARF: every damaged copy of a good object is read or rejected on one line, never
a crash or a hang (the sibling links a walk follows are checked against the unit's bounds)."""

from __future__ import annotations

import random
import subprocess
import time
from pathlib import Path

from elftools.elf.elffile import ELFFile  # test-only: to find where .debug_info lies

from extractor.structs import read_binary_layouts
from extractor.structs.dwarf import DwarfReadError

SRC = Path(__file__).resolve().parent.parent / "fixtures" / "structs" / "src"


def test_damaged_debug_info_never_crashes(tmp_path):
    obj = tmp_path / "engine.o"
    subprocess.run(["g++", "-std=c++17", "-g", "-c", str(SRC / "engine.cpp"), "-o", str(obj)],
                   check=True)
    data = obj.read_bytes()
    with obj.open("rb") as stream:
        sec = ELFFile(stream).get_section_by_name(".debug_info")
        start, size = sec["sh_offset"], sec["sh_size"]
    rng = random.Random(4)  # fixed seed: the same 40 damaged files every run
    outcomes = {"read": 0, "rejected": 0}
    for i in range(40):
        damaged = bytearray(data)
        for _ in range(1 + i % 4):
            damaged[start + rng.randrange(size)] = rng.randrange(256)
        path = tmp_path / f"damaged{i}.o"
        path.write_bytes(bytes(damaged))
        began = time.monotonic()
        try:
            read_binary_layouts(path)
            outcomes["read"] += 1
        except DwarfReadError as err:
            assert err.code == "corrupt-elf" and "\n" not in str(err)
            outcomes["rejected"] += 1
        assert time.monotonic() - began < 5
    assert outcomes["rejected"] > 0  # the damage is real: some copies cannot be read
