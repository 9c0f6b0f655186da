"""PostgreSQL's side of `db backup` and `db restore` (bot/storage/backup.py says what each
promises): pg_dump and pg_restore when they are on PATH, a logical copy into a SQLite file
(`db copy` from one REPEATABLE READ snapshot) when not."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from bot.storage.backup import (
    BackupError,
    Checked,
    beside,
    check_backup,
    first_line,
    put_in_place,
    replaceable,
)
from bot.storage.postgres.url import redact
from bot.storage.sqlite.backup import check_file, copy_file, drop, one_file

_TOC_DATA = re.compile(r"^\d+; \d+ \d+ TABLE DATA \S+ (\S+) ", re.MULTILINE)
_COPY = re.compile(r"^COPY (?:\S+\.)?\"?([^\s\"(]+)\"? \(.*\) FROM stdin;$")


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise BackupError(f"{name} is not on PATH: a pg_dump archive needs PostgreSQL's "
                          "client tools (Debian: postgresql-client)")
    return found


def check_archive(file: Path) -> Checked:
    """A pg_dump archive: its table of contents names quizbot's tables, its schema_version
    is one this quizbot reads, and its data is read through to count each table's rows."""
    from bot.storage.postgres.schema import MIGRATIONS

    listing = subprocess.run([_tool("pg_restore"), "--list", str(file)],
                             capture_output=True, text=True, check=False)
    if listing.returncode != 0:
        raise BackupError(f"{file} is damaged ({first_line(listing.stderr)})")
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
        raise BackupError(f"{file} is damaged ({first_line(error)})")
    version = max(versions, default=0)
    if version > len(MIGRATIONS):
        raise BackupError(f"{file} was written by a newer quizbot (schema {version}; this "
                          f"version reads up to {len(MIGRATIONS)})")
    if version == 0:
        raise BackupError(f"{file} is not a quizbot backup (no schema version in it)")
    return Checked("pg_dump", version, counts)


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


async def backup(url: str, file: Path, logical: bool) -> Checked:
    from bot.storage.copy import copy_database, not_ours

    problem = await not_ours(url)
    if problem is not None:
        raise BackupError(problem)
    replaceable(file, url)
    tmp = beside(file, "partial")
    try:
        if logical or shutil.which("pg_dump") is None:
            await copy_database(url, tmp, snapshot=True, say=lambda _: None)
            await asyncio.to_thread(one_file, tmp)
            checked = await asyncio.to_thread(check_file, tmp)
        else:
            target, env = _libpq(url)
            done = await asyncio.to_thread(
                subprocess.run,
                [_tool("pg_dump"), "--format=custom", "--no-owner", f"--file={tmp}",
                 f"--dbname={target}"], capture_output=True, text=True, env=env, check=False)
            if done.returncode != 0:
                raise BackupError(f"pg_dump failed: {redact(first_line(done.stderr))}")
            checked = await asyncio.to_thread(check_archive, tmp)
        put_in_place(tmp, file)
    except BaseException:
        drop(tmp)
        raise
    return checked


async def target_ok(url: str) -> None:
    from bot.storage.copy import in_use, not_ours

    problem = await not_ours(url)
    if problem is not None and "holds no quizbot data yet" not in problem:
        raise BackupError(f"{problem}; nothing was replaced")
    reason = await in_use(url)
    if reason is not None:
        raise BackupError(f"{redact(url)} is in use ({reason}): stop the bots first; "
                          "nothing was replaced")


async def _restore(file: Path, url: str, checked: Checked) -> None:
    if checked.kind == "sqlite":
        from bot.storage.copy import copy_database

        # the copy opens its source with a Storage (which may migrate it): a scratch copy
        # of the backup, so the backup itself stays as it was
        scratch = beside(file, "restoring")
        try:
            await asyncio.to_thread(copy_file, file, scratch)
            await copy_database(scratch, url, force=True, say=lambda _: None)
        finally:
            await asyncio.to_thread(drop, scratch)
        return
    target, env = _libpq(url)
    done = await asyncio.to_thread(subprocess.run, [
        _tool("pg_restore"), "--clean", "--if-exists", "--single-transaction",
        "--exit-on-error", "--no-owner", f"--dbname={target}", str(file),
    ], capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:  # one transaction: nothing of it stayed
        raise BackupError(f"pg_restore failed, nothing was replaced: "
                          f"{redact(first_line(done.stderr))}")


async def restore(file: Path, url: str) -> Checked:
    """Check `file`, check the target may be replaced, then replace it."""
    checked = await asyncio.to_thread(check_backup, file)
    await target_ok(url)
    await _restore(file, url, checked)
    return checked
