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

import asyncio
import os
import re
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from bot.core.ports import StorageError
from bot.storage.postgres.url import DatabaseUrl, is_postgres_url, redact
from bot.storage.sqlite.connection import APPLICATION_ID
from bot.storage.sqlite.verify import (
    OUR_TABLES,
    integrity_problem,
    open_read_only,
    quizbot_file,
    row_counts,
    schema_of,
)

PG_DUMP_MAGIC = b"PGDMP"
SQLITE_MAGIC = b"SQLite format 3\x00"
KEPT = ".before-restore"
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
def _beside(path: Path, what: str) -> Path:
    """A temporary name in the same directory (so the final rename is atomic)."""
    return path.with_name(f".{path.name}.{what}-{os.getpid()}")


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _put_in_place(tmp: Path, final: Path) -> None:
    """The file's bytes on disk, then its name, then the directory entry on disk."""
    _fsync(tmp)
    os.replace(tmp, final)
    _fsync(final.parent)


def _magic(path: Path) -> bytes:
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


def _replaceable(file: Path, database: str | Path | DatabaseUrl) -> None:
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
    if _magic(file).startswith(PG_DUMP_MAGIC):
        return
    try:
        quizbot_file(file)
    except StorageError:
        raise BackupError(f"{file} exists and is not a quizbot backup; nothing was "
                          "written (give the backup another name)") from None


# checking a backup ------------------------------------------------------------------------
def check_sqlite_file(file: Path) -> Checked:
    """Every check a SQLite backup must pass before it replaces anything."""
    if not file.is_file():
        raise BackupError(f"{file} is not a backup: "
                          f"{'no such file' if not file.exists() else 'not a file'}")
    if not _magic(file).startswith(SQLITE_MAGIC):
        raise BackupError(f"{file} is not a quizbot backup (not a SQLite database or a "
                          "pg_dump archive)")
    try:
        db = open_read_only(file)
    except sqlite3.Error as exc:
        raise BackupError(f"cannot read {file}: {exc}") from None
    try:
        problem = integrity_problem(db)
        if problem is not None:
            raise BackupError(f"{file} is damaged (integrity check: {problem})")
        try:
            version = schema_of(db, file)
        except StorageError as exc:
            raise BackupError(str(exc)) from None
        try:
            counts = row_counts(db)
        except sqlite3.DatabaseError as exc:
            raise BackupError(f"{file} is damaged ({exc})") from None
    finally:
        db.close()
    return Checked("sqlite", version, counts)


_TOC_DATA = re.compile(r"^\d+; \d+ \d+ TABLE DATA \S+ (\S+) ", re.MULTILINE)
_COPY = re.compile(r"^COPY (?:\S+\.)?\"?([^\s\"(]+)\"? \(.*\) FROM stdin;$")


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise BackupError(f"{name} is not on PATH: a pg_dump archive needs PostgreSQL's "
                          "client tools (Debian: postgresql-client)")
    return found


def check_pg_archive(file: Path) -> Checked:
    """A pg_dump archive: its table of contents names quizbot's tables, its schema_version
    is one this quizbot reads, and its data is read through to count each table's rows."""
    from bot.storage.postgres.schema import MIGRATIONS

    listing = subprocess.run([_tool("pg_restore"), "--list", str(file)],
                             capture_output=True, text=True, check=False)
    if listing.returncode != 0:
        raise BackupError(f"{file} is damaged ({_first_line(listing.stderr)})")
    tables = set(_TOC_DATA.findall(listing.stdout))
    if not {"schema_version", "answers", "posts", "persons"} <= tables:
        raise BackupError(f"{file} is not a quizbot backup (a pg_dump archive without "
                          "quizbot's tables)")
    counts: dict[str, int] = {}
    versions: list[int] = []
    with subprocess.Popen([_tool("pg_restore"), "--data-only", "--file=-", str(file)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as dump:
        assert dump.stdout is not None
        table: str | None = None
        for raw in dump.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if table is None:
                match = _COPY.match(line)
                if match:
                    table = match[1]
                    counts.setdefault(table, 0)
            elif line == "\\.":
                table = None
            else:
                counts[table] += 1
                if table == "schema_version":
                    versions.append(int(line.split("\t", 1)[0]))
        error = dump.stderr.read().decode("utf-8", "replace") if dump.stderr else ""
    if dump.returncode != 0:
        raise BackupError(f"{file} is damaged ({_first_line(error)})")
    version = max(versions, default=0)
    if version > len(MIGRATIONS):
        raise BackupError(f"{file} was written by a newer quizbot (schema {version}; this "
                          f"version reads up to {len(MIGRATIONS)})")
    if version == 0:
        raise BackupError(f"{file} is not a quizbot backup (no schema version in it)")
    return Checked("pg_dump", version, counts)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else "unreadable"


def check_backup(file: Path) -> Checked:
    if _magic(file).startswith(PG_DUMP_MAGIC):
        return check_pg_archive(file)
    return check_sqlite_file(file)


# backup -----------------------------------------------------------------------------------
def _sqlite_backup(source: Path, file: Path) -> Checked:
    try:
        quizbot_file(source)
    except StorageError as exc:
        raise BackupError(str(exc)) from None
    _replaceable(file, source)
    tmp = _beside(file, "partial")
    try:
        src = open_read_only(source)
        try:
            dst = sqlite3.connect(tmp, isolation_level=None)
            try:
                src.backup(dst)  # every page in one step: one read transaction, one moment
                dst.execute("PRAGMA journal_mode=DELETE")  # one file, no -wal beside it
            finally:
                dst.close()
        finally:
            src.close()
        checked = check_sqlite_file(tmp)
        _put_in_place(tmp, file)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return checked


def _one_file(path: Path) -> None:
    """The SQLite file as one self-contained file: its -wal folded in and gone."""
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("PRAGMA journal_mode=DELETE")
    db.close()


def _libpq(url: str) -> tuple[str, dict[str, str]]:
    """The URL without its password, and the environment that gives pg_dump the password
    (not on the command line, where `ps` shows it)."""
    parts = urlsplit(url)
    env = dict(os.environ)
    if parts.password is not None:
        env["PGPASSWORD"] = unquote(parts.password)
        host = parts.netloc.rsplit("@", 1)[-1]
        user = parts.username or ""
        parts = parts._replace(netloc=f"{user}@{host}" if user else host)
    return urlunsplit(parts), env


async def _pg_backup(url: str, file: Path, logical: bool) -> Checked:
    from bot.storage.postgres.copy import copy_database
    from bot.storage.postgres.storage import check_database

    problem = await check_database(url)
    if problem is not None:
        raise BackupError(problem.split("; set QUIZBOT_DATABASE")[0])
    _replaceable(file, url)
    tmp = _beside(file, "partial")
    try:
        if logical or shutil.which("pg_dump") is None:
            await copy_database(url, tmp, snapshot=True, say=lambda _: None)
            await asyncio.to_thread(_one_file, tmp)
            checked = await asyncio.to_thread(check_sqlite_file, tmp)
        else:
            target, env = _libpq(url)
            done = await asyncio.to_thread(
                subprocess.run,
                [_tool("pg_dump"), "--format=custom", "--no-owner", f"--file={tmp}",
                 f"--dbname={target}"], capture_output=True, text=True, env=env, check=False)
            if done.returncode != 0:
                raise BackupError(f"pg_dump failed: {redact(_first_line(done.stderr))}")
            checked = await asyncio.to_thread(check_pg_archive, tmp)
        _put_in_place(tmp, file)
    except BaseException:
        _drop(tmp)
        raise
    return checked


async def backup_database(database: str | Path | DatabaseUrl, file: Path, *,
                          logical: bool = False) -> str:
    """Write a checked backup of `database` to `file`; one line saying what was written.
    `logical`: for PostgreSQL, a SQLite copy even where pg_dump is installed."""
    if _is_postgres(database):
        checked = await _pg_backup(_url(database), file, logical)
        how = ("pg_dump, custom format; archive read through" if checked.kind == "pg_dump"
               else "a logical copy into a SQLite file from one REPEATABLE READ snapshot; "
               "integrity ok")
    else:
        try:
            checked = await asyncio.to_thread(_sqlite_backup, _path(database), file)
        except (OSError, sqlite3.Error) as exc:
            raise _cannot("write", file, exc) from None
        how = "SQLite online backup; integrity ok"
    return f"backed up {_where(database)} to {file} ({how}; {checked.summary()})"


def _cannot(what: str, path: Path, exc: OSError | sqlite3.Error) -> BackupError:
    """An error of the disk or the file system, in one line (the target is as it was: the
    rename is the last step)."""
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return BackupError(f"cannot {what} {path}: {text}; nothing was replaced")


def _where(database: str | Path | DatabaseUrl) -> str:
    if _is_postgres(database):
        return redact(_url(database))
    return str(database)


# restore ----------------------------------------------------------------------------------
def _sqlite_target_ok(target: Path) -> None:
    from bot.storage.postgres.copy import running_bot

    reason = running_bot(target)
    if reason is not None:
        raise BackupError(f"{target} is in use ({reason}): stop the bot first; nothing was "
                          "replaced")
    if target.exists() and _foreign(target):
        raise BackupError(f"{target} is another program's database; nothing was replaced")


def _foreign(path: Path) -> bool:
    """A readable SQLite database with tables that is not quizbot's. A damaged or empty
    file is not (a damaged one is why one restores: it is kept aside, not refused)."""
    try:
        db = open_read_only(path)
        try:
            app_id = int(db.execute("PRAGMA application_id").fetchone()[0])
            tables = {str(r[0]) for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            db.close()
    except sqlite3.Error:
        return False
    if app_id == APPLICATION_ID:
        return False
    return bool(tables) and not (app_id == 0 and OUR_TABLES <= tables)


def _sqlite_restore(file: Path, target: Path) -> tuple[Checked, Path | None]:
    checked = check_sqlite_file(file)  # before anything else: a bad file changes nothing
    _sqlite_target_ok(target)
    tmp = _beside(target, "restoring")
    try:
        _sqlite_copy(file, tmp)
        _fsync(tmp)
        kept = _keep_aside(target)
        os.replace(tmp, target)
        _fsync(target.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return checked, kept


def _drop(database: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)


def _sqlite_copy(file: Path, to: Path) -> None:
    src = open_read_only(file)
    try:
        dst = sqlite3.connect(to, isolation_level=None)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()


def _keep_aside(target: Path) -> Path | None:
    """The database about to be replaced, kept as `<target>.before-restore` with its -wal
    (which belongs to it: left under the target's name it would be applied to the new
    file)."""
    if not target.exists():
        return None
    try:  # fold the -wal in when the file allows it
        with sqlite3.connect(target, isolation_level=None, timeout=10) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
    except sqlite3.Error:
        pass
    kept = target.with_name(target.name + KEPT)
    _drop(kept)
    try:
        os.link(target, kept)
    except OSError:
        shutil.copy2(target, kept)
    wal = Path(f"{target}-wal")
    if wal.exists():
        os.replace(wal, f"{kept}-wal")
    Path(f"{target}-shm").unlink(missing_ok=True)
    return kept


async def _pg_target_ok(url: str) -> None:
    from bot.storage.postgres.copy import PostgresSide
    from bot.storage.postgres.storage import check_database

    problem = await check_database(url)
    if problem is not None and "holds no quizbot data yet" not in problem:
        raise BackupError(f"{problem.split('; set QUIZBOT_DATABASE')[0]}; nothing was "
                          "replaced")
    side = PostgresSide(url)
    await side.connect()
    try:
        reason = await side.in_use()
    finally:
        await side.close()
    if reason is not None:
        raise BackupError(f"{redact(url)} is in use ({reason}): stop the bots first; "
                          "nothing was replaced")


async def _pg_restore(file: Path, url: str, checked: Checked) -> None:
    if checked.kind == "sqlite":
        from bot.storage.postgres.copy import copy_database

        # the copy opens its source with a Storage (which may migrate it): a scratch copy
        # of the backup, so the backup itself stays as it was
        scratch = _beside(file, "restoring")
        try:
            await asyncio.to_thread(_sqlite_copy, file, scratch)
            await copy_database(scratch, url, force=True, say=lambda _: None)
        finally:
            await asyncio.to_thread(_drop, scratch)
        return
    target, env = _libpq(url)
    done = await asyncio.to_thread(subprocess.run, [
        _tool("pg_restore"), "--clean", "--if-exists", "--single-transaction",
        "--exit-on-error", "--no-owner", f"--dbname={target}", str(file),
    ], capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:  # one transaction: nothing of it stayed
        raise BackupError(f"pg_restore failed, nothing was replaced: "
                          f"{redact(_first_line(done.stderr))}")


async def restore_database(database: str | Path | DatabaseUrl, file: Path) -> str:
    """Check `file`, then replace `database` with it; one line saying what was done.
    BackupError (nothing replaced) for a file that fails a check or a target that must not
    be replaced (another program's, or in use)."""
    if _is_postgres(database):
        url = _url(database)
        checked = await asyncio.to_thread(check_backup, file)
        await _pg_target_ok(url)
        await _pg_restore(file, url, checked)
        return f"restored {redact(url)} from {file} ({checked.summary()}; checked before)"
    if _magic(file).startswith(PG_DUMP_MAGIC):
        raise BackupError(f"{file} is a pg_dump archive: it restores into PostgreSQL only "
                          "(QUIZBOT_DATABASE=postgresql://…)")
    try:
        checked, kept = await asyncio.to_thread(_sqlite_restore, file, _path(database))
    except (OSError, sqlite3.Error) as exc:
        raise _cannot("restore", _path(database), exc) from None
    line = (f"restored {database} from {file} ({checked.summary()}; integrity ok)")
    if kept is not None:
        line += f"; the database it replaced is kept as {kept}"
    return line
