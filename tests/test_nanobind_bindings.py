"""nanobind registrations (`NB_MODULE`) read by the C++ step and bound to Python calls by the
bindings step, with the mechanism "nanobind" (fixtures/nanobind_ext: the shapes of MLX's and
xgrammar's bindings, written small)."""

from __future__ import annotations

import shutil

import pytest

from extractor.bindings.python_cpp import CallSite, bind_call_sites
from extractor.context import ExtractOptions
from extractor.cpp import extract_cpp_graph
from extractor.cpp.standalone import scan_trees
from extractor.model import Contribution
from extractor.run.pipeline import extract_system

from tests.conftest import FIXTURES

FIXTURE = FIXTURES / "nanobind_ext"


@pytest.fixture(scope="module")
def cpp() -> Contribution:
    return extract_cpp_graph(scan_trees({"": FIXTURE}))


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("nanobind")
    shutil.copytree(FIXTURE, root / "src")
    return extract_system([str(root / "src")], options=ExtractOptions(jobs=1, cache_dir=root / "cache")).bundle


def test_nanobind_registrations_are_read_with_their_module_target_and_line(cpp):
    found = {(b.python_name, b.kind): (b.target, b.path, b.line, b.mechanism) for b in cpp.shared.pybind_bindings}
    nanobind = {key: value[:3] for key, value in found.items() if value[3] == "nanobind"}
    assert nanobind == {
        ("_native.tokenize", "def"): ("cpp:text::tokenize", "csrc/bindings.cc", 18),
        # chained on the module's `.def`, an overload picked with nb::overload_cast
        ("_native.count", "def"): ("cpp:text::count", "csrc/bindings.cc", 19),
        # a lambda: the first function it calls that is defined outside the binding file (not `strip`)
        ("_native.normalize", "def"): ("cpp:text::normalize", "csrc/bindings.cc", 20),
        # a lambda that calls nothing: read, bound to no function
        ("_native.answer", "def"): ("", "csrc/bindings.cc", 21),
        # def_rw / def_prop_ro are attributes (as pybind11's def_readwrite / def_property), nb::init no name
        ("_native.Vocab", "class"): ("cpp:text::Vocab", "csrc/bindings.cc", 23),
        ("_native.Vocab.lookup", "method"): ("cpp:text::Vocab::lookup", "csrc/bindings.cc", 25),
        ("_native.Vocab.load", "method"): ("cpp:text::Vocab::load", "csrc/bindings.cc", 28),
        # a class held in a variable, its methods defined on the variable
        ("_native.Matcher", "class"): ("cpp:text::Matcher", "csrc/bindings.cc", 30),
        ("_native.Matcher.accept", "method"): ("cpp:text::Matcher::accept", "csrc/bindings.cc", 32),
        ("_native.Mode", "class"): ("cpp:text::Mode", "csrc/bindings.cc", 34),
        # a submodule held in a variable
        ("_native.util.checksum", "def"): ("cpp:text::checksum", "csrc/bindings.cc", 39),
        ("_native.util.ping", "def"): ("cpp:text::ping", "csrc/bindings.cc", 40),
        # a submodule made by a function the module is handed to (`nanobind::module_&`); its lambda
        # calls a helper defined in another file first (`tx::clamp`), then the function named as the
        # binding (`tx::mean`, `tx` an alias of `text`), which it points at
        ("_native.stats.mean", "def"): ("cpp:text::mean", "csrc/stats_bindings.cc", 12),
        # a file that names nanobind `py` (`namespace py = nanobind;`)
        ("_native.Reader", "class"): ("cpp:text::Reader", "csrc/io_bindings.cc", 9),
        ("_native.Reader.read", "method"): ("cpp:text::Reader::read", "csrc/io_bindings.cc", 11),
        # a module named by a build definition: read as written, bound to nothing (see below)
        ("TEXTKIT_PLUGIN_NAME.ping", "def"): ("cpp:text::ping", "csrc/plugin.cc", 7),
    }
    # the pybind11 module beside it keeps its mechanism
    assert found[("_legacy.version", "def")] == ("cpp:text::version", "csrc/legacy.cc", 7, "pybind11")
    assert (cpp.stats["nanobind_bindings"], cpp.stats["pybind_bindings"]) == (len(nanobind), 1)
    # the NB_MODULE block is a registration block, no function of the graph
    assert not [n for n in cpp.nodes if n.name == "NB_MODULE"]


def test_bound_functions_say_which_library_made_them_public(cpp):
    api = {n.id: n.api for n in cpp.nodes}
    assert api["cpp:text::mean"] == "public: nanobind _native.stats.mean"
    assert api["cpp:text::Matcher::accept"] == "public: nanobind _native.Matcher.accept"
    assert api["cpp:text::version"] == "public: pybind11 _legacy.version"


def test_python_calls_bind_to_the_nanobind_registrations(bundle):
    binds = {(e["source"], e["target"], e["line"]) for e in bundle["graph"]["edges"] if e["kind"] == "binds"}
    assert binds == {
        ("py:textkit.api.split", "cpp:text::tokenize", 6),
        ("py:textkit.api.measure", "cpp:text::count", 10),
        ("py:textkit.api.measure", "cpp:text::normalize", 11),
        ("py:textkit.api.vocabulary", "cpp:text::Vocab::load", 16),
        ("py:textkit.api.vocabulary", "cpp:text::Vocab", 17),
        ("py:textkit.api.matches", "cpp:text::Matcher", 22),  # a name imported from the module
        ("py:textkit.api.matches", "cpp:text::Matcher::accept", 22),  # a method of the instance made
        ("py:textkit.api.digest", "cpp:text::checksum", 26),  # a submodule imported from it
        ("py:textkit.api.digest", "cpp:text::mean", 26),
        ("py:textkit.api.digest", "cpp:text::Reader", 26),
        ("py:textkit.api.digest", "cpp:text::Reader::read", 26),
        ("py:textkit.api.health", "cpp:text::version", 30),  # pybind11's
        ("py:textkit.user.build", "cpp:text::Vocab", 5),  # re-exported by the package
    }
    # not bound: `_native.answer()` (a lambda calling no function), `vocab.lookup(...)` (a method of
    # what a static method returns, which the call site does not say), `_native.missing()` (registered
    # nowhere)
    stats = bundle["stats"]["bindings"]
    assert (stats["nanobind_calls_bound"], stats["pybind_calls_bound"], stats["binds_edges"]) == (12, 1, 13)


def test_a_nanobind_module_named_by_an_unexplained_build_macro_says_so(bundle):
    [unnamed] = [d for d in bundle["diagnostics"] if d["code"] == "pybind-module-unnamed"]
    assert (unnamed["path"], unnamed["line"]) == ("csrc/plugin.cc", 7)
    assert unnamed["message"].startswith("the nanobind module of these bindings is named by the build macro "
                                         "TEXTKIT_PLUGIN_NAME")


def test_each_binding_carries_its_mechanism(cpp):
    sites = [CallSite("py:textkit.api.f", callee, "textkit/api.py", n) for n, callee in enumerate([
        "textkit._native.util.checksum", "textkit._legacy.version", "textkit._native.util.missing",
        "textkit._native.stats.mean"], start=1)]
    result = bind_call_sites(sites, (), cpp.shared.pybind_bindings)
    how = {(b.callee, b.mechanism, b.registered_at) for b in result.shared.bindings}
    assert how == {("textkit._native.util.checksum", "nanobind", "csrc/bindings.cc:39"),
                   ("textkit._legacy.version", "pybind11", "csrc/legacy.cc:7"),
                   ("textkit._native.stats.mean", "nanobind", "csrc/stats_bindings.cc:12")}


SHAPES = {
    # the namespace written out, a class constructed in place, a submodule of a submodule in one chain
    "qualified.cc": ("""
#include <nanobind/nanobind.h>
namespace geo { struct Point { int norm() const { return 0; } }; int area(int w) { return w; } }
NB_MODULE(_geo, m) {
  nanobind::class_<geo::Point> point(m, "Point");
  point.def("norm", &geo::Point::norm);
  m.def_submodule("shapes").def_submodule("flat").def("area", &geo::area);
}
""", {("_geo.Point", "class", 5), ("_geo.Point.norm", "method", 6), ("_geo.shapes.flat.area", "def", 7)}),
    # a helper handed a submodule, which registers on a submodule of its own
    "handed.cc": ("""
#include <nanobind/nanobind.h>
namespace nb = nanobind;
int solve(int x) { return x; }
void init_solvers(nb::module_& m) { auto s = m.def_submodule("solvers"); s.def("solve", &solve); }
NB_MODULE(_la, m) {
  auto linalg = m.def_submodule("linalg");
  init_solvers(linalg);
}
""", {("_la.linalg.solvers.solve", "def", 5)}),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_nanobind_registration_shapes(tmp_path, name):
    code, expected = SHAPES[name]
    (tmp_path / name).write_text(code)
    cpp = extract_cpp_graph(scan_trees({"": tmp_path}))
    assert {(b.python_name, b.kind, b.line) for b in cpp.shared.pybind_bindings if b.target} == expected
    assert {b.mechanism for b in cpp.shared.pybind_bindings} == {"nanobind"}
