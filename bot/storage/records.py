"""Rows to the core's records (bot/core/ports/), for every database: columns are listed,
rows read by position, stored values converted by the connection's Sql (sql.py)."""

from __future__ import annotations

from datetime import time

from bot.core.ports import AnswerRecord, PostRecord, RunRecord
from bot.core.schedule import Schedule
from bot.storage.sql import Row, Sql, at_or_none

POST_COLUMNS = (
    "id, chat_key, quiz_id, question_id, option_order, locale, created_at, closes_at,"
    " closed_at, run_id, kind, owner_key"
)
POSTS_DOT = ", ".join(f"posts.{c.strip()}" for c in POST_COLUMNS.split(","))
ANSWER_COLUMNS = (
    "post_id, person_key, option, correct, answered_at, elapsed_ms, response, confidence"
)
RUN_COLUMNS = "id, person_key, chat_key, quiz_id, questions, locale, started_at, finished_at"
SCHEDULE_COLUMNS = "chat_key, local_time, tz, selector, open_minutes, updated_at"


def post_of(db: Sql, row: Row) -> PostRecord:
    return PostRecord(
        id=int(row[0]),
        chat_key=row[1],
        quiz_id=row[2],
        question_id=row[3],
        order=db.ints(row[4]),
        locale=row[5],
        created_at=db.at(row[6]),
        closes_at=at_or_none(db, row[7]),
        closed_at=at_or_none(db, row[8]),
        run_id=None if row[9] is None else int(row[9]),
        kind=row[10],
        owner_key=row[11],
    )


def answer_of(db: Sql, row: Row) -> AnswerRecord:
    """ANSWER_COLUMNS, optionally followed by the person's name."""
    return AnswerRecord(
        post_id=int(row[0]),
        person_key=row[1],
        option=int(row[2]),
        correct=bool(row[3]),
        answered_at=db.at(row[4]),
        elapsed_ms=int(row[5]),
        response=row[6],
        confidence=None if row[7] is None else int(row[7]),
        name=row[8] if len(row) > 8 else "",
    )


def run_of(db: Sql, row: Row) -> RunRecord:
    return RunRecord(
        id=int(row[0]),
        person_key=row[1],
        chat_key=row[2],
        quiz_id=row[3],
        questions=db.strs(row[4]),
        locale=row[5],
        started_at=db.at(row[6]),
        finished_at=at_or_none(db, row[7]),
    )


def schedule_of(db: Sql, row: Row) -> Schedule:
    return Schedule(
        chat_key=row[0],
        at=time.fromisoformat(row[1]),
        tz=row[2],
        selector=row[3],
        open_minutes=row[4],
        updated_at=at_or_none(db, row[5]),
    )
