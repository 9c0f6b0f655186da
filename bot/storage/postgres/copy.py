"""`quizbot db copy SRC DST`: move a community between SQLite and PostgreSQL (either way).

What is copied are the rows the community wrote: people, chats, runs, posts and their platform
references, answers, schedules and daily claims, every id kept. The boards' aggregates and
streaks are derived from the answers, so the destination's materializer builds them again
from the copied answers when it is opened at the end (its position starts at zero).

- Each table is copied in key order (keys compared by code point on both backends), in
  batches; each batch and the position it reached are written to the destination in one
  transaction (table `copy_progress`), so an interrupted copy (kill -9, a lost connection)
  continues where it stopped when run again.
- A destination that holds a community already is refused, unless `force`: then it is
  emptied first (its quizbot tables dropped and created again). A destination that another
  program uses, or a newer quizbot wrote, is refused as always.
- Then the destination builds its boards from the copied answers, and every table's rows
  are counted on both sides; any difference is an error. The progress record goes only after
  both, so a copy killed while building or verifying is finished by running it again.
- A source that does not exist, or is not a quizbot database (another program's, an empty
  file or database), is refused before anything is written: a SQLite source is looked at
  read-only (`mode=ro`), a PostgreSQL one by reading its catalog. A SQLite source is then
  only read, unless it is of an older schema or its boards miss answers: then it is opened
  with its Storage first, as any quizbot start would (a PostgreSQL source always is). The
  destination is opened (and so created or migrated) with its own Storage.

Stop the bots before copying: rows written to the source during a copy may be missed. A
`snapshot` copy (what `db backup` does for PostgreSQL without pg_dump) reads the source in one
REPEATABLE READ transaction instead, so it is consistent while a bot writes; it compares the
copied tables only, since a live source's boards may lag behind its answers.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import asyncpg

from bot.core.ports import StorageError
from bot.i18n import translator
from bot.storage.postgres.schema import version_of
from bot.storage.postgres.url import DatabaseUrl, is_postgres_url, redact
from bot.storage.sqlite.verify import open_read_only, quizbot_file

log = logging.getLogger(__name__)
EN = translator("en")
LIVE_CHECKS = 4  # looks at a PostgreSQL source's other sessions, LIVE_WAIT s more apart each
LIVE_WAIT = 0.1  # the operator's English, plurals through the catalog

BATCH = 5000
PROGRESS = "copy_progress"


@dataclass(frozen=True)
class Table:
    name: str
    key: tuple[str, ...]
    columns: tuple[str, ...]
    times: tuple[str, ...] = ()  # timestamps (SQLite: unix ms)
    dates: tuple[str, ...] = ()  # dates (SQLite: YYYY-MM-DD)
    lists: tuple[str, ...] = ()  # arrays (SQLite: JSON)
    flags: tuple[str, ...] = ()  # booleans (SQLite: 0/1)


# in the order foreign keys need them
TABLES = (
    Table("persons", ("key",), ("key", "name", "locale")),
    Table("chats", ("key",), ("key", "title", "locale", "platform_locale")),
    Table("runs", ("id",), ("id", "person_key", "chat_key", "quiz_id", "questions", "locale",
                            "started_at", "finished_at"),
          times=("started_at", "finished_at"), lists=("questions",)),
    Table("posts", ("id",), ("id", "chat_key", "quiz_id", "question_id", "option_order",
                             "locale", "kind", "run_id", "owner_key", "created_at",
                             "closes_at", "closed_at", "summary_posted_at"),
          times=("created_at", "closes_at", "closed_at", "summary_posted_at"),
          lists=("option_order",)),
    Table("post_refs", ("ref",), ("ref", "post_id")),
    Table("answers", ("id",), ("id", "post_id", "person_key", "option", "correct",
                               "answered_at", "elapsed_ms", "chat_key", "quiz_id",
                               "question_id", "daily_date"),
          times=("answered_at",), dates=("daily_date",), flags=("correct",)),
    Table("schedules", ("chat_key",), ("chat_key", "local_time", "tz", "selector",
                                       "open_minutes", "updated_at", "updated_by"),
          times=("updated_at",)),
    Table("daily_posts", ("chat_key", "local_date"), ("chat_key", "local_date", "post_id",
                                                      "claimed_at", "published_at"),
          times=("claimed_at", "published_at"), dates=("local_date",)),
    Table("chat_settings", ("chat_key",), ("chat_key", "question_seconds", "mode",
                                           "updated_at", "updated_by", "chart", "admins_only",
                                           "peer_threshold", "peer_discussion"),
          times=("updated_at",), flags=("chart", "admins_only")),
    Table("rounds", ("id",), ("id", "chat_key", "selector", "total", "mode", "locale",
                              "started_at", "finished_at", "summary_posted_at"),
          times=("started_at", "finished_at", "summary_posted_at")),
    Table("round_posts", ("round_id", "step"), ("round_id", "step", "post_id")),
    Table("reminders", ("person_key",), ("person_key", "local_time", "tz", "updated_at"),
          times=("updated_at",)),
    Table("reminder_days", ("person_key", "local_date"), ("person_key", "local_date",
                                                          "claimed_at", "sent_at"),
          times=("claimed_at", "sent_at"), dates=("local_date",)),
    Table("problem_reports", ("id",), ("id", "quiz_id", "question_id", "person_key",
                                       "person_name", "chat_key", "text", "created_at",
                                       "updated_at", "resolved_at", "resolution"),
          times=("created_at", "updated_at", "resolved_at")),
    Table("drafts", ("author_key",), ("author_key", "locale", "title", "created_at",
                                      "photo"),
          times=("created_at",)),
    Table("draft_questions", ("author_key", "number"), ("author_key", "number", "question",
                                                        "ref", "added_at"),
          times=("added_at",)),
    Table("authored_packs", ("quiz_id",), ("quiz_id", "author_key", "pack", "published_at",
                                           "withdrawn_at"),
          times=("published_at", "withdrawn_at")),
    Table("authored_files", ("quiz_id", "path"), ("quiz_id", "path", "data")),
    Table("dashboard_access", ("chat_key",), ("chat_key", "generation")),
    Table("live_sessions", ("id",), ("id", "chat_key", "kind", "host_key", "selector", "total",
                                     "seconds", "speed", "teams", "locale", "state",
                                     "closes_at", "paused_ms", "version", "started_at",
                                     "finished_at", "team_choice"),
          times=("closes_at", "started_at", "finished_at"), flags=("speed", "team_choice")),
    Table("live_steps", ("session_id", "step"), ("session_id", "step", "post_id", "skipped"),
          flags=("skipped",)),
    Table("live_players", ("session_id", "person_key"), ("session_id", "person_key", "name",
                                                         "team", "joined_at"),
          times=("joined_at",)),
    Table("live_revotes", ("post_id", "person_key"), ("post_id", "person_key", "option",
                                                      "correct", "answered_at"),
          times=("answered_at",), flags=("correct",)),
    # the platforms' file ids of uploaded question cards: valid for the same bot on any
    # database, so a moved community does not upload every card again
    Table("uploads", ("key",), ("key", "ref", "uploaded_at"), times=("uploaded_at",)),
)
# derived from the answers, rebuilt by the destination: counted to check, never copied
REBUILT = ("totals", "scores")
# tables a copy leaves behind on purpose: derived data, bookkeeping, short-lived claims
NOT_COPIED = {
    "scores", "totals", "week_scores", "week_window", "rank_counts", "streaks",
    "chat_figures", "chat_day_figures", "item_firsts", "item_options", "item_groups",
    "day_runs", "cards", "card_days", "cards_pending",
    "materialized", "schema_version", PROGRESS, "leases", "sqlite_sequence",
    "handled_commands", "delivery_steps",
}


@dataclass
class Progress:
    last: tuple[Any, ...] | None = None  # the last key copied
    copied: int = 0
    done: bool = False


@dataclass
class Report:
    source: str
    destination: str
    counts: dict[str, tuple[int, int]]  # table -> (source rows, destination rows)
    resumed: bool


class CopyError(StorageError):
    """The copy cannot start or did not verify: one line saying why."""


def describe(database: str | Path | DatabaseUrl) -> str:
    if isinstance(database, DatabaseUrl):
        return str(database)
    if isinstance(database, str) and is_postgres_url(database):
        return redact(database)
    return str(Path(database).resolve())


# the two sides ----------------------------------------------------------------------------
class Side:
    """One database, read or written row by row in key order, rows as plain Python values
    (datetimes, dates, lists, bools)."""

    where: str

    async def connect(self) -> None: ...
    async def close(self) -> None: ...
    async def count(self, table: str) -> int: raise NotImplementedError
    async def tables(self) -> set[str]: raise NotImplementedError
    async def batch(self, table: Table, after: tuple[Any, ...] | None,
                    limit: int) -> list[tuple[Any, ...]]: raise NotImplementedError
    async def write(self, table: Table, rows: list[tuple[Any, ...]],
                    progress: Progress, source: str) -> None: raise NotImplementedError
    async def progress(self) -> tuple[str, dict[str, Progress]] | None: raise NotImplementedError
    async def start_progress(self, source: str) -> None: raise NotImplementedError
    async def finish(self) -> None: raise NotImplementedError
    async def forget_progress(self) -> None: raise NotImplementedError
    async def empty(self) -> None: raise NotImplementedError
    async def in_use(self) -> str | None:
        """Why another process may be writing to this database (None: nothing says so)."""
        raise NotImplementedError


def _key_json(key: tuple[Any, ...]) -> str:
    return json.dumps([v.isoformat() if isinstance(v, date) else v for v in key])


def _key_of(table: Table, text: str) -> tuple[Any, ...]:
    values = json.loads(text)
    return tuple(
        date.fromisoformat(v) if column in table.dates else v
        for column, v in zip(table.key, values, strict=True)
    )


def _ms(value: int | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value / 1000, UTC)


def _to_ms(value: datetime | None) -> int | None:
    return None if value is None else int(value.timestamp() * 1000)


def running_bot(database: Path | DatabaseUrl) -> str | None:
    """A running quizbot's fresh heartbeat for this database (bot/health.py), as words."""
    from bot import health

    now = time.time()
    live = health.fresh(database, now)
    if not live:
        return None
    return (f"a running quizbot (pid {live[0].pid}) uses it: its heartbeat is "
            f"{live[0].age(now):.0f} s old")


class SqliteSide(Side):
    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        self.where = str(path)
        self.read_only = read_only
        self.db: sqlite3.Connection | None = None

    async def in_use(self) -> str | None:
        return running_bot(self.path)

    async def connect(self) -> None:
        if self.read_only:  # a source: never created, never written
            self.db = open_read_only(self.path)
            return
        self.db = sqlite3.connect(self.path, isolation_level=None)
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("PRAGMA busy_timeout=10000")

    async def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

    def _db(self) -> sqlite3.Connection:
        assert self.db is not None
        return self.db

    async def count(self, table: str) -> int:
        return int(self._db().execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    async def tables(self) -> set[str]:
        rows = self._db().execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {str(r[0]) for r in rows}

    async def batch(self, table: Table, after: tuple[Any, ...] | None,
                    limit: int) -> list[tuple[Any, ...]]:
        key = ", ".join(table.key)
        where = ""
        params: list[Any] = []
        if after is not None:
            where = f" WHERE ({key}) > ({', '.join('?' for _ in table.key)})"
            params = [v.isoformat() if isinstance(v, date) else v for v in after]
        rows = self._db().execute(
            f"SELECT {', '.join(table.columns)} FROM {table.name}{where}"
            f" ORDER BY {key} LIMIT ?", (*params, limit),
        ).fetchall()
        convert = self._readers(table)
        return [tuple(f(v) for f, v in zip(convert, row, strict=True)) for row in rows]

    @staticmethod
    def _readers(table: Table) -> list[Callable[[Any], Any]]:
        def one(column: str) -> Callable[[Any], Any]:
            if column in table.times:
                return _ms
            if column in table.dates:
                return lambda v: None if v is None else date.fromisoformat(v)
            if column in table.lists:
                return lambda v: None if v is None else list(json.loads(v))
            if column in table.flags:
                return lambda v: None if v is None else bool(v)
            return lambda v: v
        return [one(c) for c in table.columns]

    @staticmethod
    def _writers(table: Table) -> list[Callable[[Any], Any]]:
        def one(column: str) -> Callable[[Any], Any]:
            if column in table.times:
                return _to_ms
            if column in table.dates:
                return lambda v: None if v is None else v.isoformat()
            if column in table.lists:
                return lambda v: None if v is None else json.dumps(list(v))
            if column in table.flags:
                return lambda v: None if v is None else int(v)
            return lambda v: v
        return [one(c) for c in table.columns]

    async def write(self, table: Table, rows: list[tuple[Any, ...]],
                    progress: Progress, source: str) -> None:
        db = self._db()
        convert = self._writers(table)
        marks = ", ".join("?" for _ in table.columns)
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany(
                f"INSERT INTO {table.name}({', '.join(table.columns)}) VALUES ({marks})",
                [tuple(f(v) for f, v in zip(convert, row, strict=True)) for row in rows],
            )
            db.execute(
                f"INSERT INTO {PROGRESS}(tbl, last_key, copied, done) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(tbl) DO UPDATE SET last_key=excluded.last_key,"
                " copied=excluded.copied, done=excluded.done",
                (table.name, None if progress.last is None else _key_json(progress.last),
                 progress.copied, int(progress.done)),
            )
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    async def progress(self) -> tuple[str, dict[str, Progress]] | None:
        db = self._db()
        if db.execute("SELECT 1 FROM sqlite_master WHERE name=?", (PROGRESS,)).fetchone() is None:
            return None
        source = ""
        found: dict[str, Progress] = {}
        for tbl, last, copied, done in db.execute(
            f"SELECT tbl, last_key, copied, done FROM {PROGRESS}"
        ):
            if tbl == "":
                source = str(last)
                continue
            table = next(t for t in TABLES if t.name == tbl)
            found[tbl] = Progress(None if last is None else _key_of(table, last), copied,
                                  bool(done))
        return source, found

    async def start_progress(self, source: str) -> None:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        db.execute(
            f"CREATE TABLE {PROGRESS} (tbl TEXT PRIMARY KEY, last_key TEXT,"
            " copied INTEGER NOT NULL, done INTEGER NOT NULL)"
        )
        db.execute(f"INSERT INTO {PROGRESS} VALUES ('', ?, 0, 0)", (source,))
        db.execute("COMMIT")

    async def finish(self) -> None:
        """SQLite's ids go on after the largest one by themselves."""

    async def forget_progress(self) -> None:
        self._db().execute(f"DROP TABLE IF EXISTS {PROGRESS}")

    async def empty(self) -> None:
        """Remove the file (it is quizbot's: it opened as ours); the next open creates it."""
        await self.close()
        _remove(self.path)


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


class PostgresSide(Side):
    def __init__(self, url: str, snapshot: bool = False) -> None:
        self.url = url
        self.where = redact(url)
        self.snapshot = snapshot
        self.db: Any = None

    async def connect(self) -> None:
        self.db = await asyncpg.connect(self.url)
        if self.snapshot:  # every read from here on sees the same moment
            await self.db.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")

    async def in_use(self) -> str | None:
        """Other sessions on the database (a bot's pool), checked a few times: one that was
        just closed takes a moment to leave pg_stat_activity. Then a heartbeat on this
        machine."""
        others = 0
        for attempt in range(LIVE_CHECKS):
            others = int(await self.db.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND backend_type = 'client backend'"))
            if not others:
                break
            await asyncio.sleep(LIVE_WAIT * (attempt + 1))
        if others:
            return EN.ngettext("{n} other session is connected to it",
                               "{n} other sessions are connected to it", others)
        return running_bot(DatabaseUrl(self.url))

    async def close(self) -> None:
        if self.db is not None:
            await self.db.close()
            self.db = None

    async def count(self, table: str) -> int:
        return int(await self.db.fetchval(f'SELECT count(*) FROM "{table}"'))

    async def tables(self) -> set[str]:
        rows = await self.db.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        )
        return {str(r[0]) for r in rows}

    async def batch(self, table: Table, after: tuple[Any, ...] | None,
                    limit: int) -> list[tuple[Any, ...]]:
        key = ", ".join(table.key)
        where = ""
        params: list[Any] = []
        if after is not None:
            marks = ", ".join(f"${i}" for i in range(1, len(table.key) + 1))
            where = f" WHERE ({key}) > ({marks})"
            params = list(after)
        rows = await self.db.fetch(
            f"SELECT {', '.join(table.columns)} FROM {table.name}{where}"
            f" ORDER BY {key} LIMIT ${len(params) + 1}", *params, limit,
        )
        return [tuple(list(v) if c in table.lists and v is not None else v
                      for c, v in zip(table.columns, row, strict=True)) for row in rows]

    async def write(self, table: Table, rows: list[tuple[Any, ...]],
                    progress: Progress, source: str) -> None:
        async with self.db.transaction():
            if rows:  # PostgreSQL's COPY: the fastest way in
                await self.db.copy_records_to_table(table.name, records=rows,
                                                    columns=list(table.columns))
            await self.db.execute(
                f"INSERT INTO {PROGRESS}(tbl, last_key, copied, done) VALUES ($1, $2, $3, $4)"
                " ON CONFLICT (tbl) DO UPDATE SET last_key = excluded.last_key,"
                " copied = excluded.copied, done = excluded.done",
                table.name, None if progress.last is None else _key_json(progress.last),
                progress.copied, progress.done,
            )

    async def progress(self) -> tuple[str, dict[str, Progress]] | None:
        exists = await self.db.fetchval(
            "SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1",
            PROGRESS,
        )
        if not exists:
            return None
        source = ""
        found: dict[str, Progress] = {}
        for tbl, last, copied, done in await self.db.fetch(
            f"SELECT tbl, last_key, copied, done FROM {PROGRESS}"
        ):
            if tbl == "":
                source = str(last)
                continue
            table = next(t for t in TABLES if t.name == tbl)
            found[tbl] = Progress(None if last is None else _key_of(table, last), copied,
                                  bool(done))
        return source, found

    async def start_progress(self, source: str) -> None:
        async with self.db.transaction():
            await self.db.execute(
                f"CREATE TABLE {PROGRESS} (tbl text PRIMARY KEY, last_key text,"
                " copied bigint NOT NULL, done boolean NOT NULL)"
            )
            await self.db.execute(f"INSERT INTO {PROGRESS} VALUES ('', $1, 0, false)", source)

    async def finish(self) -> None:
        """Ids go on after the copied ones."""
        async with self.db.transaction():
            for table in ("runs", "posts", "answers", "rounds", "problem_reports"):
                await self.db.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                    f" COALESCE(max(id), 1), max(id) IS NOT NULL) FROM {table}"
                )

    async def forget_progress(self) -> None:
        await self.db.execute(f"DROP TABLE IF EXISTS {PROGRESS}")

    async def empty(self) -> None:
        """Drop every table (the database is quizbot's: it opened as ours); the next open
        creates the schema again."""
        where = self.where
        await version_of(self.db, where)  # still ours
        tables = [r[0] for r in await self.db.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        )]
        if tables:
            await self.db.execute(
                "DROP TABLE " + ", ".join(f'"{t}"' for t in tables) + " CASCADE"
            )
        functions = [r[0] for r in await self.db.fetch(
            "SELECT p.oid::regprocedure::text FROM pg_proc AS p JOIN pg_namespace AS n"
            " ON n.oid = p.pronamespace WHERE n.nspname = current_schema()"
            " AND p.proname LIKE 'quizbot\\_%'"
        )]
        for function in functions:  # the schema's trigger functions
            await self.db.execute(f"DROP FUNCTION IF EXISTS {function} CASCADE")


def side_for(database: str | Path | DatabaseUrl, *, source: bool = False,
             snapshot: bool = False) -> Side:
    """`source`: read only (a SQLite file opened `mode=ro`); `snapshot`: a PostgreSQL source
    read in one REPEATABLE READ transaction."""
    if isinstance(database, DatabaseUrl):
        return PostgresSide(database.get_secret_value(), snapshot)
    if isinstance(database, str) and is_postgres_url(database):
        return PostgresSide(database, snapshot)
    return SqliteSide(Path(database), read_only=source)


# the copy ---------------------------------------------------------------------------------
async def _refuse_not_ours(source: str | Path | DatabaseUrl) -> None:
    """A source that is missing, another program's or empty: refused, nothing written to it
    (a mistyped path must not become an empty database that copies "equal")."""
    side = side_for(source, source=True)
    if isinstance(side, SqliteSide):
        try:
            quizbot_file(side.path)
        except StorageError as exc:
            raise CopyError(f"the source is refused: {exc}; nothing was created or "
                            "copied") from None
        return
    assert isinstance(side, PostgresSide)
    problem = await not_ours(side.url)
    if problem is not None:
        raise CopyError(f"the source is refused: {problem}; nothing was written to it or "
                        "copied")


async def not_ours(url: str) -> str | None:
    """Why a PostgreSQL database is not a quizbot database holding data, found by reading
    its catalog (None: it is one)."""
    from bot.storage.postgres.storage import check_database

    problem = await check_database(url)
    return None if problem is None else problem.split("; set QUIZBOT_DATABASE")[0]


async def in_use(database: str | Path | DatabaseUrl) -> str | None:
    """Why another process may be writing to the database (None: nothing says so)."""
    side = side_for(database, source=True)
    await side.connect()
    try:
        return await side.in_use()
    finally:
        await side.close()


async def _refuse_live(source: str | Path | DatabaseUrl, name: str) -> None:
    reason = await in_use(source)
    if reason is not None:
        raise CopyError(f"the source {name} is being written to ({reason}): stop the bot "
                        "first, or add --live-ok to copy it anyway")


async def _open_and_close(database: str | Path | DatabaseUrl) -> None:
    """Check the database is ours and bring it to the newest schema (its own Storage)."""
    from bot.storage import storage_for

    store = storage_for(database)
    await store.open()
    await store.close()


def _up_to_date(database: str | Path | DatabaseUrl) -> bool:
    """A SQLite source with nothing for its Storage to do (newest schema, every answer in
    the boards): then the copy only reads it, through a read-only connection."""
    from bot.storage.sqlite.migrations import MIGRATIONS

    side = side_for(database, source=True)
    if not isinstance(side, SqliteSide):
        return False
    try:
        db = open_read_only(side.path)
        try:
            if int(db.execute("PRAGMA user_version").fetchone()[0]) != len(MIGRATIONS):
                return False
            top = db.execute("SELECT COALESCE(max(id), 0) FROM answers").fetchone()[0]
            applied = db.execute(
                "SELECT position FROM materialized WHERE name = 'scores'").fetchone()
            return applied is not None and int(applied[0]) >= int(top)
        finally:
            db.close()
    except sqlite3.Error:
        return False


async def _refuse_unknown_rows(side: Side) -> None:
    """A table this copy does not know (a newer feature's) with rows in it would be left
    behind: refuse before anything is written."""
    known = {t.name for t in TABLES} | NOT_COPIED
    unknown = sorted(
        [t for t in await side.tables() - known if await side.count(t)]
    )
    if unknown:
        raise CopyError(
            f"{side.where} holds rows in tables this copy does not move "
            f"({', '.join(unknown)}); nothing was copied"
        )


async def _holds_data(side: Side) -> bool:
    for table in TABLES:
        if await side.count(table.name):
            return True
    return False


PHASES = ("checking", "emptying", "rows", "boards", "verify", "done")


async def copy_database(
    source: str | Path | DatabaseUrl, destination: str | Path | DatabaseUrl, *,
    force: bool = False, batch: int = BATCH, say: Callable[[str], None] = print,
    after_batch: Callable[[str, int], None] | None = None, live_ok: bool = False,
    on_phase: Callable[[str], None] | None = None, snapshot: bool = False,
) -> Report:
    """Copy a community from `source` to `destination` (paths or postgresql:// URLs).
    CopyError (a StorageError: one line) when it must not or cannot: a source another process
    is writing to is refused unless `live_ok` (the copy reads table after table, so answers
    written meanwhile would be missing, or break the verification) or `snapshot` (a
    PostgreSQL source read in one transaction); `after_batch(table, rows copied so far)` is
    called after each committed batch, `on_phase(name)` as each of PHASES begins (the CLI
    says from it where a Ctrl-C stopped; tests interrupt there)."""
    said = on_phase or (lambda _: None)

    async def phase(name: str) -> None:
        said(name)
        await asyncio.sleep(0)  # a Ctrl-C (the task cancelled) lands here, at a known state

    await phase("checking")
    src_name, dst_name = describe(source), describe(destination)
    if src_name == dst_name:
        raise CopyError(f"the source and the destination are the same database ({src_name})")
    await _refuse_not_ours(source)
    if not (live_ok or snapshot):
        await _refuse_live(source, src_name)
    if not snapshot and not _up_to_date(source):
        # a quizbot database of an older schema, or with answers its boards miss: brought
        # up to date as any quizbot start would (a live source's own processes do that)
        await _open_and_close(source)
    await _open_and_close(destination)
    src = side_for(source, source=True, snapshot=snapshot)
    dst = side_for(destination)
    await src.connect()
    try:
        await dst.connect()
        await _refuse_unknown_rows(src)
        state = await dst.progress()
        resumed = state is not None and state[0] == src_name and not force
        if state is not None and state[0] != src_name and not force:
            raise CopyError(
                f"{dst.where} holds an unfinished copy from another database ({state[0]}); "
                "add --force to empty it and copy again"
            )
        if not resumed and (state is not None or await _holds_data(dst)):
            if not force:
                raise CopyError(
                    f"{dst.where} already holds a community; add --force to empty it and "
                    "copy again"
                )
            await phase("emptying")
            say(f"emptying {dst.where} (--force)")
            await dst.empty()
            await dst.close()
            await _open_and_close(destination)
            await dst.connect()
            state = None
        if resumed:
            assert state is not None
            progress = state[1]
            say(f"resuming the copy from {src.where} to {dst.where}")
        else:
            progress = {}
            await dst.start_progress(src_name)
            say(f"copying {src.where} to {dst.where}")
        await phase("rows")
        for table in TABLES:
            at = progress.get(table.name, Progress())
            while not at.done:
                rows = await src.batch(table, at.last, batch)
                at.copied += len(rows)
                if rows:
                    at.last = tuple(rows[-1][table.columns.index(k)] for k in table.key)
                at.done = len(rows) < batch
                await dst.write(table, rows, at, src_name)
                if after_batch is not None:
                    after_batch(table.name, at.copied)
                await asyncio.sleep(0)  # a Ctrl-C (the task cancelled) stops between batches
            copied = EN.ngettext("{n} row", "{n} rows", at.copied)
            say(f"  {table.name}: {copied}")
        await dst.finish()
        await dst.close()
        # the destination builds its boards from the copied answers as it opens
        await phase("boards")
        say("building the boards from the answers")
        await _open_and_close(destination)
        await phase("verify")
        await dst.connect()
        # a live source's boards may lag behind its answers: then only the rows are compared
        names = [t.name for t in TABLES] + ([] if snapshot else list(REBUILT))
        counts = {name: (await src.count(name), await dst.count(name)) for name in names}
        wrong = [f"{t} {a} ≠ {b}" for t, (a, b) in counts.items() if a != b]
        if wrong:
            raise CopyError(f"the copy to {dst.where} does not match: {', '.join(wrong)}; "
                            "it stays marked unfinished")
        await dst.forget_progress()  # only now: a rerun before this point verifies again
        await phase("done")
    finally:
        await src.close()
        await dst.close()
    return Report(src_name, dst_name, counts, resumed)


def interrupted(phase: str, destination: str) -> str:
    """What a Ctrl-C in `phase` left behind, and what to do (for the operator)."""
    if phase == "checking":
        return "interrupted before any row was copied"
    if phase == "emptying":
        return (f"interrupted while emptying {destination} (--force): run the same command "
                "again to empty it and copy")
    if phase == "rows":
        return ("interrupted while copying rows: the batches copied so far are kept; run the "
                "same command again to resume")
    if phase == "boards":
        return ("interrupted while building the boards: every row is copied, the copy is not "
                "verified yet; run the same command again to finish it")
    if phase == "verify":
        return ("interrupted while verifying: every row is copied and the boards are built; "
                "run the same command again to verify")
    return f"interrupted after the copy to {destination} was verified: it is complete"
