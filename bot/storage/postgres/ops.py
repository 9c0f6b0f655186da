"""Writes: coroutines of a connection, run by the writer task inside a batch's transaction,
each in its own savepoint (writer.py). They return plain values; raising makes that one write
fail alone."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date, datetime, timedelta
from typing import Any

from bot.core.ports import AnswerRecord, NewPost, RecordOutcome
from bot.core.schedule import Schedule
from bot.storage.postgres.records import ANSWER_COLUMNS, answer_of

Db = Any  # an asyncpg.Connection in a transaction


# people and chats ---------------------------------------------------------------------------
async def upsert_person(db: Db, key: str, name: str) -> None:
    """A blank name (the platform gave none) never overwrites the stored one."""
    await db.execute(
        "INSERT INTO persons(key, name) VALUES ($1, $2)"
        " ON CONFLICT (key) DO UPDATE SET name = excluded.name WHERE excluded.name <> ''",
        key, name,
    )


async def upsert_chat(db: Db, key: str, title: str, platform_locale: str | None) -> None:
    await db.execute(
        "INSERT INTO chats(key, title, platform_locale) VALUES ($1, $2, $3)"
        " ON CONFLICT (key) DO UPDATE SET title = excluded.title,"
        " platform_locale = COALESCE(excluded.platform_locale, chats.platform_locale)",
        key, title, platform_locale,
    )


async def set_person_locale(db: Db, key: str, locale: str | None) -> None:
    await db.execute(
        "INSERT INTO persons(key, locale) VALUES ($1, $2)"
        " ON CONFLICT (key) DO UPDATE SET locale = excluded.locale",
        key, locale,
    )
    await notify(db, "person", key)


async def set_chat_locale(db: Db, key: str, locale: str | None) -> None:
    await db.execute(
        "INSERT INTO chats(key, locale) VALUES ($1, $2)"
        " ON CONFLICT (key) DO UPDATE SET locale = excluded.locale",
        key, locale,
    )
    await notify(db, "chat", key)


# the channel other processes listen on to drop what they cached (storage.py); delivered at
# COMMIT, and never if the write is rolled back
CHANNEL = "quizbot_cache"


async def notify(db: Db, what: str, key: object) -> None:
    await db.execute("SELECT pg_notify($1, $2)", CHANNEL, f"{what}:{key}")


# the per-chat aggregate tables and their key beside chat_key
AGGREGATES = (
    ("scores", "day, person_key"), ("totals", "person_key"), ("week_scores", "person_key"),
)


async def migrate_chat(db: Db, old: str, new: str) -> bool:
    """Move everything of chat `old` to key `new` (a Telegram group that became a supergroup
    gets a new id). Aggregates are added up if `new` has some. Holds the materializer's
    position lock, so no application of answers read under the old key lands after the
    move."""
    if await db.fetchval("SELECT 1 FROM chats WHERE key = $1", old) is None:
        return False
    await db.execute("SELECT 1 FROM materialized WHERE name = 'scores' FOR UPDATE")
    await db.execute(
        "INSERT INTO chats(key, title, locale, platform_locale)"
        " SELECT $1, title, locale, platform_locale FROM chats WHERE key = $2"
        " ON CONFLICT (key) DO UPDATE SET locale = COALESCE(chats.locale, excluded.locale)",
        new, old,
    )
    for table in ("posts", "answers", "runs"):
        await db.execute(f"UPDATE {table} SET chat_key = $1 WHERE chat_key = $2", new, old)
    await db.execute(
        "UPDATE schedules SET chat_key = $1 WHERE chat_key = $2"
        " AND NOT EXISTS (SELECT 1 FROM schedules WHERE chat_key = $1)",
        new, old,
    )
    await db.execute(
        "UPDATE daily_posts AS d SET chat_key = $1 WHERE d.chat_key = $2 AND NOT EXISTS"
        " (SELECT 1 FROM daily_posts AS e WHERE e.chat_key = $1 AND e.local_date = d.local_date)",
        new, old,
    )
    for table, key in AGGREGATES:
        await db.execute(
            f"INSERT INTO {table}(chat_key, {key}, correct, answered, time_ms)"
            f" SELECT $1, {key}, correct, answered, time_ms FROM {table} WHERE chat_key = $2"
            f" ON CONFLICT (chat_key, {key}) DO UPDATE SET"
            f" correct = {table}.correct + excluded.correct,"
            f" answered = {table}.answered + excluded.answered,"
            f" time_ms = {table}.time_ms + excluded.time_ms",
            new, old,
        )
        await db.execute(f"DELETE FROM {table} WHERE chat_key = $1", old)
    for table in ("schedules", "daily_posts"):
        await db.execute(f"DELETE FROM {table} WHERE chat_key = $1", old)
    # the chat's settings (unless the new key has its own) and its rounds
    await db.execute(
        "UPDATE chat_settings SET chat_key = $1 WHERE chat_key = $2"
        " AND NOT EXISTS (SELECT 1 FROM chat_settings WHERE chat_key = $1)", new, old,
    )
    await db.execute("DELETE FROM chat_settings WHERE chat_key = $1", old)
    await db.execute("UPDATE rounds SET chat_key = $1 WHERE chat_key = $2", new, old)
    await db.execute("UPDATE problem_reports SET chat_key = $1 WHERE chat_key = $2", new,
                     old)
    await db.execute("DELETE FROM chats WHERE key = $1", old)
    await notify(db, "chat", old)
    await notify(db, "chat", new)
    await notify(db, "posts", "*")
    return True


# posts --------------------------------------------------------------------------------------
async def insert_post(db: Db, new: NewPost) -> int:
    await db.execute(
        "INSERT INTO chats(key) VALUES ($1) ON CONFLICT (key) DO NOTHING", new.chat_key
    )
    post_id = await db.fetchval(
        "INSERT INTO posts(chat_key, quiz_id, question_id, option_order, locale, kind,"
        " run_id, created_at, closes_at, owner_key)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
        new.chat_key, new.quiz_id, new.question_id, list(new.order), new.locale, new.kind,
        new.run_id, new.created_at, new.closes_at, new.owner_key,
    )
    return int(post_id)


async def bind_ref(db: Db, post_id: int, ref: str) -> None:
    await db.execute(
        "INSERT INTO post_refs(ref, post_id) VALUES ($1, $2)"
        " ON CONFLICT (ref) DO UPDATE SET post_id = excluded.post_id",
        ref, post_id,
    )


async def close_post(db: Db, post_id: int, when: datetime, quiet: bool) -> bool:
    closed = await db.fetchval(
        "UPDATE posts SET closed_at = $1, summary_posted_at = $2"
        " WHERE id = $3 AND closed_at IS NULL RETURNING id",
        when, when if quiet else None, post_id,
    )
    if closed is None:
        return False
    await notify(db, "post", post_id)
    return True


async def mark_summary_posted(db: Db, post_id: int, when: datetime) -> None:
    await db.execute(
        "UPDATE posts SET summary_posted_at = $1 WHERE id = $2 AND summary_posted_at IS NULL",
        when, post_id,
    )


# answers ------------------------------------------------------------------------------------
# One statement: the post must be open at the answer's time (checked in the insert itself, so
# a post another process closed a moment ago refuses it); only an answer the post takes
# creates its person or renames them; the unique key keeps the first answer. An existing
# person's row is not locked unless the name changes.
RECORD_ANSWER = """
WITH open_post AS (
    SELECT id, chat_key, quiz_id, question_id,
           (SELECT local_date FROM daily_posts WHERE daily_posts.post_id = posts.id) AS daily
    FROM posts
    WHERE id = $1 AND closed_at IS NULL AND (closes_at IS NULL OR closes_at > $5)
), new_person AS (
    INSERT INTO persons(key, name) SELECT $2, $7 FROM open_post WHERE $8
    ON CONFLICT (key) DO NOTHING
    RETURNING 1
), renamed AS (
    UPDATE persons SET name = $7
    WHERE key = $2 AND $8 AND $7 <> '' AND name IS DISTINCT FROM $7
      AND EXISTS (SELECT 1 FROM open_post)
    RETURNING 1
), person AS (  -- joined below: the person's row is written before the answer's
    SELECT (SELECT count(*) FROM new_person) + (SELECT count(*) FROM renamed) AS written
), inserted AS (
    INSERT INTO answers(post_id, person_key, option, correct, answered_at, elapsed_ms,
                        chat_key, quiz_id, question_id, daily_date)
    SELECT id, $2, $3, $4, $5, $6, chat_key, quiz_id, question_id, daily
    FROM open_post CROSS JOIN person
    ON CONFLICT (post_id, person_key) DO NOTHING
    RETURNING id, tx
)
SELECT (SELECT id FROM inserted), (SELECT tx FROM inserted),
       EXISTS (SELECT 1 FROM open_post),
       (SELECT locale FROM persons WHERE key = $2)
"""


async def record_answer(
    db: Db, answer: AnswerRecord, upsert_person: bool
) -> tuple[RecordOutcome, AnswerRecord | None, str | None, tuple[int, int]]:
    """The hot path's one write. Returns the outcome, the earlier answer of a duplicate, the
    person's stored locale (for the caller's cache), and the new answer's (tx, id), (0, 0)
    if none was inserted."""
    key = answer.person_key
    answer_id, tx, is_open, locale = await db.fetchrow(
        RECORD_ANSWER, answer.post_id, key, answer.option, answer.correct,
        answer.answered_at, answer.elapsed_ms, answer.name, upsert_person,
    )
    if answer_id is not None:
        return "inserted", None, locale, (int(tx), int(answer_id))
    # not inserted: read again in a new snapshot (a duplicate may have been committed by
    # another process after this statement's snapshot was taken)
    row = await db.fetchrow(
        f"SELECT {ANSWER_COLUMNS} FROM answers WHERE post_id = $1 AND person_key = $2",
        answer.post_id, key,
    )
    if row is not None:
        return "duplicate", answer_of(row), locale, (0, 0)
    if not is_open and await db.fetchval(
        "SELECT 1 FROM posts WHERE id = $1", answer.post_id
    ) is None:
        raise LookupError(f"post {answer.post_id} does not exist")
    return "closed", None, locale, (0, 0)


# runs ---------------------------------------------------------------------------------------
async def create_run(
    db: Db, person_key: str, chat_key: str, quiz_id: str, questions: tuple[str, ...],
    locale: str, started_at: datetime,
) -> int:
    await db.execute("INSERT INTO chats(key) VALUES ($1) ON CONFLICT (key) DO NOTHING", chat_key)
    await db.execute(
        "INSERT INTO persons(key) VALUES ($1) ON CONFLICT (key) DO NOTHING", person_key
    )
    run_id = await db.fetchval(
        "INSERT INTO runs(person_key, chat_key, quiz_id, questions, locale, started_at)"
        " VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        person_key, chat_key, quiz_id, list(questions), locale, started_at,
    )
    return int(run_id)


async def finish_run(db: Db, run_id: int, when: datetime) -> None:
    await db.execute(
        "UPDATE runs SET finished_at = $1 WHERE id = $2 AND finished_at IS NULL", when, run_id
    )


# daily schedules ----------------------------------------------------------------------------
async def set_schedule(
    db: Db, schedule: Schedule, updated_at: datetime, updated_by: str | None
) -> None:
    await db.execute(
        "INSERT INTO chats(key) VALUES ($1) ON CONFLICT (key) DO NOTHING", schedule.chat_key
    )
    await db.execute(
        "INSERT INTO schedules(chat_key, local_time, tz, selector, open_minutes, updated_at,"
        " updated_by) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (chat_key) DO UPDATE"
        " SET local_time = excluded.local_time, tz = excluded.tz,"
        " selector = excluded.selector, open_minutes = excluded.open_minutes,"
        " updated_at = excluded.updated_at, updated_by = excluded.updated_by",
        schedule.chat_key, schedule.at.strftime("%H:%M"), schedule.tz, schedule.selector,
        schedule.open_minutes, updated_at, updated_by,
    )


async def delete_schedule(db: Db, chat_key: str) -> bool:
    deleted = await db.fetchval(
        "DELETE FROM schedules WHERE chat_key = $1 RETURNING chat_key", chat_key
    )
    return deleted is not None


CLAIM_DAILY = """
WITH claim AS (
    INSERT INTO daily_posts(chat_key, local_date, post_id, claimed_at)
    VALUES ($1, $2, nextval(pg_get_serial_sequence('posts', 'id')), $3)
    ON CONFLICT (chat_key, local_date) DO NOTHING
    RETURNING post_id
)
INSERT INTO posts(id, chat_key, quiz_id, question_id, option_order, locale, kind, run_id,
                  created_at, closes_at, owner_key)
SELECT post_id, $13, $4, $5, $6, $7, $8, $9, $10, $11, $12 FROM claim
RETURNING id
"""


async def claim_daily(
    db: Db, chat_key: str, local_date: date, post: NewPost, when: datetime
) -> int | None:
    """Create the day's post and its claim in one statement; None if the day is already
    claimed. The claim's primary key decides between processes: a racing one waits for the
    first to commit, then finds the conflict and inserts nothing (the post's foreign key is
    checked at the end of the statement, once both rows exist)."""
    await db.execute(
        "INSERT INTO chats(key) VALUES ($1) ON CONFLICT (key) DO NOTHING", post.chat_key
    )
    post_id = await db.fetchval(
        CLAIM_DAILY, chat_key, local_date, when, post.quiz_id, post.question_id,
        list(post.order), post.locale, post.kind, post.run_id, post.created_at,
        post.closes_at, post.owner_key, post.chat_key,
    )
    return None if post_id is None else int(post_id)


async def mark_daily_published(db: Db, post_id: int, when: datetime) -> None:
    await db.execute("UPDATE daily_posts SET published_at = $1 WHERE post_id = $2", when, post_id)


# leases ---------------------------------------------------------------------------------------
STALE_LEASE = timedelta(days=1)


async def take_lease(db: Db, name: str, holder: str, until: datetime, now: datetime) -> bool:
    """Take `name` until `until` unless another holder has it unexpired (or renew it)."""
    taken = await db.fetchval(
        "INSERT INTO leases(name, holder, until) VALUES ($1, $2, $3) "
        "ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until "
        "WHERE leases.until <= $4 OR leases.holder = excluded.holder RETURNING true",
        name, holder, until, now,
    )
    await db.execute("DELETE FROM leases WHERE until < $1", now - STALE_LEASE)  # long expired
    return bool(taken)


async def release_lease(db: Db, name: str, holder: str) -> None:
    await db.execute("DELETE FROM leases WHERE name = $1 AND holder = $2", name, holder)


# Lock order. Two processes whose batches insert the same new keys (a person answering
# through both, a chat's daily claim raced by both) in different orders would deadlock, and
# PostgreSQL only notices after deadlock_timeout (1 s). The writer runs a batch's ops sorted by
# the first row each one locks, so every transaction takes those locks in one global order:
# chats before persons, then by key. (Ops that lock more than one kind still can deadlock,
# rarely; the loser is run again in the next batch.)
LockKey = tuple[str, ...]
LOCK_KEYS: dict[Callable[..., Awaitable[Any]], Callable[..., LockKey]] = {
    upsert_chat: lambda key, *_: ("chat", key),
    set_chat_locale: lambda key, *_: ("chat", key),
    insert_post: lambda new: ("chat", new.chat_key),
    claim_daily: lambda chat_key, local_date, post, when: (
        "chat", post.chat_key, chat_key, local_date.isoformat()),
    set_schedule: lambda schedule, *_: ("chat", schedule.chat_key),
    upsert_person: lambda key, *_: ("person", key),
    set_person_locale: lambda key, *_: ("person", key),
    record_answer: lambda answer, *_: ("person", answer.person_key, str(answer.post_id)),
    take_lease: lambda name, *_: ("lease", name),
    release_lease: lambda name, *_: ("lease", name),
}

