"""Writes, written once for every database: coroutines of a connection's Sql (sql.py), run by
a backend's writer inside a batch's transaction, each in its own savepoint. They return plain
values; raising makes that one write fail alone.

Recording an answer, claiming the daily post and moving a chat are each backend's own
(sqlite/ops.py, postgres/ops.py).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.core.ports import NewPost
from bot.core.schedule import Schedule
from bot.storage.sql import Sql

STALE_LEASE = timedelta(days=1)  # a lease expired this long ago is deleted


# people and chats ---------------------------------------------------------------------------
async def upsert_person(db: Sql, key: str, name: str) -> None:
    """A blank name (the platform gave none) never overwrites the stored one."""
    await db.run(
        "INSERT INTO persons(key, name) VALUES ($1, $2)"
        " ON CONFLICT (key) DO UPDATE SET name = excluded.name WHERE excluded.name <> ''",
        key, name,
    )


async def upsert_chat(db: Sql, key: str, title: str, platform_locale: str | None) -> None:
    await db.run(
        "INSERT INTO chats(key, title, platform_locale) VALUES ($1, $2, $3)"
        " ON CONFLICT (key) DO UPDATE SET title = excluded.title,"
        " platform_locale = COALESCE(excluded.platform_locale, chats.platform_locale)",
        key, title, platform_locale,
    )


async def set_person_locale(db: Sql, key: str, locale: str | None) -> None:
    await db.run(
        "INSERT INTO persons(key, locale) VALUES ($1, $2)"
        " ON CONFLICT (key) DO UPDATE SET locale = excluded.locale",
        key, locale,
    )
    await db.notify("person", key)


async def set_chat_locale(db: Sql, key: str, locale: str | None) -> None:
    await db.run(
        "INSERT INTO chats(key, locale) VALUES ($1, $2)"
        " ON CONFLICT (key) DO UPDATE SET locale = excluded.locale",
        key, locale,
    )
    await db.notify("chat", key)


async def ensure_chat(db: Sql, key: str) -> None:
    # DO UPDATE ... WHERE false changes nothing but locks the row (DO NOTHING would not): on
    # PostgreSQL, a chat's move that holds it (and deletes it) is waited for, and then the
    # row is inserted again, so the caller's row that refers to it never meets a deleted chat
    await db.run("INSERT INTO chats(key) VALUES ($1) ON CONFLICT (key)"
                 " DO UPDATE SET key = excluded.key WHERE false", key)


async def ensure_person(db: Sql, key: str) -> None:
    await db.run("INSERT INTO persons(key) VALUES ($1) ON CONFLICT (key) DO NOTHING", key)


# posts --------------------------------------------------------------------------------------
async def insert_post(db: Sql, new: NewPost) -> int:
    await ensure_chat(db, new.chat_key)
    post_id = await db.value(
        "INSERT INTO posts(chat_key, quiz_id, question_id, option_order, locale, kind,"
        " run_id, created_at, closes_at, owner_key)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
        new.chat_key, new.quiz_id, new.question_id, db.array(new.order), new.locale, new.kind,
        new.run_id, db.when(new.created_at),
        None if new.closes_at is None else db.when(new.closes_at), new.owner_key,
    )
    return int(post_id)


async def bind_ref(db: Sql, post_id: int, *refs: str) -> None:
    for ref in refs:
        await db.run(
            "INSERT INTO post_refs(ref, post_id) VALUES ($1, $2)"
            " ON CONFLICT (ref) DO UPDATE SET post_id = excluded.post_id",
            ref, post_id,
        )


async def close_post(db: Sql, post_id: int, when: datetime, quiet: bool) -> bool:
    at = db.when(when)
    closed = await db.run(
        "UPDATE posts SET closed_at = $1, summary_posted_at = $2"
        " WHERE id = $3 AND closed_at IS NULL",
        at, at if quiet else None, post_id,
    )
    if not closed:
        return False
    await db.notify("post", post_id)
    return True


async def mark_summary_posted(db: Sql, post_id: int, when: datetime) -> None:
    await db.run(
        "UPDATE posts SET summary_posted_at = $1 WHERE id = $2 AND summary_posted_at IS NULL",
        db.when(when), post_id,
    )


# runs ---------------------------------------------------------------------------------------
async def create_run(
    db: Sql, person_key: str, chat_key: str, quiz_id: str, questions: tuple[str, ...],
    locale: str, started_at: datetime,
) -> int:
    await ensure_chat(db, chat_key)
    await ensure_person(db, person_key)
    run_id = await db.value(
        "INSERT INTO runs(person_key, chat_key, quiz_id, questions, locale, started_at)"
        " VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        person_key, chat_key, quiz_id, db.array(questions), locale, db.when(started_at),
    )
    return int(run_id)


async def finish_run(db: Sql, run_id: int, when: datetime) -> None:
    await db.run(
        "UPDATE runs SET finished_at = $1 WHERE id = $2 AND finished_at IS NULL",
        db.when(when), run_id,
    )


# daily schedules ----------------------------------------------------------------------------
async def set_schedule(
    db: Sql, schedule: Schedule, updated_at: datetime, updated_by: str | None
) -> None:
    await ensure_chat(db, schedule.chat_key)
    await db.run(
        "INSERT INTO schedules(chat_key, local_time, tz, selector, open_minutes, updated_at,"
        " updated_by) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (chat_key) DO UPDATE"
        " SET local_time = excluded.local_time, tz = excluded.tz,"
        " selector = excluded.selector, open_minutes = excluded.open_minutes,"
        " updated_at = excluded.updated_at, updated_by = excluded.updated_by",
        schedule.chat_key, schedule.at.strftime("%H:%M"), schedule.tz, schedule.selector,
        schedule.open_minutes, db.when(updated_at), updated_by,
    )


async def delete_schedule(db: Sql, chat_key: str) -> bool:
    return await db.run("DELETE FROM schedules WHERE chat_key = $1", chat_key) == 1


async def mark_daily_published(db: Sql, post_id: int, when: datetime) -> None:
    await db.run(
        "UPDATE daily_posts SET published_at = $1 WHERE post_id = $2", db.when(when), post_id
    )


# leases ---------------------------------------------------------------------------------------
async def take_lease(db: Sql, name: str, holder: str, until: datetime, now: datetime) -> bool:
    """Take `name` until `until` unless another holder has it unexpired (or renew it)."""
    taken = await db.value(
        "INSERT INTO leases(name, holder, until) VALUES ($1, $2, $3)"
        " ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until"
        " WHERE leases.until <= $4 OR leases.holder = excluded.holder RETURNING 1",
        name, holder, db.when(until), db.when(now),
    )
    await db.run("DELETE FROM leases WHERE until < $1", db.when(now - STALE_LEASE))
    return taken is not None


async def release_lease(db: Sql, name: str, holder: str) -> None:
    await db.run("DELETE FROM leases WHERE name = $1 AND holder = $2", name, holder)
