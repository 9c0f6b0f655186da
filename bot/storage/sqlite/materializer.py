"""The materializer: boards' aggregates kept off the answer's path.

An answer's transaction writes the answer row and nothing else. The writer thread, between
batches, applies committed answers to the aggregate tables in id order (ids grow in commit
order, whichever process committed them); with the aggregates in a file of their own
(aggregates_file.py) their own thread does (aggregator.py, `own_thread`), in chunks of `chunk`
answers that take that file's lock only, so no answer waits for them:

    BEGIN IMMEDIATE
      position = materialized.position
      rows     = answers WHERE id > position ORDER BY id LIMIT chunk
      scores, totals (per chat and '*'), persons' streaks  += rows, summed in memory first
      week_scores += the rows of the week window's days (the window rolled forward first)
      rank_counts += how many people left and reached each (correct, time bucket)
      chat_figures, chat_day_figures += people, answers and right answers per chat (day)
      item_firsts, item_options, item_groups += first answers (item_figures.py)
      day_runs += right daily answers (day_runs.py)
      cards, card_days moved by every answer (cards.py)
      difficulty ratings moved by first answers, in order (difficulty.py)
      materialized.position = last id of rows                -- in the same transaction
    COMMIT

So a crash (kill -9, power loss) undoes a whole application or none of it: a restart applies
exactly what is missing, never an answer twice. Two processes on one file cannot both apply
the same rows: each reads the position inside its write transaction.

rank_counts (people per board, number of correct answers and time bucket, for "my rank":
bot/storage/rank_buckets.py) is kept here, in Python, from what each upsert returns: no trigger
fires per aggregate row (a migration dropped the nine of migration 8 that did, and counted once
more). So are the dashboard's figures (chat_figures, chat_day_figures: a chat's people, answers
and right answers, all time and per day), from the same upserts of totals and scores.

These commits run with synchronous=NORMAL: everything they write can be derived again from the
answers, and a power loss can only drop a whole application (WAL), which the next one redoes.

When: while answers keep arriving they go first, and the backlog is applied once the oldest
has waited `max_lag`; once no answer has come for `interval` (the writer is idle), at once.
Each transaction is bounded by `chunk` answers and by a time (the chunk size follows the
measured CPU cost per answer): about as long as the writer's batches of answers take, their
commit included (at least `budget`), so an answer that arrives meanwhile waits as it would
for one more batch; ten times that when nothing is queued and the writer is idle or a board
waits. Never fewer than MIN_CHUNK answers, though: each transaction writes every page it
touched to the WAL, so the cost per answer climbs steeply below that. The writer serves the
answers queued meanwhile before the next chunk. Every `idle_check` seconds the thread also
looks for answers another process committed and did not apply (it crashed). `request()`
(SqliteStorage.materialize) applies everything committed so far, chunk by chunk. Opening
applies whatever a crash left, and closing what is left.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import date, timedelta
from typing import Any

from bot import metrics
from bot.storage import kept, rank_buckets
from bot.storage.aggregation import Batch, Sums, aggregate, streaks
from bot.storage.sqlite.sql import SqliteSql, drive

log = logging.getLogger(__name__)
Db = sqlite3.Connection

INTERVAL = 0.05  # s without a new answer after which the writer counts as idle
MAX_LAG = 1.0  # s an answer waits at most, even while answers keep the writer busy
BACKLOG = 5000  # answers waiting that are applied without waiting for MAX_LAG
CHUNK = 2000  # answers per transaction at most
BUDGET = 0.002  # s a transaction should take while answers may be waiting behind it
IDLE_CHECK = 1.0  # s between looks for answers another process left unapplied
FIRST_GUESS = 40e-6  # s per answer, until a chunk was measured
IDLE_FACTOR = 10  # how much longer a chunk may take once the writer is idle
MIN_CHUNK = 50  # answers: smaller transactions cost far more per answer (WAL pages written)

# (board, chat_key, day, correct, time bucket): the people in that group more or fewer
RankDelta = Counter[tuple[str, str, str, int, int]]
# (chat_key,) or (chat_key, day): [people, answered, correct] to add (or take away)
FigureDelta = dict[tuple[str, ...], list[int]]


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


def _upsert(table: str, key: str) -> str:
    """Add a JSON list of [*key, correct, answered, time_ms] to `table`; RETURNING each row as
    it now is, so the caller knows which rows are new and which changed their group."""
    keys = [k.strip() for k in key.split(",")]
    values = ", ".join(f"value ->> {i}" for i in range(len(keys) + 3))
    return (
        f"INSERT INTO {table}({key}, correct, answered, time_ms) SELECT {values}"
        " FROM json_each(?) WHERE true"
        f" ON CONFLICT({key}) DO UPDATE SET correct = correct + excluded.correct,"
        " answered = answered + excluded.answered, time_ms = time_ms + excluded.time_ms"
        f" RETURNING {key}, correct, answered, time_ms"
    )


UPSERT_SCORES = _upsert("scores", "chat_key, day, person_key")
UPSERT_TOTALS = _upsert("totals", "chat_key, person_key")
UPSERT_WEEK = _upsert("week_scores", "chat_key, person_key")
RANK_COLUMNS = ("board text, chat_key text, day text, correct integer, bucket integer,"
                " people integer")


def _add_figures(table: str, key: str) -> str:
    """Add (key..., people, answered, correct) to the figures `table`, one row a call."""
    marks = ", ".join("?" for _ in key.split(","))
    return (
        f"INSERT INTO {table}({key}, people, answered, correct) VALUES ({marks}, ?, ?, ?)"
        f" ON CONFLICT({key}) DO UPDATE SET people = people + excluded.people,"
        " answered = answered + excluded.answered, correct = correct + excluded.correct"
    )


ADD_FIGURES = {"all": _add_figures("chat_figures", "chat_key"),
               "day": _add_figures("chat_day_figures", "chat_key, day")}
# every board's counts from its table
BUCKET = rank_buckets.sql("time_ms")
RECOUNT_RANKS = {
    "all": f"SELECT 'all', chat_key, '', correct, {BUCKET}, COUNT(*) FROM totals"
           " WHERE true{cond} GROUP BY 2, 4, 5",
    "week": f"SELECT 'week', chat_key, '', correct, {BUCKET}, COUNT(*) FROM week_scores"
            " WHERE true{cond} GROUP BY 2, 4, 5",
    "day": f"SELECT 'day', chat_key, day, correct, {BUCKET}, COUNT(*) FROM scores"
           " WHERE true{cond} GROUP BY 2, 3, 4, 5",
}
WEEK_DAYS = 7


def recount_ranks(db: Db, boards: Iterable[str] = RECOUNT_RANKS, chat: str | None = None) -> None:
    """Count rank_counts again from the aggregate tables (all chats, or one), for a change
    that is not an application of answers: a chat's move, the week summed again."""
    cond, params = ("", ()) if chat is None else (" AND chat_key = ?", (chat,))
    for board in boards:
        db.execute(f"DELETE FROM rank_counts WHERE board = ?{cond}", (board, *params))
        db.execute("INSERT INTO rank_counts(board, chat_key, day, correct, bucket, people) "
                   + RECOUNT_RANKS[board].replace("{cond}", cond), params)


def add_figures(db: Db, board: str, delta: FigureDelta) -> None:
    """Add `delta` to the figures kept from `board`'s table (one executemany)."""
    changes = [(*key, *values) for key, values in delta.items() if any(values)]
    if changes:
        db.executemany(ADD_FIGURES[board], changes)


def count_ranks(db: Db, delta: RankDelta) -> None:
    drive(SqliteSql(db).upsert(
        "rank_counts", RANK_COLUMNS, [(*k, n) for k, n in delta.items() if n],
        "board, chat_key, day, correct, bucket", "people = people + excluded.people"))


def _add_up(
    db: Db, sql: str, board: str, rows: dict[Any, Sums], delta: RankDelta,
    figures: FigureDelta | None = None,
) -> None:
    """Upsert `rows` (key tuple -> sums) and count what moved between groups: a new row reaches
    its (correct, time bucket), a changed one leaves the old one (its time grew even if its
    correct answers did not). With `figures`, add each row's answers to its chat's (and day's)
    figures, and a new row's person."""
    if not rows:
        return
    day_board = board == "day"
    for row in db.execute(sql, (json.dumps([(*k, *v) for k, v in rows.items()]),)):
        key = row[:-3]
        correct, answered, time_ms = row[-3:]
        added_correct, added_answered, added_time = rows[key]
        if figures is not None:
            sums = figures.setdefault(key[:2] if day_board else key[:1], [0, 0, 0])
            sums[0] += answered == added_answered
            sums[1] += added_answered
            sums[2] += added_correct
        group = (board, key[0], key[1] if day_board else "", correct,
                 rank_buckets.bucket(time_ms))
        if answered != added_answered:  # it was there: it leaves its old group
            old = (*group[:3], correct - added_correct, rank_buckets.bucket(time_ms - added_time))
            if old == group:
                continue
            delta[old] -= 1
        delta[group] += 1


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
        recount_ranks(db, ["week"])
    else:
        leaving = date.fromisoformat(week_start(until))
        delta: RankDelta = Counter()
        while (gone := leaving.isoformat()) < week_start(day):
            _leave_week(db, gone, delta)
            leaving += timedelta(days=1)
        count_ranks(db, delta)
    db.execute("INSERT OR REPLACE INTO week_window(id, until) VALUES (1, ?)", (day,))
    return day


def _leave_week(db: Db, gone: str, delta: RankDelta) -> None:
    """Take the day `gone` out of week_scores (a row left with no answers goes)."""
    changed, emptied = [], []
    for chat, person, correct, answered, time_ms, d_correct, d_answered, d_time in db.execute(
        "SELECT w.chat_key, w.person_key, w.correct, w.answered, w.time_ms, s.correct,"
        " s.answered, s.time_ms FROM scores AS s INDEXED BY scores_day"
        " JOIN week_scores AS w ON w.chat_key = s.chat_key AND w.person_key = s.person_key"
        " WHERE s.day = ?",
        (gone,),
    ):
        was = ("week", chat, "", correct, rank_buckets.bucket(time_ms))
        if answered - d_answered <= 0:
            emptied.append((chat, person))
        else:
            changed.append((correct - d_correct, answered - d_answered, time_ms - d_time,
                            chat, person))
            now = ("week", chat, "", correct - d_correct, rank_buckets.bucket(time_ms - d_time))
            if now == was:
                continue
            delta[now] += 1
        delta[was] -= 1
    db.executemany(
        "UPDATE week_scores SET correct=?, answered=?, time_ms=? WHERE chat_key=? AND"
        " person_key=?", changed)
    db.executemany("DELETE FROM week_scores WHERE chat_key=? AND person_key=?", emptied)


def apply(db: Db, limit: int = CHUNK, apart: bool = False) -> tuple[int, int]:
    """Apply up to `limit` answers after the stored position, inside the caller's
    transaction (`apart`: the aggregates in a file of their own, aggregates_file.py).
    Returns (answers applied, the new position)."""
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
    delta: RankDelta = Counter()
    day_figures: FigureDelta = {}
    chat_figures: FigureDelta = {}
    _add_up(db, UPSERT_SCORES, "day", batch.scores, delta, day_figures)
    _add_up(db, UPSERT_TOTALS, "all", batch.totals, delta, chat_figures)
    # and <= until: the window now reaches the newest day
    _add_up(db, UPSERT_WEEK, "week", batch.week(week_start(until)), delta)
    count_ranks(db, delta)
    add_figures(db, "day", day_figures)
    add_figures(db, "all", chat_figures)
    _streaks(db, batch.runs, apart)
    end = int(rows[-1][0])
    drive(kept.apply_chunk(SqliteSql(db), "id > $1 AND id <= $2", "id", start, end))
    db.execute("UPDATE materialized SET position=? WHERE name='scores'", (end,))
    return len(rows), end


def _streaks(db: Db, runs: dict[str, list[bool]], apart: bool) -> None:
    """Continue each person's run of correct answers (current, best) through their answers
    in id order, as the trigger of migration 1 did one answer at a time. `apart`: in the
    aggregates' file's streaks table (aggregates_file.py), else in the persons' rows."""
    read, write = (STREAKS_APART if apart else STREAKS_INLINE)
    stored = {key: (current, best)
              for key, current, best in db.execute(read, (json.dumps(list(runs)),))}
    updates = []
    for key, corrects in runs.items():
        updates.append((key, *streaks(stored.get(key, (0, 0)), corrects)))
    db.executemany(write, updates)


STREAKS_INLINE = (
    "SELECT key, current_streak, best_streak FROM persons"
    " WHERE key IN (SELECT value FROM json_each(?))",
    "UPDATE persons SET current_streak = ?2, best_streak = ?3 WHERE key = ?1",
)
STREAKS_APART = (
    "SELECT person_key, current_streak, best_streak FROM streaks"
    " WHERE person_key IN (SELECT value FROM json_each(?))",
    "INSERT INTO streaks(person_key, current_streak, best_streak) VALUES (?, ?, ?)"
    " ON CONFLICT(person_key) DO UPDATE SET current_streak = excluded.current_streak,"
    " best_streak = excluded.best_streak",
)


class Materializer:
    """The writer thread's housekeeper (writer.Housekeeper)."""

    def __init__(
        self, interval: float = INTERVAL, backlog: int = BACKLOG, chunk: int = CHUNK,
        idle_check: float = IDLE_CHECK, max_lag: float = MAX_LAG, budget: float = BUDGET,
    ) -> None:
        self.interval = interval
        self.backlog = backlog
        self.max_lag = max(max_lag, interval)
        self.chunk = chunk
        self.budget = budget
        self.idle_check = idle_check
        # True once the materializer has a thread of its own (aggregator.py), not the
        # answers' writer's: then a chunk need not be short, no answer waits for it
        self.own_thread = False
        self.position = 0  # as far as this process knows; read by the event loop
        self.applied = 0  # answers this process applied (bench and tests)
        self.transactions = 0  # applications this process committed (tests)
        self._seen = 0  # the newest answer id the writer thread knows of
        self._last_answer = 0.0  # when the writer last committed answers (monotonic)
        self._since: float | None = None  # when unapplied answers were first seen
        self._per_answer = FIRST_GUESS  # s per answer applied, measured
        self._batch_seconds = 0.0  # s a batch of writes takes, measured
        self._next_look = 0.0
        self._lock = threading.Lock()
        self._requests: list[tuple[asyncio.Future[None], Callable[..., Any]]] = []
        self._waiting: list[tuple[int, asyncio.Future[None], Callable[..., Any]]] = []

    # the event loop's side -------------------------------------------------------------------
    def request(self, future: asyncio.Future[None], post: Callable[..., Any]) -> None:
        """Apply everything committed so far, then resolve `future` through `post` (the
        loop's call_soon_threadsafe). The caller wakes the writer thread."""
        with self._lock:
            self._requests.append((future, post))

    # the writer thread's side ----------------------------------------------------------------
    def noted(self, answer_id: int) -> None:
        """The writer inserted answers up to `answer_id` (committed, or failing with their
        batch: an id that never commits is found missing by the next application)."""
        if answer_id > self._seen:
            self._seen = answer_id
        self._last_answer = time.monotonic()

    def idle_since_applied(self) -> bool:
        """No unapplied answers seen yet: a new one needs the thread woken (own_thread)."""
        return self._since is None

    def batch_took(self, seconds: float) -> None:
        """How long the writer's last batch of writes took (its commit's fsync included)."""
        self._batch_seconds = 0.8 * self._batch_seconds + 0.2 * seconds

    def start(self, db: Db) -> None:
        """At open: apply what a crash (or a version with the trigger) left behind."""
        self.position = position(db)
        self._catch_up(db)

    def due_in(self) -> float | None:
        if self._requests or self._waiting:
            return 0.0
        now = time.monotonic()
        if self._since is not None:
            return max(0.0, min(self._last_answer + self.interval, self._since + self.max_lag)
                       - now)
        return max(0.0, self._next_look - now)

    def run(self, db: Db, idle: bool) -> None:
        """One step between the writer's batches: at most one chunk (the writer serves
        what was queued meanwhile, then calls again; due_in() is 0 while more is due)."""
        with self._lock:
            requests, self._requests = self._requests, []
        if requests:
            top = newest(db)
            self._seen = max(self._seen, top)
            self._waiting.extend((top, future, post) for future, post in requests)
        now = time.monotonic()
        if self.own_thread:  # one cheap look (the rowid's end): the writer commits apart
            self._seen = max(self._seen, newest(db))
        if now >= self._next_look:  # answers another process committed and left
            self._seen = max(self._seen, newest(db))
            self._next_look = now + self.idle_check
        metrics.MATERIALIZER_LAG.set(max(0, self._seen - self.position))
        if self._seen <= self.position:
            self._since = None
            self._settle(None)
            return
        if self._since is None:
            self._since = now
        quiet = idle and now - self._last_answer >= self.interval
        late = now - self._since >= self.max_lag or self._seen - self.position >= self.backlog
        if not (self._waiting or quiet or late):
            return
        # Answers that arrive during a chunk wait for it as they would for one more batch of
        # writes: a chunk takes about as long as a batch (at least `budget`); ten times that
        # when nothing is queued and either no answer has come for `interval` or a board is
        # waiting (larger chunks cost less per answer: fewer pages written to the WAL)
        big = idle and (quiet or bool(self._waiting))
        budget = max(self.budget, self._batch_seconds) * (IDLE_FACTOR if big else 1)
        size = max(min(MIN_CHUNK, self.chunk), min(self.chunk, int(budget / self._per_answer)))
        if self.own_thread:  # only the writes of both files wait for a chunk: a large one
            size = self.chunk
        try:
            count = self._transaction(db, size)
        except Exception as exc:
            self._since = now  # tried again after another interval
            self._settle(exc)
            raise
        if count < size:  # nothing more is committed: an id noted may have been rolled back
            self._seen = self.position
        if self._seen <= self.position:
            self._since = None
        metrics.MATERIALIZER_LAG.set(max(0, self._seen - self.position))
        self._settle(None)

    def _settle(self, error: BaseException | None) -> None:
        """Resolve the requests whose answers are applied (all of them on an error)."""
        if not self._waiting:
            return
        done = [w for w in self._waiting if error is not None or w[0] <= self.position]
        if not done:
            return
        self._waiting = [w for w in self._waiting if w not in done]
        for _, future, post in done:
            post(_settle, future, error)

    def finish(self, db: Db) -> None:
        """At close: apply what is left, so the file is current when nothing runs."""
        with self._lock:
            requests, self._requests = self._requests, []
        self._waiting.extend((0, future, post) for future, post in requests)
        try:
            self._catch_up(db)
        except Exception as exc:
            self._settle(exc)
            raise
        self._settle(None)

    def catch_up(self, db: Db) -> None:
        """Apply every committed answer not applied yet, by any process, now: for a store
        with no writer thread to run it between batches (the core's unit tests' store)."""
        self.position = position(db)
        if self.position < newest(db):
            self._catch_up(db)

    def _catch_up(self, db: Db) -> None:
        """Everything, now (nothing else is waiting for the writer: open and close)."""
        if self.position < newest(db):
            # the week window first moves to the newest answer's day, so a long backlog's
            # older days are never added to week_scores only to be taken out again
            self._transaction(db, self.chunk, roll_first=True)
        while self._transaction(db, self.chunk):
            pass
        self._seen = self.position
        self._since = None
        metrics.MATERIALIZER_LAG.set(0)

    def _transaction(self, db: Db, limit: int, roll_first: bool = False) -> int:
        """One application in its own transaction; the number of answers applied."""
        started = time.thread_time()  # its own CPU: a busy machine does not shrink chunks
        db.execute("PRAGMA synchronous=NORMAL")  # derived data: see the module docstring
        try:
            # a deferred BEGIN whose first statement writes the position: the write lock of
            # the file that holds the aggregates only (BEGIN IMMEDIATE would take the
            # answers' file's too, aggregates_file.py), and the position read under it
            db.execute("BEGIN")
            try:
                db.execute("INSERT OR IGNORE INTO materialized(name, position)"
                           " VALUES ('scores', 0)")
                if roll_first:
                    roll_week(db, newest_day(db))
                count, end = apply(db, limit, self.own_thread)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        finally:
            db.execute("PRAGMA synchronous=FULL")
        self.position = end
        self.applied += count
        self.transactions += 1
        if count >= 16:  # the cost per answer of a chunk large enough to tell
            self._per_answer = 0.5 * self._per_answer + 0.5 * (
                (time.thread_time() - started) / count)
        return count


def _settle(future: asyncio.Future[None], error: BaseException | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)
