"""Migrations from every earlier schema version, on both backends: a database left at any
version (with answers in it) opens at the newest, keeps its rows, and its boards equal a
recount. Processes starting together on a new database migrate it once."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime

import asyncpg
import pytest

from bot.storage.postgres import schema
from bot.storage.sqlite.migrations import MIGRATIONS as SQLITE_MIGRATIONS
from bot.storage.sqlite.migrations import split_sql
from tests.storage_contract.backends import Backend

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
MS = int(NOW.timestamp() * 1000)
PEOPLE = 12


def sqlite_at(path: str, version: int) -> None:
    """A file as a quizbot of schema `version` left it, with two posts and their answers."""
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("BEGIN")
        for script in SQLITE_MIGRATIONS[:version]:
            for statement in split_sql(script):
                db.execute(statement)
        db.execute(f"PRAGMA user_version={version}")
        db.execute("PRAGMA application_id=1364543834")
        db.execute("INSERT INTO chats(key) VALUES ('tg:-1'), ('tg:-2')")
        db.executemany("INSERT INTO persons(key, name) VALUES (?, ?)",
                       [(f"tg:{i}", f"p{i}") for i in range(PEOPLE)])
        for post, chat in ((1, "tg:-1"), (2, "tg:-2")):
            db.execute(
                "INSERT INTO posts(id, chat_key, quiz_id, question_id, option_order, locale,"
                " created_at) VALUES (?, ?, 'sample', 's-one', '[0,1,2]', 'en', ?)",
                (post, chat, MS),
            )
            db.executemany(
                "INSERT INTO answers(post_id, person_key, option, correct, answered_at,"
                " elapsed_ms, chat_key, quiz_id, question_id)"
                " VALUES (?, ?, 0, ?, ?, ?, ?, 'sample', 's-one')",
                [(post, f"tg:{i}", (i + post) % 3 != 0, MS + 1000 * i + post, 100 * i, chat)
                 for i in range(PEOPLE)],
            )
        db.execute("COMMIT")


async def postgres_at(url: str, version: int) -> None:
    """A database as a quizbot of schema `version` left it (0: empty), with answers."""
    db = await asyncpg.connect(url)
    try:
        await schema.migrate(db, "test database", upto=version)
        if version == 0:
            return
        await db.execute("INSERT INTO chats(key) VALUES ('tg:-1'), ('tg:-2')")
        await db.executemany("INSERT INTO persons(key, name) VALUES ($1, $2)",
                             [(f"tg:{i}", f"p{i}") for i in range(PEOPLE)])
        for post, chat in ((1, "tg:-1"), (2, "tg:-2")):
            await db.execute(
                "INSERT INTO posts(id, chat_key, quiz_id, question_id, option_order, locale,"
                " created_at) OVERRIDING SYSTEM VALUE"
                " VALUES ($1, $2, 'sample', 's-one', '{0,1,2}', 'en', $3)",
                post, chat, NOW,
            )
            await db.executemany(
                "INSERT INTO answers(post_id, person_key, option, correct, answered_at,"
                " elapsed_ms, chat_key, quiz_id, question_id)"
                " VALUES ($1, $2, 0, $3, $4, $5, $6, 'sample', 's-one')",
                [(post, f"tg:{i}", (i + post) % 3 != 0,
                  datetime.fromtimestamp((MS + 1000 * i + post) / 1000, UTC), 100 * i, chat)
                 for i in range(PEOPLE)],
            )
        await db.execute("SELECT setval(pg_get_serial_sequence('posts', 'id'), 2)")
    finally:
        await db.close()


def earlier_versions() -> list[tuple[str, int]]:
    return [("sqlite", v) for v in range(1, len(SQLITE_MIGRATIONS))] + [
        ("postgres", v) for v in range(len(schema.MIGRATIONS))
    ]


@pytest.mark.parametrize(
    ("backend", "version"), earlier_versions(),
    ids=[f"{b}-v{v}" for b, v in earlier_versions()], indirect=["backend"],
)
async def test_a_database_of_every_earlier_version_migrates(
    backend: Backend, version: int
) -> None:
    if backend.name == "sqlite":
        sqlite_at(backend.database, version)
    else:
        await postgres_at(backend.database, version)
    answers = 0 if version == 0 else 2 * PEOPLE
    async with backend.opened() as store:
        assert await backend.count("answers") == answers
        assert await backend.unapplied() == 0  # the aggregates caught up at open
        assert await backend.stored() == await backend.recount()
        if answers:
            board, _ = await store.leaderboard(None, None, 3, None)
            assert [r.answered for r in board] == [2, 2, 2]
            post = await store.create_post("tg:-1", "sample", "s-one", (1, 0, 2), "en", NOW)
            assert post.id == 3  # ids go on after the old rows
    if backend.name == "sqlite":
        assert await backend.scalar("PRAGMA user_version") == len(SQLITE_MIGRATIONS)
    else:
        rows = await backend.fetch("SELECT version FROM schema_version ORDER BY version")
        assert [r[0] for r in rows] == list(range(1, len(schema.MIGRATIONS) + 1))


async def test_processes_starting_together_migrate_once(backend: Backend) -> None:
    stores = [backend.store() for _ in range(4)]
    await asyncio.gather(*(s.open() for s in stores))
    try:
        post = await stores[0].create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)
        assert all([await s.get_post(post.id) for s in stores])
    finally:
        await asyncio.gather(*(s.close() for s in stores))
    if backend.name == "postgres":
        rows = await backend.fetch("SELECT version FROM schema_version ORDER BY version")
        assert [r[0] for r in rows] == list(range(1, len(schema.MIGRATIONS) + 1))
    else:
        assert await backend.scalar("PRAGMA user_version") == len(SQLITE_MIGRATIONS)
