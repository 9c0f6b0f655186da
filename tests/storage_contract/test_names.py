"""A person's name on both backends: a blank one (a platform event that carried none) never
overwrites the stored name, and a database whose names were overwritten by ids or blanks is
repaired by a migration, so the person's next real name replaces the placeholder."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import asyncpg

from bot.core.ports import AnswerRecord
from bot.storage.postgres import schema
from bot.storage.sqlite.migrations import MIGRATIONS as SQLITE_MIGRATIONS
from bot.storage.sqlite.migrations import split_sql
from tests.storage_contract.backends import Backend, Store

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)

# stored name -> the name after the repair ('' is unknown)
STORED = {
    "tg:1001": ("tg:1001", ""),  # its own key
    "tg:1002": ("tg:1003", ""),  # another id
    "dc:1577000000000000001": ("dc:1577000000000000001", ""),
    "tg:1004": ("   ", ""),
    "tg:1005": ("Dipa", "Dipa"),
    "tg:1006": ("tg:abc", "tg:abc"),  # not an id: someone's chosen name
    "console:ada": ("ada", "ada"),
}


def repair_version(migrations: list[str]) -> int:
    """The schema version just before the migration that repairs names."""
    return next(i for i, script in enumerate(migrations) if "name = key" in script)


async def names(store: Store) -> dict[str, str | None]:
    return {key: await store.person_name(key) for key in STORED}


async def test_a_blank_name_never_overwrites_the_stored_one(backend: Backend) -> None:
    async with backend.opened() as store:
        await store.upsert_person("tg:1", "Dipa")
        await store.upsert_person("tg:1", "")
        assert await store.person_name("tg:1") == "Dipa"
        await store.upsert_person("tg:2", "")  # someone new with no name: known, unnamed
        assert await store.person_name("tg:2") == ""
    async with backend.opened() as store:  # another process, nothing cached
        await store.upsert_person("tg:1", "")
        assert await store.person_name("tg:1") == "Dipa"
        await store.upsert_person("tg:1", "Dipa Das")  # a real new name replaces it
        await store.upsert_person("tg:2", "Esha")
        assert (await store.person_name("tg:1"), await store.person_name("tg:2")) == (
            "Dipa Das", "Esha")


async def test_an_answer_with_a_blank_name_keeps_the_stored_one(backend: Backend) -> None:
    async with backend.opened() as store:
        await store.upsert_person("tg:1", "Dipa")
        post = await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)
        outcome, _ = await store.record_answer(
            AnswerRecord(post.id, "tg:1", 0, True, NOW + timedelta(seconds=1), 1000, name=""))
        assert outcome == "inserted"
        assert await store.person_name("tg:1") == "Dipa"


async def test_names_that_are_ids_are_repaired_by_a_migration(backend: Backend) -> None:
    people = [(key, stored) for key, (stored, _) in STORED.items()]
    if backend.name == "sqlite":
        with sqlite3.connect(backend.database, isolation_level=None) as db:
            version = repair_version(SQLITE_MIGRATIONS)
            db.execute("BEGIN")
            for script in SQLITE_MIGRATIONS[:version]:
                for statement in split_sql(script):
                    db.execute(statement)
            db.execute(f"PRAGMA user_version={version}")
            db.execute("PRAGMA application_id=1364543834")
            db.executemany("INSERT INTO persons(key, name) VALUES (?, ?)", people)
            db.execute("COMMIT")
    else:
        db = await asyncpg.connect(backend.database)
        try:
            await schema.migrate(db, "test database", upto=repair_version(schema.MIGRATIONS))
            await db.executemany("INSERT INTO persons(key, name) VALUES ($1, $2)", people)
        finally:
            await db.close()
    async with backend.opened() as store:
        assert await names(store) == {key: repaired for key, (_, repaired) in STORED.items()}
        # the person's next real name replaces the unknown one, through an answer too
        post = await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)
        await store.record_answer(AnswerRecord(post.id, "tg:1001", 0, True,
                                               NOW + timedelta(seconds=1), 900, name="Alice"))
        await store.upsert_person("tg:1002", "Bob")
        await store.materialize()
        board, _ = await store.leaderboard("tg:-1", None, 10, None)
        assert [(r.person_key, r.name) for r in board] == [("tg:1001", "Alice")]
        assert await store.person_name("tg:1002") == "Bob"
