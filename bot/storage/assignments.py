"""Assignments (bot/core/assignments.py): a quiz or topic given to a chat with a deadline, the
runs its members take it in, and the two things claimed once per process group: each member's
reminder (a row of assignment_reminders) and the deadline's summary (summary_claimed_at).
Written once for every database (like ops.py and queries.py).

A member's progress is counted from the answers in their runs of the assignment, one per
question of its set (a question asked again in a later run counts once)."""

from __future__ import annotations

from datetime import datetime

from bot.core.ports import (
    AssignmentProgress,
    AssignmentQuestion,
    AssignmentRecord,
    NewAssignment,
)
from bot.storage.ops import ensure_chat
from bot.storage.sql import Row, Sql, at_or_none

COLUMNS = ("id, chat_key, selector, quizzes, total, token, locale, tz, deadline, remind_at,"
           " created_at, created_by, cancelled_at, summary_claimed_at, summary_posted_at")
LIVE = "cancelled_at IS NULL"


def assignment_of(db: Sql, r: Row) -> AssignmentRecord:
    new = NewAssignment(r[1], r[2], db.strs(r[3]), int(r[4]), r[5], r[6], r[7], db.at(r[8]),
                        db.at(r[9]), db.at(r[10]), r[11])
    return AssignmentRecord(int(r[0]), new, at_or_none(db, r[12]), at_or_none(db, r[13]),
                            at_or_none(db, r[14]))


async def create_assignment(db: Sql, new: NewAssignment) -> int:
    await ensure_chat(db, new.chat_key)
    return int(await db.value(
        "INSERT INTO assignments(chat_key, selector, quizzes, total, token, locale, tz,"
        " deadline, remind_at, created_at, created_by)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id",
        new.chat_key, new.selector, db.array(new.quizzes), new.total, new.token, new.locale,
        new.tz, db.when(new.deadline), db.when(new.remind_at), db.when(new.created_at),
        new.created_by,
    ))


async def assignment(db: Sql, assignment_id: int) -> AssignmentRecord | None:
    row = await db.row(f"SELECT {COLUMNS} FROM assignments WHERE id = $1", assignment_id)
    return None if row is None else assignment_of(db, row)


async def chat_assignments(db: Sql, chat_key: str, deadline_after: datetime
                           ) -> list[AssignmentRecord]:
    rows = await db.rows(
        f"SELECT {COLUMNS} FROM assignments WHERE chat_key = $1 AND {LIVE}"
        " AND deadline > $2 ORDER BY deadline, id", chat_key, db.when(deadline_after))
    return [assignment_of(db, r) for r in rows]


async def cancel_assignment(db: Sql, assignment_id: int, chat_key: str, when: datetime) -> bool:
    return await db.run(
        f"UPDATE assignments SET cancelled_at = $3 WHERE id = $1 AND chat_key = $2 AND {LIVE}"
        " AND summary_claimed_at IS NULL", assignment_id, chat_key, db.when(when)) == 1


# who takes it -------------------------------------------------------------------------------
async def add_assignment_run(db: Sql, assignment_id: int, run_id: int, person_key: str,
                             quiz_id: str) -> None:
    await db.run(
        "INSERT INTO assignment_runs(assignment_id, run_id, person_key, quiz_id)"
        " VALUES ($1, $2, $3, $4) ON CONFLICT (assignment_id, run_id) DO NOTHING",
        assignment_id, run_id, person_key, quiz_id)


async def assignment_runs(db: Sql, assignment_id: int, person_key: str) -> list[tuple[int, str]]:
    rows = await db.rows(
        "SELECT run_id, quiz_id FROM assignment_runs WHERE assignment_id = $1"
        " AND person_key = $2 ORDER BY run_id", assignment_id, person_key)
    return [(int(r[0]), r[1]) for r in rows]


async def answered_in_assignment(db: Sql, assignment_id: int, person_key: str
                                 ) -> set[tuple[str, str]]:
    rows = await db.rows(
        "SELECT DISTINCT p.quiz_id, p.question_id FROM assignment_runs ar"
        " JOIN posts p ON p.run_id = ar.run_id"
        " JOIN answers a ON a.post_id = p.id AND a.person_key = ar.person_key"
        " WHERE ar.assignment_id = $1 AND ar.person_key = $2", assignment_id, person_key)
    return {(r[0], r[1]) for r in rows}


async def assignment_progress(db: Sql, assignment_id: int) -> list[AssignmentProgress]:
    """Every member who started it, most answered first, then by name."""
    rows = await db.rows(
        "SELECT ar.person_key, COALESCE(pe.name, ''),"
        " count(DISTINCT CASE WHEN a.post_id IS NOT NULL"
        "  THEN p.quiz_id || '/' || p.question_id END),"
        " count(DISTINCT CASE WHEN a.correct THEN p.quiz_id || '/' || p.question_id END),"
        " min(r.started_at), max(a.answered_at)"
        " FROM assignment_runs ar JOIN runs r ON r.id = ar.run_id"
        " LEFT JOIN persons pe ON pe.key = ar.person_key"
        " LEFT JOIN posts p ON p.run_id = ar.run_id"
        " LEFT JOIN answers a ON a.post_id = p.id AND a.person_key = ar.person_key"
        " WHERE ar.assignment_id = $1 GROUP BY ar.person_key, pe.name", assignment_id)
    people = [AssignmentProgress(r[0], r[1], int(r[2]), int(r[3]), db.at(r[4]),
                                 at_or_none(db, r[5])) for r in rows]
    return sorted(people, key=lambda p: (-p.answered, p.name.casefold(), p.person_key))


async def assignment_questions(db: Sql, assignment_id: int) -> list[AssignmentQuestion]:
    """Each question of the set answered in its runs: by how many takers, how many right
    (a taker's first answer to it)."""
    rows = await db.rows(
        "SELECT quiz_id, question_id, count(*),"
        " sum(CASE WHEN correct THEN 1 ELSE 0 END) FROM ("
        "  SELECT p.quiz_id, p.question_id, a.person_key, a.correct,"
        "  row_number() OVER (PARTITION BY p.quiz_id, p.question_id, a.person_key"
        "   ORDER BY a.answered_at, a.id) AS n"
        "  FROM assignment_runs ar JOIN posts p ON p.run_id = ar.run_id"
        "  JOIN answers a ON a.post_id = p.id AND a.person_key = ar.person_key"
        "  WHERE ar.assignment_id = $1) AS firsts"
        " WHERE n = 1 GROUP BY quiz_id, question_id ORDER BY quiz_id, question_id",
        assignment_id)
    return [AssignmentQuestion(r[0], r[1], int(r[2]), int(r[3])) for r in rows]


# the reminder before the deadline: one per member, claimed once -----------------------------
async def assignments_to_remind(db: Sql, now: datetime) -> list[AssignmentRecord]:
    rows = await db.rows(
        f"SELECT {COLUMNS} FROM assignments WHERE {LIVE} AND remind_at <= $1"
        " AND deadline > $1 ORDER BY deadline, id", db.when(now))
    return [assignment_of(db, r) for r in rows]


async def claim_assignment_reminder(db: Sql, assignment_id: int, person_key: str,
                                    when: datetime) -> bool:
    return await db.run(
        "INSERT INTO assignment_reminders(assignment_id, person_key, claimed_at)"
        " VALUES ($1, $2, $3) ON CONFLICT (assignment_id, person_key) DO NOTHING",
        assignment_id, person_key, db.when(when)) == 1


async def unsent_assignment_reminders(db: Sql, claimed_after: datetime,
                                      claimed_before: datetime) -> list[tuple[int, str]]:
    rows = await db.rows(
        "SELECT assignment_id, person_key FROM assignment_reminders WHERE sent_at IS NULL"
        " AND claimed_at >= $1 AND claimed_at < $2 ORDER BY assignment_id, person_key",
        db.when(claimed_after), db.when(claimed_before))
    return [(int(r[0]), r[1]) for r in rows]


async def mark_assignment_reminder_sent(db: Sql, assignment_id: int, person_key: str,
                                        when: datetime) -> None:
    await db.run("UPDATE assignment_reminders SET sent_at = $3 WHERE assignment_id = $1"
                 " AND person_key = $2 AND sent_at IS NULL",
                 assignment_id, person_key, db.when(when))


# the deadline's summary in the chat: claimed once -------------------------------------------
async def assignments_due(db: Sql, now: datetime) -> list[AssignmentRecord]:
    rows = await db.rows(
        f"SELECT {COLUMNS} FROM assignments WHERE {LIVE} AND summary_claimed_at IS NULL"
        " AND deadline <= $1 ORDER BY deadline, id", db.when(now))
    return [assignment_of(db, r) for r in rows]


async def claim_assignment_summary(db: Sql, assignment_id: int, when: datetime) -> bool:
    return await db.run(
        f"UPDATE assignments SET summary_claimed_at = $2 WHERE id = $1 AND {LIVE}"
        " AND summary_claimed_at IS NULL", assignment_id, db.when(when)) == 1


async def unposted_assignment_summaries(db: Sql, claimed_after: datetime,
                                        claimed_before: datetime) -> list[AssignmentRecord]:
    rows = await db.rows(
        f"SELECT {COLUMNS} FROM assignments WHERE summary_posted_at IS NULL"
        " AND summary_claimed_at >= $1 AND summary_claimed_at < $2 ORDER BY id",
        db.when(claimed_after), db.when(claimed_before))
    return [assignment_of(db, r) for r in rows]


async def mark_assignment_summary_posted(db: Sql, assignment_id: int, when: datetime) -> None:
    await db.run("UPDATE assignments SET summary_posted_at = $2 WHERE id = $1"
                 " AND summary_posted_at IS NULL", assignment_id, db.when(when))
