"""The SQLite materializer on a database from before migration 6 (aggregates kept by a
trigger): the aggregates still equal a recount from the raw answers. What holds on both
backends (chunks, two processes, kill -9 in the middle of a burst) is in
tests/storage_contract/test_materializer.py."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.core.ports import AnswerRecord
from bot.storage import SqliteStorage
from bot.storage.sqlite.migrations import MIGRATIONS, split_sql

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
