"""`quizbot db copy SRC DST` and `quizbot db migrate`: a community moves from its SQLite file to
PostgreSQL and back with every row and id kept and the same boards; an interrupted copy (an
error, or kill -9) continues when run again; a destination that holds a community is refused
unless --force. The PostgreSQL cases need QUIZBOT_TEST_POSTGRES_URL (skipped without it)."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from fsrs.scheduler import DEFAULT_PARAMETERS

from bot import health
from bot.app import Exit
from bot.core.ports import (
    AnswerRecord,
    AuthoredPackRecord,
    ChatSettingsRecord,
    NewAssignment,
    NewLive,
    NewPost,
    NewProblemReport,
    ReviewFit,
    Revote,
    StorageError,
)
from bot.core.schedule import Schedule
from bot.storage import SqliteStorage, storage_for
from bot.storage.copy import CopyError, copy_database, side_for
from bot.storage.copy_rows import TABLES
from tests.storage_contract.pg import fresh_database

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


async def community(path: Path, posts: int = 30, people: int = 120) -> None:
    """A SQLite community with a bit of everything: runs, refs, answers over days (names
    beyond ASCII), a schedule, daily claims (one answered), closed posts."""
    rng = random.Random(7)
    async with SqliteStorage(path) as store:
        run = await store.create_run("tg:1", "tg:1", "sample", ("s-one", "s-two"), "bn", NOW)
        await store.finish_run(run.id, NOW + timedelta(minutes=3))
        for n in range(posts):
            when = NOW + timedelta(days=n % 9, minutes=n)
            post = await store.create_post(
                f"tg:-{n % 4}", "sample", "s-one", (2, 0, 1), "en", when,
                closes_at=when + timedelta(minutes=10), run_id=run.id if n == 0 else None,
            )
            await store.bind_ref(post.id, f"tg-poll:{n}")
            await asyncio.gather(*(
                store.record_answer(AnswerRecord(
                    post.id, f"tg:{p}", rng.randrange(3), rng.random() < 0.5, when,
                    rng.randrange(9000), name=f"প্রিয় {p}"))
                for p in rng.sample(range(people), people // 2)
            ))
            if n % 3 == 0:
                await store.close_post(post.id, when + timedelta(minutes=10), quiet=n % 2 == 0)
        await store.set_person_locale("tg:3", "hi")
        await store.upsert_chat("tg:-1", "গ্রুপ", platform_locale="bn")
        await store.set_chat_locale("tg:-1", "bn")
        await store.revoke_dashboard("tg:-1")  # the dashboard's generation (bot/web)
        await store.set_upload("tg:card:abc", "file-1", NOW)  # a card's platform file id
        await store.set_schedule(Schedule("tg:-1", time(9, 30), "Asia/Dhaka", "sample", 60,
                                          updated_at=NOW))
        for day in (date(2026, 3, 1), date(2026, 3, 2)):
            daily = NewPost("tg:-1", "sample", "s-two", (1, 0, 2), "en", NOW, kind="daily")
            claimed = await store.claim_daily("tg:-1", day, daily, NOW)
            assert claimed is not None
            await store.record_answer(AnswerRecord(claimed.id, "tg:5", 0, True, NOW, 5))
        assert claimed is not None  # the last day's
        await store.mark_daily_published(claimed.id, NOW)
        await store.set_chat_settings(ChatSettingsRecord("tg:-1", 45, "buttons", True), NOW,
                                      "tg:1")
        for total in (2, 3):  # one finished round, one running
            rnd = await store.create_round("tg:-2", "sample", total, None, "hi", NOW)
            for step in range(2):
                assert await store.add_round_post(rnd.id, step, NewPost(
                    "tg:-2", "sample", "s-one", (0, 2, 1), "hi", NOW)) is not None
            if total == 2:
                await store.finish_round(rnd.id, NOW + timedelta(minutes=5))
        await store.set_reminder(Schedule("tg:7", time(7, 30), "Asia/Kolkata", updated_at=NOW))
        assert await store.claim_reminder("tg:7", date(2026, 3, 2), NOW)
        for question in ("s-one", "s-two"):  # one problem report resolved, one open
            _, problem = await store.add_problem_report(NewProblemReport(
                "sample", question, "tg:3", "প্রিয় 3", "tg:-1", "ভুল উত্তর?", NOW,
            ), since=NOW - timedelta(days=1), daily_cap=10, max_chars=4000)
            assert problem is not None
        assert problem is not None  # the last question's
        assert await store.resolve_problem_report(problem.id, NOW, "fixed") == "resolved"
        await store.add_draft_question("tg:7", "bn", '{"prompt": "?"}', "tg-msg:7:1", NOW)
        await store.set_draft_photo("tg:7", "bn", b"\x89PNG\r\n\x1a\n\x00 waiting", NOW)
        await store.publish_draft(AuthoredPackRecord(
            "authored", "tg:8", "id: authored\n", NOW,
            files=(("images/authored-1.jpg", bytes(range(256))),)))
        # a peer round that went to a revote, and a live session paused mid-question
        peer = await store.create_live(NewLive("tg:-3", "peer", "tg:1", None, 1, 60, False, 0,
                                               "bn", NOW))
        assert peer is not None
        asked = await store.add_live_step(peer.id, 0, NewPost(
            "tg:-3", "sample", "s-one", (2, 0, 1), "bn", NOW, kind="live"))
        assert asked is not None
        await store.record_revote(asked.id, Revote("tg:2", 2, True, NOW))
        await store.save_live(replace(peer, state="over", finished_at=NOW))
        live = await store.create_live(NewLive("tg:-4", "host", "tg:1", "sample", 3, 30, True,
                                               2, "hi", NOW))
        assert live is not None
        await store.join_live(live.id, "tg:2", "প্রিয়", 2, NOW)
        await store.add_live_step(live.id, 0, NewPost(
            "tg:-4", "sample", "s-two", (0, 1, 2), "hi", NOW, kind="live"))
        await store.skip_live_step(live.id, 0)
        await store.save_live(replace(live, state="paused", paused_ms=12_000))
        # an assignment (bot/core/assignments.py) taken in the run, reminded, summed up
        assignment = await store.create_assignment(NewAssignment(
            "tg:-1", "sample", ("sample",), 3, "tok", "bn", "Asia/Dhaka",
            NOW + timedelta(days=2), NOW + timedelta(days=1), NOW, "tg:1"))
        await store.add_assignment_run(assignment, run.id, "tg:1", "sample")
        assert await store.claim_assignment_reminder(assignment, "tg:1", NOW)
        assert await store.claim_assignment_summary(assignment, NOW + timedelta(days=2))
        await store.mark_assignment_summary_posted(assignment, NOW + timedelta(days=2))
        # a person's fitted review parameters (bot/core/fsrs_fit.py): copied, not refitted
        await store.save_fit("tg:1", ReviewFit(DEFAULT_PARAMETERS, 400, 300), NOW)


async def rows(database: str | Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every copied table, row by row, as plain values (the same on both backends)."""
    side = side_for(database)
    await side.connect()
    try:
        return {t.name: await side.batch(t, None, 1_000_000) for t in TABLES}
    finally:
        await side.close()


async def boards(database: str | Path) -> list[Any]:
    store = storage_for(database)
    async with store:
        found: list[Any] = []
        for chat in (None, "tg:-1", "tg:-2"):
            for since in (None, NOW + timedelta(days=8), NOW + timedelta(days=2)):
                found.append(await store.leaderboard(chat, since, 10, "tg:7"))
        found.append(await store.person_streaks("tg:7"))
        found.append(await store.daily_days("tg:5"))
        found.append(await store.person_totals("tg:7"))
        return found


@pytest.fixture
async def pg() -> AsyncIterator[str]:
    async with fresh_database() as url:
        yield url


@pytest.fixture
async def pg2() -> AsyncIterator[str]:
    async with fresh_database() as url:
        yield url


async def test_sqlite_to_postgres_and_back_keeps_every_row_and_board(
    tmp_path: Path, pg: str
) -> None:
    source = tmp_path / "community.db"
    await community(source)
    said: list[str] = []
    report = await copy_database(source, pg, batch=97, say=said.append)
    assert not report.resumed
    assert not {t: n for t, n in report.counts.items() if n[0] != n[1] or not n[0]}
    assert await rows(pg) == await rows(source)
    assert await boards(pg) == await boards(source)
    assert any("answers: 1,802 rows" in line for line in said), said

    back = tmp_path / "back.db"
    await copy_database(pg, back, batch=1000, say=said.append)
    assert await rows(back) == await rows(source)
    assert await boards(back) == await boards(source)
    # each copy goes on where its source left off: new ids after the copied ones
    for database in (pg, back):
        async with storage_for(database) as store:
            post = await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)
            assert post.id == 39  # 30 posts, 2 daily, 4 round and 2 live questions copied
            outcome, _ = await store.record_answer(AnswerRecord(post.id, "tg:1", 0, True, NOW, 1))
            assert outcome == "inserted"


async def test_postgres_to_postgres(pg: str, pg2: str, tmp_path: Path) -> None:
    source = tmp_path / "community.db"
    await community(source, posts=8)
    await copy_database(source, pg, say=lambda _: None)
    await copy_database(pg, pg2, batch=50, say=lambda _: None)
    assert await rows(pg2) == await rows(source)


async def test_an_interrupted_copy_continues_where_it_stopped(
    tmp_path: Path, pg: str
) -> None:
    source = tmp_path / "community.db"
    await community(source)

    class Crash(Exception):
        pass

    def crash_in_answers(table: str, copied: int) -> None:
        if table == "answers" and copied >= 600:
            raise Crash()

    with pytest.raises(Crash):
        await copy_database(source, pg, batch=100, say=lambda _: None,
                            after_batch=crash_in_answers)
    partly = await rows(pg)
    assert len(partly["answers"]) == 600 and partly["schedules"] == []
    said: list[str] = []
    batches: list[tuple[str, int]] = []
    report = await copy_database(source, pg, batch=100, say=said.append,
                                 after_batch=lambda t, n: batches.append((t, n)))
    assert report.resumed and said[0].startswith("resuming")
    assert batches[0] == ("answers", 700)  # nothing copied twice, nothing skipped
    assert await rows(pg) == await rows(source)
    assert await boards(pg) == await boards(source)


async def test_kill_9_during_a_copy_then_run_again(tmp_path: Path, pg: str) -> None:
    source = tmp_path / "community.db"
    await community(source, posts=40, people=200)
    env = {**os.environ, "QUIZBOT_LOG_LEVEL": "WARNING"}
    command = [sys.executable, "-m", "bot", "db", "copy", str(source), pg, "--batch-size", "20"]
    child = await asyncio.create_subprocess_exec(
        *command, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    probe = side_for(pg)
    for _ in range(20_000):  # polled: the kill lands in the middle of the answers
        await asyncio.sleep(0.005)
        try:
            await probe.connect()
            try:
                if await probe.count("answers") >= 500:
                    break
            finally:
                await probe.close()
        except Exception:  # the schema is not there yet
            continue
    child.send_signal(signal.SIGKILL)
    await child.wait()
    copied = len((await rows(pg))["answers"])
    assert 500 <= copied < 4000
    done = await asyncio.create_subprocess_exec(
        *command, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    out, err = await done.communicate()
    assert done.returncode == 0, err.decode()
    lines = out.decode().splitlines()
    assert lines[0].startswith("resuming the copy") and "equal" in lines[-1], lines
    assert await rows(pg) == await rows(source)


async def test_a_destination_with_a_community_is_refused_unless_forced(
    tmp_path: Path, pg: str
) -> None:
    source, other = tmp_path / "one.db", tmp_path / "two.db"
    await community(source, posts=4)
    await community(other, posts=2)
    await copy_database(other, pg, say=lambda _: None)
    before = await rows(pg)
    with pytest.raises(CopyError, match="already holds a community; add --force"):
        await copy_database(source, pg, say=lambda _: None)
    assert await rows(pg) == before  # untouched
    said: list[str] = []
    await copy_database(source, pg, force=True, say=said.append)
    assert said[0].startswith("emptying")
    assert await rows(pg) == await rows(source)
    # the other way round too: a SQLite file with a community
    with pytest.raises(CopyError, match="already holds a community"):
        await copy_database(pg, other, say=lambda _: None)
    await copy_database(pg, other, force=True, say=lambda _: None)
    assert await rows(other) == await rows(source)


async def test_an_unfinished_copy_from_another_source_is_refused(
    tmp_path: Path, pg: str
) -> None:
    source, other = tmp_path / "one.db", tmp_path / "two.db"
    await community(source, posts=4)
    await community(other, posts=2)

    def stop(table: str, copied: int) -> None:
        if table == "posts":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        await copy_database(source, pg, batch=2, say=lambda _: None, after_batch=stop)
    with pytest.raises(CopyError, match="unfinished copy from another database"):
        await copy_database(other, pg, say=lambda _: None)
    await copy_database(source, pg, say=lambda _: None)
    assert await rows(pg) == await rows(source)


async def test_refusals_without_postgres(tmp_path: Path) -> None:
    source = tmp_path / "one.db"
    await community(source, posts=2)
    with pytest.raises(CopyError, match="the same database"):
        await copy_database(source, tmp_path / "." / "one.db", say=lambda _: None)
    theirs = tmp_path / "theirs.db"
    theirs.write_text("not a database, somebody's notes\n" * 20)
    with pytest.raises(StorageError):
        await copy_database(source, theirs, say=lambda _: None)
    assert theirs.read_text().startswith("not a database")
    copy = tmp_path / "copy.db"
    await copy_database(source, copy, say=lambda _: None)  # SQLite to SQLite works too
    assert await rows(copy) == await rows(source)


async def test_rows_in_a_table_the_copy_does_not_know_are_never_left_behind(
    tmp_path: Path,
) -> None:
    source, destination = tmp_path / "one.db", tmp_path / "copy.db"
    await community(source, posts=2)
    add_table(source)
    with pytest.raises(CopyError, match=r"tables this copy does not move \(future_feature\)"):
        await copy_database(source, destination, say=lambda _: None)
    assert (await rows(destination))["answers"] == []  # nothing was copied


async def test_a_source_a_running_bot_writes_to_is_refused_unless_live_ok(
    tmp_path: Path,
) -> None:
    source, destination = tmp_path / "one.db", tmp_path / "copy.db"
    await community(source, posts=2)
    health.beat(source, ["Telegram"])  # what `quizbot run` does every scheduler round
    with pytest.raises(CopyError, match=r"is being written to \(a running quizbot \(pid "
                       r"\d+\) uses it: its heartbeat is \d+ s old\): stop the bot first, or "
                       r"add --live-ok"):
        await copy_database(source, destination, say=lambda _: None)
    assert not destination.exists()  # nothing was touched
    proc = quizbot("db", "copy", str(source), str(destination), cwd=tmp_path)
    assert proc.returncode == Exit.STORAGE and "--live-ok" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    await copy_database(source, destination, say=lambda _: None, live_ok=True)
    assert await rows(destination) == await rows(source)


async def test_a_postgres_source_with_other_sessions_is_refused(
    tmp_path: Path, pg: str
) -> None:
    source = tmp_path / "one.db"
    await community(source, posts=2)
    await copy_database(source, pg, say=lambda _: None)
    bot = await asyncpg.connect(pg)  # a running bot's pool
    try:
        with pytest.raises(CopyError, match="1 other session is connected to it"):
            await copy_database(pg, tmp_path / "back.db", say=lambda _: None)
    finally:
        await bot.close()
    await copy_database(pg, tmp_path / "back.db", say=lambda _: None)


def add_table(path: Path) -> None:
    """A newer feature's table, with a row."""
    import sqlite3

    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE future_feature (id INTEGER PRIMARY KEY)")
        db.execute("INSERT INTO future_feature VALUES (1)")


def quizbot(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], cwd=cwd, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env}, timeout=120,
    )


def test_cli_db_migrate_says_one_line(tmp_path: Path) -> None:
    first = quizbot("db", "migrate", cwd=tmp_path, QUIZBOT_DATABASE=str(tmp_path / "q.db"))
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip().endswith("(migrated from 0)")
    assert len(first.stdout.splitlines()) == 1
    again = quizbot("db", "migrate", cwd=tmp_path, QUIZBOT_DATABASE=str(tmp_path / "q.db"))
    assert again.stdout.strip().endswith("up to date"), again.stdout


async def test_cli_db_migrate_and_copy_on_postgres(tmp_path: Path, pg: str) -> None:
    parts = urlsplit(pg)
    netloc = f"{parts.username or 'postgres'}:hunter2@{parts.netloc.rsplit('@', 1)[-1]}"
    with_password = urlunsplit(parts._replace(netloc=netloc))  # trust auth ignores it
    first = await asyncio.to_thread(quizbot, "db", "migrate", cwd=tmp_path,
                                    QUIZBOT_DATABASE=with_password)
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("\n") == 1 and "(migrated from 0)" in first.stdout
    assert "hunter2" not in first.stdout + first.stderr
    source = tmp_path / "one.db"
    await community(source, posts=3)
    refused = await asyncio.to_thread(quizbot, "db", "copy", str(source), with_password,
                                      cwd=tmp_path)
    assert refused.returncode == 0, refused.stderr  # an empty, migrated database is fine
    again = await asyncio.to_thread(quizbot, "db", "copy", str(source), with_password,
                                    cwd=tmp_path)
    assert again.returncode == 4
    assert again.stderr.count("\n") == 1 and "add --force" in again.stderr
    assert "hunter2" not in again.stdout + again.stderr
    forced = await asyncio.to_thread(quizbot, "db", "copy", str(source), with_password,
                                     "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert "hunter2" not in forced.stdout + forced.stderr


# a copy that is safe by construction ------------------------------------------------------
async def test_a_mistyped_or_foreign_source_is_refused_untouched(tmp_path: Path) -> None:
    destination = tmp_path / "copy.db"
    missing = tmp_path / "comunity.db"  # a typo
    with pytest.raises(CopyError, match=r"there is no database at .*nothing was created"):
        await copy_database(missing, destination, say=lambda _: None)
    assert not missing.exists()
    proc = await asyncio.to_thread(quizbot, "db", "copy", str(missing), str(destination),
                                   cwd=tmp_path)
    assert proc.returncode == Exit.STORAGE and len(proc.stderr.splitlines()) == 1
    assert proc.stdout == "" and not missing.exists()
    theirs = tmp_path / "theirs.db"
    import sqlite3

    with sqlite3.connect(theirs) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        db.execute("INSERT INTO notes VALUES (1, 'keep')")
    db.close()
    empty = tmp_path / "empty.db"
    empty.touch()
    text = tmp_path / "notes.txt"
    text.write_text("somebody's notes\n")
    for source in (theirs, empty, text):
        before = source.read_bytes()
        with pytest.raises(CopyError,
                           match=r"is not a quizbot database( \(.*\))?; nothing was created"):
            await copy_database(source, destination, say=lambda _: None)
        assert source.read_bytes() == before
        assert names(tmp_path) == ["empty.db", "notes.txt", "theirs.db"]  # nothing beside


async def test_an_empty_or_foreign_postgres_source_is_refused_untouched(
    tmp_path: Path, pg: str, pg2: str
) -> None:
    destination = tmp_path / "copy.db"
    with pytest.raises(CopyError, match="holds no quizbot data yet; nothing was written"):
        await copy_database(pg, destination, say=lambda _: None)
    db = await asyncpg.connect(pg2)
    try:
        await db.execute("CREATE TABLE invoices (id int)")
    finally:
        await db.close()
    with pytest.raises(CopyError, match=r"is not a quizbot database \(it holds other tables"):
        await copy_database(pg2, destination, say=lambda _: None)
    for url, tables in ((pg, []), (pg2, ["invoices"])):
        db = await asyncpg.connect(url)
        try:  # no schema written into either
            assert [r[0] for r in await db.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")] == tables
        finally:
            await db.close()
    assert not destination.exists()


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


async def test_a_sqlite_source_is_only_read(tmp_path: Path) -> None:
    """A source a stopped bot left (newest schema, boards caught up) is read through a
    read-only connection: not one byte of it changes."""
    source = tmp_path / "community.db"
    await community(source, posts=4)
    before = source.read_bytes(), source.stat().st_mtime_ns
    await copy_database(source, tmp_path / "copy.db", say=lambda _: None)
    assert (source.read_bytes(), source.stat().st_mtime_ns) == before
    assert await rows(tmp_path / "copy.db") == await rows(source)


@pytest.fixture(params=["sqlite", "postgres"])
async def destination(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "copy.db")
    else:
        async with fresh_database() as url:
            yield url


async def has_progress(database: str) -> bool:
    side = side_for(database)
    await side.connect()
    try:
        return await side.progress() is not None
    finally:
        await side.close()


def interrupted_copy(phase: str, sig: str, source: Path, destination: str,
                     cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.interrupted_copy", phase, sig, "db", "copy",
         str(source), destination, "--batch-size", "100"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "QUIZBOT_DATABASE": str(cwd / "unused.db")},
    )


@pytest.mark.parametrize("phase", ["rows", "boards", "verify"])
async def test_kill_9_in_each_phase_then_run_again(
    tmp_path: Path, destination: str, phase: str
) -> None:
    source = tmp_path / "community.db"
    await community(source, posts=6, people=40)
    killed = await asyncio.to_thread(interrupted_copy, phase, "SIGKILL", source, destination,
                                     tmp_path)
    assert killed.returncode == -signal.SIGKILL
    assert await has_progress(destination)  # the copy is marked unfinished, not left as done
    again = await asyncio.to_thread(quizbot, "db", "copy", str(source), destination,
                                    cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    lines = again.stdout.splitlines()
    assert lines[0].startswith("resuming the copy") and "equal" in lines[-1], lines
    assert await rows(destination) == await rows(source)
    assert await boards(destination) == await boards(source)
    assert not await has_progress(destination)


@pytest.mark.parametrize(("phase", "said"), [
    ("checking", "interrupted before any row was copied"),
    ("rows", "interrupted while copying rows: the batches copied so far are kept"),
    ("boards", "interrupted while building the boards: every row is copied, the copy is "
               "not verified yet"),
    ("verify", "interrupted while verifying: every row is copied and the boards are built"),
])
async def test_ctrl_c_says_what_state_the_copy_is_in(
    tmp_path: Path, destination: str, phase: str, said: str
) -> None:
    source = tmp_path / "community.db"
    await community(source, posts=6, people=40)
    stopped = await asyncio.to_thread(interrupted_copy, phase, "SIGINT", source, destination,
                                      tmp_path)
    assert stopped.returncode == 130, stopped.stderr
    assert said in stopped.stderr and len(stopped.stderr.strip().splitlines()) == 1, \
        stopped.stderr
    assert "Progress saved" not in stopped.stderr
    assert await has_progress(destination) == (phase != "checking")
    if phase in ("boards", "verify"):  # every row is there, as the line says
        assert await rows(destination) == await rows(source)
    again = await asyncio.to_thread(quizbot, "db", "copy", str(source), destination,
                                    cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert await rows(destination) == await rows(source)
    assert not await has_progress(destination)
