"""The SQLite materializer: on a database from before migration 6 (aggregates kept by a
trigger) the aggregates still equal a recount from the raw answers; no trigger is left (a file
that still had the rank counts' triggers loses them and is counted again); bursts with
duplicates and refusals equal a recount; a board's catch-up lets queued answers in between its
chunks. What holds on both
backends (chunks, two processes, kill -9 in the middle of a burst) is in
tests/storage_contract/test_materializer.py."""

from __future__ import annotations

import asyncio
import random
import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.core.ports import AnswerRecord
from bot.storage import SqliteStorage
from bot.storage.sqlite.materializer import Materializer
from bot.storage.sqlite.migrations import MIGRATIONS, split_sql
from tests.storage_contract.backends import rank_groups, rank_rows

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def recount(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """What the aggregates must hold, computed from the answers alone."""
    with sqlite3.connect(path) as db:
        day = "date(answered_at / 1000, 'unixepoch')"
        scores = db.execute(
            f"SELECT chat_key, {day} AS d, person_key, SUM(correct), COUNT(*), SUM(elapsed_ms)"
            " FROM answers GROUP BY chat_key, d, person_key UNION ALL"
            f" SELECT '*', {day} AS d, person_key, SUM(correct), COUNT(*), SUM(elapsed_ms)"
            " FROM answers GROUP BY d, person_key"
        ).fetchall()
        totals = db.execute(
            "SELECT chat_key, person_key, SUM(correct), COUNT(*), SUM(elapsed_ms)"
            " FROM answers GROUP BY chat_key, person_key UNION ALL"
            " SELECT '*', person_key, SUM(correct), COUNT(*), SUM(elapsed_ms)"
            " FROM answers GROUP BY person_key"
        ).fetchall()
        streaks: dict[str, tuple[int, int]] = {}
        for person, correct in db.execute("SELECT person_key, correct FROM answers ORDER BY rowid"):
            current, best = streaks.get(person, (0, 0))
            current = current + 1 if correct else 0
            streaks[person] = (current, max(best, current))
        people = [k for (k,) in db.execute("SELECT key FROM persons")]
        week: list[tuple[Any, ...]] = []
        if db.execute("SELECT name FROM sqlite_master WHERE name='week_window'").fetchone():
            (until,) = db.execute("SELECT until FROM week_window").fetchone()
            window = f"{day} BETWEEN date(?, '-6 days') AND ?"
            week = db.execute(
                "SELECT chat_key, person_key, SUM(correct), COUNT(*), SUM(elapsed_ms)"
                f" FROM answers WHERE {window} GROUP BY chat_key, person_key UNION ALL"
                " SELECT '*', person_key, SUM(correct), COUNT(*), SUM(elapsed_ms)"
                f" FROM answers WHERE {window} GROUP BY person_key",
                (until, until, until, until),
            ).fetchall()
    return {
        "week": sorted(week),
        "scores": sorted(scores),
        "totals": sorted(totals),
        "streaks": sorted((k, *streaks.get(k, (0, 0))) for k in people),
    }


def stored(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(path) as db:
        week: list[tuple[Any, ...]] = []
        if db.execute("SELECT name FROM sqlite_master WHERE name='week_window'").fetchone():
            week = db.execute(
                "SELECT chat_key, person_key, correct, answered, time_ms FROM week_scores"
            ).fetchall()
        return {
            "week": sorted(week),
            "scores": sorted(db.execute(
                "SELECT chat_key, day, person_key, correct, answered, time_ms FROM scores"
            )),
            "totals": sorted(db.execute(
                "SELECT chat_key, person_key, correct, answered, time_ms FROM totals"
            )),
            "streaks": sorted(db.execute("SELECT key, current_streak, best_streak FROM persons")),
        }


def unapplied(path: Path) -> int:
    with sqlite3.connect(path) as db:
        top = db.execute("SELECT COALESCE(MAX(id), 0) FROM answers").fetchone()[0]
        at = db.execute("SELECT position FROM materialized").fetchone()[0]
    return int(top - at)


async def random_answers(
    store: SqliteStorage, rng: random.Random, posts: int = 12, per_post: int = 40
) -> None:
    """Answers in three chats over five days by 30 people, concurrently."""
    for n in range(posts):
        chat = f"tg:-{n % 3}"
        when = NOW + timedelta(days=n % 5, hours=n)
        post = await store.create_post(chat, "sample", "s-one", (0, 1, 2), "en", when)
        people = rng.sample(range(30), per_post % 30 or 30)
        await asyncio.gather(*(
            store.record_answer(AnswerRecord(
                post.id, f"tg:{p}", 0, rng.random() < 0.6, when + timedelta(seconds=i),
                rng.randrange(30_000), name=f"person {p}",
            ))
            for i, p in enumerate(people)
        ))


async def test_a_database_with_the_trigger_migrates_and_stays_right(tmp_path: Path) -> None:
    """A file of schema 5 (aggregates kept by the trigger) with answers in it."""
    path = tmp_path / "v5.db"
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("BEGIN")
        for script in MIGRATIONS[:5]:
            for statement in split_sql(script):
                db.execute(statement)
        db.execute("PRAGMA user_version=5")
        db.execute("PRAGMA application_id=1364543834")
        db.execute("INSERT INTO chats(key) VALUES ('tg:-1')")
        db.executemany("INSERT INTO persons(key, name) VALUES (?, ?)",
                       [(f"tg:{i}", f"p{i}") for i in range(10)])
        db.execute("INSERT INTO posts(id, chat_key, quiz_id, question_id, option_order, locale,"
                   " created_at) VALUES (1, 'tg:-1', 'sample', 's-one', '[0,1,2]', 'en', 0)")
        db.executemany(
            "INSERT INTO answers(post_id, person_key, option, correct, answered_at, elapsed_ms,"
            " chat_key, quiz_id, question_id) VALUES (1, ?, 0, ?, ?, ?, 'tg:-1', 'sample',"
            " 's-one')",
            [(f"tg:{i}", i % 3 != 0, 1_772_000_000_000 + i, 100 * i) for i in range(10)],
        )
        db.execute("COMMIT")
    before = stored(path)
    assert before == recount(path)  # the trigger kept them
    async with SqliteStorage(path) as store:
        after = stored(path)
        assert after["week"] and before["week"] == []  # a table migration 7 added
        assert {**after, "week": []} == before  # nothing applied twice
        assert after == recount(path)  # and the new week table summed from them
        with sqlite3.connect(path) as db:
            assert db.execute("SELECT position FROM materialized").fetchone()[0] == 10
            triggers = db.execute(  # none on answers: the materializer replaced it
                "SELECT name FROM sqlite_master WHERE type='trigger' AND tbl_name='answers'"
            )
            assert triggers.fetchall() == []
        await random_answers(store, random.Random(9), posts=4)
        await store.materialize()
    assert stored(path) == recount(path)


def triggers(path: Path) -> list[str]:
    with sqlite3.connect(path) as db:
        return [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='trigger'")]


def rank_counts_match(path: Path) -> bool:
    """rank_counts equals a count of every board's rows per number of correct answers and
    time bucket (rows emptied to 0 may stay)."""
    with sqlite3.connect(path) as db:
        kept = sorted(db.execute(
            "SELECT board, chat_key, day, correct, bucket, people FROM rank_counts"
            " WHERE people != 0"))
        counted = rank_groups(db.execute(rank_rows()).fetchall())
    return kept == counted and bool(kept)


def figures_match(path: Path) -> bool:
    """The dashboard's figures equal a count of totals and scores (rows emptied to 0 may
    stay)."""
    with sqlite3.connect(path) as db:
        kept = sorted(db.execute(
            "SELECT chat_key, '', people, answered, correct FROM chat_figures"
            " WHERE people != 0 OR answered != 0 OR correct != 0 UNION ALL"
            " SELECT chat_key, day, people, answered, correct FROM chat_day_figures"
            " WHERE people != 0 OR answered != 0 OR correct != 0"))
        counted = sorted(db.execute(
            "SELECT chat_key, '', COUNT(*), SUM(answered), SUM(correct) FROM totals"
            " GROUP BY chat_key UNION ALL SELECT chat_key, day, COUNT(*), SUM(answered),"
            " SUM(correct) FROM scores GROUP BY chat_key, day"))
    return kept == counted and bool(kept)


def undo_later_migrations(db: sqlite3.Connection, version: int) -> None:
    """Drop the tables, indexes and columns the migrations after `version` add, so the file is
    as that version left it."""
    for script in reversed(MIGRATIONS[version:]):
        for statement in reversed(split_sql(script)):  # an index before its column
            words = statement.split()
            if words[:2] in (["CREATE", "TABLE"], ["CREATE", "INDEX"]):
                db.execute(f"DROP {words[1]} IF EXISTS {words[2]}")
            elif words[:2] == ["ALTER", "TABLE"] and words[3:5] == ["ADD", "COLUMN"]:
                db.execute(f"ALTER TABLE {words[2]} DROP COLUMN {words[5]}")


async def test_a_file_with_the_rank_triggers_loses_them_and_is_counted_again(
    tmp_path: Path,
) -> None:
    """A file from before the triggers went (rank_counts kept by the nine triggers of
    migration 8), its counts left wrong (as a file written by something else could be): the
    migration drops every trigger and counts again; from then on the materializer keeps the
    counts."""
    path = tmp_path / "triggers.db"
    async with SqliteStorage(path) as store:
        await random_answers(store, random.Random(3), posts=4)
    dropping = next(i for i, script in enumerate(MIGRATIONS) if "DROP TRIGGER IF EXISTS"
                    " totals_counted_insert" in script)
    with sqlite3.connect(path, isolation_level=None) as db:  # the file as it was before
        db.execute("BEGIN")
        for statement in split_sql(MIGRATIONS[7]):
            if "TRIGGER" in statement:
                db.execute(statement)
        db.execute("UPDATE rank_counts SET people = people + 5")  # wrong counts
        undo_later_migrations(db, dropping + 1)
        db.execute(f"PRAGMA user_version={dropping}")
        db.execute("COMMIT")
    assert len(triggers(path)) == 9 and not rank_counts_match(path)
    async with SqliteStorage(path) as store:
        assert triggers(path) == []  # none at all, on the aggregate tables or elsewhere
        assert rank_counts_match(path) and figures_match(path)
        await random_answers(store, random.Random(4), posts=6)
        await store.materialize()
    assert stored(path) == recount(path)
    assert rank_counts_match(path) and figures_match(path)


async def test_bursts_with_duplicates_and_refusals_equal_a_recount(tmp_path: Path) -> None:
    """Concurrent answers (so the writer takes them in batches, one statement each), with a
    person answering twice, answers to a closed post and to no post mixed in."""
    path = tmp_path / "mixed.db"
    rng = random.Random(17)
    async with SqliteStorage(path) as store:
        assert triggers(path) == []
        closed = await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)
        assert await store.close_post(closed.id, NOW)
        outcomes: list[Any] = []
        for n in range(8):
            when = NOW + timedelta(days=n % 3, hours=n)
            post = await store.create_post(f"tg:-{n % 2}", "sample", "s-one", (0, 1, 2), "en",
                                           when)
            crowd = [AnswerRecord(post.id, f"tg:{p}", 0, rng.random() < 0.6, when,
                                  rng.randrange(30_000), name=f"person {p}")
                     for p in rng.sample(range(60), 40)]
            crowd += [AnswerRecord(a.post_id, a.person_key, 1, not a.correct, when, 1)
                      for a in crowd[::5]]  # a second answer: the first one is final
            crowd += [AnswerRecord(closed.id, f"tg:{p}", 0, True, when, 5) for p in (1, 70)]
            crowd += [AnswerRecord(99_999, "tg:71", 0, True, when, 5)]
            rng.shuffle(crowd)
            outcomes += await asyncio.gather(*(store.record_answer(a) for a in crowd),
                                             return_exceptions=True)
            if n % 3 == 2:
                await store.materialize()
        await store.materialize()
        counted = [o if isinstance(o, Exception) else o[0] for o in outcomes]
        assert counted.count("inserted") == 8 * 40
        assert counted.count("duplicate") == 8 * 8 and counted.count("closed") == 16
        assert sum(isinstance(o, LookupError) for o in counted) == 8
    assert stored(path) == recount(path)
    assert rank_counts_match(path) and figures_match(path)
    with sqlite3.connect(path) as db:  # refused answers left no person behind
        assert db.execute("SELECT count(*) FROM persons WHERE key IN ('tg:70', 'tg:71')"
                          ).fetchone()[0] == 0


async def test_a_board_asked_for_lets_queued_answers_in_between_chunks(tmp_path: Path) -> None:
    """Catching up a backlog for a board is done chunk by chunk, and an answer queued
    meanwhile is committed after the chunk under way, not after the whole backlog."""
    path = tmp_path / "chunks.db"
    async with SqliteStorage(path, Materializer(interval=3600, idle_check=3600, chunk=10)) \
            as store:
        post = await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)
        await asyncio.gather(*(store.record_answer(AnswerRecord(
            post.id, f"tg:{p}", 0, True, NOW, 100, name=f"p{p}")) for p in range(100)))
        inside, go = threading.Event(), threading.Event()
        statements: list[str] = []

        def trace(sql: str) -> None:
            statements.append(" ".join(sql.split()[:3]))
            if sql.startswith("UPDATE materialized") and not inside.is_set():
                inside.set()  # the first chunk: hold it until an answer is queued
                assert go.wait(timeout=30)

        assert store._writer is not None
        await store._writer.submit(lambda db: db.set_trace_callback(trace))
        catching_up = asyncio.ensure_future(store.materialize())
        for _ in range(30_000):  # polled: the event is set in the writer thread
            if inside.is_set():
                break
            await asyncio.sleep(0.001)
        answering = asyncio.ensure_future(store.record_answer(AnswerRecord(
            post.id, "tg:500", 0, True, NOW, 100, name="late")))
        await asyncio.sleep(0.01)  # queued behind the chunk under way
        go.set()
        assert (await answering)[0] == "inserted"
        await catching_up
        chunks = [i for i, s in enumerate(statements) if s.startswith("UPDATE materialized")]
        answer = statements.index("INSERT INTO answers(post_id,")
        assert len(chunks) >= 10  # 100 answers, 10 at a time
        assert chunks[0] < answer < chunks[1]  # the answer went first after the first chunk
    assert stored(path) == recount(path)
