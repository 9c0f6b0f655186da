"""SQLite's side of `db backup` and `db restore` (bot/storage/backup.py says what each
promises): the online backup API, the checks a backup file must pass, and the atomic
replacement of a database file."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
from pathlib import Path

from bot.core.ports import StorageError
from bot.storage.backup import (
    SQLITE_MAGIC,
    BackupError,
    Checked,
    beside,
    fsync,
    magic,
    put_in_place,
    replaceable,
)
from bot.storage.sqlite.connection import APPLICATION_ID
from bot.storage.sqlite.verify import (
    OUR_TABLES,
    integrity_problem,
    open_read_only,
    quizbot_file,
    row_counts,
    schema_of,
)

KEPT = ".before-restore"


def check_file(file: Path) -> Checked:
    """Every check a SQLite backup must pass before it replaces anything."""
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


def _backup(source: Path, file: Path) -> Checked:
    try:
        quizbot_file(source)
    except StorageError as exc:
        raise BackupError(str(exc)) from None
    replaceable(file, source)
    tmp = beside(file, "partial")
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
        checked = check_file(tmp)
        put_in_place(tmp, file)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return checked


def one_file(path: Path) -> None:
    """The SQLite file as one self-contained file: its -wal folded in and gone."""
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("PRAGMA journal_mode=DELETE")
    db.close()


def _cannot(what: str, path: Path, exc: OSError | sqlite3.Error) -> BackupError:
    """An error of the disk or the file system, in one line (the target is as it was: the
    rename is the last step)."""
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return BackupError(f"cannot {what} {path}: {text}; nothing was replaced")


def _target_ok(target: Path) -> None:
    from bot.health import running_bot

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


def _restore(file: Path, target: Path) -> tuple[Checked, Path | None]:
    checked = check_file(file)  # before anything else: a bad file changes nothing
    _target_ok(target)
    tmp = beside(target, "restoring")
    try:
        copy_file(file, tmp)
        fsync(tmp)
        kept = _keep_aside(target)
        os.replace(tmp, target)
        fsync(target.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return checked, kept


def drop(database: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)


def copy_file(file: Path, to: Path) -> None:
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
    drop(kept)
    try:
        os.link(target, kept)
    except OSError:
        shutil.copy2(target, kept)
    wal = Path(f"{target}-wal")
    if wal.exists():
        os.replace(wal, f"{kept}-wal")
    Path(f"{target}-shm").unlink(missing_ok=True)
    return kept


async def backup(source: Path, file: Path) -> Checked:
    try:
        return await asyncio.to_thread(_backup, source, file)
    except (OSError, sqlite3.Error) as exc:
        raise _cannot("write", file, exc) from None


async def restore(file: Path, target: Path) -> tuple[Checked, Path | None]:
    """Check `file`, then put it in `target`'s place; the database it replaced, kept aside."""
    try:
        return await asyncio.to_thread(_restore, file, target)
    except (OSError, sqlite3.Error) as exc:
        raise _cannot("restore", target, exc) from None
