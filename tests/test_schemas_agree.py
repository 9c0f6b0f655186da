"""SQLite's schema, PostgreSQL's and the copy between them (`quizbot db copy`, `db backup`)
name the same tables and columns: a table or column added to one migration list and not the
other, or not to the copy, fails here rather than in a community's move.

What differs on purpose is listed below with its reason; anything else is a difference."""

from __future__ import annotations

from pathlib import Path

import asyncpg

from bot.storage.copy import copy_database
from bot.storage.copy_rows import NOT_COPIED, TABLES
from bot.storage.postgres.storage import PostgresStorage
from bot.storage.sqlite.storage import SqliteStorage
from tests.sqlite_in_loop import _template
from tests.storage_contract.pg import fresh_database

Schema = dict[str, set[str]]

# tables only one backend has: PostgreSQL keeps streaks in a table of their own (SQLite in
# the person's row) and its schema version in a table (SQLite: PRAGMA user_version)
ONLY_POSTGRES = {"streaks", "schema_version"}
ONLY_SQLITE = {"sqlite_sequence"}
# columns only one backend has: PostgreSQL orders answers by transaction id (tx) and keeps the
# materializer's position as (tx, id); SQLite's position is one answer id and its streaks are
# in the person's row
COLUMNS_ONLY_POSTGRES = {("answers", "tx"), ("materialized", "tx"), ("materialized", "id")}
COLUMNS_ONLY_SQLITE = {("materialized", "position"), ("persons", "current_streak"),
                       ("persons", "best_streak")}
# derived or rebuilt columns the copy leaves out (the destination's materializer rebuilds them)
NOT_COPIED_COLUMNS = {("persons", "current_streak"), ("persons", "best_streak"),
                      ("answers", "tx")}


def sqlite_schema() -> Schema:
    db = _template()
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {t: {r[1] for r in db.execute(f"SELECT * FROM pragma_table_info('{t}')")}
            for t in tables}


async def postgres_schema() -> Schema:
    async with fresh_database() as url:
        store = PostgresStorage(url, pool_size=1)
        await store.open()  # migrates
        await store.close()
        db = await asyncpg.connect(url)
        try:
            rows = await db.fetch(
                "SELECT table_name, column_name FROM information_schema.columns"
                " WHERE table_schema = current_schema()")
        finally:
            await db.close()
    schema: Schema = {}
    for table, column in rows:
        schema.setdefault(table, set()).add(column)
    return schema


def columns(schema: Schema) -> set[tuple[str, str]]:
    return {(t, c) for t, names in schema.items() for c in names}


def test_every_sqlite_table_is_copied_or_left_behind_on_purpose() -> None:
    schema = sqlite_schema()
    copied = {t.name for t in TABLES}
    assert set(schema) - ONLY_SQLITE - copied - NOT_COPIED == set()
    assert copied - set(schema) == set()  # the copy names no table that is not there
    for table in TABLES:
        kept = schema[table.name] - {c for t, c in NOT_COPIED_COLUMNS if t == table.name}
        assert set(table.columns) == kept, table.name
        assert set(table.key) <= kept, table.name


async def test_both_schemas_name_the_same_tables_and_columns() -> None:
    sqlite, postgres = sqlite_schema(), await postgres_schema()
    assert set(sqlite) - ONLY_SQLITE == set(postgres) - ONLY_POSTGRES
    shared = set(sqlite) & set(postgres)
    only_sqlite = {(t, c) for t, c in columns(sqlite) - columns(postgres) if t in shared}
    only_postgres = {(t, c) for t, c in columns(postgres) - columns(sqlite) if t in shared}
    assert only_sqlite == COLUMNS_ONLY_SQLITE
    assert only_postgres == COLUMNS_ONLY_POSTGRES
    copied = {t.name for t in TABLES}
    assert set(postgres) - ONLY_POSTGRES - copied - NOT_COPIED == set()


async def test_a_database_with_uploaded_cards_is_copied_with_them(tmp_path: Path) -> None:
    """A bot that has sent a question card holds its file id: the copy moves it (it was
    once refused as a table the copy does not know)."""
    from datetime import UTC, datetime

    async with SqliteStorage(tmp_path / "a.db") as store:
        await store.set_upload("tg:card:abc", "file-1", datetime(2026, 3, 1, tzinfo=UTC))
    report = await copy_database(tmp_path / "a.db", tmp_path / "b.db")
    assert report.counts["uploads"] == (1, 1)
    async with SqliteStorage(tmp_path / "b.db") as copied:
        assert await copied.get_upload("tg:card:abc") == "file-1"
