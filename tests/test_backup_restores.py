"""Restores that verify and backups that leave nothing behind (bot/storage/backup.py): a backup
lacking any table, column or index of its schema is refused with one line and nothing changed
(SQLite and pg_dump); every restore keeps its own pre-restore copy; a backup killed with
SIGKILL leaves a partial file the next backup into that folder removes, whatever its name; a
backup or restore stopped by SIGTERM or SIGINT removes its own and exits with one line.
The PostgreSQL cases need QUIZBOT_TEST_POSTGRES_URL (skipped without it)."""

from __future__ import annotations

import asyncio
import fcntl
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import asyncpg
import pytest

from bot.storage.backup import BackupError, backup_database, check_backup, restore_database
from bot.storage.backup_files import in_thread
from bot.storage.copy import copy_database
from bot.storage.sqlite.connection import APPLICATION_ID
from bot.storage.sqlite.migrations import MIGRATIONS, split_sql
from bot.storage.sqlite.verify import expected_schema
from tests.test_backup import (
    ROOT,
    answer_count,
    answers,
    kept_copy,
    pg_communities,
    quizbot,
    snapshot,
)


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def interrupted(sig: str, *args: str, cwd: Path,
                database: str | Path) -> subprocess.CompletedProcess[str]:
    """`quizbot ARGS` sending itself `sig` as its copy begins (tests/interrupted_backup.py)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZBOT_")}
    env.update(PYTHONPATH=str(ROOT), QUIZBOT_DATABASE=str(database))
    return subprocess.run([sys.executable, "-m", "tests.interrupted_backup", sig, *args],
                          cwd=cwd, capture_output=True, text=True, env=env, timeout=120)


def damaged_copy(good: Path, to: Path, *statements: str) -> Path:
    shutil.copy(good, to)
    with sqlite3.connect(to) as db:
        for statement in statements:
            db.execute(statement)
    db.close()
    return to


async def test_a_backup_lacking_a_table_column_or_index_is_refused_and_changes_nothing(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    live = folder / "quiz.db"
    await answers(live)
    good = tmp_path / "good.db"
    await backup_database(live, good)
    tables = sorted(expected_schema(len(MIGRATIONS)))  # the migrations' own tables
    assert {"answers", "posts", "persons", "rank_counts"} <= set(tables)
    for table in tables:  # each one missing is refused, naming it
        file = damaged_copy(good, tmp_path / f"without-{table}.db", f'DROP TABLE "{table}"')
        with pytest.raises(BackupError) as refused:
            await check_backup(file)
        assert re.search(rf"is incomplete: schema {len(MIGRATIONS)} has table {table}[;,]",
                         str(refused.value)), (table, refused.value)
        file.unlink()
    cases = {
        damaged_copy(good, tmp_path / "no-answers.db", "DROP TABLE answers"): "table answers",
        damaged_copy(good, tmp_path / "no-title.db", "ALTER TABLE chats DROP COLUMN title"):
            "column chats.title",
        damaged_copy(good, tmp_path / "no-index.db", "DROP INDEX posts_open"): "index posts_open",
    }
    before = snapshot(folder)
    for file, why in cases.items():
        proc = await asyncio.to_thread(quizbot, "db", "restore", str(file), cwd=tmp_path,
                                       database=live)
        assert proc.returncode == 1, (file, proc.stdout, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1 and "is incomplete" in proc.stderr
        assert why in proc.stderr and "which the file lacks" in proc.stderr, proc.stderr
        assert snapshot(folder) == before, file  # nothing replaced, nothing kept aside
    proc = await asyncio.to_thread(quizbot, "db", "restore", str(good), cwd=tmp_path,
                                   database=live)
    assert proc.returncode == 0, proc.stderr


async def test_an_older_schema_is_checked_against_its_own_version(tmp_path: Path) -> None:
    """A backup of an older schema lacks what later migrations add, and is not refused for
    it (a bot migrates it when it opens it); what its own version has must be there."""
    old = tmp_path / "old.db"
    with sqlite3.connect(old, isolation_level=None) as db:
        for script in MIGRATIONS[:3]:
            for statement in split_sql(script):
                db.execute(statement)
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute("PRAGMA user_version = 3")
    db.close()
    assert (await check_backup(old)).version == 3
    dropped = damaged_copy(old, tmp_path / "old-without-posts.db", "DROP TABLE posts")
    with pytest.raises(BackupError, match="schema 3 has table posts"):
        await check_backup(dropped)


async def test_every_restore_keeps_its_own_pre_restore_copy(tmp_path: Path) -> None:
    live = tmp_path / "quiz.db"
    await answers(live, posts=1)
    backup = tmp_path / "backup.db"
    await backup_database(live, backup)
    older = tmp_path / "quiz.db.before-restore"  # what an earlier quizbot kept
    older.write_bytes(b"an earlier quizbot's pre-restore copy")
    kept = []
    for n in range(3):  # quicker than a second apart: the names still differ
        await answers(live, posts=n + 1, start=10 * (n + 1))
        kept.append(kept_copy(await restore_database(live, backup), live))
        assert answer_count(live) == 5
    assert len(set(kept)) == 3, kept
    assert [answer_count(k) for k in kept] == [10, 15, 20]
    assert older.read_bytes() == b"an earlier quizbot's pre-restore copy"


async def test_a_killed_backup_leaves_a_partial_file_the_next_backup_removes(
    tmp_path: Path,
) -> None:
    live = tmp_path / "quiz.db"
    await answers(live, posts=20)
    backups = tmp_path / "backups"
    backups.mkdir()
    proc = await asyncio.to_thread(interrupted, "SIGKILL", "db", "backup",
                                   str(backups / "monday.db"), cwd=tmp_path, database=live)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    left = hidden(backups)
    assert any(re.fullmatch(r"\.monday\.db\.partial-\d+-[0-9a-f]+", n) for n in left), left
    assert not (backups / "monday.db").exists()
    # a backup running now: its partial file is locked, and stays
    running = backups / f".tuesday.db.partial-{os.getpid()}-0a0a"
    fd = os.open(running, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        # an earlier quizbot's, killed in a container where every run is pid 1 (alive)
        (backups / ".nightly.db.partial-1").write_bytes(b"x" * 4096)
        (backups / ".nightly.db.partial-1-journal").write_bytes(b"x" * 512)
        (backups / ".keep").write_text("somebody's hidden file")
        await backup_database(live, backups / "wednesday.db")  # another name, same folder
        assert hidden(backups) == [".keep", running.name]
        assert answer_count(backups / "wednesday.db") == 100
    finally:
        os.close(fd)


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
async def test_a_backup_or_restore_stopped_by_a_signal_removes_its_partial_file(
    sig: str, tmp_path: Path
) -> None:
    live = tmp_path / "quiz.db"
    await answers(live, posts=20)
    backups = tmp_path / "backups"
    backups.mkdir()
    nightly = backups / "nightly.db"
    await backup_database(live, nightly)
    await answers(live, posts=1, start=20)
    before = snapshot(backups)
    number = getattr(signal, sig)
    proc = await asyncio.to_thread(interrupted, sig, "db", "backup", str(nightly),
                                   cwd=tmp_path, database=live)
    assert proc.returncode == 128 + number, proc.stderr
    assert proc.stderr.splitlines() == [
        f"quizbot: the backup was stopped by {sig}: its partial file was removed; nothing "
        "was written"], proc.stderr
    assert snapshot(backups) == before  # the earlier backup as it was, nothing beside it
    assert not hidden(backups)
    folder = snapshot(tmp_path)
    proc = await asyncio.to_thread(interrupted, sig, "db", "restore", str(nightly),
                                   cwd=tmp_path, database=live)
    assert proc.returncode == 128 + number, proc.stderr
    assert proc.stderr.splitlines() == [
        f"quizbot: the restore was stopped by {sig}: nothing was replaced"], proc.stderr
    assert snapshot(tmp_path) == folder  # no copy kept aside, no scratch file left
    assert answer_count(live) == 105


async def pg_dump_of(url: str, to: Path) -> Path:
    done = await asyncio.to_thread(subprocess.run, [
        "pg_dump", "--format=custom", "--no-owner", f"--file={to}", f"--dbname={url}"],
        capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return to


async def test_postgres_restore_refuses_an_archive_lacking_a_table_or_column(
    tmp_path: Path,
) -> None:
    source = tmp_path / "quiz.db"
    async with pg_communities(source, 2) as (damaged, target):
        good = tmp_path / "good.dump"
        await backup_database(damaged, good)
        db = await asyncpg.connect(damaged)
        try:
            await db.execute("ALTER TABLE chats DROP COLUMN title")
            no_title = await pg_dump_of(damaged, tmp_path / "no-title.dump")
            await db.execute("DROP TABLE rank_counts CASCADE")
            no_counts = await pg_dump_of(damaged, tmp_path / "no-rank-counts.dump")
        finally:
            await db.close()
        await answers(source, posts=1, start=3)  # the target changes after the backup
        await copy_database(source, target, force=True, say=lambda _: None)
        for file, why in ((no_title, "has column chats.title"),
                          (no_counts, "has table rank_counts")):
            proc = await asyncio.to_thread(quizbot, "db", "restore", str(file), cwd=tmp_path,
                                           database=target)
            assert proc.returncode == 1, proc.stderr
            assert len(proc.stderr.splitlines()) == 1, proc.stderr
            assert "is incomplete" in proc.stderr and why in proc.stderr, proc.stderr
        db = await asyncpg.connect(target)
        try:
            assert await db.fetchval("SELECT count(*) FROM answers") == 20  # untouched
            assert await db.fetchval(  # the scratch schema of the check rolled back
                "SELECT count(*) FROM information_schema.schemata"
                " WHERE schema_name LIKE 'quizbot_expected%'") == 0
        finally:
            await db.close()
        await restore_database(target, good)


async def test_pg_dump_and_pg_restore_stopped_by_sigterm_leave_nothing(tmp_path: Path) -> None:
    source = tmp_path / "quiz.db"
    async with pg_communities(source, 1) as (live,):
        backups = tmp_path / "backups"
        backups.mkdir()
        proc = await asyncio.to_thread(interrupted, "SIGTERM", "db", "backup",
                                       str(backups / "quiz.dump"), cwd=tmp_path, database=live)
        assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
        assert "the backup was stopped by SIGTERM" in proc.stderr
        assert list(backups.iterdir()) == []
        archive = backups / "whole.dump"
        await backup_database(live, archive)
        await answers(source, posts=1, start=3)
        await copy_database(source, live, force=True, say=lambda _: None)
        proc = await asyncio.to_thread(interrupted, "SIGTERM", "db", "restore", str(archive),
                                       cwd=tmp_path, database=live)
        assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
        assert "the restore was stopped by SIGTERM" in proc.stderr, proc.stderr
        db = await asyncpg.connect(live)
        try:
            assert await db.fetchval("SELECT count(*) FROM answers") == 20  # rolled back
        finally:
            await db.close()
        assert sorted(p.name for p in backups.iterdir()) == ["whole.dump"]


@pytest.mark.parametrize("whole", [False, True])
async def test_a_stop_during_work_that_cannot_look_at_it_cancels_or_finishes_whole(
    whole: bool,
) -> None:
    """Ctrl-C during a check (work that never looks at `stop`) must not let the restore go on
    once the check ends; a restore's final renames (`whole`) are finished, not half undone."""
    started, release = threading.Event(), threading.Event()
    after: list[str] = []

    def work(stop: threading.Event) -> str:
        started.set()
        release.wait(60)
        return "checked"

    async def command() -> None:
        after.append(await in_thread(work, whole=whole))
        after.append("replaced")

    task = asyncio.ensure_future(command())
    await asyncio.to_thread(started.wait, 60)
    task.cancel()  # while the thread runs: the task waits for it either way
    release.set()
    if whole:
        await task
        assert after == ["checked", "replaced"]
    else:
        with pytest.raises(asyncio.CancelledError):
            await task
        assert after == []
