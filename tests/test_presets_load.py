"""Presets: the shipped ones load and say what they compare; malformed files are one-line errors."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from archdiff.commands.presets import presets as presets_command
from extractor.buildsettings import BuildSettings
from extractor.errors import UserInputError
from extractor.acquire.sources import default_label
from extractor.presets import Preset, SystemSpec, list_presets, load_preset


def test_shipped_presets_are_listed_by_name():
    names = [p.name for p in list_presets()]
    assert names == sorted(names)
    assert {"vllm-vs-triton", "vllm-0.10.1-vs-0.10.2", "sglang-vs-vllm"} <= set(names)


def test_vllm_vs_triton_is_one_git_repo_against_five_labelled_ones():
    preset = load_preset("vllm-vs-triton")
    vllm, triton = preset.systems
    assert vllm == SystemSpec("vLLM", "v0.10.2", ("https://github.com/vllm-project/vllm@v0.10.2",), ("",),
                              BuildSettings(headers_from=("pypi:torch==2.8.0", "pypi:nvidia-cutlass")))
    assert triton.labels == ("server", "core", "common", "backend", "python_backend")
    assert all(s.endswith("@r25.08") for s in triton.sources)
    assert [s.rsplit("/", 1)[1].split("@")[0] for s in triton.sources] == list(triton.labels)


def test_release_drift_preset_runs_from_the_package_index():
    old, new = load_preset("vllm-0.10.1-vs-0.10.2").systems
    assert (old.sources, new.sources) == (("pypi:vllm==0.10.1",), ("pypi:vllm==0.10.2",))
    assert (old.version, new.version) == ("0.10.1", "0.10.2")


def test_a_user_preset_file_by_path(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\ntitle: Mine\nsystems:\n"
                    "  - {name: A, version: '1', sources: ['./a', './b']}\n"
                    "  - {name: B, version: '2', sources: ['pypi:b==2']}\n")
    preset = load_preset(path)
    assert isinstance(preset, Preset) and preset.name == "mine" and preset.description == ""
    assert preset.systems[0].labels == ("a", "b")  # several sources: each gets a path prefix
    assert preset.systems[1].labels == ("",)


@pytest.mark.parametrize("text, key", [
    ("title: T\nsystems: []\n", "name"),
    ("name: x\ntitle: T\nsystems:\n  - {name: A, version: 1, sources: [a]}\n  - {name: B, version: '2', sources: [b]}\n",
     "systems[0].version"),
    ("name: x\ntitle: T\nsystems:\n  - {name: A, version: '1', source: [a]}\n", "systems[0].source"),
    ("name: x\ntitle: T\nsystems:\n  - {name: A, version: '1', sources: [a]}\n", "systems"),
    ("name: x\ntitle: T\nsystems:\n  - {name: A, version: '1', sources: [{label: a}]}\n"
     "  - {name: B, version: '2', sources: [b]}\n", "systems[0].sources[0].spec"),
    ("name: Bad Name\ntitle: T\nsystems: []\n", "name"),
    ("name: x\ntitle: T\nsystems:\n  - {name: A, version: '1', sources: [./x/a, ./y/a]}\n"
     "  - {name: B, version: '2', sources: [b]}\n", "systems[0].sources"),
    ("name: [x\n", "broken.yaml:2: not valid YAML"),
])
def test_a_malformed_preset_is_one_line_naming_file_and_key(tmp_path, text, key):
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(UserInputError) as err:
        load_preset(path)
    message = str(err.value)
    assert "\n" not in message and "broken.yaml" in message and key in message
    assert err.value.exit_code == 2


def test_an_unknown_preset_name_lists_the_known_ones():
    with pytest.raises(UserInputError, match="vllm-vs-triton"):
        load_preset("no-such-battle")


def test_default_labels_are_repository_or_package_names():
    assert default_label("https://github.com/triton-inference-server/core@r25.08") == "core"
    assert default_label("file:///srv/mirrors/core.git@r25.08") == "core"
    assert default_label("pypi:vllm==0.10.2") == "vllm"


def test_a_system_file_labels_its_sources_as_the_command_line_does(tmp_path, monkeypatch):
    from extractor.presets import load_system_file
    from extractor.run.pipeline import acquire_sources

    (tmp_path / "app").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "app" / "sys.yaml").write_text("sources: [., ../lib]\n")
    monkeypatch.chdir(tmp_path / "app")
    system = load_system_file("sys.yaml")
    trees = acquire_sources(system.sources, tmp_path / "cache")  # unlabelled: the pipeline labels them
    assert system.labels == tuple(t.label for t in trees) == ("app", "lib")


def test_a_system_file_takes_labels_in_both_forms_and_may_leave_name_and_version_to_its_sources(tmp_path):
    from extractor.presets import load_system_file

    path = tmp_path / "sys.yaml"
    path.write_text("sources:\n  - core=https://h/core@v1\n  - {label: srv, spec: 'https://h/server@v1'}\n"
                    "  - https://h/common.git@v1\n")
    system = load_system_file(path)
    assert (system.name, system.version, system.labels) == ("", "", ("core", "srv", "common"))
    assert system.specs() == ["core=https://h/core@v1", "srv=https://h/server@v1", "common=https://h/common.git@v1"]


@pytest.mark.parametrize("text, message", [
    ("name: x\nversion: 1\nsources: [.]\n", "sys.yaml: version: expected a string, got 1"),
    ("name: x\nsources: []\n", "sys.yaml: sources: at least one source spec is needed"),
    ("name: x\nsources: [a, ./a]\n", "sys.yaml: sources: labels must differ between sources"),
    ("name: x\ntitle: T\nsystems: []\n", "sys.yaml: this is a preset (it lists systems): run `archdiff battle"),
])
def test_a_malformed_system_file_is_one_line_naming_file_and_key(tmp_path, text, message):
    from extractor.presets import load_system_file

    path = tmp_path / "sys.yaml"
    path.write_text(text)
    with pytest.raises(UserInputError) as err:
        load_system_file(path)
    assert str(err.value).startswith(f"{path}: ") and message in str(err.value) and "\n" not in str(err.value)


def test_presets_command_lists_name_and_title():
    result = CliRunner().invoke(presets_command, [])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert len(lines) == len(list_presets())
    assert any(line.startswith("vllm-vs-triton") and "Triton Inference Server" in line for line in lines)


def test_a_system_file_with_a_malformed_build_mapping_is_one_line(tmp_path):
    from extractor.presets import load_system_file

    path = tmp_path / "sys.yaml"
    path.write_text("name: x\nversion: '1'\nsources: [.]\nbuild:\n  defines: WITH_TRACE\n")
    with pytest.raises(UserInputError, match=r"sys\.yaml: build\.defines: expected a list"):
        load_system_file(path)
    path.write_text("name: x\nversion: '1'\nsources: [.]\nbuild:\n  include_dirs: [sdk]\n  headers_from: ['pypi:torch']\n")
    system = load_system_file(path)
    assert system.build.include_dirs == (str(tmp_path / "sdk"),) and system.specs() == ["."]
