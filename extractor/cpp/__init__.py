"""C, C++ and CUDA: tree-sitter parsing and the symbol graph of that half of a system.

Entry points: :data:`STEP` for the pipeline; :func:`scan_cpp` (per file, in workers) and
:func:`extract_cpp_graph` (per system). Only :mod:`extractor.cpp.parse` imports tree_sitter.
"""

from extractor.cpp.graph import (DefinitionSite, OpRegistration, PyBinding, build_cpp_graph,
                                 extract_cpp_graph)
from extractor.cpp.scan import scan_cpp
from extractor.model import Language, Step

STEP = Step(name="cpp", scanners={Language.CPP: scan_cpp, Language.CUDA: scan_cpp},
            extract=extract_cpp_graph, version="1")

__all__ = ["STEP", "DefinitionSite", "OpRegistration", "PyBinding", "build_cpp_graph",
           "extract_cpp_graph", "scan_cpp"]
