"""Reads: coroutines of a pooled connection (one round trip each where possible).

Boards and stats live in boards.py.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from bot.core.ports import AnswerRecord, ItemResponse, PostRecord, RunRecord
from bot.core.schedule import Schedule
from bot.storage.postgres.records import (
    ANSWER_COLUMNS,
    POST_COLUMNS,
    POSTS_DOT,
    RUN_COLUMNS,
    SCHEDULE_COLUMNS,
    answer_of,
    post_of,
    run_of,
    schedule_of,
)

Db = Any  # an asyncpg.Connection


# people and chats ---------------------------------------------------------------------------
async def person(db: Db, key: str) -> tuple[str, str | None] | None:
    """(name, locale) of a person."""
    row = await db.fetchrow("SELECT name, locale FROM persons WHERE key = $1", key)
    return None if row is None else (row[0], row[1])


async def chat(db: Db, key: str) -> tuple[str, str | None, str | None] | None:
    """(title, locale, platform_locale) of a chat."""
    row = await db.fetchrow(
        "SELECT title, locale, platform_locale FROM chats WHERE key = $1", key
    )
    return None if row is None else (row[0], row[1], row[2])


# posts --------------------------------------------------------------------------------------
async def post(db: Db, post_id: int) -> PostRecord | None:
    row = await db.fetchrow(f"SELECT {POST_COLUMNS} FROM posts WHERE id = $1", post_id)
    return None if row is None else post_of(row)


async def post_by_ref(db: Db, ref: str) -> PostRecord | None:
    row = await db.fetchrow(
        f"SELECT {POSTS_DOT} FROM post_refs JOIN posts ON posts.id = post_refs.post_id"
        " WHERE post_refs.ref = $1",
        ref,
    )
    return None if row is None else post_of(row)


async def refs(db: Db, post_id: int) -> tuple[str, ...]:
    rows = await db.fetch("SELECT ref FROM post_refs WHERE post_id = $1 ORDER BY ref", post_id)
    return tuple(r[0] for r in rows)


async def unposted_summaries(
    db: Db, closed_after: datetime, closed_before: datetime
) -> list[PostRecord]:
    rows = await db.fetch(
        f"SELECT {POST_COLUMNS} FROM posts WHERE closed_at IS NOT NULL"
        " AND summary_posted_at IS NULL AND closed_at > $1 AND closed_at <= $2"
        " AND run_id IS NULL ORDER BY id",
        closed_after, closed_before,
    )
    return [post_of(r) for r in rows]


async def open_posts(
    db: Db, chat_key: str | None, due_before: datetime | None, kind: str | None
) -> list[PostRecord]:
    sql = f"SELECT {POST_COLUMNS} FROM posts WHERE closed_at IS NULL"
    params: list[Any] = []
    if chat_key is not None:
        params.append(chat_key)
        sql += f" AND chat_key = ${len(params)}"
    if due_before is not None:
        params.append(due_before)
        sql += f" AND closes_at IS NOT NULL AND closes_at <= ${len(params)}"
    if kind is not None:
        params.append(kind)
        sql += f" AND kind = ${len(params)}"
    return [post_of(r) for r in await db.fetch(sql + " ORDER BY id", *params)]


async def posted_questions(
    db: Db, chat_key: str, kind: str | None
) -> dict[tuple[str, str], int]:
    sql = "SELECT quiz_id, question_id, count(*) FROM posts WHERE chat_key = $1"
    params: list[Any] = [chat_key]
    if kind is not None:
        sql += " AND kind = $2"
        params.append(kind)
    rows = await db.fetch(sql + " GROUP BY quiz_id, question_id", *params)
    return {(r[0], r[1]): int(r[2]) for r in rows}


async def shown_orders(
    db: Db, chat_key: str, quiz_id: str | None
) -> dict[tuple[str, str], tuple[int, ...]]:
    rows = await db.fetch(
        "SELECT DISTINCT ON (quiz_id, question_id) quiz_id, question_id, option_order"
        " FROM posts WHERE chat_key = $1 AND ($2::text IS NULL OR quiz_id = $2)"
        " ORDER BY quiz_id, question_id, id DESC",
        chat_key, quiz_id,
    )
    return {(r[0], r[1]): tuple(int(i) for i in r[2]) for r in rows}


async def run_posts(db: Db, run_id: int) -> list[PostRecord]:
    rows = await db.fetch(
        f"SELECT {POST_COLUMNS} FROM posts WHERE run_id = $1 ORDER BY id", run_id
    )
    return [post_of(r) for r in rows]


# answers ------------------------------------------------------------------------------------
async def answers_for_post(db: Db, post_id: int) -> list[AnswerRecord]:
    rows = await db.fetch(
        "SELECT post_id, person_key, option, correct, answered_at, elapsed_ms, persons.name"
        " FROM answers JOIN persons ON persons.key = answers.person_key"
        " WHERE post_id = $1 ORDER BY answered_at, elapsed_ms, answers.id",
        post_id,
    )
    return [answer_of(r) for r in rows]


async def answer_count(db: Db, post_id: int) -> int:
    return int(await db.fetchval("SELECT count(*) FROM answers WHERE post_id = $1", post_id))


async def answer(db: Db, post_id: int, person_key: str) -> AnswerRecord | None:
    row = await db.fetchrow(
        f"SELECT {ANSWER_COLUMNS} FROM answers WHERE post_id = $1 AND person_key = $2",
        post_id, person_key,
    )
    return None if row is None else answer_of(row)


async def person_history(db: Db, person_key: str) -> dict[tuple[str, str], bool]:
    rows = await db.fetch(
        "SELECT quiz_id, question_id, correct FROM answers WHERE person_key = $1"
        " ORDER BY answered_at, id",
        person_key,
    )
    return {(r[0], r[1]): bool(r[2]) for r in rows}


async def chats(db: Db) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in await db.fetch("SELECT key, title FROM chats ORDER BY key")]


async def item_responses(
    db: Db, quiz_id: str | None, chat_key: str | None
) -> list[ItemResponse]:
    """Each person's first answer (lowest id) to each question in scope, oldest first; an
    admin's report, read from the answers themselves (one scan of the scope)."""
    rows = await db.fetch(
        "SELECT person_key, chat_key, quiz_id, question_id, option, correct, elapsed_ms FROM"
        " (SELECT DISTINCT ON (person_key, quiz_id, question_id) * FROM answers"
        "  WHERE ($1::text IS NULL OR quiz_id = $1) AND ($2::text IS NULL OR chat_key = $2)"
        "  ORDER BY person_key, quiz_id, question_id, id) AS first"
        " ORDER BY id",
        quiz_id, chat_key,
    )
    return [ItemResponse(r[0], r[1], r[2], r[3], int(r[4]), bool(r[5]), int(r[6]))
            for r in rows]


async def person_totals(db: Db, person_key: str) -> dict[str, tuple[int, int]]:
    rows = await db.fetch(
        "SELECT quiz_id, count(*), count(*) FILTER (WHERE correct) FROM answers"
        " WHERE person_key = $1 GROUP BY quiz_id",
        person_key,
    )
    return {r[0]: (int(r[1]), int(r[2])) for r in rows}


# runs ---------------------------------------------------------------------------------------
async def run(db: Db, run_id: int) -> RunRecord | None:
    row = await db.fetchrow(f"SELECT {RUN_COLUMNS} FROM runs WHERE id = $1", run_id)
    return None if row is None else run_of(row)


async def active_run(db: Db, person_key: str, chat_key: str) -> RunRecord | None:
    row = await db.fetchrow(
        f"SELECT {RUN_COLUMNS} FROM runs WHERE person_key = $1 AND chat_key = $2"
        " AND finished_at IS NULL",
        person_key, chat_key,
    )
    return None if row is None else run_of(row)


# daily schedules ----------------------------------------------------------------------------
async def schedule(db: Db, chat_key: str) -> Schedule | None:
    row = await db.fetchrow(
        f"SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE chat_key = $1", chat_key
    )
    return None if row is None else schedule_of(row)


async def schedules(db: Db) -> list[Schedule]:
    rows = await db.fetch(f"SELECT {SCHEDULE_COLUMNS} FROM schedules ORDER BY chat_key")
    return [schedule_of(r) for r in rows]


async def unpublished_dailies(db: Db, claimed_before: datetime) -> list[PostRecord]:
    rows = await db.fetch(
        f"SELECT {POSTS_DOT} FROM daily_posts JOIN posts ON posts.id = daily_posts.post_id"
        " WHERE daily_posts.published_at IS NULL AND daily_posts.claimed_at <= $1"
        " AND posts.closed_at IS NULL ORDER BY posts.id",
        claimed_before,
    )
    return [post_of(r) for r in rows]


async def daily_day_of(db: Db, chat_key: str, local_date: date) -> int | None:
    value = await db.fetchval(
        "SELECT post_id FROM daily_posts WHERE chat_key = $1 AND local_date = $2",
        chat_key, local_date,
    )
    return None if value is None else int(value)
