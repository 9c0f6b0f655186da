"""The materializer: boards' aggregates kept off the answer's path.

An answer's transaction writes the answer row and nothing else. The writer thread, between
batches, applies committed answers to the aggregate tables in id order (ids grow in commit
order, whichever process committed them):

    BEGIN IMMEDIATE
      position = materialized.position
      rows     = answers WHERE id > position ORDER BY id LIMIT chunk
      scores, totals (per chat and '*'), persons' streaks  += rows, summed in memory first
      week_scores += the rows of the week window's days (the window rolled forward first)
      materialized.position = last id of rows                -- in the same transaction
    COMMIT

So a crash (kill -9, power loss) undoes a whole application or none of it: a restart applies
exactly what is missing, never an answer twice. Two processes on one file cannot both apply
the same rows: each reads the position inside its write transaction.

These commits run with synchronous=NORMAL: everything they write can be derived again from the
answers, and a power loss can only drop a whole application (WAL), which the next one redoes.

When: answers are applied once they have waited `interval`, or `backlog` of them are
waiting, at a moment the writer has no writes queued; while writes keep arriving (a storm of
clicks) they go first, and answers are applied anyway once the oldest has waited `max_lag`.
A transaction applies at most `chunk` answers, so the writer is never away for long. Every
`idle_check` seconds the thread also looks for answers another process committed and did not
apply (it crashed). `request()` (SqliteStorage.materialize) applies everything now. Opening
applies whatever a crash left, and closing what is left.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from bot import metrics
from bot.storage.aggregation import Batch, aggregate, streaks

log = logging.getLogger(__name__)
Db = sqlite3.Connection

INTERVAL = 0.1  # s an answer waits before it is applied when the writer is idle
BACKLOG = 500  # answers waiting that are applied without waiting for INTERVAL, when idle
MAX_LAG = 1.0  # s an answer waits at most, even while writes keep the writer busy
CHUNK = 2000  # answers per transaction: the writer is away for ~50 ms at most
IDLE_CHECK = 1.0  # s between looks for answers another process left unapplied


def position(db: Db) -> int:
    return int(db.execute("SELECT position FROM materialized WHERE name='scores'").fetchone()[0])


def newest(db: Db) -> int:
    row = db.execute("SELECT MAX(id) FROM answers").fetchone()
    return int(row[0] or 0)


def newest_day(db: Db) -> str:
    """The UTC day of the newest answer (by id: nearly always the latest day)."""
    return str(db.execute(
        "SELECT date(answered_at / 1000, 'unixepoch') FROM answers"
        " WHERE id = (SELECT MAX(id) FROM answers)"
    ).fetchone()[0])


UPSERT_SCORES = (
    "INSERT INTO scores(chat_key, day, person_key, correct, answered, time_ms)"
    " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(chat_key, day, person_key) DO UPDATE SET"
    " correct=correct+excluded.correct, answered=answered+excluded.answered,"
    " time_ms=time_ms+excluded.time_ms"
)
UPSERT_TOTALS = (
    "INSERT INTO totals(chat_key, person_key, correct, answered, time_ms)"
    " VALUES (?, ?, ?, ?, ?) ON CONFLICT(chat_key, person_key) DO UPDATE SET"
    " correct=correct+excluded.correct, answered=answered+excluded.answered,"
    " time_ms=time_ms+excluded.time_ms"
)


UPSERT_WEEK = UPSERT_TOTALS.replace("INTO totals", "INTO week_scores")
WEEK_DAYS = 7


def week_start(until: str) -> str:
    """The first UTC day of the week window ending on `until`."""
    return (date.fromisoformat(until) - timedelta(days=WEEK_DAYS - 1)).isoformat()


def week_until(db: Db) -> str | None:
    row = db.execute("SELECT until FROM week_window WHERE id=1").fetchone()
    until = None if row is None else row[0]
    return None if until is None else str(until)


def roll_week(db: Db, day: str) -> str:
    """Move the week window forward so that it ends on `day` (never back), inside the
    caller's transaction; the window's last day. Days that leave the window are taken out
    of week_scores one day at a time; after a gap of a week or more it is summed again."""
    until = week_until(db)
    if until is not None and day <= until:
        return until
    if until is None or date.fromisoformat(day) - date.fromisoformat(until) >= timedelta(
        days=WEEK_DAYS
    ):
        db.execute("DELETE FROM week_scores")
        db.execute(
            "INSERT INTO week_scores(chat_key, person_key, correct, answered, time_ms)"
            " SELECT chat_key, person_key, SUM(correct), SUM(answered), SUM(time_ms)"
            " FROM scores WHERE day >= ? AND day <= ? GROUP BY chat_key, person_key",
            (week_start(day), day),
        )
    else:
        leaving = date.fromisoformat(week_start(until))
        while (gone := leaving.isoformat()) < week_start(day):
            db.execute(
                "UPDATE week_scores SET correct = week_scores.correct - s.correct,"
                " answered = week_scores.answered - s.answered,"
                " time_ms = week_scores.time_ms - s.time_ms"
                " FROM (SELECT chat_key, person_key, correct, answered, time_ms FROM scores"
                "       WHERE day = ?) AS s"
                " WHERE week_scores.chat_key = s.chat_key"
                " AND week_scores.person_key = s.person_key",
                (gone,),
            )
            db.execute(
                "DELETE FROM week_scores WHERE answered <= 0 AND (chat_key, person_key) IN"
                " (SELECT chat_key, person_key FROM scores WHERE day = ?)",
                (gone,),
            )
            leaving += timedelta(days=1)
    db.execute("INSERT OR REPLACE INTO week_window(id, until) VALUES (1, ?)", (day,))
    return day


def apply(db: Db, limit: int = CHUNK) -> tuple[int, int]:
    """Apply up to `limit` answers after the stored position, inside the caller's
    transaction. Returns (answers applied, the new position)."""
    start = position(db)
    rows = db.execute(
        "SELECT id, chat_key, person_key, correct, elapsed_ms,"
        " date(answered_at / 1000, 'unixepoch') FROM answers WHERE id > ? ORDER BY id LIMIT ?",
        (start, limit),
    ).fetchall()
    if not rows:
        return 0, start
    batch: Batch[str] = aggregate(row[1:] for row in rows)
    # the window moves before this batch reaches scores: a day leaving it is taken out of
    # week_scores as week_scores holds it (without this batch's rows of that day)
    until = roll_week(db, max(day for *_, day in rows))
    db.executemany(UPSERT_SCORES, [(*k, *v) for k, v in sorted(batch.scores.items())])
    db.executemany(UPSERT_TOTALS, [(*k, *v) for k, v in sorted(batch.totals.items())])
    week = batch.week(week_start(until))  # and <= until: the window now reaches the newest day
    db.executemany(UPSERT_WEEK, [(*k, *v) for k, v in sorted(week.items())])
    _streaks(db, batch.runs)
    end = int(rows[-1][0])
    db.execute("UPDATE materialized SET position=? WHERE name='scores'", (end,))
    return len(rows), end


def _streaks(db: Db, runs: dict[str, list[bool]]) -> None:
    """Continue each person's run of correct answers (current, best) through their answers
    in id order, as the trigger of migration 1 did one answer at a time."""
    stored = {
        key: (current, best)
        for key, current, best in db.execute(
            "SELECT key, current_streak, best_streak FROM persons"
            " WHERE key IN (SELECT value FROM json_each(?))",
            (json.dumps(list(runs)),),
        )
    }
    updates = []
    for key, corrects in runs.items():
        updates.append((*streaks(stored.get(key, (0, 0)), corrects), key))
    db.executemany("UPDATE persons SET current_streak=?, best_streak=? WHERE key=?", updates)


class Materializer:
    """The writer thread's housekeeper (writer.Housekeeper)."""

    def __init__(
        self, interval: float = INTERVAL, backlog: int = BACKLOG, chunk: int = CHUNK,
        idle_check: float = IDLE_CHECK, max_lag: float = MAX_LAG,
    ) -> None:
        self.interval = interval
        self.backlog = backlog
        self.max_lag = max(max_lag, interval)
        self.chunk = chunk
        self.idle_check = idle_check
        self.position = 0  # as far as this process knows; read by the event loop
        self.applied = 0  # answers this process applied (bench and tests)
        self._since: float | None = None  # when unapplied answers were first seen
        self._next_look = 0.0
        self._lock = threading.Lock()
        self._requests: list[tuple[asyncio.Future[None], Callable[..., Any]]] = []

    # the event loop's side -------------------------------------------------------------------
    def request(self, future: asyncio.Future[None], post: Callable[..., Any]) -> None:
        """Apply everything committed so far, then resolve `future` through `post` (the
        loop's call_soon_threadsafe). The caller wakes the writer thread."""
        with self._lock:
            self._requests.append((future, post))

    # the writer thread's side ----------------------------------------------------------------
    def start(self, db: Db) -> None:
        """At open: apply what a crash (or a version with the trigger) left behind."""
        self.position = position(db)
        self._catch_up(db)

    def due_in(self) -> float | None:
        if self._requests:
            return 0.0
        now = time.monotonic()
        if self._since is not None:
            return max(0.0, self._since + self.interval - now)
        return max(0.0, self._next_look - now)

    def run(self, db: Db, idle: bool) -> None:
        with self._lock:
            requests, self._requests = self._requests, []
        if requests:
            try:
                self._catch_up(db)
            except Exception as exc:
                for future, post in requests:
                    post(_settle, future, exc)
                raise
            for future, post in requests:
                post(_settle, future, None)
            return
        now = time.monotonic()
        top = newest(db)  # after each batch, and on waking: any answers not applied yet?
        self._next_look = now + self.idle_check
        metrics.MATERIALIZER_LAG.set(top - self.position)
        if top <= self.position:
            self._since = None
            return
        if self._since is None:
            self._since = now
        waited = now - self._since
        due_when_idle = waited >= self.interval or top - self.position >= self.backlog
        if waited >= self.max_lag or (idle and due_when_idle):
            try:
                self._transaction(db)
            except Exception:
                self._since = now  # tried again after another interval
                raise
            metrics.MATERIALIZER_LAG.set(max(0, top - self.position))
            if self.position >= top:
                self._since = None  # else the rest is as old: the next chance applies more

    def finish(self, db: Db) -> None:
        """At close: apply what is left, so the file is current when nothing runs."""
        self._catch_up(db)

    def _catch_up(self, db: Db) -> None:
        if self.position < newest(db):
            # the week window first moves to the newest answer's day, so a long backlog's
            # older days are never added to week_scores only to be taken out again
            self._transaction(db, roll_first=True)
        while self._transaction(db):
            pass
        self._since = None
        metrics.MATERIALIZER_LAG.set(0)

    def _transaction(self, db: Db, roll_first: bool = False) -> int:
        """One application in its own transaction; the number of answers applied."""
        db.execute("PRAGMA synchronous=NORMAL")  # derived data: see the module docstring
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                if roll_first:
                    roll_week(db, newest_day(db))
                count, end = apply(db, self.chunk)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        finally:
            db.execute("PRAGMA synchronous=FULL")
        self.position = end
        self.applied += count
        return count


def _settle(future: asyncio.Future[None], error: BaseException | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)
