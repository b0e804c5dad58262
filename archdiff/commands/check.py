"""``archdiff check``: the working tree against the project's last release, as a CI gate.

The release is a git ref of the same repository (by default the newest release tag reachable from HEAD, by version
order) or a ``pypi:NAME==VERSION``. Both sides are extracted through the cache; the ref is fetched
from the repository's objects into the cache (as ``archdiff compare file://REPO@REF`` does), never
checked out into the tree. The decision (:mod:`comparator.gate`) follows the project's policy
(``[tool.archdiff]``) and its accepted changes; the output is text, GitHub workflow commands,
SARIF 2.1.0 or Markdown on stdout.

Exit codes: 0 the gate passes; 1 it fails (``--fail-on breaking``: a failing finding;
``--fail-on version``: the tree's declared version is a smaller bump than the change needs); 2 bad input.
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

import click
from packaging.version import Version

from archdiff.outputs import writable_dir
from archdiff.progress import open_progress
from comparator.gate import Gate
from comparator.gate.findings import Status
from extractor.errors import UserInputError


def newest_release_tag(url: str, cache_dir: Path | None) -> str:
    """The newest tag reachable from ``url``'s HEAD that is a final release (PEP 440 order, one
    leading ``v`` allowed)."""
    from extractor.acquire.sources import default_cache_dir, tags_reachable_from_head
    from tracking.versions import parse_version

    tags = tags_reachable_from_head(url, cache_dir or default_cache_dir())
    releases = [(v, tag) for tag in tags
                if (v := parse_version(tag)) is not None and not (v.is_prerelease or v.is_devrelease)]
    if not releases:
        raise UserInputError(f"{url} has no release tag reachable from HEAD (a version such as v1.2.3): "
                             "give --against REF")
    return max(releases)[1]


def project_metadata(root: Path) -> tuple[str, str]:
    """The name and static version ``pyproject.toml`` declares ("" for what it does not)."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return "", ""
    try:
        project = tomllib.loads(path.read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise UserInputError(f"{path}: cannot read it ({err})") from None
    name, version = project.get("name", ""), project.get("version", "")
    return (name if isinstance(name, str) else ""), (version if isinstance(version, str) else "")


def _version(text: str) -> Version | None:
    from tracking.versions import parse_version

    return parse_version(text)


@click.command("check")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path), default=Path("."))
@click.option("--against", "against", default="", metavar="REF",
              help="A git ref of the repository at PATH, or pypi:NAME==VERSION (default: the newest release tag).")
@click.option("--policy", "policy_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML file of the policy's keys (default: [tool.archdiff] of PATH/pyproject.toml, "
                   "else PATH/archdiff.toml).")
@click.option("--accepted", "accepted_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The accepted-changes file (default: the policy's 'accepted', else "
                   "PATH/archdiff-accepted.yaml).")
@click.option("--accept", is_flag=True,
              help="Write the failing findings into the accepted-changes file (reasons to fill in) and exit 0.")
@click.option("--format", "fmt", type=click.Choice(["text", "github", "sarif", "markdown"]), default="text",
              show_default=True, help="What goes to stdout.")
@click.option("--fail-on", type=click.Choice(["breaking", "version", "never"]), default="breaking", show_default=True,
              help="breaking: exit 1 on a failing finding; version: only when the declared version is too small.")
@click.option("--tree-version", default="", metavar="VERSION",
              help="The version the tree will be released as (default: [project] version of pyproject.toml).")
@click.option("-o", "--report", "report_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              callback=writable_dir, help="Also write report.html, report.md and report.json here.")
@click.option("-j", "--jobs", type=click.IntRange(1, 256), default=os.cpu_count() or 1, show_default=True)
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Extraction cache (default: $ARCHDIFF_CACHE or ~/.cache/archdiff).")
def check(path: Path, against: str, policy_file: Path | None, accepted_file: Path | None, accept: bool, fmt: str,
          fail_on: str, tree_version: str, report_dir: Path | None, jobs: int, cache_dir: Path | None) -> None:
    """Check the working tree at PATH against the project's last release (a CI gate)."""
    from archdiff.sides import check_side, extract_side
    from comparator.compare import compare_evidence
    from comparator.gate import decide
    from comparator.gate.accepted import read_accepted, write_accepted
    from comparator.gate.policy import read_policy
    from comparator.gate.render import RENDERERS
    from comparator.reports import FORMATS, write_reports

    root = path.resolve()
    policy = read_policy(root, policy_file)
    name, declared = project_metadata(root)
    name = name or root.name
    declared = tree_version or declared
    if against.startswith("pypi:"):
        old_spec, old_version = against, against.partition("==")[2]
    else:
        url = root.as_uri()
        ref = against or newest_release_tag(url, cache_dir)
        old_spec, old_version = f"{url}@{ref}", ref
    check_side(old_spec)
    with open_progress() as progress:
        progress.section(f"release {old_version}")
        old = extract_side(old_spec, cache_dir, jobs, progress, name=name, version=old_version)
        progress.section(f"tree {root}")
        new = extract_side(str(root), cache_dir, jobs, progress, name=name, version=declared or "tree")
        progress.phase("comparing")
        report = compare_evidence(old, new, "release")
        if report_dir is not None:
            write_reports(report, report_dir, FORMATS, (old, new))
    accepted_path = accepted_file or root / policy.accepted
    entries = read_accepted(accepted_path)
    gate = decide(report, old, policy, entries, _version(old_version), _version(declared) if declared else None)
    if accept:
        added = write_accepted(accepted_path, entries, gate.findings)
        click.echo(f"{accepted_path}: {added} findings added; write each one's reason, then commit the file")
        sys.exit(0)
    click.echo(RENDERERS[fmt](gate), nl=False)
    sys.exit(exit_code(gate, fail_on))


def exit_code(gate: Gate, fail_on: str) -> int:
    if fail_on == "breaking":
        return 1 if gate.of(Status.FAILING) else 0
    if fail_on == "version":
        return 1 if gate.verdict is not None and gate.verdict.too_small else 0
    return 0
