"""Leaderboards and personal stats on PostgreSQL: reads of the aggregates, costing what they
show, as on SQLite (bot/storage/sqlite/boards.py has the reasoning):

- all time:  totals      (chat_key, correct DESC, time_ms, person_key)   totals_rank
- one day:   scores      (chat_key, day, correct DESC, time_ms, person)  scores_rank
- the week:  week_scores (chat_key, correct DESC, time_ms, person_key)   week_rank

One statement reads the top N through the rank index (LIMIT first, the N names joined after)
and, for someone outside it, their row and 1 + the people above: rank_counts (people per board,
number of correct answers and time bucket, kept beside the aggregates by their writers,
rank_counts.py) gives those with more correct answers and those level with me in a faster
bucket, and the rank index counts only those of my own bucket who were faster. A board is
read in one REPEATABLE READ snapshot with the week window it depends on.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from bot.core.ports import ScoreRow
from bot.storage import rank_buckets
from bot.storage.postgres.materializer import WEEK_DAYS, week_start, week_until

Db = Any  # an asyncpg.Connection
Board = tuple[list[ScoreRow], ScoreRow | None]
RANK = "correct DESC, time_ms, person_key"
NO_DAY = date.min  # rank_counts' day of the boards that are not a day's (stored -infinity)


@dataclass(frozen=True, slots=True)
class Roll:
    """The week window must first move forward to end on `until` (a write)."""

    until: date


async def leaderboard(
    db: Db, chat: str, since_day: date | None, limit: int, person_key: str | None,
    may_roll: bool = True,
) -> Board | Roll:
    async with db.transaction(isolation="repeatable_read", readonly=True):
        if since_day is None:
            return await ranked(db, "totals", "chat_key = $1", (chat,), limit, person_key,
                                ("all", NO_DAY))
        until = await week_until(db)  # no scores row is later than this day
        if until is None or since_day >= until:  # only since_day itself can hold rows
            return await ranked(db, "scores", "chat_key = $1 AND day = $2", (chat, since_day),
                                limit, person_key, ("day", since_day))
        if since_day == week_start(until):
            return await ranked(db, "week_scores", "chat_key = $1", (chat,), limit,
                                person_key, ("week", NO_DAY))
        if since_day > week_start(until) and may_roll:
            return Roll(since_day + timedelta(days=WEEK_DAYS - 1))
        return await summed(db, chat, since_day, limit, person_key)


def ranked_sql(table: str, where: str, params: int) -> str:
    """The board's statement: $1 is the chat, $params+1 the limit, $params+2 the person (or
    NULL), $params+3 and $params+4 the board and day of its rank_counts."""
    n, me = f"${params + 1}", f"${params + 2}"
    board, day = f"${params + 3}", f"${params + 4}"
    groups = ("(SELECT COALESCE(sum(people), 0) FROM rank_counts"
              f" WHERE board = {board}::text AND chat_key = $1 AND day = {day}::date"
              "  AND correct")
    level = f"(SELECT count(*) FROM {table} WHERE {where} AND correct = m.correct AND time_ms"
    # my own bucket counted in the rank index from its start up to me, or, in its slower
    # half, its people less those from me to its end (rank_buckets.py; numeric: bucket 0
    # starts at the least bigint). My row and its bucket's bounds are MATERIALIZED: inlined,
    # each use of them would be a copy of the bucket's expression to plan
    faster = (f"{groups} = m.correct AND bucket < m.bucket)"
              f" + {level} >= m.low AND time_ms < m.time_ms)"
              f" + {level} = m.time_ms AND person_key < m.person_key)")
    slower = (f"{groups} = m.correct AND bucket <= m.bucket)"
              f" - {level} > m.time_ms AND time_ms < m.high)"
              f" - {level} = m.time_ms AND person_key >= m.person_key)")
    return (
        f"WITH top AS (SELECT person_key, correct, answered, time_ms FROM {table}"
        f"  WHERE {where} ORDER BY {RANK} LIMIT {n}),"
        f" mine AS MATERIALIZED (SELECT person_key, correct, answered, time_ms,"
        f"  {rank_buckets.sql('time_ms', postgres=True)} AS bucket FROM {table}"
        f"  WHERE {where} AND person_key = {me}::text"
        f"  AND NOT EXISTS (SELECT 1 FROM top WHERE top.person_key = {me}::text)),"
        f" placed AS MATERIALIZED (SELECT *, {rank_buckets.low_sql('bucket')} AS low,"
        f"  {rank_buckets.low_sql('bucket + 1')} AS high FROM mine)"
        " SELECT t.person_key, COALESCE(p.name, ''), t.correct, t.answered, t.time_ms,"
        " NULL::bigint FROM top AS t LEFT JOIN persons AS p ON p.key = t.person_key"
        " UNION ALL"
        " SELECT m.person_key, COALESCE(p.name, ''), m.correct, m.answered, m.time_ms,"
        f" {groups} > m.correct)"
        f" + CASE WHEN m.time_ms::numeric * 2 <= m.low::numeric + m.high THEN {faster}"
        f" ELSE {slower} END"
        " FROM placed AS m LEFT JOIN persons AS p ON p.key = m.person_key"
    )


async def ranked(
    db: Db, table: str, where: str, params: tuple[Any, ...], limit: int,
    person_key: str | None, counts: tuple[str, date],
) -> Board:
    rows = await db.fetch(ranked_sql(table, where, len(params)), *params, limit, person_key,
                          *counts)
    top_rows = sorted((r for r in rows if r[5] is None), key=_rank_order)
    top = [ScoreRow(r[0], r[1], r[2], r[3], int(r[4]), i)
           for i, r in enumerate(top_rows, start=1)]
    me = next((row for row in top if row.person_key == person_key), None)
    if me is None:
        for r in rows:
            if r[5] is not None:
                me = ScoreRow(r[0], r[1], r[2], r[3], int(r[4]), int(r[5]) + 1)
    return top, me


def _rank_order(row: Any) -> tuple[int, int, bytes]:
    """Board order: correct descending, then time, then the key by code point."""
    return -row[2], row[4], row[0].encode()


async def summed(
    db: Db, chat: str, since_day: date, limit: int, person_key: str | None
) -> Board:
    """Any period: sums each person's days (reads every row of the period)."""
    board = (
        "SELECT person_key, sum(correct)::int AS correct, sum(answered)::int AS answered,"
        " sum(time_ms)::bigint AS time_ms FROM scores WHERE chat_key = $1 AND day >= $2"
        " GROUP BY person_key"
    )
    rows = await db.fetch(
        f"WITH board AS ({board}) SELECT b.person_key, COALESCE(p.name, ''), b.correct,"
        f" b.answered, b.time_ms FROM (SELECT * FROM board ORDER BY {RANK} LIMIT $3) AS b"
        " LEFT JOIN persons AS p ON p.key = b.person_key"
        " ORDER BY b.correct DESC, b.time_ms, b.person_key",
        chat, since_day, limit,
    )
    top = [ScoreRow(r[0], r[1], r[2], r[3], int(r[4]), i) for i, r in enumerate(rows, start=1)]
    me = next((row for row in top if row.person_key == person_key), None)
    if me is None and person_key is not None:
        row = await db.fetchrow(
            f"WITH board AS ({board}), mine AS (SELECT * FROM board WHERE person_key = $3)"
            " SELECT mine.correct, mine.answered, mine.time_ms,"
            " (SELECT count(*) FROM board WHERE board.correct > mine.correct OR"
            "  (board.correct = mine.correct AND (board.time_ms < mine.time_ms OR"
            "   (board.time_ms = mine.time_ms AND board.person_key < mine.person_key)))),"
            " (SELECT name FROM persons WHERE key = $3)"
            " FROM mine",
            chat, since_day, person_key,
        )
        if row is not None:
            me = ScoreRow(person_key, row[4] or "", row[0], row[1], int(row[2]),
                          int(row[3]) + 1)
    return top, me


async def daily_days_for(
    db: Db, person_keys: list[str]
) -> dict[str, tuple[list[date], date | None]]:
    """For each person: the local dates of their correct daily answers, and the newest daily
    question in the chats where they answered one. One query over daily answers only
    (answers_daily), for every row of a board at once."""
    days: dict[str, set[date]] = {key: set() for key in person_keys}
    latest: dict[str, date] = {}
    rows = await db.fetch(
        "SELECT a.person_key, a.daily_date, a.correct,"
        " (SELECT max(d.local_date) FROM daily_posts AS d WHERE d.chat_key = a.chat_key)"
        " FROM answers AS a WHERE a.person_key = ANY($1::text[]) AND a.daily_date IS NOT NULL",
        person_keys,
    )
    for person, day, correct, newest in rows:
        if correct:
            days[person].add(day)
        if newest is not None and (person not in latest or newest > latest[person]):
            latest[person] = newest
    return {key: (sorted(days[key]), latest.get(key)) for key in person_keys}


async def person_streaks(db: Db, person_key: str) -> tuple[int, int]:
    row = await db.fetchrow(
        "SELECT current_streak, best_streak FROM streaks WHERE person_key = $1", person_key
    )
    return (int(row[0]), int(row[1])) if row else (0, 0)
