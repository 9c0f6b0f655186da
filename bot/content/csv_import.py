"""`quizbot content import csv FILE`: quiz packs from a spreadsheet (layout: docs/csv-format.md).

One row per question; the quiz's title and tags on the first row of each quiz. The rows
become one pack per quiz, written by the pack writer (pack_writer.py) only when every pack
passes the loader's validation (the same as any pack: schema, platform limits, giveaways as
warnings), and no quiz or question id collides with a pack already in the output folder.
Every problem is reported as `FILE:row: error: column: what`, with rows numbered as a
spreadsheet shows them (the header is row 1), and then nothing is written. A `kind` column
makes a row one of the other kinds (items.Kind), each read from the columns it needs
(`truth`; `value`, `tolerance` or `min` and `max`, `unit_*`; `accept_*` and `latin`; several
letters in `correct`; the options in the right order); a cell another kind's is refused.
"""

from __future__ import annotations

import csv
import io
import math
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

from bot.content import limits
from bot.content.files import Unreadable, read_regular
from bot.content.items import Kind
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
from bot.content.schema import LOCALES, OPTION_COUNTS
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
    # the kinds other than choice (docs/csv-format.md, Kinds of question)
    "kind", "truth", "value", "tolerance", "min", "max",
    *(f"{what}_{loc}" for what in ("unit", "accept") for loc in LOCALES),
    "latin",
    "pair",  # the question a peer round asks alone after its revote (docs/content.md)
)
REQUIRED = (
    "quiz_id", "quiz_title_en", "question_id", "prompt_en", "option_1_en", "option_2_en",
    "correct", "explanation_en",
)
# a sheet with a `kind` column may have kinds without options or a `correct`
KIND_REQUIRED = tuple(c for c in REQUIRED if c not in ("option_1_en", "option_2_en", "correct"))
# the columns only some kinds take, and the kinds that take them
_KIND_COLUMNS: dict[str, tuple[Kind, ...]] = {
    "correct": (Kind.CHOICE, Kind.MULTI),
    "truth": (Kind.TRUEFALSE,),
    **dict.fromkeys(("value", "tolerance", "min", "max", *(f"unit_{loc}" for loc in LOCALES)),
                    (Kind.NUMERIC,)),
    **dict.fromkeys(("latin", *(f"accept_{loc}" for loc in LOCALES)), (Kind.TEXT,)),
}
_KINDS = ", ".join(k.value for k in Kind)
# a cell listing several values: right options ("A;C"), accepted answers, Latin spellings
_LIST_SPLIT = re.compile(r"\s*;\s*")
_TRUTH = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
# a number as a spreadsheet cell holds it: a dot for the decimal mark, no thousands separator
_NUMBER = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,3})?")
# a column without a language is the English one: `prompt` is `prompt_en`
_ALIASES = {
    "quiz_title": "quiz_title_en", "prompt": "prompt_en", "explanation": "explanation_en",
    "details": "details_en", "unit": "unit_en", "accept": "accept_en",
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
    for name in KIND_REQUIRED if "kind" in seen else REQUIRED:
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


def _parse_several(value: str, options: int) -> tuple[int, ...] | None:
    """The 0-based right options of a multi question from `A;C` (or `1;3`, or `A, C`),
    None if one is not an option or one is named twice."""
    parts = [p for p in re.split(r"[;,\s]+", value) if p]
    answers = [_parse_correct(p, options) for p in parts]
    if not parts or None in answers or len(set(answers)) < len(answers):
        return None
    return tuple(sorted(a for a in answers if a is not None))


def _parse_number(value: str) -> float | None:
    """A number cell (Bengali and Devanagari digits read as 0-9), None if it is not one."""
    digits = "".join(
        str(d) if (d := unicodedata.decimal(c, None)) is not None else c for c in value)
    if _NUMBER.fullmatch(digits) is None:
        return None
    number = float(digits)
    return number if math.isfinite(number) else None


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
    written = get("kind")
    kind = next((k for k in Kind if k.value == written.lower()), None) if written \
        else Kind.CHOICE
    if kind is None:
        problem(f"kind is {written!r}: one of {_KINDS} (empty: choice)")
        return None
    texts = {
        what: {loc: t for loc in LOCALES if (t := get(f"{what}_{loc}"))} for what in TEXTS
    }
    for what in ("prompt", "explanation"):
        if "en" not in texts[what]:
            problem(f"{what}_en is empty: every question needs an English {what}")
    for column, kinds in _KIND_COLUMNS.items():
        if get(column) and kind not in kinds and (column, kind) != ("correct", Kind.ORDER):
            problem(f"{column} is not empty: {_a(kind)} question has none (it is for "
                    f"{' and '.join(k.value for k in kinds)} questions)")
    options = _options(kind, get, problem)
    question = QuestionSource(number, question_id, texts, options, -1, kind=kind.value)
    _key(kind, question, get, problem)
    question.pair = get("pair") or None  # checked by the pack's validation, at its cell
    return None if problems else question


def _a(kind: Kind) -> str:
    """The kind with its article: "a multi", "an order"."""
    return f"{'an' if kind.value[0] in 'aeiou' else 'a'} {kind.value}"


def _options(kind: Kind, get: Get, problem: Callable[[str], None]) -> list[dict[str, str]]:
    """The options, numbered from 1 without gaps, as many as the kind takes."""
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
    if kind not in OPTION_COUNTS:
        if options:
            problem(f"option_1 is not empty: {_a(kind)} question has no options (see "
                    "docs/csv-format.md)")
        return options
    low, high = OPTION_COUNTS[kind]
    if len(options) < low:
        problem(f"{len(options)} option(s); {_a(kind)} question needs at least {low} "
                "(option_1_en, option_2_en, …)")
    elif len(options) > high:
        problem(f"{len(options)} options; {_a(kind)} question has at most {high}")
    return options


def _key(kind: Kind, q: QuestionSource, get: Get, problem: Callable[[str], None]) -> None:
    """What the question is answered by, from the columns its kind takes (into `q`)."""
    correct = get("correct")
    shown = f"{correct!r}" if correct else "empty"
    count = max(len(q.options), limits.MIN_OPTIONS)
    if kind is Kind.CHOICE:
        answer = _parse_correct(correct, len(q.options))
        if answer is None:
            problem(f"correct is {shown}: give the number of the right option, 1 to {count}")
        q.answer = -1 if answer is None else answer
    elif kind is Kind.MULTI:
        answers = _parse_several(correct, len(q.options))
        if answers is None or len(answers) < 2:
            problem(f"correct is {shown}: give every right option, at least two, by number "
                    f"or letter separated by ';' (1;3 or A;C), 1 to {count}")
        elif len(answers) == len(q.options):
            problem(f"correct is {shown}: every option is right; a multi question needs at "
                    "least one wrong option")
        else:
            q.answers, q.answer = answers, answers[0]
    elif kind is Kind.ORDER and correct:
        problem("correct is not empty: an order question has no right option; list its "
                "options in the right order")
    elif kind is Kind.TRUEFALSE:
        truth = _TRUTH.get(get("truth").lower())
        if truth is None:
            problem(f"truth is {get('truth')!r}: true if the statement is true, false if "
                    "not" if get("truth") else "truth is empty: a truefalse question needs "
                    "it (true or false)")
        q.truth = truth
    elif kind is Kind.NUMERIC:
        _numeric(q, get, problem)
    elif kind is Kind.TEXT:
        q.accept = {loc: forms for loc in LOCALES
                    if (forms := [f for f in _LIST_SPLIT.split(get(f"accept_{loc}")) if f])}
        if "en" not in q.accept:
            problem("accept_en is empty: a text question needs its accepted answers, "
                    "separated by ';'")
        q.latin = [f for f in _LIST_SPLIT.split(get("latin")) if f]


def _numeric(q: QuestionSource, get: Get, problem: Callable[[str], None]) -> None:
    numbers: dict[str, float] = {}
    for column in ("value", "tolerance", "min", "max"):
        if not (cell := get(column)):
            continue
        value = _parse_number(cell)
        if value is None:
            problem(f"{column} is {cell!r}: write a number with a dot for the decimal mark and "
                    "no thousands separator (0.4, 4096, 1e9)")
        else:
            numbers[column] = value
    if "value" not in numbers:
        if not get("value"):
            problem("value is empty: a numeric question needs its right number")
        return
    value = numbers["value"]
    ranged = [c for c in ("min", "max") if get(c)]
    if get("tolerance") and ranged:
        problem("tolerance and min/max are both given: give one of the two")
    elif "tolerance" in numbers:
        if numbers["tolerance"] < 0:
            problem(f"tolerance is {get('tolerance')!r}: it cannot be negative")
        else:
            q.numeric = {"value": value, "tolerance": numbers["tolerance"]}
    elif not get("tolerance") and not ranged:
        problem("tolerance is empty: give a tolerance (0 for the exact value), or min and max")
    elif len(ranged) == 1:
        problem(f"{'max' if ranged == ['min'] else 'min'} is empty: give both min and max")
    elif "min" in numbers and "max" in numbers:
        if not numbers["min"] <= value <= numbers["max"]:
            problem(f"value is {get('value')!r}: it must lie between min ({get('min')}) and max "
                    f"({get('max')})")
        else:
            q.numeric = {"value": value, "min": numbers["min"], "max": numbers["max"]}
    q.unit = {loc: unit for loc in LOCALES if (unit := get(f"unit_{loc}"))} or None


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
