"""A definition's display signature is written by the scanner, in the workers (``Definition.signature``):
the ast scanner and the libcst one (files whose syntax is newer than the running interpreter's
ast) write the same text for the same definition."""

from __future__ import annotations

import ast

import libcst
import pytest

from extractor.model import Language, ParsedFile
from extractor.python.expr import SIGNATURE_MAX
from extractor.python.scan import scan_python

SOURCE = '''
def plain(a, b: int = 1, *args: str, c, d: X = None, **kw) -> dict[str, int]:
    pass

def positional(a, /, b, *, c=3):
    pass

class K:
    async def method(self, x: list[int] = [1, 2]) -> None:
        pass

    @property
    def value(self) -> int:
        return 1

def long(''' + ", ".join(f"argument_{i}: int = {i}" for i in range(40)) + ''') -> None:
    pass
'''

EXPECTED = {
    "plain": "(a, b: int=1, *args: str, c, d: X=None, **kw) -> dict[str, int]",
    "positional": "(a, /, b, *, c=3)",
    "K.method": "(self, x: list[int]=[1, 2]) -> None",
    "K.value": "(self) -> int",
}


@pytest.mark.parametrize("tree", [ast.parse(SOURCE), libcst.parse_module(SOURCE)], ids=["ast", "libcst"])
def test_both_scanners_write_the_display_signature(tree):
    defs = {d.qualname: d for d in scan_python(ParsedFile(Language.PYTHON, SOURCE.encode(), tree)).defs}
    assert defs["K"].signature == ""
    for qualname, text in EXPECTED.items():
        assert defs[qualname].signature == text, qualname
    shown = defs["long"].signature
    assert len(shown) == SIGNATURE_MAX and shown.endswith("…") and shown.startswith("(argument_0: int=0, ")
