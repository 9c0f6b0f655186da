"""PostgreSQL: authors' drafts (one each) and the packs they published. Writes run in the
writer's batch (a savepoint each), reads on a pooled connection."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.core.ports import AuthoredPackRecord, DraftRecord

Db = Any  # an asyncpg.Connection


# writes -------------------------------------------------------------------------------------
async def create_draft(db: Db, author_key: str, locale: str, when: datetime) -> bool:
    return await db.fetchval(
        "INSERT INTO drafts(author_key, locale, created_at) VALUES ($1, $2, $3)"
        " ON CONFLICT (author_key) DO NOTHING RETURNING author_key", author_key, locale, when,
    ) is not None


async def add_draft_question(
    db: Db, author_key: str, locale: str, question: str, ref: str, when: datetime
) -> int:
    await create_draft(db, author_key, locale, when)
    # the draft's row lock orders two processes adding to the same draft
    await db.execute("SELECT 1 FROM drafts WHERE author_key = $1 FOR UPDATE", author_key)
    number = await db.fetchval(
        "SELECT number FROM draft_questions WHERE author_key = $1 AND ref = $2", author_key, ref
    )
    if number is not None:
        return int(number)
    return int(await db.fetchval(
        "INSERT INTO draft_questions(author_key, number, question, ref, added_at)"
        " SELECT $1, COALESCE(max(number), 0) + 1, $2, $3, $4 FROM draft_questions"
        " WHERE author_key = $1 RETURNING number",
        author_key, question, ref, when,
    ))


async def undo_draft_question(db: Db, author_key: str) -> int | None:
    number = await db.fetchval(
        "DELETE FROM draft_questions WHERE author_key = $1 AND number ="
        " (SELECT max(number) FROM draft_questions WHERE author_key = $1) RETURNING number",
        author_key,
    )
    return None if number is None else int(number)


async def name_draft(db: Db, author_key: str, title: str) -> bool:
    return await db.fetchval(
        "UPDATE drafts SET title = $1 WHERE author_key = $2 RETURNING author_key",
        title, author_key,
    ) is not None


async def delete_draft(db: Db, author_key: str) -> bool:
    await db.execute("DELETE FROM draft_questions WHERE author_key = $1", author_key)
    return await db.fetchval(
        "DELETE FROM drafts WHERE author_key = $1 RETURNING author_key", author_key
    ) is not None


async def publish_draft(db: Db, pack: AuthoredPackRecord, when: datetime) -> bool:
    if await db.fetchval(
        "INSERT INTO authored_packs(quiz_id, author_key, pack, published_at)"
        " VALUES ($1, $2, $3, $4) ON CONFLICT (quiz_id) DO NOTHING RETURNING quiz_id",
        pack.quiz_id, pack.author_key, pack.text, when,
    ) is None:
        return False
    await delete_draft(db, pack.author_key)
    return True


async def withdraw_pack(db: Db, quiz_id: str, when: datetime) -> bool:
    return await db.fetchval(
        "UPDATE authored_packs SET withdrawn_at = $2 WHERE quiz_id = $1 AND withdrawn_at IS NULL"
        " RETURNING quiz_id", quiz_id, when,
    ) is not None


# reads --------------------------------------------------------------------------------------
async def draft(db: Db, author_key: str) -> DraftRecord | None:
    row = await db.fetchrow(
        "SELECT locale, title, created_at FROM drafts WHERE author_key = $1", author_key
    )
    if row is None:
        return None
    questions = tuple(r[0] for r in await db.fetch(
        "SELECT question FROM draft_questions WHERE author_key = $1 ORDER BY number",
        author_key,
    ))
    return DraftRecord(author_key, row[0], row[1], row[2].astimezone(UTC), questions)


async def authored_packs(db: Db) -> list[AuthoredPackRecord]:
    rows = await db.fetch(
        "SELECT quiz_id, author_key, pack, published_at, withdrawn_at FROM authored_packs"
        " ORDER BY published_at, quiz_id"
    )
    return [AuthoredPackRecord(r[0], r[1], r[2], r[3].astimezone(UTC),
                               None if r[4] is None else r[4].astimezone(UTC)) for r in rows]
