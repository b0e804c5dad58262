"""Rust: tree-sitter parsing and the Rust part of a system's symbol graph.

Entry points: :data:`STEP` for the pipeline; :func:`scan_rust` (per file, in workers) and
:func:`build_rust_graph` (per system). Only :mod:`extractor.rust.parse` imports tree_sitter.
"""

from extractor.model import Language, Step
from extractor.rust.graph import RustItem, build_rust_graph, extract_rust_graph, module_path
from extractor.rust.scan import scan_rust

# version 4: napi-rs's `#[napi]` attributes kept (extractor.bindings.ffi says what a crate exports to Node.js)
STEP = Step(name="rust", scanners={Language.RUST: scan_rust}, extract=extract_rust_graph, version="5")
# 3: the cxx crate's attributes kept (cxx::bridge, cxx_name, namespace); 5: tree-sitter captures in document
# order (native.grammar.in_document_order)

__all__ = ["STEP", "RustItem", "build_rust_graph", "extract_rust_graph", "module_path", "scan_rust"]
