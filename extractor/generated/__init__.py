"""Generated code: files a tool wrote (protoc, OpenAPI Generator, setuptools-scm, ...).

A reader of the layer table must not see a package of generated API data classes as the system's
largest layer, nor a protoc module as its ingress. Generated files are recognised here and kept
apart like tests and vendored code: the later steps read :func:`generated_files` (concepts leave
their facts out, layers give them the apart role ``generated`` with the tool named) and the bundle
stats report their size per generator.

The rules are data (``generated.yaml``). Banners are looked for by a per-file scanner in the first
lines of the bytes alone, so the verdict is path-independent and cached with the file's content;
file- and directory-name rules (``*_pb2.py``, ``generated/``) are applied per system, where paths
are known.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from extractor.context import Context, SourceFile
from extractor.support.datafile import Regex, load_data_file
from extractor.errors import UserInputError
from extractor.model import Contribution, Language, ParsedFile, Step

GENERATED_FILE = Path(__file__).with_name("generated.yaml")
GENERATED_SCHEMA = {
    "version": int,
    "head_lines": int,
    "generators": [{
        "id": str,
        "title": str,
        "banners?": [Regex],
        "comment_only?": bool,
        "files?": [Regex],
        "directories?": [Regex],
    }],
}
CODE_LANGUAGES = (Language.PYTHON, Language.CPP, Language.CUDA, Language.RUST, Language.GO)
# How a comment line starts, per language: generic wording ("DO NOT EDIT") counts only there.
COMMENT_PREFIXES = {Language.PYTHON: ("#",)}
C_COMMENT_PREFIXES = ("//", "/*", "*")
HEAD_BYTES = 16 * 1024  # a licence header and a banner fit; a minified line does not get read whole
MAX_BANNER = 120


@dataclasses.dataclass(frozen=True, slots=True)
class GeneratorRule:
    id: str
    title: str
    banners: tuple[re.Pattern[str], ...]
    comment_only: bool
    files: re.Pattern[str] | None
    directories: re.Pattern[str] | None


@dataclasses.dataclass(frozen=True, slots=True)
class GeneratorRules:
    rules: tuple[GeneratorRule, ...]  # in order: the first that matches names the generator
    head_lines: int
    screen: re.Pattern[str] | None  # every banner in one alternation: most files match none


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class GeneratedFile:
    """A file a tool wrote, and what showed it."""

    path: str
    line: int  # the banner's line; 0 when the file or directory name decided
    generator: str  # the rule's id ("protoc", "openapi-generator", "generated-directory")
    name: str  # the tool: as the banner names it, else the rule's title
    matched: str  # the banner line, or the file/directory name that matched
    lines: int


@functools.cache
def load_generator_rules(path: Path | str = GENERATED_FILE) -> GeneratorRules:
    data = load_data_file(path, GENERATED_SCHEMA)
    rules, seen, banners = [], set(), []
    for i, entry in enumerate(data["generators"]):
        if entry["id"] in seen:
            raise UserInputError(f"{path}: generators[{i}].id: {entry['id']!r} is used twice")
        seen.add(entry["id"])
        banners.extend(entry.get("banners", ()))
        rules.append(GeneratorRule(
            entry["id"], entry["title"], tuple(re.compile(b) for b in entry.get("banners", ())),
            bool(entry.get("comment_only", False)), _alternation(entry.get("files")),
            _alternation(entry.get("directories"))))
    # The screen drops the named groups: several banners may name their tool the same way.
    screen = _alternation([re.sub(r"\(\?P<\w+>", "(?:", b) for b in banners], re.MULTILINE)
    return GeneratorRules(tuple(rules), data["head_lines"], screen)


def _alternation(patterns: list[str] | None, flags: int = 0) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{p})" for p in patterns), flags) if patterns else None


def scan_generated(parsed: ParsedFile) -> dict[str, Any] | None:
    """The generator banner in the file's first lines, if there is one (path-independent)."""
    rules = load_generator_rules()
    head = parsed.data[:HEAD_BYTES].decode("utf-8", errors="replace").splitlines()[: rules.head_lines]
    if rules.screen is None or not rules.screen.search("\n".join(head)):
        return None
    comment = COMMENT_PREFIXES.get(parsed.language, C_COMMENT_PREFIXES)
    for rule in rules.rules:
        for number, line in enumerate(head, 1):
            if rule.comment_only and not line.lstrip().startswith(comment):
                continue
            for pattern in rule.banners:
                match = pattern.search(line)
                if match:
                    named = match.groupdict().get("generator")
                    return {"generator": rule.id, "name": named or rule.title, "line": number,
                            "banner": line.strip()[:MAX_BANNER]}
    return None


def detect_generated(file: SourceFile, rules: GeneratorRules) -> GeneratedFile | None:
    """Banner first (it names the tool); then the file's name; then a directory on its path."""
    fact = file.facts.get(STEP.name)
    if fact:
        return GeneratedFile(file.path, fact["line"], fact["generator"], fact["name"], fact["banner"], file.lines)
    *dirs, name = file.rel.split("/")
    for rule in rules.rules:
        if rule.files is not None and rule.files.fullmatch(name):
            return GeneratedFile(file.path, 0, rule.id, rule.title, name, file.lines)
    for rule in rules.rules:
        hit = next((d for d in dirs if rule.directories is not None and rule.directories.fullmatch(d)), None)
        if hit is not None:
            return GeneratedFile(file.path, 0, rule.id, rule.title, f"{hit}/", file.lines)
    return None


@dataclasses.dataclass(frozen=True, slots=True)
class GeneratedShared:
    """What the generated-code step shares with later steps: which files a tool wrote."""

    by_path: Mapping[str, GeneratedFile]


def extract_generated(ctx: Context) -> Contribution[GeneratedShared]:
    rules = load_generator_rules()
    found = sorted(g for f in ctx.files if f.language in CODE_LANGUAGES
                   if (g := detect_generated(f, rules)) is not None)
    by_tool: dict[str, dict[str, int]] = collections.defaultdict(lambda: {"files": 0, "lines": 0})
    for g in found:
        by_tool[g.name]["files"] += 1
        by_tool[g.name]["lines"] += g.lines
    stats = {"files": len(found), "lines": sum(g.lines for g in found),
             "by_generator": {name: dict(v) for name, v in sorted(by_tool.items())}}
    return Contribution(stats=stats if found else {}, shared=GeneratedShared({g.path: g for g in found}))


def generated_files(ctx: Context) -> Mapping[str, GeneratedFile]:
    """Generated files by path, as this step found them (empty when it did not run)."""
    result = ctx.result_if_run(STEP)
    return result.shared.by_path if result is not None and result.shared is not None else {}


STEP = Step(name="generated", extract=extract_generated, version="1", python_fallback=True,
            scanners={language: scan_generated for language in CODE_LANGUAGES})
