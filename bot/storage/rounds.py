"""A chat's settings (/settings), rounds of N questions in a row and uploaded cards, written
once for every database (like ops.py and queries.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from bot.core.ports import ChatSettingsRecord, NewPost, RoundRecord
from bot.storage.ops import ensure_chat, insert_post
from bot.storage.sql import Row, Sql, at_or_none

ROUND_COLUMNS = "id, chat_key, selector, total, mode, locale, started_at, finished_at"


# writes -------------------------------------------------------------------------------------
async def set_chat_settings(
    db: Sql, settings: ChatSettingsRecord, when: datetime, updated_by: str | None = None
) -> None:
    await ensure_chat(db, settings.chat_key)
    await db.run(
        "INSERT INTO chat_settings(chat_key, question_seconds, mode, updated_at, updated_by,"
        " chart, admins_only, peer_threshold, peer_discussion, confidence, target) VALUES ($1,"
        " $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (chat_key)"
        " DO UPDATE SET question_seconds = excluded.question_seconds, mode = excluded.mode,"
        " updated_at = excluded.updated_at, updated_by = excluded.updated_by,"
        " chart = excluded.chart, admins_only = excluded.admins_only,"
        " peer_threshold = excluded.peer_threshold, peer_discussion = excluded.peer_discussion,"
        " confidence = excluded.confidence, target = excluded.target",
        settings.chat_key, settings.question_seconds, settings.mode, db.when(when), updated_by,
        settings.chart, settings.admins_only, settings.peer_threshold, settings.peer_discussion,
        settings.confidence, settings.target,
    )


async def set_upload(db: Sql, key: str, ref: str, when: datetime) -> None:
    await db.run(
        "INSERT INTO uploads(key, ref, uploaded_at) VALUES ($1, $2, $3) ON CONFLICT (key)"
        " DO UPDATE SET ref = excluded.ref, uploaded_at = excluded.uploaded_at",
        key, ref, db.when(when),
    )


async def create_round(
    db: Sql, chat_key: str, selector: str | None, total: int, mode: str | None, locale: str,
    started_at: datetime,
) -> int:
    return int(await db.value(
        "INSERT INTO rounds(chat_key, selector, total, mode, locale, started_at)"
        " VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        chat_key, selector, total, mode, locale, db.when(started_at),
    ))


async def add_round_post(db: Sql, round_id: int, step: int, post: NewPost) -> int | None:
    """The round's post number `step`; None unless the round is open with `step` posts.
    The round's row lock orders racing processes: the second one sees the first's post."""
    finished = await db.row(
        f"SELECT finished_at FROM rounds WHERE id = $1{db.for_update}", round_id
    )
    if finished is None or finished[0] is not None:
        return None
    if await db.value("SELECT count(*) FROM round_posts WHERE round_id = $1", round_id) != step:
        return None
    post_id = await insert_post(db, post)
    await db.run(
        "INSERT INTO round_posts(round_id, step, post_id) VALUES ($1, $2, $3)",
        round_id, step, post_id,
    )
    return post_id


async def finish_round(db: Sql, round_id: int, when: datetime) -> bool:
    return await db.run(
        "UPDATE rounds SET finished_at = $1 WHERE id = $2 AND finished_at IS NULL",
        db.when(when), round_id,
    ) == 1


# reads --------------------------------------------------------------------------------------
async def upload(db: Sql, key: str) -> str | None:
    row = await db.row("SELECT ref FROM uploads WHERE key = $1", key)
    return None if row is None else str(row[0])


async def chat_settings(db: Sql, chat_key: str) -> ChatSettingsRecord | None:
    row = await db.row(
        "SELECT question_seconds, mode, chart, admins_only, peer_threshold, peer_discussion,"
        " confidence, target FROM chat_settings WHERE chat_key = $1", chat_key,
    )
    return None if row is None else ChatSettingsRecord(
        chat_key, row[0], row[1], None if row[2] is None else bool(row[2]),
        None if row[3] is None else bool(row[3]), row[4], row[5],
        None if row[6] is None else bool(row[6]), row[7])


async def _rounds_of(db: Sql, rows: Sequence[Row]) -> list[RoundRecord]:
    """Rounds with their posts in order (one more read for all of them)."""
    posts: dict[int, list[int]] = {int(r[0]): [] for r in rows}
    if posts:
        ids = ", ".join(f"${i}" for i in range(1, len(posts) + 1))
        for round_id, post_id in await db.rows(
            f"SELECT round_id, post_id FROM round_posts WHERE round_id IN ({ids})"
            " ORDER BY round_id, step", *posts,
        ):
            posts[int(round_id)].append(int(post_id))
    return [
        RoundRecord(
            id=int(r[0]), chat_key=r[1], selector=r[2], total=r[3], mode=r[4], locale=r[5],
            started_at=db.at(r[6]), finished_at=at_or_none(db, r[7]),
            posts=tuple(posts[int(r[0])]),
        )
        for r in rows
    ]


async def get_round(db: Sql, round_id: int) -> RoundRecord | None:
    rows = await db.rows(f"SELECT {ROUND_COLUMNS} FROM rounds WHERE id = $1", round_id)
    return next(iter(await _rounds_of(db, rows)), None)


async def active_rounds(db: Sql, chat_key: str | None = None) -> list[RoundRecord]:
    if chat_key is None:
        rows = await db.rows(
            f"SELECT {ROUND_COLUMNS} FROM rounds WHERE finished_at IS NULL ORDER BY id")
    else:
        rows = await db.rows(
            f"SELECT {ROUND_COLUMNS} FROM rounds WHERE finished_at IS NULL AND chat_key = $1"
            " ORDER BY id", chat_key,
        )
    return await _rounds_of(db, rows)


# round summaries: due when the round finished, posted once the platform confirmed ------
async def unposted_round_summaries(
    db: Sql, finished_after: datetime, finished_before: datetime
) -> list[RoundRecord]:
    rows = await db.rows(
        f"SELECT {ROUND_COLUMNS} FROM rounds WHERE finished_at IS NOT NULL"
        " AND summary_posted_at IS NULL AND finished_at >= $1 AND finished_at < $2"
        " ORDER BY id", db.when(finished_after), db.when(finished_before),
    )
    return await _rounds_of(db, rows)


async def mark_round_summary_posted(db: Sql, round_id: int, when: datetime) -> None:
    await db.run("UPDATE rounds SET summary_posted_at = $1 WHERE id = $2"
                 " AND summary_posted_at IS NULL", db.when(when), round_id)
