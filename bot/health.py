"""`quizbot health`: is the running bot alive? For a container HEALTHCHECK or a probe.

The running process touches a heartbeat file beside the database (a SQLite file; for PostgreSQL
in the temporary directory of its own machine) after each scheduler round
that reached the database, naming the platforms still connected; `quizbot health` checks the
database is ours and readable and that the heartbeat is fresh. (A platform connection that is
gone for good ends the process, so a fresh heartbeat also means connected platforms.)
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import tempfile
import time
from pathlib import Path

from bot.storage.postgres.url import DatabaseUrl

FRESH = 90.0  # seconds; the scheduler beats every few seconds


def heartbeat_path(database: Path | DatabaseUrl) -> Path:
    if isinstance(database, DatabaseUrl):
        # no file beside a PostgreSQL database: the heartbeat stays on this machine (this
        # container), named after the database
        digest = hashlib.sha256(database.get_secret_value().encode()).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / f"quizbot-{digest}.alive"
    return database.with_name(database.name + ".alive")


def beat(database: Path | DatabaseUrl, platforms: list[str]) -> None:
    """Record that the bot is alive (atomically: a reader never sees half a file)."""
    path = heartbeat_path(database)
    # per process: processes sharing a database on one machine would move each other's file
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"pid": os.getpid(), "at": time.time(), "platforms": platforms}))
    tmp.replace(path)


def check(
    database: Path | DatabaseUrl, *, running: bool = True, now: float | None = None
) -> str | None:
    """None when healthy, else one line saying what is wrong."""
    problem = _check_database(database)
    if problem is not None or not running:
        return problem
    try:
        state = json.loads(heartbeat_path(database).read_text())
    except (OSError, ValueError):
        return "the bot is not running (no heartbeat)"
    age = (now or time.time()) - float(state.get("at", 0))
    if age > FRESH:
        return f"no heartbeat for {age:.0f} s"
    return None


def _check_database(database: Path | DatabaseUrl) -> str | None:
    from bot.storage.sqlite import APPLICATION_ID

    if isinstance(database, DatabaseUrl):
        from bot.storage.postgres.storage import check_database

        return asyncio.run(check_database(database.get_secret_value()))
    if not database.is_file():
        return f"no database at {database}"
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5) as db:
            app_id = db.execute("PRAGMA application_id").fetchone()[0]
    except sqlite3.Error as exc:
        return f"cannot read the database {database}: {exc}"
    if app_id != APPLICATION_ID:
        return f"{database} is not a quizbot database"
    return None
