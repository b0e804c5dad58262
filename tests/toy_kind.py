"""A whole evidence kind written outside the product, as `docs/adding-an-evidence-kind.md` says one is
added: TODO comments in Python files. One ``Step`` declaration on the extractor side (its scanner's
typed facts, its record type, its bundle key) and one comparator kind; nothing else names it.

Kept in a module of its own (not in the test file) so that worker processes can import its scanner.
"""

from __future__ import annotations

import dataclasses

import msgspec

from comparator.kind import Counts, EvidenceKind, Labels, Takeaway
from comparator.records import Sides
from extractor.context import Context
from extractor.evidence.read import Evidence
from extractor.model import Contribution, Language, ParsedFile, RecordKind, Step

# ------------------------------------------------------------------------------------- extractor


class TodoFacts(msgspec.Struct, frozen=True):
    """What the scanner finds in one file (typed facts: the driver decodes them as this Struct)."""

    todos: tuple[tuple[int, str], ...]  # (line, text after "TODO")


def scan_todos(parsed: ParsedFile) -> TodoFacts | None:
    found = tuple((n, line.split("TODO", 1)[1].strip(" :"))
                  for n, line in enumerate(parsed.text.splitlines(), 1) if "# TODO" in line)
    return TodoFacts(found) if found else None


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class Todo:
    path: str
    line: int
    text: str


TODOS = RecordKind("todos", Todo)
FACT_TYPES: list[type] = []  # the types extract saw its facts as (the test checks they were typed)


def extract_todos(ctx: Context) -> Contribution[None]:
    records = []
    for file, facts in ctx.facts(STEP.name, Language.PYTHON):
        FACT_TYPES.append(type(facts))
        records.extend(Todo(file.path, line, text) for line, text in facts.todos)
    return Contribution(records=tuple(sorted(records)), stats={"todos": len(records)})


STEP = Step(name="todos", extract=extract_todos, scanners={Language.PYTHON: scan_todos}, records=TODOS)

# ------------------------------------------------------------------------------------ comparator


@dataclasses.dataclass(frozen=True, slots=True)
class TodoChanges:
    done: tuple[str, ...]  # texts of TODOs the newer release no longer has
    new: tuple[str, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class TodoRelease:
    todos: TodoChanges  # the key it adds to findings["release"]


class TodosKind(EvidenceKind[tuple[str, ...], Sides[int], TodoRelease]):
    key = "todos"
    title = "TODO comments"
    release_rank = 60

    def summarize(self, evidence: Evidence) -> tuple[str, ...]:
        return tuple(sorted(t.text for t in evidence.of(TODOS)))

    def compare(self, a: tuple[str, ...], b: tuple[str, ...]) -> Sides[int]:
        return Sides(len(a), len(b))

    def diff_release(self, a: tuple[str, ...], b: tuple[str, ...]) -> TodoRelease:
        return TodoRelease(TodoChanges(tuple(sorted(set(a) - set(b))), tuple(sorted(set(b) - set(a)))))

    def count(self, section: Sides[int], release: TodoRelease | None) -> Counts:
        changes = len(release.todos.done) + len(release.todos.new) if release is not None else 0
        return Counts(changes if release is not None else abs(section.a - section.b), 0)

    def release_takeaways(self, section: Sides[int], release: TodoRelease, labels: Labels) -> list[Takeaway]:
        return [Takeaway(f"{len(release.todos.done)} TODO done and {len(release.todos.new)} new in {labels[1]}",
                         self.key)]

    def markdown(self, section: Sides[int], la: str, lb: str) -> list[str]:
        return ["## TODO comments", "", f"{la}: {section.a}, {lb}: {section.b}", ""]

    def release_markdown(self, release: TodoRelease, la: str, lb: str) -> list[str]:
        return ["### TODOs", "", *(f"- done: {t}" for t in release.todos.done),
                *(f"- new: {t}" for t in release.todos.new), ""]

    def html(self, section: Sides[int], la: str, lb: str) -> str:
        return f"<section id=todos><h2>TODO comments</h2>{section.a} / {section.b}</section>"

    def release_html(self, release: TodoRelease, la: str, lb: str) -> str:
        return f"<section id=todos-release><h3>TODOs</h3>{len(release.todos.new)} new</section>"
