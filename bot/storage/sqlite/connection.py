"""Opening a database file: durability settings, and refusing a file that is not ours.

Every connection is a plain `sqlite3.Connection` in autocommit mode (`isolation_level=None`):
transactions are explicit (`BEGIN IMMEDIATE … COMMIT` on the writer), so nothing is ever held
open by the driver behind our back.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bot.core.ports import StorageError
from bot.storage.sqlite.migrations import MIGRATIONS

APPLICATION_ID = 0x5155495A  # "QUIZ": marks the file as quizbot's (PRAGMA application_id)

PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=FULL",  # an acknowledged answer survives power loss, not just a crash
    "PRAGMA foreign_keys=ON",
    "PRAGMA busy_timeout=10000",  # another process (a second bot) may hold the write lock
)
READ_PRAGMAS = PRAGMAS[1:]  # a reader never changes the journal mode


def connect(path: Path, pragmas: tuple[str, ...]) -> sqlite3.Connection:
    """A connection for the calling thread (sqlite3 refuses use from any other)."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        for pragma in pragmas:
            db.execute(pragma)
    except BaseException:
        db.close()
        raise
    return db


def check_ours(db: sqlite3.Connection, path: Path) -> None:
    """Refuse a file some other program owns, or one a newer quizbot wrote: never add tables
    to it or change its journal mode. Runs before any pragma that writes."""

    def value(sql: str) -> int:
        row = db.execute(sql).fetchone()
        return int(row[0]) if row else 0

    app_id = value("PRAGMA application_id")
    version = value("PRAGMA user_version")
    tables = value("SELECT count(*) FROM sqlite_master")
    ours = app_id == APPLICATION_ID or (
        # created before the mark existed: our tables at a version we know of
        app_id == 0 and version > 0 and value(
            "SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN "
            "('posts', 'answers', 'persons')"
        ) == 3
    )
    if not ours and (app_id != 0 or tables):
        raise StorageError(
            f"{path} is not a quizbot database (it holds another program's data); "
            "set QUIZBOT_DATABASE to another file"
        )
    if version > len(MIGRATIONS):
        raise StorageError(
            f"{path} was written by a newer quizbot (schema {version}; this version "
            f"knows up to {len(MIGRATIONS)}): upgrade quizbot or use a backup"
        )


def unusable(path: Path, exc: BaseException) -> StorageError:
    """One line naming the file and the reason, for an OS or SQLite error while opening."""
    text = str(exc) or type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror
    return StorageError(f"cannot use the database {path}: {text}")
