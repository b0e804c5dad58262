"""One naming: module names from package layouts, relative imports and the C3 lineage, against Python."""

from __future__ import annotations

import dataclasses

import pytest

from extractor import naming


@dataclasses.dataclass(frozen=True)
class F:
    path: str
    rel: str
    source: str = ""


def names(*rels: str, source: str = "") -> dict[str, str]:
    found, _ = naming.module_names([F(f"{source}/{r}" if source else r, r, source) for r in rels])
    return {k.split("/", 1)[1] if source else k: v for k, v in found.items()}


def test_package_layout_src_layout_and_scripts():
    got = names("src/pkg/__init__.py", "src/pkg/mod.py", "src/pkg/sub/__init__.py", "src/pkg/sub/deep.py",
                "tools/run.py", "setup.py")
    assert got == {"src/pkg/__init__.py": "pkg", "src/pkg/mod.py": "pkg.mod", "src/pkg/sub/__init__.py": "pkg.sub",
                   "src/pkg/sub/deep.py": "pkg.sub.deep", "tools/run.py": "run", "setup.py": "setup"}


def test_namespace_packages_above_and_inside_a_package():
    got = names("google/cloud/storage/__init__.py", "google/cloud/storage/blob.py",
                "pkg/__init__.py", "pkg/data/loader.py")
    # google/ and google/cloud/ hold no module of their own: PEP 420 namespace portions
    assert got["google/cloud/storage/blob.py"] == "google.cloud.storage.blob"
    # a directory without __init__.py inside a package continues it
    assert got["pkg/data/loader.py"] == "pkg.data.loader"
    # a directory that holds a script is not a namespace portion; src/ never is
    assert names("tests/conftest.py", "tests/unit/__init__.py", "tests/unit/test_a.py")["tests/unit/test_a.py"] \
        == "unit.test_a"


def test_a_python_directory_with_modules_and_packages_below_is_a_namespace_package():
    """MLX's layout: ``python/pkg/`` has no __init__.py (``pkg.core`` is an extension), modules of its
    own and packages below; with python/ on the path they are ``pkg.*``, so that ``from pkg.nn import
    Module`` reaches them. Named ``nn.*`` and ``utils``, every import of the package bound nothing."""
    got = names("python/pkg/utils.py", "python/pkg/nn/__init__.py", "python/pkg/nn/layers/base.py",
                "python/tests/test_nn.py", "python/scripts/run.py")
    assert got == {"python/pkg/utils.py": "pkg.utils", "python/pkg/nn/__init__.py": "pkg.nn",
                   "python/pkg/nn/layers/base.py": "pkg.nn.layers.base", "python/tests/test_nn.py": "test_nn",
                   "python/scripts/run.py": "run"}


def test_a_src_directory_with_modules_and_packages_below_is_a_namespace_package():
    """Dynamo's maturin project (python-source = "src"): src/dynamo/ has no __init__.py, modules of its
    own and packages below; with src/ on the path all are ``dynamo.*``. A directory of src/ with modules
    and no package below (a C++ tree's src/resources/) is a directory of scripts, as before."""
    got = names("bindings/src/pkg/names.py", "bindings/src/pkg/runtime/__init__.py", "bindings/src/pkg/runtime/log.py",
                "bindings/src/pkg/_core.py", "src/resources/utils.py", "src/other/x.py", "src/other/y/z.py")
    assert got == {"bindings/src/pkg/names.py": "pkg.names", "bindings/src/pkg/runtime/__init__.py": "pkg.runtime",
                   "bindings/src/pkg/runtime/log.py": "pkg.runtime.log", "bindings/src/pkg/_core.py": "pkg._core",
                   "src/resources/utils.py": "utils", "src/other/x.py": "x", "src/other/y/z.py": "z"}


def test_a_clash_keeps_the_first_and_says_so():
    found, diagnostics = naming.module_names([F("a/x.py", "x.py", "a"), F("b/x.py", "x.py", "b")])
    assert found == {"a/x.py": "x", "b/x.py": "b.x"}
    assert [d.code for d in diagnostics] == ["module-name-clash"]


def test_a_package_that_clashes_is_named_after_its_directory_as_its_modules_are():
    """Script folders that each ship a `normalizers` package (whisper.cpp's tests): the second package
    is `b.normalizers`, never `b.normalizers.__init__`, so its `from .basic import X` reaches b's basic."""
    got = names("a/run.py", "a/normalizers/__init__.py", "a/normalizers/basic.py",
                "b/run.py", "b/normalizers/__init__.py", "b/normalizers/basic.py")
    assert got["a/normalizers/__init__.py"] == "normalizers"
    assert got["b/normalizers/__init__.py"] == "b.normalizers"
    assert got["b/normalizers/basic.py"] == "b.normalizers.basic"
    assert naming.resolve_relative(got["b/normalizers/__init__.py"], "basic", 1) == got["b/normalizers/basic.py"]


@pytest.mark.parametrize("package, target, level, expected", [
    ("pkg.sub", "mod", 1, "pkg.sub.mod"),
    ("pkg.sub", "", 1, "pkg.sub"),
    ("pkg.sub", "x", 2, "pkg.x"),
    ("pkg", "x", 3, None),  # above the top package
    ("pkg", "os.path", 0, "os.path"),
])
def test_relative_imports(package, target, level, expected):
    assert naming.resolve_relative(package, target, level) == expected


def test_package_of_a_module_and_of_a_package():
    assert naming.package_of("pkg.sub.mod", False) == "pkg.sub"
    assert naming.package_of("pkg.sub", True) == "pkg.sub"
    assert naming.resolve_dotted("pkg.sub", "..core.Pool") == "pkg.core.Pool"


def test_c3_equals_python_mro_on_a_diamond_and_a_deep_hierarchy():
    class O: ...
    class A(O): ...
    class B(O): ...
    class C(O): ...
    class D(O): ...
    class E(O): ...
    class K1(A, B, C): ...
    class K2(D, B, E): ...
    class K3(D, A): ...
    class Z(K1, K2, K3): ...

    classes = [O, A, B, C, D, E, K1, K2, K3, Z]
    bases = {c.__name__: [b.__name__ for b in c.__bases__ if b is not object] for c in classes}
    lineage = naming.Lineage(bases)
    for cls in classes:
        assert lineage.mro(cls.__name__) == tuple(c.__name__ for c in cls.__mro__ if c is not object)
    assert not lineage.inconsistent


def test_an_order_python_rejects_falls_back_and_is_flagged():
    # class X(A, B) with A(B): Python raises "Cannot create a consistent method resolution order"
    lineage = naming.Lineage({"X": ["B", "A"], "A": ["B"]})
    assert lineage.mro("X") == ("X", "B", "A")
    assert lineage.inconsistent == {"X"}


def test_ids():
    assert naming.py_id("a.b") == "py:a.b" and naming.cpp_id("ns::T") == "cpp:ns::T"
    assert naming.file_id("core/x.cc") == "file:core/x.cc" and naming.id_name("cpp:ns::T") == "ns::T"


# Every shape of directory without __init__.py, written out as files: inside a package at any depth,
# a regular package below such directories, a src/ layout, namespace portions above the topmost
# package, a script directory, and a directory import cannot spell.
_IMPORT_TREE = ("pkg/__init__.py", "pkg/core.py", "pkg/types/__init__.py", "pkg/types/providers/x.py",
                "pkg/types/providers/deeper/still/y.py", "pkg/ns/sub/__init__.py", "pkg/ns/sub/m.py",
                "pkg/ns/plain.py", "src/lib2/__init__.py", "src/lib2/deep/er/z.py",
                "src/nsp/own.py", "src/nsp/inner/__init__.py", "src/nsp/inner/k.py",
                "google/cloud/x/__init__.py", "google/cloud/x/api.py", "tools/run.py",
                "pkg/my-data/gen.py", "pkg2/__init__.py", "pkg2/a/b/c/__init__.py", "pkg2/a/b/c/d.py")


def test_every_module_is_named_what_import_finds_for_it(tmp_path):
    """The names against Python's own import system: with the tree's import roots on sys.path (the
    tree and its src/), ``importlib.util.find_spec(name)`` must find exactly the file named so.
    Files import cannot reach from there (a script in tools/, a directory named my-data) are named
    as scripts, never as a module of the package around them."""
    import json
    import subprocess
    import sys

    for rel in _IMPORT_TREE:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    got = names(*_IMPORT_TREE)
    probe = ("import importlib.util, json, sys\n"
             "def origin(name):\n"
             "    try:\n"
             "        spec = importlib.util.find_spec(name)\n"
             "    except (ImportError, ValueError):\n"
             "        return None\n"
             "    return spec.origin if spec else None\n"
             "print(json.dumps({n: origin(n) for n in json.loads(sys.argv[1])}))")
    done = subprocess.run([sys.executable, "-c", probe, json.dumps(sorted(set(got.values())))], cwd=tmp_path,
                          env={"PYTHONPATH": f"{tmp_path}:{tmp_path / 'src'}", "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, check=True)
    found = {name: origin for name, origin in json.loads(done.stdout).items()}
    scripts = {"tools/run.py", "pkg/my-data/gen.py"}
    for rel, name in got.items():
        if rel in scripts:
            assert "." not in name, (rel, name)
        else:
            assert found[name] == str(tmp_path / rel), (rel, name, found[name])
    assert got["pkg/types/providers/deeper/still/y.py"] == "pkg.types.providers.deeper.still.y"
    assert got["src/lib2/deep/er/z.py"] == "lib2.deep.er.z"


def test_a_project_inside_the_tree_is_named_as_installed():
    """vLLM ships plugins under tests/plugins/<plugin>/ with their own setup.py: their packages are
    imported as installed (``vllm_add_dummy_model.my_opt``), not through the tests package around them."""
    got = names("tests/__init__.py", "tests/plugins/dummy/setup.py", "tests/plugins/dummy/dummy_model/__init__.py",
                "tests/plugins/dummy/dummy_model/my_opt.py", "tests/plugins/test_plugins.py")
    assert got["tests/plugins/dummy/dummy_model/my_opt.py"] == "dummy_model.my_opt"
    assert got["tests/plugins/test_plugins.py"] == "tests.plugins.test_plugins"
    assert got["tests/plugins/dummy/setup.py"] == "setup"


def test_a_package_that_ships_as_its_own_wheel_stays_in_its_package():
    """TransformerEngine's framework packages (pkg/torch/, pkg/jax/) have a setup.py each, built as
    their own wheels into the parent package: a directory with a setup.py that is itself a package
    inside a package continues it, and its __init__.py is never a module named ``__init__``."""
    got = names("setup.py", "pkg/__init__.py", "pkg/common.py", "pkg/torch/setup.py", "pkg/torch/__init__.py",
                "pkg/torch/fp8.py", "pkg/jax/setup.py", "pkg/jax/__init__.py", "pkg/jax/router.py",
                "pkg/torch/router.py")
    assert got["pkg/torch/fp8.py"] == "pkg.torch.fp8"
    assert got["pkg/jax/__init__.py"] == "pkg.jax"
    assert got["pkg/jax/router.py"] == "pkg.jax.router"
    assert got["pkg/torch/router.py"] == "pkg.torch.router"  # no clash: each in its package
    assert got["pkg/torch/setup.py"] == "pkg.torch.setup"
