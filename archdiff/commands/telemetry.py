"""``archdiff telemetry``: live scrapes of a ``/metrics`` endpoint, reconciled with evidence."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import click

from extractor.errors import UserInputError
from extractor.telemetry.scrape import (Reconciliation, ScrapedFamily, parse_exposition,
                                        read_evidence_metrics, reconcile)

_TIMEOUT_SECONDS = 10


def read_exposition(source: str) -> str:
    """The exposition text at an http(s) URL or in a file."""
    if source.startswith(("http://", "https://")):
        try:
            with urllib.request.urlopen(source, timeout=_TIMEOUT_SECONDS) as response:  # noqa: S310 - scheme checked
                return response.read().decode("utf-8", errors="replace")
        except (urllib.error.URLError, OSError, ValueError) as err:
            raise UserInputError(f"cannot scrape {source}: {err}; check the URL and that the "
                                 "server is up") from err
    path = Path(source)
    if not path.is_file():
        raise UserInputError(f"{source} is neither an http(s) URL nor a file; give a /metrics URL "
                             "or a saved scrape")
    return path.read_text(encoding="utf-8", errors="replace")


def render_scrape(families: tuple[ScrapedFamily, ...], result: Reconciliation | None) -> str:
    lines = [f"{len(families)} metric families scraped"]
    if result is None:
        lines += [f"  {f.type:<10} {f.name}" for f in families]
        return "\n".join(lines)
    lines.append(f"matched to definitions: {len(result.matched)}")
    sections = [
        ("defined but never exposed", result.defined_not_exposed),
        ("exposed but not found in code or a known library", result.exposed_not_found),
        ("exposed by a library the code uses", [f"{f.family}  ({f.origin}; {f.evidence})"
                                                for f in result.library_families]),
    ]
    for title, items in sections:
        lines.append(f"{title}: {len(items)}")
        lines += [f"  {item}" for item in items]
    lines.append(f"type mismatches: {len(result.type_mismatches)}")
    lines += [f"  {m.family}: scraped {m.scraped_type}, defined {m.defined_type} at {m.definition}"
              for m in result.type_mismatches]
    return "\n".join(lines)


@click.group("telemetry")
def telemetry() -> None:
    """Prometheus telemetry: live scrapes against static evidence."""


@telemetry.command("scrape")
@click.argument("source")
@click.option("--evidence", "evidence", type=click.Path(dir_okay=False, path_type=Path),
              help="evidence.json to reconcile the scrape against")
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
def scrape(source: str, evidence: Path | None, as_json: bool) -> None:
    """Parse the exposition at SOURCE (a /metrics URL or a file) and, with --evidence, report
    metrics defined but never exposed, exposed but not found in code, and type mismatches."""
    families = parse_exposition(read_exposition(source))
    result = reconcile(read_evidence_metrics(evidence), families) if evidence else None
    if as_json:
        from extractor.model import to_jsonable

        payload = {"families": to_jsonable(families),
                   "reconciliation": to_jsonable(result) if result else None}
        click.echo(json.dumps(payload, indent=2, sort_keys=True))
    else:
        click.echo(render_scrape(families, result))
