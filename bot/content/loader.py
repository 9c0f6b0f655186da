"""Load quiz packs from YAML, validate them, and point every problem at its file and line.

Loading is all or nothing: a catalog with any error is refused whole, so a running bot never
serves half a pack. Every problem of every file is reported in one run, sorted by file and
line, so an author fixes them all at once instead of one per run.

A pack is untrusted input (a pull request, a mounted volume): only regular files are read, size
and nesting are capped, and no input makes the loader raise anything but ContentError.
"""

from __future__ import annotations

import contextlib
import gc
import math
import os
import re
import stat
import unicodedata
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.scanner import Scanner, ScannerError

from bot.content import limits
from bot.content.cache import ContentCache, Entry
from bot.content.schema import (
    LOCALES,
    LocalizedModel,
    OptionModel,
    Question,
    Quiz,
    QuizModel,
    pack_language,
)

try:  # libyaml through PyYAML: over ten times faster than ruamel's pure-Python parser
    from yaml.cyaml import CParser as _CParser  # type: ignore[import-untyped, unused-ignore]
except ImportError:  # PyYAML without libyaml, or no PyYAML: ruamel reads everything
    _CParser = None

Loc = tuple[str | int, ...]
Add = Callable[[int, str], None]

# a report longer than this helps nobody; the rest is summarised in one line
MAX_PROBLEMS_PER_FILE = 100


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    line: int  # 1-based; 0 when unknown
    message: str
    warning: bool = False

    def __str__(self) -> str:
        kind = "warning" if self.warning else "error"
        return f"{_clean(self.file)}:{self.line}: {kind}: {self.message}"


class ContentError(Exception):
    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = sorted(problems, key=_order)
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass
class Catalog:
    """Every quiz by id (`quizzes`: what posts, answers and boards look up) and the ones that
    are offered (iterating, get, with_tag: what a chat can choose); a pack withdrawn with
    /unpublish is in the first and not the second."""

    quizzes: dict[str, Quiz] = field(default_factory=dict)
    warnings: list[Problem] = field(default_factory=list)
    withdrawn: set[str] = field(default_factory=set)

    def __iter__(self) -> Iterator[Quiz]:
        return (q for q in self.quizzes.values() if q.id not in self.withdrawn)

    def get(self, quiz_id: str) -> Quiz | None:
        return None if quiz_id in self.withdrawn else self.quizzes.get(quiz_id)

    def with_tag(self, tag: str) -> list[Quiz]:
        return [q for q in self if tag in q.tags]

    def question(self, quiz_id: str, question_id: str) -> Question:
        return self.quizzes[quiz_id].question(question_id)


def _order(problem: Problem) -> tuple[str, int]:
    return problem.file, problem.line


# --- text hygiene for our own messages -------------------------------------------------------

_ESCAPE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


def _clean(text: str, limit: int = 400) -> str:
    """Escape what would garble a terminal (keys and file names come from the input)."""
    text = _ESCAPE.sub(lambda m: repr(m.group())[1:-1], text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(text: str) -> str:
    return _clean(text, 40)


# --- reading: regular files only, at most the cap ------------------------------------------


class _Unreadable(Exception):
    pass


def _read(path: Path) -> bytes:
    """The file's bytes; _Unreadable says why there are none."""
    cap = limits.PACK_FILE_BYTES
    too_big = (
        f"the file is larger than {cap / 2**20:g} MiB, the limit for one pack; "
        "split it into several packs"
    )
    # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _Unreadable(f"cannot open the file: {exc.strerror or type(exc).__name__}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "a pipe, socket or device"
            raise _Unreadable(f"not a regular file ({kind}); a quiz pack must be a plain file")
        if info.st_size > cap:
            raise _Unreadable(too_big)
        chunks: list[bytes] = []
        remaining = cap + 1  # the size may have grown since fstat: never read past the cap
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        if remaining <= 0:
            raise _Unreadable(too_big)
        return b"".join(chunks)
    except OSError as exc:
        raise _Unreadable(f"cannot read the file: {exc.strerror or type(exc).__name__}") from None
    finally:
        os.close(fd)


def _decode(data: bytes, add: Add) -> str:
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


def _check_characters(text: str, add: Add) -> str:
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


# --- parsing: YAML events into plain data plus the line of every key and item --------------
#
# Packs are read as a stream of parser events and built here, without a composer or a
# constructor: nesting, aliases, tags, keys and numbers are all checked in one place, the same
# way for both parsers. libyaml (PyYAML's C parser) reads fast; ruamel, in pure Python, is
# used when libyaml is missing or refuses a file, so its messages and lines are the ones shown.

_TOO_DEEP = f"nested more than {limits.PACK_NESTING} levels deep; a pack needs 6"
_TOO_MANY = f"more than {limits.PACK_NODES:,} values; split it into several packs"


class _TooDeep(ScannerError):
    pass


class _PackScanner(Scanner):
    """Stops at deep nesting: ruamel's scanner slows down quadratically with flow nesting, and
    thousands of block levels on one line cost seconds before the builder could object."""

    def add_indent(self, column: int) -> bool:
        if len(self.indents) >= limits.PACK_NESTING and self.indent < column:
            raise _TooDeep(None, None, _TOO_DEEP, self.reader.get_mark())
        return bool(super().add_indent(column))

    def fetch_flow_collection_start(self, TokenClass: Any, to_push: str) -> None:
        if self.flow_level >= limits.PACK_NESTING:
            raise _TooDeep(None, None, _TOO_DEEP, self.reader.get_mark())
        super().fetch_flow_collection_start(TokenClass, to_push)


def _ruamel_events(text: str) -> Iterator[Any]:
    # the pure "safe" parser: the round-trip one keeps comments, quadratically for blank lines
    yaml = YAML(typ="safe", pure=True)
    yaml.Scanner = _PackScanner
    return iter(yaml.parse(text))


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
                f"invalid YAML: the key {_short(key)!r} is repeated (first on line "
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
            f"the tag {_short(str(tag).replace(_YAML, '!!'))} is not supported; "
            "a pack is plain text, lists and mappings",
        )
        return BROKEN


_OPEN = object()  # _Builder._node: a collection was opened, its items follow


def _kind(event: Any) -> str:
    return type(event).__name__  # the same names in ruamel and PyYAML


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


def _parse(text: str, add: Add) -> Parsed | None:
    """Plain data and the line of each path, or None after reporting why there is none."""
    if _CParser is not None:
        found: list[tuple[int, str]] = []
        try:
            parsed = _build(_libyaml_events(text), lambda line, msg: found.append((line, msg)))
        except Exception:  # any refusal: ruamel below reads the file and says why
            pass
        else:
            for line, message in found:
                add(line, message)
            return parsed
    try:
        return _build(_ruamel_events(text), add)
    except _TooDeep as exc:
        add(exc.problem_mark.line + 1, _TOO_DEEP)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "cannot be parsed"
        add((mark.line + 1) if mark else 1, f"invalid YAML: {_clean(str(what))}")
    except YAMLError as exc:  # e.g. the reader's errors, which carry a position, not a mark
        position = getattr(exc, "position", None)
        line = text.count("\n", 0, position) + 1 if isinstance(position, int) else 1
        add(line, _clean(f"invalid YAML: {exc}".splitlines()[0]))
    except (RecursionError, MemoryError, ValueError, TypeError, IndexError, KeyError) as exc:
        # a third-party parser on hostile input: whatever breaks, it is still a file problem
        add(1, f"invalid YAML: the parser failed ({type(exc).__name__})")
    return None


# --- validation messages in our own words --------------------------------------------------


def _describe(loc: Loc) -> str:
    parts: list[str] = []
    for key in loc:
        if isinstance(key, int):
            if parts:
                parts[-1] = f"{parts[-1].removesuffix('s')} {key + 1}"
            else:
                parts.append(f"item {key + 1}")
        elif key == "text" and parts and parts[-1].startswith("option"):
            continue  # Option.text is our model's name, not a key the author wrote
        else:
            parts.append(_short(str(key)))
    return ".".join(parts) or "the file"


_SLUG_RULE = "lowercase letters, digits and hyphens (at most 48), starting with a letter or digit"
_SHAPES = {
    "LocalizedModel": "text, or a mapping from language (en, bn, hi) to text",
    "OptionModel": "text, or a mapping from language (en, bn, hi) to text with 'correct: true' on "
    "the right one",
    "QuestionModel": "a mapping with id, prompt, options and explanation",
    "QuizModel": "a mapping with id, title and questions",
}


def _message(err: Any) -> str:
    """A pydantic error as a sentence naming the place in the pack."""
    where, kind, ctx, value = _describe(err["loc"]), err["type"], err.get("ctx") or {}, err["input"]
    if kind == "missing":
        return f"{where} is missing"
    if kind == "extra_forbidden":
        return f"{where}: unknown key (check the spelling)"
    if kind in ("string_type", "string_too_short"):
        if value is None or (isinstance(value, str) and not value.strip()):
            return f"{where} is empty"
        if isinstance(value, bool | int | float):
            return f"{where} must be text; put it in quotes"
        return f"{where} must be text"
    if kind == "string_unicode":  # a "\ud800" escape: half of a UTF-16 pair
        code = _surrogate(value)
        return f"{where}: contains the unprintable character U+{code}; quiz text must be plain text"
    if kind == "string_pattern_mismatch":
        return f"{where} must be {_SLUG_RULE}"
    if kind == "too_short":
        return f"{where} has {ctx.get('actual_length')}, at least {ctx.get('min_length')} needed"
    if kind == "too_long":
        return f"{where} has {ctx.get('actual_length')}, at most {ctx.get('max_length')} allowed"
    if kind == "list_type":
        return f"{where} must be a list"
    if kind in ("bool_type", "bool_parsing"):
        return f"{where} must be true or false"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        shape = _SHAPES.get(str(ctx.get("class_name")), "a mapping")
        return f"{where} must be {shape}"
    message = str(err["msg"]).removeprefix("Value error, ")
    return f"{where}: {_clean(message)}"


def _surrogate(value: Any) -> str:
    found = re.search("[\ud800-\udfff]", value) if isinstance(value, str) else None
    return f"{ord(found.group()):04X}" if found else "D800"


def _line_of(lines: dict[Loc, int], loc: Loc) -> int:
    """The line of the deepest part of a pydantic location that the YAML spells."""
    path: Loc = ()
    line = lines.get((), 1)
    for key in loc:
        candidate = (*path, key)
        if candidate in lines:  # model-made keys (Option.text, a plain string's en) are skipped
            path = candidate
            line = lines[candidate]
    return line


# --- platform limits, checked on every part that is valid by itself ------------------------

Finding = tuple[Loc, str, bool]  # (location, message, is_warning)


def _valid(model: type[BaseModel], raw: Any) -> Any:
    if raw is None or raw is BROKEN:
        return None
    try:
        return model.model_validate(raw)
    except ValidationError:
        return None  # reported by the whole-file validation


def _too_long(loc: Loc, text: LocalizedModel | None, limit: int, what: str) -> Iterable[Finding]:
    for locale, value in text.items() if text else ():
        n = limits.tg_len(value)
        if n > limit:
            yield (*loc, locale), f"{what} is {n} characters, the limit is {limit}", False


def _limit_problems(data: dict[str, Any], quiz: QuizModel | None) -> Iterable[Finding]:
    """Limits need only the part they measure, so a schema error elsewhere hides none."""
    if quiz is not None:  # valid as a whole: measure the models, no second validation
        yield from _too_long(("title",), quiz.title, limits.TITLE, "title")
        for qi, q in enumerate(quiz.questions):
            yield from _question_limits(
                ("questions", qi), q.prompt, list(enumerate(q.options)), q.explanation, q.details
            )
        return
    title = _valid(LocalizedModel, data.get("title"))
    yield from _too_long(("title",), title, limits.TITLE, "title")
    questions = data.get("questions")
    for qi, raw in enumerate(questions if isinstance(questions, list) else ()):
        if isinstance(raw, dict):
            raw_options = raw.get("options")
            options = [
                (oi, option)
                for oi, item in enumerate(raw_options if isinstance(raw_options, list) else ())
                if (option := _valid(OptionModel, item)) is not None
            ]
            yield from _question_limits(
                ("questions", qi),
                _valid(LocalizedModel, raw.get("prompt")),
                options,
                _valid(LocalizedModel, raw.get("explanation")),
                _valid(LocalizedModel, raw.get("details")),
            )


def _question_limits(
    base: Loc,
    prompt: LocalizedModel | None,
    options: list[tuple[int, OptionModel]],
    explanation: LocalizedModel | None,
    details: LocalizedModel | None,
) -> Iterable[Finding]:
    """One question's parts that are valid (None, or left out of options, when not)."""
    yield from _too_long((*base, "prompt"), prompt, limits.TG_QUESTION, "question")
    for oi, option in options:
        yield from _too_long((*base, "options", oi), option.text, limits.TG_OPTION, "option")
    yield from _too_long(
        (*base, "explanation"), explanation, limits.TG_EXPLANATION, "explanation"
    )
    for locale, value in explanation.items() if explanation else ():
        if value.count("\n") > limits.TG_EXPLANATION_NEWLINES:
            yield (
                (*base, "explanation", locale),
                f"explanation has {value.count(chr(10))} line breaks, Telegram allows "
                f"{limits.TG_EXPLANATION_NEWLINES}",
                False,
            )
    yield from _too_long((*base, "details"), details, limits.DETAILS, "details")
    if options:
        first = [loc for loc, _ in options[0][1].text.items()]
        for oi, option in options[1:]:
            locs = [loc for loc, _ in option.text.items()]
            if locs != first:
                yield (
                    (*base, "options", oi),
                    f"option has locales {locs} but option {options[0][0] + 1} has {first}: "
                    "every locale needs the same options",
                    False,
                )
    for what, text in (("prompt", prompt), ("explanation", explanation)):
        if text and (missing := text.missing()):
            yield (*base, what), f"{what} has no {', '.join(missing)} text", True
    if options and (missing := options[0][1].text.missing()):
        yield (*base, "options"), f"options have no {', '.join(missing)} text", True


# --- answers given away by their length -------------------------------------------------

# More than this share of a pack's questions with the answer as its longest (or shortest)
# option, in one language, is a warning: picking by length alone would score without knowing.
GIVEAWAY_SHARE = 0.4


def _giveaway_problems(quiz: QuizModel) -> Iterable[Finding]:
    """The correct option strictly the longest, or strictly the shortest, too often.

    Questions with two options are left out: one of the two is always the longer. A language
    counts only the questions that spell every option in it (a fallback to English is
    already a warning of its own). Length is counted as the limits count it.
    """
    for locale in LOCALES:
        counted = longest = shortest = 0
        for q in quiz.questions:
            texts = [getattr(o.text, locale) for o in q.options]
            if len(texts) < 3 or any(t is None for t in texts):
                continue
            lengths = [limits.tg_len(t) for t in texts if t is not None]
            answer = lengths.pop(q.answer)
            counted += 1
            longest += answer > max(lengths)
            shortest += answer < min(lengths)
        for n, what in ((longest, "longest"), (shortest, "shortest")):
            if counted and n / counted > GIVEAWAY_SHARE:
                yield (
                    ("questions",),
                    f"in {locale}, the correct option is the {what} in {n} of {counted} "
                    f"questions (over {GIVEAWAY_SHARE:.0%}), so picking the {what} option "
                    "scores without knowing; make the options alike in length and detail",
                    True,
                )


# --- one file, then the catalog --------------------------------------------------------------


@dataclass
class _File:
    name: str
    quiz: Quiz | None = None
    problems: list[Problem] = field(default_factory=list)
    quiz_id: tuple[str, int] | None = None  # as written, also in an invalid file
    question_ids: list[tuple[str, int]] = field(default_factory=list)

    def add(self, line: int, message: str, warning: bool = False) -> None:
        self.problems.append(Problem(self.name, line, message, warning))


Read = tuple[bytes | _Unreadable, str | None]  # a pack's bytes and cache key, or why not


def _read_keyed(path: Path, cache: ContentCache) -> Read:
    """Reading and hashing release the GIL: done in a thread while the last pack is decoded."""
    try:
        data = _read(path)
    except _Unreadable as exc:
        return exc, None
    return data, cache.key(data)


def _prefetched(files: list[Path], cache: ContentCache, ahead: int = 4) -> Iterator[Read]:
    """Each pack read and hashed in a thread, at most `ahead` packs before they are used."""
    with ThreadPoolExecutor(1, thread_name_prefix="quizbot-content") as pool:
        pending: deque[Future[Read]] = deque()
        for path in files:
            pending.append(pool.submit(_read_keyed, path, cache))
            if len(pending) > ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _load(path: Path, cache: ContentCache | None = None, read: Read | None = None) -> _File:
    result = _File(str(path))
    key = None
    if read is not None:
        data, key = read
    else:
        try:
            data = _read(path)
        except _Unreadable as exc:
            data = exc
    if isinstance(data, _Unreadable):
        result.add(1, str(data))
        return result
    if cache is not None and (entry := cache.get(data, key)) is not None:
        return _from_cache(result, entry)
    text = _check_characters(_decode(data, result.add), result.add)
    parsed = _parse(text, result.add)
    if parsed is not None:
        _check(result, *parsed)
    if len(result.problems) > MAX_PROBLEMS_PER_FILE:
        result.problems.sort(key=_order)
        rest = result.problems[MAX_PROBLEMS_PER_FILE:]
        del result.problems[MAX_PROBLEMS_PER_FILE:]
        # only warnings left out: the summary is a warning too, and the pack still loads
        result.add(rest[0].line, f"… and {len(rest)} more problems in this file",
                   all(p.warning for p in rest))
    if cache is not None and result.quiz is not None and not _errors(result.problems):
        # only a pack without errors is stored: every error comes from a real parse
        cache.put(data, _to_cache(result, result.quiz), key)
    return result


def _errors(problems: Iterable[Problem]) -> bool:
    return any(not p.warning for p in problems)


def _to_cache(result: _File, quiz: Quiz) -> Entry:
    assert result.quiz_id is not None and len(result.question_ids) == len(quiz.questions)
    return Entry(quiz, result.quiz_id[1], [line for _, line in result.question_ids],
                 [(p.line, p.message) for p in result.problems])


def _from_cache(result: _File, entry: Entry) -> _File:
    result.quiz = quiz = entry.quiz
    result.problems = [Problem(result.name, line, message, True)
                       for line, message in entry.warnings]
    result.quiz_id = (quiz.id, entry.quiz_line)
    result.question_ids = [(q.id, line) for q, line in zip(quiz.questions, entry.question_lines,
                                                           strict=True)]
    return result


def _check(result: _File, data: Any, lines: dict[Loc, int]) -> None:
    if not isinstance(data, dict):
        if data is not BROKEN:
            result.add(lines.get((), 1), f"a quiz file must be {_SHAPES['QuizModel']}")
        return
    if isinstance(quiz_id := data.get("id"), str):
        result.quiz_id = (quiz_id, lines[("id",)])
    questions = data.get("questions")
    for qi, raw in enumerate(questions if isinstance(questions, list) else ()):
        if isinstance(raw, dict) and isinstance(question_id := raw.get("id"), str):
            result.question_ids.append((question_id, lines[("questions", qi, "id")]))
    model: QuizModel | None = None
    try:
        model = QuizModel.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            # already reported: a placeholder's errors, and ids used twice (by load_catalog)
            if err["input"] is BROKEN or err["type"] == "duplicate_question_id":
                continue
            result.add(_line_of(lines, err["loc"]), _message(err))
    with pack_language(data.get("language")):  # its parts in the pack's language
        for loc, message, warning in _limit_problems(data, model):
            result.add(_line_of(lines, loc), f"{_describe(loc)}: {message}", warning)
    if model is not None:
        for loc, message, warning in _giveaway_problems(model):
            result.add(_line_of(lines, loc), message, warning)
        result.quiz = Quiz.of(model)


def load_file(path: Path) -> tuple[Quiz | None, list[Problem]]:
    """One pack and its problems (ids used in other files are checked by load_catalog)."""
    result = _load(path)
    return (None if _errors(result.problems) else result.quiz), sorted(result.problems, key=_order)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a catalog is built: it allocates about 13 objects per
    question that all stay, and every full collection on the way would walk them again (one
    pass over them follows the load instead)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _quiz_files(root: Path) -> list[Path]:
    if not root.is_dir():
        return [root]  # a file, or a pipe or device that _read refuses with a clear message
    # hidden files are editor locks and macOS metadata, not packs
    return sorted(
        p for p in root.iterdir() if p.suffix in (".yaml", ".yml") and not p.name.startswith(".")
    )


def _used_twice(kind: str, places: dict[str, list[tuple[str, int]]]) -> Iterable[Problem]:
    """A problem at every place an id is used, naming the other places."""
    for ident, where in places.items():
        if len(where) < 2:
            continue
        for i, (file, line) in enumerate(where):
            others = ", ".join(
                f"line {ln}" if f == file else f"{_clean(f)}:{ln}"
                for j, (f, ln) in enumerate(where)
                if j != i
            )
            yield Problem(file, line, f"{kind} id {_short(ident)!r} is used more than once "
                          f"(also at {others})")


def load_catalog(root: Path | str, cache_dir: Path | str | None = None) -> Catalog:
    """Load every pack under `root`; raise ContentError listing every problem if any.

    With `cache_dir`, a pack whose exact bytes were loaded before (by this version of the
    loader, schema and limits, on this Python) is taken from the cache there instead of being
    parsed and validated again (bot/content/cache.py); a pack with errors never is. Without
    it, every pack is parsed and validated.
    """
    root = Path(root)
    if not root.exists():
        raise ContentError([Problem(str(root), 0, "no such file or directory")])
    try:
        files = _quiz_files(root)
    except OSError as exc:
        message = f"cannot list the directory: {exc.strerror or type(exc).__name__}"
        raise ContentError([Problem(str(root), 0, message)]) from None
    if not files:
        raise ContentError([Problem(str(root), 0, "no quiz files (*.yaml) found")])
    cache = ContentCache.at(Path(cache_dir)) if cache_dir is not None else None
    with _gc_paused():
        if cache is None:
            loaded = [_load(path) for path in files]
        else:
            loaded = [_load(path, cache, read)
                      for path, read in zip(files, _prefetched(files, cache), strict=True)]
    if cache is not None:
        cache.done()
    problems = [p for result in loaded for p in result.problems]
    quiz_places: dict[str, list[tuple[str, int]]] = defaultdict(list)
    question_places: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for result in loaded:
        if result.quiz_id:
            quiz_places[result.quiz_id[0]].append((result.name, result.quiz_id[1]))
        for question_id, line in result.question_ids:
            question_places[question_id].append((result.name, line))
    problems += _used_twice("quiz", quiz_places)
    problems += _used_twice("question", question_places)
    if _errors(problems):
        raise ContentError(problems)
    catalog = Catalog(warnings=sorted(problems, key=_order))
    for result in loaded:
        assert result.quiz is not None  # no errors means every file validated
        catalog.quizzes[result.quiz.id] = result.quiz
    return catalog
