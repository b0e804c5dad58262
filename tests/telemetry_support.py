"""Runs the telemetry scanners and extract steps on a directory without the pipeline.

The pipeline (extractor/run/pipeline.py) is the lead's; this builds the same ``Context`` by hand so
the telemetry tests exercise the real scanners and ``extract_*`` functions on fixtures and on
real trees.
"""

from __future__ import annotations

import ast
import hashlib
import textwrap
from pathlib import Path

from extractor import naming
from extractor.context import Context, ExtractOptions, SourceFile, SourceTree
from extractor.model import Language, ParsedFile

SUFFIXES = {
    ".py": Language.PYTHON, ".c": Language.CPP, ".cc": Language.CPP, ".cpp": Language.CPP,
    ".cxx": Language.CPP, ".h": Language.CPP, ".hh": Language.CPP, ".hpp": Language.CPP,
    ".hxx": Language.CPP, ".inl": Language.CPP, ".cu": Language.CUDA, ".cuh": Language.CUDA,
    ".yaml": Language.YAML, ".yml": Language.YAML, ".json": Language.JSON,
}


def parse(language: Language, data: bytes):
    if language is Language.PYTHON:
        return ast.parse(data)
    if language in (Language.CPP, Language.CUDA):
        from extractor.cpp.parse import parse_source

        return parse_source(data, language)
    return None


def build_context(root: Path, steps, *, label: str = "", only: tuple[str, ...] = ()) -> Context:
    """Scan every file under ``root`` (or only the relative paths in ``only``) with ``steps``
    and run their extract functions in order, as the pipeline will."""
    root = Path(root)
    paths = [root / p for p in only] if only else sorted(p for p in root.rglob("*") if p.is_file())
    files = []
    for path in paths:
        language = SUFFIXES.get(path.suffix)
        if language is None:
            continue
        data = path.read_bytes()
        try:
            tree = parse(language, data)
        except SyntaxError:
            continue
        parsed = ParsedFile(language, data, tree)
        facts = {}
        for step in steps:
            scanner = step.scanners.get(language)
            if scanner is not None:
                facts[step.name] = scanner(parsed)
        rel = path.relative_to(root).as_posix()
        files.append(SourceFile(path=f"{label}/{rel}" if label else rel, rel=rel, source=label,
                                language=language, sha256=hashlib.sha256(data).hexdigest(),
                                size=len(data), facts=facts))
    files = sorted(naming.with_module_names(files), key=lambda f: f.path)
    ctx = Context(name="test", version="0", sources=(SourceTree(label, str(root), "dir", root),),
                  files=tuple(files), options=ExtractOptions())
    for step in steps:
        ctx.results[step.name] = step.extract(ctx)
    return ctx


def write_tree(root: Path, files: dict[str, str], steps, result: str):
    """Write ``files`` (dedented) under ``root`` and return ``steps``' ``result`` contribution."""
    for rel, text in files.items():
        path = Path(root) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return build_context(root, steps).results[result]
