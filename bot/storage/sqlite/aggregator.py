"""The aggregates' writer: the thread that owns the aggregates' file (aggregates_file.py).

It opens the answers' file with the aggregates attached read-write, migrates both, and runs:
- the materializer (materializer.py) between its batches, in transactions that write the
  aggregates' file only: they take its lock, never the answers' one, and read the answers at
  a snapshot (WAL), so the answers' writer never waits for them;
- the writes of both files (SqliteStorage routes them here: a person's deletion, a chat's
  move, a refit's replay of cards, the week's roll, the replays a migration left), one batch
  each transaction as writer.py runs them, under both locks (BEGIN IMMEDIATE), the file
  marked dirty before and clean in the same transaction, so a crash between the two files'
  commits is found at the next open.
"""

from __future__ import annotations

import sqlite3

from bot.storage.sqlite import aggregates_file
from bot.storage.sqlite.connection import APPLICATION_ID
from bot.storage.sqlite.worker import Call, Outcome
from bot.storage.sqlite.writer import Writer


class Aggregator(Writer):
    role = "sqlite-aggregates"

    def open_connection(self) -> sqlite3.Connection:
        return aggregates_file.connect(self.path)

    def prepare(self, db: sqlite3.Connection) -> None:
        aggregates_file.open_aggregates(db, self.path, APPLICATION_ID)

    def run_batch(self, db: sqlite3.Connection, batch: list[Call]) -> list[Outcome]:
        try:
            aggregates_file.mark_dirty(db)
        except sqlite3.Error as exc:  # e.g. the lock held past busy_timeout: nothing written
            return [(future, False, exc) for _, _, future in batch]
        return super().run_batch(db, batch)

    def before_commit(self, db: sqlite3.Connection) -> None:
        db.execute(aggregates_file.CLEAR_DIRTY)
