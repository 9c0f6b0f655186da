"""`quizbot content import csv FILE`: quiz packs from a spreadsheet (layout: docs/csv-format.md).

One row per question; the quiz's title and tags on the first row of each quiz. The rows
become one pack per quiz, written by the pack writer (pack_writer.py) only when every pack
passes the loader's validation (the same as any pack: schema, platform limits, giveaways as
warnings), and no quiz or question id collides with a pack already in the output folder.
Every problem is reported as `FILE:row: error: column: what`, with rows numbered as a
spreadsheet shows them (the header is row 1), and then nothing is written. A spreadsheet
carries choice questions only (the other kinds are written in YAML, docs/content.md).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from pathlib import Path

from bot.content import limits
from bot.content.files import Unreadable, read_regular
from bot.content.pack_writer import (
    GENERATED,
    TEXTS,
    Imported,
    PackError,
    PackSource,
    QuestionSource,
    RowProblem,
    finish_import,
    option_column,
    write,
)
from bot.content.schema import LOCALES
from bot.content.yaml_lines import Add

__all__ = ["COLUMNS", "MARKER", "CsvImportError", "Imported", "import_csv", "write"]

# a spreadsheet of every bundled pack is about 200 kB; a pack's own limit is 1 MiB
CSV_FILE_BYTES = 8 * 1024 * 1024
MARKER = f"{GENERATED}csv`"  # the first line of every pack a spreadsheet wrote
CsvImportError = PackError

QUIZ_COLUMNS = ("quiz_id", *(f"quiz_title_{loc}" for loc in LOCALES), "tags")

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
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


Get = Callable[[str], str]

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


def _quizzes(header: list[str], rows: list[tuple[int, list[str]]], add: Add) -> list[PackSource]:
    quizzes: dict[str, PackSource] = {}
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
            quiz = quizzes[quiz_id] = PackSource(number, quiz_id, title, tags, language=language)
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


def _question(number: int, get: Get, add: Add) -> QuestionSource | None:
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
    return QuestionSource(number, question_id, texts, options, answer)



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
    source = _UNPRINTABLE.sub("?", path.name)
    return finish_import(quizzes, problems, name, out, force, lambda quiz: (
        f"{MARKER} from {source}.",
        "# Edit the spreadsheet and import it again (a file without this first line is not "
        "replaced)."))
