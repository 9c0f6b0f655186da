"""rank_counts: how many people each board has per number of correct answers and time bucket
(bot/storage/rank_buckets.py), so "my rank" sums this for those above me and counts in the rank
index only those of my own bucket (boards.py). Kept in the same transaction by whoever writes
the aggregate tables, all of them holding the materializer's position lock: the materializer
(from what its upserts return), the week window's roll, a chat's move and a person's deletion.
No triggers: a statement trigger cost every application about as much again as its upserts. The
dashboard's figures (bot/storage/dashboard.py) are kept the same way, by the same writers.

A board is 'all' (totals), 'week' (week_scores) or 'day' (scores, one per day); the first two
store the day as -infinity (date.min here). A group whose last person left stays, at 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import Any

from bot.storage import rank_buckets

Db = Any  # an asyncpg.Connection (or a PgSql), in the caller's transaction
NO_DAY = date.min  # the day of the boards that are not a day's (stored -infinity)
Key = tuple[str, str, date, int, int]  # board, chat, day, correct, time bucket
Changes = dict[Key, int]  # people in the group, added (or taken away)

BOARDS = (("all", "totals", "'-infinity'::date"), ("week", "week_scores", "'-infinity'::date"),
          ("day", "scores", "day"))
ADD = (
    "INSERT INTO rank_counts(board, chat_key, day, correct, bucket, people)"
    " SELECT * FROM unnest($1::text[], $2::text[], $3::date[], $4::int[], $5::int[],"
    " $6::int[]) ON CONFLICT (board, chat_key, day, correct, bucket)"
    " DO UPDATE SET people = rank_counts.people + excluded.people"
)
BUCKET = rank_buckets.sql("time_ms", postgres=True)


def moved(changes: Changes, board: str, chat: str, day: date, old: tuple[int, int] | None,
          new: tuple[int, int] | None) -> None:
    """A row of `board` went from `old` (correct, time_ms) to `new` (None: it was not there,
    or is gone)."""
    was = None if old is None else (board, chat, day, old[0], rank_buckets.bucket(old[1]))
    now = None if new is None else (board, chat, day, new[0], rank_buckets.bucket(new[1]))
    if was == now:
        return
    if was is not None:
        changes[was] = changes.get(was, 0) - 1
    if now is not None:
        changes[now] = changes.get(now, 0) + 1


async def add(db: Db, changes: Changes) -> None:
    """Write the changes, in key order (one statement)."""
    rows = sorted((key, people) for key, people in changes.items() if people)
    if not rows:
        return
    await db.execute(ADD, *([k[i] for k, _ in rows] for i in range(5)), [p for _, p in rows])


async def recount(db: Db, boards: Iterable[str] = ("all", "week", "day"),
                  chats: list[str] | None = None) -> None:
    """Count the groups of `boards` again from their tables, for every chat or `chats`."""
    for board, table, day in BOARDS:
        if board not in boards:
            continue
        where, args = ("", []) if chats is None else (" AND chat_key = ANY($2::text[])", [chats])
        await db.execute(f"DELETE FROM rank_counts WHERE board = $1{where}", board, *args)
        await db.execute(
            "INSERT INTO rank_counts(board, chat_key, day, correct, bucket, people)"
            f" SELECT $1, chat_key, {day}, correct, {BUCKET}, count(*) FROM {table}"
            f" WHERE true{where} GROUP BY 2, 3, 4, 5 ORDER BY 2, 3, 4, 5",
            board, *args,
        )


async def person_leaves(db: Db, person_key: str) -> None:
    """Take the person's rows of every board out of the counts (before they are deleted)."""
    changes: Changes = {}
    for board, table, day in BOARDS:
        for chat, on, correct, time_ms in await db.fetch(
            f"SELECT chat_key, {day}, correct, time_ms FROM {table} WHERE person_key = $1",
            person_key,
        ):
            moved(changes, board, chat, on, (correct, time_ms), None)
    await add(db, changes)
