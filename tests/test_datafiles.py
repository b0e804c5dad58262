"""Every YAML file archdiff ships is read through the one checked loader (extractor.support.datafile): a
broken copy is one line naming the file and the key, never a KeyError deep inside a step."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from comparator.kinds.telemetry.crosswalk import VOCABULARY_SCHEMA, crosswalk_vocabulary
from extractor.bindings.python_ctypes import RULES_SCHEMA as CTYPES_SCHEMA
from extractor.bindings.python_ctypes import load_rules as load_ctypes_rules
from extractor.bindings.python_tvm_ffi import RULES_SCHEMA as TVM_FFI_SCHEMA
from extractor.bindings.python_tvm_ffi import load_rules as load_tvm_ffi_rules
from extractor.concepts import DETECTORS_SCHEMA, load_detectors
from extractor.cpp.handles import HANDLES_SCHEMA, load_handles
from extractor.cpp.parse import MACROS_SCHEMA, macro_config
from extractor.cpp.scan import LAUNCHERS_SCHEMA, kernel_launchers
from extractor.cpp.testmacros import TESTMACROS_SCHEMA, load_test_macros
from extractor.support.datafile import load_data_file
from extractor.generated import GENERATED_SCHEMA, load_generator_rules
from extractor.errors import UserInputError
from extractor.layers.taxonomy import TAXONOMY_SCHEMA, load_taxonomy
from extractor.presets import PRESET_SCHEMA, load_preset
from extractor.structs.compilers import TARGETS_SCHEMA, load_targets
from extractor.structs.reasons import SCHEMA as SUPPLIERS_SCHEMA
from extractor.structs.reasons import load_suppliers
from extractor.structs.tags import RULES_SCHEMA, load_rules
from extractor.python.api import _SCHEMA as PYAPI_SCHEMA
from extractor.bindings.python_ops import REGISTRARS_SCHEMA, outside_registrars
from extractor.python.api import load_rules as load_api_rules
from extractor.python.constructors import _SCHEMA as CONSTRUCTORS_SCHEMA
from extractor.python.constructors import load_libraries
from extractor.telemetry.libraries import SCHEMA as LIBRARIES_SCHEMA
from extractor.telemetry.libraries import conventions
from extractor.telemetry.records import NAMING_SCHEMA
from tests.conftest import ROOT

# shipped file -> (the schema its reader checks it against, the reader as the code calls it)
SHIPPED = {
    "comparator/kinds/telemetry/crosswalk.yaml": (VOCABULARY_SCHEMA, lambda p: crosswalk_vocabulary(p)),
    "extractor/bindings/ctypes.yaml": (CTYPES_SCHEMA, lambda p: load_ctypes_rules(p)),
    "extractor/bindings/registrars.yaml": (REGISTRARS_SCHEMA, lambda p: outside_registrars.__wrapped__(p)),
    "extractor/bindings/tvm_ffi.yaml": (TVM_FFI_SCHEMA, lambda p: load_tvm_ffi_rules(p)),
    "extractor/concepts/detectors.yaml": (DETECTORS_SCHEMA, load_detectors),
    "extractor/cpp/handles.yaml": (HANDLES_SCHEMA, lambda p: load_handles(p)),
    "extractor/cpp/macros.yaml": (MACROS_SCHEMA, lambda p: macro_config(p)),
    "extractor/cpp/launchers.yaml": (LAUNCHERS_SCHEMA, lambda p: kernel_launchers(p)),
    "extractor/cpp/testmacros.yaml": (TESTMACROS_SCHEMA, lambda p: load_test_macros(p)),
    "extractor/generated/generated.yaml": (GENERATED_SCHEMA, load_generator_rules),
    "extractor/layers/roles.yaml": (TAXONOMY_SCHEMA, load_taxonomy),
    "extractor/structs/tags.yaml": (RULES_SCHEMA, lambda p: load_rules(p)),
    "extractor/structs/suppliers.yaml": (SUPPLIERS_SCHEMA, lambda p: load_suppliers(p)),
    "extractor/structs/targets.yaml": (TARGETS_SCHEMA, lambda p: load_targets(p)),
    "extractor/telemetry/naming.yaml": (NAMING_SCHEMA, lambda p: load_data_file(p, NAMING_SCHEMA)),
    "extractor/telemetry/libraries.yaml": (LIBRARIES_SCHEMA, lambda p: conventions(str(p))),
    "extractor/python/api.yaml": (PYAPI_SCHEMA, lambda p: load_api_rules(p)),
    "extractor/python/constructors.yaml": (CONSTRUCTORS_SCHEMA, lambda p: load_libraries(p)),
    **{f"extractor/presets/{p.name}": (PRESET_SCHEMA, load_preset)
       for p in sorted((ROOT / "extractor" / "presets").glob("*.yaml"))},
}


def test_every_shipped_yaml_has_a_checked_reader():
    shipped = {p.relative_to(ROOT).as_posix() for top in ("extractor", "comparator", "archdiff")
               for p in (ROOT / top).rglob("*.yaml")}
    assert shipped == set(SHIPPED)


@pytest.mark.parametrize("rel", sorted(SHIPPED))
def test_shipped_file_loads(rel):
    schema, read = SHIPPED[rel]
    assert read(ROOT / rel)
    load_data_file(ROOT / rel, schema)


def _first_key_path(data, schema):
    """A top-level key of ``data`` (no schema takes a list of lists there)."""
    assert isinstance(data, dict), "a data file is a mapping at the top"
    key = sorted(data)[0]
    return key, key


@pytest.mark.parametrize("rel", sorted(SHIPPED))
def test_a_wrong_value_is_one_line_naming_file_and_key(tmp_path, rel):
    schema, read = SHIPPED[rel]
    data = yaml.safe_load((ROOT / rel).read_text(encoding="utf-8"))
    where, key = _first_key_path(data, schema)
    data[key] = [["not", "this"]]
    broken = tmp_path / Path(rel).name
    broken.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(UserInputError) as err:
        read(broken)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{broken}: {where}")


@pytest.mark.parametrize("rel", sorted(SHIPPED))
def test_invalid_yaml_names_the_file_and_line(tmp_path, rel):
    _schema, read = SHIPPED[rel]
    broken = tmp_path / Path(rel).name
    shutil.copy(ROOT / rel, broken)
    broken.write_text("unclosed: [1, 2\n" + broken.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(UserInputError, match=rf"^{broken}:\d+: not valid YAML"):
        read(broken)


def _shipped_yaml() -> list[Path]:
    root = Path(__file__).resolve().parent.parent
    return sorted([*root.glob("extractor/**/*.yaml"), *root.glob("comparator/**/*.yaml")])


@pytest.mark.parametrize("path", _shipped_yaml(), ids=lambda p: p.name)
def test_a_shipped_file_reads_as_the_bounded_loader_reads_it(path):
    """archdiff's own files go through libyaml (6x faster); they must give the data the bounded
    loader gives, and pass its rules (no tags), so a user's copy of one reads the same."""
    from extractor.support import safeyaml
    from extractor.support.datafile import read_yaml_file

    bounded = safeyaml.safe_load(path.read_text(encoding="utf-8"), safeyaml.USER_LIMITS, strict_tags=True)
    assert read_yaml_file(path) == bounded


def test_a_users_copy_of_a_shipped_file_goes_through_the_bounded_loader(tmp_path, monkeypatch):
    from extractor.support import datafile, safeyaml

    calls: list[str] = []
    original = safeyaml.safe_load
    monkeypatch.setattr(safeyaml, "safe_load", lambda text, *a, **k: calls.append(text) or original(text, *a, **k))
    shipped = Path(datafile.__file__).resolve().parent.parent / "layers" / "roles.yaml"
    datafile.read_yaml_file(shipped)
    assert calls == []
    copy = tmp_path / "roles.yaml"
    shutil.copy(shipped, copy)
    assert datafile.read_yaml_file(copy) == datafile.read_yaml_file(shipped) and len(calls) == 1
