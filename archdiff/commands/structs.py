"""``archdiff structs ELF...``: struct layouts of any ELF with DWARF, pahole-style or as JSON."""

from __future__ import annotations

from pathlib import Path

import click

from extractor.errors import UserInputError
from extractor.structs import read_binary_layouts
from extractor.structs.dwarf import DwarfReadError
from extractor.structs.records import StructLayout
from extractor.structs.render import render_json, render_text


class _InputFailure(click.ClickException):
    """A :class:`UserInputError` that click prints on one line (exit 2) even when this command
    runs on its own, outside the ``archdiff`` group's error handler."""

    exit_code = UserInputError.exit_code


def select_layouts(layouts, names):
    """Layouts whose qualified name, or its last component, is one of ``names``."""
    if not names:
        return list(layouts)
    wanted = set(names)
    return [x for x in layouts if x.qualname in wanted or x.qualname.rsplit("::", 1)[-1] in wanted]


@click.command("structs")
@click.argument("elf_files", metavar="ELF...", nargs=-1, required=True,
                type=click.Path(path_type=Path))
@click.option("--json", "output", flag_value="json", help="JSON: layouts with byte maps.")
@click.option("--text", "output", flag_value="text", default=True,
              help="pahole-like text (the default).")
@click.option("-C", "--class-name", "names", multiple=True, metavar="NAME",
              help="Only this struct/class/union (qualified, or its last component); repeatable.")
def structs(elf_files: tuple[Path, ...], output: str, names: tuple[str, ...]) -> None:
    """Struct, class and union layouts (sizes, offsets, holes, padding) from ELF DWARF."""
    layouts: list[StructLayout] = []
    usable = 0
    for path in elf_files:
        if not path.is_file():
            click.echo(f"{path}: error: no such file [missing]", err=True)
            continue
        try:
            found = read_binary_layouts(path)
        except DwarfReadError as err:
            click.echo(f"{path}: error: {err.message} [{err.code}]", err=True)
            continue
        usable += 1
        layouts.extend(found)
    if not usable:
        raise _InputFailure("no usable ELF file with DWARF debug info was given "
                            "(build with -g, or pass an object/library that has .debug_info)")
    chosen = sorted(select_layouts(layouts, names))
    if names and not chosen:
        raise _InputFailure(f"no struct named {', '.join(names)} in the given files "
                             "(use the qualified name, e.g. ns::Type, or its last component)")
    if output == "json":
        click.echo(render_json(chosen))
    else:
        click.echo(render_text(chosen), nl=False)
