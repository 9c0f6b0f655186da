"""PostgresStorage: the core's Storage port (bot/core/ports.py) on a PostgreSQL database.

The same guarantees as SqliteStorage, for any number of processes on one database:
- schema.py        versioned migrations, run at open under pg_advisory_xact_lock; a database
                   that is another program's, or a newer quizbot's, is refused untouched
- writer.py        one connection, group commit, a savepoint per write, acknowledged after
                   COMMIT
- materializer.py  the boards' aggregates, applied in batches by a task of its own with its
                   position stored in the same transaction
- ops.py           the writes, queries.py and boards.py the reads (on a pool of connections)
- records.py       rows to the core's records

What a process caches (people, chats, posts, languages) is bounded, and dropped when another
process changes it: those writes NOTIFY on a channel every process LISTENs to (delivered at
COMMIT). A notification lost with a connection costs at most the languages' TTL; a cached post
that missed a close is harmless, since record_answer checks the post in the database.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, date, datetime
from types import ModuleType
from typing import Any, ClassVar, TypeVar

import asyncpg

from bot.core.ports import (
    AnswerRecord,
    ChatSettingsRecord,
    ItemResponse,
    NewPost,
    PostRecord,
    RecordOutcome,
    ReviewAnswer,
    RoundRecord,
    RunRecord,
    ScoreRow,
    StorageError,
)
from bot.core.schedule import Schedule
from bot.storage.cache import CachedStorage, CacheFunctions
from bot.storage.postgres import authoring as drafts
from bot.storage.postgres import boards, ops, queries
from bot.storage.postgres import problem_reports as report_store
from bot.storage.postgres import review as spaced
from bot.storage.postgres import rounds as round_store
from bot.storage.postgres.materializer import LOCK_POSITION, Materializer, Position, roll_week
from bot.storage.postgres.schema import migrate
from bot.storage.postgres.url import DatabaseUrl, redact
from bot.storage.postgres.writer import Writer
from bot.storage.reports_and_drafts import ReportsAndDrafts

log = logging.getLogger(__name__)
T = TypeVar("T")
Db = Any  # an asyncpg.Connection

POOL_SIZE = 8  # read connections; each process also has a writer, a materializer, a listener
CONNECT_TIMEOUT = 10.0


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


class PostgresStorage(ReportsAndDrafts, CachedStorage):
    functions = CacheFunctions(
        person=queries.person, chat=queries.chat, post=queries.post,
        upsert_person=ops.upsert_person, upsert_chat=ops.upsert_chat,
        migrate_chat=ops.migrate_chat, set_person_locale=ops.set_person_locale,
        set_chat_locale=ops.set_chat_locale,
    )

    report_ops: ClassVar[ModuleType] = report_store
    draft_ops: ClassVar[ModuleType] = drafts

    @staticmethod
    def _when(moment: datetime) -> datetime:
        return moment  # asyncpg takes timestamptz as datetime

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
        self._listener: Db | None = None
        self._relisten: asyncio.Future[None] | None = None
        super().__init__()  # the caches (cache.py)

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
        return db

    async def open(self) -> None:
        """Connect, check the database is ours, migrate (once, whoever else starts now),
        start the writer, the materializer and the read pool. StorageError with one line
        naming the database if it cannot be used; nothing is left open after a failure."""
        writer = Writer(self._writer_connection, self._committed, ops.LOCK_KEYS)
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

    async def __aenter__(self) -> PostgresStorage:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

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
        await db.add_listener(ops.CHANNEL, self._notified)
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
        self._chat_rows.clear()
        self._known_chats.clear()
        self._posts.clear()

    def _notified(self, db: Db, pid: int, channel: str, payload: str) -> None:
        what, _, key = payload.partition(":")
        self._changed()
        if what == "person":
            self._person_locales.pop(key)
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
        async with pool.acquire() as db:
            return await fn(db, *args)

    # posts -----------------------------------------------------------------------------
    async def create_post(
        self,
        chat_key: str,
        quiz_id: str,
        question_id: str,
        order: tuple[int, ...],
        locale: str,
        created_at: datetime,
        closes_at: datetime | None = None,
        run_id: int | None = None,
        kind: str = "quiz",
        owner_key: str | None = None,
    ) -> PostRecord:
        new = NewPost(chat_key, quiz_id, question_id, tuple(order), locale, created_at,
                      closes_at, run_id, kind, owner_key)
        post_id = await self._write(ops.insert_post, new)
        post = await self.get_post(post_id)
        assert post is not None
        return post

    async def bind_ref(self, post_id: int, ref: str) -> None:
        await self._write(ops.bind_ref, post_id, ref)

    async def post_by_ref(self, ref: str) -> PostRecord | None:
        return await self._read(queries.post_by_ref, ref)

    async def refs(self, post_id: int) -> tuple[str, ...]:
        return await self._read(queries.refs, post_id)

    async def close_post(self, post_id: int, when: datetime, quiet: bool = False) -> bool:
        closed: bool = await self._write(ops.close_post, post_id, when, quiet)
        self._changed()
        self._posts.pop(post_id)
        return closed

    async def mark_summary_posted(self, post_id: int, when: datetime) -> None:
        await self._write(ops.mark_summary_posted, post_id, when)

    async def unposted_summaries(
        self, closed_after: datetime, closed_before: datetime
    ) -> list[PostRecord]:
        return await self._read(queries.unposted_summaries, closed_after, closed_before)

    async def take_lease(self, name: str, holder: str, until: datetime, now: datetime) -> bool:
        return await self._write(ops.take_lease, name, holder, until, now)

    async def release_lease(self, name: str, holder: str) -> None:
        await self._write(ops.release_lease, name, holder)

    async def open_posts(
        self, chat_key: str | None = None, due_before: datetime | None = None,
        kind: str | None = None,
    ) -> list[PostRecord]:
        return await self._read(queries.open_posts, chat_key, due_before, kind)

    async def posted_questions(
        self, chat_key: str, kind: str | None = None
    ) -> dict[tuple[str, str], int]:
        return await self._read(queries.posted_questions, chat_key, kind)

    async def shown_orders(
        self, chat_key: str, quiz_id: str | None = None
    ) -> dict[tuple[str, str], tuple[int, ...]]:
        return await self._read(queries.shown_orders, chat_key, quiz_id)

    # answers ---------------------------------------------------------------------------
    async def record_answer(
        self, answer: AnswerRecord
    ) -> tuple[RecordOutcome, AnswerRecord | None]:
        """One write (one statement): the answer, and its person (answer.name) unless known
        unchanged; the person's language comes back with it for the reply that follows."""
        key, name = answer.person_key, answer.name
        upsert = self._known_people.get(key) != name if name else key not in self._known_people
        cached = self._person_locales.get(key) is not None
        generation = self._generation
        outcome, earlier, locale, position = await self._write(
            ops.record_answer, answer, upsert
        )
        if outcome == "inserted":
            self._acknowledged = max(self._acknowledged, position)
        if not cached and generation == self._generation:
            self._person_locales.put(key, locale)
        if upsert and name and outcome == "inserted":
            self._known_people.put(key, name)
        return outcome, earlier

    async def answers_for_post(self, post_id: int) -> list[AnswerRecord]:
        return await self._read(queries.answers_for_post, post_id)

    async def answer_count(self, post_id: int) -> int:
        return await self._read(queries.answer_count, post_id)

    async def answer_of(self, post_id: int, person_key: str) -> AnswerRecord | None:
        return await self._read(queries.answer, post_id, person_key)

    async def person_history(self, person_key: str) -> dict[tuple[str, str], bool]:
        return await self._read(queries.person_history, person_key)

    async def item_responses(
        self, quiz_id: str | None = None, chat_key: str | None = None
    ) -> list[ItemResponse]:
        return await self._read(queries.item_responses, quiz_id, chat_key)

    async def chats(self) -> list[tuple[str, str]]:
        return await self._read(queries.chats)

    # quiz runs -------------------------------------------------------------------------
    async def create_run(
        self, person_key: str, chat_key: str, quiz_id: str, questions: tuple[str, ...],
        locale: str, started_at: datetime,
    ) -> RunRecord:
        run_id = await self._write(
            ops.create_run, person_key, chat_key, quiz_id, tuple(questions), locale, started_at
        )
        run = await self.get_run(run_id)
        assert run is not None
        return run

    async def active_run(self, person_key: str, chat_key: str) -> RunRecord | None:
        return await self._read(queries.active_run, person_key, chat_key)

    async def get_run(self, run_id: int) -> RunRecord | None:
        return await self._read(queries.run, run_id)

    async def finish_run(self, run_id: int, when: datetime) -> None:
        await self._write(ops.finish_run, run_id, when)

    async def run_posts(self, run_id: int) -> list[PostRecord]:
        return await self._read(queries.run_posts, run_id)

    # boards and stats ------------------------------------------------------------------
    async def leaderboard(
        self, chat_key: str | None, since: datetime | None, limit: int, person_key: str | None
    ) -> tuple[list[ScoreRow], ScoreRow | None]:
        chat = chat_key if chat_key is not None else "*"
        day = None if since is None else since.astimezone(UTC).date()
        board = await self._read(boards.leaderboard, chat, day, limit, person_key)
        if isinstance(board, boards.Roll):  # the first week board of a day with no answers
            await self._read(_roll_week, board.until)
            board = await self._read(boards.leaderboard, chat, day, limit, person_key, False)
        assert not isinstance(board, boards.Roll)
        return board

    async def person_totals(self, person_key: str) -> dict[str, tuple[int, int]]:
        return await self._read(queries.person_totals, person_key)

    async def person_streaks(self, person_key: str) -> tuple[int, int]:
        return await self._read(boards.person_streaks, person_key)

    # daily schedules -------------------------------------------------------------------
    async def set_schedule(self, schedule: Schedule, updated_by: str | None = None) -> None:
        updated_at = schedule.updated_at or datetime.now(UTC)
        await self._write(ops.set_schedule, schedule, updated_at, updated_by)

    async def delete_schedule(self, chat_key: str) -> bool:
        return await self._write(ops.delete_schedule, chat_key)

    async def get_schedule(self, chat_key: str) -> Schedule | None:
        return await self._read(queries.schedule, chat_key)

    async def schedules(self) -> list[Schedule]:
        return await self._read(queries.schedules)

    async def claim_daily(
        self, chat_key: str, local_date: date, post: NewPost, when: datetime
    ) -> PostRecord | None:
        """Create the day's post and its claim in one transaction; None if already claimed
        (by this process or any other: the claim's primary key decides)."""
        post_id = await self._write(ops.claim_daily, chat_key, local_date, post, when)
        return None if post_id is None else await self.get_post(post_id)

    async def mark_daily_published(self, post_id: int, when: datetime) -> None:
        await self._write(ops.mark_daily_published, post_id, when)

    async def unpublished_dailies(self, claimed_before: datetime) -> list[PostRecord]:
        return await self._read(queries.unpublished_dailies, claimed_before)

    async def daily_day_of(self, chat_key: str, local_date: date) -> int | None:
        return await self._read(queries.daily_day_of, chat_key, local_date)

    async def daily_days(self, person_key: str) -> tuple[list[date], date | None]:
        days = await self._read(boards.daily_days_for, [person_key])
        return days[person_key]

    async def daily_days_for(
        self, person_keys: Sequence[str]
    ) -> dict[str, tuple[list[date], date | None]]:
        return await self._read(boards.daily_days_for, list(person_keys))

    # chat settings and rounds (rounds.py)
    async def get_chat_settings(self, chat_key: str) -> ChatSettingsRecord | None:
        return await self._read(round_store.chat_settings, chat_key)

    async def set_chat_settings(
        self, settings: ChatSettingsRecord, when: datetime, updated_by: str | None = None
    ) -> None:
        await self._write(round_store.set_chat_settings, settings, when, updated_by)

    async def create_round(
        self, chat_key: str, selector: str | None, total: int, mode: str | None, locale: str,
        started_at: datetime,
    ) -> RoundRecord:
        round_id = await self._write(round_store.create_round, chat_key, selector, total, mode,
                                     locale, started_at)
        record = await self.get_round(round_id)
        assert record is not None
        return record

    async def add_round_post(self, round_id: int, step: int, post: NewPost) -> PostRecord | None:
        post_id = await self._write(round_store.add_round_post, round_id, step, post)
        return None if post_id is None else await self.get_post(post_id)

    async def get_round(self, round_id: int) -> RoundRecord | None:
        return await self._read(round_store.get_round, round_id)

    async def active_rounds(self, chat_key: str | None = None) -> list[RoundRecord]:
        return await self._read(round_store.active_rounds, chat_key)

    async def finish_round(self, round_id: int, when: datetime) -> bool:
        return await self._write(round_store.finish_round, round_id, when)

    # spaced review -----------------------------------------------------------------------
    async def review_answers(self, person_key: str) -> list[ReviewAnswer]:
        return await self._read(spaced.review_answers, person_key)

    async def set_reminder(self, reminder: Schedule) -> None:
        await self._write(spaced.set_reminder, reminder, reminder.updated_at or datetime.now(UTC))

    async def delete_reminder(self, person_key: str) -> bool:
        return await self._write(spaced.delete_reminder, person_key)

    async def get_reminder(self, person_key: str) -> Schedule | None:
        return await self._read(spaced.reminder, person_key)

    async def reminders(self) -> list[Schedule]:
        return await self._read(spaced.reminders)

    async def claim_reminder(self, person_key: str, local_date: date, when: datetime) -> bool:
        return await self._write(spaced.claim_reminder, person_key, local_date, when)


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
