"""SQLite's side of `db backup` and `db restore` (bot/storage/backup.py says what each
promises): the online backup API, the checks a SQLite backup file must pass (a logical backup
of PostgreSQL is one too), and the atomic replacement of a database file."""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

from bot.core.ports import StorageError
from bot.health import running_bot
from bot.storage.backup_files import (
    SQLITE_MAGIC,
    BackupError,
    Checked,
    checker,
    fsync,
    in_thread,
    magic,
    temporary,
)
from bot.storage.sqlite import aggregates_file
from bot.storage.sqlite.connection import APPLICATION_ID
from bot.storage.sqlite.verify import (
    OUR_TABLES,
    integrity_problem,
    open_read_only,
    quizbot_file,
    row_counts,
    schema_of,
    schema_problem,
)

KEPT = ".before-restore"
STEP = 1024  # pages copied between two looks at whether to stop (4 MiB at 4 KiB a page)


def check_file(file: Path, stop: threading.Event | None = None) -> Checked:
    """Every check a SQLite backup must pass before it replaces anything. Once `stop` is
    set, SQLite abandons the check's queries (the error is then the caller's to drop)."""
    if not file.is_file():
        raise BackupError(f"{file} is not a backup: "
                          f"{'no such file' if not file.exists() else 'not a file'}")
    if not magic(file).startswith(SQLITE_MAGIC):
        raise BackupError(f"{file} is not a quizbot backup (not a SQLite database or a "
                          "pg_dump archive)")
    try:
        db = open_read_only(file)
    except sqlite3.Error as exc:
        raise BackupError(f"cannot read {file}: {exc}") from None
    if stop is not None:
        db.set_progress_handler(lambda: int(stop.is_set()), 10_000)
    try:
        problem = integrity_problem(db)
        if problem is not None:
            raise BackupError(f"{file} is damaged (integrity check: {problem})")
        try:
            version = schema_of(db, file)
        except StorageError as exc:
            raise BackupError(str(exc)) from None
        missing = schema_problem(db, version)
        if missing is not None:
            raise BackupError(f"{file} is incomplete: schema {version} has {missing}, which "
                              "the file lacks")
        try:
            counts = row_counts(db)
        except sqlite3.DatabaseError as exc:
            raise BackupError(f"{file} is damaged ({exc})") from None
    finally:
        db.close()
    return Checked("sqlite", version, counts)


def source_ok(source: Path) -> None:
    """A database to back up: quizbot's, there (a mistyped path is not created)."""
    try:
        quizbot_file(source)
    except StorageError as exc:
        raise BackupError(str(exc)) from None


def copy_pages(file: Path, to: Path, stop: threading.Event) -> None:
    """`file` copied into `to` with SQLite's backup API, as one moment: the source's read
    transaction is held across the steps, so a bot writing meanwhile neither shows half-way
    nor restarts the copy. Between steps, `stop` is looked at (Interrupted)."""
    src = open_read_only(file)
    try:
        src.execute("BEGIN")
        src.execute("SELECT count(*) FROM sqlite_master").fetchone()  # the snapshot, taken
        dst = sqlite3.connect(to, isolation_level=None)
        try:
            src.backup(dst, pages=STEP, progress=checker(stop))
            dst.execute("PRAGMA journal_mode=DELETE")  # one file, no -wal beside it
        finally:
            dst.close()
        src.execute("COMMIT")
    finally:
        src.close()


def one_file(path: Path) -> None:
    """The SQLite file as one self-contained file: its -wal folded in and gone."""
    try:
        with sqlite3.connect(path, isolation_level=None) as db:
            db.execute("PRAGMA journal_mode=DELETE")
        db.close()
    except sqlite3.Error as exc:
        raise cannot("write", path, exc) from None


def cannot(what: str, path: Path, exc: OSError | sqlite3.Error) -> BackupError:
    """An error of the disk or the file system, in one line (the target is as it was: the
    rename is the last step)."""
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return BackupError(f"cannot {what} {path}: {text}; nothing was replaced")


async def backup(source: Path, tmp: Path) -> Checked:
    """The database at `source` copied into `tmp` (a temporary file) and checked."""
    def work(stop: threading.Event) -> Checked:
        copy_pages(source, tmp, stop)
        return check_file(tmp, stop)

    try:
        return await in_thread(work)
    except (OSError, sqlite3.Error) as exc:
        raise cannot("write", tmp, exc) from None


def _target_ok(target: Path) -> None:
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


def _replace(tmp: Path, target: Path, stop: threading.Event, file: Path) -> Path | None:
    copy_pages(file, tmp, stop)
    fsync(tmp)
    kept = _keep_aside(target)
    os.replace(tmp, target)
    fsync(target.parent)
    # the aggregates of the file replaced (aggregates_file.py): the next open rebuilds them
    # from the restored answers
    aggregates_file.remove(target)
    return kept


def kept_name(target: Path, now: datetime) -> Path:
    """`<target>.before-restore-<UTC time>`, a name no earlier copy has (`-2`, `-3`… after it
    when two restores fall in one second)."""
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    name = target.with_name(f"{target.name}{KEPT}-{stamp}")
    n = 1
    while any(Path(f"{name}{s}").exists() for s in ("", "-wal")):
        n += 1
        name = target.with_name(f"{target.name}{KEPT}-{stamp}-{n}")
    return name


def _keep_aside(target: Path) -> Path | None:
    """The database about to be replaced, kept under a name of its own, with its -wal (which
    belongs to it: left under the target's name it would be applied to the new file). No
    earlier pre-restore copy is replaced or removed."""
    if not target.exists():
        return None
    try:  # fold the -wal in when the file allows it
        with sqlite3.connect(target, isolation_level=None, timeout=10) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
    except sqlite3.Error:
        pass
    while True:
        kept = kept_name(target, datetime.now(UTC))
        try:
            os.link(target, kept)  # fails rather than replace a name taken meanwhile
            break
        except FileExistsError:
            continue
        except OSError:
            shutil.copy2(target, kept)
            break
    wal = Path(f"{target}-wal")
    if wal.exists():
        os.replace(wal, f"{kept}-wal")
    Path(f"{target}-shm").unlink(missing_ok=True)
    return kept


async def restore(file: Path, target: Path) -> tuple[Checked, Path | None]:
    """Check `file`, then put it in `target`'s place; the database it replaced, kept aside
    (None: there was none)."""
    try:
        # first: a bad file changes nothing
        checked = await in_thread(lambda stop: check_file(file, stop))
        _target_ok(target)
        with temporary(target, "restoring") as tmp:
            kept = await in_thread(lambda stop: _replace(tmp, target, stop, file), whole=True)
    except (OSError, sqlite3.Error) as exc:
        raise cannot("restore", target, exc) from None
    return checked, kept


def copy_file(file: Path, to: Path, stop: threading.Event) -> None:
    """A SQLite backup copied to a scratch file (which a logical restore may then migrate)."""
    try:
        copy_pages(file, to, stop)
    except sqlite3.Error as exc:
        raise cannot("read", file, exc) from None

