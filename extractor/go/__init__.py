"""Go: tree-sitter parsing and the Go part of a system's symbol graph.

Entry points: :data:`STEP` for the pipeline; :func:`scan_go` (per file, in workers) and
:func:`build_go_graph` (per system). Only :mod:`extractor.go.parse` imports tree_sitter.
"""

from extractor.go.graph import CgoUse, GoExport, build_go_graph, extract_go_graph, import_path
from extractor.go.scan import scan_go
from extractor.model import Language, Step

STEP = Step(name="go", scanners={Language.GO: scan_go}, extract=extract_go_graph,
            version="5")  # 2: a cgo preamble is the whole comment group before `import "C"`;
# 3: calls on a receiver's or another value's field (`s.store.Get()`: self.store.Get, `r.Body.Close`);
# 5: tree-sitter captures in document order (native.grammar.in_document_order)

__all__ = ["STEP", "CgoUse", "GoExport", "build_go_graph", "extract_go_graph", "import_path", "scan_go"]
# 4: the types of a function's locals its body states (`x := &T{}`, `x := NewT()`): calls on them resolve
