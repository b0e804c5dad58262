"""Metric libraries as data (``libraries.yaml``, checked on load): the calls that make a metric
(constructors, OpenTelemetry instruments) with their parameter order, the series a library exposes
by itself, and builder objects (prometheus-fastapi-instrumentator) whose options decide which
metrics exist. Only lookups live here; :mod:`.factories` and :mod:`.provided` use them.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path
from typing import Any

from extractor.support.datafile import load_data_file
from extractor.errors import UserInputError
from extractor.telemetry.records import MetricType

_METRIC = {"name": str, "type": str, "help?": str, "labels?": [str], "buckets?": str, "when?": str,
           "labels_when?": {str: [str]}}
_ROLES = {"name": str, "help?": str, "labels?": str, "namespace?": str, "subsystem?": str, "unit?": str,
          "buckets?": str, "states?": str, "kind?": str}
SCHEMA = {
    "constructors": [{"library": str, "read_from": str, "naming": str, "classes": {str: str},
                      "modules": [str], "params": [str], "roles": _ROLES, "default_buckets?": [float],
                      "labels_at_use?": str, "buckets_at_use?": str, "kinds?": {str: str}}],
    "instruments": [{"library": str, "read_from": str, "naming": str, "methods": {str: str},
                     "params": [str], "roles": _ROLES, "default_buckets?": [float], "labels_at_use?": str}],
    "provided": [{"library": str, "what": str, "read_from": str, "trigger": str, "unless?": str,
                  "naming": str, "metrics": [_METRIC]}],
    "builders": [{"library": str, "read_from": str, "naming": str, "classes": [str], "activate": str,
                  "add": str, "expose": str, "registry_option": str, "options": {str: {"call": str, "default": (bool, str, [float])}},
                  "default_metrics": [_METRIC], "optional_metrics": [_METRIC],
                  "functions": {str: {"type": str, "name": str}}, "function_labels": {str: str}}],
    "otel_units": {str: str},
    "otel_per_units": {str: str},
    "prometheus_synthetic": [str],
    "unmodeled": [{"library": str, "modules?": [str], "includes?": [str], "crates?": [str], "go_imports?": [str],
                   "what": str}],
}


@dataclasses.dataclass(frozen=True, slots=True)
class Constructor:
    """One callable that makes one metric."""

    library: str
    naming: str
    type: MetricType | None  # None: the argument of role ``kind`` decides, through ``kinds``
    params: tuple[str, ...]
    roles: dict[str, str]  # what archdiff reads (name, help, labels, ...) -> the parameter's name
    read_from: str
    default_buckets: tuple[float, ...] | None = None  # None: the installed prometheus_client's
    labels_at_use: str = ""  # why the labels are not read: the library takes them with each observation
    buckets_at_use: str = ""  # why a histogram's buckets are not read: given with each child, not here
    # the type by the last name of the ``kind`` argument (`pb_utils.MetricFamily.COUNTER` -> counter)
    kinds: tuple[tuple[str, MetricType], ...] = ()

    def type_of(self, kind_argument: list[str]) -> MetricType | None:
        """The type the constructor makes, given the texts its ``kind`` argument can be (names as
        written); None when they are not one of ``kinds``, or not all the same."""
        if self.type is not None:
            return self.type
        by_name = dict(self.kinds)
        found = {by_name.get(text.rpartition(".")[2]) for text in kind_argument}
        return found.pop() if len(found) == 1 and None not in found else None


@dataclasses.dataclass(frozen=True, slots=True)
class Conventions:
    constructors: dict[str, Constructor]  # "prometheus_client.Counter" -> ...
    instruments: dict[str, Constructor]  # "create_counter" -> ...
    provided: tuple[dict[str, Any], ...]
    builders: tuple[dict[str, Any], ...]
    otel_units: dict[str, str]
    otel_per_units: dict[str, str]
    prometheus_synthetic: frozenset[str] = frozenset()
    # libraries whose series are not modeled, by what names them in code -> (library, what it exposes)
    unmodeled: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)  # Python module
    unmodeled_includes: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)  # include prefix
    unmodeled_crates: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)  # Rust crate path
    unmodeled_go: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)  # Go import path

    def builder_for(self, target: str) -> dict[str, Any] | None:
        return next((b for b in self.builders if target in b["classes"]), None)

    def otel_unit(self, unit: str) -> str:
        """opentelemetry-exporter-prometheus's ``map_unit``, with the tables of libraries.yaml."""
        unit = re.sub(r"{.*}", "", unit)
        if unit in self.otel_units:
            return self.otel_units[unit]
        top, slash, bottom = unit.partition("/")
        if slash and _sanitize(bottom):
            top, bottom = _sanitize(top), _sanitize(bottom)
            top = self.otel_units.get(top, top)
            bottom = self.otel_per_units.get(bottom, bottom)
            return f"{top}_per_{bottom}" if top else f"per_{bottom}"
        return _sanitize(unit).strip("_")


def _sanitize(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9:]+", "_", text)


def _type(text: str, where: str, file: Path | None = None) -> MetricType:
    try:
        return MetricType(text)
    except ValueError:
        raise UserInputError(f"{file or 'libraries.yaml'}: {where}: unknown metric type {text!r} "
                             f"(one of {', '.join(t.value for t in MetricType)})") from None


_BY_ARGUMENT = "by-argument"  # a class whose type is an argument (libraries.yaml's `kinds`)


@functools.cache
def conventions(path: str | None = None) -> Conventions:
    file = Path(path) if path else Path(__file__).with_name("libraries.yaml")
    data = load_data_file(file, SCHEMA)
    constructors: dict[str, Constructor] = {}
    for entry in data["constructors"]:
        kinds = tuple((name, _type(kind, name, file)) for name, kind in sorted(entry.get("kinds", {}).items()))
        for cls, kind in entry["classes"].items():
            buckets = entry.get("default_buckets")
            if kind == _BY_ARGUMENT and not (kinds and "kind" in entry["roles"]):
                raise UserInputError(f"{file}: {cls}: a type {_BY_ARGUMENT!r} needs `kinds` and the role `kind`")
            made = Constructor(entry["library"], entry["naming"],
                               None if kind == _BY_ARGUMENT else _type(kind, cls, file), tuple(entry["params"]),
                               dict(entry["roles"]), entry["read_from"],
                               None if buckets is None else tuple(float(b) for b in buckets),
                               entry.get("labels_at_use", ""), entry.get("buckets_at_use", ""), kinds)
            for module in entry["modules"]:
                constructors[f"{module}.{cls}"] = made
    instruments = {method: Constructor(entry["library"], entry["naming"], _type(kind, method),
                                       tuple(entry["params"]), dict(entry["roles"]), entry["read_from"],
                                       tuple(float(b) for b in entry.get("default_buckets", ())),
                                       entry.get("labels_at_use", ""))
                   for entry in data["instruments"] for method, kind in entry["methods"].items()}
    for entry in data["provided"] + data["builders"]:
        for metric in entry.get("metrics", []) + entry.get("default_metrics", []) + entry.get("optional_metrics", []):
            _type(metric["type"], metric["name"], file)
    return Conventions(constructors, instruments, tuple(data["provided"]), tuple(data["builders"]),
                       dict(data["otel_units"]), dict(data["otel_per_units"]),
                       frozenset(data["prometheus_synthetic"]),
                       *({name: (entry["library"], entry["what"]) for entry in data["unmodeled"]
                          for name in entry.get(key, ())} for key in ("modules", "includes", "crates", "go_imports")))
