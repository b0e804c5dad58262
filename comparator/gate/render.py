"""``archdiff check``'s output in the forms CI reads: plain text for a log, GitHub workflow
commands (annotations on the pull request), SARIF 2.1.0 (code scanning) and Markdown (the job
summary, ``$GITHUB_STEP_SUMMARY``). Only formatting: the decision is :func:`comparator.gate.decide`'s."""

from __future__ import annotations

import hashlib
import json

from comparator.apidiff.rules import RULES, TITLES, BreakageKind
from comparator.gate import Gate
from comparator.gate.findings import Finding, Status
from comparator.records import plural
from extractor.support.toolversion import archdiff_version

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
# Help for the rules of the other kinds (the API rules' help is the API diff's own, RULES).
_OTHER_RULES = {
    "struct-layout-changed": ("struct layout changed", ("code compiled against the old layout reads the wrong bytes "
                                                        "(size, alignment, a member's offset, size or type changed)")),
    "struct-removed": ("struct removed", "code compiled against the type no longer builds or links"),
    "metric-removed": ("metric removed", "dashboards and alerts reading it go blank"),
    "metric-renamed": ("metric renamed", "readers of the old name go blank"),
    "metric-retyped": ("metric retyped", "queries written for the old type (rate of a counter, ...) break"),
    "threshold-orphaned": ("threshold reads a metric that is gone", "the alert silently never fires"),
    "threshold-removed": ("threshold removed", "the condition it guarded is no longer alerted on"),
    "threshold-changed": ("threshold changed", "the alert fires at another value"),
}


def rule_help(rule: str) -> tuple[str, str]:
    """A rule's title and why it breaks."""
    try:
        kind = BreakageKind(rule)
    except ValueError:
        return _OTHER_RULES.get(rule, (rule, ""))
    return TITLES[kind], RULES[kind]


def _counts(gate: Gate) -> str:
    return (f"{len(gate.of(Status.FAILING)):,} failing, {plural(len(gate.of(Status.WARNING)), 'warning')}, "
            f"{len(gate.of(Status.ACCEPTED)):,} accepted, {len(gate.of(Status.IGNORED)):,} outside the policy "
            f"(of {plural(gate.unscoped, 'breaking row')})")


def _where(f: Finding) -> str:
    return f"{f.path}:{f.line}: " if f.path else ""


def render_text(gate: Gate) -> str:
    lines = [f"archdiff {archdiff_version()} check: {gate.old_label} -> {gate.new_label}: {_counts(gate)}"]
    for status in (Status.FAILING, Status.WARNING, Status.ACCEPTED):
        for f in gate.of(status):
            why = f" [{f.reason}]" if f.reason else ""
            lines.append(f"  {status.value}: {_where(f)}{f.rule}: {f.message}{why}")
    lines += _entry_lines(gate, "  ")
    if gate.verdict is not None:
        lines.append(f"  version: {gate.verdict.sentence()}")
    return "\n".join(lines) + "\n"


def _entry_lines(gate: Gate, indent: str) -> list[str]:
    out = []
    for label, entries in (("stale", gate.stale), ("lapsed", gate.lapsed), ("no reason yet", gate.unexplained)):
        for e in entries:
            subject = f"({e.subject})" if e.subject else ""
            out.append(f"{indent}accepted entry {label}: {e.rule} {e.symbol}{subject}")
    return out


# --- GitHub workflow commands -----------------------------------------------------------------------

_LEVEL = {Status.FAILING: "error", Status.WARNING: "warning", Status.ACCEPTED: "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(gate: Gate) -> str:
    """One workflow command per finding, at its place in the tree (``::error file=…,line=…::``)."""
    lines = []
    for status in (Status.FAILING, Status.WARNING, Status.ACCEPTED):
        for f in gate.of(status):
            props = [f"title={_escape_property('archdiff ' + f.rule)}"]
            if f.path:
                props[:0] = [f"file={_escape_property(f.path)}", f"line={max(f.line, 1)}"]
            note = f" (accepted: {f.reason})" if status is Status.ACCEPTED else ""
            lines.append(f"::{_LEVEL[status]} {','.join(props)}::{_escape_data(f.message + note)}")
    for text in _entry_lines(gate, ""):
        lines.append(f"::warning title=archdiff accepted changes::{_escape_data(text)}")
    if gate.verdict is not None:
        level = "error" if gate.verdict.too_small else "notice"
        lines.append(f"::{level} title=archdiff version::{_escape_data(gate.verdict.sentence())}")
    return "\n".join(lines) + ("\n" if lines else "")


# --- SARIF 2.1.0 ----------------------------------------------------------------------------------

_SARIF_LEVEL = {Status.FAILING: "error", Status.WARNING: "warning", Status.ACCEPTED: "note"}


def fingerprint(f: Finding) -> str:
    """Stable across runs and edits elsewhere in the file: the rule, the symbol and the subject."""
    return hashlib.sha256("\0".join(f.key).encode()).hexdigest()[:32]


def render_sarif(gate: Gate) -> str:
    shown = [f for f in gate.findings if f.status is not Status.IGNORED]
    rule_ids = sorted({f.rule for f in shown})
    rules = []
    for rule in rule_ids:
        title, why = rule_help(rule)
        rules.append({"id": rule, "name": rule, "shortDescription": {"text": title},
                      "fullDescription": {"text": f"{title}: {why}" if why else title},
                      "help": {"text": f"{title}. Why it breaks: {why or 'see the report'}. Accept a deliberate "
                                       "break with a reason in the accepted-changes file (archdiff check --accept)."}})
    results = []
    for f in shown:
        result: dict = {"ruleId": f.rule, "ruleIndex": rule_ids.index(f.rule), "level": _SARIF_LEVEL[f.status],
                        "message": {"text": f.message},
                        "partialFingerprints": {"archdiffFinding/v1": fingerprint(f)}}
        if f.path:
            result["locations"] = [{"physicalLocation": {
                "artifactLocation": {"uri": f.path, "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": max(f.line, 1)}}}]
        if f.status is Status.ACCEPTED:
            result["suppressions"] = [{"kind": "external", "justification": f.reason}]
        results.append(result)
    run = {"tool": {"driver": {"name": "archdiff", "version": archdiff_version(), "semanticVersion": archdiff_version(),
                               "rules": rules}},
           "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "the repository root"}}},
           "results": results,
           "properties": {"against": gate.old_label, "tree": gate.new_label,
                          "verdict": gate.verdict.sentence() if gate.verdict else ""}}
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, sort_keys=True) + "\n"


# --- Markdown job summary -------------------------------------------------------------------------

def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(gate: Gate) -> str:
    failing = gate.of(Status.FAILING)
    mark = "❌" if failing or (gate.verdict is not None and gate.verdict.too_small) else "✅"
    lines = [f"## {mark} archdiff check: {_cell(gate.old_label)} → {_cell(gate.new_label)}", "",
             _counts(gate) + ".", ""]
    if gate.verdict is not None:
        lines += [f"**Version:** {gate.verdict.sentence()}", ""]
    shown = [f for s in (Status.FAILING, Status.WARNING, Status.ACCEPTED) for f in gate.of(s)]
    if shown:
        lines += ["| status | rule | symbol | where | what |", "| --- | --- | --- | --- | --- |"]
        for f in shown:
            status = f"accepted: {f.reason}" if f.status is Status.ACCEPTED else f.status.value
            lines.append(f"| {_cell(status)} | {f.rule} | `{_cell(f.symbol)}` | "
                         f"{_cell(f'{f.path}:{f.line}' if f.path else '')} | {_cell(f.message)} |")
        lines.append("")
    lines += [f"- {text}" for text in _entry_lines(gate, "")]
    lines.append(f"\n<sub>archdiff {archdiff_version()}</sub>")
    return "\n".join(lines) + "\n"


RENDERERS = {"text": render_text, "github": render_github, "sarif": render_sarif, "markdown": render_markdown}
