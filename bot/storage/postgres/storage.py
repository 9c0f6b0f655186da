"""PostgresStorage: the core's storage ports (bot/core/ports/) on a PostgreSQL database.

The same guarantees as SqliteStorage, for any number of processes on one database:
- schema.py        versioned migrations, run at open under pg_advisory_xact_lock; a database
                   that is another program's, or a newer quizbot's, is refused untouched
- writer.py        one connection, group commit (a batch of answers in one statement, the
                   other writes a savepoint each), acknowledged after COMMIT
- materializer.py  the boards' aggregates, applied in batches by a task of its own with its
                   position stored in the same transaction; rank_counts.py the per-score
                   counts of the boards, kept by every writer of the aggregates
- sql.py           the Sql the operations written once run on (bot/storage/sql.py)
- ops.py           PostgreSQL's own writes (recording an answer, claiming the daily post,
                   moving a chat) and the order writes take their locks in; boards.py its
                   reads of the boards (on a pool of connections)

The operations both databases share are written once (bot/storage/store.py); this class adds
the lifecycle, the writer, the pool, the listener, and what is PostgreSQL's own.

What a process caches (people, chats, posts, languages) is bounded, and dropped when another
process changes it: those writes NOTIFY on a channel every process LISTENs to (delivered at
COMMIT). A notification lost with a connection costs at most the languages' TTL; a cached post
that missed a close is harmless, since record_answer checks the post in the database.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import date, datetime
from types import ModuleType
from typing import Any, ClassVar, TypeVar

import asyncpg

from bot.core.ports import (
    AnswerRecord,
    NewPost,
    PostRecord,
    RecordOutcome,
    StorageError,
)
from bot.storage.postgres import boards, ops
from bot.storage.postgres.materializer import LOCK_POSITION, Materializer, Position, roll_week
from bot.storage.postgres.schema import migrate
from bot.storage.postgres.sql import CHANNEL, PgSql
from bot.storage.postgres.url import DatabaseUrl, redact
from bot.storage.postgres.writer import Writer
from bot.storage.store import Store

log = logging.getLogger(__name__)


T = TypeVar("T")
Db = Any  # an asyncpg.Connection

POOL_SIZE = 8  # read connections; each process also has a writer, a materializer, a listener
CONNECT_TIMEOUT = 10.0
SLOTS_WAIT = 2.0  # s a read waits for a pooled connection when the server has no free slot


def unusable(where: str, exc: BaseException) -> StorageError:
    """One line naming the database (password hidden) and the reason."""
    if isinstance(exc, asyncpg.InvalidCatalogNameError):
        reason = f"{exc} (create it first, e.g. createdb)"
    elif isinstance(exc, OSError) and not isinstance(exc, TimeoutError):
        reason = f"{exc.strerror or exc} (is PostgreSQL running there?)"
    elif isinstance(exc, TimeoutError):
        reason = "no answer from the server (timed out)"
    else:
        reason = str(exc) or type(exc).__name__
    reason = " ".join(reason.split())  # one line
    return StorageError(f"cannot use the database {where}: {reason}")


class PostgresStorage(Store):
    boards: ClassVar[ModuleType] = boards
    migrate_chat_op = staticmethod(ops.migrate_chat)
    delete_person_op = staticmethod(ops.delete_person)

    def __init__(
        self, url: str | DatabaseUrl, materializer: Materializer | None = None,
        pool_size: int = POOL_SIZE,
    ) -> None:
        self.url = url.get_secret_value() if isinstance(url, DatabaseUrl) else url
        self.where = redact(self.url)  # what error lines and logs show
        self.materializer = materializer or Materializer()
        self.pool_size = pool_size
        self._acknowledged: Position = (0, 0)  # the newest answer this process acknowledged
        self._writer: Writer | None = None
        self._pool: Any = None
        self._slots_warned = False  # "no free connection slot" is logged once per process
        self._listener: Db | None = None
        self._relisten: asyncio.Future[None] | None = None
        super().__init__()  # the caches (cached_storage.py)

    def __repr__(self) -> str:
        return f"PostgresStorage({self.where!r})"

    # lifecycle -------------------------------------------------------------------------
    async def connect(self) -> Db:
        """A new connection to the database; StorageError (one line) if there is none."""
        try:
            db = await asyncpg.connect(
                self.url, timeout=CONNECT_TIMEOUT,
                server_settings={"application_name": "quizbot"},
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            raise unusable(self.where, exc) from None
        return db

    async def _writer_connection(self) -> Db:
        db = await self.connect()
        # an acknowledged answer must survive a server crash: never commit asynchronously
        if await db.fetchval("SHOW synchronous_commit") == "off":
            await db.execute("SET synchronous_commit = on")
        # The writer's statements find rows by key, and the answers' one is a CTE the server
        # would otherwise plan again at most batches (a custom plan: about 0.3 ms of the
        # server's CPU, most of a small batch's cost); one generic plan per prepared
        # statement halves the writer's backend CPU per answer at 1,000 answers/s (make bench)
        await db.execute("SET plan_cache_mode = force_generic_plan")
        return db

    async def open(self) -> None:
        """Connect, check the database is ours, migrate (once, whoever else starts now),
        start the writer, the materializer and the read pool. StorageError with one line
        naming the database if it cannot be used; nothing is left open after a failure."""
        writer = Writer(self._writer_connection, self._committed, ops.LOCK_KEYS, ops.BATCHED)
        pool = None
        try:
            first = await self.connect()
            try:
                await migrate(first, self.where)
            except asyncpg.PostgresError as exc:
                raise unusable(self.where, exc) from None
            finally:
                await first.close()
            await writer.start()
            pool = await asyncpg.create_pool(
                self.url, min_size=1, max_size=self.pool_size, timeout=CONNECT_TIMEOUT,
                server_settings={"application_name": "quizbot"},
            )
            await self.materializer.start(self.connect)
            self._listener = await self._listen()
        except BaseException as exc:
            await self.materializer.close()
            await writer.close()
            if pool is not None:
                await pool.close()
            if isinstance(exc, StorageError):
                raise
            if isinstance(exc, OSError | asyncpg.PostgresError | asyncpg.InterfaceError):
                raise unusable(self.where, exc) from None
            raise
        self._writer, self._pool = writer, pool
        await self._count_cards()

    async def close(self) -> None:
        """Run every queued write, apply what is left to the boards, close everything."""
        writer, pool, listener = self._writer, self._pool, self._listener
        self._writer = self._pool = self._listener = None
        relisten, self._relisten = self._relisten, None
        if relisten is not None:
            relisten.cancel()
            await asyncio.gather(relisten, return_exceptions=True)
        if writer is not None:
            await writer.close()
        await self.materializer.close()
        if listener is not None:
            try:
                await asyncio.wait_for(listener.close(), 5)
            except Exception:
                listener.terminate()
        if pool is not None:
            try:
                await asyncio.wait_for(pool.close(), 10)
            except Exception:
                pool.terminate()

    def _committed(self, done: list[tuple[Any, Any]]) -> None:
        """After each write batch: tell the materializer how many answers it holds."""
        answers = sum(
            1 for op, value in done if op.fn is ops.record_answer and value[0] == "inserted"
        )
        self.materializer.committed(answers)

    async def materialize(self) -> None:
        """Bring the aggregates (boards, streaks) up to every answer this process
        acknowledged; costs nothing when none is pending."""
        if self._writer is None:
            raise RuntimeError("storage is not open")
        if self._acknowledged <= self.materializer.position:
            return
        await self.materializer.request(self._acknowledged)

    # another process's changes ---------------------------------------------------------
    async def _listen(self) -> Db:
        db = await self.connect()
        await db.add_listener(CHANNEL, self._notified)
        db.add_termination_listener(self._listener_lost)
        return db

    def _listener_lost(self, db: Db) -> None:
        """The listening connection ended (the server restarted, the network): what other
        processes change until it listens again is not heard, so nothing they may change
        is trusted from the caches, now and once it listens again."""
        if db is not self._listener or self._pool is None:
            return  # closing
        self._listener = None
        self._forget()
        log.warning("lost the connection that hears other processes' changes; reconnecting")
        self._relisten = asyncio.ensure_future(self._listen_again())

    async def _listen_again(self) -> None:
        delay = 0.1
        while self._pool is not None:
            try:
                self._listener = await self._listen()
            except StorageError:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            self._forget()
            log.info("hearing other processes' changes again")
            return

    def _forget(self) -> None:
        self._changed()
        self._person_locales.clear()
        self._known_people.clear()
        self._chat_rows.clear()
        self._known_chats.clear()
        self._posts.clear()

    def _notified(self, db: Db, pid: int, channel: str, payload: str) -> None:
        what, _, key = payload.partition(":")
        self._changed()
        if what == "person":  # a new language, or the person deleted (privacy.py)
            self._person_locales.pop(key)
            self._known_people.pop(key)
        elif what == "chat":
            self._chat_rows.pop(key)
            self._known_chats.pop(key)
        elif what == "post" and key.isdigit():
            self._posts.pop(int(key))
        elif what == "posts":
            self._posts.clear()

    # plumbing --------------------------------------------------------------------------
    def _write(self, fn: Callable[..., Awaitable[T]], *args: Any) -> asyncio.Future[T]:
        """Queue a write; await the result (it resolves after COMMIT)."""
        if self._writer is None:
            raise RuntimeError("storage is not open")
        return self._writer.submit(fn, *args)

    async def _read(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        pool = self._pool
        if pool is None:
            raise RuntimeError("storage is not open")
        waited, pause = 0.0, 0.02
        while True:
            try:
                async with pool.acquire() as db:
                    return await fn(PgSql(db), *args)
            except asyncpg.TooManyConnectionsError:
                # The pool grows on demand and the server is out of slots (max_connections):
                # the reads in flight give their connections back within milliseconds, so
                # wait for one rather than tell someone their answer was not saved.
                if waited >= SLOTS_WAIT:
                    raise
                if not self._slots_warned:
                    self._slots_warned = True
                    log.warning("%s has no free connection slot (max_connections); reads "
                                "wait for this process's %d open connections", self.where,
                                pool.get_size())
                await asyncio.sleep(pause)
                waited, pause = waited + pause, min(0.2, pause * 2)

    # what differs between the backends ---------------------------------------------
    async def _roll_week(self, until: date) -> None:
        await self._read(_roll_week, until)

    async def _record(
        self, answer: AnswerRecord, upsert_person: bool, read_locale: bool
    ) -> tuple[RecordOutcome, AnswerRecord | None, tuple[str | None] | None]:
        """One statement: the answer, its person, and the person's language."""
        outcome, earlier, locale, position = await self._write(
            ops.record_answer, answer, upsert_person
        )
        if outcome == "inserted":
            self._acknowledged = max(self._acknowledged, position)
        return outcome, earlier, (locale,) if read_locale else None

    async def claim_daily(
        self, chat_key: str, local_date: date, post: NewPost, when: datetime
    ) -> PostRecord | None:
        """Create the day's post and its claim in one transaction; None if already claimed
        (by this process or any other: the claim's primary key decides)."""
        post_id = await self._write(ops.claim_daily, chat_key, local_date, post, when)
        return None if post_id is None else await self.get_post(post_id)





async def _roll_week(db: Db, until: date) -> None:
    """Move the week window (a board asked for on a day without answers yet), holding the
    materializer's position lock like every writer of the aggregates."""
    async with db.transaction():
        await db.execute(LOCK_POSITION)
        await roll_week(db, until)


async def check_database(url: str) -> str | None:
    """For `quizbot health`: None if the database answers and is quizbot's, else one line
    (the password hidden). Reads only; migrates nothing."""
    from bot.storage.postgres.schema import version_of

    where = redact(url)
    try:
        db = await asyncpg.connect(url, timeout=CONNECT_TIMEOUT)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        return str(unusable(where, exc))
    try:
        if await version_of(db, where) == 0:
            return f"{where} holds no quizbot data yet"
    except StorageError as exc:
        return str(exc)
    except asyncpg.PostgresError as exc:
        return str(unusable(where, exc))
    finally:
        await db.close()
    return None


async def schema_version(url: str | DatabaseUrl) -> int:
    """The database's schema version (0: empty), read without writing; StorageError (one
    line) if it cannot be used, is another program's or a newer quizbot's."""
    from bot.storage.postgres.schema import version_of

    store = PostgresStorage(url)
    db = await store.connect()
    try:
        return await version_of(db, store.where)
    except asyncpg.PostgresError as exc:
        raise unusable(store.where, exc) from None
    finally:
        await db.close()
