"""Exports of a chat's answers and board, streamed: rows are read a page at a time
(DashboardReads.every_answer) and sent as they come, so a chat with a million answers costs
the memory of one page.

CSV is UTF-8 with a byte-order mark, which spreadsheets need to open Bengali and Hindi as such.
XLSX is written by xlsxwriter in constant_memory mode (each row flushed to a temporary file)
in a worker thread, a page at a time, then the finished file is sent in chunks.

A text cell that starts with = + - @ (or a tab or carriage return) is neutralised with a
leading apostrophe in CSV, where a spreadsheet would otherwise run it as a formula; XLSX
cells are written as strings, which are never formulas.
"""

from __future__ import annotations

import asyncio
import csv
import io
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import xlsxwriter
from aiohttp import web

from bot.i18n import Translator

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
CHUNK = 64 * 1024
CSV_TYPE = "text/csv; charset=utf-8"
XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
Cell = str | int | float | None


def neutral(value: Cell) -> Cell:
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _headers(response: web.StreamResponse, kind: str, file_name: str) -> None:
    response.content_type = kind.split(";")[0]
    if "charset" in kind:
        response.charset = "utf-8"
    response.headers["Content-Disposition"] = f'attachment; filename="{file_name}"'
    response.headers["Cache-Control"] = "no-store"


async def send_csv(request: web.Request, file_name: str, header: Sequence[str],
                   rows: AsyncIterator[Sequence[Cell]]) -> web.StreamResponse:
    response = web.StreamResponse()
    _headers(response, CSV_TYPE, file_name)
    await response.prepare(request)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    buffer.write("\ufeff")
    writer.writerow(header)
    async for row in rows:
        writer.writerow([neutral(v) for v in row])
        if buffer.tell() >= CHUNK:
            await response.write(buffer.getvalue().encode("utf-8"))
            buffer.seek(0)
            buffer.truncate()
    await response.write(buffer.getvalue().encode("utf-8"))
    await response.write_eof()
    return response


class _Sheet:
    """An xlsxwriter workbook in constant_memory mode on a temporary file."""

    def __init__(self, folder: Path, header: Sequence[str]) -> None:
        self.path = folder / "export.xlsx"
        self.book = xlsxwriter.Workbook(str(self.path), {
            "constant_memory": True, "tmpdir": str(folder), "strings_to_formulas": False,
            "strings_to_urls": False, "strings_to_numbers": False})
        self.sheet = self.book.add_worksheet()
        self.row = 0
        self.write([*header])

    def write(self, values: Sequence[Any]) -> None:
        for col, value in enumerate(values):
            if isinstance(value, str):
                self.sheet.write_string(self.row, col, value)
            elif value is not None:
                self.sheet.write_number(self.row, col, value)
        self.row += 1

    def write_many(self, rows: list[Sequence[Any]]) -> None:
        for values in rows:
            self.write(values)


async def send_xlsx(request: web.Request, file_name: str, header: Sequence[str],
                    rows: AsyncIterator[Sequence[Cell]], page: int = 1000
                    ) -> web.StreamResponse:
    with tempfile.TemporaryDirectory(prefix="quizbot-export-") as folder:
        sheet = await asyncio.to_thread(_Sheet, Path(folder), header)
        batch: list[Sequence[Any]] = []
        async for row in rows:
            batch.append(row)
            if len(batch) >= page:
                await asyncio.to_thread(sheet.write_many, batch)
                batch = []
        await asyncio.to_thread(sheet.write_many, batch)
        await asyncio.to_thread(sheet.book.close)
        response = web.StreamResponse()
        _headers(response, XLSX_TYPE, file_name)
        response.content_length = sheet.path.stat().st_size
        await response.prepare(request)
        with sheet.path.open("rb") as fh:
            while chunk := await asyncio.to_thread(fh.read, CHUNK):
                await response.write(chunk)
        await response.write_eof()
        return response


def answer_header(t: Translator) -> list[str]:
    return [t.gettext("Person"), t.gettext("Name"), t.gettext("Question id"),
            t.gettext("Prompt"), t.gettext("Option chosen"), t.gettext("Correct"),
            t.gettext("Answered at"), t.gettext("Seconds taken"), t.gettext("Round")]


def board_header(t: Translator) -> list[str]:
    return [t.gettext("Rank"), t.gettext("Person"), t.gettext("Name"), t.gettext("Right"),
            t.gettext("Answers"), t.gettext("Seconds")]
