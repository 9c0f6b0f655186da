"""The database is quizbot's or refused, on both backends: another program's database, or one
a newer quizbot wrote, is refused with one line naming it (never its password) and left
untouched, and nothing is left running. (SQLite's files: also tests/test_storage_files.py.)"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from bot.core.ports import StorageError
from bot.storage import storage_for
from bot.storage.postgres import schema
from bot.storage.postgres.url import redact, with_database
from bot.storage.sqlite.migrations import MIGRATIONS as SQLITE_MIGRATIONS
from tests.storage_contract.backends import Backend, PostgresBackend
from tests.storage_contract.pg import fresh_database, require


def file_bytes(path: Path) -> bytes:
    return path.read_bytes()


async def snapshot(backend: Backend) -> Any:
    """Everything in the database, to show it was left untouched."""
    if backend.name == "sqlite":
        return file_bytes(Path(backend.database))
    tables = await backend.fetch(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1"
    )
    return {t[0]: await backend.fetch(f"SELECT * FROM {t[0]} ORDER BY 1") for t in tables}


async def refused(database: str) -> str:
    threads = set(threading.enumerate())
    tasks = asyncio.all_tasks()
    store = storage_for(database)
    with pytest.raises(StorageError) as info:
        await store.open()
    for thread in set(threading.enumerate()) - threads:
        thread.join(timeout=10)
        assert not thread.is_alive(), "a connection thread was left running"
    assert asyncio.all_tasks() <= tasks, "a task was left running"
    message = str(info.value)
    assert "\n" not in message
    return message


async def test_another_programs_database_is_refused_untouched(backend: Backend) -> None:
    await backend.fetch("CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT)")
    await backend.fetch("INSERT INTO notes(id, text) VALUES (1, 'keep me')")
    before = await snapshot(backend)
    message = await refused(backend.database)
    assert "not a quizbot database" in message and redact(backend.database) in message
    assert await snapshot(backend) == before


async def test_a_database_from_a_newer_quizbot_is_refused_untouched(backend: Backend) -> None:
    async with backend.opened():
        pass
    if backend.name == "sqlite":
        await backend.fetch(f"PRAGMA user_version={len(SQLITE_MIGRATIONS) + 1}")
    else:
        await backend.fetch(
            "INSERT INTO schema_version(version) VALUES ($1)", len(schema.MIGRATIONS) + 1
        )
    before = await snapshot(backend)
    message = await refused(backend.database)
    assert "newer quizbot" in message and redact(backend.database) in message
    assert await snapshot(backend) == before


async def test_postgres_another_programs_schema_version_is_refused() -> None:
    async with fresh_database() as url:
        theirs = PostgresBackend(url)
        await theirs.fetch("CREATE TABLE schema_version(version integer, installed text)")
        await theirs.fetch("INSERT INTO schema_version VALUES (42, 'flyway')")
        before = await snapshot(theirs)
        assert "not a quizbot database" in await refused(url)
        assert await snapshot(theirs) == before


async def test_postgres_errors_name_the_database_without_its_password() -> None:
    server = require()
    async with fresh_database() as url:
        parts = urlsplit(url)
        host = parts.netloc.rsplit("@", 1)[-1]
        netloc = f"{parts.username or 'postgres'}:s3cret-pw@{host}"
        with_password = urlunsplit(parts._replace(netloc=netloc))
        await PostgresBackend(url).fetch("CREATE TABLE notes(id integer)")
        message = await refused(with_password)
        assert "s3cret-pw" not in message and "***" in message, message
    missing = with_database(server, "quizbot_no_such_database")
    message = await refused(missing)
    assert "does not exist" in message and "quizbot_no_such_database" in message
    unreachable = "postgresql://postgres:s3cret-pw@127.0.0.1:1/quizbot"
    message = await refused(unreachable)
    assert message.startswith("cannot use the database postgresql://postgres:***@127.0.0.1:1/")
    assert "s3cret-pw" not in message


async def test_postgres_an_empty_database_is_adopted_and_marked() -> None:
    async with fresh_database() as url:
        ours = PostgresBackend(url)
        async with ours.opened():
            pass
        assert await ours.fetch("SELECT DISTINCT app FROM schema_version") == [("quizbot",)]
        async with ours.opened():  # and opens again
            pass
