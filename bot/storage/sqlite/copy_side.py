"""A SQLite file as one side of a copy (bot/storage/copy.py): read in key order through a
read-only connection when it is the source, written batch by batch with the copy's progress
when it is the destination."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from bot.health import running_bot
from bot.storage.copy_rows import (
    PROGRESS,
    TABLES,
    Progress,
    Side,
    Table,
    from_ms,
    key_json,
    key_of,
    to_ms,
)
from bot.storage.sqlite import aggregates_file
from bot.storage.sqlite.migrations import MIGRATIONS
from bot.storage.sqlite.verify import open_read_only


class SqliteSide(Side):
    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        self.where = str(path)
        self.read_only = read_only

    def up_to_date(self) -> bool:
        """Nothing for its Storage to do (newest schema, every answer in the boards): then
        the copy only reads it, through a read-only connection."""
        try:
            db = open_read_only(self.path)
            try:
                aggregates_file.attach_if_apart(db, self.path, read_only=True)
                if int(db.execute("PRAGMA user_version").fetchone()[0]) != len(MIGRATIONS):
                    return False
                top = db.execute("SELECT COALESCE(max(id), 0) FROM answers").fetchone()[0]
                applied = db.execute(
                    "SELECT position FROM materialized WHERE name = 'scores'").fetchone()
                return applied is not None and int(applied[0]) >= int(top)
            finally:
                db.close()
        except sqlite3.Error:
            return False
        self.db: sqlite3.Connection | None = None

    async def in_use(self) -> str | None:
        return running_bot(self.path)

    async def connect(self) -> None:
        if self.read_only:  # a source: never created, never written
            self.db = open_read_only(self.path)
            aggregates_file.attach_if_apart(self.db, self.path, read_only=True)
            return
        self.db = sqlite3.connect(self.path, isolation_level=None)
        aggregates_file.attach_if_apart(self.db, self.path, read_only=False)
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("PRAGMA busy_timeout=10000")

    async def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

    def _db(self) -> sqlite3.Connection:
        assert self.db is not None
        return self.db

    async def count(self, table: str) -> int:
        return int(self._db().execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    async def tables(self) -> set[str]:
        rows = self._db().execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {str(r[0]) for r in rows}

    async def batch(self, table: Table, after: tuple[Any, ...] | None,
                    limit: int) -> list[tuple[Any, ...]]:
        key = ", ".join(table.key)
        where = ""
        params: list[Any] = []
        if after is not None:
            where = f" WHERE ({key}) > ({', '.join('?' for _ in table.key)})"
            params = [v.isoformat() if isinstance(v, date) else v for v in after]
        rows = self._db().execute(
            f"SELECT {', '.join(table.columns)} FROM {table.name}{where}"
            f" ORDER BY {key} LIMIT ?", (*params, limit),
        ).fetchall()
        convert = self._readers(table)
        return [tuple(f(v) for f, v in zip(convert, row, strict=True)) for row in rows]

    @staticmethod
    def _readers(table: Table) -> list[Callable[[Any], Any]]:
        def one(column: str) -> Callable[[Any], Any]:
            if column in table.times:
                return from_ms
            if column in table.dates:
                return lambda v: None if v is None else date.fromisoformat(v)
            if column in table.lists:
                return lambda v: None if v is None else list(json.loads(v))
            if column in table.flags:
                return lambda v: None if v is None else bool(v)
            return lambda v: v
        return [one(c) for c in table.columns]

    @staticmethod
    def _writers(table: Table) -> list[Callable[[Any], Any]]:
        def one(column: str) -> Callable[[Any], Any]:
            if column in table.times:
                return to_ms
            if column in table.dates:
                return lambda v: None if v is None else v.isoformat()
            if column in table.lists:
                return lambda v: None if v is None else json.dumps(list(v))
            if column in table.flags:
                return lambda v: None if v is None else int(v)
            return lambda v: v
        return [one(c) for c in table.columns]

    async def write(self, table: Table, rows: list[tuple[Any, ...]],
                    progress: Progress, source: str) -> None:
        db = self._db()
        convert = self._writers(table)
        marks = ", ".join("?" for _ in table.columns)
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany(
                f"INSERT INTO {table.name}({', '.join(table.columns)}) VALUES ({marks})",
                [tuple(f(v) for f, v in zip(convert, row, strict=True)) for row in rows],
            )
            db.execute(
                f"INSERT INTO {PROGRESS}(tbl, last_key, copied, done) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(tbl) DO UPDATE SET last_key=excluded.last_key,"
                " copied=excluded.copied, done=excluded.done",
                (table.name, None if progress.last is None else key_json(progress.last),
                 progress.copied, int(progress.done)),
            )
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    async def progress(self) -> tuple[str, dict[str, Progress]] | None:
        db = self._db()
        if db.execute("SELECT 1 FROM sqlite_master WHERE name=?", (PROGRESS,)).fetchone() is None:
            return None
        source = ""
        found: dict[str, Progress] = {}
        for tbl, last, copied, done in db.execute(
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
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        db.execute(
            f"CREATE TABLE {PROGRESS} (tbl TEXT PRIMARY KEY, last_key TEXT,"
            " copied INTEGER NOT NULL, done INTEGER NOT NULL)"
        )
        db.execute(f"INSERT INTO {PROGRESS} VALUES ('', ?, 0, 0)", (source,))
        db.execute("COMMIT")

    async def finish(self) -> None:
        """SQLite's ids go on after the largest one by themselves."""

    async def forget_progress(self) -> None:
        self._db().execute(f"DROP TABLE IF EXISTS {PROGRESS}")

    async def empty(self) -> None:
        """Remove the file (it is quizbot's: it opened as ours); the next open creates it."""
        await self.close()
        _remove(self.path)


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    aggregates_file.remove(path)
