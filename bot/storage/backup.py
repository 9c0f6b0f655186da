"""`quizbot db backup FILE` and `quizbot db restore FILE`: a copy taken while the bot runs,
and a restore that checks the copy before it replaces anything.

Backup
- SQLite: the online backup API (`sqlite3.Connection.backup`) copies every page in one step,
  inside one read transaction, so the copy is one consistent moment while the bot goes on
  writing (WAL lets it). Copying the file with `cp` is not a backup: the newest answers may
  be in the `-wal` file beside it. The copy is a self-contained file (rollback journal, no
  `-wal`), checked (`PRAGMA integrity_check`) before it takes FILE's name.
- PostgreSQL: `pg_dump --format=custom` when pg_dump is on PATH (one snapshot: consistent
  while bots write), checked with `pg_restore --list`. Without it (or with `logical`), a
  logical copy into a SQLite file (`db copy` reading the source in one REPEATABLE READ
  transaction: consistent too), checked as a SQLite backup is.
- FILE is written beside its final name, fsynced and renamed: an interrupted backup never
  leaves half a file under FILE's name, nor replaces an older backup with one. An existing
  FILE is replaced only if it is a quizbot backup itself.

Restore
- The file is checked first, and a file that fails is refused with nothing changed: SQLite's
  integrity check, a quizbot database (application_id) of a schema this quizbot reads, and
  every table's rows counted (which reads every row); for a pg_dump archive, its table of
  contents, its schema version and its rows counted from the archive's data.
- SQLite target: refused while a bot runs on it (a fresh heartbeat), and if it is another
  program's database. The backup is copied beside the target, fsynced and renamed over it;
  the database it replaced is kept as `<target>.before-restore` (with its `-wal`).
- PostgreSQL target: refused while other sessions use it, or if it is another program's.
  A pg_dump archive goes in with `pg_restore --clean --single-transaction`: all of it or,
  on any error, nothing. A logical (SQLite) backup goes in with `db copy --force`: checked
  first, resumable, but not one transaction (the target is emptied first).
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

from bot.core.ports import StorageError
from bot.storage.postgres.url import DatabaseUrl, is_postgres_url, redact
from bot.storage.sqlite.verify import quizbot_file

PG_DUMP_MAGIC = b"PGDMP"
SQLITE_MAGIC = b"SQLite format 3\x00"
SHOWN = ("persons", "posts", "answers")  # the counts a one-line report names


class BackupError(StorageError):
    """A backup or restore that must not or cannot go on: one line; nothing was replaced."""


@dataclass(frozen=True)
class Checked:
    """A backup file that passed every check."""

    kind: str  # "sqlite" or "pg_dump"
    version: int
    counts: dict[str, int]

    def summary(self) -> str:
        shown = ", ".join(f"{t} {self.counts.get(t, 0)}" for t in SHOWN)
        return f"schema {self.version}; {shown}"


# files ------------------------------------------------------------------------------------
def beside(path: Path, what: str) -> Path:
    """A temporary name in the same directory (so the final rename is atomic). What a
    killed backup or restore left there under such a name is removed first."""
    for left in path.parent.glob(f".{glob.escape(path.name)}.{what}-*"):
        pid = left.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            left.unlink(missing_ok=True)
    return path.with_name(f".{path.name}.{what}-{os.getpid()}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def put_in_place(tmp: Path, final: Path) -> None:
    """The file's bytes on disk, then its name, then the directory entry on disk."""
    fsync(tmp)
    os.replace(tmp, final)
    fsync(final.parent)


def magic(path: Path) -> bytes:
    try:
        with path.open("rb") as f:
            return f.read(16)
    except OSError:
        return b""


def _is_postgres(database: str | Path | DatabaseUrl) -> bool:
    return isinstance(database, DatabaseUrl) or (
        isinstance(database, str) and is_postgres_url(database))


def _path(database: str | Path | DatabaseUrl) -> Path:
    assert not isinstance(database, DatabaseUrl)
    return Path(database)


def _url(database: str | Path | DatabaseUrl) -> str:
    return database.get_secret_value() if isinstance(database, DatabaseUrl) else str(database)


def replaceable(file: Path, database: str | Path | DatabaseUrl) -> None:
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


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else "unreadable"


def _where(database: str | Path | DatabaseUrl) -> str:
    if _is_postgres(database):
        return redact(_url(database))
    return str(database)


# the commands -----------------------------------------------------------------------------
def check_backup(file: Path) -> Checked:
    """Every check a backup file must pass before it replaces anything."""
    from bot.storage.sqlite import backup as sqlite_backup

    if magic(file).startswith(PG_DUMP_MAGIC):
        from bot.storage.postgres import backup as pg_backup

        return pg_backup.check_archive(file)
    return sqlite_backup.check_file(file)


async def backup_database(database: str | Path | DatabaseUrl, file: Path, *,
                          logical: bool = False) -> str:
    """Write a checked backup of `database` to `file`; one line saying what was written.
    `logical`: for PostgreSQL, a SQLite copy even where pg_dump is installed."""
    if _is_postgres(database):
        from bot.storage.postgres import backup as pg_backup

        checked = await pg_backup.backup(_url(database), file, logical)
        how = ("pg_dump, custom format; archive read through" if checked.kind == "pg_dump"
               else "a logical copy into a SQLite file from one REPEATABLE READ snapshot; "
               "integrity ok")
    else:
        from bot.storage.sqlite import backup as sqlite_backup

        checked = await sqlite_backup.backup(_path(database), file)
        how = "SQLite online backup; integrity ok"
    return f"backed up {_where(database)} to {file} ({how}; {checked.summary()})"


async def restore_database(database: str | Path | DatabaseUrl, file: Path) -> str:
    """Check `file`, then replace `database` with it; one line saying what was done.
    BackupError (nothing replaced) for a file that fails a check or a target that must not
    be replaced (another program's, or in use)."""
    if _is_postgres(database):
        from bot.storage.postgres import backup as pg_backup

        url = _url(database)
        checked = await pg_backup.restore(file, url)
        return f"restored {redact(url)} from {file} ({checked.summary()}; checked before)"
    if magic(file).startswith(PG_DUMP_MAGIC):
        raise BackupError(f"{file} is a pg_dump archive: it restores into PostgreSQL only "
                          "(QUIZBOT_DATABASE=postgresql://…)")
    from bot.storage.sqlite import backup as sqlite_backup

    checked, kept = await sqlite_backup.restore(file, _path(database))
    line = f"restored {database} from {file} ({checked.summary()}; integrity ok)"
    if kept is not None:
        line += f"; the database it replaced is kept as {kept}"
    return line
