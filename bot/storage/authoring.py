"""SQLite: authors' drafts (one each) and the packs they published. Writes run in the writer
thread (one savepoint each), reads in the reader thread, like ops.py and queries.py."""

from __future__ import annotations

import sqlite3

from bot.core.ports import AuthoredPackRecord, DraftRecord
from bot.storage.records import _at

Db = sqlite3.Connection


# writes -------------------------------------------------------------------------------------
def create_draft(db: Db, author_key: str, locale: str, when: int) -> bool:
    return db.execute(
        "INSERT INTO drafts(author_key, locale, created_at) VALUES (?,?,?)"
        " ON CONFLICT(author_key) DO NOTHING", (author_key, locale, when),
    ).rowcount == 1


def add_draft_question(
    db: Db, author_key: str, locale: str, question: str, ref: str, when: int
) -> int:
    create_draft(db, author_key, locale, when)
    row = db.execute(
        "SELECT number FROM draft_questions WHERE author_key=? AND ref=?", (author_key, ref)
    ).fetchone()
    if row is not None:
        return int(row[0])
    number = int(db.execute(
        "SELECT COALESCE(max(number), 0) + 1 FROM draft_questions WHERE author_key=?",
        (author_key,),
    ).fetchone()[0])
    db.execute(
        "INSERT INTO draft_questions(author_key, number, question, ref, added_at)"
        " VALUES (?,?,?,?,?)", (author_key, number, question, ref, when),
    )
    return number


def undo_draft_question(db: Db, author_key: str) -> int | None:
    row = db.execute(
        "SELECT max(number) FROM draft_questions WHERE author_key=?", (author_key,)
    ).fetchone()
    if row[0] is None:
        return None
    db.execute("DELETE FROM draft_questions WHERE author_key=? AND number=?",
               (author_key, row[0]))
    return int(row[0])


def name_draft(db: Db, author_key: str, title: str) -> bool:
    return db.execute(
        "UPDATE drafts SET title=? WHERE author_key=?", (title, author_key)
    ).rowcount == 1


def delete_draft(db: Db, author_key: str) -> bool:
    db.execute("DELETE FROM draft_questions WHERE author_key=?", (author_key,))
    return db.execute("DELETE FROM drafts WHERE author_key=?", (author_key,)).rowcount == 1


def publish_draft(db: Db, pack: AuthoredPackRecord, when: int) -> bool:
    if db.execute(
        "INSERT INTO authored_packs(quiz_id, author_key, pack, published_at) VALUES (?,?,?,?)"
        " ON CONFLICT(quiz_id) DO NOTHING", (pack.quiz_id, pack.author_key, pack.text, when),
    ).rowcount != 1:
        return False
    delete_draft(db, pack.author_key)
    return True


def withdraw_pack(db: Db, quiz_id: str, when: int) -> bool:
    return db.execute(
        "UPDATE authored_packs SET withdrawn_at=? WHERE quiz_id=? AND withdrawn_at IS NULL",
        (when, quiz_id),
    ).rowcount == 1


# reads --------------------------------------------------------------------------------------
def draft(db: Db, author_key: str) -> DraftRecord | None:
    row = db.execute(
        "SELECT locale, title, created_at FROM drafts WHERE author_key=?", (author_key,)
    ).fetchone()
    if row is None:
        return None
    questions = tuple(r[0] for r in db.execute(
        "SELECT question FROM draft_questions WHERE author_key=? ORDER BY number", (author_key,)
    ))
    return DraftRecord(author_key, row[0], row[1], _at(row[2]), questions)


def authored_packs(db: Db) -> list[AuthoredPackRecord]:
    rows = db.execute(
        "SELECT quiz_id, author_key, pack, published_at, withdrawn_at FROM authored_packs"
        " ORDER BY published_at, quiz_id"
    ).fetchall()
    return [AuthoredPackRecord(r[0], r[1], r[2], _at(r[3]), None if r[4] is None else _at(r[4]))
            for r in rows]
