"""rank_counts: how many people each board has per number of correct answers, so "my rank"
sums this for those above me and counts in the rank index only those level with me
(boards.py). Kept in the same transaction by whoever writes the aggregate tables, all of them
holding the materializer's position lock: the materializer (from what its upserts return),
the week window's roll, a chat's move and a person's deletion. No triggers: a statement
trigger cost every application about as much again as its upserts. The dashboard's figures
(bot/storage/dashboard.py) are kept the same way, by the same writers.

A board is 'all' (totals), 'week' (week_scores) or 'day' (scores, one per day); the first two
store the day as -infinity (date.min here). A group whose last person left stays, at 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import Any

Db = Any  # an asyncpg.Connection (or a PgSql), in the caller's transaction
NO_DAY = date.min  # the day of the boards that are not a day's (stored -infinity)
Key = tuple[str, str, date, int]  # board, chat, day, correct
Changes = dict[Key, int]  # people in the group, added (or taken away)

BOARDS = (("all", "totals", "'-infinity'::date"), ("week", "week_scores", "'-infinity'::date"),
          ("day", "scores", "day"))
ADD = (
    "INSERT INTO rank_counts(board, chat_key, day, correct, people)"
    " SELECT * FROM unnest($1::text[], $2::text[], $3::date[], $4::int[], $5::int[])"
    " ON CONFLICT (board, chat_key, day, correct)"
    " DO UPDATE SET people = rank_counts.people + excluded.people"
)


def moved(changes: Changes, board: str, chat: str, day: date, old: int | None,
          new: int | None) -> None:
    """A row of `board` went from `old` correct answers to `new` (None: it was not there, or
    is gone)."""
    if old == new:
        return
    if old is not None:
        key = (board, chat, day, old)
        changes[key] = changes.get(key, 0) - 1
    if new is not None:
        key = (board, chat, day, new)
        changes[key] = changes.get(key, 0) + 1


async def add(db: Db, changes: Changes) -> None:
    """Write the changes, in key order (one statement)."""
    rows = sorted((key, people) for key, people in changes.items() if people)
    if not rows:
        return
    await db.execute(ADD, [k[0] for k, _ in rows], [k[1] for k, _ in rows],
                     [k[2] for k, _ in rows], [k[3] for k, _ in rows], [p for _, p in rows])


async def recount(db: Db, boards: Iterable[str] = ("all", "week", "day"),
                  chats: list[str] | None = None) -> None:
    """Count the groups of `boards` again from their tables, for every chat or `chats`."""
    for board, table, day in BOARDS:
        if board not in boards:
            continue
        where, args = ("", []) if chats is None else (" AND chat_key = ANY($2::text[])", [chats])
        await db.execute(f"DELETE FROM rank_counts WHERE board = $1{where}", board, *args)
        await db.execute(
            "INSERT INTO rank_counts(board, chat_key, day, correct, people)"
            f" SELECT $1, chat_key, {day}, correct, count(*) FROM {table}"
            f" WHERE true{where} GROUP BY chat_key, {day}, correct"
            f" ORDER BY chat_key, {day}, correct",
            board, *args,
        )


async def person_leaves(db: Db, person_key: str) -> None:
    """Take the person's rows of every board out of the counts (before they are deleted)."""
    changes: Changes = {}
    for board, table, day in BOARDS:
        for chat, on, correct in await db.fetch(
            f"SELECT chat_key, {day}, correct FROM {table} WHERE person_key = $1", person_key
        ):
            moved(changes, board, chat, on, correct, None)
    await add(db, changes)
