"""SQLite's own writes: recording an answer (the hot path), claiming the daily post and moving
a chat; plain functions of a connection, run by the writer thread inside a batch's transaction,
each in its own savepoint (writer.py). The writes both databases share are written once in
bot/storage/ops.py."""

from __future__ import annotations

import sqlite3

from bot.core.ports import AnswerRecord, NewPost, RecordOutcome
from bot.storage import ops
from bot.storage.records import ANSWER_COLUMNS, answer_of
from bot.storage.sqlite.sql import SqliteSql, drive

Db = sqlite3.Connection


def migrate_chat(db: Db, old: str, new: str) -> bool:
    """Move everything of chat `old` to key `new` (a Telegram group that became a supergroup
    gets a new id). Aggregates are added up if `new` has some."""
    if db.execute("SELECT 1 FROM chats WHERE key=?", (old,)).fetchone() is None:
        return False
    db.execute(
        "INSERT INTO chats(key, title, locale, platform_locale) SELECT ?, title, locale,"
        " platform_locale FROM chats WHERE key=? ON CONFLICT(key) DO UPDATE SET"
        " locale=COALESCE(chats.locale, excluded.locale)",
        (new, old),
    )
    for table in ("posts", "answers", "runs"):
        db.execute(f"UPDATE {table} SET chat_key=? WHERE chat_key=?", (new, old))
    db.execute("UPDATE OR IGNORE schedules SET chat_key=? WHERE chat_key=?", (new, old))
    db.execute("UPDATE OR IGNORE daily_posts SET chat_key=? WHERE chat_key=?", (new, old))
    for table, key in AGGREGATES:
        columns = f"chat_key, {key}, correct, answered, time_ms"
        db.execute(
            f"INSERT INTO {table}({columns}) SELECT ?, {key}, correct, answered, time_ms"
            f" FROM {table} WHERE chat_key=? ON CONFLICT DO UPDATE SET"
            " correct=correct+excluded.correct, answered=answered+excluded.answered,"
            " time_ms=time_ms+excluded.time_ms",
            (new, old),
        )
    for table, _ in AGGREGATES:
        db.execute(f"DELETE FROM {table} WHERE chat_key=?", (old,))
    for table in ("schedules", "daily_posts"):
        db.execute(f"DELETE FROM {table} WHERE chat_key=?", (old,))
    # the chat's settings (unless the new key has its own) and its rounds
    db.execute("UPDATE OR IGNORE chat_settings SET chat_key=? WHERE chat_key=?", (new, old))
    db.execute("DELETE FROM chat_settings WHERE chat_key=?", (old,))
    db.execute("UPDATE rounds SET chat_key=? WHERE chat_key=?", (new, old))
    db.execute("UPDATE problem_reports SET chat_key=? WHERE chat_key=?", (new, old))
    db.execute("DELETE FROM chats WHERE key=?", (old,))
    return True


# the per-chat aggregate tables and their key beside chat_key
AGGREGATES = (
    ("scores", "day, person_key"), ("totals", "person_key"), ("week_scores", "person_key"),
)


def record_answer(
    db: Db, answer: AnswerRecord, upsert_person: bool, read_locale: bool
) -> tuple[RecordOutcome, AnswerRecord | None, tuple[str | None] | None, int]:
    """The hot path's one write: the answer, and the person (with answer.name) if the caller
    does not know them unchanged. Returns the outcome, the earlier answer of a duplicate, the
    person's stored locale as a 1-tuple if `read_locale` (for the caller's cache), and the
    new answer's id (0 if none was inserted)."""
    # The open check is part of the insert, so a post closed by another process between our
    # read and this write still refuses the answer.
    at = SqliteSql(db).when(answer.answered_at)
    key = answer.person_key
    if upsert_person and db.execute(OPEN_POST, (answer.post_id, at)).fetchone() is not None:
        # only an answer the post takes creates or renames its person; a refused one leaves
        # no trace
        if answer.name:
            db.execute(
                "INSERT INTO persons(key, name) VALUES (?, ?) ON CONFLICT(key) DO UPDATE"
                " SET name=excluded.name WHERE name IS NOT excluded.name",
                (key, answer.name),
            )
        else:
            db.execute("INSERT OR IGNORE INTO persons(key) VALUES (?)", (key,))
    insert = (
        "INSERT INTO answers(post_id, person_key, option, correct, answered_at,"
        " elapsed_ms, chat_key, quiz_id, question_id, daily_date)"
        " SELECT ?, ?, ?, ?, ?, ?, chat_key, quiz_id, question_id,"
        "  (SELECT local_date FROM daily_posts WHERE daily_posts.post_id = posts.id)"
        " FROM posts WHERE id=? AND closed_at IS NULL AND (closes_at IS NULL OR closes_at>?)"
        " ON CONFLICT(post_id, person_key) DO NOTHING",
        (answer.post_id, key, answer.option, int(answer.correct), at, answer.elapsed_ms,
         answer.post_id, at),
    )
    try:
        cur = db.execute(*insert)
    except sqlite3.IntegrityError:
        if upsert_person:
            raise
        # a person this process knew, deleted since by another one on the file (privacy.py):
        # their answer brings their row back (the failed statement changed nothing)
        db.execute("INSERT OR IGNORE INTO persons(key, name) VALUES (?, ?)", (key, answer.name))
        cur = db.execute(*insert)
    locale: tuple[str | None] | None = None
    if read_locale:
        row = db.execute("SELECT locale FROM persons WHERE key=?", (key,)).fetchone()
        locale = (None if row is None else row[0],)
    if cur.rowcount == 1:
        return "inserted", None, locale, cur.lastrowid or 0
    row = db.execute(
        f"SELECT {ANSWER_COLUMNS} FROM answers WHERE post_id=? AND person_key=?",
        (answer.post_id, key),
    ).fetchone()
    if row is not None:
        return "duplicate", answer_of(SqliteSql(db), row), locale, 0
    if db.execute("SELECT 1 FROM posts WHERE id=?", (answer.post_id,)).fetchone() is None:
        raise LookupError(f"post {answer.post_id} does not exist")
    return "closed", None, locale, 0


OPEN_POST = (
    "SELECT 1 FROM posts WHERE id=? AND closed_at IS NULL AND (closes_at IS NULL OR closes_at>?)"
)


def claim_daily(db: Db, chat_key: str, local_date: str, post: NewPost, when: int) -> int | None:
    """Create the day's post and its claim; None if the day is already claimed."""
    if db.execute(
        "SELECT 1 FROM daily_posts WHERE chat_key=? AND local_date=?", (chat_key, local_date)
    ).fetchone() is not None:
        return None
    post_id = drive(ops.insert_post(SqliteSql(db), post))
    db.execute(
        "INSERT INTO daily_posts(chat_key, local_date, post_id, claimed_at) VALUES (?,?,?,?)",
        (chat_key, local_date, post_id, when),  # a racing process fails here; its post too
    )
    return post_id
