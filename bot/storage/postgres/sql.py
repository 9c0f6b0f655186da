"""The Sql of the operations written once (bot/storage/sql.py) on an asyncpg connection. The
connection's own methods stay reachable (`fetch`, `execute`, `transaction`...), for what is
PostgreSQL's own (ops.py, boards.py, the materializer)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

from bot.storage.sql import Row, typed_columns

# the channel other processes listen on to drop what they cached (storage.py); delivered at
# COMMIT, and never if the write is rolled back
CHANNEL = "quizbot_cache"


class PgSql:
    for_update = " FOR UPDATE"  # a row lock orders processes that read, then write

    def __init__(self, db: Any) -> None:
        self.db = db

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)  # the asyncpg connection's own API

    async def rows(self, sql: str, *args: Any) -> list[Row]:
        rows: list[Row] = await self.db.fetch(sql, *args)
        return rows

    async def row(self, sql: str, *args: Any) -> Row | None:
        row: Row | None = await self.db.fetchrow(sql, *args)
        return row

    async def value(self, sql: str, *args: Any) -> Any:
        return await self.db.fetchval(sql, *args)

    async def run(self, sql: str, *args: Any) -> int:
        status: str = await self.db.execute(sql, *args)  # e.g. "UPDATE 1", "INSERT 0 1"
        count = status.rsplit(" ", 1)[-1]
        return int(count) if count.isdigit() else 0

    async def lock(self, name: str) -> None:
        await self.db.execute("SELECT pg_advisory_xact_lock(hashtext($1))", name)

    async def notify(self, what: str, key: object) -> None:
        await self.db.execute("SELECT pg_notify($1, $2)", CHANNEL, f"{what}:{key}")

    async def upsert(self, table: str, columns: str, rows: Sequence[Sequence[Any]], key: str,
                     update: str) -> None:
        if not rows:
            return
        names, kinds = typed_columns(columns)
        arrays = ", ".join(f"${i + 1}::{kind}[]" for i, kind in enumerate(kinds))
        await self.db.execute(
            f"INSERT INTO {table}({', '.join(names)}) SELECT * FROM unnest({arrays})"
            f" ON CONFLICT ({key}) DO UPDATE SET {update}",
            *(list(column) for column in zip(*rows, strict=True)))

    async def breathe(self) -> None:
        await asyncio.sleep(0)

    def when(self, moment: datetime) -> datetime:
        return moment  # timestamptz

    def day(self, day: date) -> date:
        return day

    def array(self, values: Sequence[int] | Sequence[str]) -> list[Any]:
        return list(values)

    def at(self, stored: Any) -> datetime:
        moment: datetime = stored.astimezone(UTC)
        return moment

    def on(self, stored: Any) -> date:
        day: date = stored
        return day

    def ints(self, stored: Any) -> tuple[int, ...]:
        return tuple(int(i) for i in stored)

    def strs(self, stored: Any) -> tuple[str, ...]:
        return tuple(stored)
