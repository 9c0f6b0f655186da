"""The reader thread: queries on a second connection, one hop per call.

A read is a plain function `fn(connection, *args)` run in this thread, so a read of several
statements (a leaderboard: its top rows, the caller's row and rank) is still one hop, and
`snapshot()` makes them see one consistent state. Reads queued together are resolved with one
`call_soon_threadsafe`. WAL lets this connection read while the writer writes; it never sees
uncommitted rows, and sees every write whose future has resolved.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.storage.sqlite import aggregates_file
from bot.storage.sqlite.connection import READ_PRAGMAS
from bot.storage.sqlite.worker import Call, Outcome, Worker


class Reader(Worker):
    role = "sqlite-reader"

    def __init__(self, path: Path, aggregates: bool = False) -> None:
        """`aggregates`: attach the aggregates' file read-only (aggregates_file.py)."""
        super().__init__(path)
        self.aggregates = aggregates

    def connect(self) -> sqlite3.Connection:
        db = aggregates_file.connect(self.path)
        try:
            for pragma in READ_PRAGMAS:
                db.execute(pragma)
            if self.aggregates:
                aggregates_file.attach(db, self.path, read_only=True)
        except BaseException:
            db.close()
            raise
        return db

    def run_batch(self, db: sqlite3.Connection, batch: list[Call]) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for fn, args, future in batch:
            try:
                outcomes.append((future, True, fn(db, *args)))
            except Exception as exc:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                outcomes.append((future, False, exc))
        return outcomes


@contextmanager
def snapshot(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Several statements that must see the same committed state."""
    db.execute("BEGIN")
    try:
        yield db
    finally:
        db.execute("COMMIT")
