"""A PostgreSQL database as one side of a copy (bot/storage/copy.py): read in key order (a
snapshot: in one REPEATABLE READ transaction), written batch by batch with the copy's progress
when it is the destination."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg

from bot.health import running_bot
from bot.i18n import translator
from bot.storage.copy_rows import PROGRESS, TABLES, Progress, Side, Table, key_json, key_of
from bot.storage.postgres.schema import version_of
from bot.storage.postgres.url import DatabaseUrl, redact

EN = translator("en")  # the operator's English, plurals through the catalog
LIVE_CHECKS = 4  # looks at a PostgreSQL source's other sessions, LIVE_WAIT s more apart each
LIVE_WAIT = 0.1


class PostgresSide(Side):
    def __init__(self, url: str, snapshot: bool = False) -> None:
        self.url = url
        self.where = redact(url)
        self.snapshot = snapshot
        self.db: Any = None

    async def connect(self) -> None:
        self.db = await asyncpg.connect(self.url)
        if self.snapshot:  # every read from here on sees the same moment
            await self.db.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")

    async def in_use(self) -> str | None:
        """Other sessions on the database (a bot's pool), checked a few times: one that was
        just closed takes a moment to leave pg_stat_activity. Then a heartbeat on this
        machine."""
        others = 0
        for attempt in range(LIVE_CHECKS):
            others = int(await self.db.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND backend_type = 'client backend'"))
            if not others:
                break
            await asyncio.sleep(LIVE_WAIT * (attempt + 1))
        if others:
            return EN.ngettext("{n} other session is connected to it",
                               "{n} other sessions are connected to it", others)
        return running_bot(DatabaseUrl(self.url))

    async def close(self) -> None:
        if self.db is not None:
            await self.db.close()
            self.db = None

    async def count(self, table: str) -> int:
        return int(await self.db.fetchval(f'SELECT count(*) FROM "{table}"'))

    async def tables(self) -> set[str]:
        rows = await self.db.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        )
        return {str(r[0]) for r in rows}

    async def batch(self, table: Table, after: tuple[Any, ...] | None,
                    limit: int) -> list[tuple[Any, ...]]:
        key = ", ".join(table.key)
        where = ""
        params: list[Any] = []
        if after is not None:
            marks = ", ".join(f"${i}" for i in range(1, len(table.key) + 1))
            where = f" WHERE ({key}) > ({marks})"
            params = list(after)
        rows = await self.db.fetch(
            f"SELECT {', '.join(table.columns)} FROM {table.name}{where}"
            f" ORDER BY {key} LIMIT ${len(params) + 1}", *params, limit,
        )
        return [tuple(list(v) if c in table.lists and v is not None else v
                      for c, v in zip(table.columns, row, strict=True)) for row in rows]

    async def write(self, table: Table, rows: list[tuple[Any, ...]],
                    progress: Progress, source: str) -> None:
        async with self.db.transaction():
            if rows:  # PostgreSQL's COPY: the fastest way in
                await self.db.copy_records_to_table(table.name, records=rows,
                                                    columns=list(table.columns))
            await self.db.execute(
                f"INSERT INTO {PROGRESS}(tbl, last_key, copied, done) VALUES ($1, $2, $3, $4)"
                " ON CONFLICT (tbl) DO UPDATE SET last_key = excluded.last_key,"
                " copied = excluded.copied, done = excluded.done",
                table.name, None if progress.last is None else key_json(progress.last),
                progress.copied, progress.done,
            )

    async def progress(self) -> tuple[str, dict[str, Progress]] | None:
        exists = await self.db.fetchval(
            "SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1",
            PROGRESS,
        )
        if not exists:
            return None
        source = ""
        found: dict[str, Progress] = {}
        for tbl, last, copied, done in await self.db.fetch(
            f"SELECT tbl, last_key, copied, done FROM {PROGRESS}"
        ):
            if tbl == "":
                source = str(last)
                continue
            table = next(t for t in TABLES if t.name == tbl)
            found[tbl] = Progress(None if last is None else key_of(table, last), copied,
                                  bool(done))
        return source, found

    async def start_progress(self, source: str) -> None:
        async with self.db.transaction():
            await self.db.execute(
                f"CREATE TABLE {PROGRESS} (tbl text PRIMARY KEY, last_key text,"
                " copied bigint NOT NULL, done boolean NOT NULL)"
            )
            await self.db.execute(f"INSERT INTO {PROGRESS} VALUES ('', $1, 0, false)", source)

    async def finish(self) -> None:
        """Ids go on after the copied ones."""
        async with self.db.transaction():
            for table in ("runs", "posts", "answers", "rounds", "problem_reports"):
                await self.db.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                    f" COALESCE(max(id), 1), max(id) IS NOT NULL) FROM {table}"
                )

    async def forget_progress(self) -> None:
        await self.db.execute(f"DROP TABLE IF EXISTS {PROGRESS}")

    async def empty(self) -> None:
        """Drop every table (the database is quizbot's: it opened as ours); the next open
        creates the schema again."""
        where = self.where
        await version_of(self.db, where)  # still ours
        tables = [r[0] for r in await self.db.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        )]
        if tables:
            await self.db.execute(
                "DROP TABLE " + ", ".join(f'"{t}"' for t in tables) + " CASCADE"
            )
        functions = [r[0] for r in await self.db.fetch(
            "SELECT p.oid::regprocedure::text FROM pg_proc AS p JOIN pg_namespace AS n"
            " ON n.oid = p.pronamespace WHERE n.nspname = current_schema()"
            " AND p.proname LIKE 'quizbot\\_%'"
        )]
        for function in functions:  # the schema's trigger functions
            await self.db.execute(f"DROP FUNCTION IF EXISTS {function} CASCADE")
