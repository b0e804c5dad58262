"""SWIG interface files: the module `%module` names wraps the headers `%include`d into it (namespaces
flattened, templates only where `%template` names them, `%ignore` and `%rename` applied, a class's
proxy inheriting its wrapped bases' methods), and Python calls into that module bind to the C++ behind
each name (faiss's `swigfaiss`, made of 139 headers, had no binding and no word of one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from extractor.context import ExtractOptions
from extractor.run.pipeline import extract_system

FILES = {
    "include/vs/index.h": r'''
#pragma once
namespace vs {
struct Index {
    explicit Index(int d);
    virtual ~Index();
    virtual void add(int n, const float* x);
    void search(int n, const float* x, int k) const;
  private:
    void grow();
};
struct IndexFlat : Index {
    explicit IndexFlat(int d);
    void add(int n, const float* x) override;
    void reset();
    struct Inner { void skipped(); };
};
template <typename T>
struct Combiner {
    void run(T value);
};
template <typename T>
struct NeverInstantiated {
    void run(T value);
};
void knn(const float* x, int n);
void hidden(int n);
}  // namespace vs
''',
    "include/vs/util.h": r'''
#pragma once
namespace vs {
int version();
}
''',
    "include/vs/internal.h": r'''
#pragma once
namespace vs {
void not_wrapped();  // compiled into the wrapper (#include in %{ %}), never %included
}
''',
    "src/index.cpp": r'''
#include <vs/index.h>
namespace vs {
Index::Index(int d) {}
Index::~Index() {}
void Index::add(int n, const float* x) {}
void Index::search(int n, const float* x, int k) const {}
void Index::grow() {}
IndexFlat::IndexFlat(int d) : Index(d) {}
void IndexFlat::add(int n, const float* x) {}
void IndexFlat::reset() {}
void knn(const float* x, int n) {}
void hidden(int n) {}
int version() { return 1; }
void not_wrapped() {}
}
''',
    "swig/vs.swig": r'''
%module(directors="1") swigvs;
%{
#include <vs/index.h>
#include <vs/internal.h>
%}
%include <std_string.i>
// %include <vs/internal.h>
%ignore vs::hidden;
%rename(FlatIndex) vs::IndexFlat;
%include "extra.i"
%include <vs/index.h>
%template(CombinerFloat) vs::Combiner<float>;
%inline %{
int helper_inline(int x) { return x; }
%}
''',
    "swig/extra.i": "%include <vs/util.h>\n",
    "vs/__init__.py": "from .swigvs import *\n",
    "vs/api.py": '''from vs import swigvs
from vs.swigvs import knn


def build(d):
    index = swigvs.FlatIndex(d)
    swigvs.knn(None, 1)
    knn(None, 2)
    swigvs.version()
    swigvs.hidden(3)
    swigvs.CombinerFloat().run(1.0)
    swigvs.FlatIndex.search(index, 1, None, 4)
    swigvs.FlatIndex.add(index, 1, None)
    swigvs.not_wrapped()
    return index
''',
}


def _extracted(root: Path, files: dict[str, str]) -> dict:
    """The bundle of ``files`` written under ``root / "src"``."""
    for rel, text in files.items():
        (root / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "src" / rel).write_text(text.lstrip("\n"))
    return extract_system([str(root / "src")], options=ExtractOptions(jobs=1, cache_dir=root / "c")).bundle


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return _extracted(tmp_path_factory.mktemp("swig"), FILES)


def test_python_calls_into_a_swig_module_bind_to_the_wrapped_cpp(bundle):
    binds = {(e["target"], e["line"]) for e in bundle["graph"]["edges"]
             if e["kind"] == "binds" and e["source"] == "py:vs.api.build"}
    assert binds == {
        ("cpp:vs::IndexFlat", 6),  # %rename(FlatIndex) vs::IndexFlat
        ("cpp:vs::knn", 7),  # a function of the module
        ("cpp:vs::knn", 8),  # a name imported from it
        ("cpp:vs::version", 9),  # from a header of an interface file it %includes
        ("cpp:vs::Combiner", 11),  # %template(CombinerFloat) vs::Combiner<float>
        ("cpp:vs::Combiner::run", 11),  # a method of the instance made
        ("cpp:vs::Index::search", 12),  # inherited from the wrapped base
        ("cpp:vs::IndexFlat::add", 13),  # the override, not the base's
    }  # not bound: hidden (%ignore), not_wrapped (never %included)
    assert bundle["stats"]["bindings"]["swig_calls_bound"] == 8


def test_a_swig_module_says_what_it_binds_and_what_it_does_not_read(bundle):
    [note] = [d for d in bundle["diagnostics"] if d["code"] == "swig-module"]
    assert (note["path"], note["line"]) == ("swig/vs.swig", 1)
    assert note["message"].startswith("SWIG module swigvs wraps 2 header(s) of the system: ")
    assert "8 Python call(s) reach them" in note["message"]
    assert "(%inline, %extend: vs.swig:13)" in note["message"]
    stats = bundle["stats"]["cpp"]
    # Index, FlatIndex, CombinerFloat; knn, version; add, search (Index), add, reset, search (FlatIndex), run
    assert (stats["swig_modules"], stats["swig_bindings"], stats["swig_bindings_resolved"]) == (1, 11, 11)
    assert bundle["stats"]["files"]["swig"] == 2


def test_what_a_swig_module_wraps_is_the_systems_api(bundle):
    api = {n["id"]: n.get("api", "") for n in bundle["graph"]["nodes"]}
    assert api["cpp:vs::IndexFlat"] == "public: swig swigvs.FlatIndex"
    assert api["cpp:vs::Index::search"] == "public: swig swigvs.Index.search"  # its own class's, not FlatIndex's
    assert api["cpp:vs::Combiner::run"] == "public: swig swigvs.CombinerFloat.run"
    assert api["cpp:vs::hidden"] == "public: public header include/vs/index.h"  # %ignore: not bound
    assert api["cpp:vs::Index::grow"] == "internal: private member"


def test_a_swig_module_no_call_reaches_says_where_it_is_imported(tmp_path: Path):
    # faiss's loader.py star-imports swigfaiss, and the rest of its Python calls `faiss.X`: a package its
    # setup.py assembles by copying files, which the graph cannot name
    files = {**FILES, "vs/__init__.py": "from .swigvs import *\n", "vs/api.py": "import faiss\n\nfaiss.knn(None, 1)\n"}
    bundle = _extracted(tmp_path, files)
    [note] = [d for d in bundle["diagnostics"] if d["code"] == "swig-module"]
    assert "and 0 Python call(s) reach them; the system's Python imports it at vs/__init__.py:1, and no call " \
           "through those imports" in note["message"]
    (tmp_path / "src" / "vs" / "__init__.py").write_text("")
    bundle = extract_system([str(tmp_path / "src")], options=ExtractOptions(jobs=1, cache_dir=tmp_path / "c")).bundle
    [note] = [d for d in bundle["diagnostics"] if d["code"] == "swig-module"]
    assert "; no Python file of the system imports it" in note["message"]


# SWIG's generated proxy module, kept in the tree (sentencepiece does): each proxy calls the low-level
# extension `_swigvs` by the flat names SWIG gives its wrappers
PROXY = '''from . import _swigvs


class Index(object):
    def __init__(self, d):
        _swigvs.Index_swiginit(self, _swigvs.new_Index(d))

    def search(self, n, x, k):
        return _swigvs.Index_search(self, n, x, k)


class FlatIndex(Index):
    def add(self, n, x):
        return _swigvs.FlatIndex_add(self, n, x)

    def search_again(self, n, x, k):
        return _swigvs.FlatIndex_search(self, n, x, k)


def knn(x, n):
    return _swigvs.knn(x, n)


def helper_inline(x):
    return _swigvs.helper_inline(x)
'''


def test_a_generated_proxy_module_binds_through_the_low_level_modules_flat_names(tmp_path: Path):
    files = {**FILES, "vs/swigvs.py": PROXY, "vs/api.py": ""}
    bundle = _extracted(tmp_path, files)
    binds = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    assert binds == {
        ("py:vs.swigvs.Index.__init__", "cpp:vs::Index", 6),  # new_Index: the constructor
        ("py:vs.swigvs.Index.search", "cpp:vs::Index::search", 9),
        ("py:vs.swigvs.FlatIndex.add", "cpp:vs::IndexFlat::add", 14),  # %rename(FlatIndex): the proxy's name
        ("py:vs.swigvs.knn", "cpp:vs::knn", 21),
    }  # not bound: FlatIndex_search (inherited: SWIG writes no such wrapper), helper_inline (%inline: not read)
    [note] = [d for d in bundle["diagnostics"] if d["code"] == "swig-module"]
    assert "11 name(s) of their functions" in note["message"] and "4 Python call(s) reach them" in note["message"]
    api = {n["id"]: n.get("api", "") for n in bundle["graph"]["nodes"]}
    assert api["cpp:vs::IndexFlat::add"] == "public: swig swigvs.FlatIndex.add"  # the proxy's name, not the flat one
    # new_Index, new_FlatIndex, new_CombinerFloat; knn, version; Index_add, Index_search, FlatIndex_add,
    # FlatIndex_reset, CombinerFloat_run
    assert bundle["stats"]["cpp"]["swig_flat_bindings"] == 10


# `%extend` writes methods of its own; each binds to the members of the class its body calls through $self
EXTENDED = FILES["swig/vs.swig"] + r'''
%extend vs::IndexFlat {
    IndexFlat(int a, int b) { return new vs::IndexFlat(a + b); }
    void add_twice(int n, const float* x) {
        $self->add(n, x);
        $self->add(n, x);
        $self->search(n, x, 1);  // inherited from vs::Index
    }
    int count() const { return 0; }
%pythoncode {
    def size(self):
        return {"n": self.count()}
}
}
'''
EXTENDED_PROXY = '''from . import _swigvs


class FlatIndex(object):
    def add_twice(self, n, x):
        return _swigvs.FlatIndex_add_twice(self, n, x)

    def count(self):
        return _swigvs.FlatIndex_count(self)
'''


def test_methods_an_extend_block_writes_bind_to_the_members_they_call(tmp_path: Path):
    files = {**FILES, "swig/vs.swig": EXTENDED, "vs/swigvs.py": EXTENDED_PROXY,
             "vs/api.py": "from vs import swigvs\n\n\ndef go(index):\n    index.add_twice(1, None)\n"}
    bundle = _extracted(tmp_path, files)
    binds = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    assert binds == {
        ("py:vs.swigvs.FlatIndex.add_twice", "cpp:vs::IndexFlat::add", 6),  # FlatIndex_add_twice: its flat name
        ("py:vs.swigvs.FlatIndex.add_twice", "cpp:vs::Index::search", 6),
    }  # count: its body calls no member; the constructor and %pythoncode are no methods
    [note] = [d for d in bundle["diagnostics"] if d["code"] == "swig-module"]
    assert "11 name(s) of their functions" in note["message"]  # the headers' names, as before
    assert "; 1 of the 2 method(s) %extend blocks write are bound to the members they call through $self; " \
        in note["message"]
