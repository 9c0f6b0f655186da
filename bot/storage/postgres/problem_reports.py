"""PostgreSQL: problem reports ("⚑", /report) and the newest answer a /report refers to.
Writes run in the writer's batch (a savepoint each), reads on a pooled connection."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.core.ports import NewProblemReport, ProblemReportRecord, ReportOutcome, ResolveOutcome
from bot.storage.problem_reports import COLUMNS, appended

Db = Any  # an asyncpg.Connection


# writes -------------------------------------------------------------------------------------
async def add_problem_report(
    db: Db, report: NewProblemReport, since: datetime, daily_cap: int, max_chars: int
) -> tuple[ReportOutcome, int | None]:
    # one person's reports are taken one at a time across processes (the cap and the
    # one-open-report rule are read, then written)
    await db.execute("SELECT pg_advisory_xact_lock(hashtext('problem_reports:' || $1))",
                     report.person_key)
    row = await db.fetchrow(
        "SELECT id, text FROM problem_reports WHERE person_key = $1 AND quiz_id = $2"
        " AND question_id = $3 AND resolved_at IS NULL",
        report.person_key, report.quiz_id, report.question_id,
    )
    if row is not None:
        await db.execute(
            "UPDATE problem_reports SET text = $1, updated_at = $2, person_name = $3"
            " WHERE id = $4",
            appended(row[1], report.text, max_chars), report.created_at, report.person_name,
            row[0],
        )
        return "appended", int(row[0])
    made = await db.fetchval(
        "SELECT count(*) FROM problem_reports WHERE person_key = $1 AND created_at > $2",
        report.person_key, since,
    )
    if made >= daily_cap:
        return "capped", None
    return "inserted", int(await db.fetchval(
        "INSERT INTO problem_reports(quiz_id, question_id, person_key, person_name, chat_key,"
        " text, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING id",
        report.quiz_id, report.question_id, report.person_key, report.person_name,
        report.chat_key, report.text, report.created_at,
    ))


async def resolve_problem_report(
    db: Db, report_id: int, when: datetime, note: str | None
) -> ResolveOutcome:
    row = await db.fetchrow(
        "SELECT resolved_at FROM problem_reports WHERE id = $1 FOR UPDATE", report_id
    )
    if row is None:
        return "unknown"
    if row[0] is not None:
        return "already"
    await db.execute("UPDATE problem_reports SET resolved_at = $1, resolution = $2 WHERE id = $3",
                     when, note, report_id)
    return "resolved"


# reads --------------------------------------------------------------------------------------
def record_of(row: Any) -> ProblemReportRecord:
    return ProblemReportRecord(
        id=int(row[0]), quiz_id=row[1], question_id=row[2], person_key=row[3],
        person_name=row[4], chat_key=row[5], text=row[6], created_at=row[7],
        updated_at=row[8], resolved_at=row[9], resolution=row[10],
    )


async def problem_report(db: Db, report_id: int) -> ProblemReportRecord | None:
    row = await db.fetchrow(f"SELECT {COLUMNS} FROM problem_reports WHERE id = $1", report_id)
    return None if row is None else record_of(row)


async def problem_reports(
    db: Db, open_only: bool, quiz_id: str | None, chat_key: str | None = None
) -> list[ProblemReportRecord]:
    rows = await db.fetch(
        f"SELECT {COLUMNS} FROM problem_reports WHERE (NOT $1 OR resolved_at IS NULL)"
        " AND ($2::text IS NULL OR quiz_id = $2) AND ($3::text IS NULL OR chat_key = $3)"
        " ORDER BY id", open_only, quiz_id, chat_key,
    )
    return [record_of(r) for r in rows]


async def last_answered(db: Db, person_key: str, chat_key: str) -> tuple[str, str] | None:
    row = await db.fetchrow(
        "SELECT quiz_id, question_id FROM answers WHERE person_key = $1 AND chat_key = $2"
        " ORDER BY answered_at DESC, id DESC LIMIT 1", person_key, chat_key,
    )
    return None if row is None else (row[0], row[1])
