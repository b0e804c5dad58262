"""Rust members: named fields and enum variants are attribute nodes inside their type, and every
`impl` block of a type, in whatever file, is a site of the type."""

from __future__ import annotations

import pytest

from extractor.model import EdgeKind, Language, Location, NodeKind, ParsedFile
from extractor.native.manifests import Crate, Manifests
from extractor.rust import build_rust_graph, scan_rust
from extractor.rust.parse import parse_source

LIB = b"""pub mod shapes;
mod more;
"""
SHAPES = b"""pub struct Point {
    pub x: f64,
    pub(crate) y: f64,
    tag: Option<String>,
}
pub struct Pair(pub u8, u16);
pub enum Shape {
    Dot,
    Circle(f64),
    Rect { w: f64, h: f64 },
}
enum Hidden { A }
pub union Bits { i: u32, pub f: f32 }
impl Point {
    pub fn norm(&self) -> f64 { 0.0 }
    pub fn x(&self) -> f64 { self.x }
}
"""
MORE = b"""use crate::shapes::{Point, Shape};

impl Shape {
    pub fn area(&self) -> f64 { 0.0 }
}

impl Default for Point {
    fn default() -> Self { todo!() }
}

impl Default for Vec2 {
    fn default() -> Self { todo!() }
}
"""


@pytest.fixture(scope="module")
def graph():
    files = [("src/lib.rs", LIB), ("src/shapes.rs", SHAPES), ("src/more.rs", MORE)]
    facts = [(p, scan_rust(ParsedFile(Language.RUST, d, parse_source(d)))) for p, d in files]
    contribution = build_rust_graph(facts, Manifests(crates=(Crate("", "geo", "geo", "src/lib.rs"),)))
    return {n.id: n for n in contribution.nodes}, contribution.edges


def test_named_fields_are_members_with_their_type_visibility_and_line(graph):
    found, edges = graph
    x, y, tag = (found[f"rs:geo::shapes::Point::{f}"] for f in ("x#field", "y", "tag"))
    assert [(n.kind, n.line, n.annotation, n.api) for n in (x, y, tag)] == [
        (NodeKind.ATTRIBUTE, 2, "f64", "public: pub"),
        (NodeKind.ATTRIBUTE, 3, "f64", ""),  # pub(crate) is not `pub`, as for items
        (NodeKind.ATTRIBUTE, 4, "Option<String>", "")]
    assert all("field" in n.tags and n.path == "src/shapes.rs" for n in (x, y, tag))
    contains = {(e.source, e.target) for e in edges if e.kind is EdgeKind.CONTAINS}
    assert ("rs:geo::shapes::Point", "rs:geo::shapes::Point::y") in contains
    # union fields too; tuple fields have no name (ctags lists none) and are not members
    assert found["rs:geo::shapes::Bits::f"].api == "public: pub"
    assert found["rs:geo::shapes::Bits::i"].api == ""
    assert not [n for n in found if n.startswith("rs:geo::shapes::Pair::")]


def test_enum_variants_are_members_as_public_as_their_enum(graph):
    found, _ = graph
    variants = {n.name: n for n in found.values() if n.id.startswith("rs:geo::shapes::Shape::") and "variant" in n.tags}
    assert {k: v.line for k, v in variants.items()} == {"Dot": 8, "Circle": 9, "Rect": 10}
    assert {v.api for v in variants.values()} == {"public: pub"}
    assert found["rs:geo::shapes::Hidden::A"].api == ""
    # a struct variant's own fields are not members of the enum
    assert "rs:geo::shapes::Shape::w" not in found


def test_impl_blocks_in_another_file_are_sites_of_the_type(graph):
    found, _ = graph
    assert found["rs:geo::shapes::Shape"].sites == (Location("src/more.rs", 3),)
    # the inherent impl in the type's own file and the trait impl elsewhere
    assert set(found["rs:geo::shapes::Point"].sites) == {Location("src/shapes.rs", 14), Location("src/more.rs", 7)}
    assert found["rs:geo::shapes::Shape::area"].path == "src/more.rs"
    # an impl for a type the system does not define adds no site anywhere
    assert not any(s.line == 11 and s.path == "src/more.rs" for n in found.values() for s in n.sites)


def test_a_getter_named_like_its_field_keeps_the_path_and_the_field_is_apart(graph):
    found, edges = graph
    getter, field = found["rs:geo::shapes::Point::x"], found["rs:geo::shapes::Point::x#field"]
    assert (getter.kind, getter.line, getter.sites) == (NodeKind.METHOD, 16, ())
    assert (field.kind, field.name, field.qualname, field.line) == (NodeKind.ATTRIBUTE, "x", "geo::shapes::Point::x", 2)
    contains = {(e.source, e.target) for e in edges if e.kind is EdgeKind.CONTAINS}
    assert ("rs:geo::shapes::Point", field.id) in contains
