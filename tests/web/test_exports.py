"""Exports read back with the csv module and openpyxl: every answer of the chat once, in the
chat's time zone, Bengali and Hindi intact, formula-looking cells neutralised; the rows are
read a page at a time (counted), so an export's memory is one page's."""

from __future__ import annotations

import csv
import io
from datetime import time
from typing import Any

import openpyxl
import pytest

from bot.core import dashboard_reads
from bot.core.schedule import Schedule
from tests.web.conftest import CHAT_A, Site


async def download(site: Site, what: str) -> bytes:
    response = await site.client.get(f"/chat/{CHAT_A}/export/{what}")
    assert response.status == 200, await response.text()
    assert response.headers["Content-Disposition"].startswith("attachment;")
    return await response.read()


def csv_rows(data: bytes) -> list[list[str]]:
    assert data.startswith("\ufeff".encode())
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))


def xlsx_rows(data: bytes) -> list[list[Any]]:
    book = openpyxl.load_workbook(io.BytesIO(data), read_only=True)
    return [list(row) for row in book.active.iter_rows(values_only=True)]


async def test_every_answer_is_exported_once_in_both_formats(site: Site) -> None:
    await site.storage.set_schedule(Schedule(CHAT_A, time(9), "Asia/Dhaka"))
    await site.login()
    stored = await site.storage.chat_answers(CHAT_A, None, 10_000)
    rows = csv_rows(await download(site, "answers.csv"))
    header, body = rows[0], rows[1:]
    assert header == ["Person", "Name", "Question id", "Prompt", "Option chosen", "Correct",
                      "Answered at", "Seconds taken", "Round"]
    assert len(body) == len(stored)
    assert [(r[0], r[2]) for r in body] == [(a.person_key, a.question_id) for a in stored]
    assert all(r[6].endswith("+06:00") for r in body)  # the chat's zone
    assert {r[5] for r in body} == {"yes", "no"}
    first = body[0]
    assert first[3] in {"What is one plus one?", "Which is a colour?", "Pick the last letter."}
    names = {r[1] for r in body}
    assert {"রাজা", "सीता", "'=SUM(A1)"} <= names  # a formula-looking name is neutralised
    sheet = xlsx_rows(await download(site, "answers.xlsx"))
    assert sheet[0] == header and len(sheet) - 1 == len(stored)
    assert {r[1] for r in sheet[1:]} >= {"রাজা", "सीता", "=SUM(A1)"}  # strings, never formulas
    assert [(r[0], r[2]) for r in sheet[1:]] == [(a.person_key, a.question_id) for a in stored]


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
