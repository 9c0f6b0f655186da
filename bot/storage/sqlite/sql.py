"""The Sql of the operations written once (bot/storage/sql.py) on a sqlite3 connection, and
how SQLite's threads run them: the coroutines never wait (sqlite3 blocks), so `drive` runs one
to its end in the calling thread."""

from __future__ import annotations

import functools
import json
import re
import sqlite3
from collections.abc import Callable, Coroutine, Sequence
from datetime import UTC, date, datetime
from typing import Any, TypeVar

from bot.storage.sql import Row, Sql, typed_columns

T = TypeVar("T")


@functools.lru_cache(maxsize=1024)
def numbered(sql: str) -> str:
    """$1-style placeholders as SQLite's ?1."""
    return re.sub(r"\$(\d+)", r"?\1", sql)


class SqliteSql:
    for_update = ""  # one writer at a time: the write transaction holds the whole file

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    async def rows(self, sql: str, *args: Any) -> list[Row]:
        return self.db.execute(numbered(sql), args).fetchall()

    async def row(self, sql: str, *args: Any) -> Row | None:
        row: Row | None = self.db.execute(numbered(sql), args).fetchone()
        return row

    async def value(self, sql: str, *args: Any) -> Any:
        row = self.db.execute(numbered(sql), args).fetchone()
        return None if row is None else row[0]

    async def run(self, sql: str, *args: Any) -> int:
        return self.db.execute(numbered(sql), args).rowcount

    async def lock(self, name: str) -> None:
        return None

    async def notify(self, what: str, key: object) -> None:
        return None

    async def upsert(self, table: str, columns: str, rows: Sequence[Sequence[Any]], key: str,
                     update: str) -> None:
        if not rows:
            return
        names, _ = typed_columns(columns)
        values = ", ".join(f"value ->> {i}" for i in range(len(names)))
        self.db.execute(  # WHERE true: SQLite reads ON CONFLICT after a SELECT's FROM so
            f"INSERT INTO {table}({', '.join(names)}) SELECT {values} FROM json_each(?)"
            f" WHERE true ON CONFLICT ({key}) DO UPDATE SET {update}",
            (json.dumps(rows),))

    async def breathe(self) -> None:
        return None

    def when(self, moment: datetime) -> int:
        return to_ms(moment)

    def day(self, day: date) -> str:
        return day.isoformat()

    def array(self, values: Sequence[int] | Sequence[str]) -> str:
        return json.dumps(list(values))

    def at(self, stored: Any) -> datetime:
        return datetime.fromtimestamp(stored / 1000, UTC)

    def on(self, stored: Any) -> date:
        return date.fromisoformat(stored)

    def ints(self, stored: Any) -> tuple[int, ...]:
        return tuple(json.loads(stored))

    def strs(self, stored: Any) -> tuple[str, ...]:
        return tuple(json.loads(stored))


def to_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)  # how SQLite's schema keeps a time


def drive(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never waits to its end, here."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    coroutine.close()
    raise RuntimeError("an operation on SQLite waited for something")


@functools.cache
def blocking(fn: Callable[..., Coroutine[Any, Any, T]]) -> Callable[..., T]:
    """An operation written once, as a plain function of a sqlite3 connection (what the
    writer and reader threads run)."""

    @functools.wraps(fn)
    def run(db: sqlite3.Connection, *args: Any) -> T:
        sql: Sql = SqliteSql(db)
        return drive(fn(sql, *args))

    return run
