"""Rows to the core's records (bot/core/ports.py). Columns are listed, rows read by position.

Times are stored as unix milliseconds (UTC) and come back as aware UTC datetimes.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, time
from typing import Any

from bot.core.ports import AnswerRecord, PostRecord, RunRecord
from bot.core.schedule import Schedule

Row = tuple[Any, ...]

POST_COLUMNS = (
    "id, chat_key, quiz_id, question_id, option_order, locale, created_at, closes_at,"
    " closed_at, run_id, kind, owner_key"
)
POSTS_DOT = ", ".join(f"posts.{c.strip()}" for c in POST_COLUMNS.split(","))
ANSWER_COLUMNS = "post_id, person_key, option, correct, answered_at, elapsed_ms"
RUN_COLUMNS = "id, person_key, chat_key, quiz_id, questions, locale, started_at, finished_at"
SCHEDULE_COLUMNS = "chat_key, local_time, tz, selector, open_minutes, updated_at"


def to_ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


def from_ms(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)


def _at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def post_of(row: Row) -> PostRecord:
    return PostRecord(
        id=row[0],
        chat_key=row[1],
        quiz_id=row[2],
        question_id=row[3],
        order=tuple(json.loads(row[4])),
        locale=row[5],
        created_at=_at(row[6]),
        closes_at=from_ms(row[7]),
        closed_at=from_ms(row[8]),
        run_id=row[9],
        kind=row[10],
        owner_key=row[11],
    )


def answer_of(row: Row) -> AnswerRecord:
    """ANSWER_COLUMNS, optionally followed by the person's name."""
    return AnswerRecord(
        post_id=row[0],
        person_key=row[1],
        option=row[2],
        correct=bool(row[3]),
        answered_at=_at(row[4]),
        elapsed_ms=row[5],
        name=row[6] if len(row) > 6 else "",
    )


def run_of(row: Row) -> RunRecord:
    return RunRecord(
        id=row[0],
        person_key=row[1],
        chat_key=row[2],
        quiz_id=row[3],
        questions=tuple(json.loads(row[4])),
        locale=row[5],
        started_at=_at(row[6]),
        finished_at=from_ms(row[7]),
    )


def schedule_of(row: Row) -> Schedule:
    return Schedule(
        chat_key=row[0],
        at=time.fromisoformat(row[1]),
        tz=row[2],
        selector=row[3],
        open_minutes=row[4],
        updated_at=from_ms(row[5]),
    )
