"""Loading of archdiff's own data files (role taxonomy, concept detectors, presets) with a schema check.

The schemas are tiny and declarative, so a typo in a user's YAML file is reported as ONE line naming
the file and the key (``roles.yaml: roles[3].signals[0].weight: expected a number, got 'high'``)
instead of a KeyError deep inside an extractor.

Schema language:
- a type (``str``, ``int``, ``float``, ``bool``) — the value must be of that type (int accepted for float);
- ``[item]`` — a list whose items match ``item``;
- ``{"key": schema, "key?": schema}`` — a mapping with required and optional (``?``) keys; any other
  key is an error (it is almost always a typo);
- ``{str: schema}`` — a mapping from any string key to ``schema``;
- ``Regex`` — a string that must compile as a regular expression;
- ``(a, b)`` — either schema ``a`` or schema ``b`` (the error names the last one tried).
"""

from __future__ import annotations

import functools
import hashlib
import re
import reprlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml

from extractor.support import safeyaml
from extractor.errors import UserInputError


class Regex:
    """Marker in a schema: a string holding a regular expression that must compile."""


# The largest shipped data file (roles.yaml) is 27 KB; a file near this is not one. It also bounds
# the pure-Python YAML composer's time (a 1 MiB scalar: about a second).
MAX_DATA_FILE_BYTES = 1024**2
T = TypeVar("T")
_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


def parsed_once(parse: Callable[[Path], T]) -> Callable[[Path | str], T]:
    """``parse`` as a loader that gives the same object again for the same path and content: a
    process extracting several systems or releases parses each data file once, and what is keyed
    by the object (the taxonomy's signal index) is kept; the run's own copy may be parsed while
    the pool scans (a step's ``prepare``). A file that is unreadable, empty or too large is
    parsed each time, so that the loader reports it in one line."""
    cached = functools.lru_cache(maxsize=8)(lambda path, _digest: parse(Path(path)))

    def load(path: Path | str) -> T:
        digest = _content_digest(path)
        return cached(str(path), digest) if digest else parse(Path(path))
    return load


def _content_digest(path: Path | str) -> str:
    try:
        with Path(path).open("rb") as fh:  # at most what the loader accepts: /dev/zero is not read forever
            data = fh.read(MAX_DATA_FILE_BYTES + 1)
    except OSError:
        return ""
    return hashlib.sha256(data).hexdigest() if data and len(data) <= MAX_DATA_FILE_BYTES else ""


# archdiff's own data files (the taxonomy, the detectors, the rules beside the code that reads
# them) are trusted: they are read with libyaml's safe loader where PyYAML has it, 6x faster than
# the bounded pure-Python one (all of them: 0.11 -> 0.02 CPU s per run, the taxonomy's 0.06 in
# the driver). tests/test_datafile.py checks both loaders give every shipped file the same data.
_SHIPPED_LOADER = getattr(yaml, "CSafeLoader", None)
_EXTRACTOR = Path(__file__).resolve().parent.parent
_SHIPPED = (_EXTRACTOR, _EXTRACTOR.parent / "comparator")  # the packages archdiff installs


def _shipped(path: Path) -> bool:
    try:
        where = path.resolve()
    except OSError:
        return False
    return any(where.is_relative_to(root) for root in _SHIPPED)


def load_data_file(path: Path | str, schema: Any) -> Any:
    """Read ``path`` as YAML and check it against ``schema``; UserInputError on any problem."""
    data = read_yaml_file(path)
    check_data(data, schema, str(path))
    return data


def read_yaml_file(path: Path | str) -> Any:
    """The one YAML document of a file the user gave (or of one archdiff ships); UserInputError
    (one line naming the file) on any problem.

    The file is the user's, and may be anything: a binary, a 2 GB log, a YAML nested a hundred
    thousand levels deep, a number of a million digits, a "billion laughs" of aliases. It is read
    with the bounded loader (``extractor/support/safeyaml.py``, :data:`safeyaml.USER_LIMITS`), so each of
    these costs a bounded time and memory before it is refused."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_DATA_FILE_BYTES + 1)
    except OSError as err:
        raise UserInputError(f"{path}: cannot read the file ({err.strerror or err}); check the path") from err
    if len(raw) > MAX_DATA_FILE_BYTES:
        raise UserInputError(f"{path}: larger than {MAX_DATA_FILE_BYTES // 1024} KiB: not a data file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UserInputError(f"{path}: not a UTF-8 text file (byte {err.start} is {raw[err.start]:#04x}); "
                             "data files are YAML") from None
    if _SHIPPED_LOADER is not None and _shipped(path):
        return yaml.load(text, Loader=_SHIPPED_LOADER)  # noqa: S506 (a safe loader, on archdiff's own files)
    try:
        return safeyaml.safe_load(text, safeyaml.USER_LIMITS, strict_tags=True)
    except safeyaml.YamlLimitError as err:
        mark = err.problem_mark
        where = f":{mark.line + 1}" if mark is not None else ""
        raise UserInputError(f"{path}{where}: refused: {err.problem} (over a data file's limits)") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or getattr(err, "reason", None) or "invalid YAML"
        raise UserInputError(f"{path}{where}: not valid YAML ({problem})") from None
    except RecursionError:
        raise UserInputError(f"{path}: nested too deeply to be a data file") from None
    except ValueError as err:  # e.g. an integer of more digits than Python converts
        raise UserInputError(f"{path}: a value cannot be read ({str(err).split(':')[0]})") from None


def check_data(data: Any, schema: Any, file: str, where: str = "") -> None:
    """Raise UserInputError naming ``file`` and the key path if ``data`` does not match ``schema``."""
    label = where or "(top level)"
    if schema is Regex:
        if not isinstance(data, str):
            _fail(file, label, "a regular expression string", data)
        try:
            re.compile(data)
        except re.error as err:
            raise UserInputError(f"{file}: {label}: not a valid regular expression ({err})") from err
        return
    if isinstance(schema, tuple):
        for option in schema[:-1]:
            try:
                check_data(data, option, file, where)
                return
            except UserInputError:
                continue
        check_data(data, schema[-1], file, where)
        return
    if isinstance(schema, type):
        ok = isinstance(data, schema) and not (schema is not bool and isinstance(data, bool))
        if schema is float and isinstance(data, int) and not isinstance(data, bool):
            ok = True
        if not ok:
            _fail(file, label, _TYPE_NAMES.get(schema, schema.__name__), data)
        return
    if isinstance(schema, list):
        if not isinstance(data, list):
            _fail(file, label, "a list", data)
        for i, item in enumerate(data):
            check_data(item, schema[0], file, f"{where}[{i}]")
        return
    if isinstance(schema, dict):
        if not isinstance(data, dict):
            _fail(file, label, "a mapping", data)
        if str in schema:
            for key, value in data.items():
                if not isinstance(key, str):
                    raise UserInputError(f"{file}: {label}: key {key!r} must be a string")
                check_data(value, schema[str], file, _join(where, key))
            return
        known = {k.rstrip("?"): k.endswith("?") for k in schema}
        for key in data:
            if key not in known:
                expected = ", ".join(sorted(known))
                raise UserInputError(f"{file}: {_join(where, str(key))}: unknown key (expected one of: {expected})")
        for key, optional in known.items():
            if key not in data:
                if not optional:
                    raise UserInputError(f"{file}: {_join(where, key)}: required key is missing")
                continue
            check_data(data[key], schema[key + "?" if optional else key], file, _join(where, key))
        return
    raise TypeError(f"bad schema {schema!r}")  # a bug in archdiff, not user input


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _fail(file: str, where: str, expected: str, got: Any) -> None:
    shown = reprlib.repr(got)  # bounded: a value of a million items costs no more than one of six
    if len(shown) > 40:
        shown = shown[:37] + "..."
    raise UserInputError(f"{file}: {where}: expected {expected}, got {shown}")
