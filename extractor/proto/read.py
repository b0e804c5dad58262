"""Read a .proto file (proto2, proto3 and editions): a strict tokenizer and a recursive-descent reader.

There is no protobuf grammar among the tree-sitter wheels archdiff pins, and protoc is not ours to
run (nor to install); the language is small and regular, so it is read here, as protoc's own
``Parser`` reads it, statement by statement: ``syntax``/``edition``, ``package``, ``import
[public|weak]``, ``option`` (aggregate values ``{ ... }`` skipped whole), ``message`` (nested
messages and enums, ``oneof``, ``map<K, V>``, labels, field numbers and ``[...]`` options,
``reserved``, ``extensions``, ``extend``, proto2 ``group``), ``enum`` (values and their numbers) and
``service`` (``rpc Name (stream? Req) returns (stream? Resp)`` ending in ``;`` or an option block).
Keywords are keywords where protoc takes them as such (a statement starting with ``message`` in a
message body opens a nested message).

Strict: the first thing that is not .proto syntax ends the reading, and the file's facts are only
that error, with its line and column (``expected ';' at 12:25 | int32 id = 1``), as the Python
reader keeps nothing of a file the interpreter rejects: half a message would be a wrong contract.
The reader checks syntax, not meaning (field numbers' ranges, duplicate names): that is protoc's.

A declaration's ``doc`` is the first line of the comment block right above it: comment markers
off (``//``, ``///``, ``/* */``, Triton's ``//@@``), and a reStructuredText directive's first
paragraph (Triton's ``.. cpp:var:: message X``) passed over for the sentence after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NoReturn

from extractor.proto.facts import (ProtoDefinition, ProtoEnumValue, ProtoExtension, ProtoFacts, ProtoField, ProtoRpc,
                                   ProtoService)

MAX_NESTING = 64  # messages in messages: Triton's deepest is 4; deeper is refused, never a RecursionError
_LABELS = frozenset({"repeated", "optional", "required"})
_TOKEN = re.compile(r"""
 (?P<nl>\n)
|(?P<ws>[ \t\r\f\v]+)
|(?P<comment>//[^\n]*|(?s:/\*.*?(?:\*/|\Z)))
|(?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
|(?P<num>0[xX][0-9A-Fa-f]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)
|(?P<sym>[{}\[\]()<>;=,.:+\-/])
|(?P<bad>.)
""", re.VERBOSE)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "?": "?", "a": "\a", "b": "\b",
            "f": "\f", "v": "\v"}
_ESCAPE = re.compile(r"\\(.)")
_MAX_DOC = 200

Token = tuple[str, str, int, int]  # (kind, text, line, column); kind "ident", "num", "str", "sym" or "eof"


class ProtoSyntaxError(Exception):
    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.line, self.column, self.message = line, column, message


def read_proto(data: bytes) -> ProtoFacts:
    """The facts of one .proto file; a file that is not .proto syntax gives ``error`` alone."""
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    try:
        return _Reader(text).read()
    except ProtoSyntaxError as err:
        lines = text.splitlines()
        source = lines[err.line - 1].strip() if 0 < err.line <= len(lines) else ""
        shown = f" | {source[:120]}" if source else ""
        return ProtoFacts(error=(err.line, f"{err.message} at {err.line}:{err.column}{shown}"))


def _tokenize(text: str) -> tuple[list[Token], list[tuple[int, int, str, bool]]]:
    """Tokens, and comments as (first line, last line, text, alone on its line)."""
    tokens: list[Token] = []
    comments: list[tuple[int, int, str, bool]] = []
    line, line_start, code_line = 1, 0, 0
    for m in _TOKEN.finditer(text):
        kind, value = m.lastgroup, m.group()
        if kind == "nl":
            line, line_start = line + 1, m.end()
            continue
        if kind == "ws":
            continue
        column = m.start() - line_start + 1
        if kind == "comment":
            if value.startswith("/*") and (len(value) < 4 or not value.endswith("*/")):
                raise ProtoSyntaxError(line, column, "unterminated /* comment")
            last = line + value.count("\n")
            comments.append((line, last, value, code_line != line))
            if last != line:
                line, line_start = last, m.start() + value.rfind("\n") + 1
            continue
        if kind == "bad":
            raise ProtoSyntaxError(line, column, "unterminated string" if value in "\"'"
                                   else f"unexpected character {value!r}")
        tokens.append((kind or "", value, line, column))
        code_line = line
    tokens.append(("eof", "", line, max(1, len(text) - line_start + 1)))
    return tokens, comments


class _Docs:
    """The comment block that ends on the line above a declaration, as its first sentence."""

    def __init__(self, comments: list[tuple[int, int, str, bool]]) -> None:
        self._comments = comments
        self._ending = {c[1]: i for i, c in enumerate(comments) if c[3]}

    def above(self, line: int) -> str:
        i = self._ending.get(line - 1)
        if i is None:
            return ""
        first = i
        while first > 0 and self._comments[first - 1][3] and self._comments[first - 1][1] == \
                self._comments[first][0] - 1:
            first -= 1
        lines: list[str] = []
        for _start, _end, text, _alone in self._comments[first:i + 1]:
            body = text[2:-2] if text.startswith("/*") else text[2:]
            for raw in body.splitlines():
                lines.append(raw.strip().lstrip("/!*@").strip() if text.startswith("/*") else
                             raw.lstrip("/!@").strip())
        return _first_sentence(lines)


def _first_sentence(lines: list[str]) -> str:
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line:
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    for paragraph in paragraphs:
        if paragraph and not paragraph[0].startswith(".."):  # a reST directive and its arguments
            return paragraph[0][:_MAX_DOC]
    return ""


class _Reader:
    def __init__(self, text: str) -> None:
        self.tokens, comments = _tokenize(text)
        self.docs = _Docs(comments)
        self.pos = 0
        self.syntax = self.edition = self.package = ""
        self.package_line = 0
        self.imports: list[tuple[str, str, int]] = []
        self.definitions: list[ProtoDefinition | None] = []  # a message's slot is taken before its body's
        self.services: list[ProtoService] = []
        self.extensions: list[ProtoExtension] = []

    # --- tokens ---------------------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def next(self) -> Token:
        token = self.tokens[self.pos]
        if token[0] != "eof":
            self.pos += 1
        return token

    def at(self, text: str, ahead: int = 0) -> bool:
        kind, value, _line, _column = self.peek(ahead)
        return value == text and kind in ("ident", "sym")

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.pos += 1
            return True
        return False

    def expect(self, text: str, context: str = "") -> Token:
        if not self.at(text):
            self.fail(f"expected '{text}'{context}")
        return self.next()

    def fail(self, message: str, token: Token | None = None) -> NoReturn:
        kind, value, line, column = token or self.peek()
        found = "end of file" if kind == "eof" else f"'{value[:40]}'"
        raise ProtoSyntaxError(line, column, f"{message}, found {found}")

    def ident(self, what: str) -> Token:
        if self.peek()[0] != "ident":
            self.fail(f"expected {what}")
        return self.next()

    def word(self) -> str:
        kind, value, _line, _column = self.peek()
        return value if kind == "ident" else ""

    def statements(self, what: str, line: int) -> Iterator[str]:
        """The first word of each statement of a ``{ ... }`` block, up to its ``}`` (empty statements
        skipped; each statement is read by the caller); ``what`` and ``line`` name the block in the
        error an unclosed one gives."""
        while not self.accept("}"):
            if self.peek()[0] == "eof":
                self.fail(f"missing '}}' of {what} (opened at line {line})")
            if not self.accept(";"):
                yield self.word()

    def full_ident(self, what: str) -> str:
        parts = [self.ident(what)[1]]
        while self.accept("."):
            parts.append(self.ident(what)[1])
        return ".".join(parts)

    def type_name(self) -> str:
        """`Name`, `Outer.Inner`, `.pkg.Name` (fully qualified), a scalar type."""
        lead = "." if self.accept(".") else ""
        return lead + self.full_ident("a type name")

    def integer(self, what: str) -> int:
        negative = self.accept("-")
        kind, value, _line, _column = token = self.peek()
        if kind != "num" or ("." in value or "e" in value.lower()) and not value.lower().startswith("0x"):
            self.fail(f"expected {what} (an integer)")
        self.next()
        try:
            number = int(value, 16) if value.lower().startswith("0x") else \
                int(value, 8) if len(value) > 1 and value.startswith("0") else int(value)
        except ValueError:
            self.fail(f"expected {what} (an integer)", token)
        return -number if negative else number

    def string(self, what: str) -> str:
        if self.peek()[0] != "str":
            self.fail(f"expected {what} (a string)")
        parts = []
        while self.peek()[0] == "str":  # adjacent literals are one string
            raw = self.next()[1][1:-1]
            parts.append(_ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), raw))
        return "".join(parts)

    # --- file -------------------------------------------------------------------------------------

    def read(self) -> ProtoFacts:
        first = True
        while self.peek()[0] != "eof":
            start = self.peek()
            word = self.word()
            if self.accept(";"):
                continue
            if word in ("syntax", "edition") and self.at("=", 1):
                if not first:
                    self.fail(f"'{word}' must be the first statement of the file", start)
                self.next()
                self.expect("=")
                value = self.string(f"the {word}")
                if word == "syntax" and value not in ("proto2", "proto3"):
                    self.fail(f"unknown syntax {value!r} (proto2 or proto3)", start)
                self.syntax, self.edition = (value, "") if word == "syntax" else ("editions", value)
                self.expect(";", f" after the {word}")
            elif word == "package":
                if self.package:
                    self.fail("a second package statement (one per file)", start)
                self.next()
                self.package, self.package_line = self.full_ident("a package name"), start[2]
                self.expect(";", " after the package name")
            elif word == "import":
                self.next()
                modifier = self.next()[1] if self.word() in ("public", "weak") else ""
                self.imports.append((self.string("the imported file"), modifier, start[2]))
                self.expect(";", " after the import")
            elif word == "option":
                self.option_statement()
            elif word == "message":
                self.message("", 1)
            elif word == "enum":
                self.enum("")
            elif word == "service":
                self.service()
            elif word == "extend":
                self.extend("")
            else:
                self.fail("expected a top-level statement (syntax, package, import, option, message, enum, "
                          "service, extend)")
            first = False
        definitions = tuple(d for d in self.definitions if d is not None)
        return ProtoFacts(self.syntax, self.edition, self.package, self.package_line, tuple(self.imports),
                          definitions, tuple(self.services), tuple(self.extensions))

    # --- options ----------------------------------------------------------------------------------

    def option_name(self) -> str:
        parts = []
        while True:
            if self.accept("("):
                parts.append(f"({self.type_name()})")
                self.expect(")", " after the extension's name")
            else:
                parts.append(self.ident("an option name")[1])
            if not self.accept("."):
                return ".".join(parts)

    def constant(self) -> str:
        kind, value, line, _column = self.peek()
        if self.accept("{"):
            self.skip_aggregate(line)
            return "{...}"
        if kind == "sym" and value in "-+":
            self.next()
            if self.peek()[0] not in ("num", "ident"):
                self.fail("expected a number after the sign")
            return value + self.next()[1]
        if kind == "num":
            return self.next()[1]
        if kind == "str":
            return self.string("a constant")
        if kind == "ident":
            return self.full_ident("a constant")
        self.fail("expected a constant")

    def skip_aggregate(self, opened: int) -> None:
        """A text-format value `{ post: "/v1/x" body: "*" }`, after its `{`: skipped to its `}`."""
        depth = 1
        while depth:
            kind, value, _line, _column = self.next()
            if kind == "eof":
                self.fail(f"the aggregate value opened at line {opened} is not closed")
            if kind == "sym":
                depth += (value == "{") - (value == "}")

    def option_statement(self) -> bool:
        """`option name = value;` (the keyword not yet read); True for `deprecated = true`."""
        self.expect("option")
        name = self.option_name()
        self.expect("=", " after the option name")
        value = self.constant()
        self.expect(";", " after the option")
        return name == "deprecated" and value == "true"

    def field_options(self) -> bool:
        """`[name = value, ...]` if there; True when it says `deprecated = true`."""
        deprecated = False
        if self.accept("["):
            while True:
                name = self.option_name()
                self.expect("=", " after the option name")
                value = self.constant()
                deprecated |= name == "deprecated" and value == "true"
                if not self.accept(","):
                    break
            self.expect("]", " to close the field options")
        return deprecated

    # --- messages ---------------------------------------------------------------------------------

    def message(self, scope: str, depth: int) -> None:
        start = self.expect("message")
        name = self.ident("a message name")
        if depth > MAX_NESTING:
            self.fail(f"messages nest deeper than {MAX_NESTING} levels", name)
        qual = f"{scope}.{name[1]}" if scope else name[1]
        self.expect("{", f" to open message '{name[1]}'")
        slot = len(self.definitions)
        self.definitions.append(None)
        fields: list[ProtoField] = []
        reserved: list[str] = []
        deprecated = self.message_body(qual, depth, fields, start, reserved)
        self.definitions[slot] = ProtoDefinition("message", qual, name[2], self.docs.above(start[2]), deprecated,
                                                 tuple(fields), reserved=tuple(reserved))

    def message_body(self, qual: str, depth: int, fields: list[ProtoField], start: Token,
                     reserved: list[str]) -> bool:
        """Statements up to the message's `}`; True when an option deprecates the message. The
        ``reserved`` numbers and names are added to ``reserved``."""
        deprecated = False
        for word in self.statements(f"message '{qual.rsplit('.', 1)[-1]}'", start[2]):
            if word == "message":
                self.message(qual, depth + 1)
            elif word == "enum":
                self.enum(qual)
            elif word == "extend":
                self.extend(qual)
            elif word == "option":
                deprecated |= self.option_statement()
            elif word in ("reserved", "extensions"):
                self.next()
                listed = self.ranges(word)
                if word == "reserved":
                    reserved.extend(listed)
                else:
                    self.field_options()
                self.expect(";", f" after {word}")
            elif word == "oneof":
                self.oneof(qual, depth, fields)
            elif word == "map" and self.at("<", 1):
                self.map_field(fields)
            else:
                self.field(qual, depth, fields)
        return deprecated

    def ranges(self, word: str) -> list[str]:
        """`2, 15, 9 to 11, 40 to max` or field names (`"foo", "bar"`; bare in editions), as
        written: `2`, `9..11`, `40..max`, `"foo"` (a name quoted, whichever way it was written)."""
        listed = []
        while True:
            if self.peek()[0] == "str":
                listed.append(f'"{self.string("a reserved name")}"')
            elif self.peek()[0] == "ident" and word == "reserved":
                listed.append(f'"{self.next()[1]}"')
            else:
                first = self.integer(f"a field number of {word}")
                last = ""
                if self.accept("to"):
                    last = "max" if self.accept("max") else str(self.integer(f"the end of a range of {word}"))
                listed.append(f"{first}..{last}" if last else str(first))
            if not self.accept(","):
                return listed

    def field(self, scope: str, depth: int, fields: list[ProtoField], oneof: str = "") -> None:
        start = self.peek()
        label = self.next()[1] if self.word() in _LABELS else ""
        if label and oneof:
            self.fail("a field of a oneof has no label (repeated, optional, required)", start)
        if self.word() == "group" and self.peek(1)[0] == "ident" and self.at("=", 2):
            self.group(scope, depth, fields, label, oneof, start)
            return
        written = self.type_name()
        name = self.ident("a field name")
        number, deprecated = self.numbered(f"field '{name[1]}'")
        self.expect(";", f" after field '{name[1]}'")
        fields.append(ProtoField(name[1], name[2], number, written, label, oneof=oneof, deprecated=deprecated,
                                 doc=self.docs.above(start[2])))

    def group(self, scope: str, depth: int, fields: list[ProtoField], label: str, oneof: str, start: Token) -> None:
        """proto2 `optional group Result = 1 { ... }`: a nested message and a field of it."""
        self.expect("group")
        name = self.ident("a group name")
        number, deprecated = self.numbered(f"group '{name[1]}'")
        self.expect("{", f" to open group '{name[1]}'")
        qual = f"{scope}.{name[1]}"
        slot = len(self.definitions)
        self.definitions.append(None)
        inner: list[ProtoField] = []
        reserved: list[str] = []
        self.message_body(qual, depth + 1, inner, start, reserved)
        doc = self.docs.above(start[2])
        self.definitions[slot] = ProtoDefinition("message", qual, name[2], doc, False, tuple(inner),
                                                 reserved=tuple(reserved))
        fields.append(ProtoField(name[1].lower(), name[2], number, name[1], label, oneof=oneof, group=True,
                                 deprecated=deprecated, doc=doc))

    def numbered(self, what: str) -> tuple[int, bool]:
        """`= N [options]` after the name of a field, group or enum value (``what``, for the
        messages): the number, and whether the options deprecate it."""
        self.expect("=", f" after {what}")
        number = self.integer(f"the number of {what}")
        return number, self.field_options()

    def map_field(self, fields: list[ProtoField]) -> None:
        start = self.expect("map")
        self.expect("<")
        key = self.ident("a map key type")[1]
        self.expect(",", " between the map's key and value types")
        value = self.type_name()
        self.expect(">", " to close the map type")
        name = self.ident("a field name")
        number, deprecated = self.numbered(f"field '{name[1]}'")
        self.expect(";", f" after field '{name[1]}'")
        fields.append(ProtoField(name[1], name[2], number, value, key=key, deprecated=deprecated,
                                 doc=self.docs.above(start[2])))

    def oneof(self, scope: str, depth: int, fields: list[ProtoField]) -> None:
        self.expect("oneof")
        name = self.ident("a oneof name")
        opened = self.expect("{", f" to open oneof '{name[1]}'")
        for word in self.statements(f"oneof '{name[1]}'", opened[2]):
            if word == "option":
                self.option_statement()
            else:
                self.field(scope, depth, fields, oneof=name[1])

    def extend(self, scope: str) -> None:
        start = self.expect("extend")
        extendee = self.type_name()
        self.expect("{", f" to open extend '{extendee}'")
        fields: list[ProtoField] = []
        for _word in self.statements(f"extend '{extendee}'", start[2]):
            self.field(scope, 1, fields)
        self.extensions.append(ProtoExtension(scope, extendee, start[2], tuple(fields)))

    # --- enums ------------------------------------------------------------------------------------

    def enum(self, scope: str) -> None:
        start = self.expect("enum")
        name = self.ident("an enum name")
        qual = f"{scope}.{name[1]}" if scope else name[1]
        self.expect("{", f" to open enum '{name[1]}'")
        values: list[ProtoEnumValue] = []
        reserved: list[str] = []
        deprecated = False
        for word in self.statements(f"enum '{name[1]}'", start[2]):
            if word == "option":
                deprecated |= self.option_statement()
            elif word == "reserved":
                self.next()
                reserved.extend(self.ranges(word))
                self.expect(";", " after reserved")
            else:
                value = self.ident("an enum value name")
                number, value_deprecated = self.numbered(f"enum value '{value[1]}'")
                self.expect(";", f" after enum value '{value[1]}'")
                values.append(ProtoEnumValue(value[1], value[2], number, value_deprecated,
                                             self.docs.above(value[2])))
        self.definitions.append(ProtoDefinition("enum", qual, name[2], self.docs.above(start[2]), deprecated,
                                                values=tuple(values), reserved=tuple(reserved)))

    # --- services ---------------------------------------------------------------------------------

    def service(self) -> None:
        start = self.expect("service")
        name = self.ident("a service name")
        self.expect("{", f" to open service '{name[1]}'")
        rpcs: list[ProtoRpc] = []
        deprecated = False
        for word in self.statements(f"service '{name[1]}'", start[2]):
            if word == "option":
                deprecated |= self.option_statement()
            elif word == "rpc":
                rpcs.append(self.rpc())
            else:
                self.fail(f"expected an rpc or an option in service '{name[1]}'")
        self.services.append(ProtoService(name[1], name[2], tuple(rpcs), deprecated, self.docs.above(start[2])))

    def rpc(self) -> ProtoRpc:
        start = self.expect("rpc")
        name = self.ident("an rpc name")
        self.expect("(", f" after rpc '{name[1]}'")
        client_streaming, request = self.message_type()
        self.expect(")", " after the request type")
        self.expect("returns", f" after the request of rpc '{name[1]}'")
        self.expect("(", " after returns")
        server_streaming, response = self.message_type()
        self.expect(")", " after the response type")
        deprecated = False
        if self.accept("{"):
            for word in self.statements(f"rpc '{name[1]}'", start[2]):
                if word != "option":
                    self.fail(f"expected an option in rpc '{name[1]}'")
                deprecated |= self.option_statement()
        else:
            self.expect(";", f" or '{{' after rpc '{name[1]}'")
        return ProtoRpc(name[1], name[2], request, response, client_streaming, server_streaming, deprecated,
                        self.docs.above(start[2]))

    def message_type(self) -> tuple[bool, str]:
        """`stream Req` or `Req`: (streamed, type as written); a type named `stream` stays one."""
        streamed = self.word() == "stream" and not self.at(")", 1) and not self.at(".", 1)
        if streamed:
            self.next()
        return streamed, self.type_name()
