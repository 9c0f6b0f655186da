"""Reads, written once for every database: coroutines of a connection's Sql (sql.py), run by
a backend's reader (SQLite's reader thread, PostgreSQL's pool), one hop each.

Boards and stats are each backend's own (sqlite/boards.py, postgres/boards.py).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from bot.core.ports import AnswerRecord, ItemResponse, PostRecord, RunRecord
from bot.core.schedule import Schedule
from bot.storage.records import (
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
from bot.storage.sql import Sql


def where(*conditions: tuple[str, Any]) -> tuple[str, list[Any]]:
    """`column = $n` for each (column, value) whose value is not None, and their values."""
    clauses: list[str] = []
    values: list[Any] = []
    for column, value in conditions:
        if value is not None:
            values.append(value)
            clauses.append(f"{column} = ${len(values)}")
    return " AND ".join(clauses), values


# people and chats ---------------------------------------------------------------------------
async def person(db: Sql, key: str) -> tuple[str, str | None] | None:
    """(name, locale) of a person."""
    row = await db.row("SELECT name, locale FROM persons WHERE key = $1", key)
    return None if row is None else (row[0], row[1])


async def chat(db: Sql, key: str) -> tuple[str, str | None, str | None] | None:
    """(title, locale, platform_locale) of a chat."""
    row = await db.row("SELECT title, locale, platform_locale FROM chats WHERE key = $1", key)
    return None if row is None else (row[0], row[1], row[2])


async def chats(db: Sql) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in await db.rows("SELECT key, title FROM chats ORDER BY key")]


# posts --------------------------------------------------------------------------------------
async def post(db: Sql, post_id: int) -> PostRecord | None:
    row = await db.row(f"SELECT {POST_COLUMNS} FROM posts WHERE id = $1", post_id)
    return None if row is None else post_of(db, row)


async def post_by_ref(db: Sql, ref: str) -> PostRecord | None:
    row = await db.row(
        f"SELECT {POSTS_DOT} FROM post_refs JOIN posts ON posts.id = post_refs.post_id"
        " WHERE post_refs.ref = $1",
        ref,
    )
    return None if row is None else post_of(db, row)


async def refs(db: Sql, post_id: int) -> tuple[str, ...]:
    rows = await db.rows("SELECT ref FROM post_refs WHERE post_id = $1 ORDER BY ref", post_id)
    return tuple(r[0] for r in rows)


async def unposted_summaries(
    db: Sql, closed_after: datetime, closed_before: datetime
) -> list[PostRecord]:
    rows = await db.rows(
        f"SELECT {POST_COLUMNS} FROM posts WHERE closed_at IS NOT NULL"
        " AND summary_posted_at IS NULL AND closed_at > $1 AND closed_at <= $2"
        " AND run_id IS NULL ORDER BY id",
        db.when(closed_after), db.when(closed_before),
    )
    return [post_of(db, r) for r in rows]


async def open_posts(
    db: Sql, chat_key: str | None = None, due_before: datetime | None = None,
    kind: str | None = None,
) -> list[PostRecord]:
    sql = f"SELECT {POST_COLUMNS} FROM posts WHERE closed_at IS NULL"
    params: list[Any] = []
    if chat_key is not None:
        params.append(chat_key)
        sql += f" AND chat_key = ${len(params)}"
    if due_before is not None:
        params.append(db.when(due_before))
        sql += f" AND closes_at IS NOT NULL AND closes_at <= ${len(params)}"
    if kind is not None:
        params.append(kind)
        sql += f" AND kind = ${len(params)}"
    return [post_of(db, r) for r in await db.rows(sql + " ORDER BY id", *params)]


async def posted_questions(
    db: Sql, chat_key: str, kind: str | None = None
) -> dict[tuple[str, str], int]:
    condition, params = where(("chat_key", chat_key), ("kind", kind))
    rows = await db.rows(
        f"SELECT quiz_id, question_id, count(*) FROM posts WHERE {condition}"
        " GROUP BY quiz_id, question_id", *params,
    )
    return {(r[0], r[1]): int(r[2]) for r in rows}


async def shown_orders(
    db: Sql, chat_key: str, quiz_id: str | None = None
) -> dict[tuple[str, str], tuple[int, ...]]:
    condition, params = where(("chat_key", chat_key), ("quiz_id", quiz_id))
    rows = await db.rows(
        "SELECT quiz_id, question_id, option_order FROM posts WHERE id IN"
        f" (SELECT max(id) FROM posts WHERE {condition} GROUP BY quiz_id, question_id)",
        *params,
    )
    return {(r[0], r[1]): db.ints(r[2]) for r in rows}


async def run_posts(db: Sql, run_id: int) -> list[PostRecord]:
    rows = await db.rows(f"SELECT {POST_COLUMNS} FROM posts WHERE run_id = $1 ORDER BY id", run_id)
    return [post_of(db, r) for r in rows]


# answers ------------------------------------------------------------------------------------
async def answers_for_post(db: Sql, post_id: int) -> list[AnswerRecord]:
    rows = await db.rows(
        "SELECT post_id, person_key, option, correct, answered_at, elapsed_ms, response,"
        " confidence, persons.name"
        " FROM answers JOIN persons ON persons.key = answers.person_key"
        " WHERE post_id = $1 ORDER BY answered_at, elapsed_ms, answers.id",
        post_id,
    )
    return [answer_of(db, r) for r in rows]


async def answer_count(db: Sql, post_id: int) -> int:
    return int(await db.value("SELECT count(*) FROM answers WHERE post_id = $1", post_id))


async def answer(db: Sql, post_id: int, person_key: str) -> AnswerRecord | None:
    row = await db.row(
        f"SELECT {ANSWER_COLUMNS} FROM answers WHERE post_id = $1 AND person_key = $2",
        post_id, person_key,
    )
    return None if row is None else answer_of(db, row)


async def person_history(db: Sql, person_key: str) -> dict[tuple[str, str], bool]:
    rows = await db.rows(
        "SELECT quiz_id, question_id, correct FROM answers WHERE person_key = $1"
        " ORDER BY answered_at, id",
        person_key,
    )
    return {(r[0], r[1]): bool(r[2]) for r in rows}


async def missed_answers(
    db: Sql, person_key: str, limit: int
) -> list[tuple[AnswerRecord, str, str, tuple[int, ...]]]:
    """The person's latest answer to each question whose latest answer is wrong, in the
    order the questions were first answered, with its quiz, question and post's option
    order (what /review shows was answered). One range of answers_person, as
    person_history reads."""
    rows = await db.rows(
        "SELECT a.post_id, a.person_key, a.option, a.correct, a.answered_at, a.elapsed_ms,"
        " a.response, a.confidence, a.quiz_id, a.question_id, p.option_order"
        " FROM answers AS a JOIN posts AS p ON p.id = a.post_id WHERE a.person_key = $1"
        " ORDER BY a.answered_at, a.id",
        person_key,
    )
    latest: dict[tuple[str, str], Any] = {}  # in the order first answered, the newest kept
    for r in rows:
        latest[(r[8], r[9])] = r
    return [(answer_of(db, tuple(r[:8])), r[8], r[9], db.ints(r[10]))
            for r in latest.values() if not r[3]][:limit]


async def item_responses(
    db: Sql, quiz_id: str | None = None, chat_key: str | None = None
) -> list[ItemResponse]:
    """Each person's first answer (lowest id) to each question in scope, oldest first.

    An admin's report, not a hot path: it reads the answers of the scope once (a full scan of
    `answers` without a quiz or chat filter)."""
    condition, params = where(("quiz_id", quiz_id), ("chat_key", chat_key))
    rows = await db.rows(
        "SELECT a.person_key, a.chat_key, a.quiz_id, a.question_id, a.option, a.correct,"
        " a.elapsed_ms, a.response FROM answers AS a JOIN"
        f" (SELECT min(id) AS id FROM answers{' WHERE ' + condition if condition else ''}"
        "  GROUP BY person_key, quiz_id, question_id) AS first ON first.id = a.id"
        " ORDER BY a.id",
        *params,
    )
    return [ItemResponse(r[0], r[1], r[2], r[3], int(r[4]), bool(r[5]), int(r[6]), r[7])
            for r in rows]


async def person_totals(db: Sql, person_key: str) -> dict[str, tuple[int, int]]:
    rows = await db.rows(
        "SELECT quiz_id, count(*), count(*) FILTER (WHERE correct) FROM answers"
        " WHERE person_key = $1 GROUP BY quiz_id",
        person_key,
    )
    return {r[0]: (int(r[1]), int(r[2])) for r in rows}


async def person_calibration(
    db: Sql, person_key: str, chat_key: str | None = None
) -> dict[int, tuple[int, int]]:
    """Answers per confidence said (only those where it was asked), and how many were right:
    read from the answers (a range of answers_person), as /stats is read once at a time.
    `chat_key`: only those in that chat (a range of answers_chat_person: the dashboard's)."""
    in_chat = "" if chat_key is None else " AND chat_key = $2"
    rows = await db.rows(
        "SELECT confidence, count(*), count(*) FILTER (WHERE correct) FROM answers"
        f" WHERE person_key = $1{in_chat} AND confidence IS NOT NULL GROUP BY confidence",
        person_key, *(() if chat_key is None else (chat_key,)),
    )
    return {int(r[0]): (int(r[1]), int(r[2])) for r in rows}


# runs ---------------------------------------------------------------------------------------
async def run(db: Sql, run_id: int) -> RunRecord | None:
    row = await db.row(f"SELECT {RUN_COLUMNS} FROM runs WHERE id = $1", run_id)
    return None if row is None else run_of(db, row)


async def active_run(db: Sql, person_key: str, chat_key: str) -> RunRecord | None:
    row = await db.row(
        f"SELECT {RUN_COLUMNS} FROM runs WHERE person_key = $1 AND chat_key = $2"
        " AND finished_at IS NULL",
        person_key, chat_key,
    )
    return None if row is None else run_of(db, row)


# daily schedules ----------------------------------------------------------------------------
async def schedule(db: Sql, chat_key: str) -> Schedule | None:
    row = await db.row(f"SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE chat_key = $1", chat_key)
    return None if row is None else schedule_of(db, row)


async def schedules(db: Sql) -> list[Schedule]:
    rows = await db.rows(f"SELECT {SCHEDULE_COLUMNS} FROM schedules ORDER BY chat_key")
    return [schedule_of(db, r) for r in rows]


async def unpublished_dailies(db: Sql, claimed_before: datetime) -> list[PostRecord]:
    rows = await db.rows(
        f"SELECT {POSTS_DOT} FROM daily_posts JOIN posts ON posts.id = daily_posts.post_id"
        " WHERE daily_posts.published_at IS NULL AND daily_posts.claimed_at <= $1"
        " AND posts.closed_at IS NULL ORDER BY posts.id",
        db.when(claimed_before),
    )
    return [post_of(db, r) for r in rows]


async def daily_day_of(db: Sql, chat_key: str, local_date: date) -> int | None:
    value = await db.value(
        "SELECT post_id FROM daily_posts WHERE chat_key = $1 AND local_date = $2",
        chat_key, db.day(local_date),
    )
    return None if value is None else int(value)
