"""Databases for the tests that want a migrated one, made by copying instead of migrating.

Migrating a new database is most of a storage test's set-up: about 1 s of wall time (0.2 s of
the server's CPU) on PostgreSQL, 0.1 s on SQLite. So each test process migrates one template
per store, the first time a test asks, and every such test gets a copy of it:

- SQLite: the files a store leaves in an empty folder after open() and close() (closed and
  checkpointed, so the files are the whole database), copied by name into the test's folder.
  Whatever files the store keeps beside the main one are copied with it; a store that rebuilds
  a missing file would rebuild it there as it does on a fresh file.
- PostgreSQL: `CREATE DATABASE ... TEMPLATE`, from a template of this process's own (nobody
  else connects to it, and PostgreSQL refuses to copy a database others are connected to).

A copy is what opening an empty database would have left, so it stands in for one only where
the test opens a store first. Tests of migrations, or of refusing a database that is not
quizbot's, get an empty one.

DROP DATABASE waits for a checkpoint (seconds on a busy server, once per database), so the
drops are batched on a thread of their own, many at once (concurrent drops share their
checkpoints), and the rest with the template at the process's end.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import tempfile
import threading
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg

from bot.storage import SqliteStorage
from bot.storage.postgres.schema import migrate
from bot.storage.postgres.url import with_database
from tests.storage_contract.pg import require

SQLITE_NAME = "quiz.db"
DROP_BATCH = 16  # databases dropped together; at most about this many wait per process

_lock = threading.Lock()
_sqlite_template: Path | None = None
_pg_template: str | None = None
_pending: list[str] = []
_droppers: list[threading.Thread] = []
_dropping_at_exit: list[str] = []  # the server whose databases are dropped at exit


async def sqlite_copy(folder: Path) -> Path:
    """`folder/quiz.db` (and what the store keeps beside it): a migrated database."""
    global _sqlite_template
    if _sqlite_template is None:
        made = Path(tempfile.mkdtemp(prefix="quizbot-test-template-"))
        atexit.register(shutil.rmtree, made, ignore_errors=True)
        store = SqliteStorage(made / SQLITE_NAME)
        await store.open()
        await store.close()
        _sqlite_template = made
    return _copy_files(_sqlite_template, folder)


def _copy_files(template: Path, folder: Path) -> Path:
    # a millisecond's work: done in the loop, as the store's own open() would block it longer
    folder.mkdir(parents=True, exist_ok=True)
    for source in template.iterdir():
        if not source.name.endswith("-shm"):  # shared memory of open connections only
            shutil.copyfile(source, folder / source.name)
    return folder / SQLITE_NAME


async def _admin(server: str, sql: str) -> None:
    """One statement on a connection to the server's own database."""
    admin = await asyncpg.connect(server, timeout=10)
    try:
        await admin.execute(sql)
    finally:
        await admin.close()


async def _template(server: str) -> str:
    global _pg_template
    if _pg_template is None:
        name = f"tmpl_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        await _admin(server, f'CREATE DATABASE "{name}"')
        _drop_at_exit(server)
        try:
            db = await asyncpg.connect(with_database(server, name), timeout=10)
            try:
                await migrate(db, "the tests' template database")
            finally:
                await db.close()
        except BaseException:
            _drop_later(server, name)
            raise
        _pg_template = name
    return _pg_template


@asynccontextmanager
async def postgres_database(migrated: bool, prefix: str = "t") -> AsyncIterator[str]:
    """The URL of a database of its own on the test server (skipping the test without one):
    a copy of the migrated template, or empty. Dropped later, whatever is still connected."""
    server = require()
    source = f' TEMPLATE "{await _template(server)}"' if migrated else ""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    await _admin(server, f'CREATE DATABASE "{name}"{source}')
    try:
        yield with_database(server, name)
    finally:
        _drop_later(server, name)


async def _drop(server: str, names: list[str]) -> None:
    await asyncio.gather(*(
        _admin(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)') for name in names))


def _drop_later(server: str, name: str) -> None:
    _drop_at_exit(server)
    with _lock:
        _pending.append(name)
        if len(_pending) < DROP_BATCH:
            return
        batch = _pending[:]
        _pending.clear()
        _droppers[:] = [t for t in _droppers if t.is_alive()]
        dropper = threading.Thread(target=asyncio.run, args=(_drop(server, batch),),
                                   name="drop-test-databases")
        _droppers.append(dropper)
    dropper.start()


def _drop_at_exit(server: str) -> None:
    """At the process's end: the databases still waiting, and the template."""
    if _dropping_at_exit:
        return
    _dropping_at_exit.append(server)

    def drop_the_rest() -> None:
        for dropper in _droppers:
            dropper.join()
        names = [*_pending, *([_pg_template] if _pg_template else [])]
        if names:
            asyncio.run(_drop(server, names))

    atexit.register(drop_the_rest)
