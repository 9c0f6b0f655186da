"""SQLite: the answers spaced review replays, review reminders and their daily claims."""

from __future__ import annotations

import sqlite3
from datetime import time

from bot.core.ports import ReviewAnswer
from bot.core.schedule import Schedule
from bot.storage.sqlite.records import from_ms

Db = sqlite3.Connection

REMINDER_COLUMNS = "person_key, local_time, tz, updated_at"


def review_answers(db: Db, person_key: str) -> list[ReviewAnswer]:
    rows = db.execute(
        "SELECT a.quiz_id, a.question_id, a.correct, a.answered_at, a.elapsed_ms,"
        " p.owner_key IS NOT NULL FROM answers a JOIN posts p ON p.id = a.post_id"
        " WHERE a.person_key=? ORDER BY a.answered_at, a.id",
        (person_key,),
    )
    return [
        ReviewAnswer(r[0], r[1], bool(r[2]), when, int(r[4]), bool(r[5]))
        for r in rows if (when := from_ms(r[3])) is not None
    ]


def reminder_of(row: tuple[str, str, str, int]) -> Schedule:
    return Schedule(chat_key=row[0], at=time.fromisoformat(row[1]), tz=row[2],
                    updated_at=from_ms(row[3]))


def set_reminder(db: Db, reminder: Schedule, updated_at: int) -> None:
    db.execute(
        "INSERT INTO reminders(person_key, local_time, tz, updated_at) VALUES (?,?,?,?)"
        " ON CONFLICT(person_key) DO UPDATE SET local_time=excluded.local_time,"
        " tz=excluded.tz, updated_at=excluded.updated_at",
        (reminder.chat_key, reminder.at.strftime("%H:%M"), reminder.tz, updated_at),
    )


def delete_reminder(db: Db, person_key: str) -> bool:
    return db.execute("DELETE FROM reminders WHERE person_key=?", (person_key,)).rowcount == 1


def reminder(db: Db, person_key: str) -> Schedule | None:
    row = db.execute(
        f"SELECT {REMINDER_COLUMNS} FROM reminders WHERE person_key=?", (person_key,)
    ).fetchone()
    return None if row is None else reminder_of(row)


def reminders(db: Db) -> list[Schedule]:
    return [reminder_of(r) for r in db.execute(f"SELECT {REMINDER_COLUMNS} FROM reminders")]


def claim_reminder(db: Db, person_key: str, local_date: str, when: int) -> bool:
    return db.execute(
        "INSERT OR IGNORE INTO reminder_days(person_key, local_date, claimed_at)"
        " VALUES (?,?,?)", (person_key, local_date, when),
    ).rowcount == 1
