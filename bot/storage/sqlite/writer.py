"""The writer thread: group commit, one transaction per batch, one savepoint per write.

Every write is a plain function `op(connection, *args)` run in this thread. Whatever the event
loop queued while the previous transaction was committing becomes the next batch:

    BEGIN IMMEDIATE
      SAVEPOINT op; op1(db); RELEASE op      -- a failing op is rolled back to its savepoint
      SAVEPOINT op; op2(db); RELEASE op      -- and fails alone; its neighbours still commit
      ...
    COMMIT                                   -- one fsync (WAL, synchronous=FULL)

and only then are the batch's futures resolved, all with one `call_soon_threadsafe`: nothing is
acknowledged before it is durable. If BEGIN or COMMIT fails (or SQLite abandons the whole
transaction), every op of the batch fails with that error and nothing of it is committed.

The connection is opened in the thread, after the file has been checked to be ours and before
the schema is migrated (see connection.py); a `Housekeeper` (the materializer) may run its own
transactions in the thread between batches.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path
from typing import Protocol

from bot import metrics
from bot.storage.sqlite.connection import APPLICATION_ID, PRAGMAS, check_ours
from bot.storage.sqlite.migrations import migrate
from bot.storage.sqlite.worker import Call, Outcome, Worker

log = logging.getLogger(__name__)


class Housekeeper(Protocol):
    """Work the writer thread does between batches, in transactions of its own."""

    def start(self, db: sqlite3.Connection) -> None: ...
    def due_in(self) -> float | None: ...
    def run(self, db: sqlite3.Connection, idle: bool) -> None: ...
    def finish(self, db: sqlite3.Connection) -> None: ...


OPEN_PATIENCE = 10.0  # seconds another process may hold a new file while creating it


class Writer(Worker):
    role = "sqlite-writer"

    def __init__(self, path: Path, housekeeper: Housekeeper | None = None) -> None:
        super().__init__(path)
        self.housekeeper = housekeeper
        self.batches = 0  # transactions committed for queued writes (for tests and bench)

    def connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None)
        try:
            # Processes starting together on a new file: switching to WAL can be refused at
            # once ("database is locked", SQLite does not wait for that lock) while another
            # one is creating the schema, so the start is tried again for a while.
            give_up = time.monotonic() + OPEN_PATIENCE
            while True:
                try:
                    check_ours(db, self.path)  # before anything writes to the file
                    for pragma in PRAGMAS:
                        db.execute(pragma)
                    migrate(db, APPLICATION_ID)
                    break
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) or time.monotonic() > give_up:
                        raise
                    time.sleep(0.05)
            if self.housekeeper is not None:
                self.housekeeper.start(db)
            # read at each scrape: the writes the loop queued that no batch has taken yet
            metrics.WRITER_QUEUE.set_function(lambda: len(self._queue))
        except BaseException:
            db.close()
            raise
        return db

    def run_batch(self, db: sqlite3.Connection, batch: list[Call]) -> list[Outcome]:
        metrics.WRITER_BATCH.observe(len(batch))
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:  # e.g. another process held the lock past busy_timeout
            log.error("write transaction could not start (%s); %d writes failed", exc,
                      len(batch))
            return [(future, False, exc) for _, _, future in batch]
        outcomes: list[Outcome] = []
        execute = db.execute
        try:
            for fn, args, future in batch:
                execute("SAVEPOINT op")
                try:
                    value = fn(db, *args)
                except Exception as exc:  # this write fails alone
                    execute("ROLLBACK TO op")  # raises if SQLite abandoned the transaction
                    execute("RELEASE op")
                    outcomes.append((future, False, exc))
                else:
                    execute("RELEASE op")
                    outcomes.append((future, True, value))
            execute("COMMIT")
        except Exception as exc:
            log.exception("write transaction failed; %d writes not committed", len(batch))
            if db.in_transaction:
                db.execute("ROLLBACK")
            return [(future, False, exc) for _, _, future in batch]
        self.batches += 1
        return outcomes

    def idle_timeout(self) -> float | None:
        return None if self.housekeeper is None else self.housekeeper.due_in()

    def housekeeping(self, db: sqlite3.Connection, idle: bool) -> None:
        if self.housekeeper is not None:
            try:
                self.housekeeper.run(db, idle)
            except Exception:
                log.exception("housekeeping failed; it is tried again later")
                if db.in_transaction:
                    db.execute("ROLLBACK")

    def before_close(self, db: sqlite3.Connection) -> None:
        if self.housekeeper is not None:
            try:
                self.housekeeper.finish(db)
            except Exception:
                log.exception("housekeeping at close failed; it runs at the next start")
                if db.in_transaction:
                    db.execute("ROLLBACK")
