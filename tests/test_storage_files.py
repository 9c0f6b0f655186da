"""The database is ours or refused: one clear error, the file untouched, nothing left running."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import pytest

from bot.core.ports import StorageError
from bot.storage import SqliteStorage
from bot.storage.sqlite import APPLICATION_ID
from bot.storage.sqlite.migrations import MIGRATIONS


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def refused(path: Path) -> str:
    before = set(threading.enumerate())
    store = SqliteStorage(path)
    with pytest.raises(StorageError) as info:
        await store.open()
    for thread in set(threading.enumerate()) - before:
        thread.join(timeout=10)  # a connection's thread ends once it is closed
        assert not thread.is_alive(), "a connection thread was left running"
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    return message


async def test_a_new_file_is_marked_as_ours(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    async with SqliteStorage(path):
        pass
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    async with SqliteStorage(path):  # and opens again
        pass


async def test_another_programs_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "theirs.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT)")
        db.execute("INSERT INTO notes(text) VALUES ('keep me')")
    before = digest(path)
    assert "not a quizbot database" in await refused(path)
    assert digest(path) == before
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


async def test_a_database_from_a_newer_quizbot_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    async with SqliteStorage(path):
        pass
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version={len(MIGRATIONS) + 1}")
    before = digest(path)
    assert "newer quizbot" in await refused(path)
    assert digest(path) == before


async def test_a_database_from_before_the_mark_is_adopted(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    async with SqliteStorage(path):
        pass
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA application_id=0")
    async with SqliteStorage(path):
        pass
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


@pytest.mark.parametrize("kind", ["text file", "directory", "under a file"])
async def test_an_unusable_path_is_one_line_and_leaves_nothing_running(
    tmp_path: Path, kind: str
) -> None:
    if kind == "text file":
        path = tmp_path / "notes.db"
        path.write_text("these are my notes, not a database\n" * 10)
        before = digest(path)
        await refused(path)
        assert digest(path) == before
    elif kind == "directory":
        path = tmp_path / "dir.db"
        path.mkdir()
        await refused(path)
    else:
        (tmp_path / "file").write_text("x")
        await refused(tmp_path / "file" / "q.db")


async def test_an_open_cancelled_midway_stops_its_threads(tmp_path: Path) -> None:
    """A caller that gives up on open() (a timeout, a shutdown) must not leave the connection
    threads serving, nor block the event loop waiting for them."""
    import asyncio

    before = set(threading.enumerate())
    opening = asyncio.ensure_future(SqliteStorage(tmp_path / "q.db").open())
    await asyncio.sleep(0)  # its threads are starting
    opening.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(opening, 10)
    for thread in set(threading.enumerate()) - before:
        thread.join(timeout=10)
        assert not thread.is_alive(), f"{thread.name} left running"
