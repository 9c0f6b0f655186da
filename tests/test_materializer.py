"""The materializer: boards' aggregates applied from the answers in batches, off the answer's
path. Whatever happens (chunks, two processes, kill -9 in the middle of a burst, a database
from before migration 6), the aggregates equal a recount from the raw answers."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.core.ports import AnswerRecord
from bot.storage import SqliteStorage
from bot.storage.materializer import Materializer, apply
from bot.storage.migrations import MIGRATIONS, split_sql

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


async def test_aggregates_equal_a_recount_in_small_chunks(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    async with SqliteStorage(path, Materializer(chunk=7, interval=3600)) as store:
        await random_answers(store, random.Random(1))
        assert unapplied(path) > 0  # nothing applied them yet: the interval is an hour
        await store.materialize()
        assert unapplied(path) == 0
        assert stored(path) == recount(path)
        await store.materialize()  # nothing left: no second application
        assert stored(path) == recount(path)


async def test_applying_again_from_the_stored_position_adds_nothing(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    async with SqliteStorage(path) as store:
        await random_answers(store, random.Random(2))
        await store.materialize()
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("BEGIN IMMEDIATE")
        assert apply(db)[0] == 0
        db.execute("COMMIT")
    assert stored(path) == recount(path)


async def test_two_processes_never_apply_an_answer_twice(tmp_path: Path) -> None:
    path = tmp_path / "two.db"
    one = SqliteStorage(path, Materializer(chunk=5, interval=0))
    two = SqliteStorage(path, Materializer(chunk=3, interval=0))
    async with one, two:
        await asyncio.gather(
            random_answers(one, random.Random(3)), random_answers(two, random.Random(4)),
        )
        await asyncio.gather(one.materialize(), two.materialize())
    assert unapplied(path) == 0
    assert stored(path) == recount(path)


async def test_answers_are_applied_without_being_asked(tmp_path: Path) -> None:
    path = tmp_path / "bg.db"
    async with SqliteStorage(path, Materializer(interval=0.01)) as store:
        await random_answers(store, random.Random(5), posts=3)
        for _ in range(2000):  # polled, not timed: it happens within the interval
            if unapplied(path) == 0:
                break
            await asyncio.sleep(0.005)
        assert unapplied(path) == 0
        assert store.materializer.applied > 0
    assert stored(path) == recount(path)


async def test_close_applies_what_is_left(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    async with SqliteStorage(path, Materializer(interval=3600)) as store:
        await random_answers(store, random.Random(6), posts=4)
        assert unapplied(path) > 0
    assert unapplied(path) == 0
    assert stored(path) == recount(path)


async def test_a_chat_moved_with_answers_pending_keeps_its_board(tmp_path: Path) -> None:
    path = tmp_path / "mv.db"
    async with SqliteStorage(path, Materializer(interval=3600)) as store:
        await random_answers(store, random.Random(7), posts=6)
        await store.materialize()
        await random_answers(store, random.Random(8), posts=6)  # pending while it moves
        assert await store.migrate_chat("tg:-1", "tg:-100")
        await store.materialize()
        board, _ = await store.leaderboard("tg:-100", None, 100, None)
        assert board and await store.leaderboard("tg:-1", None, 10, None) == ([], None)
    assert stored(path) == recount(path)


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


CHILD = textwrap.dedent("""
    import asyncio, random, sys
    from datetime import UTC, datetime, timedelta
    from bot.core.ports import AnswerRecord
    from bot.storage import SqliteStorage
    from bot.storage.materializer import Materializer

    async def main(path, seed):
        rng = random.Random(seed)
        now = datetime(2026, 3, 1, 12, tzinfo=UTC)
        # tiny, frequent applications: the kill lands inside one sooner or later
        async with SqliteStorage(path, Materializer(interval=0.001, chunk=37)) as store:
            print("ready", flush=True)
            for n in range(10_000):
                when = now + timedelta(days=n % 9, minutes=n)
                post = await store.create_post(f"tg:-{n % 4}", "sample", "s-one", (0, 1, 2),
                                               "en", when)
                people = rng.sample(range(500), 150)
                await asyncio.gather(*(
                    store.record_answer(AnswerRecord(
                        post.id, f"tg:{p}", 0, rng.random() < 0.5, when, rng.randrange(9000),
                        name=f"p{p}"))
                    for p in people))

    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
""")


def answers_in(path: Path) -> int:
    try:
        with sqlite3.connect(path, timeout=10) as db:
            return int(db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0


async def test_kill_9_in_the_middle_of_a_burst_never_double_applies(tmp_path: Path) -> None:
    path = tmp_path / "killed.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    total = 0
    for round_ in range(4):
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c", CHILD, str(path), str(round_),
            stdout=asyncio.subprocess.PIPE, env=env,
        )
        assert child.stdout is not None
        assert (await child.stdout.readline()).strip() == b"ready"
        target = total + 400 + 350 * round_  # a different moment in each round
        for _ in range(20_000):  # polled: no timing is asserted
            if answers_in(path) >= target:
                break
            await asyncio.sleep(0.002)
        child.send_signal(signal.SIGKILL)
        await child.wait()
        total = answers_in(path)
        assert total >= target
        async with SqliteStorage(path) as store:  # opening applies what the crash left
            assert unapplied(path) == 0
            assert stored(path) == recount(path), f"round {round_}"
            board, _ = await store.leaderboard(None, None, 5, None)
            expected = sorted(
                (t for t in recount(path)["totals"] if t[0] == "*"),
                key=lambda t: (-t[2], t[4], t[1]),
            )[:5]
            assert [(r.person_key, r.correct) for r in board] == [
                (t[1], t[2]) for t in expected
            ]


async def test_writes_go_first_until_the_oldest_answer_has_waited_max_lag(
    tmp_path: Path,
) -> None:
    """The policy, driven by hand on the writer's kind of connection: busy (writes queued)
    defers applying; once the oldest unapplied answer has waited max_lag it applies anyway;
    idle applies once it has waited `interval`."""
    path = tmp_path / "lag.db"
    async with SqliteStorage(path, Materializer(interval=3600)) as store:
        await random_answers(store, random.Random(10), posts=2)
    with sqlite3.connect(path, isolation_level=None) as db:
        for statement in (  # as if nothing had been applied
            "DELETE FROM scores", "DELETE FROM totals", "DELETE FROM week_scores",
            "UPDATE week_window SET until = NULL", "UPDATE materialized SET position = 0",
            "UPDATE persons SET current_streak = 0, best_streak = 0",
        ):
            db.execute(statement)
        m = Materializer(interval=0.5, backlog=10**9, max_lag=5.0, chunk=10**6)
        m.position = 0
        m.run(db, idle=False)  # sees the answers: the clock of the oldest starts
        assert m._since is not None and unapplied(path) > 0
        m._since -= 1.0  # waited past interval, not max_lag
        m.run(db, idle=False)
        assert unapplied(path) > 0  # busy: writes go first
        m._since -= 5.0  # past max_lag
        m.run(db, idle=False)
        assert unapplied(path) == 0 and m._since is None
    assert stored(path) == recount(path)
