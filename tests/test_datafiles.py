"""Every YAML file archdiff ships is read through the one checked loader (extractor.support.datafile): a
broken copy is one line naming the file and the key, never a KeyError deep inside a step."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from comparator.kinds.telemetry.crosswalk import VOCABULARY_SCHEMA, crosswalk_vocabulary
from extractor.concepts import DETECTORS_SCHEMA, load_detectors
from extractor.cpp.parse import MACROS_SCHEMA, macro_config
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
    "extractor/concepts/detectors.yaml": (DETECTORS_SCHEMA, load_detectors),
    "extractor/cpp/macros.yaml": (MACROS_SCHEMA, lambda p: macro_config(p)),
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
