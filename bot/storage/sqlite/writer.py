"""The writer thread: group commit, one transaction per batch, answers in one statement.

Every write is a plain function `op(connection, *args)` run in this thread. Whatever the event
loop queued while the previous transaction was committing becomes the next batch:

    BEGIN IMMEDIATE
      SAVEPOINT op; op1(db); RELEASE op      -- a failing op is rolled back to its savepoint
      SAVEPOINT op; op2(db); RELEASE op      -- and fails alone; its neighbours still commit
      ...
    COMMIT                                   -- one fsync (WAL, synchronous=FULL)

and only then are the batch's futures resolved, all with one `call_soon_threadsafe`: nothing is
acknowledged before it is durable.

A run of queued calls of one batched op (one with a `many` method: the answer's write,
sqlite/ops.py) is ONE call instead, `op.many(db, [args, ...])`, one statement for the whole
run, each call still getting its own outcome; only if that statement fails is each call of the
run written again in a savepoint of its own, as above.

If BEGIN or COMMIT fails (or SQLite abandons the whole transaction), every op of the batch
fails with that error and nothing of it is committed.

The connection is opened in the thread, after the file has been checked to be ours and before
the schema is migrated (see connection.py); a `Housekeeper` (the materializer) may run its own
transactions in the thread between batches.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from bot import metrics
from bot.storage.sqlite import aggregates_file
from bot.storage.sqlite.connection import APPLICATION_ID, PRAGMAS, check_ours
from bot.storage.sqlite.migrations import migrate
from bot.storage.sqlite.worker import Call, Outcome, Worker

log = logging.getLogger(__name__)


class Housekeeper(Protocol):
    """Work the writer thread does between batches, in transactions of its own."""

    def start(self, db: sqlite3.Connection) -> None: ...
    def batch_took(self, seconds: float) -> None: ...
    def due_in(self) -> float | None: ...
    def run(self, db: sqlite3.Connection, idle: bool) -> None: ...
    def finish(self, db: sqlite3.Connection) -> None: ...


OPEN_PATIENCE = 10.0  # seconds another process may hold a new file while creating it
# Housekeeping that failed (a full disk, "out of system resource") waits before it is tried
# again, twice as long after each failure in a row, up to the ceiling: retried at once, it
# spun the writer thread and logged tens of thousands of tracebacks a minute.
RETRY_FIRST = 0.5
RETRY_CEILING = 60.0


def retry_delay(failures: int) -> float:
    """Seconds to wait after `failures` failures in a row (at least one)."""
    return min(RETRY_CEILING, RETRY_FIRST * 2.0 ** min(failures - 1, 32))


class Writer(Worker):
    role = "sqlite-writer"

    def __init__(
        self, path: Path, housekeeper: Housekeeper | None = None,
        aggregates: bool = False, after_batch: Callable[[], None] | None = None,
    ) -> None:
        """`aggregates`: attach the aggregates' file read-only (aggregates_file.py: it is
        written by its own thread); `after_batch`: called in the thread after each batch
        committed (or failed)."""
        super().__init__(path)
        self.housekeeper = housekeeper
        self.aggregates = aggregates
        self.after_batch = after_batch
        self.batches = 0  # transactions committed for queued writes (for tests and bench)
        self.housekeeping_failures = 0  # in a row
        self._retry_at = 0.0  # time.monotonic() before which housekeeping is not tried

    def open_connection(self) -> sqlite3.Connection:
        if self.aggregates:
            return aggregates_file.connect(self.path)
        return sqlite3.connect(self.path, isolation_level=None)

    def prepare(self, db: sqlite3.Connection) -> None:
        """Bring the file to the newest schema (the aggregates' writer: both files)."""
        migrate(db, APPLICATION_ID)
        if self.aggregates:
            aggregates_file.attach(db, self.path, read_only=True)

    def connect(self) -> sqlite3.Connection:
        db = self.open_connection()
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
                    self.prepare(db)
                    break
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) or time.monotonic() > give_up:
                        raise
                    time.sleep(0.05)
            if self.housekeeper is not None:
                self.housekeeper.start(db)
            if self.role == Writer.role:
                # read at each scrape: the writes the loop queued that no batch has taken yet
                metrics.WRITER_QUEUE.set_function(lambda: len(self._queue))
        except BaseException:
            db.close()
            raise
        return db

    def run_batch(self, db: sqlite3.Connection, batch: list[Call]) -> list[Outcome]:
        metrics.WRITER_BATCH.observe(len(batch))
        started = time.perf_counter()
        outcomes = self._transaction(db, batch)
        if self.housekeeper is not None:  # how long a batch holds the writer, commit included
            self.housekeeper.batch_took(time.perf_counter() - started)
        if self.after_batch is not None:
            self.after_batch()
        return outcomes

    def before_commit(self, db: sqlite3.Connection) -> None:
        """The last statements of a batch's transaction."""

    def _transaction(self, db: sqlite3.Connection, batch: list[Call]) -> list[Outcome]:
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:  # e.g. another process held the lock past busy_timeout
            log.error("write transaction could not start (%s); %d writes failed", exc,
                      len(batch))
            return [(future, False, exc) for _, _, future in batch]
        outcomes: list[Outcome] = []
        try:
            i = 0
            while i < len(batch):
                fn = batch[i][0]
                end = i + 1
                if hasattr(fn, "many"):  # a run of the same batched op: one call
                    while end < len(batch) and batch[end][0] is fn:
                        end += 1
                    outcomes.extend(self._run_many(db, fn, batch[i:end]))
                else:
                    outcomes.append(self._run_one(db, batch[i]))
                i = end
            self.before_commit(db)
            db.execute("COMMIT")
        except Exception as exc:
            log.exception("write transaction failed; %d writes not committed", len(batch))
            if db.in_transaction:
                db.execute("ROLLBACK")
            return [(future, False, exc) for _, _, future in batch]
        self.batches += 1
        return outcomes

    @staticmethod
    def _run_one(db: sqlite3.Connection, call: Call) -> Outcome:
        fn, args, future = call
        db.execute("SAVEPOINT op")
        try:
            value = fn(db, *args)
        except Exception as exc:  # this write fails alone
            db.execute("ROLLBACK TO op")  # raises if SQLite abandoned the transaction
            db.execute("RELEASE op")
            return future, False, exc
        db.execute("RELEASE op")
        return future, True, value

    def _run_many(self, db: sqlite3.Connection, fn: Any, calls: list[Call]) -> list[Outcome]:
        """A run of one batched op (`fn.many(db, [args, ...])` -> [(ok, value), ...]): one
        call, whose statements leave nothing behind when they fail; then, and only then,
        each write again in a savepoint of its own, so one bad write fails alone."""
        try:
            results = fn.many(db, [args for _, args, _ in calls])
        except Exception as exc:
            if not db.in_transaction:
                raise  # the whole transaction is gone: every write of the batch fails
            log.info("a batch of %d %s failed (%s); written one by one", len(calls),
                     getattr(fn, "__name__", "writes"), exc)
            return [self._run_one(db, call) for call in calls]
        return [(future, ok, value) for (_, _, future), (ok, value) in zip(calls, results,
                                                                           strict=True)]

    def idle_timeout(self) -> float | None:
        if self.housekeeper is None:
            return None
        due = self.housekeeper.due_in()
        waiting = self._retry_at - time.monotonic()
        if waiting > 0:
            return waiting if due is None else max(due, waiting)
        return due

    def housekeeping(self, db: sqlite3.Connection, idle: bool) -> None:
        if self.housekeeper is None or time.monotonic() < self._retry_at:
            return
        try:
            self.housekeeper.run(db, idle)
        except Exception as exc:
            self.housekeeping_failures += 1
            delay = retry_delay(self.housekeeping_failures)
            self._retry_at = time.monotonic() + delay
            if self.housekeeping_failures == 1:
                log.exception("housekeeping failed; tried again in %g s, then less often",
                              delay)
            else:
                log.warning("housekeeping failed again (%d in a row: %s); tried again in "
                            "%g s", self.housekeeping_failures, exc, delay)
            try:
                if db.in_transaction:
                    db.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # the next transaction finds out
        else:
            if self.housekeeping_failures:
                log.info("housekeeping works again after %d failures",
                         self.housekeeping_failures)
            self.housekeeping_failures = 0

    def before_close(self, db: sqlite3.Connection) -> None:
        if self.housekeeper is not None:
            try:
                self.housekeeper.finish(db)
            except Exception:
                log.exception("housekeeping at close failed; it runs at the next start")
                if db.in_transaction:
                    db.execute("ROLLBACK")
