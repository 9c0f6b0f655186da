"""SQLite: problem reports ("⚑", /report) and the newest answer a /report refers to. Writes
run in the writer thread (one savepoint each), reads in the reader thread, like ops.py and
queries.py."""

from __future__ import annotations

import sqlite3
from typing import Any

from bot.core.ports import NewProblemReport, ProblemReportRecord, ReportOutcome, ResolveOutcome
from bot.storage.records import _at, from_ms, to_ms

Db = sqlite3.Connection
COLUMNS = ("id, quiz_id, question_id, person_key, person_name, chat_key, text, created_at,"
           " updated_at, resolved_at, resolution")


def appended(old: str, new: str, max_chars: int) -> str:
    """The open report's text with a later one on a new line, cut to `max_chars`."""
    text = f"{old}\n{new}"
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


# writes -------------------------------------------------------------------------------------
def add_problem_report(
    db: Db, report: NewProblemReport, since: int, daily_cap: int, max_chars: int
) -> tuple[ReportOutcome, int | None]:
    when = to_ms(report.created_at)
    row = db.execute(
        "SELECT id, text FROM problem_reports WHERE person_key=? AND quiz_id=?"
        " AND question_id=? AND resolved_at IS NULL",
        (report.person_key, report.quiz_id, report.question_id),
    ).fetchone()
    if row is not None:
        db.execute(
            "UPDATE problem_reports SET text=?, updated_at=?, person_name=? WHERE id=?",
            (appended(row[1], report.text, max_chars), when, report.person_name, row[0]),
        )
        return "appended", int(row[0])
    made = db.execute(
        "SELECT count(*) FROM problem_reports WHERE person_key=? AND created_at>?",
        (report.person_key, since),
    ).fetchone()[0]
    if made >= daily_cap:
        return "capped", None
    cursor = db.execute(
        "INSERT INTO problem_reports(quiz_id, question_id, person_key, person_name, chat_key,"
        " text, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)",
        (report.quiz_id, report.question_id, report.person_key, report.person_name,
         report.chat_key, report.text, when, when),
    )
    assert cursor.lastrowid is not None
    return "inserted", cursor.lastrowid


def resolve_problem_report(db: Db, report_id: int, when: int, note: str | None) -> ResolveOutcome:
    row = db.execute("SELECT resolved_at FROM problem_reports WHERE id=?",
                     (report_id,)).fetchone()
    if row is None:
        return "unknown"
    if row[0] is not None:
        return "already"
    db.execute("UPDATE problem_reports SET resolved_at=?, resolution=? WHERE id=?",
               (when, note, report_id))
    return "resolved"


# reads --------------------------------------------------------------------------------------
def record_of(row: Any) -> ProblemReportRecord:
    return ProblemReportRecord(
        id=row[0], quiz_id=row[1], question_id=row[2], person_key=row[3], person_name=row[4],
        chat_key=row[5], text=row[6], created_at=_at(row[7]), updated_at=_at(row[8]),
        resolved_at=from_ms(row[9]), resolution=row[10],
    )


def problem_report(db: Db, report_id: int) -> ProblemReportRecord | None:
    row = db.execute(f"SELECT {COLUMNS} FROM problem_reports WHERE id=?",
                     (report_id,)).fetchone()
    return None if row is None else record_of(row)


def problem_reports(
    db: Db, open_only: bool, quiz_id: str | None, chat_key: str | None = None
) -> list[ProblemReportRecord]:
    where, values = [], []
    if open_only:
        where.append("resolved_at IS NULL")
    if quiz_id is not None:
        where.append("quiz_id=?")
        values.append(quiz_id)
    if chat_key is not None:
        where.append("chat_key=?")
        values.append(chat_key)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    rows = db.execute(f"SELECT {COLUMNS} FROM problem_reports{clause} ORDER BY id",
                      values).fetchall()
    return [record_of(r) for r in rows]


def last_answered(db: Db, person_key: str, chat_key: str) -> tuple[str, str] | None:
    row = db.execute(
        "SELECT quiz_id, question_id FROM answers WHERE person_key=? AND chat_key=?"
        " ORDER BY answered_at DESC, id DESC LIMIT 1", (person_key, chat_key),
    ).fetchone()
    return None if row is None else (row[0], row[1])
