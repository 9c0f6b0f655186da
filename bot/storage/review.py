"""The answers spaced review replays, review reminders and their daily claims, written once
for every database (like ops.py and queries.py)."""

from __future__ import annotations

from datetime import date, datetime, time

from bot.core.ports import ReviewAnswer
from bot.core.schedule import Schedule
from bot.storage.sql import Row, Sql

REMINDER_COLUMNS = "person_key, local_time, tz, updated_at"


def review_answer(db: Sql, r: Row) -> ReviewAnswer:
    """quiz, question, correct, answered_at, elapsed_ms, personal, confidence."""
    return ReviewAnswer(r[0], r[1], bool(r[2]), db.at(r[3]), int(r[4]), bool(r[5]),
                        None if r[6] is None else int(r[6]))


async def review_answers(db: Sql, person_key: str) -> list[ReviewAnswer]:
    rows = await db.rows(
        "SELECT a.quiz_id, a.question_id, a.correct, a.answered_at, a.elapsed_ms,"
        " p.owner_key IS NOT NULL, a.confidence FROM answers a JOIN posts p ON p.id = a.post_id"
        " WHERE a.person_key = $1 ORDER BY a.answered_at, a.id",
        person_key,
    )
    return [review_answer(db, r) for r in rows]


async def recent_answers(db: Sql, person_key: str, limit: int) -> list[ReviewAnswer]:
    """The person's newest `limit` answers, newest first (a range of answers_person)."""
    rows = await db.rows(
        "SELECT a.quiz_id, a.question_id, a.correct, a.answered_at, a.elapsed_ms,"
        " p.owner_key IS NOT NULL, a.confidence FROM answers a JOIN posts p ON p.id = a.post_id"
        " WHERE a.person_key = $1 ORDER BY a.answered_at DESC, a.id DESC LIMIT $2",
        person_key, limit,
    )
    return [review_answer(db, r) for r in rows]


def reminder_of(db: Sql, row: Row) -> Schedule:
    return Schedule(chat_key=row[0], at=time.fromisoformat(row[1]), tz=row[2],
                    updated_at=db.at(row[3]))


async def set_reminder(db: Sql, reminder: Schedule, updated_at: datetime) -> None:
    await db.run(
        "INSERT INTO reminders(person_key, local_time, tz, updated_at) VALUES ($1, $2, $3, $4)"
        " ON CONFLICT (person_key) DO UPDATE SET local_time = excluded.local_time,"
        " tz = excluded.tz, updated_at = excluded.updated_at",
        reminder.chat_key, reminder.at.strftime("%H:%M"), reminder.tz, db.when(updated_at),
    )


async def delete_reminder(db: Sql, person_key: str) -> bool:
    return await db.run("DELETE FROM reminders WHERE person_key = $1", person_key) == 1


async def reminder(db: Sql, person_key: str) -> Schedule | None:
    row = await db.row(
        f"SELECT {REMINDER_COLUMNS} FROM reminders WHERE person_key = $1", person_key
    )
    return None if row is None else reminder_of(db, row)


async def reminders(db: Sql) -> list[Schedule]:
    rows = await db.rows(f"SELECT {REMINDER_COLUMNS} FROM reminders ORDER BY person_key")
    return [reminder_of(db, r) for r in rows]


async def claim_reminder(db: Sql, person_key: str, local_date: date, when: datetime) -> bool:
    return await db.run(
        "INSERT INTO reminder_days(person_key, local_date, claimed_at) VALUES ($1, $2, $3)"
        " ON CONFLICT (person_key, local_date) DO NOTHING",
        person_key, db.day(local_date), db.when(when),
    ) == 1


# a claimed day's reminder: sent once the platform confirmed ------------------------------
async def unsent_reminders(
    db: Sql, claimed_after: datetime, claimed_before: datetime
) -> list[tuple[str, date]]:
    rows = await db.rows(
        "SELECT person_key, local_date FROM reminder_days WHERE sent_at IS NULL"
        " AND claimed_at >= $1 AND claimed_at < $2 ORDER BY person_key, local_date",
        db.when(claimed_after), db.when(claimed_before),
    )
    return [(r[0], db.on(r[1])) for r in rows]


async def mark_reminder_sent(db: Sql, person_key: str, local_date: date, when: datetime) -> None:
    await db.run("UPDATE reminder_days SET sent_at = $1 WHERE person_key = $2"
                 " AND local_date = $3 AND sent_at IS NULL",
                 db.when(when), person_key, db.day(local_date))
