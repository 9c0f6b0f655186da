"""Exports read back with the csv module and openpyxl: every answer of the chat once, with its
quiz and topic, in the chat's time zone, Bengali and Hindi intact, formula-looking cells
neutralised; the XLSX a sheet per table (answers, questions, people) with typed cells, a
frozen header, a filter and column widths; the rows are read a page at a time (counted), so
an export's memory is one page's."""

from __future__ import annotations

import csv
import io
from datetime import datetime, time
from typing import Any
from zoneinfo import ZoneInfo

import openpyxl
import pytest

from bot.core import dashboard_reads
from bot.core.schedule import Schedule
from tests.web.conftest import CHAT_A, Site

DHAKA = ZoneInfo("Asia/Dhaka")


async def download(site: Site, what: str) -> bytes:
    response = await site.client.get(f"/chat/{CHAT_A}/export/{what}")
    assert response.status == 200, await response.text()
    assert response.headers["Content-Disposition"].startswith("attachment;")
    return await response.read()


def csv_rows(data: bytes) -> list[list[str]]:
    assert data.startswith("\ufeff".encode())
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))


def xlsx_rows(data: bytes, sheet: str | None = None) -> list[list[Any]]:
    book = openpyxl.load_workbook(io.BytesIO(data), read_only=True)
    return [list(row) for row in (book.active if sheet is None else book[sheet]).iter_rows(
        values_only=True)]


async def test_every_answer_is_exported_once_in_both_formats(site: Site) -> None:
    await site.storage.set_schedule(Schedule(CHAT_A, time(9), "Asia/Dhaka"))
    await site.login()
    stored = await site.storage.chat_answers(CHAT_A, None, 10_000)
    rows = csv_rows(await download(site, "answers.csv"))
    header, body = rows[0], rows[1:]
    assert header == ["Person", "Name", "Quiz", "Topic", "Question id", "Prompt",
                      "Option chosen", "Correct", "Answered at (Asia/Dhaka)", "Seconds taken",
                      "Round"]
    assert len(body) == len(stored)
    assert [(r[0], r[4]) for r in body] == [(a.person_key, a.question_id) for a in stored]
    title = site.service.catalog.quizzes["sample"].title.get("en")
    assert {(r[2], r[3]) for r in body} == {("sample", title)}
    assert all(r[8].endswith("+06:00") for r in body)  # the chat's zone
    assert [r[7] for r in body] == [str(int(a.correct)) for a in stored]  # 1 or 0, summable
    first = body[0]
    assert first[5] in {"What is one plus one?", "Which is a colour?", "Pick the last letter."}
    names = {r[1] for r in body}
    assert {"রাজা", "सीता", "'=SUM(A1)"} <= names  # a formula-looking name is neutralised
    sheet = xlsx_rows(await download(site, "answers.xlsx"))
    assert sheet[0] == header and len(sheet) - 1 == len(stored)
    assert {r[1] for r in sheet[1:]} >= {"রাজা", "सीता", "=SUM(A1)"}  # strings, never formulas
    assert [(r[0], r[4]) for r in sheet[1:]] == [(a.person_key, a.question_id) for a in stored]


async def test_a_formula_cell_in_xlsx_is_a_string(site: Site) -> None:
    await site.login()
    data = await download(site, "answers.xlsx")
    book = openpyxl.load_workbook(io.BytesIO(data))
    cells = [c for row in book.active.iter_rows() for c in row if c.value == "=SUM(A1)"]
    assert cells and all(c.data_type == "s" for c in cells)


async def test_the_board_of_a_period(site: Site) -> None:
    await site.login()
    people, _answered, _correct = await site.storage.chat_totals(CHAT_A)
    rows = csv_rows(await download(site, "board.csv?period=all"))
    assert rows[0][:3] == ["Rank", "Person", "Name"] and len(rows) - 1 == people
    assert [int(r[0]) for r in rows[1:]] == list(range(1, people + 1))
    week = xlsx_rows(await download(site, "board.xlsx?period=week"))
    assert week[0][0] == "Rank"
    bad = await site.client.get(f"/chat/{CHAT_A}/export/board.csv?period=year")
    assert bad.status == 400


async def test_an_export_reads_the_answers_a_page_at_a_time(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dashboard_reads, "EXPORT_PAGE", 7)
    sizes: list[int] = []
    original = site.storage.chat_answers

    async def counted(*args: Any, **kwargs: Any) -> Any:
        rows = await original(*args, **kwargs)
        sizes.append(len(rows))
        return rows

    monkeypatch.setattr(site.storage, "chat_answers", counted)
    await site.login()
    total = len(csv_rows(await download(site, "answers.csv"))) - 1
    assert max(sizes) == 7 and sum(sizes) == total and len(sizes) == total // 7 + 1


async def test_the_xlsx_has_a_typed_sheet_per_table_that_reads_as_a_table(site: Site) -> None:
    await site.storage.set_schedule(Schedule(CHAT_A, time(9), "Asia/Dhaka"))
    await site.login()
    stored = await site.storage.chat_answers(CHAT_A, None, 10_000)
    book = openpyxl.load_workbook(io.BytesIO(await download(site, "answers.xlsx")))
    assert book.sheetnames == ["Answers", "Questions", "People"]
    for sheet in book.worksheets:
        assert sheet.freeze_panes == "A2"  # the header row stays while scrolling
        assert sheet.auto_filter.ref == sheet.dimensions  # over the header and every row
        assert all(sheet.column_dimensions[c.column_letter].width >= 7 for c in sheet[1])
    answers = list(book["Answers"].iter_rows(min_row=2, values_only=True))
    # the chat's wall time as a datetime cell; Correct a boolean; seconds a number
    local = [a.answered_at.astimezone(DHAKA)
             .replace(tzinfo=None) for a in stored]
    assert [r[8] for r in answers] == local and all(isinstance(r[8], datetime) for r in answers)
    assert [r[7] for r in answers] == [a.correct for a in stored]
    assert [r[9] for r in answers] == [round(a.elapsed_ms / 1000, 3) for a in stored]
    assert book["Answers"]["H2"].data_type == "b" and book["Answers"]["I2"].is_date

    questions = list(book["Questions"].iter_rows(min_row=2, values_only=True))
    assert [r[2] for r in questions] == ["s-one", "s-two", "s-three"]  # the pack's order
    for quiz, _topic, question, _prompt, answered, right, accuracy, seconds in questions:
        mine = [a for a in stored if (a.quiz_id, a.question_id) == (quiz, question)]
        assert (answered, right) == (len(mine), sum(a.correct for a in mine))
        assert accuracy == pytest.approx(right / answered)
        assert seconds == pytest.approx(sum(a.elapsed_ms for a in mine) / 1000 / len(mine),
                                        abs=1e-3)
    assert book["Questions"]["G2"].number_format == "0%"

    people = list(book["People"].iter_rows(min_row=2, values_only=True))
    assert sorted(r[0] for r in people) == sorted({a.person_key for a in stored})
    for key, _name, answered, right, accuracy, *_rest in people:
        mine = [a for a in stored if a.person_key == key]
        assert (answered, right) == (len(mine), sum(a.correct for a in mine))
        assert accuracy == pytest.approx(right / answered)


async def test_the_board_xlsx_has_numbers_as_numbers(site: Site) -> None:
    await site.login()
    book = openpyxl.load_workbook(io.BytesIO(await download(site, "board.xlsx?period=all")))
    assert book.sheetnames == ["Board"]
    rows = list(book["Board"].iter_rows(min_row=2, values_only=True))
    assert rows and all(isinstance(v, int | float) for r in rows for v in (r[0], *r[3:]))
    assert book["Board"].freeze_panes == "A2"


async def test_a_bengali_reader_gets_bengali_sheet_names_and_headers(site: Site) -> None:
    await site.login(locale="bn")
    book = openpyxl.load_workbook(io.BytesIO(await download(site, "answers.xlsx")))
    assert book.sheetnames[0] != "Answers" and len(set(book.sheetnames)) == 3
    header = next(book.worksheets[0].iter_rows(max_row=1, values_only=True))
    assert "Topic" not in header and "Quiz" not in header
