"""Reads: plain functions of a connection, run in the reader thread (one hop each).

Boards and stats live in boards.py.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import date
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

Db = sqlite3.Connection


def scalar(db: Db, sql: str, params: tuple[Any, ...] = ()) -> Any:
    row = db.execute(sql, params).fetchone()
    return None if row is None else row[0]


# people and chats ---------------------------------------------------------------------------
def person(db: Db, key: str) -> tuple[str, str | None] | None:
    """(name, locale) of a person."""
    row = db.execute("SELECT name, locale FROM persons WHERE key=?", (key,)).fetchone()
    return None if row is None else (row[0], row[1])


def chat(db: Db, key: str) -> tuple[str, str | None, str | None] | None:
    """(title, locale, platform_locale) of a chat."""
    row = db.execute(
        "SELECT title, locale, platform_locale FROM chats WHERE key=?", (key,)
    ).fetchone()
    return None if row is None else (row[0], row[1], row[2])


# posts --------------------------------------------------------------------------------------
def post(db: Db, post_id: int) -> PostRecord | None:
    row = db.execute(f"SELECT {POST_COLUMNS} FROM posts WHERE id=?", (post_id,)).fetchone()
    return None if row is None else post_of(row)


def post_by_ref(db: Db, ref: str) -> PostRecord | None:
    row = db.execute(
        f"SELECT {POSTS_DOT} FROM post_refs JOIN posts ON posts.id = post_refs.post_id "
        "WHERE post_refs.ref=?",
        (ref,),
    ).fetchone()
    return None if row is None else post_of(row)


def refs(db: Db, post_id: int) -> tuple[str, ...]:
    rows = db.execute("SELECT ref FROM post_refs WHERE post_id=? ORDER BY ref", (post_id,))
    return tuple(r[0] for r in rows)


def unposted_summaries(db: Db, closed_after: int, closed_before: int) -> list[PostRecord]:
    rows = db.execute(
        f"SELECT {POST_COLUMNS} FROM posts WHERE closed_at IS NOT NULL"
        " AND summary_posted_at IS NULL AND closed_at>? AND closed_at<=? AND run_id IS NULL"
        " ORDER BY id",
        (closed_after, closed_before),
    )
    return [post_of(r) for r in rows]


def open_posts(
    db: Db, chat_key: str | None, due_before: int | None, kind: str | None
) -> list[PostRecord]:
    sql = f"SELECT {POST_COLUMNS} FROM posts WHERE closed_at IS NULL"
    params: list[Any] = []
    if chat_key is not None:
        sql += " AND chat_key=?"
        params.append(chat_key)
    if due_before is not None:
        sql += " AND closes_at IS NOT NULL AND closes_at<=?"
        params.append(due_before)
    if kind is not None:
        sql += " AND kind=?"
        params.append(kind)
    return [post_of(r) for r in db.execute(sql + " ORDER BY id", params)]


def posted_questions(db: Db, chat_key: str, kind: str | None) -> dict[tuple[str, str], int]:
    sql = "SELECT quiz_id, question_id, COUNT(*) FROM posts WHERE chat_key=?"
    params: tuple[Any, ...] = (chat_key,)
    if kind is not None:
        sql += " AND kind=?"
        params = (chat_key, kind)
    rows = db.execute(sql + " GROUP BY quiz_id, question_id", params)
    return {(r[0], r[1]): r[2] for r in rows}


def shown_orders(
    db: Db, chat_key: str, quiz_id: str | None
) -> dict[tuple[str, str], tuple[int, ...]]:
    rows = db.execute(
        "SELECT quiz_id, question_id, option_order FROM posts WHERE id IN"
        " (SELECT MAX(id) FROM posts WHERE chat_key=? AND (? IS NULL OR quiz_id=?)"
        "  GROUP BY quiz_id, question_id)",
        (chat_key, quiz_id, quiz_id),
    )
    return {(r[0], r[1]): tuple(json.loads(r[2])) for r in rows}


def run_posts(db: Db, run_id: int) -> list[PostRecord]:
    rows = db.execute(f"SELECT {POST_COLUMNS} FROM posts WHERE run_id=? ORDER BY id", (run_id,))
    return [post_of(r) for r in rows]


# answers ------------------------------------------------------------------------------------
def answers_for_post(db: Db, post_id: int) -> list[AnswerRecord]:
    rows = db.execute(
        "SELECT post_id, person_key, option, correct, answered_at, elapsed_ms, persons.name "
        "FROM answers JOIN persons ON persons.key = answers.person_key "
        "WHERE post_id=? ORDER BY answered_at, elapsed_ms",
        (post_id,),
    )
    return [answer_of(r) for r in rows]


def answer_count(db: Db, post_id: int) -> int:
    return int(scalar(db, "SELECT COUNT(*) FROM answers WHERE post_id=?", (post_id,)))


def answer(db: Db, post_id: int, person_key: str) -> AnswerRecord | None:
    row = db.execute(
        f"SELECT {ANSWER_COLUMNS} FROM answers WHERE post_id=? AND person_key=?",
        (post_id, person_key),
    ).fetchone()
    return None if row is None else answer_of(row)


def person_history(db: Db, person_key: str) -> dict[tuple[str, str], bool]:
    rows = db.execute(
        "SELECT quiz_id, question_id, correct FROM answers WHERE person_key=? "
        "ORDER BY answered_at",
        (person_key,),
    )
    return {(r[0], r[1]): bool(r[2]) for r in rows}


def chats(db: Db) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in db.execute("SELECT key, title FROM chats ORDER BY key")]


def item_responses(db: Db, quiz_id: str | None, chat_key: str | None) -> list[ItemResponse]:
    """Each person's first answer (lowest id) to each question in scope, oldest first.

    An admin's report, not a hot path: it reads the answers of the scope once (a full scan of
    `answers` without a quiz or chat filter)."""
    where, params = [], []
    for column, value in (("quiz_id", quiz_id), ("chat_key", chat_key)):
        if value is not None:
            where.append(f"{column}=?")
            params.append(value)
    condition = f" WHERE {' AND '.join(where)}" if where else ""
    rows = db.execute(
        "SELECT a.person_key, a.chat_key, a.quiz_id, a.question_id, a.option, a.correct,"
        " a.elapsed_ms FROM answers AS a JOIN"
        f" (SELECT MIN(id) AS id FROM answers{condition}"
        "  GROUP BY person_key, quiz_id, question_id) AS first ON first.id = a.id"
        " ORDER BY a.id",
        params,
    )
    return [ItemResponse(r[0], r[1], r[2], r[3], r[4], bool(r[5]), r[6]) for r in rows]


def person_totals(db: Db, person_key: str) -> dict[str, tuple[int, int]]:
    rows = db.execute(
        "SELECT quiz_id, COUNT(*), SUM(correct) FROM answers WHERE person_key=? "
        "GROUP BY quiz_id",
        (person_key,),
    )
    return {r[0]: (r[1], r[2]) for r in rows}


# runs ---------------------------------------------------------------------------------------
def run(db: Db, run_id: int) -> RunRecord | None:
    row = db.execute(f"SELECT {RUN_COLUMNS} FROM runs WHERE id=?", (run_id,)).fetchone()
    return None if row is None else run_of(row)


def active_run(db: Db, person_key: str, chat_key: str) -> RunRecord | None:
    row = db.execute(
        f"SELECT {RUN_COLUMNS} FROM runs WHERE person_key=? AND chat_key=?"
        " AND finished_at IS NULL",
        (person_key, chat_key),
    ).fetchone()
    return None if row is None else run_of(row)


# daily schedules ----------------------------------------------------------------------------
def schedule(db: Db, chat_key: str) -> Schedule | None:
    row = db.execute(
        f"SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE chat_key=?", (chat_key,)
    ).fetchone()
    return None if row is None else schedule_of(row)


def schedules(db: Db) -> list[Schedule]:
    return [schedule_of(r) for r in db.execute(f"SELECT {SCHEDULE_COLUMNS} FROM schedules")]


def unpublished_dailies(db: Db, claimed_before: int) -> list[PostRecord]:
    rows = db.execute(
        f"SELECT {POSTS_DOT} FROM daily_posts JOIN posts ON posts.id = daily_posts.post_id"
        " WHERE daily_posts.published_at IS NULL AND daily_posts.claimed_at<=?"
        " AND posts.closed_at IS NULL",
        (claimed_before,),
    )
    return [post_of(r) for r in rows]


def daily_day_of(db: Db, chat_key: str, local_date: date) -> int | None:
    value = scalar(
        db, "SELECT post_id FROM daily_posts WHERE chat_key=? AND local_date=?",
        (chat_key, local_date.isoformat()),
    )
    return None if value is None else int(value)
