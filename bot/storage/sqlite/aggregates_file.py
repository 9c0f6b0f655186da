"""The aggregates' own file: the boards' tables and every other table derived from the answers
(`<database>-aggregates`, beside the answers' file).

Why a second file: SQLite has one write lock per file. With the aggregates in the answers'
file, every chunk the materializer applied held that lock, and an answer arriving meanwhile
waited for the chunk: the steady p99 was the chunk's length. In a file of their own (its own
WAL and lock, synchronous=NORMAL) they are written by their own connection and thread
(aggregator.py) and the answers' writer never waits for them.

Every connection ATTACHes this file as `agg`. SQLite resolves an unqualified table name in
`main` first, then in the attached files, and each table is in one of the two files only, so
every query keeps its plain names. The answers' writer and the reader attach it read-only:
BEGIN IMMEDIATE takes the write lock of every attached file that is writable.

What is derived can be derived again, so this file is neither migrated apart nor backed up:
- missing, not ours, unreadable or at another schema version: made again from the schema the
  migrations give (run on an in-memory database) and filled again from the answers (the
  materializer from position 0);
- an answers' file from before the split (or a new one: the migrations create every table
  there) still holds the tables: they are moved here with their rows, then dropped there;
- a write of both files (a person's deletion, a chat's move, a refit...) is atomic in each
  file, not across the two (SQLite in WAL mode): it marks this file dirty first, in a
  transaction of its own committed with synchronous=FULL, and clears the mark in its own
  transaction, which the answers' file commits first. A crash in between leaves the mark, and
  the next open rebuilds;
- a position past the newest answer (the answers' file put back from an older copy) rebuilds.
"""

from __future__ import annotations

import functools
import logging
import sqlite3
from pathlib import Path

from bot.storage.sqlite.migrations import MIGRATIONS, migrate, split_sql

log = logging.getLogger(__name__)
Db = sqlite3.Connection

SCHEMA = "agg"  # the name every connection attaches the file as
APPLICATION_ID = 0x51414747  # "QAGG": marks the file as quizbot's aggregates
# the tables the migrations create that the materializer derives from the answers
DERIVED = (
    "materialized", "scores", "totals", "week_scores", "week_window", "rank_counts",
    "chat_figures", "chat_day_figures", "item_firsts", "item_options", "item_groups",
    "item_responses", "day_runs", "cards", "card_days", "cards_pending",
    "difficulty_questions", "difficulty_people", "difficulty_firsts", "difficulty_pending",
)
# the file's own tables: each person's run of right answers (in the answers' file they were
# two columns of the person's row, which the materializer cannot write without its lock), and
# the mark of a write of both files under way
OWN = (
    "CREATE TABLE IF NOT EXISTS streaks (person_key TEXT PRIMARY KEY,"
    " current_streak INTEGER NOT NULL, best_streak INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS aggregate_state (id INTEGER PRIMARY KEY CHECK (id = 1),"
    " dirty INTEGER NOT NULL)",
)
TABLES = (*DERIVED, "streaks", "aggregate_state")


def path_of(database: Path) -> Path:
    return database.with_name(database.name + "-aggregates")


def remove(database: Path) -> None:
    """Delete the aggregates of `database` (they are rebuilt at its next open)."""
    agg = path_of(database)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{agg}{suffix}").unlink(missing_ok=True)


def attach(db: Db, database: Path, read_only: bool) -> None:
    """Attach the aggregates of `database` to `db` (opened with uri=True)."""
    uri = path_of(database).resolve().as_uri() + ("?mode=ro" if read_only else "")
    db.execute(f"ATTACH DATABASE ? AS {SCHEMA}", (uri,))


def attach_if_apart(db: Db, database: Path, read_only: bool) -> None:
    """For a connection of a tool (db copy): the aggregates attached where the file keeps
    them apart (a connection opened without uri=True attaches read-write)."""
    agg = path_of(database)
    if apart(database) and agg.is_file():
        if read_only:
            attach(db, database, read_only=True)
        else:
            db.execute(f"ATTACH DATABASE ? AS {SCHEMA}", (str(agg),))


def connect(database: Path) -> Db:
    """A connection to the answers' file that may attach the aggregates by URI."""
    return sqlite3.connect(database.resolve().as_uri(), uri=True, isolation_level=None)


def apart(database: Path) -> bool:
    """Whether the file's aggregates were moved to a file of their own (read without
    writing; False for a file that is not there or not readable: opening says why)."""
    if not database.is_file():
        return False
    try:
        db = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True,
                             isolation_level=None, timeout=10)
        try:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            return version > 0 and not _held(db, "main")
        finally:
            db.close()
    except sqlite3.Error:
        return False


def streaks_apart(db: Db) -> bool:
    """Whether the streaks are in the aggregates' file (else in the persons' rows, where a
    file that keeps its aggregates inline has them)."""
    return db.execute(
        f"SELECT 1 FROM pragma_table_list WHERE schema = '{SCHEMA}' AND name = 'streaks'"
    ).fetchone() is not None


STREAKS_FROM_PERSONS = (
    "INSERT INTO {schema}.streaks(person_key, current_streak, best_streak)"
    " SELECT key, current_streak, best_streak FROM main.persons"
    " WHERE current_streak > 0 OR best_streak > 0")


@functools.cache
def _template(version: int) -> Db:
    """An empty database made by the migrations up to `version`: the derived tables' schema."""
    db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    for script in MIGRATIONS[:version]:
        for statement in split_sql(script):
            db.execute(statement)
    return db


def _schema(source: Db, schema: str = "main") -> list[str]:
    """The CREATE statements of the derived tables and their indexes in `source`."""
    marks = ", ".join("?" for _ in DERIVED)
    return [str(r[0]) for r in source.execute(
        f"SELECT sql FROM {schema}.sqlite_master WHERE tbl_name IN ({marks}) AND sql IS NOT NULL"
        " ORDER BY type = 'index', rowid", DERIVED)]


def _held(db: Db, schema: str) -> list[str]:
    """Which of the derived tables the file `schema` holds."""
    marks = ", ".join("?" for _ in DERIVED)
    return [str(r[0]) for r in db.execute(
        f"SELECT name FROM {schema}.sqlite_master WHERE type = 'table' AND name IN ({marks})",
        DERIVED)]


def _create(database: Path, version: int) -> None:
    """A new aggregates file at the schema of `version`, with the rows the migrations put in
    the derived tables (the materializer's position 0), and nothing applied."""
    remove(database)
    template = _template(version)
    db = sqlite3.connect(path_of(database), isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("BEGIN IMMEDIATE")
        for statement in _schema(template):
            db.execute(statement)
        for table in _held(template, "main"):
            rows = template.execute(f"SELECT * FROM {table}").fetchall()
            if rows:
                marks = ", ".join("?" for _ in rows[0])
                db.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
        for statement in OWN:
            db.execute(statement)
        db.execute("INSERT INTO aggregate_state(id, dirty) VALUES (1, 0)")
        db.execute(f"PRAGMA application_id={APPLICATION_ID}")
        db.execute(f"PRAGMA user_version={version}")
        db.execute("COMMIT")
    finally:
        db.close()


def _unusable(agg: Path, version: int) -> str | None:
    """Why the aggregates file must be made again (None: it is ours, at `version`)."""
    if not agg.is_file():
        return "missing"
    try:
        db = sqlite3.connect(f"{agg.resolve().as_uri()}?mode=ro", uri=True,
                             isolation_level=None, timeout=10)
        try:
            if int(db.execute("PRAGMA application_id").fetchone()[0]) != APPLICATION_ID:
                return "not quizbot's aggregates"
            if int(db.execute("PRAGMA user_version").fetchone()[0]) != version:
                return "of another schema version"
            db.execute("SELECT dirty FROM aggregate_state").fetchone()
        finally:
            db.close()
    except sqlite3.Error as exc:
        return f"unreadable ({exc})"
    return None


def _stale(db: Db) -> str | None:
    """Why the attached aggregates do not match the answers (None: they do)."""
    if db.execute(f"SELECT dirty FROM {SCHEMA}.aggregate_state").fetchone() != (0,):
        return "left by a write of both files that did not finish"
    position = db.execute(
        f"SELECT position FROM {SCHEMA}.materialized WHERE name = 'scores'").fetchone()
    newest = db.execute("SELECT COALESCE(max(id), 0) FROM main.answers").fetchone()[0]
    if position is None or int(position[0]) > int(newest):
        return "ahead of the answers (the database was put back from a copy)"
    return None


def _clear(db: Db, version: int) -> None:
    """Empty the attached aggregates in place (another process may have the file open), back
    to what the migrations put there: everything is applied again from position 0."""
    db.execute("BEGIN IMMEDIATE")
    try:
        if _stale(db) is None:  # another process rebuilt it meanwhile
            db.execute("ROLLBACK")
            return
        template = _template(version)
        for table in (*_held(db, SCHEMA), "streaks"):
            db.execute(f"DELETE FROM {SCHEMA}.{table}")
        for table in _held(template, "main"):
            rows = template.execute(f"SELECT * FROM {table}").fetchall()
            if rows:
                marks = ", ".join("?" for _ in rows[0])
                db.executemany(f"INSERT INTO {SCHEMA}.{table} VALUES ({marks})", rows)
        db.execute(CLEAR_DIRTY)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def open_aggregates(db: Db, database: Path, application_id: int) -> None:
    """On the aggregates' own connection (`connect`), once the answers' file is checked to be
    ours: bring both files to the newest schema, the aggregates attached read-write, rebuilt
    or moved out of the answers' file as the module docstring says."""
    agg = path_of(database)
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    split = version > 0 and not _held(db, "main")
    if split:  # the tables live in the aggregates file: it must be at the same version
        why = _unusable(agg, version)
        if why is not None:
            log.warning("the aggregates file %s is %s: built again from the answers", agg, why)
            _create(database, version)
    attach(db, database, read_only=False)
    db.execute(f"PRAGMA {SCHEMA}.journal_mode=WAL")
    db.execute(f"PRAGMA {SCHEMA}.synchronous=NORMAL")  # derived: a lost commit is redone
    if split and (why := _stale(db)) is not None:
        log.warning("the aggregates file %s is %s: built again from the answers", agg, why)
        _clear(db, version)
    migrate(db, application_id)  # a migration of a derived table reaches it where it is
    if _held(db, "main"):
        _move(db)
    for statement in OWN:
        db.execute(statement.replace("EXISTS ", f"EXISTS {SCHEMA}.", 1))
    db.execute(f"PRAGMA {SCHEMA}.application_id={APPLICATION_ID}")
    db.execute(f"PRAGMA {SCHEMA}.user_version={len(MIGRATIONS)}")


def _move(db: Db) -> None:
    """Move the derived tables (rows and indexes) from the answers' file to the aggregates'
    file, the persons' streaks into their own table; then drop them from the answers' file.
    A crash between the two transactions leaves them in both: the next open moves again."""
    tables = _held(db, "main")
    db.execute("BEGIN IMMEDIATE")
    try:
        for table in tables:
            db.execute(f"DROP TABLE IF EXISTS {SCHEMA}.{table}")
        for statement in _schema(db):
            db.execute(_qualified(statement))
        for table in tables:
            db.execute(f"INSERT INTO {SCHEMA}.{table} SELECT * FROM main.{table}")
        db.execute(f"DROP TABLE IF EXISTS {SCHEMA}.streaks")
        db.execute(OWN[0].replace("EXISTS ", f"EXISTS {SCHEMA}.", 1))
        db.execute(STREAKS_FROM_PERSONS.format(schema=SCHEMA))
        db.execute(OWN[1].replace("EXISTS ", f"EXISTS {SCHEMA}.", 1))
        db.execute(f"INSERT OR REPLACE INTO {SCHEMA}.aggregate_state(id, dirty) VALUES (1, 0)")
        db.execute("COMMIT")
        db.execute("BEGIN IMMEDIATE")
        for table in tables:
            db.execute(f"DROP TABLE main.{table}")
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    log.info("the aggregates moved to a file of their own (%d tables)", len(tables))


def _qualified(statement: str) -> str:
    """A CREATE TABLE or CREATE [UNIQUE] INDEX statement that creates in the attached file."""
    for head in ("CREATE TABLE ", "CREATE UNIQUE INDEX ", "CREATE INDEX "):
        if statement.startswith(head):
            return f"{head}{SCHEMA}.{statement[len(head):]}"
    raise ValueError(f"not a CREATE TABLE or INDEX: {statement[:60]!r}")


def mark_dirty(db: Db) -> None:
    """Before a write of both files: the mark, durable before the write begins."""
    db.execute(f"PRAGMA {SCHEMA}.synchronous=FULL")
    try:
        db.execute(f"UPDATE {SCHEMA}.aggregate_state SET dirty = 1")
    finally:
        db.execute(f"PRAGMA {SCHEMA}.synchronous=NORMAL")


CLEAR_DIRTY = f"UPDATE {SCHEMA}.aggregate_state SET dirty = 0"
