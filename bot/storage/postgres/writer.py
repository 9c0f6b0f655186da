"""The writer task: group commit on one connection.

Every write is a coroutine `op(connection, *args)`. Whatever the event loop queued while the
previous batch was committing becomes the next batch. Answers, the hot path, are written
together: an op with a batch form (`batched`, e.g. record_answer's record_answers) is run for
all its queued calls by one statement, sent outside BEGIN/COMMIT so that it is a transaction
of its own, committed before the server answers: one round trip for the whole batch. The
other ops share one transaction, one savepoint each:

    record_answers([a1, a2, ...])           -- one statement, its own transaction
    BEGIN; SAVEPOINT op                     -- one round trip
      op1(db)                               -- a failing op is rolled back to its savepoint
    RELEASE SAVEPOINT op; SAVEPOINT op      -- and fails alone; its neighbours still commit
      op2(db)
      ...
    COMMIT

Only after a part has committed are its futures resolved: nothing is acknowledged before it
is durable. If the batch statement fails as a whole (one answer breaks a constraint), each of
its calls is run again alone, each its own transaction, so the bad one gets its own error and
the rest commit. If BEGIN or COMMIT fails, or the connection is lost, every op not yet
committed fails with that error (the next batch gets a new connection). An op that lost a
deadlock or a serialization conflict to another process is run again in the next batch (the
other transaction holds its locks until it commits, so retrying inside this one would meet it
again).

A transaction holds at most MAX_BATCH ops with savepoints: PostgreSQL keeps the ids of 64
subtransactions per transaction in shared memory, and a transaction with more makes every
other session's snapshots slower while it runs. A batch statement takes up to MAX_ROWS calls
(it has no savepoints).

Ops never open transactions themselves (the writer drives them with plain SQL, which asyncpg
does not track).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import asyncpg

from bot.storage.postgres.sql import PgSql
from bot.storage.sql import Sql

log = logging.getLogger(__name__)
T = TypeVar("T")
Db = Any  # an asyncpg.Connection

MAX_BATCH = 64  # ops with a savepoint in one transaction
MAX_ROWS = 512  # calls of an op with a batch form in one statement
RETRIES = 5  # times an op that lost a deadlock or a serialization conflict is run again
# SQLSTATEs of a conflict with another transaction that the same op may win next time
RETRYABLE = {"40001", "40P01", "55P03"}
# an error of this class means the connection (or the server) is gone: reconnect
CONNECTION_ERRORS = (
    asyncpg.exceptions.ConnectionDoesNotExistError,
    asyncpg.exceptions.InterfaceError,
    asyncpg.exceptions.CannotConnectNowError,
    asyncpg.exceptions.AdminShutdownError,
    ConnectionError,
    OSError,
)


Outcome = tuple[bool, Any]  # (True, the result) or (False, the exception)
# an op's batch form: its calls' arguments in, one Outcome per call out (a call that fails
# alone); raising fails the statement, and each call is then run alone by the op itself
BatchFn = Callable[[Any, list[tuple[Any, ...]]], Awaitable[list[Outcome]]]


class NotOpen(RuntimeError):
    def __init__(self) -> None:
        super().__init__("storage is not open")


class _Op:
    __slots__ = ("args", "fn", "future", "tries")

    def __init__(self, fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...],
                 future: asyncio.Future[Any]) -> None:
        self.fn = fn
        self.args = args
        self.future = future
        self.tries = 0


class Writer:
    def __init__(
        self, connect: Callable[[], Awaitable[Db]],
        on_commit: Callable[[list[tuple[_Op, Any]]], None] | None = None,
        lock_keys: Mapping[Callable[..., Awaitable[Any]], Callable[..., tuple[str, ...]]]
        | None = None,
        batched: Mapping[Callable[..., Awaitable[Any]], BatchFn] | None = None,
    ) -> None:
        """`connect` opens the writer's connection (again after it was lost); `on_commit`
        sees each committed part's (op, result) pairs before the futures resolve;
        `lock_keys` gives ops the key of the first row they lock, the order a batch runs
        them in (ops without one run after them, in the order they came); `batched` gives
        ops their batch form."""
        self._connect = connect
        self._on_commit = on_commit
        self._lock_keys = lock_keys or {}
        self._batched = batched or {}
        self._db: Db | None = None
        self._queue: list[_Op] = []
        self._wake = asyncio.Event()
        self._accepting = False
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self.batches = 0  # transactions committed for queued writes (for tests and bench)
        self.statements = 0  # batch statements run (for tests and bench)

    async def start(self) -> None:
        self._db = await self._connect()
        self._accepting = True
        self._task = asyncio.create_task(self._run(), name="quizbot-pg-writer")

    def submit(self, fn: Callable[..., Awaitable[T]], *args: Any) -> asyncio.Future[T]:
        """Queue `fn(connection, *args)`; the future resolves once its transaction
        committed."""
        if not self._accepting:
            raise NotOpen()
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.append(_Op(fn, args, future))
        self._wake.set()
        return future

    async def close(self) -> None:
        """Stop taking writes, run what is queued, close the connection."""
        self._accepting = False
        self._closing = True
        self._wake.set()
        if self._task is not None:
            await self._task
            self._task = None
        if self._db is not None:
            try:
                await asyncio.wait_for(self._db.close(), 5)
            except Exception:
                self._db.terminate()
            self._db = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    # the task --------------------------------------------------------------------------
    async def _run(self) -> None:
        while True:
            if not self._queue:
                if self._closing:
                    return
                await self._wake.wait()
                self._wake.clear()
                continue
            batch = self._take()
            if self._lock_keys:
                batch = self._in_lock_order(batch)
            try:
                await self._batch(batch)
            except asyncio.CancelledError:
                for op in batch:
                    if not op.future.done():
                        op.future.set_exception(NotOpen())
                raise
            except Exception:  # never leave a caller waiting
                log.exception("write batch failed")
                for op in batch:
                    if not op.future.done():
                        op.future.set_exception(NotOpen())

    def _take(self) -> list[_Op]:
        """The next batch: what is queued, up to MAX_BATCH ops run with a savepoint and
        MAX_ROWS in all."""
        with_savepoint = 0
        taken = 0
        for op in self._queue[:MAX_ROWS]:
            if op.fn not in self._batched:
                if with_savepoint == MAX_BATCH:
                    break
                with_savepoint += 1
            taken += 1
        batch, self._queue = self._queue[:taken], self._queue[taken:]
        return batch

    def _in_lock_order(self, batch: list[_Op]) -> list[_Op]:
        keyed: list[tuple[tuple[str, ...], int, _Op]] = []
        rest: list[_Op] = []
        for i, op in enumerate(batch):
            key = self._lock_keys.get(op.fn)
            if key is None:
                rest.append(op)
            else:
                keyed.append((key(*op.args), i, op))
        keyed.sort(key=lambda k: (k[0], k[1]))
        return [op for _, _, op in keyed] + rest

    async def _batch(self, batch: list[_Op]) -> None:
        together: dict[Callable[..., Awaitable[Any]], list[_Op]] = {}
        alone: list[_Op] = []
        for op in batch:
            if op.fn in self._batched:
                together.setdefault(op.fn, []).append(op)
            else:
                alone.append(op)
        pending = set(batch)
        try:
            db = await self._connection()
            # answers first: the hot path waits for nothing else
            for fn, ops in together.items():
                self._finish(await self._together(db, self._batched[fn], ops), pending)
            if alone:
                self._finish(await self._transaction(db, alone), pending)
        except Exception as exc:
            if isinstance(exc, CONNECTION_ERRORS):
                await self._drop_connection()
            log.error("write transaction failed (%s); %d writes not committed",
                      exc, len(pending))
            for op in batch:
                if op in pending:
                    _settle(op.future, False, exc)

    def _finish(self, outcomes: list[tuple[_Op, bool, Any]], pending: set[_Op]) -> None:
        """A part of the batch committed: settle its ops (or queue them again)."""
        self.batches += 1
        retry: list[_Op] = []
        done: list[tuple[_Op, Any]] = []
        for op, ok, value in outcomes:
            pending.discard(op)
            if not ok and _retryable(value) and op.tries < RETRIES:
                op.tries += 1
                retry.append(op)
                log.info("%s lost a lock conflict with another transaction (%s); it runs "
                         "again in the next one", getattr(op.fn, "__name__", op.fn),
                         value.sqlstate)
            elif ok:
                done.append((op, value))
        if self._on_commit is not None and done:
            try:
                self._on_commit(done)
            except Exception:
                log.exception("after-commit hook failed")
        for op, ok, value in outcomes:
            if op not in retry:
                _settle(op.future, ok, value)
        if retry:
            self._queue[:0] = retry  # first in the next batch

    async def _together(
        self, db: Db, batch_fn: BatchFn, ops: list[_Op]
    ) -> list[tuple[_Op, bool, Any]]:
        """Every call of one op by one statement (its own transaction, no BEGIN); if that
        fails, each call alone, each its own transaction."""
        sql: Sql = PgSql(db)
        self.statements += 1
        try:
            results = await batch_fn(sql, [op.args for op in ops])
        except CONNECTION_ERRORS:
            raise
        except Exception as exc:
            log.info("a batch of %d writes failed (%s); each is written alone", len(ops), exc)
        else:
            return [(op, ok, value) for op, (ok, value) in zip(ops, results, strict=True)]
        outcomes: list[tuple[_Op, bool, Any]] = []
        for op in ops:
            try:
                value = await op.fn(sql, *op.args)
            except CONNECTION_ERRORS:
                raise
            except Exception as exc:  # this write fails alone
                outcomes.append((op, False, exc))
            else:
                outcomes.append((op, True, value))
        return outcomes

    async def _transaction(self, db: Db, batch: list[_Op]) -> list[tuple[_Op, bool, Any]]:
        """One transaction for the batch; (op, ok, result or exception) per op."""
        outcomes: list[tuple[_Op, bool, Any]] = []
        execute = db.execute
        sql: Sql = PgSql(db)  # the ops' view of the connection (bot/storage/sql.py)
        begun = False
        try:
            await execute("BEGIN; SAVEPOINT op")
            begun = True
            for i, op in enumerate(batch):
                if i:
                    await execute("RELEASE SAVEPOINT op; SAVEPOINT op")
                try:
                    value = await op.fn(sql, *op.args)
                except CONNECTION_ERRORS:
                    raise
                except Exception as exc:  # this write fails alone
                    await execute("ROLLBACK TO SAVEPOINT op")
                    outcomes.append((op, False, exc))
                else:
                    outcomes.append((op, True, value))
            await execute("COMMIT")
        except BaseException:
            if begun and not db.is_closed():
                try:
                    await asyncio.shield(db.execute("ROLLBACK"))
                except Exception:
                    await self._drop_connection()
            raise
        return outcomes

    async def _connection(self) -> Db:
        if self._db is None or self._db.is_closed():
            self._db = await self._connect()
        return self._db

    async def _drop_connection(self) -> None:
        db, self._db = self._db, None
        if db is not None and not db.is_closed():
            db.terminate()


def _retryable(exc: object) -> bool:
    return isinstance(exc, asyncpg.PostgresError) and exc.sqlstate in RETRYABLE


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():  # the caller gave up
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
