"""Reading a quiz pack's YAML into plain data and the line of every key and item.

Packs are read as a stream of parser events and built here, without a composer or a
constructor: nesting, aliases, tags, keys and numbers are all checked in one place, the same
way for both of PyYAML's parsers. libyaml (its C parser) reads fast; its pure-Python parser is
used when libyaml is missing or refuses a file, so its messages ("expected ',' or ']', but got
'<stream end>'", with the problem's line) are the ones shown.
Every problem is reported through `add(line, message)`; nothing here raises on any input.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from yaml.error import MarkedYAMLError, YAMLError  # type: ignore[import-untyped, unused-ignore]
from yaml.parser import Parser  # type: ignore[import-untyped, unused-ignore]
from yaml.reader import Reader  # type: ignore[import-untyped, unused-ignore]
from yaml.scanner import Scanner, ScannerError  # type: ignore[import-untyped, unused-ignore]
from yaml.tokens import ScalarToken  # type: ignore[import-untyped, unused-ignore]

from bot.content import limits
from bot.content.problems import clean, short

try:  # libyaml: over ten times faster than PyYAML's pure-Python parser
    from yaml.cyaml import CParser as _CParser  # type: ignore[import-untyped, unused-ignore]
except ImportError:  # PyYAML built without libyaml: the pure-Python parser reads everything
    _CParser = None

Loc = tuple[str | int, ...]  # a path in the pack: keys and list indexes
Add = Callable[[int, str], None]  # (line, message)


# --- the text: UTF-8, and no character that would shift the lines ---------------------------


def decode(data: bytes, add: Add) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        # UTF-8 never uses the newline byte inside a character, so lines can be checked alone
        for number, raw in enumerate(data.split(b"\n"), 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                add(
                    number,
                    f"not valid UTF-8 (byte 0x{raw[exc.start]:02X} in column {exc.start + 1}); "
                    "save the file as UTF-8",
                )
        text = data.decode("utf-8", errors="replace")
    return text.removeprefix("\ufeff")


# Characters YAML refuses or treats as extra line breaks (which would shift our line numbers);
# tab, newline and CRLF are fine.
_UNPRINTABLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]|\r(?!\n)"
)
_NAMES = {
    0x00: "NUL", 0x07: "BEL", 0x08: "BS", 0x0B: "VT", 0x0C: "FF", 0x0D: "CR", 0x1B: "ESC",
    0x7F: "DEL", 0x85: "NEL", 0x2028: "LINE SEPARATOR", 0x2029: "PARAGRAPH SEPARATOR",
    0xFEFF: "BYTE ORDER MARK",  # allowed only first, where it is dropped; parsers differ on it
}


def check_characters(text: str, add: Add) -> str:
    """Report unprintable characters (one per line) and blank them so parsing can go on."""
    if not _UNPRINTABLE.search(text):
        return text
    line, position, reported = 1, 0, 0
    for match in _UNPRINTABLE.finditer(text):
        start = match.start()
        breaks = text.count("\n", position, start)
        if breaks or reported < line:
            line += breaks
            position = start
            column = start - text.rfind("\n", 0, start)
            code = ord(match.group())
            name = f" ({_NAMES[code]})" if code in _NAMES else ""
            kind = "control character" if unicodedata.category(chr(code)) == "Cc" else "character"
            add(
                line,
                f"the {kind} U+{code:04X}{name} in column {column}; a quiz file must be plain text",
            )
            reported = line
    return _UNPRINTABLE.sub("\ufffd", text)


# --- the events, built into data --------------------------------------------------------------

_TOO_DEEP = f"nested more than {limits.PACK_NESTING} levels deep; a pack needs 6"
_TOO_MANY = f"more than {limits.PACK_NODES:,} values; split it into several packs"


class _TooDeep(ScannerError):  # type: ignore[misc, unused-ignore]
    pass


class _PackScanner(Scanner):  # type: ignore[misc, unused-ignore]
    """PyYAML's scanner, reading plain text as libyaml does, and stopping at deep nesting: it
    slows down quadratically with flow nesting, and thousands of block levels on one line cost
    seconds before the builder could object."""

    def add_indent(self, column: int) -> bool:
        if len(self.indents) >= limits.PACK_NESTING and self.indent < column:
            raise _TooDeep(None, None, _TOO_DEEP, self.get_mark())
        return bool(super().add_indent(column))

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:
        if self.flow_level >= limits.PACK_NESTING:
            raise _TooDeep(None, None, _TOO_DEEP, self.get_mark())
        super().fetch_flow_collection_start(TokenClass)

    def scan_plain(self) -> Any:
        """PyYAML's own, except that `?` goes on inside plain text in a flow collection, as in
        libyaml (0.2.5) and YAML 1.2: `{en: Why?}` is the text "Why?", not a key after it."""
        chunks: list[str] = []
        start_mark = self.get_mark()
        end_mark = start_mark
        indent = self.indent + 1
        spaces: list[str] = []
        while True:
            length = 0
            if self.peek() == "#":
                break
            while True:
                ch = self.peek(length)
                if ch in _BLANK_END or (self.flow_level and ch in ",[]{}") or (
                    ch == ":" and self.peek(length + 1) in _BLANK_END + (
                        ",[]{}" if self.flow_level else "")
                ):
                    break
                length += 1
            if length == 0:
                break
            self.allow_simple_key = False
            chunks.extend(spaces)
            chunks.append(self.prefix(length))
            self.forward(length)
            end_mark = self.get_mark()
            spaces = self.scan_plain_spaces(indent, start_mark)
            if not spaces or self.peek() == "#" or (
                not self.flow_level and self.column < indent
            ):
                break
        return ScalarToken("".join(chunks), True, start_mark, end_mark)


_BLANK_END = "\0 \t\r\n\x85\u2028\u2029"  # what ends a word in YAML, the end included


class _PackParser(Reader, _PackScanner, Parser):  # type: ignore[misc, unused-ignore]
    """PyYAML's pure-Python parser (events only: no composer, no constructor)."""

    def __init__(self, text: str) -> None:
        Reader.__init__(self, text)
        _PackScanner.__init__(self)
        Parser.__init__(self)


def _pure_events(text: str) -> Iterator[Any]:
    parser = _PackParser(text)
    while parser.check_event():
        yield parser.get_event()


def _libyaml_events(text: str) -> Iterator[Any]:
    assert _CParser is not None
    parser = _CParser(text)
    try:
        while parser.check_event():
            yield parser.get_event()
    finally:
        parser.dispose()


class _Broken:
    """Stands for a value already reported; validation errors about it are not repeated."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<reported>"


BROKEN = _Broken()


class _Stop(Exception):
    """The rest of the file is not worth reading; the reason is already recorded."""


_YAML = "tag:yaml.org,2002:"
# the YAML 1.2 core schema, whatever the parser's own rules (libyaml's are YAML 1.1, where
# `yes`, `on` and `1:20` are not text)
_BOOL = re.compile("true|True|TRUE|false|False|FALSE")
_NULL = re.compile("~|null|Null|NULL|")
_INT = re.compile("[-+]?(?:0b[0-1_]+|0o?[0-7_]+|[0-9_]+|0x[0-9a-fA-F_]+)")
_FLOAT = re.compile(
    r"[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)"
    r"|[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)
_SPECIAL_FLOATS = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}


def _tag(event: Any) -> str:
    """The tag a scalar event stands for."""
    tag = event.tag
    if tag is not None and tag != "!":
        return str(tag)
    if tag is None and event.implicit[0]:  # plain, untagged
        value = event.value
        if _BOOL.fullmatch(value):
            return _YAML + "bool"
        if _NULL.fullmatch(value):
            return _YAML + "null"
        if _INT.fullmatch(value):
            return _YAML + "int"
        if _FLOAT.fullmatch(value):
            return _YAML + "float"
    return _YAML + "str"


def _number(text: str) -> int | float | str:
    """The number YAML means; never raises (no schema field takes a number anyway)."""
    plain = text.replace("_", "")
    for parse in (lambda s: int(s, 0), lambda s: int(s, 10), float):  # 0x1F, 007, 1e3
        try:
            return parse(plain)
        except ValueError:
            pass
    return _SPECIAL_FLOATS.get(plain.lower(), text)


@dataclass(slots=True)
class _Frame:
    path: Loc
    out: dict[str, Any] | list[Any]
    key: str | None = None  # a mapping's key waiting for its value
    key_line: int = 0
    drop_value: bool = False  # the key was refused, so is its value
    seen: dict[str, int] = field(default_factory=dict)  # key -> line


class _Builder:
    """Events to dicts, lists and scalars, remembering the line of every path."""

    def __init__(self, events: Iterator[Any]) -> None:
        self.events = events
        self.problems: list[tuple[int, str]] = []
        self.lines: dict[Loc, int] = {}
        self.nodes = 0

    def add(self, line: int, message: str) -> None:
        self.problems.append((line, message))

    def document(self) -> Any:
        """The single document's data; None for an empty file; _Stop after a fatal problem."""
        self._next()  # stream start
        event = self._next()
        if _kind(event) == "StreamEndEvent":
            return None
        event = self._next()  # after the document start
        data = None
        if _kind(event) != "DocumentEndEvent":
            data = self._tree(event)
            self._next()  # document end
        event = self._next()
        if _kind(event) == "DocumentStartEvent":
            self.add(_line(event), "more than one YAML document (---); a pack is a single document")
            raise _Stop
        return data

    def _next(self) -> Any:
        return next(self.events)

    def _count(self, event: Any) -> None:
        self.nodes += 1
        if self.nodes > limits.PACK_NODES:
            # events come on demand, so stopping here also stops the (slow) parser
            self.add(_line(event), _TOO_MANY)
            raise _Stop

    def _skip(self) -> None:
        """Consume the rest of a collection without building it (iteratively: it may be deep)."""
        depth = 1
        while depth:
            event = self._next()
            kind = _kind(event)
            if kind in ("MappingStartEvent", "SequenceStartEvent"):
                depth += 1
                self._count(event)
            elif kind in ("MappingEndEvent", "SequenceEndEvent"):
                depth -= 1
            elif kind == "ScalarEvent":
                self._count(event)

    def _tree(self, event: Any) -> Any:
        stack: list[_Frame] = []
        while True:
            kind = _kind(event)
            value: Any
            if kind in ("MappingEndEvent", "SequenceEndEvent"):
                value = stack.pop().out
            elif stack and isinstance(stack[-1].out, dict) and stack[-1].key is None and not (
                stack[-1].drop_value
            ):
                self._key(stack[-1], event, kind)
                event = self._next()
                continue
            elif stack and stack[-1].drop_value:
                stack[-1].drop_value = False
                if kind in ("MappingStartEvent", "SequenceStartEvent"):
                    self._skip()
                event = self._next()
                continue
            else:
                value = self._node(stack, event, kind)
                if value is _OPEN:
                    event = self._next()
                    continue
            if not stack:
                return value
            top = stack[-1]
            if isinstance(top.out, dict):
                assert top.key is not None
                top.out[top.key] = value
                top.key = None
            else:
                top.out.append(value)
            event = self._next()

    def _key(self, frame: _Frame, event: Any, kind: str) -> None:
        line = _line(event)
        frame.drop_value = True
        if kind != "ScalarEvent":
            if kind == "AliasEvent":
                self.add(line, "aliases (*name) are not supported: write it out")
            else:
                self._count(event)
                self.add(line, "a key must be plain text, not a list or a mapping")
                self._skip()
            return
        self._count(event)
        if event.anchor is not None:
            self.add(line, "anchors (&name) are not supported: write the value out")
        key = str(event.value)
        if event.tag is None and event.implicit[0] and key == "<<":
            self.add(line, "merge keys (<<) are not supported: write the keys out")
        elif key in frame.seen:
            self.add(
                line,
                f"invalid YAML: the key {short(key)!r} is repeated (first on line "
                f"{frame.seen[key]})",
            )
        else:
            frame.seen[key] = line
            frame.key, frame.key_line, frame.drop_value = key, line, False

    def _node(self, stack: list[_Frame], event: Any, kind: str) -> Any:
        """A value's data, or _OPEN after pushing the collection it starts."""
        line = _line(event)
        path: Loc = ()
        if stack and isinstance(stack[-1].out, dict):
            assert stack[-1].key is not None
            path = (*stack[-1].path, stack[-1].key)
            self.lines[path] = stack[-1].key_line  # a value's line is its key's
        else:
            if stack:
                path = (*stack[-1].path, len(stack[-1].out))
            self.lines[path] = line
        if kind == "AliasEvent":
            self.add(line, "aliases (*name) are not supported: write it out")
            return BROKEN
        self._count(event)
        if event.anchor is not None:  # useless without aliases; parsers disagree on the names
            self.add(line, "anchors (&name) are not supported: write the value out")
        if kind == "ScalarEvent":
            return self._scalar(event, line)
        expected = _YAML + ("map" if kind == "MappingStartEvent" else "seq")
        if event.tag not in (None, "!", expected):
            self._skip()
            return self._unsupported(event.tag, line)
        if len(stack) >= limits.PACK_NESTING:
            self._skip()
            self.add(line, _TOO_DEEP)
            return BROKEN
        stack.append(_Frame(path, {} if kind == "MappingStartEvent" else []))
        return _OPEN

    def _scalar(self, event: Any, line: int) -> Any:
        tag, text = _tag(event), str(event.value)
        if tag in (_YAML + "str", _YAML + "timestamp"):
            return text  # a date is text here; nothing in a pack is a date
        if tag == _YAML + "null":
            return None
        if tag == _YAML + "bool":
            return text.lower() in ("true", "yes", "on", "y")
        if tag in (_YAML + "int", _YAML + "float"):
            if len(text) > limits.PACK_NUMBER_CHARS:
                self.add(
                    line, f"a number {len(text)} characters long; put it in quotes if it is text"
                )
                return BROKEN
            return _number(text)
        return self._unsupported(tag, line)

    def _unsupported(self, tag: Any, line: int) -> _Broken:
        self.add(
            line,
            f"the tag {short(str(tag).replace(_YAML, '!!'))} is not supported; "
            "a pack is plain text, lists and mappings",
        )
        return BROKEN


_OPEN = object()  # _Builder._node: a collection was opened, its items follow


def _kind(event: Any) -> str:
    return type(event).__name__  # the same names from libyaml and the pure-Python parser


def _line(event: Any) -> int:
    return int(event.start_mark.line) + 1


Parsed = tuple[Any, dict[Loc, int]]


def _build(events: Iterator[Any], add: Add) -> Parsed | None:
    builder = _Builder(events)
    try:
        data = builder.document()
    except _Stop:
        data = None
    finally:
        for line, message in builder.problems:
            add(line, message)
    if data is None:
        if not builder.problems:
            add(1, "the file is empty; a quiz file is a mapping with id, title and questions")
        return None
    return data, builder.lines


def parse(text: str, add: Add) -> Parsed | None:
    """Plain data and the line of each path, or None after reporting why there is none."""
    if _CParser is not None:
        found: list[tuple[int, str]] = []
        try:
            parsed = _build(_libyaml_events(text), lambda line, msg: found.append((line, msg)))
        except Exception:  # any refusal: the pure-Python parser below reads it and says why
            pass
        else:
            for line, message in found:
                add(line, message)
            return parsed
    try:
        return _build(_pure_events(text), add)
    except _TooDeep as exc:
        add(exc.problem_mark.line + 1, _TOO_DEEP)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "cannot be parsed"
        add((mark.line + 1) if mark else 1, f"invalid YAML: {clean(str(what))}")
    except YAMLError as exc:  # e.g. the reader's errors, which carry a position, not a mark
        position = getattr(exc, "position", None)
        line = text.count("\n", 0, position) + 1 if isinstance(position, int) else 1
        add(line, clean(f"invalid YAML: {exc}".splitlines()[0]))
    except (RecursionError, MemoryError, ValueError, TypeError, IndexError, KeyError) as exc:
        # a third-party parser on hostile input: whatever breaks, it is still a file problem
        add(1, f"invalid YAML: the parser failed ({type(exc).__name__})")
    return None
