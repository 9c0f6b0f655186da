"""The core's unit tests' store: SQLite's own store (bot/storage/sqlite/storage.py and every
operation written once) on an in-memory database, run in the event loop instead of the
writer and reader threads.

The core needs a store, not a database file: this one is the real one's code, so there is no
second implementation of any operation to keep in step. What it leaves out is what the
storage contract suite, the file-backed tests and the crash tests cover: the threads, WAL,
fsync, several connections.

- The schema is migrated once per test process (`_template`) and copied into each new
  database with SQLite's backup API, which takes about a millisecond.
- Several stores on one `LoopDatabase` are several processes on one database (each with its
  own caches and its own materializer's position), as the storage's users see them.
- A write runs at once, as the writer thread would run a batch of one: a transaction, a
  savepoint, COMMIT (writer.py's own `run_batch`). Reads run on the same connection. Either
  resolves its future at the loop's next turn, as the threads' results arrive: the caller
  waits, and others run meanwhile, as they would.
- The aggregates (boards, streaks, cards, figures) are applied before a read whenever some
  answer is not yet applied, so a test never waits for the materializer's interval.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.storage.sqlite import ops
from bot.storage.sqlite import storage as sqlite_storage
from bot.storage.sqlite.connection import APPLICATION_ID
from bot.storage.sqlite.materializer import Materializer
from bot.storage.sqlite.migrations import migrate
from bot.storage.sqlite.storage import SqliteStorage
from bot.storage.sqlite.worker import _settle
from bot.storage.sqlite.writer import Writer

MEMORY = Path(":memory:")


@functools.cache
def _template() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    migrate(db, APPLICATION_ID)
    return db


class LoopDatabase:
    """One in-memory database, a copy of the migrated template."""

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        _template().backup(self.db)
        self.db.execute("PRAGMA foreign_keys=ON")
        self.writes = 0  # by every store on it: a store catches up only after one

    def close(self) -> None:
        self.db.close()


class LoopStorage(SqliteStorage):
    """SqliteStorage with its threads replaced by the event loop."""

    def __init__(self, database: LoopDatabase | None = None,
                 materializer: Materializer | None = None) -> None:
        super().__init__(MEMORY, materializer)
        self._own = database is None
        self.database = database or LoopDatabase()
        self._loop_writer: Writer | None = None
        self._caught_up = -1  # the database's writes when this store last caught up

    async def open(self) -> None:
        db = self.database.db
        self._loop_writer = Writer(MEMORY, self.materializer)
        self.materializer.start(db)
        self._answers = ops.AnswerWrites(self.materializer.noted)
        await self._count_cards()

    async def close(self) -> None:
        writer, self._loop_writer = self._loop_writer, None
        if writer is not None:
            self.materializer.finish(self.database.db)
        if self._own:
            self.database.close()

    async def materialize(self) -> None:
        self._catch_up()

    def _catch_up(self) -> None:
        if self._loop_writer is None:
            raise RuntimeError("storage is not open")
        if self._caught_up != self.database.writes:
            self.materializer.catch_up(self.database.db)
            self._caught_up = self.database.writes

    def _write(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        writer = self._loop_writer
        if writer is None:
            raise RuntimeError("storage is not open")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        call = (sqlite_storage._in_thread(fn), args, future)
        self.database.writes += 1
        loop.call_soon(_settle, writer.run_batch(self.database.db, [call]))
        return future

    def _read(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        self._catch_up()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        try:
            outcome = (future, True, sqlite_storage._in_thread(fn)(self.database.db, *args))
        except Exception as exc:
            if self.database.db.in_transaction:
                self.database.db.execute("ROLLBACK")
            outcome = (future, False, exc)
        loop.call_soon(_settle, [outcome])
        return future
