"""SqliteStorage: the core's storage ports (bot/core/ports/) on one SQLite file.

The parts, each in its own module:
- connection.py   opening a file: WAL, synchronous=FULL, the file is ours or refused
- migrations.py   the versioned schema and how a file is brought up to it
- writer.py       the writer thread: group commit, a savepoint per write, acknowledged after
                  COMMIT (worker.py: the thread-and-queue both threads share)
- materializer.py the boards' aggregates, applied from the answers in batches (no trigger on
                  the answer's path) by the aggregates' own thread (aggregator.py), in a
                  file of their own (aggregates_file.py), so the writer never waits for them
- reader.py       the reader thread: one hop per read, on a second connection
- sql.py          the Sql the operations written once run on (bot/storage/sql.py), driven
                  to their end in those threads
- ops.py          SQLite's own writes (recording an answer, claiming the daily post, moving
                  a chat), boards.py its reads of the boards: plain functions of a connection

The operations both databases share are written once (bot/storage/store.py); this class adds
the lifecycle, the two threads, and what is SQLite's own.
"""

from __future__ import annotations

import asyncio
import inspect
import sqlite3
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, TypeVar

from bot.core.ports import (
    AnswerRecord,
    NewPost,
    PostRecord,
    RecordOutcome,
    StorageError,
)
from bot.storage import cards, commands, difficulty, fsrs_params
from bot.storage.sqlite import aggregates_file, boards, ops
from bot.storage.sqlite.aggregator import Aggregator
from bot.storage.sqlite.connection import APPLICATION_ID, PRAGMAS, unusable
from bot.storage.sqlite.materializer import Materializer, roll_week
from bot.storage.sqlite.migrations import split_sql
from bot.storage.sqlite.reader import Reader
from bot.storage.sqlite.sql import blocking, to_ms
from bot.storage.sqlite.writer import Writer
from bot.storage.store import Store

__all__ = ["APPLICATION_ID", "PRAGMAS", "SqliteStorage", "_split_sql"]

_split_sql = split_sql  # the name tests and tools have used

T = TypeVar("T")

# the writes of the aggregates (with or without the answers' file's tables): the aggregates'
# thread runs them (aggregator.py); the answers' writer has the aggregates read-only
AGGREGATE_WRITES = frozenset({
    ops.migrate_chat, ops.delete_person, roll_week, fsrs_params.save_fit,
    cards.count_pending, difficulty.count_pending,
})


def writes_aggregates(fn: Callable[..., Any], args: tuple[Any, ...]) -> bool:
    """Whether a write (or a command's effect: commands.claimed_then) writes aggregates."""
    if fn is commands.claimed_then:
        return len(args) > 2 and args[2] in AGGREGATE_WRITES
    return fn in AGGREGATE_WRITES


class SqliteStorage(Store):
    boards: ClassVar[ModuleType] = boards
    migrate_chat_op = staticmethod(ops.migrate_chat)
    delete_person_op = staticmethod(ops.delete_person)

    def __init__(self, path: str | Path, materializer: Materializer | None = None,
                 aggregates_apart: bool = False) -> None:
        """`materializer`: when boards catch up with answers (materializer.py); its defaults
        serve a bot, tests and the bench pass their own. `aggregates_apart`: keep the
        aggregates in a file of their own, written by their own thread (aggregates_file.py);
        a file whose aggregates were once moved out keeps them apart whatever this says."""
        self.path = Path(path)
        self.materializer = materializer or Materializer()
        self.aggregates_apart = aggregates_apart
        self._acknowledged = 0  # the newest answer id this process acknowledged
        self._writer: Writer | None = None
        self._aggregator: Aggregator | None = None
        self._reader: Reader | None = None
        self._answers: ops.AnswerWrites | None = None
        super().__init__()  # the caches (cached_storage.py)

    # lifecycle -------------------------------------------------------------------------
    async def open(self) -> None:
        """Open (creating it if needed) and migrate; StorageError with one line naming the
        file if it cannot be used. Nothing is left running after a failure."""
        apart = self.aggregates_apart or aggregates_file.apart(self.path)
        aggregator = Aggregator(self.path, self.materializer) if apart else None
        writer = (Writer(self.path, aggregates=True, after_batch=self._answers_committed)
                  if apart else Writer(self.path, self.materializer))
        reader = Reader(self.path, aggregates=apart)
        self.materializer.own_thread = apart
        self._aggregator = aggregator
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # checks the file is ours, migrates it (both files: the aggregator), applies
            # what a crash left
            if aggregator is not None:
                await aggregator.start()
            await writer.start()
            await reader.start()
        except BaseException as exc:
            self._aggregator = None
            await writer.close()
            if aggregator is not None:
                await aggregator.close()
            await reader.close()
            if isinstance(exc, StorageError):
                raise
            if isinstance(exc, OSError | sqlite3.Error):
                raise unusable(self.path, exc) from exc
            raise
        self._writer, self._reader = writer, reader
        # one object for every answer's write: the writer runs a run of them as one batch
        self._answers = ops.AnswerWrites(self.materializer.noted)
        await self._count_cards()

    async def close(self) -> None:
        """Run every queued write, apply the answers, then stop the threads."""
        writer, aggregator, reader = self._writer, self._aggregator, self._reader
        self._writer = self._reader = self._aggregator = None
        if writer is not None:
            await writer.close()
        if aggregator is not None:
            await aggregator.close()
        if reader is not None:
            await reader.close()

    def _answers_committed(self) -> None:
        """In the writer thread after each batch: wake the aggregates' thread unless it is
        already counting down to its next chunk (one wake-up per chunk, not per batch)."""
        aggregator = self._aggregator
        if aggregator is not None and self.materializer.idle_since_applied():
            aggregator.wake()

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
        (self._aggregator or writer).wake()
        await done

    def _write(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """Queue a write; await the result (it resolves after COMMIT)."""
        writer: Writer | None = self._writer
        if self._aggregator is not None and writes_aggregates(fn, args):
            writer = self._aggregator
        if writer is None:
            raise RuntimeError("storage is not open")
        return writer.submit(_in_thread(fn), *args)

    def _read(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        if self._reader is None:
            raise RuntimeError("storage is not open")
        return self._reader.submit(_in_thread(fn), *args)

    # what differs between the backends ---------------------------------------------
    @staticmethod
    def _board_day(day: date) -> str:
        return day.isoformat()  # boards.py keeps days as YYYY-MM-DD

    async def _roll_week(self, until: str) -> None:
        await self._write(roll_week, until)

    async def _record(
        self, answer: AnswerRecord, upsert_person: bool, read_locale: bool
    ) -> tuple[RecordOutcome, AnswerRecord | None, tuple[str | None] | None]:
        """One hop: the answer, its person, and the person's language if asked for (it comes
        back from the person's upsert: a person who is asked for is upserted)."""
        if self._answers is None:
            raise RuntimeError("storage is not open")
        outcome, earlier, locale, answer_id = await self._write(
            self._answers, answer, upsert_person, read_locale
        )
        self._acknowledged = max(self._acknowledged, answer_id)
        return outcome, earlier, locale

    async def claim_daily(
        self, chat_key: str, local_date: date, post: NewPost, when: datetime
    ) -> PostRecord | None:
        """Create the day's post and its claim in one transaction; None if already claimed."""
        try:
            post_id = await self._write(
                ops.claim_daily, chat_key, local_date.isoformat(), post, to_ms(when),
            )
        except sqlite3.IntegrityError:
            return None
        return None if post_id is None else await self.get_post(post_id)


def _in_thread(fn: Callable[..., Any]) -> Callable[..., Any]:
    """What a thread runs for `fn`: SQLite's own functions as they are, an operation written
    once (a coroutine of a Sql) driven to its end over the thread's connection."""
    return blocking(fn) if inspect.iscoroutinefunction(fn) else fn
