"""What OUT_DIR already holds: ``state.json``, rewritten atomically after every release and every
pair, so a run that is killed halfway (a scheduled job's time limit) loses at most the item it was
working on, and the next ``--new-only`` run does only what is missing.

A release counts as done while its evidence file is there with the bytes the state recorded
(sha256); a pair while its report folder is there. The state names the SPEC it tracks: one OUT_DIR
is the history of one system.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from extractor.errors import UserInputError
from extractor.support.storage import write_atomic

STATE_FILE = "state.json"
STATE_VERSION = 1


@dataclasses.dataclass(slots=True)
class State:
    spec: str
    system: str
    releases: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)  # slug -> entry
    pairs: dict[tuple[str, str], dict[str, Any]] = dataclasses.field(default_factory=dict)  # (old, new) -> entry

    def json(self) -> dict[str, Any]:
        return {"archdiff_state": STATE_VERSION, "spec": self.spec, "system": self.system,
                "releases": [self.releases[k] for k in sorted(self.releases, key=Version)],
                "pairs": [self.pairs[k] for k in sorted(self.pairs, key=lambda k: (Version(k[1]), Version(k[0])))]}


def load_state(out_dir: Path, spec: str, system: str) -> State:
    """The state in ``out_dir`` (empty when there is none), keeping only what is still on disk."""
    path = out_dir / STATE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return State(spec, system)
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise UserInputError(f"{path}: not a readable archdiff state file ({type(err).__name__}): "
                             "delete it to start the history again") from None
    if not isinstance(data, dict) or data.get("archdiff_state") != STATE_VERSION:
        raise UserInputError(f"{path}: not an archdiff state file of version {STATE_VERSION}: "
                             "delete it to start the history again")
    if data.get("spec") != spec:
        raise UserInputError(f"{out_dir} holds the releases of {str(data.get('spec'))!r:.200}, not {spec!r}: "
                             "give each tracked system its own -o directory")
    state = State(spec, system)
    try:
        for entry in data["releases"]:
            evidence = out_dir / entry["evidence"]
            Version(entry["version"])
            if _inside(out_dir, evidence) and evidence.is_file() and sha256_file(evidence) == entry["sha256"]:
                state.releases[entry["version"]] = entry
        for entry in data["pairs"]:
            key = (entry["old"], entry["new"])
            report = out_dir / entry["report"]
            if key[0] in state.releases and key[1] in state.releases and _inside(out_dir, report) and report.is_dir():
                state.pairs[key] = entry
    except (KeyError, TypeError, AttributeError, InvalidVersion) as err:
        raise UserInputError(f"{path}: malformed archdiff state file ({type(err).__name__}: {err}): "
                             "delete it to start the history again") from None
    return state


def save_state(out_dir: Path, state: State) -> Path:
    return write_atomic(out_dir / STATE_FILE, json.dumps(state.json(), indent=1, sort_keys=True) + "\n")


def sha256_file(path: Path) -> str:
    return sha256_of(path.read_bytes())


def sha256_of(data: bytes | str) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def _inside(root: Path, path: Path) -> bool:
    """A state file names paths under OUT only: one edited to point elsewhere is ignored."""
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True
