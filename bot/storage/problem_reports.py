"""Problem reports ("⚑", /report) and the newest answer a /report refers to, written once for
every database (like ops.py and queries.py)."""

from __future__ import annotations

from datetime import datetime

from bot.core.ports import NewProblemReport, ProblemReportRecord, ReportOutcome, ResolveOutcome
from bot.storage.sql import Row, Sql, at_or_none

COLUMNS = ("id, quiz_id, question_id, person_key, person_name, chat_key, text, created_at,"
           " updated_at, resolved_at, resolution")


def appended(old: str, new: str, max_chars: int) -> str:
    """The open report's text with a later one on a new line, cut to `max_chars`."""
    text = f"{old}\n{new}"
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


# writes -------------------------------------------------------------------------------------
async def add_problem_report(
    db: Sql, report: NewProblemReport, since: datetime, daily_cap: int, max_chars: int
) -> tuple[ReportOutcome, int | None]:
    # one person's reports are taken one at a time across processes (the cap and the
    # one-open-report rule are read, then written)
    await db.lock(f"problem_reports:{report.person_key}")
    when = db.when(report.created_at)
    row = await db.row(
        "SELECT id, text FROM problem_reports WHERE person_key = $1 AND quiz_id = $2"
        " AND question_id = $3 AND resolved_at IS NULL",
        report.person_key, report.quiz_id, report.question_id,
    )
    if row is not None:
        await db.run(
            "UPDATE problem_reports SET text = $1, updated_at = $2, person_name = $3"
            " WHERE id = $4",
            appended(row[1], report.text, max_chars), when, report.person_name, row[0],
        )
        return "appended", int(row[0])
    made = await db.value(
        "SELECT count(*) FROM problem_reports WHERE person_key = $1 AND created_at > $2",
        report.person_key, db.when(since),
    )
    if made >= daily_cap:
        return "capped", None
    return "inserted", int(await db.value(
        "INSERT INTO problem_reports(quiz_id, question_id, person_key, person_name, chat_key,"
        " text, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING id",
        report.quiz_id, report.question_id, report.person_key, report.person_name,
        report.chat_key, report.text, when,
    ))


async def resolve_problem_report(
    db: Sql, report_id: int, when: datetime, note: str | None = None
) -> ResolveOutcome:
    row = await db.row(
        f"SELECT resolved_at FROM problem_reports WHERE id = $1{db.for_update}", report_id
    )
    if row is None:
        return "unknown"
    if row[0] is not None:
        return "already"
    await db.run("UPDATE problem_reports SET resolved_at = $1, resolution = $2 WHERE id = $3",
                 db.when(when), note, report_id)
    return "resolved"


# reads --------------------------------------------------------------------------------------
def record_of(db: Sql, row: Row) -> ProblemReportRecord:
    return ProblemReportRecord(
        id=int(row[0]), quiz_id=row[1], question_id=row[2], person_key=row[3],
        person_name=row[4], chat_key=row[5], text=row[6], created_at=db.at(row[7]),
        updated_at=db.at(row[8]), resolved_at=at_or_none(db, row[9]), resolution=row[10],
    )


async def problem_report(db: Sql, report_id: int) -> ProblemReportRecord | None:
    row = await db.row(f"SELECT {COLUMNS} FROM problem_reports WHERE id = $1", report_id)
    return None if row is None else record_of(db, row)


async def problem_reports(
    db: Sql, open_only: bool, quiz_id: str | None, chat_key: str | None
) -> list[ProblemReportRecord]:
    conditions, values = [], []
    if open_only:
        conditions.append("resolved_at IS NULL")
    for column, value in (("quiz_id", quiz_id), ("chat_key", chat_key)):
        if value is not None:
            values.append(value)
            conditions.append(f"{column} = ${len(values)}")
    clause = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    rows = await db.rows(f"SELECT {COLUMNS} FROM problem_reports{clause} ORDER BY id", *values)
    return [record_of(db, r) for r in rows]


async def last_answered(db: Sql, person_key: str, chat_key: str) -> tuple[str, str] | None:
    row = await db.row(
        "SELECT quiz_id, question_id FROM answers WHERE person_key = $1 AND chat_key = $2"
        " ORDER BY answered_at DESC, id DESC LIMIT 1", person_key, chat_key,
    )
    return None if row is None else (row[0], row[1])
