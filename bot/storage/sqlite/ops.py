"""SQLite's own writes: recording an answer (the hot path), claiming the daily post and moving
a chat; plain functions of a connection, run by the writer thread inside a batch's transaction,
each in its own savepoint (writer.py). The writes both databases share are written once in
bot/storage/ops.py."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence

from bot.core.ports import AnswerRecord, NewPost, RecordOutcome
from bot.storage import dashboard, kept, ops, privacy, rank_buckets
from bot.storage.records import ANSWER_COLUMNS, answer_of
from bot.storage.sql import Sql
from bot.storage.sqlite import aggregates_file
from bot.storage.sqlite.materializer import RankDelta, count_ranks, recount_ranks
from bot.storage.sqlite.sql import SqliteSql, drive, to_ms

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
    for chat in (old, new):  # the two chats' boards and figures only: '*' did not change
        recount_ranks(db, chat=chat)
        drive(dashboard.recount_figures(SqliteSql(db), chat))
        drive(kept.recount(SqliteSql(db), chat))
    for table in ("schedules", "daily_posts"):
        db.execute(f"DELETE FROM {table} WHERE chat_key=?", (old,))
    # the chat's settings (unless the new key has its own) and its rounds
    db.execute("UPDATE OR IGNORE chat_settings SET chat_key=? WHERE chat_key=?", (new, old))
    db.execute("DELETE FROM chat_settings WHERE chat_key=?", (old,))
    db.execute("UPDATE rounds SET chat_key=? WHERE chat_key=?", (new, old))
    db.execute("UPDATE problem_reports SET chat_key=? WHERE chat_key=?", (new, old))
    # its assignments: their summary is posted, and their link honoured, in the new chat
    db.execute("UPDATE assignments SET chat_key=? WHERE chat_key=?", (new, old))
    db.execute("DELETE FROM chats WHERE key=?", (old,))
    return True


# the per-chat aggregate tables and their key beside chat_key
AGGREGATES = (
    ("scores", "day, person_key"), ("totals", "person_key"), ("week_scores", "person_key"),
)


def record_answer(
    db: Db, answer: AnswerRecord, upsert_person: bool, read_locale: bool
) -> tuple[RecordOutcome, AnswerRecord | None, tuple[str | None] | None, int]:
    """One answer on its own (a savepoint each: what the writer falls back to when the
    batch's statement fails): the answer, and the person (with answer.name) if the caller
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
        " elapsed_ms, response, confidence, chat_key, quiz_id, question_id, daily_date)"
        " SELECT ?, ?, ?, ?, ?, ?, ?, ?, chat_key, quiz_id, question_id,"
        "  (SELECT local_date FROM daily_posts WHERE daily_posts.post_id = posts.id)"
        " FROM posts WHERE id=? AND closed_at IS NULL AND (closes_at IS NULL OR closes_at>?)"
        " ON CONFLICT(post_id, person_key) DO NOTHING",
        (answer.post_id, key, answer.option, int(answer.correct), at, answer.elapsed_ms,
         answer.response, answer.confidence, answer.post_id, at),
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
    return (*_not_taken(db, answer), locale, 0)


def _not_taken(db: Db, answer: AnswerRecord) -> tuple[RecordOutcome, AnswerRecord | None]:
    """Why an answer was not inserted: the person's earlier answer, or the post closed
    (LookupError if there is no such post)."""
    row = db.execute(
        f"SELECT {ANSWER_COLUMNS} FROM answers WHERE post_id=? AND person_key=?",
        (answer.post_id, answer.person_key),
    ).fetchone()
    if row is not None:
        return "duplicate", answer_of(SqliteSql(db), row)
    if db.execute("SELECT 1 FROM posts WHERE id=?", (answer.post_id,)).fetchone() is None:
        raise LookupError(f"post {answer.post_id} does not exist")
    return "closed", None


Recorded = tuple[RecordOutcome, AnswerRecord | None, tuple[str | None] | None, int]
# [post, person, answered_at, name] of each answer whose person the caller does not know
# unchanged (or whose language it has not cached): only an answer the post takes creates or
# renames its person (a refused one leaves no trace); each returns its stored language
UPSERT_PEOPLE = (
    "INSERT INTO persons(key, name) SELECT v.value ->> 1, v.value ->> 3 FROM json_each(?) AS v"
    " WHERE EXISTS (SELECT 1 FROM posts AS p WHERE p.id = v.value ->> 0"
    "  AND p.closed_at IS NULL AND (p.closes_at IS NULL OR p.closes_at > v.value ->> 2))"
    " ON CONFLICT(key) DO UPDATE SET"
    " name = CASE WHEN excluded.name <> '' THEN excluded.name ELSE persons.name END"
    " RETURNING key, locale"
)
# [post, person, option, correct, answered_at, elapsed_ms, response, confidence] of each
# answer, in queue order
# (ids are given in that order, which the materializer's streaks follow); the open check is
# part of the insert, so a post closed by another process a moment ago still refuses
INSERT_ANSWERS = (
    "INSERT INTO answers(post_id, person_key, option, correct, answered_at, elapsed_ms,"
    " response, confidence, chat_key, quiz_id, question_id, daily_date)"
    " SELECT p.id, v.value ->> 1, v.value ->> 2, v.value ->> 3, v.value ->> 4, v.value ->> 5,"
    " v.value ->> 6, v.value ->> 7, p.chat_key, p.quiz_id, p.question_id,"
    " (SELECT local_date FROM daily_posts AS d WHERE d.post_id = p.id)"
    " FROM json_each(?) AS v JOIN posts AS p ON p.id = v.value ->> 0"
    " WHERE p.closed_at IS NULL AND (p.closes_at IS NULL OR p.closes_at > v.value ->> 4)"
    " ORDER BY v.key"
    " ON CONFLICT(post_id, person_key) DO NOTHING RETURNING id, post_id, person_key"
)


def record_answers(
    db: Db, calls: Sequence[tuple[AnswerRecord, bool, bool]]
) -> list[tuple[bool, Recorded | BaseException]]:
    """The hot path: a batch of answers (answer, upsert_person, read_locale), each as
    record_answer would record it, in ONE insert (and one upsert of the people it names).
    Raises if a statement fails (nothing of the batch is left then); a refused answer (a
    duplicate, a closed post) is an outcome of its own, a post that does not exist fails
    alone."""
    answers, people = [], []
    for answer, upsert, read_locale in calls:
        at = to_ms(answer.answered_at)
        if answer.response is not None and "\x00" in answer.response:
            raise ValueError("a response with a NUL character")  # bound one by one
        answers.append([answer.post_id, answer.person_key, answer.option, int(answer.correct),
                        at, answer.elapsed_ms, answer.response, answer.confidence])
        if upsert or read_locale:
            if "\x00" in answer.name:  # JSON text in SQLite ends there: bound one by one
                raise ValueError("a name with a NUL character")
            people.append([answer.post_id, answer.person_key, at, answer.name or ""])
    locales: dict[str, str | None] = {}
    if people:  # two statements: undone together if the second one fails
        db.execute("SAVEPOINT answers")
        try:
            locales = dict(db.execute(UPSERT_PEOPLE, (json.dumps(people),)).fetchall())
            inserted = db.execute(INSERT_ANSWERS, (json.dumps(answers),)).fetchall()
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK TO answers")
                db.execute("RELEASE answers")
            raise
        db.execute("RELEASE answers")
    else:
        inserted = db.execute(INSERT_ANSWERS, (json.dumps(answers),)).fetchall()
    ids = {(post, person): answer_id for answer_id, post, person in inserted}
    results: list[tuple[bool, Recorded | BaseException]] = []
    for answer, _, _ in calls:
        key = answer.person_key
        locale = (locales[key],) if key in locales else None
        answer_id = ids.pop((answer.post_id, key), None)  # a second one in the batch: taken
        if answer_id is not None:
            results.append((True, ("inserted", None, locale, answer_id)))
            continue
        try:
            results.append((True, (*_not_taken(db, answer), locale, 0)))
        except LookupError as exc:
            results.append((False, exc))
    return results


class AnswerWrites:
    """The answer's write as the writer thread runs it, bound to the materializer that must
    hear of new answer ids: one answer (`record_answer`) or, through `many`, a run of queued
    answers as one statement (writer.py)."""

    __name__ = "record_answer"  # what tests and logs call it

    def __init__(self, noted: Callable[[int], None]) -> None:
        self.noted = noted

    def __call__(
        self, db: Db, answer: AnswerRecord, upsert_person: bool, read_locale: bool
    ) -> Recorded:
        result = record_answer(db, answer, upsert_person, read_locale)
        if result[3]:
            self.noted(result[3])
        return result

    def many(
        self, db: Db, calls: Sequence[tuple[AnswerRecord, bool, bool]]
    ) -> list[tuple[bool, Recorded | BaseException]]:
        results = record_answers(db, calls)
        top = max((value[3] for ok, value in results if ok and not isinstance(
            value, BaseException)), default=0)
        if top:
            self.noted(top)
        return results


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


async def delete_person(sql: Sql, key: str, private_chats: Sequence[str] = ()) -> bool:
    """privacy.delete_person, with the boards' rank counts of the person's rows taken out
    first (no trigger does it: the materializer keeps them). Written over `Sql`, like the
    shared writes, so that a command's key can be claimed in its transaction
    (commands.claimed_then); SQLite's own connection does the counting."""
    assert isinstance(sql, SqliteSql)
    db = sql.db
    delta: RankDelta = Counter()
    for board, table, day in (("all", "totals", "''"), ("week", "week_scores", "''"),
                              ("day", "scores", "day")):
        for chat, on, correct, time_ms in db.execute(
            f"SELECT chat_key, {day}, correct, time_ms FROM {table} WHERE person_key=?", (key,)
        ):
            delta[(board, chat, on, correct, rank_buckets.bucket(time_ms))] -= 1
    count_ranks(db, delta)
    if aggregates_file.streaks_apart(db):  # their run of right answers (else in their row)
        db.execute("DELETE FROM streaks WHERE person_key=?", (key,))
    return await privacy.delete_person(sql, key, private_chats)
