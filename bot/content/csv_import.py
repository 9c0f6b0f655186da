"""`quizbot content import csv FILE`: quiz packs from a spreadsheet (layout: docs/csv-format.md).

One row per question; the quiz's title and tags on the first row of each quiz. The rows
become one YAML pack per quiz, written only when every pack passes the loader's validation
(the same as any pack: schema, platform limits, giveaways as warnings), and no quiz or
question id collides with a pack already in the output folder. Every problem is reported as
`FILE:row: error: column: what`, with rows numbered as a spreadsheet shows them (the header
is row 1), and then nothing is written.

The YAML is written by hand here, line by line, so that each line is known to come from one
row: a problem the loader reports at a line of the pack is reported at that row, and its
location in the pack ("question 3.option 2.en") is named by the CSV column ("option_2_en").
"""

from __future__ import annotations

import csv
import io
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.content import limits
from bot.content.files import Unreadable, read_regular
from bot.content.loader import load_file
from bot.content.problems import Problem
from bot.content.schema import LOCALES, Quiz, declared_languages
from bot.content.validate import describe
from bot.content.yaml_lines import Add, Loc

# a spreadsheet of every bundled pack is about 200 kB; a pack's own limit is 1 MiB
CSV_FILE_BYTES = 8 * 1024 * 1024
MAX_PROBLEMS = 200
GENERATED = "# Written by `quizbot content import "  # the first line of every imported pack
MARKER = f"{GENERATED}csv`"

QUIZ_COLUMNS = ("quiz_id", *(f"quiz_title_{loc}" for loc in LOCALES), "tags")
TEXTS = ("prompt", "explanation", "details")


def option_column(number: int, locale: str) -> str:
    return f"option_{number}_{locale}"


COLUMNS = (
    *QUIZ_COLUMNS,
    "question_id",
    *(f"prompt_{loc}" for loc in LOCALES),
    *(option_column(n, loc) for n in range(1, limits.MAX_OPTIONS + 1) for loc in LOCALES),
    "correct",
    *(f"{what}_{loc}" for what in ("explanation", "details") for loc in LOCALES),
)
REQUIRED = (
    "quiz_id", "quiz_title_en", "question_id", "prompt_en", "option_1_en", "option_2_en",
    "correct", "explanation_en",
)
# a column without a language is the English one: `prompt` is `prompt_en`
_ALIASES = {
    "quiz_title": "quiz_title_en", "prompt": "prompt_en", "explanation": "explanation_en",
    "details": "details_en",
    **{f"option_{n}": option_column(n, "en") for n in range(1, limits.MAX_OPTIONS + 1)},
}
_DELIMITERS = (",", ";", "\t")
_TAG_SPLIT = re.compile(r"[,;\s]+")
_CORRECT = re.compile(r"(\d+)(?:\.0*)?|([A-Ja-j])")

# what YAML or the loader would not take raw: escaped in a double-quoted scalar (the loader
# then names an unprintable character in the cell's own words)
_SPECIAL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\\": "\\\\", '"': '\\"'}
_NUMBERISH = re.compile(r"[-+.0-9a-zA-Z_:]+")
_KEYWORDS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}

Get = Callable[[str], str]


class RowProblem(Problem):
    """A problem whose line is a spreadsheet row, numbered as the spreadsheet shows them."""

    __slots__ = ()

    @property
    def row(self) -> int:
        return self.line


class CsvImportError(Exception):
    def __init__(self, problems: Sequence[RowProblem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass
class _Question:
    row: int
    id: str
    texts: dict[str, dict[str, str]]  # prompt/explanation/details -> locale -> text
    options: list[dict[str, str]]  # locale -> text, in order
    answer: int  # 0-based
    image: str | None = None  # a picture beside the pack (authoring: a photo sent with it)
    code: tuple[str, str] | None = None  # (Pygments language, text): a question bank's
    formula: str | None = None  # mathtext


@dataclass
class _Quiz:
    row: int  # the quiz's first row
    id: str
    title: dict[str, str]
    tags: list[str]
    questions: list[_Question] = field(default_factory=list)
    # the languages the pack declares (schema.QuizModel.language): one, or several with the
    # required one first; None: every locale, English required
    language: str | list[str] | None = None
    # its pictures (a question bank's embedded files): (path relative to the pack, bytes)
    files: list[tuple[str, bytes]] = field(default_factory=list)


# What a pack is made of before it is YAML; authoring (bot/core/authoring.py) builds them from
# Telegram polls, a question's "row" being its number in the draft.
PackSource = _Quiz
QuestionSource = _Question


@dataclass(frozen=True, slots=True)
class Imported:
    """A validated pack, ready to be written."""

    quiz_id: str
    questions: int
    text: str  # the YAML
    files: tuple[tuple[str, bytes], ...] = ()  # its pictures, written beside it


# --- reading the spreadsheet -----------------------------------------------------------------


def _read_text(path: Path, add: Add) -> str | None:
    try:
        data = read_regular(path, CSV_FILE_BYTES, what="a spreadsheet", too_big=(
            f"the file is larger than {CSV_FILE_BYTES // 2**20} MiB; split it"))
    except Unreadable as exc:
        add(1, str(exc))
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        add(line, f"not valid UTF-8 (byte 0x{data[exc.start]:02X} on line {line}); save the "
            "spreadsheet as 'CSV UTF-8' (Excel) or 'Comma-separated values' (Google Sheets, "
            "LibreOffice: character set Unicode UTF-8)")
        return None
    return text.removeprefix("\ufeff")


def _delimiter(text: str) -> str:
    """Comma, or semicolon (Excel where the decimal mark is a comma), or tab: whichever
    the header line has most of."""
    header = text.split("\n", 1)[0]
    counts = {d: header.count(d) for d in _DELIMITERS}
    best = max(_DELIMITERS, key=lambda d: counts[d])
    return best if counts[best] else ","


def _column(name: str) -> str:
    key = re.sub(r"[\s-]+", "_", name.strip().lower())
    return _ALIASES.get(key, key)


def _cell(value: str) -> str:
    return value.replace("\r\n", "\n").replace("\r", "\n").strip()


def _rows(text: str, add: Add) -> tuple[list[str], list[tuple[int, list[str]]]] | None:
    """The header's canonical column names and the data rows (row number, cells)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(text), strict=True)
    records: list[list[str]] = []
    try:
        records.extend(reader)
    except csv.Error as exc:
        add(len(records) + 1, f"not a well-formed CSV row ({exc}); check the quotes")
        return None
    if not records or not any(c.strip() for c in records[0]):
        add(1, "the first row must name the columns (see docs/csv-format.md)")
        return None
    header = [_column(c) for c in records[0]]
    seen: dict[str, int] = {}
    bad = False
    for i, name in enumerate(header):
        if not name:
            if any(i < len(r) and r[i].strip() for r in records[1:]):
                add(1, f"column {i + 1} has no name but holds values")
                bad = True
            continue
        if name not in COLUMNS:
            add(1, f"unknown column {name!r} (check the spelling; docs/csv-format.md lists "
                "the columns)")
            bad = True
        elif name in seen:
            add(1, f"column {name!r} appears twice (columns {seen[name] + 1} and {i + 1})")
            bad = True
        seen.setdefault(name, i)
    for name in REQUIRED:
        if name not in seen:
            add(1, f"the column {name!r} is missing")
            bad = True
    if bad:
        return None
    rows = []
    for number, record in enumerate(records[1:], start=2):
        if not any(c.strip() for c in record):
            continue  # an empty row: spreadsheets export them
        if len(record) > len(header) and any(c.strip() for c in record[len(header):]):
            add(number, f"the row has {len(record)} cells but the header names "
                f"{len(header)} columns")
            continue
        cells = record[: len(header)]
        rows.append((number, [*cells, *[""] * (len(header) - len(cells))]))
    if not rows and all(not any(c.strip() for c in r) for r in records[1:]):
        # only the header: nothing to write is an error, as docs/csv-format.md says
        add(2, "no question rows below the header; nothing to import")
        return None
    return header, rows


# --- rows to quizzes -----------------------------------------------------------------------


def _parse_correct(value: str, options: int) -> int | None:
    """The 0-based answer from `2` (or `B`), None if it is not one of the options."""
    match = _CORRECT.fullmatch(value)
    if match is None:
        return None
    number = int(match[1]) if match[1] else ord(match[2].upper()) - ord("A") + 1
    return number - 1 if 1 <= number <= options else None


def _quizzes(header: list[str], rows: list[tuple[int, list[str]]], add: Add) -> list[_Quiz]:
    quizzes: dict[str, _Quiz] = {}
    question_rows: dict[str, int] = {}
    # the sheet's language columns declare its packs' languages: a sheet without Bengali
    # columns is not warned about Bengali (English, required here, comes first)
    sheet = [loc for loc in LOCALES if any(n.endswith(f"_{loc}") for n in header if n)]
    declared = ["en", *(loc for loc in sheet if loc != "en")]
    language = None if len(declared) == len(LOCALES) else \
        declared[0] if len(declared) == 1 else declared
    previous_quiz = ""
    for number, cells in rows:
        row = {name: _cell(value) for name, value in zip(header, cells, strict=True) if name}

        def get(name: str, row: dict[str, str] = row) -> str:
            return row.get(name, "")

        quiz_id = get("quiz_id") or previous_quiz
        if not quiz_id:
            add(number, "quiz_id is empty (the first question needs its quiz's id; below it "
                "an empty quiz_id means the quiz of the row above)")
            continue
        previous_quiz = quiz_id
        title = {loc: t for loc in LOCALES if (t := get(f"quiz_title_{loc}"))}
        tags = [t for t in _TAG_SPLIT.split(get("tags")) if t]
        quiz = quizzes.get(quiz_id)
        if quiz is None:
            quiz = quizzes[quiz_id] = _Quiz(number, quiz_id, title, tags, language=language)
            if "en" not in title:
                add(number, f"quiz_title_en is empty: the first row of quiz {quiz_id!r} "
                    "gives its English title")
        else:
            for loc in LOCALES:
                value = title.get(loc)
                if value is not None and value != quiz.title.get(loc):
                    add(number, f"quiz_title_{loc} differs from row {quiz.row}, the first row "
                        f"of quiz {quiz_id!r}; leave it empty on the quiz's other rows")
            if tags and tags != quiz.tags:
                add(number, f"tags differ from row {quiz.row}, the first row of quiz "
                    f"{quiz_id!r}; leave them empty on the quiz's other rows")
        question_id = get("question_id")
        if question_id in question_rows:
            add(number, f"question_id {question_id!r} is already used in row "
                f"{question_rows[question_id]}; every question needs its own id")
        elif question_id:
            question_rows[question_id] = number
        question = _question(number, get, add)
        if question is not None and question_rows.get(question_id) == number:
            quiz.questions.append(question)
    return list(quizzes.values())


def _question(number: int, get: Get, add: Add) -> _Question | None:
    problems = 0

    def problem(message: str) -> None:
        nonlocal problems
        problems += 1
        add(number, message)

    question_id = get("question_id")
    if not question_id:
        problem("question_id is empty")
    texts = {
        what: {loc: t for loc in LOCALES if (t := get(f"{what}_{loc}"))} for what in TEXTS
    }
    for what in ("prompt", "explanation"):
        if "en" not in texts[what]:
            problem(f"{what}_en is empty: every question needs an English {what}")
    options: list[dict[str, str]] = []
    gap = 0
    for n in range(1, limits.MAX_OPTIONS + 1):
        texts_n = {loc: t for loc in LOCALES if (t := get(option_column(n, loc)))}
        if not texts_n:
            gap = gap or n
            continue
        if gap:
            problem(f"option_{gap}_en is empty but option_{n} is not; number the options "
                    "from 1 without gaps")
            gap = 0
        elif "en" not in texts_n:
            problem(f"option_{n}_en is empty: every option needs its English text")
        options.append(texts_n)
    if len(options) < limits.MIN_OPTIONS:
        problem(f"{len(options)} option(s); a question needs at least {limits.MIN_OPTIONS} "
                "(option_1_en, option_2_en, …)")
    correct = get("correct")
    answer = _parse_correct(correct, len(options))
    if answer is None:
        shown = f"{correct!r}" if correct else "empty"
        problem(f"correct is {shown}: give the number of the right option, 1 to "
                f"{max(len(options), limits.MIN_OPTIONS)}")
    if problems or answer is None:
        return None
    return _Question(number, question_id, texts, options, answer)


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

    quiz: _Quiz
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


def _pack(quiz: _Quiz, source: str, header: Sequence[str] = (), where: str = "row") -> _Pack:
    pack = _Pack(quiz)
    first = quiz.row
    for line in header or (
        f"{MARKER} from {source}.",
        "# Edit the spreadsheet and import it again (a file without this first line is not "
        "replaced).",
    ):
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
        for what in TEXTS:
            if not q.texts[what]:
                continue
            pack.add(q.row, f"    {what}:")
            pack.name(q.row, (*base, what), what)
            for loc, text in q.texts[what].items():
                pack.text_value(q.row, "      ", loc, text)
                pack.name(q.row, (*base, what, loc), f"{what}_{loc}")
            if what == "prompt":
                pack.add(q.row, "    options:")
                pack.name(q.row, (*base, "options"), "options")
                for oi, option in enumerate(q.options):
                    for i, (loc, text) in enumerate(option.items()):
                        pack.text_value(q.row, "      - " if i == 0 else "        ", loc, text)
                        pack.name(q.row, (*base, "options", oi, loc),
                                  option_column(oi + 1, loc))
                    if oi == q.answer:
                        pack.add(q.row, "        correct: true")
                    pack.name(q.row, (*base, "options", oi), f"option_{oi + 1}")
                if q.code is not None:
                    pack.add(q.row, "    code:")
                    pack.add(q.row, f"      language: {scalar(q.code[0])}")
                    pack.text_value(q.row, "      ", "text", q.code[1])
                    pack.name(q.row, (*base, "code"), "code")
                if q.formula is not None:
                    pack.add(q.row, f"    formula: {scalar(q.formula)}")
                    pack.name(q.row, (*base, "formula"), "formula")
                if q.image is not None:
                    pack.add(q.row, f"    image: {scalar(q.image)}")
                    pack.name(q.row, (*base, "image"), "image")
    return pack


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


def _validated(pack: _Pack, file: Path) -> tuple[Imported | None, list[tuple[int, Problem]]]:
    """The pack written to `file` (its files beside it) and loaded like any pack: the pack if
    it has no error, and each of the loader's problems with the row it comes from."""
    yaml = "\n".join(pack.lines) + "\n"
    write_files(file.parent, pack.quiz.files)
    file.write_text(yaml, encoding="utf-8")
    loaded, found = load_file(file)
    problems = [(pack.row_of(p.line), p) for p in found]
    if loaded is None:
        return None, problems
    return Imported(loaded.id, len(loaded.questions), yaml, tuple(pack.quiz.files)), problems


Files = Sequence[tuple[str, bytes]]  # a pack's pictures: (path relative to it, bytes)


def check_pack(
    quiz: PackSource, header: Sequence[str], files: Files = ()
) -> tuple[Imported | None, list[tuple[int, Problem]]]:
    """One pack validated as the import validates it (schema, platform limits, giveaways as
    warnings, its `files` as any pack's images): the pack (its YAML opening with the
    `header` comment lines) if it has no error, and each problem with its question's row
    (the quiz's own row for the title and the pack as a whole)."""
    with tempfile.TemporaryDirectory(prefix="quizbot-pack-") as tmp:
        write_files(Path(tmp), files)
        return _validated(_pack(quiz, "", header), Path(tmp) / "pack.yaml")


def load_pack(
    text: str, files: Files = (), folder: Path | None = None
) -> tuple[Quiz | None, list[Problem]]:
    """A pack's YAML (one stored in a database) loaded like a pack file. With `files`, they
    and the pack are written to `folder` (created), which the quiz's images are read from
    as long as it is used."""
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="quizbot-pack-") as tmp:
            return load_pack(text, files, Path(tmp))
    folder.mkdir(parents=True, exist_ok=True)
    write_files(folder, files)
    file = folder / "pack.yaml"
    file.write_text(text, encoding="utf-8")
    return load_file(file)


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


def import_csv(
    path: Path, out: Path, force: bool = False
) -> tuple[list[Imported], list[RowProblem]]:
    """The packs a CSV file makes and its warnings; CsvImportError with every problem (and the
    warnings) if any is an error. Nothing is written here: see write()."""
    problems: list[RowProblem] = []
    name = str(path)

    def add(row: int, message: str, warning: bool = False) -> None:
        problems.append(RowProblem(name, row, message, warning))

    text = _read_text(path, add)
    parsed = None if text is None else _rows(text, add)
    quizzes = [] if parsed is None else _quizzes(*parsed, add)
    return finish_import(quizzes, problems, name, out, force, _SPECIAL.sub("?", path.name))


def finish_import(
    quizzes: Sequence[_Quiz], problems: list[RowProblem], name: str, out: Path, force: bool,
    source: str, header: Callable[[_Quiz], Sequence[str]] | None = None, where: str = "row",
) -> tuple[list[Imported], list[RowProblem]]:
    """Validate the packs an import read (every CSV or question-bank import ends here) and
    check their ids against the packs already in `out`: the packs and the warnings, or
    CsvImportError with every problem (the ones the reading found first, in `problems`).
    `name`: the file as problems name it; `source`: as the packs' first line names it;
    `where`: what a question's number in the file is (a spreadsheet's row, a bank's line)."""

    def add(row: int, message: str, warning: bool = False) -> None:
        problems.append(RowProblem(name, row, message, warning))

    imported: list[Imported] = []
    with tempfile.TemporaryDirectory(prefix="quizbot-import-") as tmp:
        for n, quiz in enumerate(quizzes):
            folder = Path(tmp) / f"pack-{n}"  # each pack's pictures apart
            folder.mkdir()
            required = declared_languages(quiz.language)[:1] or ("en",)
            if not quiz.questions or required[0] not in quiz.title:
                if not quiz.questions and not any(p.row == quiz.row for p in problems):
                    add(quiz.row, f"quiz {quiz.id!r} has no valid question")
                continue
            pack = _pack(quiz, source, header(quiz) if header else (), where)
            loaded, found = _validated(pack, folder / "pack.yaml")
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
        raise CsvImportError(problems)
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
