"""What a backup is, whichever database wrote it, and the files a backup or restore writes:
the checked result, the refusal, and a temporary file that is never left behind.

A backup or restore writes under a hidden temporary name in the target's folder
(`.<name>.partial-<pid>-<random>`, `.<name>.restoring-…`) and renames it at the end, so the
final name only ever holds a whole, checked file. While it writes, the process holds an
exclusive `flock` on that file. The kernel drops the lock when the process ends however it
ends (kill -9 included), so a temporary file that nobody holds locked belongs to a run that
is gone: the next backup or restore into that folder removes it, with SQLite's `-journal`,
`-wal` and `-shm` files beside it. A process id is no test of that (in a container every run
may be pid 1, and a reused pid looks alive).

A run that is stopped (Ctrl-C, SIGTERM: the CLI cancels the command) removes its own
temporary file before it exits: `in_thread` passes the work a `stop` event that it checks
between steps (`Interrupted`), and waits for it to end before the cancellation goes on.
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import os
import re
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from bot.core.ports import StorageError

PG_DUMP_MAGIC = b"PGDMP"
SQLITE_MAGIC = b"SQLite format 3\x00"
SHOWN = ("persons", "posts", "answers")  # the counts a one-line report names
KINDS = ("partial", "restoring")  # the temporary files' kinds
SIDECARS = ("-journal", "-wal", "-shm")  # SQLite's files beside a database
_TEMPORARY = re.compile(r"^\..+\.(?:partial|restoring)-\d+(?:-[0-9a-f]+)?$")

T = TypeVar("T")


class BackupError(StorageError):
    """A backup or restore that must not or cannot go on: one line; nothing was replaced."""


class Interrupted(Exception):
    """Raised inside a backup's or restore's work when it was asked to stop."""


@dataclass(frozen=True)
class Checked:
    """A backup file that passed every check."""

    kind: str  # "sqlite" or "pg_dump"
    version: int
    counts: dict[str, int]

    def summary(self) -> str:
        shown = ", ".join(f"{t} {self.counts.get(t, 0)}" for t in SHOWN)
        return f"schema {self.version}; {shown}"


Schema = dict[str, frozenset[str]]  # table -> its columns


def lacking(want: Schema, have: Schema) -> list[str]:
    """What of `want` (the schema the migrations make) `have` lacks: "table a, b" and
    "column t.c"; tables or columns beyond `want` are not missing anything."""
    tables = sorted(set(want) - set(have))
    columns = sorted(f"{t}.{c}" for t in set(want) & set(have) for c in want[t] - have[t])
    return [f"{what}{'s' if len(names) > 1 else ''} {', '.join(names)}"
            for what, names in (("table", tables), ("column", columns)) if names]


# temporary files ----------------------------------------------------------------------------
@contextmanager
def temporary(final: Path, kind: str = "partial") -> Iterator[Path]:
    """A locked, empty temporary file beside `final` (in the same folder, so the last rename
    is atomic), removed with its SQLite sidecars when the block ends, whether or not the block
    renamed it into place. What killed runs left in that folder is removed first."""
    assert kind in KINDS
    remove_stale(final.parent)
    path, fd = _create_locked(final, kind)
    try:
        yield path
    finally:
        drop(path)  # before the lock goes: a cleaner never sees it present and unlocked
        os.close(fd)


def _create_locked(final: Path, kind: str) -> tuple[Path, int]:
    while True:
        path = final.with_name(f".{final.name}.{kind}-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # a cleaner may have removed the name between the open and the lock
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                return path, fd
        except OSError:
            pass
        os.close(fd)


def remove_stale(folder: Path) -> list[Path]:
    """Remove the temporary files in `folder` that no running process holds locked (what a
    killed backup or restore left), with their sidecars; the files removed."""
    removed: list[Path] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        main = next((name[: -len(s)] for s in SIDECARS if name.endswith(s)), name)
        if not _TEMPORARY.match(main):
            continue
        path = folder / main
        if name != main:  # a sidecar: stale when its database is gone or stale
            if not path.exists():
                (folder / name).unlink(missing_ok=True)
                removed.append(folder / name)
            continue
        if _unlocked_removed(path):
            removed.append(path)
    return removed


def _unlocked_removed(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return False  # a running backup's
            raise
        if os.stat(path).st_ino != os.fstat(fd).st_ino:
            return False  # already replaced by a new one
        drop(path)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def drop(database: Path) -> None:
    """A SQLite file and its sidecars, removed (each may be missing)."""
    for suffix in ("", *SIDECARS):
        Path(f"{database}{suffix}").unlink(missing_ok=True)


# stopping -----------------------------------------------------------------------------------
async def in_thread(work: Callable[[threading.Event], T], *, whole: bool = False) -> T:
    """`work(stop)` in a thread. When the calling task is cancelled (the CLI's SIGINT or
    SIGTERM), `stop` is set and the thread is waited for, so its `finally` blocks (removing
    its temporary file) have run before the cancellation goes on. `whole`: work that got
    past its last look at `stop` (a restore's final renames) is not undone: its result is
    returned and the command completes."""
    stop = threading.Event()
    future = asyncio.ensure_future(asyncio.to_thread(work, stop))
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        stop.set()
        try:
            result = await future
        except BaseException:
            raise asyncio.CancelledError from None
        if whole:
            return result
        raise


def checker(stop: threading.Event) -> Callable[..., None]:
    """A callback for SQLite's backup API's `progress`: raises Interrupted once `stop` is set
    (SQLite then abandons the copy)."""
    def progress(*_: object) -> None:
        if stop.is_set():
            raise Interrupted
    return progress


# the final file -----------------------------------------------------------------------------
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


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else "unreadable"
