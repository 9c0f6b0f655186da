"""SqliteStorage: the core's Storage port (bot/core/ports.py) on one SQLite file.

The parts, each in its own module:
- connection.py   opening a file: WAL, synchronous=FULL, the file is ours or refused
- migrations.py   the versioned schema and how a file is brought up to it
- writer.py       the writer thread: group commit, a savepoint per write, acknowledged after
                  COMMIT (worker.py: the thread-and-queue both threads share)
- materializer.py the boards' aggregates, applied from the answers in batches by the writer
                  thread between its batches (no trigger on the answer's path)
- reader.py       the reader thread: one hop per read, on a second connection
- ops.py          the writes, queries.py and boards.py the reads: plain functions of a
                  connection, run in those threads
- records.py      rows to the core's records

This class turns each port method into one queued call, through the bounded caches of
CachedStorage (cache.py).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, TypeVar

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
from bot.storage import authoring as drafts
from bot.storage import boards, ops, queries
from bot.storage import problem_reports as report_store
from bot.storage import review as spaced
from bot.storage import rounds as round_store
from bot.storage.cache import CachedStorage, CacheFunctions
from bot.storage.connection import APPLICATION_ID, PRAGMAS, unusable
from bot.storage.materializer import Materializer, roll_week
from bot.storage.migrations import split_sql
from bot.storage.reader import Reader
from bot.storage.records import to_ms
from bot.storage.reports_and_drafts import ReportsAndDrafts
from bot.storage.writer import Writer

__all__ = ["APPLICATION_ID", "PRAGMAS", "SqliteStorage", "_split_sql"]

_split_sql = split_sql  # the name tests and tools have used

T = TypeVar("T")


class SqliteStorage(ReportsAndDrafts, CachedStorage):
    functions = CacheFunctions(
        person=queries.person, chat=queries.chat, post=queries.post,
        upsert_person=ops.upsert_person, upsert_chat=ops.upsert_chat,
        migrate_chat=ops.migrate_chat, set_person_locale=ops.set_person_locale,
        set_chat_locale=ops.set_chat_locale,
    )

    report_ops: ClassVar[ModuleType] = report_store
    draft_ops: ClassVar[ModuleType] = drafts

    @staticmethod
    def _when(moment: datetime) -> int:
        return to_ms(moment)  # unix milliseconds, as the SQLite schema keeps times

    def __init__(self, path: str | Path, materializer: Materializer | None = None) -> None:
        """`materializer`: when boards catch up with answers (materializer.py); its defaults
        serve a bot, tests and the bench pass their own."""
        self.path = Path(path)
        self.materializer = materializer or Materializer()
        self._acknowledged = 0  # the newest answer id this process acknowledged
        self._writer: Writer | None = None
        self._reader: Reader | None = None
        super().__init__()  # the caches (cache.py)

    # lifecycle -------------------------------------------------------------------------
    async def open(self) -> None:
        """Open (creating it if needed) and migrate; StorageError with one line naming the
        file if it cannot be used. Nothing is left running after a failure."""
        writer = Writer(self.path, self.materializer)
        reader = Reader(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            await writer.start()  # checks the file is ours, then migrates it
            await reader.start()
        except BaseException as exc:
            await writer.close()
            await reader.close()
            if isinstance(exc, StorageError):
                raise
            if isinstance(exc, OSError | sqlite3.Error):
                raise unusable(self.path, exc) from exc
            raise
        self._writer, self._reader = writer, reader

    async def close(self) -> None:
        """Run every queued write, then stop both threads."""
        writer, reader = self._writer, self._reader
        self._writer = self._reader = None
        if writer is not None:
            await writer.close()
        if reader is not None:
            await reader.close()

    async def __aenter__(self) -> SqliteStorage:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def materialize(self) -> None:
        """Bring the aggregates (boards, streaks) up to every answer acknowledged so far.
        Without it they lag by at most the materializer's interval (0.1 s); costs nothing
        when nothing of this process is pending."""
        writer = self._writer
        if writer is None:
            raise RuntimeError("storage is not open")
        if self._acknowledged <= self.materializer.position:
            return
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self.materializer.request(done, loop.call_soon_threadsafe)
        writer.wake()
        await done

    def _write(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Queue a write; await the result (it resolves after COMMIT)."""
        if self._writer is None:
            raise RuntimeError("storage is not open")
        return self._writer.submit(fn, *args)

    def _read(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        if self._reader is None:
            raise RuntimeError("storage is not open")
        return self._reader.submit(fn, *args)

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
        closed: bool = await self._write(ops.close_post, post_id, to_ms(when), quiet)
        self._changed()
        self._posts.pop(post_id)
        return closed

    async def mark_summary_posted(self, post_id: int, when: datetime) -> None:
        await self._write(ops.mark_summary_posted, post_id, to_ms(when))

    async def unposted_summaries(
        self, closed_after: datetime, closed_before: datetime
    ) -> list[PostRecord]:
        return await self._read(
            queries.unposted_summaries, to_ms(closed_after), to_ms(closed_before)
        )

    async def take_lease(self, name: str, holder: str, until: datetime, now: datetime) -> bool:
        return await self._write(ops.take_lease, name, holder, to_ms(until), to_ms(now))

    async def release_lease(self, name: str, holder: str) -> None:
        await self._write(ops.release_lease, name, holder)

    async def open_posts(
        self, chat_key: str | None = None, due_before: datetime | None = None,
        kind: str | None = None,
    ) -> list[PostRecord]:
        due = None if due_before is None else to_ms(due_before)
        return await self._read(
            queries.open_posts, chat_key, due, kind
        )

    async def posted_questions(
        self, chat_key: str, kind: str | None = None
    ) -> dict[tuple[str, str], int]:
        return await self._read(
            queries.posted_questions, chat_key, kind
        )

    async def shown_orders(
        self, chat_key: str, quiz_id: str | None = None
    ) -> dict[tuple[str, str], tuple[int, ...]]:
        return await self._read(queries.shown_orders, chat_key, quiz_id)

    # answers ---------------------------------------------------------------------------
    async def record_answer(
        self, answer: AnswerRecord
    ) -> tuple[RecordOutcome, AnswerRecord | None]:
        """One write: the answer, and its person (answer.name) unless known unchanged. The
        person's language is read in the same hop if it is not cached, so the reply that
        follows reads nothing."""
        key, name = answer.person_key, answer.name
        upsert = self._known_people.get(key) != name if name else key not in self._known_people
        read_locale = self._person_locales.get(key) is None
        generation = self._generation
        outcome, earlier, locale, answer_id = await self._write(
            ops.record_answer, answer, upsert, read_locale
        )
        self._acknowledged = max(self._acknowledged, answer_id)
        if locale is not None and generation == self._generation:
            self._person_locales.put(key, locale[0])
        if upsert and name and outcome == "inserted":
            self._known_people.put(key, name)
        return outcome, earlier

    async def answers_for_post(self, post_id: int) -> list[AnswerRecord]:
        return await self._read(queries.answers_for_post, post_id)

    async def answer_count(self, post_id: int) -> int:
        return await self._read(queries.answer_count, post_id)

    async def answer_of(self, post_id: int, person_key: str) -> AnswerRecord | None:
        return await self._read(
            queries.answer, post_id, person_key
        )

    async def person_history(self, person_key: str) -> dict[tuple[str, str], bool]:
        return await self._read(
            queries.person_history, person_key
        )

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
            ops.create_run, person_key, chat_key, quiz_id, tuple(questions), locale,
            to_ms(started_at),
        )
        run = await self.get_run(run_id)
        assert run is not None
        return run

    async def active_run(self, person_key: str, chat_key: str) -> RunRecord | None:
        return await self._read(
            queries.active_run, person_key, chat_key
        )

    async def get_run(self, run_id: int) -> RunRecord | None:
        return await self._read(queries.run, run_id)

    async def finish_run(self, run_id: int, when: datetime) -> None:
        await self._write(ops.finish_run, run_id, to_ms(when))

    async def run_posts(self, run_id: int) -> list[PostRecord]:
        return await self._read(queries.run_posts, run_id)

    # boards and stats ------------------------------------------------------------------
    async def leaderboard(
        self, chat_key: str | None, since: datetime | None, limit: int, person_key: str | None
    ) -> tuple[list[ScoreRow], ScoreRow | None]:
        chat = chat_key if chat_key is not None else "*"
        day = None if since is None else since.astimezone(UTC).date().isoformat()
        board = await self._read(boards.leaderboard, chat, day, limit, person_key)
        if isinstance(board, boards.Roll):  # the first week board of a day with no answers
            await self._write(roll_week, board.until)
            board = await self._read(boards.leaderboard, chat, day, limit, person_key, False)
        assert not isinstance(board, boards.Roll)
        return board

    async def person_totals(self, person_key: str) -> dict[str, tuple[int, int]]:
        return await self._read(
            queries.person_totals, person_key
        )

    async def person_streaks(self, person_key: str) -> tuple[int, int]:
        return await self._read(
            boards.person_streaks, person_key
        )

    # daily schedules ---------------------------------------------------------------------
    async def set_schedule(self, schedule: Schedule, updated_by: str | None = None) -> None:
        updated_at = to_ms(schedule.updated_at or datetime.now(UTC))
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
        """Create the day's post and its claim in one transaction; None if already claimed."""
        try:
            post_id = await self._write(
                ops.claim_daily, chat_key, local_date.isoformat(), post, to_ms(when)
            )
        except sqlite3.IntegrityError:
            return None
        return None if post_id is None else await self.get_post(post_id)

    async def mark_daily_published(self, post_id: int, when: datetime) -> None:
        await self._write(ops.mark_daily_published, post_id, to_ms(when))

    async def unpublished_dailies(self, claimed_before: datetime) -> list[PostRecord]:
        """Claimed days whose question never reached the chat (a crash in between)."""
        return await self._read(
            queries.unpublished_dailies, to_ms(claimed_before)
        )

    async def daily_day_of(self, chat_key: str, local_date: date) -> int | None:
        return await self._read(
            queries.daily_day_of, chat_key, local_date
        )

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
        await self._write(round_store.set_chat_settings, settings, to_ms(when), updated_by)

    async def create_round(
        self, chat_key: str, selector: str | None, total: int, mode: str | None, locale: str,
        started_at: datetime,
    ) -> RoundRecord:
        round_id = await self._write(round_store.create_round, chat_key, selector, total, mode,
                                     locale, to_ms(started_at))
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
        return await self._write(round_store.finish_round, round_id, to_ms(when))

    # spaced review -----------------------------------------------------------------------
    async def review_answers(self, person_key: str) -> list[ReviewAnswer]:
        return await self._read(spaced.review_answers, person_key)

    async def set_reminder(self, reminder: Schedule) -> None:
        updated_at = to_ms(reminder.updated_at or datetime.now(UTC))
        await self._write(spaced.set_reminder, reminder, updated_at)

    async def delete_reminder(self, person_key: str) -> bool:
        return await self._write(spaced.delete_reminder, person_key)

    async def get_reminder(self, person_key: str) -> Schedule | None:
        return await self._read(spaced.reminder, person_key)

    async def reminders(self) -> list[Schedule]:
        return await self._read(spaced.reminders)

    async def claim_reminder(self, person_key: str, local_date: date, when: datetime) -> bool:
        return await self._write(
            spaced.claim_reminder, person_key, local_date.isoformat(), to_ms(when)
        )
