"""The materializer: boards' aggregates kept off the answer's path, on PostgreSQL.

An answer's transaction writes the answer row and nothing else. A task of its own, on its own
connection, applies committed answers to the aggregate tables in batches:

    BEGIN
      (tx, id) = materialized.position FOR UPDATE      -- one process at a time
      chunk = answers WHERE (tx, id) > position
                        AND tx < HORIZON (the snapshot's xmin, this database's)
                      ORDER BY tx, id LIMIT chunk
      scores, totals (per chat and '*'), week_scores += chunk, summed by the server
      rank_counts += how those rows moved between groups     -- one statement (APPLY)
                     (a group: correct answers and time bucket, rank_buckets.py)
      chat_figures, chat_day_figures += people, answers, right answers per chat (and day)
      item_firsts, item_options, item_groups += first answers (item_figures.py)
      day_runs += right daily answers (day_runs.py)
      cards, card_days moved by every answer (cards.py)
      difficulty ratings moved by first answers, in order (difficulty.py)
      streaks continued through chunk, in order
      materialized.position = (tx, id) of the last row   -- in the same transaction
    COMMIT

Why (tx, id) and not the id alone: ids come from a sequence when a row is inserted, not when
it commits, so with several writers an answer with a lower id can commit after one with a
higher id. Every answer stores the id of the transaction that inserted it (answers.tx), and
only transactions older than the oldest one still running are applied: they have all ended,
and every transaction still to come gets a higher id. So an answer is applied once, exactly
once, whichever process committed it and in whatever order; a crash undoes a whole
application or none of it, and the next one redoes it.

These transactions run with synchronous_commit off: what they write is derived from the
answers, and a lost application is redone from the stored position. The summing is the
server's, on this connection: the bot's event loop, which the writer shares, does no work per
answer for the boards but the streaks' runs (a list append), so a chunk, however large, never
holds the answers up; it takes no lock an answer's statement waits for.

When: an answer committed by this process waits at most `interval` (a backlog of `backlog`
is applied at once); every `idle_check` seconds the task also looks for answers of other
processes that nobody applied (one crashed). `request()` (PostgresStorage.materialize) applies
everything up to a given answer now. Opening applies whatever was left, and closing too.

A transaction that stays open elsewhere on the server holds back the answers committed after
it began: a board then waits at most `wait_limit` and shows what is applied (it catches up
once that transaction ends); the answers themselves are never held back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import date, timedelta
from typing import Any

from bot.storage import kept, rank_buckets
from bot.storage.aggregation import streaks
from bot.storage.postgres import rank_counts
from bot.storage.postgres.sql import PgSql

log = logging.getLogger(__name__)
Db = Any  # an asyncpg.Connection
Position = tuple[int, int]  # (transaction id, answer id)

INTERVAL = 0.1  # s an answer may wait before it is applied: boards lag by about this much
BACKLOG = 500  # answers waiting that are applied without waiting for INTERVAL
CHUNK = 5000  # answers per transaction
IDLE_CHECK = 1.0  # s between looks for answers another process left unapplied
WAIT_LIMIT = 5.0  # s a board waits for older transactions (another process) to end
OPEN_WAIT = 10.0  # s opening waits for them, to apply every answer stored before it
CLOSE_WAIT = 2.0  # s closing does (what is left is applied by the next start)
WEEK_DAYS = 7

# the oldest transaction still running that may have written answers: the snapshot's xmin,
# but leaving out those known to be another database's (another app on the server, or a
# test's held lock, would otherwise stall the boards of every database). One whose database
# is not known (another role's session, a subtransaction) is kept, so an answer is never
# passed over.
HORIZON = (
    "(SELECT LEAST(pg_snapshot_xmax(s), (SELECT min(x) FROM pg_snapshot_xip(s) AS x"
    " WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity AS p WHERE p.backend_xid = xid(x)"
    " AND p.datname <> current_database()))) FROM pg_current_snapshot() AS s)"
)
LOCK_POSITION = "SELECT tx, id FROM materialized WHERE name = 'scores' FOR UPDATE"
PENDING = (
    "SELECT m.tx, m.id, EXISTS (SELECT 1 FROM answers AS a WHERE (a.tx, a.id) > (m.tx, m.id)"
    f" AND a.tx < {HORIZON})"
    " FROM materialized AS m WHERE m.name = 'scores'"
)
CHUNK_ROWS = (  # the next chunk, in order: its end, and the runs of the streaks
    "SELECT tx, id, person_key, correct, (answered_at AT TIME ZONE 'UTC')::date FROM answers"
    f" WHERE (tx, id) > ($1::xid8, $2::bigint) AND tx < {HORIZON}"
    " ORDER BY tx, id LIMIT $3"
)
NEWEST = "SELECT tx, id FROM answers ORDER BY tx DESC, id DESC LIMIT 1"
NEWEST_DAY = (
    "SELECT (answered_at AT TIME ZONE 'UTC')::date FROM answers"
    " WHERE (tx, id) > ($1::xid8, $2::bigint) ORDER BY tx DESC, id DESC LIMIT 1"
)


def _upsert(table: str, key: str, sums: str) -> str:
    columns = f"chat_key, {key}, correct, answered, time_ms"
    return (
        f"INSERT INTO {table}({columns}) SELECT {columns} FROM {sums} ORDER BY chat_key, {key}"
        f" ON CONFLICT (chat_key, {key}) DO UPDATE SET"
        f" correct = {table}.correct + excluded.correct,"
        f" answered = {table}.answered + excluded.answered,"
        f" time_ms = {table}.time_ms + excluded.time_ms"
        f" RETURNING chat_key, {key}, correct, answered, time_ms"
    )


def _moved(board: str, upserted: str, sums: str, key: str, day: str) -> str:
    """Each upserted row's board, chat, day, new and old group: number of correct answers
    (NULL: it is new) and time bucket. A row that existed had at least one answer, so a row
    that holds only this chunk's answers is new."""
    return (
        f"SELECT '{board}'::text AS board, u.chat_key, {day} AS day, u.correct AS new,"
        f" {rank_buckets.sql('u.time_ms', postgres=True)} AS new_bucket,"
        " CASE WHEN u.answered = s.answered THEN NULL ELSE u.correct - s.correct END AS old,"
        f" {rank_buckets.sql('u.time_ms - s.time_ms', postgres=True)} AS old_bucket"
        f" FROM {upserted} AS u JOIN {sums} AS s USING (chat_key, {key})"
    )


def _figures(table: str, columns: str, upserted: str, sums: str, key: str) -> str:
    """The dashboard's figures of each chat (and day) the upserted rows are in: their answers
    and right answers added, and a new row's person (a row that holds only this chunk's
    answers is new, as in _moved). Run whether or not the statement reads it, like every
    data-modifying WITH."""
    return (
        f"INSERT INTO {table}({columns}, people, answered, correct)"
        f" SELECT {', '.join(f'u.{c}' for c in columns.split(', '))},"
        " count(*) FILTER (WHERE u.answered = s.answered), sum(s.answered), sum(s.correct)"
        f" FROM {upserted} AS u JOIN {sums} AS s USING (chat_key, {key})"
        f" GROUP BY {columns} ORDER BY {columns}"
        f" ON CONFLICT ({columns}) DO UPDATE SET people = {table}.people + excluded.people,"
        f" answered = {table}.answered + excluded.answered,"
        f" correct = {table}.correct + excluded.correct"
    )


# One statement applies a chunk (tx, id) in ($1, $2] .. ($3, $4] to every aggregate, summed on
# the server, moves each changed row between its board's groups in rank_counts (the people with
# the same number of correct answers and time bucket) and adds to the dashboard's figures. $5
# is the week window's first day. The chunk's answers have all committed (their transactions
# are older than every running one), so the range holds the same rows for every statement of
# the transaction.
APPLY = f"""
WITH chunk AS (
    SELECT chat_key, person_key, correct::int AS correct, elapsed_ms,
           (answered_at AT TIME ZONE 'UTC')::date AS day
    FROM answers
    WHERE (tx, id) > ($1::xid8, $2::bigint) AND (tx, id) <= ($3::xid8, $4::bigint)
), day_sums AS (  -- each answer counts in its chat and in every chat ('*')
    SELECT chat_key, day, person_key, sum(correct)::int AS correct,
           count(*)::int AS answered, sum(elapsed_ms)::bigint AS time_ms
    FROM (SELECT chat_key, day, person_key, correct, elapsed_ms FROM chunk
          UNION ALL SELECT '*', day, person_key, correct, elapsed_ms FROM chunk) AS c
    GROUP BY chat_key, day, person_key
), all_sums AS (
    SELECT chat_key, person_key, sum(correct)::int AS correct, sum(answered)::int AS answered,
           sum(time_ms)::bigint AS time_ms
    FROM day_sums GROUP BY chat_key, person_key
), week_sums AS (  -- and <= the window's end: it was rolled to the chunk's newest day
    SELECT chat_key, person_key, sum(correct)::int AS correct, sum(answered)::int AS answered,
           sum(time_ms)::bigint AS time_ms
    FROM day_sums WHERE day >= $5::date GROUP BY chat_key, person_key
), day_rows AS ({_upsert("scores", "day, person_key", "day_sums")}
), all_rows AS ({_upsert("totals", "person_key", "all_sums")}
), week_rows AS ({_upsert("week_scores", "person_key", "week_sums")}
), day_figures AS ({_figures("chat_day_figures", "chat_key, day", "day_rows", "day_sums",
                              "day, person_key")}
), all_figures AS ({_figures("chat_figures", "chat_key", "all_rows", "all_sums", "person_key")}
), moved AS (
    {_moved("day", "day_rows", "day_sums", "day, person_key", "u.day")}
    UNION ALL {_moved("all", "all_rows", "all_sums", "person_key", "'-infinity'::date")}
    UNION ALL {_moved("week", "week_rows", "week_sums", "person_key", "'-infinity'::date")}
), changes AS (
    SELECT board, chat_key, day, new AS correct, new_bucket AS bucket, 1 AS people FROM moved
    WHERE (old, old_bucket) IS DISTINCT FROM (new, new_bucket)
    UNION ALL SELECT board, chat_key, day, old, old_bucket, -1 FROM moved
    WHERE old IS NOT NULL AND (old, old_bucket) <> (new, new_bucket)
)
INSERT INTO rank_counts(board, chat_key, day, correct, bucket, people)
SELECT board, chat_key, day, correct, bucket, sum(people) FROM changes
GROUP BY board, chat_key, day, correct, bucket HAVING sum(people) <> 0
ORDER BY board, chat_key, day, correct, bucket
ON CONFLICT (board, chat_key, day, correct, bucket)
DO UPDATE SET people = rank_counts.people + excluded.people
"""
UPSERT_STREAKS = (
    "INSERT INTO streaks(person_key, current_streak, best_streak)"
    " SELECT * FROM unnest($1::text[], $2::int[], $3::int[])"
    " ON CONFLICT (person_key) DO UPDATE SET current_streak = excluded.current_streak,"
    " best_streak = excluded.best_streak"
)


def week_start(until: date) -> date:
    """The first UTC day of the week window ending on `until`."""
    return until - timedelta(days=WEEK_DAYS - 1)


async def week_until(db: Db) -> date | None:
    until: date | None = await db.fetchval("SELECT until FROM week_window WHERE id = 1")
    return until


async def roll_week(db: Db, day: date) -> date:
    """Move the week window forward so that it ends on `day` (never back), inside the
    caller's transaction, which holds the position lock (LOCK_POSITION). Days that leave the
    window are taken out of week_scores one day at a time; after a gap of a week or more it
    is summed again."""
    until = await week_until(db)
    if until is not None and day <= until:
        return until
    if until is None or day - until >= timedelta(days=WEEK_DAYS):
        await db.execute("DELETE FROM week_scores")
        await db.execute(
            "INSERT INTO week_scores(chat_key, person_key, correct, answered, time_ms)"
            " SELECT chat_key, person_key, sum(correct), sum(answered), sum(time_ms)"
            " FROM scores WHERE day >= $1 AND day <= $2 GROUP BY chat_key, person_key"
            " ORDER BY chat_key, person_key",
            week_start(day), day,
        )
    else:
        gone = week_start(until)
        while gone < week_start(day):
            await db.execute(
                "UPDATE week_scores AS w SET correct = w.correct - s.correct,"
                " answered = w.answered - s.answered, time_ms = w.time_ms - s.time_ms"
                " FROM scores AS s WHERE s.day = $1"
                " AND w.chat_key = s.chat_key AND w.person_key = s.person_key",
                gone,
            )
            await db.execute(
                "DELETE FROM week_scores AS w USING scores AS s WHERE s.day = $1"
                " AND w.chat_key = s.chat_key AND w.person_key = s.person_key"
                " AND w.answered <= 0",
                gone,
            )
            gone += timedelta(days=1)
    await rank_counts.recount(db, ["week"])  # once a day: a scan of week_scores
    await db.execute("UPDATE week_window SET until = $1 WHERE id = 1", day)
    return day


async def apply(db: Db, limit: int = CHUNK, roll_first: bool = False) -> tuple[int, Position]:
    """Apply up to `limit` answers after the stored position, inside the caller's
    transaction (which this locks the position in). Returns (answers applied, the new
    position). `roll_first`: move the week window to the newest answer's day first, so a
    long backlog's older days are never added to week_scores only to be taken out again."""
    tx, last = await db.fetchrow(LOCK_POSITION)
    start: Position = (int(tx), int(last))
    if roll_first:
        newest = await db.fetchval(NEWEST_DAY, *start)
        if newest is not None:
            await roll_week(db, newest)
    rows = await db.fetch(CHUNK_ROWS, start[0], start[1], limit)
    if not rows:
        return 0, start
    end: Position = (int(rows[-1][0]), int(rows[-1][1]))
    # the window moves before this chunk reaches scores: a day leaving it is taken out of
    # week_scores as week_scores holds it (without this chunk's rows of that day)
    until = await roll_week(db, max(row[4] for row in rows))
    await db.execute(APPLY, *start, *end, week_start(until))
    await kept.apply_chunk(
        PgSql(db), "(tx, id) > ($1::xid8, $2::bigint) AND (tx, id) <= ($3::xid8, $4::bigint)",
        "tx, id", *start, *end)
    runs: dict[str, list[bool]] = {}
    for row in rows:
        runs.setdefault(row[2], []).append(row[3])
    await _streaks(db, runs)
    await db.execute(
        "UPDATE materialized SET tx = $1::xid8, id = $2 WHERE name = 'scores'", *end
    )
    return len(rows), end


async def _streaks(db: Db, runs: dict[str, list[bool]]) -> None:
    """Continue each person's run of correct answers (current, best) through their answers
    in (tx, id) order."""
    people = sorted(runs)
    stored = {
        row[0]: (int(row[1]), int(row[2]))
        for row in await db.fetch(
            "SELECT person_key, current_streak, best_streak FROM streaks"
            " WHERE person_key = ANY($1::text[])",
            people,
        )
    }
    currents: list[int] = []
    bests: list[int] = []
    for key in people:
        current, best = streaks(stored.get(key, (0, 0)), runs[key])
        currents.append(current)
        bests.append(best)
    await db.execute(UPSERT_STREAKS, people, currents, bests)


class Materializer:
    """Applies answers in a task of its own, on a connection of its own."""

    def __init__(
        self, interval: float = INTERVAL, backlog: int = BACKLOG, chunk: int = CHUNK,
        idle_check: float = IDLE_CHECK, wait_limit: float = WAIT_LIMIT,
        close_wait: float = CLOSE_WAIT,
    ) -> None:
        self.interval = interval
        self.backlog = backlog
        self.chunk = chunk
        self.idle_check = idle_check
        self.wait_limit = wait_limit
        self.close_wait = close_wait
        self.position: Position = (0, 0)  # as far as this process knows
        self.applied = 0  # answers this process applied (bench and tests)
        self._connect: Callable[[], Awaitable[Db]] | None = None
        self._db: Db | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._pending = 0  # answers this process committed since the last application
        self._since: float | None = None  # when they were first committed
        self._requests: list[tuple[Position, asyncio.Future[None]]] = []
        self._closing = False
        self._failures = 0  # applications failed in a row

    # lifecycle ---------------------------------------------------------------------------
    async def start(self, connect: Callable[[], Awaitable[Db]]) -> None:
        """Open the connection and apply what a crash (or an older schema) left behind."""
        self._connect = connect
        self._db = await self._connection()
        await self._catch_up_to_newest(OPEN_WAIT, roll_first=True)
        self._task = asyncio.create_task(self._run(), name="quizbot-pg-materializer")

    async def close(self) -> None:
        """Stop the task, apply what is left, close the connection."""
        self._closing = True
        self._wake.set()
        if self._task is not None:
            await self._task
            self._task = None
        try:
            if self._db is not None and not self._db.is_closed():
                await self._catch_up_to_newest(self.close_wait)
        except Exception:
            log.exception("applying answers at close failed; it runs at the next start")
        finally:
            for _, future in self._requests:
                if not future.done():
                    future.set_result(None)
            self._requests.clear()
            if self._db is not None:
                await _close(self._db)
                self._db = None

    # the event loop's side ---------------------------------------------------------------
    def committed(self, count: int) -> None:
        """The writer committed `count` answers."""
        if count <= 0:
            return
        self._pending += count
        if self._since is None:
            self._since = time.monotonic()
        if self._pending >= self.backlog:
            self._wake.set()

    async def request(self, target: Position) -> None:
        """Return once every answer up to `target` is in the aggregates (or after
        wait_limit, if an older transaction of another process is still running)."""
        if self._task is None or self._task.done():
            raise RuntimeError("storage is not open")
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._requests.append((target, future))
        self._wake.set()
        await future

    # the task ----------------------------------------------------------------------------
    async def _connection(self) -> Db:
        if self._db is None or self._db.is_closed():
            assert self._connect is not None
            self._db = await self._connect()
            await self._db.execute("SET synchronous_commit = off")  # derived data
        return self._db

    def _due_in(self) -> float:
        if self._requests:
            return 0.0
        if self._since is not None:
            return max(0.0, self._since + self.interval - time.monotonic())
        return self.idle_check

    async def _run(self) -> None:
        while not self._closing:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self._due_in())
            self._wake.clear()
            if self._closing:
                return
            try:
                if self._requests:
                    await self._serve_requests()
                elif self._since is not None:
                    if (time.monotonic() - self._since >= self.interval
                            or self._pending >= self.backlog):
                        self._pending, self._since = 0, None
                        await self._catch_up()
                else:
                    await self._look()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # the server restarting, the network: said once, then tried again, less
                # and less often (at most every 5 s) until it works
                if not self._failures:
                    log.exception("applying answers to the boards failed; tried again later")
                else:
                    log.debug("applying answers to the boards failed again: %s", exc)
                self._failures += 1
                await _close(self._db)
                self._db = None
                if self._since is None:
                    self._since = time.monotonic()
                await asyncio.sleep(min(5.0, self.interval * 2 ** min(self._failures, 10)))
            else:
                if self._failures:
                    log.info("applying answers to the boards works again")
                self._failures = 0

    async def _serve_requests(self) -> None:
        requests, self._requests = self._requests, []
        self._pending, self._since = 0, None
        deadline = time.monotonic() + self.wait_limit
        pause = 0.001
        try:
            while True:
                await self._catch_up()
                waiting = [(t, f) for t, f in requests if t > self.position and not f.done()]
                for target, future in requests:
                    if target <= self.position and not future.done():
                        future.set_result(None)
                if not waiting:
                    return
                if time.monotonic() > deadline:
                    log.warning(
                        "boards wait for a transaction that has run for over %g s (another "
                        "process?); they catch up once it ends", self.wait_limit,
                    )
                    for _, future in waiting:
                        if not future.done():
                            future.set_result(None)
                    return
                requests = waiting  # an older transaction is still running: wait for it
                await asyncio.sleep(pause)
                pause = min(pause * 2, 0.05)
        except BaseException as exc:
            for _, future in requests:
                if not future.done():
                    future.set_exception(exc if isinstance(exc, Exception) else
                                         RuntimeError("storage closed"))
            raise

    async def _look(self) -> None:
        """Answers nobody applied (another process committed them, then crashed)?"""
        db = await self._connection()
        tx, last, pending = await db.fetchrow(PENDING)
        self.position = max(self.position, (int(tx), int(last)))
        if pending:
            await self._catch_up()

    async def _catch_up_to_newest(self, limit: float, roll_first: bool = False) -> None:
        """Apply every answer committed so far. An answer committed after a transaction
        that is still running (another process's, anywhere on the server) waits for it to
        end, for at most `limit` seconds; the task applies it later otherwise."""
        db = await self._connection()
        row = await db.fetchrow(NEWEST)
        target: Position = (0, 0) if row is None else (int(row[0]), int(row[1]))
        deadline = time.monotonic() + limit
        pause = 0.001
        while True:
            await self._catch_up(roll_first)
            roll_first = False
            if self.position >= target:
                return
            if time.monotonic() > deadline:
                log.warning("answers wait for a transaction that has run for over %g s; "
                            "the boards catch up once it ends", limit)
                return
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.05)

    async def _catch_up(self, roll_first: bool = False) -> None:
        while await self._transaction(roll_first) >= self.chunk:
            roll_first = False

    async def _transaction(self, roll_first: bool = False) -> int:
        """One application in its own transaction; the number of answers applied."""
        db = await self._connection()
        async with db.transaction():
            count, end = await apply(db, self.chunk, roll_first)
        self.position = max(self.position, end)
        self.applied += count
        return count


async def _close(db: Db | None) -> None:
    if db is None:
        return
    try:
        await asyncio.wait_for(db.close(), 5)
    except Exception:
        db.terminate()
