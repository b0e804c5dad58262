"""Names a package imports on first access (PEP 562's module ``__getattr__``).

vLLM 0.34's ``transformers_utils/configs/__init__.py`` lists its config classes in ``__all__`` and
imports each from a table (``{"KimiK3Config": "vllm.transformers_utils.configs.kimi_k3", ...}``) when
first asked for it, through ``__getattr__`` and ``importlib.import_module``; Hugging Face's packages
hand a table of submodules and the names each defines to a ``_LazyModule``. Read as ordinary
imports neither binds anything: every listed name was said unbound (vLLM 0.34: 98 such
diagnostics), and ``from pkg.configs import KimiConfig`` resolved nowhere. A table read by a
``__getattr__`` that does not import (a rename) is no import.
"""

from __future__ import annotations

from tests.native_support import edges, nodes, written_bundle

FILES = {
    "pkg/__init__.py": "",
    "pkg/configs/__init__.py": """
        import importlib

        _CLASS_TO_MODULE: dict[str, str] = {
            "KimiConfig": "pkg.configs.kimi",
            "OvisConfig": ".ovis",
        }

        __all__ = ["KimiConfig", "OvisConfig"]


        def __getattr__(name: str):
            if name in _CLASS_TO_MODULE:
                module = importlib.import_module(_CLASS_TO_MODULE[name], __name__)
                return getattr(module, name)
            raise AttributeError(name)
        """,
    "pkg/configs/kimi.py": """
        class KimiConfig:
            def __init__(self, layers=2):
                self.layers = layers
        """,
    "pkg/configs/ovis.py": """
        class OvisConfig:
            pass
        """,
    "pkg/models/__init__.py": """
        import sys
        from ..utils import _LazyModule

        _import_structure = {"modeling_kimi": ["KimiModel"]}

        sys.modules[__name__] = _LazyModule(__name__, globals()["__file__"], _import_structure)
        """,
    "pkg/models/modeling_kimi.py": """
        class KimiModel:
            def run(self):
                return 1
        """,
    "pkg/utils.py": """
        class _LazyModule:
            def __init__(self, name, file, structure):
                self.structure = structure
        """,
    "pkg/renamed/__init__.py": """
        import warnings

        _RENAMED = {"OldConfig": "pkg.configs.kimi"}
        __all__ = ["OldConfig"]


        def __getattr__(name):
            warnings.warn(f"{name} is deprecated")
            return globals()[_RENAMED[name]]
        """,
    # vLLM 0.34's inkling ops: the table names modules relative to the package, which the import adds
    "pkg/ops/__init__.py": """
        from typing import TYPE_CHECKING

        _LAZY_EXPORTS = {"silu_and_mul": "activation"}

        if TYPE_CHECKING:
            from .activation import silu_and_mul  # noqa: F401

        __all__ = [*sorted(_LAZY_EXPORTS)]


        def __getattr__(name: str):
            module = _LAZY_EXPORTS.get(name)
            if module is not None:
                import importlib

                return getattr(importlib.import_module(f".{module}", __name__), name)
            raise AttributeError(name)
        """,
    "pkg/store/__init__.py": """
        __all__ = ["store"]


        def __getattr__(name):
            if name == "store":
                from pkg.store.triton_store import store
                from warnings import warn

                return store
            raise AttributeError(name)
        """,
    "pkg/store/triton_store.py": """
        def store(x):
            return x
        """,
    "pkg/ops/activation.py": """
        def silu_and_mul(x):
            return x
        """,
    "pkg/user.py": """
        from pkg.configs import KimiConfig, OvisConfig
        from pkg.models import KimiModel
        from pkg.ops import silu_and_mul
        from pkg.store import store


        def build():
            KimiModel().run()
            silu_and_mul(1)
            store(2)
            return KimiConfig(layers=4), OvisConfig()
        """,
}


def test_names_a_module_imports_on_first_access_are_its_names(tmp_path):
    bundle = written_bundle(tmp_path, FILES)
    unbound = sorted(d["message"] for d in bundle["diagnostics"] if d["code"] == "export-unbound")
    assert unbound == ["pkg.renamed.__all__ lists OldConfig, which the module does not bind"]
    graph = nodes(bundle)
    assert graph["py:pkg.configs.KimiConfig"]["kind"] == "attribute"  # a re-export of the class
    aliases = edges(bundle, "aliases")
    assert ("py:pkg.configs.KimiConfig", "py:pkg.configs.kimi.KimiConfig") in aliases
    assert ("py:pkg.configs.OvisConfig", "py:pkg.configs.ovis.OvisConfig") in aliases
    calls = edges(bundle, "calls")
    assert ("py:pkg.user.build", "py:pkg.configs.kimi.KimiConfig") in calls
    assert ("py:pkg.user.build", "py:pkg.models.modeling_kimi.KimiModel.run") in calls
    assert ("py:pkg.user.build", "py:pkg.ops.activation.silu_and_mul") in calls
    assert ("py:pkg.user.build", "py:pkg.store.triton_store.store") in calls
    assert ("py:pkg.store.store", "py:pkg.store.triton_store.store") in aliases
    assert not [n for n in graph if n.startswith("py:pkg.store.warn")]  # imported in __getattr__, never asked for
    assert not [e for e in edges(bundle, "imports") if e[1] == "py:activation"]  # no module of that name
    imports = edges(bundle, "imports")
    assert ("py:pkg.configs", "py:pkg.configs.kimi") in imports
    assert ("py:pkg.models", "py:pkg.models.modeling_kimi") in imports
    assert not [e for e in imports if e[0] == "py:pkg.renamed" and "kimi" in e[1]]
