"""Writes: plain functions of a connection, run by the writer thread inside a batch's
transaction, each in its own savepoint (writer.py). They return plain values; raising makes
that one write fail alone."""

from __future__ import annotations

import json
import sqlite3

from bot.core.ports import AnswerRecord, NewPost, RecordOutcome
from bot.core.schedule import Schedule
from bot.storage.records import ANSWER_COLUMNS, answer_of, to_ms

Db = sqlite3.Connection


# people and chats ---------------------------------------------------------------------------
def upsert_person(db: Db, key: str, name: str) -> None:
    """A blank name (the platform gave none) never overwrites the stored one."""
    db.execute(
        "INSERT INTO persons(key, name) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET name=excluded.name WHERE excluded.name <> ''",
        (key, name),
    )


def upsert_chat(db: Db, key: str, title: str, platform_locale: str | None) -> None:
    db.execute(
        "INSERT INTO chats(key, title, platform_locale) VALUES (?, ?, ?) "
        "ON CONFLICT(key) DO UPDATE SET title=excluded.title, "
        "platform_locale=COALESCE(excluded.platform_locale, platform_locale)",
        (key, title, platform_locale),
    )


def set_person_locale(db: Db, key: str, locale: str | None) -> None:
    db.execute(
        "INSERT INTO persons(key, locale) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET locale=excluded.locale",
        (key, locale),
    )


def set_chat_locale(db: Db, key: str, locale: str | None) -> None:
    db.execute(
        "INSERT INTO chats(key, locale) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET locale=excluded.locale",
        (key, locale),
    )


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


# posts --------------------------------------------------------------------------------------
def insert_post(db: Db, new: NewPost) -> int:
    db.execute("INSERT OR IGNORE INTO chats(key) VALUES (?)", (new.chat_key,))
    cur = db.execute(
        "INSERT INTO posts(chat_key, quiz_id, question_id, option_order, locale, kind,"
        " run_id, created_at, closes_at, owner_key) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (
            new.chat_key, new.quiz_id, new.question_id, json.dumps(list(new.order)),
            new.locale, new.kind, new.run_id, to_ms(new.created_at),
            to_ms(new.closes_at) if new.closes_at else None, new.owner_key,
        ),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid


def bind_ref(db: Db, post_id: int, ref: str) -> None:
    db.execute("INSERT OR REPLACE INTO post_refs(ref, post_id) VALUES (?, ?)", (ref, post_id))


def close_post(db: Db, post_id: int, when: int, quiet: bool) -> bool:
    cur = db.execute(
        "UPDATE posts SET closed_at=?, summary_posted_at=? WHERE id=? AND closed_at IS NULL",
        (when, when if quiet else None, post_id),
    )
    return cur.rowcount == 1


def mark_summary_posted(db: Db, post_id: int, when: int) -> None:
    db.execute(
        "UPDATE posts SET summary_posted_at=? WHERE id=? AND summary_posted_at IS NULL",
        (when, post_id),
    )


# answers ------------------------------------------------------------------------------------
def record_answer(
    db: Db, answer: AnswerRecord, upsert_person: bool, read_locale: bool
) -> tuple[RecordOutcome, AnswerRecord | None, tuple[str | None] | None, int]:
    """The hot path's one write: the answer, and the person (with answer.name) if the caller
    does not know them unchanged. Returns the outcome, the earlier answer of a duplicate, the
    person's stored locale as a 1-tuple if `read_locale` (for the caller's cache), and the
    new answer's id (0 if none was inserted)."""
    # The open check is part of the insert, so a post closed by another process between our
    # read and this write still refuses the answer.
    at = to_ms(answer.answered_at)
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
    cur = db.execute(
        "INSERT INTO answers(post_id, person_key, option, correct, answered_at,"
        " elapsed_ms, chat_key, quiz_id, question_id, daily_date)"
        " SELECT ?, ?, ?, ?, ?, ?, chat_key, quiz_id, question_id,"
        "  (SELECT local_date FROM daily_posts WHERE daily_posts.post_id = posts.id)"
        " FROM posts WHERE id=? AND closed_at IS NULL AND (closes_at IS NULL OR closes_at>?)"
        " ON CONFLICT(post_id, person_key) DO NOTHING",
        (answer.post_id, key, answer.option, int(answer.correct), at, answer.elapsed_ms,
         answer.post_id, at),
    )
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
        return "duplicate", answer_of(row), locale, 0
    if db.execute("SELECT 1 FROM posts WHERE id=?", (answer.post_id,)).fetchone() is None:
        raise LookupError(f"post {answer.post_id} does not exist")
    return "closed", None, locale, 0


OPEN_POST = (
    "SELECT 1 FROM posts WHERE id=? AND closed_at IS NULL AND (closes_at IS NULL OR closes_at>?)"
)


# runs ---------------------------------------------------------------------------------------
def create_run(
    db: Db, person_key: str, chat_key: str, quiz_id: str, questions: tuple[str, ...],
    locale: str, started_at: int,
) -> int:
    db.execute("INSERT OR IGNORE INTO chats(key) VALUES (?)", (chat_key,))
    db.execute("INSERT OR IGNORE INTO persons(key) VALUES (?)", (person_key,))
    cur = db.execute(
        "INSERT INTO runs(person_key, chat_key, quiz_id, questions, locale, started_at)"
        " VALUES (?,?,?,?,?,?)",
        (person_key, chat_key, quiz_id, json.dumps(list(questions)), locale, started_at),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid


def finish_run(db: Db, run_id: int, when: int) -> None:
    db.execute(
        "UPDATE runs SET finished_at=? WHERE id=? AND finished_at IS NULL", (when, run_id)
    )


# daily schedules ----------------------------------------------------------------------------
def set_schedule(db: Db, schedule: Schedule, updated_at: int, updated_by: str | None) -> None:
    db.execute("INSERT OR IGNORE INTO chats(key) VALUES (?)", (schedule.chat_key,))
    db.execute(
        "INSERT INTO schedules(chat_key, local_time, tz, selector, open_minutes,"
        " updated_at, updated_by) VALUES (?,?,?,?,?,?,?) ON CONFLICT(chat_key) DO UPDATE"
        " SET local_time=excluded.local_time, tz=excluded.tz,"
        " selector=excluded.selector, open_minutes=excluded.open_minutes,"
        " updated_at=excluded.updated_at, updated_by=excluded.updated_by",
        (
            schedule.chat_key, schedule.at.strftime("%H:%M"), schedule.tz,
            schedule.selector, schedule.open_minutes, updated_at, updated_by,
        ),
    )


def delete_schedule(db: Db, chat_key: str) -> bool:
    return db.execute("DELETE FROM schedules WHERE chat_key=?", (chat_key,)).rowcount == 1


def claim_daily(db: Db, chat_key: str, local_date: str, post: NewPost, when: int) -> int | None:
    """Create the day's post and its claim; None if the day is already claimed."""
    if db.execute(
        "SELECT 1 FROM daily_posts WHERE chat_key=? AND local_date=?", (chat_key, local_date)
    ).fetchone() is not None:
        return None
    post_id = insert_post(db, post)
    db.execute(
        "INSERT INTO daily_posts(chat_key, local_date, post_id, claimed_at) VALUES (?,?,?,?)",
        (chat_key, local_date, post_id, when),  # a racing process fails here; its post too
    )
    return post_id


def mark_daily_published(db: Db, post_id: int, when: int) -> None:
    db.execute("UPDATE daily_posts SET published_at=? WHERE post_id=?", (when, post_id))


# leases ---------------------------------------------------------------------------------------
STALE_LEASE_MS = 24 * 3600 * 1000


def take_lease(db: Db, name: str, holder: str, until: int, now: int) -> bool:
    """Take `name` until `until` unless another holder has it unexpired (or renew it)."""
    cur = db.execute(
        "INSERT INTO leases(name, holder, until) VALUES (?, ?, ?) "
        "ON CONFLICT(name) DO UPDATE SET holder=excluded.holder, until=excluded.until "
        "WHERE leases.until <= ? OR leases.holder = excluded.holder",
        (name, holder, until, now),
    )
    taken = cur.rowcount == 1
    db.execute("DELETE FROM leases WHERE until < ?", (now - STALE_LEASE_MS,))  # long expired
    return taken


def release_lease(db: Db, name: str, holder: str) -> None:
    db.execute("DELETE FROM leases WHERE name=? AND holder=?", (name, holder))
