"""Shared by the comparator tests: the modified copy of fixtures/pysample that the release diff
must see through, and the committed evidence inputs of the golden tests."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
INPUTS = GOLDEN / "inputs"

# What make_pysample_v2 changes, as the release diff must report it, and nothing else.
REMOVED_FUNCTION = "py:servekit.engine.core.build"
CHANGED_SIGNATURE = "py:servekit.engine.scheduler.Scheduler.add"
RENAMED_CLASS = ("py:servekit.engine.core.Checked", "py:servekit.engine.core.CheckedScheduler")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path}: fixture changed; {old!r} not found"
    path.write_text(text.replace(old, new, 1))


def make_pysample_v2(parent: Path) -> Path:
    """A copy of fixtures/pysample with one function removed, one signature changed (parameters
    reordered) and one class renamed."""
    target = parent / "pysample_v2"
    shutil.copytree(ROOT / "fixtures" / "pysample", target)
    core = target / "src" / "servekit" / "engine" / "core.py"
    _edit(core, 'def build(kind):\n    if kind == "a":\n        def make():\n            return Engine()\n'
                '    else:\n        def make():\n            return None\n    return make()\n\n\n', "")
    _edit(core, "class Checked(base.BaseScheduler):", "class CheckedScheduler(base.BaseScheduler):")
    _edit(target / "src" / "servekit" / "engine" / "scheduler.py", "def add(self, priority: int, item: T) -> None:",
          "def add(self, item: T, priority: int = 0) -> None:")
    return target
