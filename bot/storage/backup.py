"""`quizbot db backup FILE` and `quizbot db restore FILE`: a copy taken while the bot runs,
and a restore that checks the copy before it replaces anything.

Backup
- SQLite: the online backup API (`sqlite3.Connection.backup`) copies every page inside one
  read transaction held across its steps, so the copy is one consistent moment while the bot
  goes on writing (WAL lets it), and it can stop between steps. Copying the file with `cp` is
  not a backup: the newest answers may be in the `-wal` file beside it. The copy is a
  self-contained file (rollback journal, no `-wal`), checked (`PRAGMA integrity_check`)
  before it takes FILE's name.
- PostgreSQL: `pg_dump --format=custom` when pg_dump is on PATH (one snapshot: consistent
  while bots write), checked with `pg_restore --list`. Without it (or with `logical`), a
  logical copy into a SQLite file (`db copy` reading the source in one REPEATABLE READ
  transaction: consistent too), checked as a SQLite backup is.
- FILE is written beside its final name, fsynced and renamed: an interrupted backup never
  leaves half a file under FILE's name, nor replaces an older backup with one. An existing
  FILE is replaced only if it is a quizbot backup itself. Ctrl-C or SIGTERM removes the
  partial file before the command exits; what a kill -9 left is removed by the next backup
  or restore into that folder (bot/storage/backup_files.py says how it tells).

Restore
- The file is checked first, and a file that fails is refused with nothing changed: SQLite's
  integrity check, a quizbot database (application_id) of a schema this quizbot reads, every
  table, column, index and trigger of that schema present (the migrations up to its version
  run on an empty in-memory database say which), and every table's rows counted (which
  reads every row); for a pg_dump archive, its table of contents, its schema version, every
  table and column of that schema in its data (the migrations run in a scratch schema of
  the target's server, rolled back) and its rows counted from the archive's data.
- SQLite target: refused while a bot runs on it (a fresh heartbeat), and if it is another
  program's database. The backup is copied beside the target, fsynced and renamed over it;
  the database it replaced is kept as `<target>.before-restore-<UTC time>` (with its `-wal`);
  every restore keeps its own, and none is ever replaced or removed.
- PostgreSQL target: refused while other sessions use it, or if it is another program's.
  A pg_dump archive goes in with `pg_restore --clean --single-transaction`: all of it or,
  on any error, nothing. A logical (SQLite) backup goes in with `db copy --force`: checked
  first, resumable, but not one transaction (the target is emptied first).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from pathlib import Path

from bot.core.ports import StorageError
from bot.storage.backup_files import (
    PG_DUMP_MAGIC,
    BackupError,
    Checked,
    in_thread,
    magic,
    put_in_place,
    temporary,
)
from bot.storage.copy import copy_database
from bot.storage.postgres import backup as pg_backup
from bot.storage.postgres.url import DatabaseUrl, is_postgres_url, redact
from bot.storage.sqlite import backup as sqlite_backup
from bot.storage.sqlite.verify import quizbot_file

__all__ = ["BackupError", "Checked", "backup_database", "check_backup", "restore_database",
           "stop_on_signals", "stopped_line"]

Database = str | Path | DatabaseUrl


def _is_postgres(database: Database) -> bool:
    return isinstance(database, DatabaseUrl) or (
        isinstance(database, str) and is_postgres_url(database))


def _path(database: Database) -> Path:
    assert not isinstance(database, DatabaseUrl)
    return Path(database)


def _url(database: Database) -> str:
    return database.get_secret_value() if isinstance(database, DatabaseUrl) else str(database)


def _where(database: Database) -> str:
    return redact(_url(database)) if _is_postgres(database) else str(database)


def replaceable(file: Path, database: Database) -> None:
    """FILE may take the backup: new, or an earlier quizbot backup (never the database
    itself, nor someone's file that happens to have the name)."""
    if not _is_postgres(database) and file.resolve() == _path(database).resolve():
        raise BackupError(f"{file} is the database itself; give the backup another name")
    if not file.exists():
        if not file.parent.is_dir():
            raise BackupError(f"cannot write {file}: its directory does not exist")
        return
    if not file.is_file():
        raise BackupError(f"{file} exists and is not a file; give the backup another name")
    if magic(file).startswith(PG_DUMP_MAGIC):
        return
    try:
        quizbot_file(file)
    except StorageError:
        raise BackupError(f"{file} exists and is not a quizbot backup; nothing was "
                          "written (give the backup another name)") from None


# the commands -----------------------------------------------------------------------------
async def check_backup(file: Path, url: str | None = None) -> Checked:
    """Every check a backup file must pass before it replaces anything. A pg_dump archive
    is checked against the schema the migrations make on `url`'s server."""
    if magic(file).startswith(PG_DUMP_MAGIC):
        if url is None:
            raise BackupError(f"{file} is a pg_dump archive: it is checked against a "
                              "PostgreSQL server's schema")
        return await pg_backup.check_archive(file, url)
    return await in_thread(lambda stop: sqlite_backup.check_file(file, stop))


async def _logical(url: str, tmp: Path) -> Checked:
    """PostgreSQL copied into the SQLite file `tmp` from one snapshot, and checked."""
    await copy_database(url, tmp, snapshot=True, say=lambda _: None)
    await in_thread(lambda _: sqlite_backup.one_file(tmp))
    return await in_thread(lambda stop: sqlite_backup.check_file(tmp, stop))


async def backup_database(database: Database, file: Path, *, logical: bool = False) -> str:
    """Write a checked backup of `database` to `file`; one line saying what was written.
    `logical`: for PostgreSQL, a SQLite copy even where pg_dump is installed."""
    postgres = _is_postgres(database)
    if postgres:
        await pg_backup.source_ok(_url(database))
    else:
        sqlite_backup.source_ok(_path(database))
    replaceable(file, database)
    try:
        with temporary(file) as tmp:
            if not postgres:
                checked = await sqlite_backup.backup(_path(database), tmp)
                how = "SQLite online backup; integrity ok"
            elif logical or not pg_backup.has_pg_dump():
                checked = await _logical(_url(database), tmp)
                how = ("a logical copy into a SQLite file from one REPEATABLE READ snapshot; "
                       "integrity ok")
            else:
                checked = await pg_backup.dump(_url(database), tmp)
                how = "pg_dump, custom format; archive read through"
            put_in_place(tmp, file)
    except OSError as exc:
        raise sqlite_backup.cannot("write", file, exc) from None
    return f"backed up {_where(database)} to {file} ({how}; {checked.summary()})"


async def restore_database(database: Database, file: Path) -> str:
    """Check `file`, then replace `database` with it; one line saying what was done.
    BackupError (nothing replaced) for a file that fails a check or a target that must not
    be replaced (another program's, or in use)."""
    if not _is_postgres(database):
        if magic(file).startswith(PG_DUMP_MAGIC):
            raise BackupError(f"{file} is a pg_dump archive: it restores into PostgreSQL "
                              "only (QUIZBOT_DATABASE=postgresql://…)")
        checked, kept = await sqlite_backup.restore(file, _path(database))
        line = f"restored {database} from {file} ({checked.summary()}; integrity ok)"
        if kept is not None:
            line += f"; the database it replaced is kept as {kept}"
        return line
    url = _url(database)
    checked = await check_backup(file, url)
    await pg_backup.target_ok(url)
    if checked.kind == "pg_dump":
        await pg_backup.restore_archive(file, url)
    else:
        # the copy opens its source with a Storage (which may migrate it): a scratch copy
        # of the backup, so the backup itself stays as it was
        with temporary(file, "restoring") as scratch:
            await in_thread(lambda stop: sqlite_backup.copy_file(file, scratch, stop))
            await copy_database(scratch, url, force=True, say=lambda _: None)
    return f"restored {redact(url)} from {file} ({checked.summary()}; checked before)"


# stopping ---------------------------------------------------------------------------------
def stop_on_signals() -> list[int]:
    """SIGINT and SIGTERM cancel the running command, so that a backup removes its partial
    file (and a restore its copy) before the process exits; the list gets the signal."""
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    got: list[int] = []

    def stop(sig: int) -> None:
        got.append(sig)
        if task is not None:
            task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop, sig)
    return got


def stopped_line(action: str, database: Database, sig: int) -> str:
    """The one line a backup or restore stopped by `sig` ends with."""
    name = signal.Signals(sig).name
    if action == "backup":
        return (f"the backup was stopped by {name}: its partial file was removed; nothing "
                "was written")
    if _is_postgres(database):
        return (f"the restore was stopped by {name}: a pg_dump archive's restore was rolled "
                "back (nothing was replaced); a logical one is finished by running it again")
    return f"the restore was stopped by {name}: nothing was replaced"
