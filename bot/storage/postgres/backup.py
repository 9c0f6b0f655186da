"""PostgreSQL's side of `db backup` and `db restore` (bot/storage/backup.py says what each
promises): pg_dump and pg_restore, the checks a pg_dump archive must pass, and whether a
database may be backed up or replaced. (A logical backup is a SQLite file: the command's flow
writes and checks it with `db copy` and SQLite's side.)"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
from contextlib import suppress
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

import asyncpg

from bot.storage.backup_files import BackupError, Checked, Schema, first_line, lacking
from bot.storage.postgres.copy_side import PostgresSide
from bot.storage.postgres.schema import MIGRATIONS, migrate
from bot.storage.postgres.storage import CONNECT_TIMEOUT, check_database, unusable
from bot.storage.postgres.url import redact

_TOC_DATA = re.compile(r"^\d+; \d+ \d+ TABLE DATA \S+ (\S+) ", re.MULTILINE)
_COPY = re.compile(r"^COPY (?:\S+\.)?\"?([^\s\"(]+)\"? \((.*)\) FROM stdin;$")
SCRATCH = "quizbot_expected"  # the schema the expected tables are made in, then rolled back


def has_pg_dump() -> bool:
    return shutil.which("pg_dump") is not None


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise BackupError(f"{name} is not on PATH: a pg_dump archive needs PostgreSQL's "
                          "client tools (Debian: postgresql-client)")
    return found


async def source_ok(url: str) -> None:
    """A database to back up: quizbot's, holding data."""
    problem = await check_database(url)
    if problem is not None:
        raise BackupError(problem.split("; set QUIZBOT_DATABASE")[0])


async def target_ok(url: str) -> None:
    """A database a restore may replace: quizbot's or empty, and no other session on it."""
    problem = await check_database(url)
    if problem is not None and "holds no quizbot data yet" not in problem:
        raise BackupError(f"{problem.split('; set QUIZBOT_DATABASE')[0]}; nothing was replaced")
    side = PostgresSide(url)
    await side.connect()
    try:
        reason = await side.in_use()
    finally:
        await side.close()
    if reason is not None:
        raise BackupError(f"{redact(url)} is in use ({reason}): stop the bots first; "
                          "nothing was replaced")


async def expected_schema(url: str, version: int) -> Schema:
    """The tables and columns the migrations up to `version` create, found by running them
    in a scratch schema of the database at `url` inside a transaction that is rolled back
    (nothing stays)."""
    where = redact(url)
    try:
        db = await asyncpg.connect(url, timeout=CONNECT_TIMEOUT)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        raise BackupError(str(unusable(where, exc))) from None
    try:
        tx = db.transaction()
        await tx.start()
        try:
            scratch = f"{SCRATCH}_{os.getpid()}"
            await db.execute(f'CREATE SCHEMA "{scratch}"')
            await db.execute(f"SET LOCAL search_path TO \"{scratch}\"")
            await migrate(db, where, upto=version)
            rows = await db.fetch(
                "SELECT table_name, column_name FROM information_schema.columns"
                " WHERE table_schema = $1", scratch)
        finally:
            await tx.rollback()
    except asyncpg.PostgresError as exc:
        raise BackupError(f"cannot check the archive against schema {version} on {where}: "
                          f"{exc}") from None
    finally:
        await db.close()
    schema: dict[str, set[str]] = {}
    for table, column in rows:
        schema.setdefault(str(table), set()).add(str(column))
    return {t: frozenset(c) for t, c in schema.items()}


def _read_archive(file: Path) -> tuple[dict[str, int], Schema, int]:
    """From a pg_dump archive: each table's rows, each table's columns (its COPY line), and
    the schema version (schema_version's largest)."""
    listing = subprocess.run([_tool("pg_restore"), "--list", str(file)],
                             capture_output=True, text=True, check=False)
    if listing.returncode != 0:
        raise BackupError(f"{file} is damaged ({first_line(listing.stderr)})")
    tables = set(_TOC_DATA.findall(listing.stdout))
    if not {"schema_version", "answers", "posts", "persons"} <= tables:
        raise BackupError(f"{file} is not a quizbot backup (a pg_dump archive without "
                          "quizbot's tables)")
    counts: dict[str, int] = {}
    columns: dict[str, frozenset[str]] = {}
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
                    columns[table] = frozenset(
                        c.strip().strip('"') for c in match[2].split(","))
            elif line == "\\.":
                table = None
            else:
                counts[table] += 1
                if table == "schema_version":
                    versions.append(int(line.split("\t", 1)[0]))
        error = dump.stderr.read().decode("utf-8", "replace") if dump.stderr else ""
    if dump.returncode != 0:
        raise BackupError(f"{file} is damaged ({first_line(error)})")
    return counts, columns, max(versions, default=0)


async def check_archive(file: Path, url: str) -> Checked:
    """A pg_dump archive: its table of contents names quizbot's tables, its schema_version
    is one this quizbot reads, it holds every table and column that version has (the
    migrations run against `url`'s server in a scratch schema), and its data is read through
    to count each table's rows."""
    counts, columns, version = await asyncio.to_thread(_read_archive, file)
    if version > len(MIGRATIONS):
        raise BackupError(f"{file} was written by a newer quizbot (schema {version}; this "
                          f"version reads up to {len(MIGRATIONS)})")
    if version == 0:
        raise BackupError(f"{file} is not a quizbot backup (no schema version in it)")
    parts = lacking(await expected_schema(url, version), columns)
    if parts:
        raise BackupError(f"{file} is incomplete: schema {version} has {'; '.join(parts)}, "
                          "which the archive lacks")
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


async def _run(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    """A client tool's exit status and error text. Cancelled (SIGINT, SIGTERM), it is
    stopped and waited for first: pg_dump leaves no writer behind its partial file, and
    pg_restore's one transaction is rolled back."""
    started = asyncio.ensure_future(asyncio.create_subprocess_exec(
        *args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env=env))
    proc: asyncio.subprocess.Process | None = None
    try:
        proc = await asyncio.shield(started)  # a cancel while it starts still stops it
        _, err = await proc.communicate()
    except asyncio.CancelledError:
        proc = proc or await started
        with suppress(ProcessLookupError):
            proc.terminate()
        await proc.wait()
        raise
    return int(proc.returncode or 0), err.decode("utf-8", "replace")


async def dump(url: str, tmp: Path) -> Checked:
    """pg_dump's archive of `url` written to `tmp` (a temporary file), and checked."""
    target, env = _libpq(url)
    code, error = await _run([_tool("pg_dump"), "--format=custom", "--no-owner",
                              f"--file={tmp}", f"--dbname={target}"], env)
    if code != 0:
        raise BackupError(f"pg_dump failed: {redact(first_line(error))}")
    return await check_archive(tmp, url)


async def restore_archive(file: Path, url: str) -> None:
    """A checked pg_dump archive put in place of `url`'s tables, in one transaction."""
    target, env = _libpq(url)
    code, error = await _run([
        _tool("pg_restore"), "--clean", "--if-exists", "--single-transaction",
        "--exit-on-error", "--no-owner", f"--dbname={target}", str(file),
    ], env)
    if code != 0:  # one transaction: nothing of it stayed
        raise BackupError(f"pg_restore failed, nothing was replaced: "
                          f"{redact(first_line(error))}")
