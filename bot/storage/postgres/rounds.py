"""PostgreSQL: a chat's settings (/settings) and rounds of N questions in a row. Writes run
in the writer's batch (a savepoint each), reads on a pooled connection."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.core.ports import ChatSettingsRecord, NewPost, RoundRecord
from bot.storage.postgres.ops import insert_post

Db = Any  # an asyncpg.Connection
ROUND_COLUMNS = "id, chat_key, selector, total, mode, locale, started_at, finished_at"
ROUND_POSTS = (
    "ARRAY(SELECT post_id FROM round_posts WHERE round_id = rounds.id ORDER BY step)"
)


# writes -------------------------------------------------------------------------------------
async def set_chat_settings(
    db: Db, settings: ChatSettingsRecord, when: datetime, updated_by: str | None
) -> None:
    await db.execute(
        "INSERT INTO chats(key) VALUES ($1) ON CONFLICT (key) DO NOTHING", settings.chat_key
    )
    await db.execute(
        "INSERT INTO chat_settings(chat_key, question_seconds, mode, updated_at, updated_by,"
        " chart, admins_only) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (chat_key)"
        " DO UPDATE SET question_seconds = excluded.question_seconds, mode = excluded.mode,"
        " updated_at = excluded.updated_at, updated_by = excluded.updated_by,"
        " chart = excluded.chart, admins_only = excluded.admins_only",
        settings.chat_key, settings.question_seconds, settings.mode, when, updated_by,
        settings.chart, settings.admins_only,
    )


async def create_round(
    db: Db, chat_key: str, selector: str | None, total: int, mode: str | None, locale: str,
    started_at: datetime,
) -> int:
    return int(await db.fetchval(
        "INSERT INTO rounds(chat_key, selector, total, mode, locale, started_at)"
        " VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        chat_key, selector, total, mode, locale, started_at,
    ))


async def add_round_post(db: Db, round_id: int, step: int, post: NewPost) -> int | None:
    """The round's post number `step`; None unless the round is open with `step` posts.
    The round's row lock orders racing processes: the second one sees the first's post."""
    finished = await db.fetchrow(
        "SELECT finished_at FROM rounds WHERE id = $1 FOR UPDATE", round_id
    )
    if finished is None or finished[0] is not None:
        return None
    if await db.fetchval(
        "SELECT count(*) FROM round_posts WHERE round_id = $1", round_id
    ) != step:
        return None
    post_id = await insert_post(db, post)
    await db.execute(
        "INSERT INTO round_posts(round_id, step, post_id) VALUES ($1, $2, $3)",
        round_id, step, post_id,
    )
    return post_id


async def finish_round(db: Db, round_id: int, when: datetime) -> bool:
    return await db.fetchval(
        "UPDATE rounds SET finished_at = $1 WHERE id = $2 AND finished_at IS NULL RETURNING id",
        when, round_id,
    ) is not None


# reads --------------------------------------------------------------------------------------
async def chat_settings(db: Db, chat_key: str) -> ChatSettingsRecord | None:
    row = await db.fetchrow(
        "SELECT question_seconds, mode, chart, admins_only FROM chat_settings"
        " WHERE chat_key = $1", chat_key,
    )
    return None if row is None else ChatSettingsRecord(chat_key, row[0], row[1], row[2], row[3])


def _round_of(row: Any) -> RoundRecord:
    return RoundRecord(
        id=int(row[0]), chat_key=row[1], selector=row[2], total=row[3], mode=row[4],
        locale=row[5], started_at=row[6], finished_at=row[7],
        posts=tuple(int(p) for p in row[8]),
    )


async def get_round(db: Db, round_id: int) -> RoundRecord | None:
    row = await db.fetchrow(
        f"SELECT {ROUND_COLUMNS}, {ROUND_POSTS} FROM rounds WHERE id = $1", round_id
    )
    return None if row is None else _round_of(row)


async def active_rounds(db: Db, chat_key: str | None) -> list[RoundRecord]:
    rows = await db.fetch(
        f"SELECT {ROUND_COLUMNS}, {ROUND_POSTS} FROM rounds WHERE finished_at IS NULL"
        " AND ($1::text IS NULL OR chat_key = $1) ORDER BY id", chat_key,
    )
    return [_round_of(r) for r in rows]
