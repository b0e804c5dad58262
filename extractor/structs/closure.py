"""What a header brings into a translation unit, read from the text alone: the files it includes
(transitively, the build context's and the system's headers too), the names its own project files
declare and mention, and whether an include it cannot do without is missing here.

The probe batches (extractor.structs.batch) use it to decide, before compiling, which headers may
share a translation unit without one changing what another means: nothing here is evaluated, an
``#include`` inside an ``#if`` counts as maybe included, and every question is answered on the
side that keeps a header out of a batch when in doubt (a header kept out is probed alone, as it
would have been anyway: doubt costs time, never a different result).
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence, Set as AbstractSet
from pathlib import Path

from extractor.support.linestart import at_line_starts, found_at_line_start, matches_at_line_starts

# Directives as the preprocessor reads them, a `#` with only blanks before it on its line: this
# pattern, _UNDEF, _PACK* and _CONTEXT_CHANGERS are found at the start of a line by
# extractor.support.linestart (the closures of vLLM's headers read 24 MB of CUDA and system
# headers: 0.44 -> 0.12 CPU s for scan_text).
_DIRECTIVE = re.compile(rb'#[ \t]*(include|if|ifdef|ifndef|elif|else|endif|define|pragma)\b(.*)$', re.M)
_INCLUDE_ARG = re.compile(rb'^\s*([<"])([^>"\n]+)[>"]')
_IDENT = re.compile(rb"[A-Za-z_]\w*")
# a comment (group 2: what follows its first `/`), or a literal that may hold `//` or `/*` (a raw
# string, a string, a character). Every branch starts with a literal byte, so the regex engine
# skips the bytes that start none (torch's headers: 0.58 -> 0.33 CPU s).
_LITERAL = rb'R"([^()\\ \n]{0,16})\((?:.|\n)*?\)\1"|"(?:\\.|[^"\\\n])*"|' rb"'(?:\\.|[^'\\\n])+'"
_COMMENT_OR_LITERAL = re.compile(_LITERAL + rb"|/(/[^\n]*|\*(?:.|\n)*?\*/)")
# what a string literal that names something follows (see identifiers)
_NAMING_STRING = re.compile(rb"(?:_Pragma|alias|weakref|ifunc|push_macro|pop_macro)\s*\(\s*$")
_MAX_FILE = 4 << 20
# names a project file declares, beyond the macros: what a later header of a batch could pick up
# from it without including it (over-approximated: a name seen in a declaring position). A pattern
# that starts with a word starts with it, the word boundary checked behind it (`typedef(?<!\wtypedef)`
# for `\btypedef`): the regex engine then looks for the word, 8-12x faster than trying `\b` at
# every byte.
_DECLARES = (
    re.compile(rb"\b(?:class|struct|union|enum(?:\s+class|\s+struct)?|namespace)\s+(?:\[\[[^\]]*\]\]\s*)?"
               rb"(?:__attribute__\s*\(\([^)]*\)\)\s*)?(?:alignas\s*\([^)]*\)\s*)?([A-Za-z_]\w*)"
               # a definition, not a forward declaration (`struct Request;` leaves the type incomplete:
               # a header that needs it complete must not count it as its own)
               rb"(?=\s*(?:final\b\s*)?[:{])"),
    re.compile(rb"typedef(?<!\wtypedef)\b[^;{}]*?\b([A-Za-z_]\w*)\s*(?:\[[^\];]*\]\s*)*;"),
    re.compile(rb"typedef(?<!\wtypedef)\b[^;{}]*\(\s*[*&]\s*([A-Za-z_]\w*)\s*\)"),
    re.compile(rb"}\s*([A-Za-z_]\w*)\s*(?:\[[^\];]*\]\s*)*[;,=]"),  # `} Name;` after a typedef'd or variable struct
    re.compile(rb"using(?<!\wusing)\s+([A-Za-z_]\w*)\s*="),
    re.compile(rb"using(?<!\wusing)\s+(?:typename\s+)?[\w:]*::([A-Za-z_]\w*)\s*;"),
    re.compile(rb"\b(?:constexpr|extern|static|inline|thread_local|__device__|__constant__|__shared__)\b[^;(){}=]*?"
               rb"\b([A-Za-z_]\w*)\s*(?:=|;|\[|\{)"),
    # a function declared or defined: a type, then a name followed by its parameter list and then
    # `;`, `{`, a qualifier or a trailing return type (a call statement has no type before it); a
    # parameter's default may be braced (`const std::optional<Tensor>& weight={}`: each of ATen's
    # operator declarations)
    re.compile(rb"\b(?!(?:return|else|new|delete|throw|case|goto|co_return|co_yield|sizeof|do)\b)[A-Za-z_][\w:<>,]*"
               rb"[\s*&]+([A-Za-z_]\w*)\s*\([^;{}()]*(?:(?:\([^;{}()]*\)|\{[^;{}()]*\})[^;{}()]*)*\)\s*"
               rb"(?:const\b\s*|noexcept\b\s*|override\b\s*|final\b\s*|->[^;{]*)*[;{]"),
)
# the name a variable's declarator ends with (`int a, b = 2;`, `const T kX{...};`, `Foo g_foo;`),
# read in the code that stands at namespace scope (see _namespace_code): followed by `,` `;` `=`
# `[` a brace, an attribute or an asm label, before its statement's first parenthesis (after one,
# a name is a function's or a macro call's, or their arguments: other patterns'); a whole word (not
# `x1f` of `0x1f`), taken possessively (each word is tried once: 12x faster over torch's headers)
_VARIABLE_NAME = re.compile(rb"\b([A-Za-z_]\w*+)\s*+(?=[,;=\[{}]|__attribute__|asm\b|__asm__|$)")
_AFTER_PARENTHESIS = re.compile(rb"\([^;{}]*")  # a statement's rest from its first parenthesis
_CLASS_KEY_NAME = re.compile(rb"\b(?:class|struct|union|enum)\s+(?:class\s+|struct\s+)?[\w:]+")
# what opens a block at namespace scope, a class's or enum's body, a function's body (a type or a
# qualified name before the name and its parameters: no bare macro call such as `TORCH_LIBRARY(ns, m) {`);
# `extern "C" {` is none of them (its literal blanked, it reads `extern {`): a namespace's
_NAMESPACE_HEAD = re.compile(rb"\bnamespace\b")
_CLASS_HEAD = re.compile(rb"\b(?:class|struct|union|enum)\b")
_FUNCTION_HEAD = re.compile(rb"(?:[\w>\]*&]\s+[*&]*|[*&]\s*|\w::~?|\boperator\b\s*\S{0,3}\s*)[A-Za-z_]\w*\s*\(")
_BRACE = re.compile(rb"[{}]")
_DIRECTIVE_LINE = re.compile(rb"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_STRING_OR_CHAR = re.compile(_LITERAL)
# not names: what the patterns above also catch
_KEYWORDS = frozenset("""alignas alignof and asm auto bool break case catch char char8_t char16_t char32_t class
const consteval constexpr constinit const_cast continue decltype default delete do double dynamic_cast else enum
explicit export extern false float for friend goto if inline int long mutable namespace new noexcept not nullptr
operator or private protected public register reinterpret_cast requires return short signed sizeof static
static_assert static_cast struct switch template this thread_local throw true try typedef typeid typename union
unsigned using virtual void volatile wchar_t while final override __device__ __host__ __global__ __forceinline__
__inline__ __shared__ __constant__ __restrict__ __attribute__ __declspec""".split())
_UNDEF = re.compile(rb"#[ \t]*undef[ \t]+([A-Za-z_]\w*)")
_PACK = re.compile(rb"#[ \t]*pragma[ \t]+pack\b")
_PACK_PUSH = re.compile(rb"#[ \t]*pragma[ \t]+pack[ \t]*\([ \t]*push")
_PACK_POP = re.compile(rb"#[ \t]*pragma[ \t]+pack[ \t]*\([ \t]*pop")
# the enumerators of an unscoped enum (those of an `enum class` are named through the enum's
# name, which _DECLARES holds); not the word of a path (`#include <torch/enum.h>` took the
# identifiers of a namespace's first lines, up to its first `}`, as enumerators)
_ENUM_BODY = re.compile(rb"enum(?<!\wenum)(?<!/enum)\b(?!\s*(?:\.|class\b|struct\b))[^;{]*\{([^}]*)\}")
_ENUMERATOR = re.compile(rb"([A-Za-z_]\w*)\s*(?:=[^,}]*)?(?:,|$)")
# what changes the meaning of every line after it in the translation unit (an #undef changes only
# what mentions its name: FileScan.undefines, which the batch planner compares with those names)
_CONTEXT_CHANGERS = (re.compile(rb"#[ \t]*pragma[ \t]+(?:pack|GCC\s+(?:push_options|optimize|target|visibility|"
                                rb"diagnostic\s+push)|omp\s+declare)"),
                     re.compile(rb"using\s+namespace\b"))


def _count_at_line_starts(pattern: re.Pattern[bytes], data: bytes) -> int:
    return sum(1 for _m in at_line_starts(pattern, data))


@dataclasses.dataclass(frozen=True, slots=True)
class FileScan:
    """One file's directives, as written."""

    includes: tuple[tuple[str, str, bool], ...]  # (quote `"` or `<`, name, unconditional)
    defines: frozenset[str]  # non-guard #define names
    defines_before_include: bool  # a #define precedes an #include (it may select what that header declares)
    changes_context: bool  # #pragma pack, a file-scope using-directive, ... (not #undef: see undefines)
    undefines: frozenset[str] = frozenset()  # names it #undef's
    pack_balanced: bool = True  # its #pragma pack pushes are popped


def scan_text(data: bytes) -> FileScan:
    includes: list[tuple[str, str, bool]] = []
    defines: set[str] = set()
    depth = 0
    guard = b""
    first_conditional = True
    seen_define = False
    before_include = False
    directives = list(matches_at_line_starts(_DIRECTIVE, data))
    for index, m in enumerate(directives):
        kind, rest = m.group(1), m.group(2)
        if kind in (b"if", b"ifdef", b"ifndef"):
            name = rest.strip().split()[0] if rest.strip() else b""
            nxt = directives[index + 1] if index + 1 < len(directives) else None
            if first_conditional and kind == b"ifndef" and nxt is not None and nxt.group(1) == b"define" and \
                    nxt.group(2).strip().split()[:1] == [name]:
                guard = name  # the include guard: its #ifndef does not make anything conditional
            else:
                depth += 1
            first_conditional = False
        elif kind == b"endif":
            depth = max(0, depth - 1)
        elif kind in (b"elif", b"else"):
            pass
        elif kind == b"define":
            name = rest.strip().split(b"(")[0].split()[0] if rest.strip() else b""
            if name and name != guard:
                defines.add(name.decode("ascii", "replace"))
                seen_define = True
        elif kind == b"include":
            arg = _INCLUDE_ARG.match(rest)
            if arg is not None:
                includes.append((arg.group(1).decode(), arg.group(2).decode("utf-8", "replace").strip(), depth == 0))
                before_include = before_include or seen_define
    # each pattern below runs only over a file holding the word it needs: a whole-text regex
    # costs as much as the directive scan above, and most of the thousands of system and
    # CUDA headers a closure reads hold none of these words
    has_undef = b"undef" in data
    undefines = frozenset(m.group(1).decode("ascii", "replace") for m in matches_at_line_starts(_UNDEF, data)) \
        if has_undef else frozenset()
    pushes = pops = plain = 0
    if b"pack" in data:
        pushes, pops = _count_at_line_starts(_PACK_PUSH, data), _count_at_line_starts(_PACK_POP, data)
        plain = _count_at_line_starts(_PACK, data) - pushes - pops  # `#pragma pack(1)`: until the next one
    changes_context = (b"pragma" in data or b"using" in data) and any(
        found_at_line_start(pattern, data) for pattern in _CONTEXT_CHANGERS)
    return FileScan(tuple(includes), frozenset(defines), before_include, changes_context,
                    undefines, pushes == pops and plain == 0)


def without_comments(data: bytes) -> bytes:
    """``data`` with its comments blanked (literals kept as they are): torch's comments mention
    "store", "args", "load" beside the code, and a name only a comment holds is none a batch
    member could lean on or declare."""
    if b"/" not in data:
        return data
    return _COMMENT_OR_LITERAL.sub(lambda m: b" " if m.group(2) is not None else m.group(0), data)


def declared_names(data: bytes) -> frozenset[str]:
    """Names a file may declare (macros included), over-approximated, outside comments."""
    data = without_comments(data)
    names: set[bytes] = set()
    for pattern in _DECLARES:
        names.update(pattern.findall(data))
    # a class named by its key is no variable: `struct Request;` leaves it incomplete (see
    # _DECLARES), `struct Request r;` declares r
    code = _CLASS_KEY_NAME.sub(b" ", _namespace_code(data))
    names.update(_VARIABLE_NAME.findall(_AFTER_PARENTHESIS.sub(b"(", code)))
    for body in _ENUM_BODY.findall(data):
        names.update(_ENUMERATOR.findall(body))
    for m in matches_at_line_starts(_DIRECTIVE, data):
        if m.group(1) == b"define" and m.group(2).strip():
            names.add(m.group(2).strip().split(b"(")[0].split()[0])
    return frozenset(n.decode("ascii", "replace") for n in names) - _KEYWORDS


def _spaces(m: re.Match[bytes]) -> bytes:
    """As many spaces as ``m`` matched: what is blanked keeps every other byte where it was."""
    return b" " * (m.end() - m.start())


def _namespace_code(code: bytes) -> bytes:
    """The code of ``code`` (comments blanked) that stands at namespace scope, without literals and
    directives, each class's or enum's body, function's body and initializer left out (a member,
    a local, a lambda's declare no name other headers can use; a block's head stays: `const int
    arr[] =` before its `{`, then `;`). A block whose head says `namespace`, or that is none of
    those for sure (`extern "C"`, a macro's call: `TORCH_LIBRARY(ns, m) {`), counts as a
    namespace's. When the braces do not balance outside literals and directives (`#if` branches
    that each open a block), all of it."""
    skeleton = _DIRECTIVE_LINE.sub(_spaces, _STRING_OR_CHAR.sub(_spaces, code))
    kept: list[bytes] = []
    stack: list[bool] = []  # whether each open block is a class's, a function's or an initializer's
    resume = head_start = 0  # where the namespace's code goes on; where the current statement starts
    for m in _BRACE.finditer(skeleton):
        at = m.start()
        if m.group(0) == b"{":
            if stack and stack[-1]:
                stack.append(True)
                continue
            head = skeleton[max(head_start, skeleton.rfind(b";", head_start, at) + 1):at]
            local = not _NAMESPACE_HEAD.search(head) and bool(
                _CLASS_HEAD.search(head) or b"=" in head or (b")" in head and _FUNCTION_HEAD.search(head)))
            stack.append(local)
            if local:
                kept.append(skeleton[resume:at] + b";")
        elif not stack:
            return skeleton
        elif stack.pop() and not (stack and stack[-1]):
            resume = at + 1
        head_start = at + 1
    if stack:
        return skeleton
    kept.append(skeleton[resume:])
    return b"".join(kept)


def identifiers(data: bytes) -> frozenset[str]:
    """The identifiers ``data`` holds outside comments and string literals: a name only a message
    spells (torch's ``"use the FORWARD_HAS_DEFAULT_ARGS macro"``) neither is looked up nor expands.
    The literals whose text does name something keep it: a pragma's (``_Pragma("omp parallel
    num_threads(N)")`` expands ``N``), the symbol an attribute refers to (``alias("f")``), the
    macro ``#pragma push_macro("X")`` saves."""
    if b'"' not in data:
        code = without_comments(data)
    else:
        def blank(m: re.Match[bytes]) -> bytes:
            if m.group(2) is not None:
                return b" "  # a comment
            text = m.group(0)
            if text[:1] == b"'" or _NAMING_STRING.search(data, max(0, m.start() - 32), m.start()):
                return text
            return b'""'

        code = _COMMENT_OR_LITERAL.sub(blank, data)
    return frozenset(n.decode("ascii", "replace") for n in _IDENT.findall(code)) - _KEYWORDS


@dataclasses.dataclass(frozen=True, slots=True)
class Closure:
    """What including one header brings in, statically (files as resolved path strings)."""

    project: frozenset[str]  # files inside the source roots (every include, `#if` or not)
    external: frozenset[str]  # files outside them (build context, CUDA, system headers)
    certain_external: frozenset[str]  # external files included unconditionally from project files, and theirs
    searched: frozenset[tuple[str, str]]  # (name, file found or "") through the -I search, not beside the includer
    missing: tuple[str, ...]  # unconditional includes of project files that no directory has


@dataclasses.dataclass(slots=True)
class _Walk:
    """A closure while it is walked: each file reached and whether surely, and what it found."""

    seen: dict[str, bool] = dataclasses.field(default_factory=dict)
    project: set[str] = dataclasses.field(default_factory=set)
    external: set[str] = dataclasses.field(default_factory=set)
    certain: set[str] = dataclasses.field(default_factory=set)
    searched: set[tuple[str, str]] = dataclasses.field(default_factory=set)
    missing: set[str] = dataclasses.field(default_factory=set)

    def merge(self, other: _Walk, sure: bool) -> None:
        """What walking on from ``other``'s start adds, reached surely or not: a file is sure when
        some path makes it so, so the sure files of a sure entry are sure here too (and their
        walk on is ``other``'s); an entry reached only maybe makes everything it reaches maybe,
        certain nothing and missing nothing."""
        seen = self.seen
        if sure:
            for path, surely in other.seen.items():
                if surely or path not in seen:
                    seen[path] = surely
            self.certain |= other.certain
            self.missing |= other.missing
        else:
            for path in other.seen:
                seen.setdefault(path, False)
        self.project |= other.project
        self.external |= other.external
        self.searched |= other.searched


class Includes:
    """Static include closures, each file read and scanned once per run."""

    def __init__(self, roots: Sequence[Path]) -> None:
        # each root, and the prefix of the paths under it (the file system's root is its own)
        self._roots = [(r, r if r.endswith(os.sep) else r + os.sep) for r in map(os.path.realpath, roots)]
        self._scans: dict[str, FileScan | None] = {}
        self._texts: dict[str, bytes] = {}
        # per file: (name, beside the file or "", unconditional) of each include
        self._edges: dict[str, tuple[tuple[str, str, bool], ...]] = {}
        self._found: dict[tuple[str, str], str] = {}
        self._listings: dict[str, frozenset[str] | None] = {}
        self._real_folders: dict[str, str] = {}
        self._tails: dict[tuple[str, ...], dict[str, str]] = {}
        self._closures: dict[tuple[str, tuple[str, ...]], Closure] = {}
        self._entries_walked: dict[tuple[str, str, tuple[str, ...]], _Walk] = {}
        self._declared: dict[str, frozenset[str]] = {}
        self._mentioned: dict[str, frozenset[str]] = {}

    def rootless(self) -> Includes:
        """A view with no source root (every file outside the tree) that shares this one's
        per-file work (scans, resolved names, names declared): the prelude's closure then reads
        none of the system headers the members' closures read already. Closures are not shared:
        they depend on the roots."""
        view = Includes([])
        view._scans, view._texts, view._edges = self._scans, self._texts, self._edges
        view._found, view._tails = self._found, self._tails
        view._listings, view._real_folders = self._listings, self._real_folders
        view._declared, view._mentioned = self._declared, self._mentioned
        return view

    def in_project(self, path: str) -> bool:
        return any(path == r or path.startswith(under) for r, under in self._roots)

    def text(self, path: str) -> bytes:
        if path not in self._texts:
            try:
                self._texts[path] = Path(path).read_bytes() if os.path.getsize(path) <= _MAX_FILE else b""
            except OSError:
                self._texts[path] = b""
        return self._texts[path]

    def scan(self, path: str) -> FileScan | None:
        if path not in self._scans:
            data = self.text(path)
            self._scans[path] = scan_text(data) if data else None
            if not self.in_project(path):
                self._texts.pop(path, None)  # only project files' text is asked for again
        return self._scans[path]

    def real(self, path: str) -> str:
        """``os.path.realpath(path)``, each folder resolved once per run: a preprocessor lists
        thousands of files per probe, torch's the same ones for every header."""
        folder, base = os.path.split(path)
        return self._resolve_file(folder, base) or os.path.realpath(path)

    def beside(self, directory: str, name: str) -> str:
        """``directory/name`` resolved when it is a file, else ""; each asked once per run.

        Most questions miss (a name is looked for in each directory of the search before the one
        that has it: vLLM's probes asked 21,000, with torch's headers far more), so a miss is
        first answered from the listings of the directories on the way, each listed once per run;
        what the listings do not rule out is asked of the file system as before. A listing rules
        a name out only when no entry matches it ignoring case (a case-insensitive file system
        finds ``Foo.h`` as ``foo.h``) and the name is plain ASCII (no normalization question)."""
        key = (directory, name)
        hit = self._found.get(key)
        if hit is None:
            hit = self._found[key] = "" if self._listed_absent(directory, name) else self._resolve_file(directory, name)
        return hit

    def _listed_absent(self, directory: str, name: str) -> bool:
        """Whether the listings show that ``directory/name`` cannot exist."""
        current = directory
        for part in name.split("/"):
            if part in ("", ".", ".."):
                return False  # not a plain descent: the file system answers
            entries = self._entries(current)
            if entries is None or not part.isascii():
                return False
            if part.lower() not in entries:
                return True
            current = os.path.join(current, part)
        return False

    def _entries(self, directory: str) -> frozenset[str] | None:
        """The lower-cased names in ``directory``, None when it cannot be listed (not a directory,
        no permission: then nothing is ruled out by it)."""
        if directory in self._listings:
            return self._listings[directory]
        try:
            entries: frozenset[str] | None = frozenset(n.lower() for n in os.listdir(directory or "."))
        except OSError:
            entries = None
        self._listings[directory] = entries
        return entries

    def _resolve_file(self, directory: str, name: str) -> str:
        """``os.path.realpath`` of ``directory/name`` when it is a file, else "": a file that is no
        link resolves to its folder's real path and its own name (each folder resolved once per
        run, where ``realpath`` walks every component of every path)."""
        candidate = os.path.join(directory, name)
        try:
            mode = os.lstat(candidate).st_mode
        except (OSError, ValueError):
            return ""
        folder, base = os.path.split(candidate)
        if stat.S_ISLNK(mode) or base in ("", ".", ".."):
            return os.path.realpath(candidate) if os.path.isfile(candidate) else ""
        if not stat.S_ISREG(mode):
            return ""
        real = self._real_folders.get(folder)
        if real is None:
            real = self._real_folders[folder] = os.path.realpath(folder)
        return os.path.join(real, base)

    def _edges_of(self, path: str) -> tuple[tuple[str, str, bool], ...]:
        edges = self._edges.get(path)
        if edges is None:
            scan = self.scan(path)
            here = os.path.dirname(path)
            edges = self._edges[path] = tuple(
                (name, self.beside(here, name) if quote == '"' else "", unconditional)
                for quote, name, unconditional in (scan.includes if scan is not None else ()))
        return edges

    def closure(self, header: Path, search: Sequence[Path | str]) -> Closure:
        """The files ``header`` includes, transitively: a quoted name beside its includer first,
        then ``search`` in order (the header's own directory first, as its probe's first -I)."""
        start = os.path.realpath(header)
        dirs = tuple(str(d) for d in search)
        key = (start, dirs)
        if key in self._closures:
            return self._closures[key]
        # looked up in two steps, the own directory and then what every probe of its context
        # searches, so that the second is shared by all headers of the context
        own, tail = (dirs[0] if dirs else ""), dirs[1:]
        walk = _Walk()
        self._walk(walk, start, own, tail, entries=True)
        result = Closure(frozenset(walk.project), frozenset(walk.external), frozenset(walk.certain),
                         frozenset(walk.searched), tuple(sorted(walk.missing)))
        self._closures[key] = result
        return result

    def _walk(self, walk: _Walk, start: str, own: str, tail: tuple[str, ...], *, entries: bool) -> None:
        """Every file reached from ``start`` (reached unconditionally from the header through
        project files, then anything) into ``walk``. ``entries``: a file outside the tree that a
        project file includes (``torch/all.h``) brings its own walk, made once per run for the
        directories searched (:meth:`_entry`), where every header that includes it walked all of
        torch again: with torch's and CUTLASS's headers the walks were half the probes' planning."""
        found = self._tails.setdefault(tail, {})
        seen = walk.seen
        queue: list[tuple[str, bool, bool]] = [(start, True, False)]
        while queue:
            current, sure, entry = queue.pop()
            if current in seen and (seen[current] or not sure):
                continue
            if entry:
                walk.merge(self._entry(current, own, tail), sure)
                continue
            seen[current] = sure
            inside = self.in_project(current)
            (walk.project if inside else walk.external).add(current)
            if sure and not inside:
                walk.certain.add(current)
            for name, target, unconditional in self._edges_of(current):
                if not target:
                    target = self.beside(own, name) if own else ""
                    if not target:
                        cached = found.get(name)
                        if cached is None:
                            cached = found[name] = next((t for d in tail if (t := self.beside(d, name))), "")
                        target = cached
                    walk.searched.add((name, target))
                if not target:
                    if inside and unconditional and sure:
                        walk.missing.add(name)
                    continue
                # outside the tree, every include counts as certain once a certain file makes it:
                # the closure of torch/all.h is the same for every header that includes it
                queue.append((target, sure and (unconditional or not inside),
                              entries and inside and not self.in_project(target)))

    def _entry(self, path: str, own: str, tail: tuple[str, ...]) -> _Walk:
        """The walk from ``path``, a file outside the tree, as reached unconditionally, once per
        run for each search (its own includes are looked up in the same directories)."""
        key = (path, own, tail)
        walk = self._entries_walked.get(key)
        if walk is None:
            walk = self._entries_walked[key] = _Walk()
            self._walk(walk, path, own, tail, entries=False)
        return walk

    def names_of(self, files: Iterable[str]) -> tuple[frozenset[str], frozenset[str]]:
        """(declared names, identifiers) of ``files``."""
        files = tuple(files)
        return self.declared_in(files), self.mentioned_in(files)

    def declared_in(self, files: Iterable[str]) -> frozenset[str]:
        """The names ``files`` may declare, each file's worked out once per run and only when
        asked: the files from outside the tree that a batch question reads are asked for these
        alone, and those it reads after them for their identifiers alone (with torch's and
        CUTLASS's headers, seconds of regular expressions each way that nothing used)."""
        return self._union(files, self._declared, declared_names)

    def mentioned_in(self, files: Iterable[str]) -> frozenset[str]:
        """The identifiers ``files`` hold, each file's worked out once per run."""
        return self._union(files, self._mentioned, identifiers)

    def declares_any(self, files: Iterable[str], names: AbstractSet[str]) -> bool:
        """Whether one of ``files`` may declare one of ``names``: ``declared_in(files) & names``,
        told file by file and stopped at the first, without the union (the planner's questions are
        mostly answered no by a name of the first files it reads: on torch's tree the unions of
        hundreds of files' names per question were most of its planning)."""
        return self._any(files, names, self._declared, declared_names)

    def mentions_any(self, files: Iterable[str], names: AbstractSet[str]) -> bool:
        """Whether one of ``files`` holds one of ``names`` as an identifier (``mentioned_in(files) & names``)."""
        return self._any(files, names, self._mentioned, identifiers)

    def _any(self, files: Iterable[str], names: AbstractSet[str], memo: dict[str, frozenset[str]],
             compute: Callable[[bytes], frozenset[str]]) -> bool:
        if not names:
            return False
        for f in files:
            if not self._names(f, memo, compute).isdisjoint(names):
                return True
        return False

    def _union(self, files: Iterable[str], memo: dict[str, frozenset[str]],
               compute: Callable[[bytes], frozenset[str]]) -> frozenset[str]:
        out: set[str] = set()
        for f in files:
            out |= self._names(f, memo, compute)
        return frozenset(out)

    def _names(self, f: str, memo: dict[str, frozenset[str]], compute: Callable[[bytes], frozenset[str]]
               ) -> frozenset[str]:
        names = memo.get(f)
        if names is None:
            names = memo[f] = compute(self.text(f))
        return names
