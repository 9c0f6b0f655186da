"""Persistence: the core's storage ports (bot/core/ports/) on SQLite or PostgreSQL.

`QUIZBOT_DATABASE` chooses: a `postgresql://` URL is a PostgresStorage (many processes on one
database), anything else a path to a SqliteStorage file (one machine). The operations both
databases share are written once (store.py, and their SQL over each one's Sql: sql.py); each
backend has a package of its own (sqlite/, postgres/), and only they import a database driver.
"""

from __future__ import annotations

from pathlib import Path

from bot.core.ports import Storage
from bot.storage.postgres.url import DatabaseUrl, is_postgres_url, redact
from bot.storage.sqlite import SqliteStorage

__all__ = ["DatabaseUrl", "SqliteStorage", "describe", "storage_for"]


def storage_for(database: str | Path | DatabaseUrl, aggregates_apart: bool = False) -> Storage:
    """The storage for a database setting, not opened yet. `aggregates_apart`: a SQLite
    file's boards and other derived tables in a file of their own (aggregates_file.py)."""
    if isinstance(database, DatabaseUrl) or (
        isinstance(database, str) and is_postgres_url(database)
    ):
        from bot.storage.postgres.storage import PostgresStorage

        return PostgresStorage(database)
    return SqliteStorage(database, aggregates_apart=aggregates_apart)


def describe(database: str | Path | DatabaseUrl) -> str:
    """The database as logs and error lines show it: a URL without its password."""
    if isinstance(database, DatabaseUrl):
        return str(database)
    if isinstance(database, str) and is_postgres_url(database):
        return redact(database)
    return str(database)


async def migrate_database(database: str | Path | DatabaseUrl) -> str:
    """Bring a database to this version's schema (what opening it does), and say so in one
    line: `quizbot db migrate`. StorageError if it cannot be used."""
    if isinstance(database, DatabaseUrl) or (
        isinstance(database, str) and is_postgres_url(database)
    ):
        from bot.storage.postgres import schema
        from bot.storage.postgres.storage import schema_version

        before = await schema_version(database)
        latest = len(schema.MIGRATIONS)
    else:
        from bot.storage.sqlite import migrations

        before = migrations.version_of(Path(database))
        latest = len(migrations.MIGRATIONS)
    store = storage_for(database)
    await store.open()  # migrates, under a lock; applies what the boards miss
    await store.close()
    where = describe(database)
    if before == latest:
        return f"{where}: schema {latest}, up to date"
    return f"{where}: schema {latest} (migrated from {before})"

