"""`quizbot db backup FILE` and `quizbot db restore FILE` (bot/storage/backup.py): a backup
taken while another process writes a burst of answers restores to a database whose boards equal
a recount from its answers; a damaged, foreign or too-new file is refused with one line, exit
1, and the database untouched. The PostgreSQL cases need QUIZBOT_TEST_POSTGRES_URL (skipped
without it)."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import pytest

from bot import health
from bot.core.ports import AnswerRecord
from bot.storage import SqliteStorage, storage_for
from bot.storage.backup import BackupError, backup_database, restore_database
from bot.storage.sqlite.migrations import MIGRATIONS
from tests.storage_contract.backends import Backend, PostgresBackend, SqliteBackend
from tests.storage_contract.pg import fresh_database

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def quizbot(*args: str, cwd: Path, database: str | Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZBOT_")}
    env.update(PYTHONPATH=str(ROOT), QUIZBOT_DATABASE=str(database))
    return subprocess.run([sys.executable, "-m", "bot", *args], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=120)


async def answers(path: Path, posts: int = 4, start: int = 0) -> None:
    async with SqliteStorage(path) as store:
        for n in range(start, start + posts):
            post = await store.create_post(f"tg:-{n % 2}", "sample", "s-one", (0, 1, 2), "en",
                                           NOW + timedelta(minutes=n))
            for p in range(5):
                await store.record_answer(AnswerRecord(post.id, f"tg:{p}", p % 3, p % 2 == 0,
                                                       NOW + timedelta(minutes=n), 100 * p))


def answer_count(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT count(*) FROM answers").fetchone()[0])


@asynccontextmanager
async def pg_communities(source: Path, count: int) -> AsyncIterator[list[str]]:
    """`count` fresh PostgreSQL databases, each a `db copy` of the SQLite file `source`, to
    which three posts' answers are written first; pg_dump on PATH, else skipped."""
    if shutil.which("pg_dump") is None:
        pytest.skip("pg_dump is not on PATH")
    from bot.storage.copy import copy_database

    await answers(source, posts=3)
    async with AsyncExitStack() as stack:
        urls = [await stack.enter_async_context(fresh_database()) for _ in range(count)]
        for url in urls:
            await copy_database(source, url, say=lambda _: None)
        yield urls


def leftovers(folder: Path) -> list[Path]:
    """Temporary files a backup or restore left beside its files."""
    return [p for p in folder.iterdir() if p.name.startswith(".")]


def kept_copy(said: str, live: Path) -> Path:
    """The pre-restore copy a restore's line names: `<database>.before-restore-<UTC time>`."""
    match = re.search(rf"the database it replaced is kept as ({re.escape(str(live))}"
                      r"\.before-restore-\d{8}T\d{6}Z(?:-\d+)?)$", said)
    assert match, said
    return Path(match[1])


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file in the folder and its bytes: "untouched" means this does not change."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("kind", ["sqlite", "pg_dump", "logical"])
async def test_a_backup_taken_during_a_burst_restores_to_boards_equal_to_a_recount(
    kind: str, tmp_path: Path
) -> None:
    async with AsyncExitStack() as stack:
        if kind == "sqlite":
            live: str = str(tmp_path / "live.db")
            target: str = str(tmp_path / "restored.db")
            backend: Backend = SqliteBackend(Path(target))
        else:
            if kind == "pg_dump" and shutil.which("pg_dump") is None:
                pytest.skip("pg_dump is not on PATH")
            live = await stack.enter_async_context(fresh_database())
            target = await stack.enter_async_context(fresh_database())
            backend = PostgresBackend(target)
        stop = tmp_path / "stop"
        writer = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.burst_writer", live, str(stop), cwd=ROOT,
            stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        try:
            assert writer.stdout is not None
            assert await asyncio.wait_for(writer.stdout.readline(), 60) == b"writing\n"
            backups = []
            for n in range(3):
                file = tmp_path / f"backup-{n}"
                line = await backup_database(live, file, logical=kind == "logical")
                assert line.startswith("backed up") and str(file) in line
                assert writer.returncode is None  # taken while the burst goes on
                backups.append(file)
                await asyncio.sleep(0.3)
        finally:
            stop.touch()
            await asyncio.wait_for(writer.wait(), 60)
        assert writer.returncode == 0
        async with storage_for(live):
            pass
        written = await count_answers(live)
        seen = []
        for file in backups:
            said = await restore_database(target, file)
            assert said.startswith("restored")
            async with storage_for(target):  # a bot starting on it: the boards catch up
                pass
            seen.append(await backend.count("answers"))
            assert await backend.stored() == await backend.recount(), file
        assert 200 <= seen[0] <= seen[1] <= seen[2] < written, (seen, written)
        assert not leftovers(tmp_path)


async def count_answers(database: str) -> int:
    if "://" in database:
        db = await asyncpg.connect(database)
        try:
            return int(await db.fetchval("SELECT count(*) FROM answers"))
        finally:
            await db.close()
    return answer_count(Path(database))


async def test_restore_refuses_a_damaged_foreign_or_too_new_file_and_changes_nothing(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    live = folder / "quiz.db"
    await answers(live)
    good = tmp_path / "good.db"
    await backup_database(live, good)
    pages = bytearray(good.read_bytes())
    damaged = tmp_path / "damaged.db"
    pages[4096 * 3: 4096 * 6] = b"\x5a" * (4096 * 3)  # three pages of junk
    damaged.write_bytes(bytes(pages))
    truncated = tmp_path / "truncated.db"
    truncated.write_bytes(good.read_bytes()[: len(pages) // 3])
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        db.execute("INSERT INTO notes VALUES (1, 'somebody else''s')")
    db.close()
    too_new = tmp_path / "too-new.db"
    shutil.copy(good, too_new)
    with sqlite3.connect(too_new) as db:
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    db.close()
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 100)
    before = snapshot(folder)
    cases = {
        damaged: "is damaged", truncated: "", foreign: "is not a quizbot database",
        too_new: "was written by a newer quizbot", text: "is not a quizbot backup",
        tmp_path / "missing.db": "no such file",
    }
    for file, why in cases.items():
        proc = await asyncio.to_thread(quizbot, "db", "restore", str(file), cwd=tmp_path,
                                       database=live)
        assert proc.returncode == 1, (file, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1 and why in proc.stderr, proc.stderr
        assert proc.stdout == ""
        assert snapshot(folder) == before, file  # nothing replaced, nothing left beside
    proc = await asyncio.to_thread(quizbot, "db", "restore", str(good), cwd=tmp_path,
                                   database=live)
    assert proc.returncode == 0, proc.stderr


async def test_a_restore_replaces_the_database_whole_and_keeps_the_one_it_replaced(
    tmp_path: Path,
) -> None:
    live = tmp_path / "quiz.db"
    await answers(live, posts=4)
    backup = tmp_path / "backup.db"
    said = await backup_database(live, backup)
    assert "persons 5, posts 4, answers 20" in said
    await answers(live, posts=3, start=4)  # written after the backup
    health.beat(live, ["Telegram"])  # a running bot
    with pytest.raises(BackupError, match="stop the bot first; nothing was replaced"):
        await restore_database(live, backup)
    assert answer_count(live) == 35
    health.heartbeat_path(live).unlink()
    said = await restore_database(live, backup)
    kept = kept_copy(said, live)
    assert answer_count(live) == 20
    assert answer_count(kept) == 35
    assert not leftovers(tmp_path)
    async with SqliteStorage(live) as store:  # a bot can start on it
        rows, _ = await store.leaderboard(None, None, 10, "tg:0")
        assert sum(row.answered for row in rows) == 20


async def test_backup_never_writes_over_a_file_that_is_not_a_backup(tmp_path: Path) -> None:
    live = tmp_path / "quiz.db"
    await answers(live, posts=1)
    notes = tmp_path / "notes.txt"
    notes.write_text("keep me")
    proc = await asyncio.to_thread(quizbot, "db", "backup", str(notes), cwd=tmp_path,
                                   database=live)
    assert proc.returncode == 1 and "is not a quizbot backup; nothing was written" in proc.stderr
    assert notes.read_text() == "keep me"
    with pytest.raises(BackupError, match="is the database itself"):
        await backup_database(live, tmp_path / "." / "quiz.db")
    missing = tmp_path / "missing.db"  # a mistyped QUIZBOT_DATABASE is not created
    proc = await asyncio.to_thread(quizbot, "db", "backup", str(tmp_path / "b.db"),
                                   cwd=tmp_path, database=missing)
    assert proc.returncode == 1 and "there is no database at" in proc.stderr
    assert not missing.exists() and not (tmp_path / "b.db").exists()
    first = tmp_path / "nightly.db"  # an earlier backup is replaced by the next
    dead = 2**22 + 1  # above any pid_max: no such process
    left = tmp_path / f".nightly.db.partial-{dead}"
    left.write_bytes(b"half a backup a kill -9 left")
    await backup_database(live, first)
    assert not leftovers(tmp_path)
    await answers(live, posts=1, start=1)
    await backup_database(live, first)
    assert answer_count(first) == 10


async def test_postgres_restore_refuses_a_damaged_archive_and_a_foreign_target(
    tmp_path: Path,
) -> None:
    source = tmp_path / "quiz.db"
    async with pg_communities(source, 2) as (live, target):
        from bot.storage.copy import copy_database

        archive = tmp_path / "quiz.dump"
        said = await backup_database(live, archive)
        assert "pg_dump, custom format" in said and "answers 15" in said
        cut = tmp_path / "cut.dump"
        cut.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
        await answers(source, posts=1, start=3)  # the target changes after the backup
        await copy_database(source, target, force=True, say=lambda _: None)
        for file, why in ((cut, "is damaged"), (tmp_path / "none.dump", "no such file")):
            proc = await asyncio.to_thread(quizbot, "db", "restore", str(file), cwd=tmp_path,
                                           database=target)
            assert proc.returncode == 1 and why in proc.stderr, proc.stderr
            assert len(proc.stderr.splitlines()) == 1
            assert await count_answers(target) == 20  # untouched
        await restore_database(target, archive)
        assert await count_answers(target) == 15
        db = await asyncpg.connect(target)
        try:
            await db.execute("CREATE TABLE their_notes (id int)")  # not quizbot's any more
            await db.execute("DROP TABLE schema_version CASCADE")
        finally:
            await db.close()
        with pytest.raises(BackupError, match="is not a quizbot database"):
            await restore_database(target, archive)
