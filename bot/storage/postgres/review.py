"""PostgreSQL: the answers spaced review replays, review reminders and their daily claims."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Any

from bot.core.ports import ReviewAnswer
from bot.core.schedule import Schedule

Db = Any  # an asyncpg.Connection

REMINDER_COLUMNS = "person_key, local_time, tz, updated_at"


async def review_answers(db: Db, person_key: str) -> list[ReviewAnswer]:
    rows = await db.fetch(
        "SELECT a.quiz_id, a.question_id, a.correct, a.answered_at, a.elapsed_ms,"
        " p.owner_key IS NOT NULL FROM answers a JOIN posts p ON p.id = a.post_id"
        " WHERE a.person_key = $1 ORDER BY a.answered_at, a.id",
        person_key,
    )
    return [
        ReviewAnswer(r[0], r[1], bool(r[2]), r[3].astimezone(UTC), int(r[4]), bool(r[5]))
        for r in rows
    ]


def reminder_of(row: Any) -> Schedule:
    return Schedule(chat_key=row[0], at=time.fromisoformat(row[1]), tz=row[2],
                    updated_at=row[3].astimezone(UTC))


async def set_reminder(db: Db, reminder: Schedule, updated_at: datetime) -> None:
    await db.execute(
        "INSERT INTO reminders(person_key, local_time, tz, updated_at) VALUES ($1, $2, $3, $4)"
        " ON CONFLICT (person_key) DO UPDATE SET local_time = excluded.local_time,"
        " tz = excluded.tz, updated_at = excluded.updated_at",
        reminder.chat_key, reminder.at.strftime("%H:%M"), reminder.tz, updated_at,
    )


async def delete_reminder(db: Db, person_key: str) -> bool:
    deleted = await db.fetchval(
        "DELETE FROM reminders WHERE person_key = $1 RETURNING person_key", person_key
    )
    return deleted is not None


async def reminder(db: Db, person_key: str) -> Schedule | None:
    row = await db.fetchrow(
        f"SELECT {REMINDER_COLUMNS} FROM reminders WHERE person_key = $1", person_key
    )
    return None if row is None else reminder_of(row)


async def reminders(db: Db) -> list[Schedule]:
    return [reminder_of(r) for r in await db.fetch(f"SELECT {REMINDER_COLUMNS} FROM reminders")]


async def claim_reminder(db: Db, person_key: str, local_date: date, when: datetime) -> bool:
    claimed = await db.fetchval(
        "INSERT INTO reminder_days(person_key, local_date, claimed_at) VALUES ($1, $2, $3)"
        " ON CONFLICT (person_key, local_date) DO NOTHING RETURNING person_key",
        person_key, local_date, when,
    )
    return claimed is not None
