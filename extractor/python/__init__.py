"""Python: the interpreter's ``ast`` (libcst for newer syntax) and the Python part of a system's graph.

Entry points: :data:`STEP` for the pipeline; :func:`scan_python` (per file, in workers,
:mod:`extractor.python.scan`) and :func:`extract_python_graph` (per system,
:mod:`extractor.python.graph`). Every kind's Python scanner reads the module from one shared walk,
:mod:`extractor.python.index`. Names are resolved by :mod:`extractor.python.resolve`, the public
API decided by :mod:`extractor.python.api` (rules: ``api.yaml``), generated constructors by
:mod:`extractor.python.constructors` (``constructors.yaml``).
"""

from extractor.python.graph import STEP, CallSite, extract_python_graph
from extractor.python.scan import scan_python

__all__ = ["STEP", "CallSite", "extract_python_graph", "scan_python"]
