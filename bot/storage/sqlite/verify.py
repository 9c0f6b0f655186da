"""Looking at a SQLite file without writing to it: is it a quizbot database, of a schema this
quizbot reads, intact, holding every table and column its schema version has, and how many
rows it holds. For `db copy` sources, `db backup` and `db restore`, which must never create,
migrate or change a file they were only shown."""

from __future__ import annotations

import functools
import json
import sqlite3
from pathlib import Path

from bot.core.ports import StorageError
from bot.storage.backup_files import Schema, lacking
from bot.storage.sqlite import aggregates_file
from bot.storage.sqlite.connection import APPLICATION_ID
from bot.storage.sqlite.migrations import MIGRATIONS, split_sql

OUR_TABLES = frozenset({"posts", "answers", "persons"})


def open_read_only(path: Path) -> sqlite3.Connection:
    """`mode=ro`: a missing file is an error instead of a new empty database."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                           isolation_level=None, timeout=10)


def schema_of(db: sqlite3.Connection, where: Path | str) -> int:
    """The schema version of a quizbot database; StorageError (one line naming `where`) for
    another program's file, an empty one, or one a newer quizbot wrote."""
    try:
        app_id = int(db.execute("PRAGMA application_id").fetchone()[0])
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        tables = {str(r[0]) for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        raise StorageError(f"{where} is not a quizbot database ({exc})") from None
    # files from before the mark existed: our tables at a version we know of
    ours = app_id == APPLICATION_ID or (app_id == 0 and version > 0 and OUR_TABLES <= tables)
    if not ours or version == 0:
        raise StorageError(f"{where} is not a quizbot database")
    if version > len(MIGRATIONS):
        raise StorageError(
            f"{where} was written by a newer quizbot (schema {version}; this version reads "
            f"up to {len(MIGRATIONS)})"
        )
    return version


def quizbot_file(path: Path) -> int:
    """The schema version of the quizbot database at `path`, read without writing;
    StorageError if there is none there (nothing is created)."""
    if not path.exists():
        raise StorageError(f"there is no database at {path}")
    if not path.is_file():
        raise StorageError(f"{path} is not a file")
    try:
        db = open_read_only(path)
    except sqlite3.Error as exc:
        raise StorageError(f"cannot read {path}: {exc}") from None
    try:
        return schema_of(db, path)
    finally:
        db.close()


def integrity_problem(db: sqlite3.Connection) -> str | None:
    """SQLite's own check of every page and index; None when it finds nothing."""
    try:
        found = [str(r[0]) for r in db.execute("PRAGMA integrity_check(5)")]
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return None if found == ["ok"] else "; ".join(found)


def row_counts(db: sqlite3.Connection) -> dict[str, int]:
    """Rows in each of the database's tables (every row is read: a damaged page fails here)."""
    names = [str(r[0]) for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " ORDER BY name")]
    return {name: int(db.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0])
            for name in names}



def schema_problem(db: sqlite3.Connection, version: int) -> str | None:
    """What the database lacks of the schema its version stands for (tables, columns, indexes
    and triggers the migrations up to `version` create), in one line; None when nothing.
    Tables or columns beyond those are not a problem."""
    want, have = expected_schema(version), _schema(db)
    expected_others = _others(_template(version))
    if not set(want) & set(have) & set(aggregates_file.DERIVED):  # kept apart: not here
        want = {t: c for t, c in want.items() if t not in aggregates_file.DERIVED}
        derived = {str(r[0]) for r in _template(version).execute(
            "SELECT name FROM sqlite_master WHERE tbl_name IN (SELECT value FROM json_each(?))",
            (json.dumps(aggregates_file.DERIVED),))}
        expected_others = {(kind, name) for kind, name in expected_others if name not in derived}
    parts = lacking(want, have)
    others = sorted(expected_others - _others(db))
    if others:
        parts.append(", ".join(f"{kind} {name}" for kind, name in others))
    return "; ".join(parts) or None


@functools.cache
def _template(version: int) -> sqlite3.Connection:
    """An empty database made by the migrations themselves, up to `version`."""
    db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    for script in MIGRATIONS[:version]:
        for statement in split_sql(script):
            db.execute(statement)
    return db


def expected_schema(version: int) -> Schema:
    """The tables and columns the migrations up to `version` create."""
    return _schema(_template(version))


def _schema(db: sqlite3.Connection) -> Schema:
    tables = [str(r[0]) for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    return {t: frozenset(str(r[0]) for r in db.execute(
        "SELECT name FROM pragma_table_info(?)", (t,))) for t in tables}


def _others(db: sqlite3.Connection) -> set[tuple[str, str]]:
    """Named indexes and triggers (a missing unique index changes what an upsert does)."""
    return {(str(kind), str(name)) for kind, name in db.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('index', 'trigger')"
        " AND name NOT LIKE 'sqlite_%'")}
