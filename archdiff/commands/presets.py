"""``archdiff presets``: list the curated comparisons shipped with archdiff."""

from __future__ import annotations

import click

from extractor.presets import list_presets


def render_presets() -> str:
    presets = list_presets()
    width = max((len(p.name) for p in presets), default=0)
    return "\n".join(f"{p.name.ljust(width)}  {p.title}" for p in presets)


@click.command("presets")
def presets() -> None:
    """List the curated presets (name and title); run one with `archdiff battle NAME`."""
    click.echo(render_presets())
