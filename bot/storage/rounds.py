"""SQLite: a chat's settings (/settings) and rounds of N questions in a row. Writes run in
the writer thread (one savepoint each), reads in the reader thread, like ops.py and
queries.py."""

from __future__ import annotations

import sqlite3
from typing import Any

from bot.core.ports import ChatSettingsRecord, NewPost, RoundRecord
from bot.storage.ops import insert_post
from bot.storage.records import _at, from_ms

Db = sqlite3.Connection
ROUND_COLUMNS = "id, chat_key, selector, total, mode, locale, started_at, finished_at"


# writes -------------------------------------------------------------------------------------
def set_chat_settings(
    db: Db, settings: ChatSettingsRecord, when: int, updated_by: str | None
) -> None:
    db.execute("INSERT OR IGNORE INTO chats(key) VALUES (?)", (settings.chat_key,))
    db.execute(
        "INSERT INTO chat_settings(chat_key, question_seconds, mode, updated_at, updated_by,"
        " chart, admins_only) VALUES (?,?,?,?,?,?,?) ON CONFLICT(chat_key) DO UPDATE SET"
        " question_seconds=excluded.question_seconds, mode=excluded.mode,"
        " updated_at=excluded.updated_at, updated_by=excluded.updated_by,"
        " chart=excluded.chart, admins_only=excluded.admins_only",
        (settings.chat_key, settings.question_seconds, settings.mode, when, updated_by,
         settings.chart, settings.admins_only),
    )


def create_round(
    db: Db, chat_key: str, selector: str | None, total: int, mode: str | None, locale: str,
    started_at: int,
) -> int:
    cursor = db.execute(
        "INSERT INTO rounds(chat_key, selector, total, mode, locale, started_at)"
        " VALUES (?,?,?,?,?,?)", (chat_key, selector, total, mode, locale, started_at),
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def add_round_post(db: Db, round_id: int, step: int, post: NewPost) -> int | None:
    """The round's post number `step`; None unless the round is open with `step` posts."""
    row = db.execute(
        "SELECT finished_at, (SELECT count(*) FROM round_posts WHERE round_id = rounds.id)"
        " FROM rounds WHERE id=?", (round_id,),
    ).fetchone()
    if row is None or row[0] is not None or row[1] != step:
        return None
    post_id = insert_post(db, post)
    db.execute("INSERT INTO round_posts(round_id, step, post_id) VALUES (?,?,?)",
               (round_id, step, post_id))
    return post_id


def finish_round(db: Db, round_id: int, when: int) -> bool:
    return db.execute(
        "UPDATE rounds SET finished_at=? WHERE id=? AND finished_at IS NULL", (when, round_id)
    ).rowcount == 1


# reads --------------------------------------------------------------------------------------
def chat_settings(db: Db, chat_key: str) -> ChatSettingsRecord | None:
    row = db.execute(
        "SELECT question_seconds, mode, chart, admins_only FROM chat_settings"
        " WHERE chat_key=?", (chat_key,)
    ).fetchone()
    return None if row is None else ChatSettingsRecord(
        chat_key, row[0], row[1], None if row[2] is None else bool(row[2]),
        None if row[3] is None else bool(row[3]))


def _round_of(db: Db, row: Any) -> RoundRecord:
    posts = tuple(r[0] for r in db.execute(
        "SELECT post_id FROM round_posts WHERE round_id=? ORDER BY step", (row[0],)
    ))
    return RoundRecord(
        id=row[0], chat_key=row[1], selector=row[2], total=row[3], mode=row[4],
        locale=row[5], started_at=_at(row[6]), finished_at=from_ms(row[7]), posts=posts,
    )


def get_round(db: Db, round_id: int) -> RoundRecord | None:
    row = db.execute(f"SELECT {ROUND_COLUMNS} FROM rounds WHERE id=?", (round_id,)).fetchone()
    return None if row is None else _round_of(db, row)


def active_rounds(db: Db, chat_key: str | None) -> list[RoundRecord]:
    if chat_key is None:
        rows = db.execute(
            f"SELECT {ROUND_COLUMNS} FROM rounds WHERE finished_at IS NULL ORDER BY id"
        ).fetchall()
    else:
        rows = db.execute(
            f"SELECT {ROUND_COLUMNS} FROM rounds WHERE finished_at IS NULL AND chat_key=?"
            " ORDER BY id", (chat_key,),
        ).fetchall()
    return [_round_of(db, r) for r in rows]
