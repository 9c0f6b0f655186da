"""`quizbot content import csv` (bot/content/csv_import.py, docs/csv-format.md): packs from a
spreadsheet round-trip through `content export`; every problem at its row; nothing half done."""

from __future__ import annotations

import csv
import io
import json
import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.cli import main
from bot.content import load_catalog
from bot.content.csv_import import MARKER, CsvImportError, import_csv
from bot.content.items import Kind, Question, Quiz
from bot.content.loader import load_file
from bot.content.schema import LOCALES

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "content"

Row = dict[str, str]


@pytest.fixture(autouse=True)
def no_settings_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """main() reads settings: no developer's .env or QUIZBOT_* variables."""
    for name in list(os.environ):
        if name.startswith(("QUIZBOT_", "TELEGRAM_", "DISCORD_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QUIZBOT_CONTENT_DIR", str(tmp_path / "content"))


def sheet(rows: list[Row], delimiter: str = ",", columns: list[str] | None = None) -> str:
    """A CSV as a spreadsheet writes it: every row has every column."""
    columns = columns or list(dict.fromkeys(k for row in rows for k in row))
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\r\n")
    writer.writerow(columns)
    writer.writerows([row.get(c, "") for c in columns] for row in rows)
    return out.getvalue()


def write_csv(tmp_path: Path, text: str, name: str = "questions.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def texts(row: Row, prefix: str) -> dict[str, str]:
    return {
        loc: norm for loc in LOCALES
        if (norm := row.get(f"{prefix}_{loc}", "").replace("\r\n", "\n").strip())
    }


def what_the_sheet_says(rows: list[Row]) -> list[dict[str, Any]]:
    """The export the layout promises for these rows (docs/csv-format.md), worked out
    independently of the importer: quizzes in file-name (= id) order."""
    quizzes: dict[str, dict[str, Any]] = {}
    quiz_id = ""
    for row in rows:
        quiz_id = row.get("quiz_id") or quiz_id
        quiz = quizzes.setdefault(quiz_id, {
            "id": quiz_id,
            "title": texts(row, "quiz_title"),
            "tags": re.split(r"[,\s]+", row.get("tags", "").strip()) if row.get("tags") else [],
            "questions": [],
        })
        options = [o for n in range(1, 11) if (o := texts(row, f"option_{n}"))]
        details = texts(row, "details")
        quiz["questions"].append({
            "id": row["question_id"],
            "prompt": texts(row, "prompt"),
            "options": options,
            "answer": int(row["correct"]) - 1,
            "explanation": texts(row, "explanation"),
            **({"details": details} if details else {}),
        })
    return [quizzes[k] for k in sorted(quizzes)]


def export(path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    assert main(["content", "export", "--format", "json", str(path)]) == 0
    exported: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
    return exported


def import_cli(
    capsys: pytest.CaptureFixture[str], path: Path, *args: str
) -> tuple[int, str, str]:
    code = main(["content", "import", "csv", str(path), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def full_row(quiz: str, qid: str, answer: int = 2, **extra: str) -> Row:
    row = {
        "quiz_id": quiz, "quiz_title_en": "Demo Quiz", "quiz_title_bn": "ডেমো কুইজ",
        "quiz_title_hi": "डेमो क्विज़", "tags": "demo, basics", "question_id": qid,
        "prompt_en": f"What is {qid}?", "prompt_bn": f"{qid} কী?", "prompt_hi": f"{qid} क्या है?",
        "correct": str(answer),
        "explanation_en": "Because it is.", "explanation_bn": "কারণ তাই।",
        "explanation_hi": "क्योंकि ऐसा है।",
    }
    for n, word in enumerate(("alpha", "bravo", "charlie", "delta"), 1):
        for loc, tag in zip(LOCALES, ("", " (bn)", " (hi)"), strict=True):
            row[f"option_{n}_{loc}"] = f"{word}{tag}"
    return {**row, **extra}


# --- round trips -------------------------------------------------------------------------------

TRICKY = [
    'Say "hi": now', "# not a comment", "- dash first", "true", "32", "1e3", "0x1F", "null",
    "~", "key: value", "ends with colon:", "a #hash", "tab\tinside", "[bracket]", "{brace}",
    "&anchor", "*alias", "!tag", "%percent", "@at", "`tick", "|pipe", ">gt", "'single'",
    "?q", "র‍্যাম (ZWJ)", "हिंदी", "emoji 🧠", "back\\slash", ",comma first", "x\u00a0y",
    "  spaced out  ", "yes", "No", "1_000", "+1", ".5", "2026-03-01", "12:30", "on",
]


def test_round_trip_every_column_and_awkward_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        full_row("demo", "demo-one", details_en="Line one\nline two: colon\n\nafter a blank",
                 details_bn="এক\nদুই", details_hi="एक\r\nदो"),
        {**full_row("", "demo-two", answer=4), "quiz_title_en": "", "quiz_title_bn": "",
         "quiz_title_hi": "", "tags": ""},
        full_row("other", "other-one", answer=1, tags="x"),
    ]
    for i, text in enumerate(TRICKY):  # every awkward text as a prompt, an option, details
        other = TRICKY[(i + 1) % len(TRICKY)]
        rows.append({**full_row("tricky", f"t-{i}", answer=1 + i % 4), "prompt_en": text,
                     "option_3_en": text, "option_4_en": other, "details_en": text,
                     "tags": "edge" if i == 0 else ""})
    path = write_csv(tmp_path, sheet(rows))
    code, out, err = import_cli(capsys, path, "--out", str(tmp_path / "packs"))
    assert code == 0, err
    assert "demo.yaml: quiz demo, 2 questions" in out and "tricky.yaml" in out
    assert export(tmp_path / "packs", capsys) == what_the_sheet_says(rows)


def row_of(q: Question) -> Row:
    """A question of any kind as a spreadsheet row (docs/csv-format.md), worked out from the
    catalog's question, not by the importer."""
    row = {"question_id": q.id}
    if q.kind is not Kind.CHOICE:
        row["kind"] = q.kind.value
    for what in ("prompt", "explanation", "details"):
        text = getattr(q, what)
        row |= {f"{what}_{loc}": t for loc, t in (text.items() if text else [])}
    if q.kind in (Kind.CHOICE, Kind.MULTI, Kind.ORDER):
        for n, option in enumerate(q.options, 1):
            row |= {f"option_{n}_{loc}": t for loc, t in option.text.items()}
    if q.kind is Kind.CHOICE:
        row["correct"] = str(q.answer + 1)
    elif q.kind is Kind.MULTI:
        row["correct"] = ";".join("ABCDEFGHIJ"[i] for i in q.answers)
    elif q.kind is Kind.TRUEFALSE:
        row["truth"] = "TRUE" if q.answer == 0 else "FALSE"  # as a spreadsheet writes it
    elif q.kind is Kind.NUMERIC:
        assert q.numeric is not None
        row |= {"value": repr(q.numeric.value), "min": repr(q.numeric.low),
                "max": repr(q.numeric.high)}
        unit = q.numeric.unit
        row |= {f"unit_{loc}": t for loc, t in (unit.items() if unit else [])}
    elif q.kind is Kind.TEXT:
        assert q.accept is not None
        row |= {f"accept_{loc}": "; ".join(forms) for loc, forms in q.accept.texts.items()}
        row["latin"] = ";".join(q.accept.latin)
    if q.pair:
        row["pair"] = q.pair
    return row


def rows_of(quiz: Quiz) -> list[Row]:
    rows = [{"quiz_id": quiz.id, **row_of(q)} for q in quiz.questions]
    rows[0] |= {f"quiz_title_{loc}": t for loc, t in quiz.title.items()}
    rows[0]["tags"] = ", ".join(quiz.tags)
    return rows


def test_round_trip_the_bundled_packs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every bundled pack as one spreadsheet (bn/hi, line breaks, details, every kind):
    importing it gives back exactly what `content export` says of the bundled packs (but
    their cards and metadata, which a spreadsheet has no column for), and no warning."""
    catalog = load_catalog(BUNDLED)
    rows = [row for quiz in catalog for row in rows_of(quiz)]
    assert {row.get("kind", "choice") for row in rows} == {k.value for k in Kind}
    path = write_csv(tmp_path, sheet(rows, delimiter=";"), "all.csv")
    code, _, err = import_cli(capsys, path, "--out", str(tmp_path / "packs"))
    assert code == 0 and err == "", err
    assert export(tmp_path / "packs", capsys) == [without_media(quiz.export())
                                                  for quiz in catalog]


def test_every_kind_in_every_language_round_trips_to_the_same_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tests/data/kinds (one question of each kind in en, bn and hi) as a sheet: the loader
    reads back the same questions: kinds, right options, ranges, units, accepted forms."""
    (kinds,) = load_catalog(ROOT / "tests" / "data" / "kinds")
    path = write_csv(tmp_path, sheet(rows_of(kinds)))
    code, _, err = import_cli(capsys, path, "--out", str(tmp_path / "packs"))
    assert code == 0 and err == "", err
    quiz, problems = load_file(tmp_path / "packs" / "kinds.yaml")
    assert quiz is not None, problems
    assert quiz.questions == kinds.questions
    assert [q.kind for q in quiz.questions] == list(Kind)


# a card's parts, a question's metadata and the misconceptions its options stand for: written
# in YAML only (docs/csv-format.md)
MEDIA = ("code", "formula", "image", "image_alt", "explanation_image", "explanation_image_alt",
         "difficulty", "bloom", "concepts", "prerequisites", "sources", "claims", "misconceptions")


def without_media(quiz: dict[str, object]) -> dict[str, object]:
    questions = quiz["questions"]
    assert isinstance(questions, list)
    return {k: v for k, v in quiz.items() if k != "misconceptions"} | {"questions": [
        {k: v for k, v in q.items() if k not in MEDIA} for q in questions]}


def test_excel_style_file_bom_semicolons_crlf_aliases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Excel's 'CSV UTF-8' starts with a BOM; where the decimal mark is a comma it separates
    with semicolons. Column names in any case, with spaces; a column without a language is
    English; empty rows and trailing empty cells are skipped; `B` is option 2."""
    text = (
        "\ufeffQuiz ID;Quiz Title;Question-ID;Prompt;Option 1;Option 2;Correct;Explanation\r\n"
        "mini;Mini;mini-one;Two?;one;two;B;Two is two.;;\r\n"
        ";;;;;;;\r\n"
    )
    path = write_csv(tmp_path, text)
    code, _, err = import_cli(capsys, path, "--out", str(tmp_path / "packs"))
    assert code == 0, err
    assert export(tmp_path / "packs", capsys) == [{
        "id": "mini", "language": "en", "title": {"en": "Mini"}, "tags": [],
        "questions": [{"id": "mini-one", "prompt": {"en": "Two?"},
                       "options": [{"en": "one"}, {"en": "two"}], "answer": 1,
                       "explanation": {"en": "Two is two."}}],
    }]
    # a sheet with English columns only makes English packs: nothing is missing
    assert "warning" not in err


def test_the_example_in_the_layout_document_imports_without_a_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/csv-format.md's example, as printed there: written, and validated clean."""
    doc = (ROOT / "docs" / "csv-format.md").read_text(encoding="utf-8")
    example = re.search(r"```csv\n(.*?)```", doc, re.S)
    assert example is not None
    path = write_csv(tmp_path, example[1])
    code, out, err = import_cli(capsys, path, "--out", str(tmp_path / "packs"))
    assert code == 0 and err == "", err
    assert out.endswith("quiz demo, 2 questions\n"), out
    assert main(["content", "validate", str(tmp_path / "packs")]) == 0
    captured = capsys.readouterr()
    assert captured.err == "", captured.err
    assert captured.out.startswith("ok: 1 quiz, 2 questions in "), captured.out


def test_the_kinds_example_in_the_layout_document_imports_as_its_kinds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/csv-format.md's second example, one row of each kind other than choice."""
    doc = (ROOT / "docs" / "csv-format.md").read_text(encoding="utf-8")
    example = re.findall(r"```csv\n(.*?)```", doc, re.S)[1]
    path = write_csv(tmp_path, example)
    code, _, err = import_cli(capsys, path, "--out", str(tmp_path / "packs"))
    assert code == 0 and err == "", err
    quiz, problems = load_file(tmp_path / "packs" / "memory.yaml")
    assert quiz is not None, problems
    grow, same, layer, name, steps = quiz.questions
    assert [q.kind for q in quiz.questions] == [Kind.MULTI, Kind.TRUEFALSE, Kind.NUMERIC,
                                                Kind.TEXT, Kind.ORDER]
    assert grow.answers == (0, 2) and same.answer == 1
    assert layer.numeric is not None and (layer.numeric.low, layer.numeric.high) == (0.35, 0.45)
    assert layer.numeric.unit is not None and layer.numeric.unit.get("en") == "GB"
    assert name.accept is not None and name.accept.forms("en") == (
        "recomputation", "activation recomputation")
    assert [o.text.get("en") for o in steps.options] == [
        "Receive activations", "Run forward", "Run backward"]


def test_a_sheet_declares_the_languages_of_its_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """English and Bengali columns: an empty Bengali cell is warned about, Hindi never."""
    row = {k: v for k, v in full_row("duo", "duo-one").items() if not k.endswith("_hi")}
    path = write_csv(tmp_path, sheet([row, {**full_row("", "duo-two"), "prompt_bn": ""}],
                                     columns=list(row)))
    code, _, err = import_cli(capsys, path, "--out", str(tmp_path / "packs"))
    assert code == 0, err
    assert "language: [en, bn]\n" in (tmp_path / "packs" / "duo.yaml").read_text("utf-8")
    assert "questions.csv:3: warning: prompt has no bn text" in err
    assert "hi" not in err


def test_default_output_is_the_content_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_csv(tmp_path, sheet([full_row("demo", "demo-one")]))
    code, out, _ = import_cli(capsys, path)
    assert code == 0 and f"wrote {tmp_path / 'content' / 'demo.yaml'}" in out
    assert (tmp_path / "content" / "demo.yaml").read_text(encoding="utf-8").startswith(MARKER)
    assert load_catalog(tmp_path / "content").get("demo") is not None


# --- problems: FILE:row: error: …, every one at once, nothing written --------------------------


def problems_of(tmp_path: Path, rows: list[Row] | str, **kw: Any) -> list[str]:
    text = rows if isinstance(rows, str) else sheet(rows)
    path = write_csv(tmp_path, text)
    with pytest.raises(CsvImportError) as info:
        import_csv(path, tmp_path / "packs", **kw)
    assert not (tmp_path / "packs").exists()
    return [str(p).removeprefix(f"{path}:") for p in info.value.problems]


def test_each_problem_at_its_row_and_column(tmp_path: Path) -> None:
    long = "x" * 301
    rows = [
        full_row("demo", "demo-one", prompt_en=long),                             # row 2
        full_row("demo", "demo-two", option_2_bn=""),                              # row 3
        full_row("demo", "demo-three", correct="5"),                               # row 4
        full_row("demo", "demo-one"),                                              # row 5
        full_row("demo", "demo-four", quiz_title_en="Another title"),              # row 6
        full_row("demo", "demo-five", option_2_en="", option_2_bn="", option_2_hi=""),  # 7
        full_row("demo", "Bad Id", explanation_en="Bell\x07"),                     # row 8
        full_row("demo", "demo-six", prompt_en=""),                                # row 9
        full_row("demo", "demo-seven", option_3_en="", option_3_bn="", option_3_hi="",
                 option_4_en="", option_4_bn="", option_4_hi="", correct="x"),      # row 10
        full_row("demo", "demo-eight", explanation_en="a\nb\nc\nd"),               # row 11
    ]
    found = problems_of(tmp_path, rows)
    errors = [p for p in found if ": error: " in p]
    assert errors == [
        "2: error: prompt_en: question is 301 characters, the limit is 300",
        "3: error: option_2: option has locales ['en', 'hi'] but option 1 has "
        "['en', 'bn', 'hi']: every locale needs the same options",
        "4: error: correct is '5': give the number of the right option, 1 to 4",
        "5: error: question_id 'demo-one' is already used in row 2; every question needs its "
        "own id",
        "6: error: quiz_title_en differs from row 2, the first row of quiz 'demo'; leave it "
        "empty on the quiz's other rows",
        "7: error: option_2_en is empty but option_3 is not; number the options from 1 "
        "without gaps",
        "8: error: question_id must be lowercase letters, digits and hyphens (at most 48), "
        "starting with a letter or digit",
        "8: error: explanation_en: contains the unprintable character U+0007; quiz text must "
        "be plain text",
        "9: error: prompt_en is empty: every question needs an English prompt",
        "10: error: correct is 'x': give the number of the right option, 1 to 2",
        "11: error: explanation_en: explanation has 3 line breaks, Telegram allows 2",
    ]


def test_a_bad_cell_of_each_kind_is_named_by_its_row_and_column(tmp_path: Path) -> None:
    def row(qid: str, kind: str, **cells: str) -> Row:
        return {"quiz_id": "k", "quiz_title_en": "Kinds", "question_id": qid, "kind": kind,
                "prompt_en": f"What about {qid}?", "explanation_en": "Because.", **cells}

    abc = {"option_1_en": "a", "option_2_en": "b", "option_3_en": "c"}
    rows = [
        row("k-1", "multiple"),                                                    # row 2
        row("k-2", "multi", **abc, correct="A;A"),                                 # row 3
        row("k-3", "multi", **abc, correct="A;B;C"),                               # row 4
        row("k-4", "truefalse", truth="maybe", option_1_en="x"),                   # row 5
        row("k-5", "numeric", value="0,4", tolerance="0.1"),                       # row 6
        row("k-6", "numeric", value="5", min="1"),                                 # row 7
        row("k-7", "numeric", value="5", min="6", max="7"),                        # row 8
        row("k-8", "text", truth="true"),                                          # row 9
        row("k-9", "order", option_1_en="a", option_2_en="b", correct="1"),        # row 10
        row("k-10", "order", **{f"option_{n}_en": f"o{n}" for n in range(1, 8)}),  # row 11
        row("k-11", "text", accept_en="x" * 101),                                  # row 12
        row("k-12", "text", accept_en="punarganana", latin="পুনর্গণনা"),              # row 13
        row("k-13", "numeric", value="2", tolerance="-1", unit_en="GB"),            # row 14
        row("k-14", "truefalse"),                                                  # row 15
        row("k-15", "choice", **abc, correct="A;B"),                               # row 16
        row("k-16", "numeric", value="1", tolerance="0.1", min="0", max="2"),       # row 17
    ]
    errors = [p for p in problems_of(tmp_path, rows) if ": error: " in p]
    assert errors == [
        "2: error: kind is 'multiple': one of choice, multi, truefalse, numeric, text, order "
        "(empty: choice)",
        "3: error: correct is 'A;A': give every right option, at least two, by number or "
        "letter separated by ';' (1;3 or A;C), 1 to 3",
        "4: error: correct is 'A;B;C': every option is right; a multi question needs at least "
        "one wrong option",
        "5: error: option_1 is not empty: a truefalse question has no options (see "
        "docs/csv-format.md)",
        "5: error: truth is 'maybe': true if the statement is true, false if not",
        "6: error: value is '0,4': write a number with a dot for the decimal mark and no "
        "thousands separator (0.4, 4096, 1e9)",
        "7: error: max is empty: give both min and max",
        "8: error: value is '5': it must lie between min (6) and max (7)",
        "9: error: truth is not empty: a text question has none (it is for truefalse "
        "questions)",
        "9: error: accept_en is empty: a text question needs its accepted answers, separated "
        "by ';'",
        "10: error: correct is not empty: an order question has no right option; list its "
        "options in the right order",
        "11: error: 7 options; an order question has at most 6",
        "12: error: accept_en 1: an accepted answer is 101 characters, at most 100 (an answer "
        "is typed in a message or a form)",
        "13: error: latin 1: 'পুনর্গণনা' is not in Latin letters (latin: lists "
        "transliterations, e.g. punargonona)",
        "14: error: tolerance is '-1': it cannot be negative",
        "15: error: truth is empty: a truefalse question needs it (true or false)",
        "16: error: correct is 'A;B': give the number of the right option, 1 to 3",
        "17: error: tolerance and min/max are both given: give one of the two",
    ]


def test_header_problems_are_reported_together(tmp_path: Path) -> None:
    text = "quiz_id,question_id,promt_en,prompt_en,Prompt,correct\nq,q-1,x,y,z,1\n"
    assert problems_of(tmp_path, text) == [
        "1: error: unknown column 'promt_en' (check the spelling; docs/csv-format.md lists "
        "the columns)",
        "1: error: column 'prompt_en' appears twice (columns 4 and 5)",
        "1: error: the column 'quiz_title_en' is missing",
        "1: error: the column 'option_1_en' is missing",
        "1: error: the column 'option_2_en' is missing",
        "1: error: the column 'explanation_en' is missing",
    ]


def test_a_header_only_sheet_or_a_pipe_exits_1_with_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/csv-format.md: exit 1 when nothing was written; a FIFO is refused, not waited on."""
    header = sheet([full_row("demo", "q1")]).split("\r\n")[0] + "\r\n\r\n"
    out = tmp_path / "packs"
    code, _, err = import_cli(capsys, write_csv(tmp_path, header), "--out", str(out))
    assert code == 1 and "no question rows below the header" in err
    fifo = tmp_path / "sheet.csv"
    os.mkfifo(fifo)
    code, _, err = import_cli(capsys, fifo, "--out", str(out))
    assert code == 1 and "not a regular file" in err
    assert not out.exists()


def test_quiz_level_problems(tmp_path: Path) -> None:
    rows = [
        {**full_row("", "a-one")},
        {**full_row("Bad Quiz", "b-one"), "quiz_title_en": ""},
        full_row("tags", "c-one", tags="x"),
        full_row("tags", "c-two", tags="y"),
    ]
    assert [p for p in problems_of(tmp_path, rows) if "error" in p] == [
        "2: error: quiz_id is empty (the first question needs its quiz's id; below it an "
        "empty quiz_id means the quiz of the row above)",
        "3: error: quiz_title_en is empty: the first row of quiz 'Bad Quiz' gives its English "
        "title",
        "5: error: tags differ from row 4, the first row of quiz 'tags'; leave them empty on "
        "the quiz's other rows",
    ]


def test_a_bad_slug_for_the_quiz_names_the_quiz(tmp_path: Path) -> None:
    found = problems_of(tmp_path, [full_row("Bad_Quiz", "b-one")])
    assert found == ["2: error: quiz 'Bad_Quiz': quiz_id must be lowercase letters, digits "
                     "and hyphens (at most 48), starting with a letter or digit"]


def test_not_utf8_names_the_line_and_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "questions.csv"
    path.write_bytes(sheet([full_row("demo", "demo-one")]).encode() + "é,\n".encode("cp1252"))
    with pytest.raises(CsvImportError) as info:
        import_csv(path, tmp_path / "packs")
    (problem,) = info.value.problems
    assert str(problem).startswith(f"{path}:3: error: not valid UTF-8 (byte 0xE9 on line 3)")
    assert "CSV UTF-8" in str(problem)


def test_a_broken_quote_is_reported(tmp_path: Path) -> None:
    text = sheet([full_row("demo", "demo-one")]) + 'demo,"unterminated\n'
    assert problems_of(tmp_path, text)[0].startswith("3: error: not a well-formed CSV row")


def test_cli_prints_every_problem_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [full_row("demo", "demo-one", correct="9"), full_row("demo", "demo-one")]
    path = write_csv(tmp_path, sheet(rows))
    code, out, err = import_cli(capsys, path, "--out", str(tmp_path / "packs"))
    assert code == 1 and out == ""
    assert err.splitlines() == [
        f"{path}:2: error: correct is '9': give the number of the right option, 1 to 4",
        f"{path}:3: error: question_id 'demo-one' is already used in row 2; every question "
        "needs its own id",
        f"2 errors: nothing written to {tmp_path / 'packs'}",
    ]
    assert not (tmp_path / "packs").exists()


# --- the output folder --------------------------------------------------------------------------


def test_ids_stay_unique_in_the_output_folder(tmp_path: Path) -> None:
    packs = tmp_path / "packs"
    packs.mkdir()
    (packs / "existing.yaml").write_text((BUNDLED / "gradient-accumulation.yaml").read_text(
        encoding="utf-8"), encoding="utf-8")
    quiz, _ = load_file(packs / "existing.yaml")
    assert quiz is not None
    rows = [full_row(quiz.id, "new-one"), full_row("fresh", quiz.questions[0].id)]
    assert problems_of_existing(tmp_path, rows) == [
        f"2: error: quiz_id {quiz.id!r} is already the id of {packs / 'existing.yaml'}",
        f"3: error: question_id {quiz.questions[0].id!r} is already used in "
        f"{packs / 'existing.yaml'}",
    ]


def problems_of_existing(tmp_path: Path, rows: list[Row], **kw: Any) -> list[str]:
    path = write_csv(tmp_path, sheet(rows))
    before = sorted(p.name for p in (tmp_path / "packs").iterdir())
    with pytest.raises(CsvImportError) as info:
        import_csv(path, tmp_path / "packs", **kw)
    assert sorted(p.name for p in (tmp_path / "packs").iterdir()) == before
    return [str(p).removeprefix(f"{path}:") for p in info.value.problems if not p.warning]


def test_importing_again_replaces_its_own_packs_not_hand_written_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packs = tmp_path / "packs"
    path = write_csv(tmp_path, sheet([full_row("demo", "demo-one")]))
    assert import_cli(capsys, path, "--out", str(packs))[0] == 0
    # the sheet changed: importing again replaces the pack it wrote
    path = write_csv(tmp_path, sheet([full_row("demo", "demo-one", prompt_en="Changed?")]))
    assert import_cli(capsys, path, "--out", str(packs))[0] == 0
    assert export(packs, capsys)[0]["questions"][0]["prompt"]["en"] == "Changed?"
    # edited by hand (the first line gone): refused, unless --force
    target = packs / "demo.yaml"
    target.write_text(target.read_text(encoding="utf-8").split("\n", 1)[1], encoding="utf-8")
    assert problems_of_existing(tmp_path, [full_row("demo", "demo-one")]) == [
        f"2: error: {target} exists and was not written by this import; use --force to "
        "replace it"
    ]
    code, _, err = import_cli(capsys, path, "--out", str(packs), "--force")
    assert code == 0, err
    assert target.read_text(encoding="utf-8").startswith(MARKER)
    assert [p.name for p in packs.iterdir()] == ["demo.yaml"]  # no temporary file left


# --- YAML scalars: whatever the cell, the pack reads it back ------------------------------------

FUZZ = settings(
    max_examples=int(os.environ.get("QUIZBOT_FUZZ_EXAMPLES", "150")),
    deadline=timedelta(seconds=2),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
CELL = st.text(
    alphabet=st.one_of(
        st.sampled_from([*":#-[]{},&*!|>'\"%@`?~ \t\n\r\\.0123456789eExtrufalsn", "\x85",
                         "\u2028", "\ufeff", "\x07", "\x00", "\xa0", "প", "\u200d", "🧠"]),
        st.characters(exclude_categories=["Cs"]),
    ),
    min_size=1, max_size=80,
)


@FUZZ
@given(text=CELL)
def test_fuzz_any_cell_reads_back_or_is_reported_at_its_row(tmp_path: Path, text: str) -> None:
    path = write_csv(tmp_path, sheet([full_row("fz", "fz-one", prompt_en=f"Q {text}",
                                                 option_1_en=f"O {text}")]))
    out = tmp_path / "packs"
    try:
        packs, _ = import_csv(path, out)
    except CsvImportError as exc:
        for problem in exc.problems:
            assert problem.row == 2 and "\n" not in str(problem), str(problem)
        return
    (pack,) = packs
    (out / "fz.yaml").parent.mkdir(exist_ok=True)
    (out / "fz.yaml").write_text(pack.text, encoding="utf-8")
    quiz, problems = load_file(out / "fz.yaml")
    assert quiz is not None, problems
    expected = f"Q {text}".replace("\r\n", "\n").replace("\r", "\n").strip()
    assert quiz.questions[0].prompt.en == expected
    assert quiz.questions[0].options[0].text.en == (
        f"O {text}".replace("\r\n", "\n").replace("\r", "\n").strip()
    )


def test_an_output_folder_that_cannot_be_made_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("not a folder", encoding="utf-8")
    path = write_csv(tmp_path, sheet([full_row("demo", "demo-one")]))
    code, out, err = import_cli(capsys, path, "--out", str(tmp_path / "file"))
    assert code == 1 and out == ""
    assert err.splitlines()[-1].startswith(f"quizbot: cannot write to {tmp_path / 'file'}: ")


def test_a_pair_column_names_the_transfer_question_and_is_checked_at_its_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pair` (docs/csv-format.md): the pack's question a peer round asks alone after its
    revote; kept in the pack, and a pair naming no question of the quiz refused at its row."""
    rows = [full_row("demo", "demo-one", pair="demo-two"), full_row("demo", "demo-two")]
    path = write_csv(tmp_path, sheet(rows))
    code, _, err = import_cli(capsys, path, "--out", str(tmp_path / "packs"))
    assert code == 0, err
    quiz, problems = load_file(tmp_path / "packs" / "demo.yaml")
    assert quiz is not None, problems
    assert [q.pair for q in quiz.questions] == ["demo-two", None]
    bad = [full_row("demo", "demo-one"), full_row("demo", "demo-two", pair="demo-nine")]
    (tmp_path / "bad").mkdir()
    errors = [p for p in problems_of(tmp_path / "bad", bad) if ": error: " in p]
    assert len(errors) == 1 and errors[0].startswith("3: error: pair") and "demo-nine" in errors[0]
