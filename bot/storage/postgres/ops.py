"""PostgreSQL's own writes: recording answers (the hot path: one statement for a batch of
them), claiming the daily post and moving a chat; coroutines of a connection, run by the writer
task (writer.py): a batch of answers as a transaction of its own, the other writes in a shared
transaction, each in its own savepoint. The writes both databases share are written once in
bot/storage/ops.py; LOCK_KEYS orders them all, BATCHED names the ones written together."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import date, datetime
from typing import Any

from bot.core.ports import AnswerRecord, NewPost, RecordOutcome
from bot.storage import dashboard, kept, privacy
from bot.storage.ops import (
    insert_post,
    release_lease,
    set_chat_locale,
    set_person_locale,
    set_schedule,
    take_lease,
    upsert_chat,
    upsert_person,
)
from bot.storage.postgres import rank_counts
from bot.storage.postgres.writer import BatchFn
from bot.storage.records import ANSWER_COLUMNS, answer_of

Db = Any  # a PgSql (postgres/sql.py): the asyncpg connection in a transaction, and its Sql


# the per-chat aggregate tables and their key beside chat_key
AGGREGATES = (
    ("scores", "day, person_key"), ("totals", "person_key"), ("week_scores", "person_key"),
)


async def migrate_chat(db: Db, old: str, new: str) -> bool:
    """Move everything of chat `old` to key `new` (a Telegram group that became a supergroup
    gets a new id). Aggregates are added up if `new` has some. Holds the materializer's
    position lock, so no application of answers read under the old key lands after the
    move. The old chat's row is locked too: a post another process is inserting for it
    (its foreign key holds a share lock on that row) commits before the move reads the
    posts, or waits until the move committed and then finds the chat gone (and makes it
    again), never committing between the move and the old row's deletion."""
    await db.execute("SELECT 1 FROM materialized WHERE name = 'scores' FOR UPDATE")
    if await db.fetchval("SELECT 1 FROM chats WHERE key = $1 FOR UPDATE", old) is None:
        return False
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
    await rank_counts.recount(db, chats=[old, new])
    for chat in (old, new):
        await dashboard.recount_figures(db, chat)
        await kept.recount(db, chat)
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
    # its assignments: their summary is posted, and their link honoured, in the new chat
    await db.execute("UPDATE assignments SET chat_key = $1 WHERE chat_key = $2", new, old)
    await db.execute("DELETE FROM chats WHERE key = $1", old)
    await db.notify("chat", old)
    await db.notify("chat", new)
    await db.notify("posts", "*")
    return True


# One statement for a batch of answers, run as a transaction of its own (writer.py): each post
# must be open at its answer's time (checked in the insert itself, so a post another process
# closed a moment ago refuses it); only answers a post takes create their people (or bring
# back one deleted by another process) or rename them (the newest name of the batch); the
# unique key keeps the first answer, in the batch's order. An existing person's row is not
# locked unless the name changes; people are written in key order, before the answers (the
# lock order of LOCK_KEYS). Each input row comes back with its new answer's (id, tx) if it
# was inserted, and else the earlier answer as this statement's snapshot saw it: looked up
# only for the rows not inserted, so an answer the post takes costs one index probe of its
# person and one of its post, none of the answers.
RECORD_ANSWERS = """
WITH input AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::smallint[], $4::bool[],
                         $5::timestamptz[], $6::bigint[], $7::text[], $8::bool[],
                         $9::text[], $10::smallint[])
        WITH ORDINALITY AS i(post_id, person_key, option, correct, answered_at, elapsed_ms,
                             name, upsert, response, confidence, n)
), looked AS (  -- each row's person and post (LIMIT 1: one index probe each)
    SELECT i.*, p.id IS NOT NULL AS post_exists,
           p.closed_at IS NULL AND (p.closes_at IS NULL OR p.closes_at > i.answered_at)
               AS open,
           p.chat_key, p.quiz_id, p.question_id, p.daily,
           who.name AS stored_name, who.locale
    FROM input AS i
    LEFT JOIN LATERAL (
        SELECT name, locale FROM persons WHERE persons.key = i.person_key LIMIT 1
    ) AS who ON true
    LEFT JOIN LATERAL (
        SELECT id, closed_at, closes_at, chat_key, quiz_id, question_id,
               (SELECT local_date FROM daily_posts AS d WHERE d.post_id = posts.id) AS daily
        FROM posts WHERE posts.id = i.post_id LIMIT 1
    ) AS p ON true
), taken AS (
    SELECT * FROM looked WHERE post_exists AND open
), named AS (
    SELECT DISTINCT ON (person_key) person_key, name, upsert, stored_name FROM taken
    ORDER BY person_key, n DESC
), person AS (  -- the missing, and the renamed: only these rows are locked
    INSERT INTO persons(key, name)
    SELECT person_key, name FROM named
    WHERE stored_name IS NULL OR (upsert AND name <> '' AND stored_name <> name)
    ORDER BY person_key
    ON CONFLICT (key) DO UPDATE SET name = excluded.name
    WHERE excluded.name <> '' AND persons.name IS DISTINCT FROM excluded.name
    RETURNING 1
), written AS (  -- joined below: the people's rows are written before the answers'
    SELECT count(*) FROM person
), inserted AS (
    INSERT INTO answers(post_id, person_key, option, correct, answered_at, elapsed_ms,
                        response, confidence, chat_key, quiz_id, question_id, daily_date)
    SELECT post_id, person_key, option, correct, answered_at, elapsed_ms, response,
           confidence, chat_key, quiz_id, question_id, daily
    FROM taken CROSS JOIN written ORDER BY n
    ON CONFLICT (post_id, person_key) DO NOTHING
    RETURNING post_id, person_key, id, tx
)
SELECT l.post_exists AND l.open, ins.id, ins.tx, a.option, a.correct, a.answered_at,
       a.elapsed_ms, l.post_exists, l.locale, a.response, a.confidence
FROM looked AS l
LEFT JOIN inserted AS ins ON ins.post_id = l.post_id AND ins.person_key = l.person_key
LEFT JOIN LATERAL (
    SELECT option, correct, answered_at, elapsed_ms, response, confidence FROM answers
    WHERE ins.id IS NULL AND answers.post_id = l.post_id AND answers.person_key = l.person_key
    LIMIT 1
) AS a ON true
ORDER BY l.n
"""
EARLIER = (
    f"SELECT {ANSWER_COLUMNS} FROM answers"
    " WHERE (post_id, person_key) IN (SELECT * FROM unnest($1::bigint[], $2::text[]))"
)

Recorded = tuple[RecordOutcome, AnswerRecord | None, str | None, tuple[int, int]]


def record_arguments(calls: list[tuple[Any, ...]]) -> tuple[list[Any], ...]:
    """RECORD_ANSWERS's arrays, one per column, for record_answer calls."""
    answers: list[AnswerRecord] = [call[0] for call in calls]
    return (
        [a.post_id for a in answers], [a.person_key for a in answers],
        [a.option for a in answers], [a.correct for a in answers],
        [a.answered_at for a in answers], [a.elapsed_ms for a in answers],
        [a.name for a in answers], [bool(call[1]) for call in calls],
        [a.response for a in answers], [a.confidence for a in answers],
    )


async def record_answers(db: Db, calls: list[tuple[Any, ...]]) -> list[tuple[bool, Any]]:
    """The hot path: a batch of record_answer calls ((answer, upsert_person) each) in one
    statement. Returns, per call, (True, what record_answer returns) or (False, LookupError)
    for an answer to a post that does not exist."""
    answers: list[AnswerRecord] = [call[0] for call in calls]
    rows = await db.fetch(RECORD_ANSWERS, *record_arguments(calls))
    results: list[tuple[bool, Any]] = []
    first: dict[tuple[int, str], AnswerRecord] = {}  # the answers this batch inserted
    unsettled: list[int] = []  # refused by a conflict with an answer this snapshot misses
    for i, (answer, row) in enumerate(zip(answers, rows, strict=True)):
        taken, answer_id, tx, option, correct, at, elapsed, exists, locale, response, sure = row
        key = (answer.post_id, answer.person_key)
        if key in first:  # a duplicate within the batch
            results.append((True, ("duplicate", replace(first[key], name=""), locale, (0, 0))))
        elif taken and answer_id is not None:
            first[key] = answer
            results.append((True, ("inserted", None, locale, (int(tx), int(answer_id)))))
        elif option is not None:
            earlier = answer_of(db, (answer.post_id, answer.person_key, option, correct, at,
                                     elapsed, response, sure))
            results.append((True, ("duplicate", earlier, locale, (0, 0))))
        elif not exists:
            results.append((False, LookupError(f"post {answer.post_id} does not exist")))
        else:
            results.append((True, ("closed", None, locale, (0, 0))))
            if taken:  # another process committed this person's answer after our snapshot
                unsettled.append(i)
    if unsettled:  # read again, in a new snapshot
        found = {
            (int(r[0]), r[1]): answer_of(db, r)
            for r in await db.fetch(EARLIER, [answers[i].post_id for i in unsettled],
                                    [answers[i].person_key for i in unsettled])
        }
        for i in unsettled:
            again = found.get((answers[i].post_id, answers[i].person_key))
            if again is not None:
                results[i] = (True, ("duplicate", again, results[i][1][2], (0, 0)))
    return results


async def record_answer(db: Db, answer: AnswerRecord, upsert_person: bool) -> Recorded:
    """One answer (record_answers is its batch form, and what the writer runs): the outcome,
    the earlier answer of a duplicate, the person's stored locale (for the caller's cache),
    and the new answer's (tx, id), (0, 0) if none was inserted."""
    [(ok, value)] = await record_answers(db, [(answer, upsert_person)])
    if not ok:
        raise value
    recorded: Recorded = value
    return recorded


async def delete_person(db: Db, key: str, private_chats: tuple[str, ...] = ()) -> bool:
    """privacy.delete_person, the person's rows taken out of the rank counts first (holding
    the materializer's position lock, as it does)."""
    await db.execute("SELECT 1 FROM materialized WHERE name = 'scores' FOR UPDATE")
    await rank_counts.person_leaves(db, key)
    return await privacy.delete_person(db, key, private_chats)


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
# the writes the writer runs together, one statement for all queued calls (writer.py)
BATCHED: dict[Callable[..., Awaitable[Any]], BatchFn] = {record_answer: record_answers}

