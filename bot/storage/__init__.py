"""Persistence: the core's Storage port (bot/core/ports.py) on SQLite or PostgreSQL.

`QUIZBOT_DATABASE` chooses: a `postgresql://` URL is a PostgresStorage (many processes on one
database), anything else a path to a SqliteStorage file (one machine).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bot.storage.postgres.url import DatabaseUrl, is_postgres_url, redact
from bot.storage.sqlite import SqliteStorage

if TYPE_CHECKING:
    from bot.storage.postgres.storage import PostgresStorage

__all__ = ["DatabaseUrl", "SqliteStorage", "describe", "storage_for"]


def storage_for(database: str | Path | DatabaseUrl) -> SqliteStorage | PostgresStorage:
    """The storage for a database setting, not opened yet."""
    if isinstance(database, DatabaseUrl) or (
        isinstance(database, str) and is_postgres_url(database)
    ):
        from bot.storage.postgres.storage import PostgresStorage

        return PostgresStorage(database)
    return SqliteStorage(database)


def describe(database: str | Path | DatabaseUrl) -> str:
    """The database as logs and error lines show it: a URL without its password."""
    if isinstance(database, str) and is_postgres_url(database):
        return redact(database)
    return str(database)
