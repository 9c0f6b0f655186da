"""Exports of a chat's tables, streamed: rows are read a page at a time (DashboardReads'
every_answer, every_board_row) and sent as they come, so a chat with a million answers costs
the memory of one page.

A table is its columns (each with its kind: text, number, whole number, time, yes/no) and
its rows. CSV carries one table; XLSX one sheet per table, in order.

CSV is UTF-8 with a byte-order mark, which spreadsheets need to open Bengali and Hindi as such;
a time is ISO 8601 with its offset, a yes/no 1 or 0 (a column a spreadsheet can sum).
XLSX is written by xlsxwriter in constant_memory mode (each row flushed to a temporary file)
in a worker thread, a page at a time, then the finished file is sent in chunks. Its cells are
typed as the column says: numbers, datetimes (the chat's local time, the zone in the header:
Excel has no zone), booleans; every sheet has its header row frozen, an autofilter and column
widths, so it reads as a table when opened.

A text cell that starts with = + - @ (or a tab or carriage return) is neutralised with a
leading apostrophe in CSV, where a spreadsheet would otherwise run it as a formula; XLSX
cells are written as strings, which are never formulas.
"""

from __future__ import annotations

import asyncio
import csv
import enum
import io
import tempfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import xlsxwriter
from aiohttp import web
from xlsxwriter.worksheet import Worksheet

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
CHUNK = 64 * 1024
CSV_TYPE = "text/csv; charset=utf-8"
XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
Cell = str | int | float | bool | datetime | None
SHEET_NAME = 31  # Excel's limit on a sheet's name
TIME_FORMAT = "yyyy-mm-dd hh:mm:ss"


class Kind(enum.Enum):
    TEXT = "text"
    NUMBER = "number"  # a fraction shown with up to 3 decimals
    COUNT = "count"  # a whole number
    SHARE = "share"  # 0 to 1, shown as a percentage
    TIME = "time"  # a datetime in the chat's zone
    YES_NO = "yes_no"


@dataclass(frozen=True, slots=True)
class Column:
    header: str
    kind: Kind = Kind.TEXT
    width: float = 12  # in characters, as a spreadsheet counts them


@dataclass(frozen=True, slots=True)
class Table:
    name: str  # the sheet's name
    columns: Sequence[Column]
    rows: AsyncIterator[Sequence[Cell]]

    @property
    def header(self) -> list[str]:
        return [c.header for c in self.columns]


def neutral(value: Cell) -> Cell:
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_cell(value: Cell) -> Cell:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, datetime):
        return value.isoformat(timespec="seconds")
    return neutral(value)


def _headers(response: web.StreamResponse, kind: str, file_name: str) -> None:
    response.content_type = kind.split(";")[0]
    if "charset" in kind:
        response.charset = "utf-8"
    response.headers["Content-Disposition"] = f'attachment; filename="{file_name}"'
    response.headers["Cache-Control"] = "no-store"


async def send_csv(request: web.Request, file_name: str, table: Table) -> web.StreamResponse:
    response = web.StreamResponse()
    _headers(response, CSV_TYPE, file_name)
    await response.prepare(request)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    buffer.write("\ufeff")
    writer.writerow(table.header)
    async for row in table.rows:
        writer.writerow([csv_cell(v) for v in row])
        if buffer.tell() >= CHUNK:
            await response.write(buffer.getvalue().encode("utf-8"))
            buffer.seek(0)
            buffer.truncate()
    await response.write(buffer.getvalue().encode("utf-8"))
    await response.write_eof()
    return response


def sheet_name(name: str, taken: set[str]) -> str:
    """`name` as Excel takes it: at most 31 characters, none of []:*?/\\, unique."""
    clean = "".join(" " if ch in "[]:*?/\\" else ch for ch in name).strip("' ") or "Sheet"
    clean, n = clean[:SHEET_NAME], 1
    while clean.lower() in taken:
        n += 1
        clean = f"{clean[:SHEET_NAME - len(str(n)) - 1]} {n}"
    taken.add(clean.lower())
    return clean


class _Book:
    """An xlsxwriter workbook in constant_memory mode on a temporary file, one sheet at a
    time (constant_memory writes a sheet's rows in order)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "export.xlsx"
        self.book = xlsxwriter.Workbook(str(self.path), {
            "constant_memory": True, "tmpdir": str(folder), "strings_to_formulas": False,
            "strings_to_urls": False, "strings_to_numbers": False})
        self.formats = {
            Kind.TIME: self.book.add_format({"num_format": TIME_FORMAT}),
            Kind.NUMBER: self.book.add_format({"num_format": "0.###"}),
            Kind.COUNT: self.book.add_format({"num_format": "0"}),
            Kind.SHARE: self.book.add_format({"num_format": "0%"}),
        }
        self.bold = self.book.add_format({"bold": True})
        self.names: set[str] = set()
        self.sheet: Worksheet | None = None
        self.kinds: list[Kind] = []
        self.row = 0

    def start(self, name: str, columns: Sequence[Column]) -> None:
        self.finish()
        sheet = self.book.add_worksheet(sheet_name(name, self.names))
        for col, column in enumerate(columns):
            sheet.set_column(col, col, column.width, self.formats.get(column.kind))
        sheet.freeze_panes(1, 0)
        for col, column in enumerate(columns):
            sheet.write_string(0, col, column.header, self.bold)
        self.sheet, self.kinds, self.row = sheet, [c.kind for c in columns], 1

    def write_many(self, rows: list[Sequence[Any]]) -> None:
        sheet = self.sheet
        assert sheet is not None
        for values in rows:
            for col, value in enumerate(values):
                self._write(sheet, col, value)
            self.row += 1

    def _write(self, sheet: Worksheet, col: int, value: Any) -> None:
        if value is None:
            return
        kind = self.kinds[col] if col < len(self.kinds) else Kind.TEXT
        if isinstance(value, bool):
            sheet.write_boolean(self.row, col, value)
        elif isinstance(value, datetime):
            # the wall time the chat saw: Excel's datetimes have no zone (the header names it)
            sheet.write_datetime(self.row, col, value.replace(tzinfo=None),
                                 self.formats[Kind.TIME])
        elif isinstance(value, int | float):
            sheet.write_number(self.row, col, value, self.formats.get(kind))
        else:
            sheet.write_string(self.row, col, str(value))

    def finish(self) -> None:
        if self.sheet is not None and self.kinds:
            # over the header and every row written, so sorting keeps rows whole
            self.sheet.autofilter(0, 0, max(self.row - 1, 0), len(self.kinds) - 1)
        self.sheet = None

    def close(self) -> None:
        self.finish()
        self.book.close()


async def send_xlsx(request: web.Request, file_name: str, tables: Sequence[Table],
                    page: int = 1000) -> web.StreamResponse:
    """One sheet per table, read in order: a table's rows may be computed from an earlier
    table's as they went by."""
    with tempfile.TemporaryDirectory(prefix="quizbot-export-") as folder:
        book = await asyncio.to_thread(_Book, Path(folder))
        for table in tables:
            await asyncio.to_thread(book.start, table.name, table.columns)
            batch: list[Sequence[Any]] = []
            async for row in table.rows:
                batch.append(row)
                if len(batch) >= page:
                    await asyncio.to_thread(book.write_many, batch)
                    batch = []
            await asyncio.to_thread(book.write_many, batch)
        await asyncio.to_thread(book.close)
        response = web.StreamResponse()
        _headers(response, XLSX_TYPE, file_name)
        response.content_length = book.path.stat().st_size
        await response.prepare(request)
        with book.path.open("rb") as fh:
            while chunk := await asyncio.to_thread(fh.read, CHUNK):
                await response.write(chunk)
        await response.write_eof()
        return response
