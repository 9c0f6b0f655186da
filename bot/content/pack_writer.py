"""Quiz packs written from what an importer or chat authoring read (a `PackSource`), and
validated as the loader validates any pack, before anything is written.

Every importer (a spreadsheet, csv_import.py; a question bank, formats/bank.py) and chat
authoring (bot/core/authoring.py) builds `PackSource`s and ends here. The YAML is written by
hand, line by line, so that each line is known to come from one row of the source: a problem
the loader reports at a line of the pack is reported at that row, and its location in the pack
("question 3.option 2.en") is named by the source's column ("option_2_en"). The YAML is
validated as it is, in memory (loader.load_text), its pictures from their bytes: no file is
written until every pack of an import is valid (write()).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.content.loader import load_file, load_text
from bot.content.problems import Problem
from bot.content.schema import Quiz, declared_languages
from bot.content.validate import describe
from bot.content.yaml_lines import Loc

MAX_PROBLEMS = 200
TEXTS = ("prompt", "explanation", "details")
# the text of a picture its source described with none
NO_ALT = {"en": "A picture sent with the question, with no description.",
          "bn": "প্রশ্নের সঙ্গে পাঠানো একটি ছবি, কোনো বর্ণনা নেই।",
          "hi": "सवाल के साथ भेजी गई एक तस्वीर, कोई विवरण नहीं।"}
GENERATED = "# Written by `quizbot content import "  # the first line of every imported pack

# what YAML or the loader would not take raw: escaped in a double-quoted scalar (the loader
# then names an unprintable character in the cell's own words)
_SPECIAL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\\": "\\\\", '"': '\\"'}
_NUMBERISH = re.compile(r"[-+.0-9a-zA-Z_:]+")
_KEYWORDS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}


def option_column(number: int, locale: str) -> str:
    """A spreadsheet's column of an option (the name problems give its place by)."""
    return f"option_{number}_{locale}"


class RowProblem(Problem):
    """A problem whose line is a spreadsheet row, numbered as the spreadsheet shows them."""

    __slots__ = ()

    @property
    def row(self) -> int:
        return self.line


class PackError(Exception):
    """Every problem of an import or a draft (the warnings too), one of them an error."""

    def __init__(self, problems: Sequence[RowProblem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass
class QuestionSource:
    """A question as read, in the pack's terms (docs/content.md); its "row" is where it was
    read (a spreadsheet's row, a bank's line, a draft's number)."""

    row: int
    id: str
    texts: dict[str, dict[str, str]]  # prompt/explanation/details -> locale -> text
    options: list[dict[str, str]]  # locale -> text, in order (order: in the right order)
    answer: int  # 0-based: the right option (choice); -1 for the kinds without one
    image: str | None = None  # a picture beside the pack (authoring: a photo sent with it)
    code: tuple[str, str] | None = None  # (Pygments language, text): a question bank's
    formula: str | None = None  # mathtext
    image_alt: dict[str, str] | None = None  # locale -> what the picture shows
    kind: str = "choice"  # items.Kind's value
    answers: tuple[int, ...] = ()  # multi: every right option
    truth: bool | None = None  # truefalse: whether the statement is true
    # numeric: {"value": v, "tolerance": t} or {"value": v, "min": a, "max": b}
    numeric: dict[str, float] | None = None
    unit: dict[str, str] | None = None  # numeric: locale -> unit
    accept: dict[str, list[str]] | None = None  # text: locale -> accepted forms
    latin: list[str] = field(default_factory=list)  # text: Latin spellings
    pair: str | None = None  # the pack's question a peer round asks alone after the revote


@dataclass
class PackSource:
    """A pack as read, before it is YAML (authoring builds them from Telegram polls)."""

    row: int  # the quiz's first row
    id: str
    title: dict[str, str]
    tags: list[str]
    questions: list[QuestionSource] = field(default_factory=list)
    # the languages the pack declares (schema.QuizModel.language): one, or several with the
    # required one first; None: every locale, English required
    language: str | list[str] | None = None
    # its pictures (a question bank's embedded files): (path relative to the pack, bytes)
    files: list[tuple[str, bytes]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Imported:
    """A validated pack, ready to be written."""

    quiz_id: str
    questions: int
    text: str  # the YAML
    files: tuple[tuple[str, bytes], ...] = ()  # its pictures, written beside it


# --- quizzes to YAML, remembering each line's row ------------------------------------------


def scalar(text: str) -> str:
    """A YAML scalar that reads back as `text` (with the loader's YAML 1.2 core rules)."""
    if _plain(text):
        return text
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif _SPECIAL.match(char):
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _plain(text: str) -> bool:
    return (
        bool(text)
        and text[0].isalnum()
        and text == text.strip()
        and not _SPECIAL.search(text)
        and ": " not in text
        and " #" not in text
        and not text.endswith(":")
        and text.lower() not in _KEYWORDS
        and not (_NUMBERISH.fullmatch(text) and any(c.isdigit() for c in text))
    )


def _block(text: str, indent: str) -> list[str] | None:
    """A literal block (|-) for text of several lines, when it reads back exactly."""
    lines = text.split("\n")
    if len(lines) < 2 or any(
        _SPECIAL.search(line) or line != line.rstrip() for line in lines
    ) or lines[0] != lines[0].lstrip():
        return None
    return ["|-", *(f"{indent}{line}" if line else "" for line in lines)]


@dataclass
class _Pack:
    """YAML lines, each with its row and the locations (and their CSV columns) it holds."""

    quiz: PackSource
    lines: list[str] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    names: dict[int, list[tuple[str, str]]] = field(default_factory=dict)  # row -> (loc, col)

    def add(self, row: int, text: str) -> None:
        self.lines.append(text)
        self.rows.append(row)

    def name(self, row: int, loc: Loc, column: str) -> None:
        self.names.setdefault(row, []).append((describe(loc), column))

    def text_value(self, row: int, key_indent: str, key: str, text: str) -> None:
        block = _block(text, key_indent + "  ")
        if block is None:
            self.add(row, f"{key_indent}{key}: {scalar(text)}")
            return
        self.add(row, f"{key_indent}{key}: {block[0]}")
        for line in block[1:]:
            self.add(row, line)

    def row_of(self, line: int) -> int:
        return self.rows[line - 1] if 1 <= line <= len(self.rows) else self.quiz.row


def _number(value: float) -> str:
    """A number as YAML reads it back (an integral value without its ".0")."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(
        float(value))


def _pack(quiz: PackSource, header: Sequence[str], where: str = "row") -> _Pack:
    pack = _Pack(quiz)
    first = quiz.row
    for line in header:
        pack.add(first, line)
    pack.add(first, f"id: {scalar(quiz.id)}")
    pack.name(first, ("id",), "quiz_id")
    if isinstance(quiz.language, str):
        pack.add(first, f"language: {quiz.language}")
    elif quiz.language:
        pack.add(first, f"language: [{', '.join(quiz.language)}]")
    pack.add(first, "title:")
    pack.name(first, ("title",), "quiz_title")
    for loc, text in quiz.title.items():
        pack.text_value(first, "  ", loc, text)
        pack.name(first, ("title", loc), f"quiz_title_{loc}")
    if quiz.tags:
        pack.add(first, "tags:")
        for i, tag in enumerate(quiz.tags):
            pack.add(first, f"  - {scalar(tag)}")
            pack.name(first, ("tags", i), "tags")
    else:
        pack.add(first, "tags: []")
    pack.name(first, ("tags",), "tags")
    pack.add(first, "questions:")
    pack.name(first, ("questions",), "questions")
    for qi, q in enumerate(quiz.questions):
        base: Loc = ("questions", qi)
        pack.add(q.row, f"  - id: {scalar(q.id)}  # {where} {q.row}")
        pack.name(q.row, base, "question")
        pack.name(q.row, (*base, "id"), "question_id")
        if q.kind != "choice":
            pack.add(q.row, f"    kind: {q.kind}")
            pack.name(q.row, (*base, "kind"), "kind")
        for what in TEXTS:
            if not q.texts[what]:
                continue
            pack.add(q.row, f"    {what}:")
            pack.name(q.row, (*base, what), what)
            for loc, text in q.texts[what].items():
                pack.text_value(q.row, "      ", loc, text)
                pack.name(q.row, (*base, what, loc), f"{what}_{loc}")
            if what == "prompt":
                _key(pack, q, base)
                _media(pack, q, base)
    return pack


def _key(pack: _Pack, q: QuestionSource, base: Loc) -> None:
    """The options, or what a kind without options is answered by."""
    row = q.row
    if q.options or q.kind in ("choice", "multi", "order"):
        right = set(q.answers) if q.kind == "multi" else {q.answer} if q.kind == "choice" \
            else set()
        pack.add(row, "    options:")
        pack.name(row, (*base, "options"), "options")
        for oi, option in enumerate(q.options):
            for i, (loc, text) in enumerate(option.items()):
                pack.text_value(row, "      - " if i == 0 else "        ", loc, text)
                pack.name(row, (*base, "options", oi, loc), option_column(oi + 1, loc))
            if oi in right:
                pack.add(row, "        correct: true")
            pack.name(row, (*base, "options", oi), f"option_{oi + 1}")
    if q.truth is not None:
        pack.add(row, f"    truth: {'true' if q.truth else 'false'}")
        pack.name(row, (*base, "truth"), "truth")
    if q.numeric is not None:
        pack.add(row, "    numeric: {" + ", ".join(
            f"{k}: {_number(v)}" for k, v in q.numeric.items()) + "}")
        pack.name(row, (*base, "numeric"), "numeric")
        for k in q.numeric:  # a spreadsheet's columns are the keys' names
            pack.name(row, (*base, "numeric", k), k)
    if q.unit:
        pack.add(row, "    unit:")
        for loc, text in q.unit.items():
            pack.text_value(row, "      ", loc, text)
            pack.name(row, (*base, "unit", loc), f"unit_{loc}")
        pack.name(row, (*base, "unit"), "unit")
    if q.accept is not None:
        pack.add(row, "    accept:")
        for loc, forms in q.accept.items():
            pack.add(row, f"      {loc}: [{', '.join(scalar(f) for f in forms)}]")
            pack.name(row, (*base, "accept", loc), f"accept_{loc}")
        pack.name(row, (*base, "accept"), "accept")
    if q.latin:
        pack.add(row, f"    latin: [{', '.join(scalar(f) for f in q.latin)}]")
        pack.name(row, (*base, "latin"), "latin")


def _media(pack: _Pack, q: QuestionSource, base: Loc) -> None:
    row = q.row
    if q.code is not None:
        pack.add(row, "    code:")
        pack.add(row, f"      language: {scalar(q.code[0])}")
        pack.text_value(row, "      ", "text", q.code[1])
        pack.name(row, (*base, "code"), "code")
    if q.formula is not None:
        pack.add(row, f"    formula: {scalar(q.formula)}")
        pack.name(row, (*base, "formula"), "formula")
    if q.image is not None:
        pack.add(row, f"    image: {scalar(q.image)}")
        pack.name(row, (*base, "image"), "image")
        # a picture read without a text (a photo sent in a chat, an <img> with no alt) says
        # so, in the pack's languages, rather than nothing to a screen reader
        alt = q.image_alt or {loc: NO_ALT[loc] for loc in q.texts["prompt"]}
        pack.add(row, "    image_alt:")
        for loc, text in alt.items():
            pack.text_value(row, "      ", loc, text)
        pack.name(row, (*base, "image_alt"), "image_alt")
    if q.pair is not None:
        pack.add(row, f"    pair: {scalar(q.pair)}")
        pack.name(row, (*base, "pair"), "pair")


def _in_columns(message: str, names: list[tuple[str, str]]) -> str:
    """The loader's location ("question 2.option 3.en") as the CSV column ("option_3_en")."""
    best = ""
    column = ""
    for described, name in names:
        if (
            len(described) > len(best)
            and message.startswith(described)
            and message[len(described): len(described) + 1] in ("", ":", " ", ".")
        ):
            best, column = described, name
    if not best:
        return message
    rest = message[len(best):]
    # "prompt: prompt has no hi text" says "prompt" once
    return rest[2:] if rest.startswith(f": {column} ") else column + rest


# --- the whole import ------------------------------------------------------------------------


Files = Sequence[tuple[str, bytes]]  # a pack's pictures: (path relative to it, bytes)


def _validated(pack: _Pack, files: Files) -> tuple[Imported | None, list[tuple[int, Problem]]]:
    """The pack's YAML loaded like any pack, its pictures from `files`: the pack if it has
    no error, and each of the loader's problems with the row it comes from."""
    yaml = "\n".join(pack.lines) + "\n"
    loaded, found = load_text(yaml, "pack.yaml", dict(files))
    problems = [(pack.row_of(p.line), p) for p in found]
    if loaded is None:
        return None, problems
    return Imported(loaded.id, len(loaded.questions), yaml, tuple(files)), problems


def check_pack(
    quiz: PackSource, header: Sequence[str], files: Files = ()
) -> tuple[Imported | None, list[tuple[int, Problem]]]:
    """One pack validated as the import validates it (schema, platform limits, giveaways as
    warnings, its `files` as any pack's images): the pack (its YAML opening with the
    `header` comment lines) if it has no error, and each problem with its question's row
    (the quiz's own row for the title and the pack as a whole)."""
    return _validated(_pack(quiz, header), files)


def load_pack(
    text: str, files: Files = (), folder: Path | None = None
) -> tuple[Quiz | None, list[Problem]]:
    """A pack's YAML (one stored in a database) validated like a pack file, its pictures
    from `files`. With `folder`, the pictures are written there (created), which the quiz's
    images are read from as long as it is used."""
    quiz, problems = load_text(text, "pack.yaml", dict(files))
    if quiz is None or folder is None:
        return quiz, problems
    folder.mkdir(parents=True, exist_ok=True)
    write_files(folder, files)
    return quiz.model_copy(update={"folder": str(folder)}), problems


def write_files(folder: Path, files: Files) -> None:
    """Each file at its path inside `folder` (a path leading outside is refused)."""
    from bot.content.media import resolve

    for relative, data in files:
        path = resolve(folder, relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _existing(out: Path, replacing: set[str]) -> Iterable[tuple[Path, str, list[str]]]:
    """(file, quiz id, question ids) of the valid packs in `out` that are not replaced."""
    if not out.is_dir():
        return
    for path in sorted(out.iterdir()):
        if path.suffix not in (".yaml", ".yml") or path.name.startswith(".") or (
            path.name in replacing
        ):
            continue
        quiz, _ = load_file(path)
        if quiz is not None:
            yield path, quiz.id, [q.id for q in quiz.questions]


def _generated(path: Path) -> bool:
    """Whether an import (of a spreadsheet or a question bank) wrote the file."""
    try:
        with path.open("rb") as f:
            return f.read(len(GENERATED)).decode("utf-8", "replace") == GENERATED
    except OSError:
        return False


def finish_import(
    quizzes: Sequence[PackSource], problems: list[RowProblem], name: str, out: Path, force: bool,
    header: Callable[[PackSource], Sequence[str]], where: str = "row",
) -> tuple[list[Imported], list[RowProblem]]:
    """Validate the packs an import read (every CSV or question-bank import ends here) and
    check their ids against the packs already in `out`: the packs and the warnings, or
    PackError with every problem (the ones the reading found first, in `problems`).
    `name`: the file as problems name it; `header`: a pack's first lines (GENERATED first);
    `where`: what a question's number in the file is (a spreadsheet's row, a bank's line)."""

    def add(row: int, message: str, warning: bool = False) -> None:
        problems.append(RowProblem(name, row, message, warning))

    imported: list[Imported] = []
    for quiz in quizzes:
        required = declared_languages(quiz.language)[:1] or ("en",)
        if not quiz.questions or required[0] not in quiz.title:
            if not quiz.questions and not any(p.row == quiz.row for p in problems):
                add(quiz.row, f"quiz {quiz.id!r} has no valid question")
            continue
        pack = _pack(quiz, header(quiz), where)
        loaded, found = _validated(pack, quiz.files)
        for row, p in found:
            message = _in_columns(p.message, pack.names.get(row, []))
            if row == quiz.row and p.line <= pack.lines.index("questions:") + 1:
                message = f"quiz {quiz.id!r}: {message}"
            add(row, message, p.warning)
        if loaded is not None:
            imported.append(loaded)

    # ids must stay unique across the folder the packs go to
    files = {f"{q.quiz_id}.yaml" for q in imported}
    quiz_rows = {q.id: q.row for q in quizzes}
    question_rows = {qq.id: qq.row for q in quizzes for qq in q.questions}
    for file, quiz_id, question_ids in _existing(out, files):
        if quiz_id in quiz_rows:
            add(quiz_rows[quiz_id], f"quiz_id {quiz_id!r} is already the id of {file}")
        for question_id in question_ids:
            if question_id in question_rows:
                add(question_rows[question_id],
                    f"question_id {question_id!r} is already used in {file}")
    for q in imported:
        target = out / f"{q.quiz_id}.yaml"
        if target.exists() and not force and not _generated(target):
            add(quiz_rows[q.quiz_id], f"{target} exists and was not written by this import; "
                "use --force to replace it")

    problems.sort(key=lambda p: (p.row, p.warning))
    if len(problems) > MAX_PROBLEMS:
        rest = len(problems) - MAX_PROBLEMS
        problems = [*problems[:MAX_PROBLEMS],
                    RowProblem(name, problems[MAX_PROBLEMS].row, f"… and {rest} more problems")]
    if any(not p.warning for p in problems):
        raise PackError(problems)
    return imported, problems


def write(imported: Iterable[Imported], out: Path) -> list[Path]:
    """Write each pack as OUT/<quiz id>.yaml, each file replaced whole (never half written),
    its pictures first, where it names them."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for pack in imported:
        write_files(out, pack.files)
        target = out / f"{pack.quiz_id}.yaml"
        fd, tmp = tempfile.mkstemp(prefix=f".{pack.quiz_id}.", suffix=".tmp", dir=out)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(pack.text)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        written.append(target)
    return written
