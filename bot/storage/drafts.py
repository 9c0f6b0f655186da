"""Authors' drafts (one each) and the packs they published, written once for every database
(like ops.py and queries.py)."""

from __future__ import annotations

from datetime import datetime

from bot.core.ports import AuthoredPackRecord, DraftRecord
from bot.storage.sql import Sql, at_or_none


# writes -------------------------------------------------------------------------------------
async def create_draft(db: Sql, author_key: str, locale: str, when: datetime) -> bool:
    return await db.run(
        "INSERT INTO drafts(author_key, locale, created_at) VALUES ($1, $2, $3)"
        " ON CONFLICT (author_key) DO NOTHING", author_key, locale, db.when(when),
    ) == 1


async def add_draft_question(
    db: Sql, author_key: str, locale: str, question: str, ref: str, when: datetime
) -> int:
    await create_draft(db, author_key, locale, when)
    # the draft's row lock orders two processes adding to the same draft
    await db.value(f"SELECT 1 FROM drafts WHERE author_key = $1{db.for_update}", author_key)
    number = await db.value(
        "SELECT number FROM draft_questions WHERE author_key = $1 AND ref = $2", author_key, ref
    )
    if number is not None:
        return int(number)
    added = int(await db.value(
        "INSERT INTO draft_questions(author_key, number, question, ref, added_at)"
        " SELECT $1, COALESCE(max(number), 0) + 1, $2, $3, $4 FROM draft_questions"
        " WHERE author_key = $1 RETURNING number",
        author_key, question, ref, db.when(when),
    ))
    await db.run("UPDATE drafts SET photo = NULL WHERE author_key = $1", author_key)
    return added


async def set_draft_photo(
    db: Sql, author_key: str, locale: str, photo: bytes, when: datetime
) -> None:
    await create_draft(db, author_key, locale, when)
    await db.run("UPDATE drafts SET photo = $1 WHERE author_key = $2", photo, author_key)


async def undo_draft_question(db: Sql, author_key: str) -> int | None:
    number = await db.value(
        "DELETE FROM draft_questions WHERE author_key = $1 AND number ="
        " (SELECT max(number) FROM draft_questions WHERE author_key = $1) RETURNING number",
        author_key,
    )
    return None if number is None else int(number)


async def name_draft(db: Sql, author_key: str, title: str) -> bool:
    return await db.run(
        "UPDATE drafts SET title = $1 WHERE author_key = $2", title, author_key
    ) == 1


async def delete_draft(db: Sql, author_key: str) -> bool:
    await db.run("DELETE FROM draft_questions WHERE author_key = $1", author_key)
    return await db.run("DELETE FROM drafts WHERE author_key = $1", author_key) == 1


async def publish_draft(db: Sql, pack: AuthoredPackRecord) -> bool:
    if await db.run(
        "INSERT INTO authored_packs(quiz_id, author_key, pack, published_at)"
        " VALUES ($1, $2, $3, $4) ON CONFLICT (quiz_id) DO NOTHING",
        pack.quiz_id, pack.author_key, pack.text, db.when(pack.published_at),
    ) != 1:
        return False
    for path, data in pack.files:
        await db.run("INSERT INTO authored_files(quiz_id, path, data) VALUES ($1, $2, $3)",
                     pack.quiz_id, path, data)
    await delete_draft(db, pack.author_key)
    return True


async def withdraw_pack(db: Sql, quiz_id: str, when: datetime) -> bool:
    return await db.run(
        "UPDATE authored_packs SET withdrawn_at = $1 WHERE quiz_id = $2 AND withdrawn_at IS NULL",
        db.when(when), quiz_id,
    ) == 1


# reads --------------------------------------------------------------------------------------
async def draft(db: Sql, author_key: str) -> DraftRecord | None:
    row = await db.row(
        "SELECT locale, title, created_at, photo FROM drafts WHERE author_key = $1", author_key
    )
    if row is None:
        return None
    questions = tuple(r[0] for r in await db.rows(
        "SELECT question FROM draft_questions WHERE author_key = $1 ORDER BY number",
        author_key,
    ))
    photo = None if row[3] is None else bytes(row[3])
    return DraftRecord(author_key, row[0], row[1], db.at(row[2]), questions, photo)


async def authored_packs(db: Sql) -> list[AuthoredPackRecord]:
    rows = await db.rows(
        "SELECT quiz_id, author_key, pack, published_at, withdrawn_at FROM authored_packs"
        " ORDER BY published_at, quiz_id"
    )
    files: dict[str, list[tuple[str, bytes]]] = {}
    for quiz_id, path, data in await db.rows(
        "SELECT quiz_id, path, data FROM authored_files ORDER BY quiz_id, path"
    ):
        files.setdefault(quiz_id, []).append((path, bytes(data)))
    return [AuthoredPackRecord(r[0], r[1], r[2], db.at(r[3]), at_or_none(db, r[4]),
                               tuple(files.get(r[0], ())))
            for r in rows]


async def authored_packs_version(db: Sql) -> str:
    # packs are never deleted and a withdrawal is final: the two counts change on every change
    row = await db.row("SELECT count(*), count(withdrawn_at) FROM authored_packs")
    assert row is not None  # an aggregate has one row
    return f"{int(row[0])}:{int(row[1])}"
