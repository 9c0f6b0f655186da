"""Boards that cost what they show: the right rows (equal to a recount from the raw answers,
on every path: all time, a day from its index, the rolling week, a window that must roll, a
period only a sum can answer) at a bounded cost. Cost is counted in SQLite VM instructions
(a progress handler), never in time: the top of a board costs the same on a board ten times
larger, and no board query scans a table or sorts."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.core.ports import AnswerRecord, NewPost, ScoreRow
from bot.storage import SqliteStorage
from bot.storage.sqlite import boards
from bot.storage.sqlite.materializer import Materializer, recount_ranks
from tests.storage_contract.backends import rank_groups, rank_rows

DAY0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


def expected_board(
    path: Path, chat: str | None, since: date | None, until: date | None = None
) -> list[tuple[str, int, int, int, int]]:
    """(person, correct, answered, time_ms, rank) for everyone, from the answers alone."""
    sql = (
        "SELECT person_key, SUM(correct), COUNT(*), SUM(elapsed_ms) FROM answers"
        " WHERE (? IS NULL OR chat_key = ?)"
        " AND (? IS NULL OR date(answered_at / 1000, 'unixepoch') >= ?)"
        " AND (? IS NULL OR date(answered_at / 1000, 'unixepoch') <= ?)"
        " GROUP BY person_key"
    )
    s = since.isoformat() if since else None
    u = until.isoformat() if until else None
    with sqlite3.connect(path) as db:
        rows = db.execute(sql, (chat, chat, s, s, u, u)).fetchall()
    rows.sort(key=lambda r: (-r[1], r[3], r[0]))
    return [(r[0], r[1], r[2], r[3], i) for i, r in enumerate(rows, start=1)]


def as_tuples(rows: list[ScoreRow]) -> list[tuple[str, int, int, int, int]]:
    return [(r.person_key, r.correct, r.answered, r.time_ms, r.rank) for r in rows]


async def answer_on(
    store: SqliteStorage, rng: random.Random, chat: str, when: datetime, people: int,
    posts: int = 2,
) -> None:
    for _ in range(posts):
        post = await store.create_post(chat, "sample", "s-one", (0, 1, 2), "en", when)
        for p in rng.sample(range(people), people // 2):
            await store.record_answer(AnswerRecord(
                post.id, f"tg:{p}", 0, rng.random() < 0.5, when, rng.randrange(20_000),
                name=f"person {p}",
            ))


async def check_every_board(
    store: SqliteStorage, path: Path, today: date, people: int
) -> None:
    for chat_key in (None, "tg:-1", "tg:-2"):
        for since in (None, today, today - timedelta(days=6)):
            at = None if since is None else datetime.combine(since, datetime.min.time(), UTC)
            expected = expected_board(path, chat_key, since)
            top, me = await store.leaderboard(chat_key, at, 5, None)
            assert as_tuples(top) == expected[:5], (chat_key, since)
            for row in expected[::7]:  # my rank, for people all along the board
                _, me = await store.leaderboard(chat_key, at, 5, row[0])
                assert me is not None and as_tuples([me]) == [row], (chat_key, since, row)
            _, nobody = await store.leaderboard(chat_key, at, 5, f"tg:{people + 1}")
            assert nobody is None


def assert_rank_counts(path: Path) -> None:
    """rank_counts holds, for every board, how many people have each number of correct
    answers and time bucket (rows emptied to 0 may stay)."""
    with sqlite3.connect(path) as db:
        kept = sorted(db.execute(
            "SELECT board, chat_key, day, correct, bucket, people FROM rank_counts"
            " WHERE people != 0"))
        assert kept == rank_groups(db.execute(rank_rows()).fetchall())


async def test_every_board_equals_a_recount_as_days_go_by(tmp_path: Path) -> None:
    """Twelve days of answers in two chats; the week window rolls by answers arriving, by a
    board asked for on a day without answers, and once across a gap of more than a week."""
    path = tmp_path / "days.db"
    rng = random.Random(11)
    async with SqliteStorage(path, Materializer(interval=3600)) as store:
        days = [*range(12), 25, 26]  # and a gap: the week is summed again
        for n in days:
            day = DAY0 + timedelta(days=n)
            if n % 4 != 3:  # some days nobody answers: the board rolls the week itself
                for chat in ("tg:-1", "tg:-2"):
                    await answer_on(store, rng, chat, day, people=24)
            await store.materialize()
            await check_every_board(store, path, day.date(), people=24)
            assert_rank_counts(path)
        assert await store.migrate_chat("tg:-2", "tg:-1")  # two boards become one
        await check_every_board(store, path, (DAY0 + timedelta(days=26)).date(), people=24)
        assert_rank_counts(path)


async def test_a_clock_behind_the_newest_answers_still_gets_the_right_board(
    tmp_path: Path,
) -> None:
    path = tmp_path / "behind.db"
    rng = random.Random(12)
    async with SqliteStorage(path) as store:
        for n in range(5):
            await answer_on(store, rng, "tg:-1", DAY0 + timedelta(days=n), people=20)
        await store.materialize()
        # another process's clock is two days behind: "today" is not the newest day
        today = (DAY0 + timedelta(days=2)).date()
        for since in (today, today - timedelta(days=6), today - timedelta(days=1)):
            at = datetime.combine(since, datetime.min.time(), UTC)
            top, _ = await store.leaderboard("tg:-1", at, 10, None)
            assert as_tuples(top) == expected_board(path, "tg:-1", since)[:10]


async def test_day_streaks_of_a_whole_board_in_one_read(tmp_path: Path) -> None:
    path = tmp_path / "streaks.db"
    rng = random.Random(13)
    async with SqliteStorage(path) as store:
        for n in range(6):
            day = (DAY0 + timedelta(days=n)).date()
            for chat in ("tg:-1", "tg:-2"):
                post = await store.claim_daily(
                    chat, day, NewPost(chat, "sample", "s-one", (0, 1, 2), "en",
                                       DAY0 + timedelta(days=n)), DAY0 + timedelta(days=n))
                assert post is not None
                for p in rng.sample(range(10), 6):
                    await store.record_answer(AnswerRecord(
                        post.id, f"tg:{p}", 0, rng.random() < 0.7, DAY0 + timedelta(days=n),
                        100, name=f"p{p}"))
        keys = [f"tg:{p}" for p in range(12)]
        together = await store.daily_days_for(keys)
        for key in keys:  # the same as one person at a time, the pre-migration-7 way
            assert together[key] == await one_at_a_time(path, key)


async def one_at_a_time(path: Path, person_key: str) -> tuple[list[date], date | None]:
    with sqlite3.connect(path) as db:
        days = sorted(date.fromisoformat(r[0]) for r in db.execute(
            "SELECT DISTINCT d.local_date FROM answers a JOIN daily_posts d"
            " ON d.post_id = a.post_id WHERE a.person_key=? AND a.correct=1", (person_key,)))
        newest = db.execute(
            "SELECT MAX(local_date) FROM daily_posts WHERE chat_key IN"
            " (SELECT DISTINCT a.chat_key FROM answers a JOIN daily_posts d"
            "  ON d.post_id = a.post_id WHERE a.person_key=?)", (person_key,)).fetchone()[0]
    return days, date.fromisoformat(newest) if newest else None


# cost ---------------------------------------------------------------------------------------
def fill(path: Path, people: int, answers_each: int, days: int = 10) -> None:
    """A board of `people` in 5 chats over `days` days, written straight into the tables
    (the materializer applies them when the storage opens). Every 10th post is a daily."""
    rng = random.Random(people)
    today = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("BEGIN")
        db.executemany("INSERT INTO persons(key, name) VALUES (?, ?)",
                       ((f"p:{i}", f"person {i}") for i in range(people)))
        db.executemany("INSERT INTO chats(key) VALUES (?)", ((f"c:{i}",) for i in range(5)))
        posts = people * answers_each // 50
        for i in range(posts):
            at = int((today - timedelta(days=days * (posts - 1 - i) // posts)).timestamp() * 1000)
            db.execute(
                "INSERT INTO posts(id, chat_key, quiz_id, question_id, option_order, locale,"
                " created_at, kind) VALUES (?, ?, 'q', 'x', '[0,1]', 'en', ?, ?)",
                (i + 1, f"c:{i % 5}", at, "daily" if i % 10 == 0 else "quiz"),
            )
            if i % 10 == 0:
                local = datetime.fromtimestamp(at / 1000, UTC).date().isoformat()
                db.execute(
                    "INSERT OR IGNORE INTO daily_posts(chat_key, local_date, post_id, claimed_at)"
                    " VALUES (?, ?, ?, ?)", (f"c:{i % 5}", local, i + 1, at))
        rows = []
        for i in range(posts):
            for p in rng.sample(range(people), 50):
                rows.append((i + 1, f"p:{p}", rng.random() < 0.6, rng.randrange(60_000)))
        db.executemany(
            "INSERT OR IGNORE INTO answers(post_id, person_key, option, correct, answered_at,"
            " elapsed_ms, chat_key, quiz_id, question_id, daily_date)"
            " SELECT ?, ?, 0, ?, created_at + 1000, ?, chat_key, quiz_id, question_id,"
            " (SELECT local_date FROM daily_posts WHERE post_id = posts.id)"
            " FROM posts WHERE id = ?",
            ((post, person, correct, ms, post) for post, person, correct, ms in rows),
        )
        db.execute("COMMIT")
        db.execute("ANALYZE")


def vm_steps(db: sqlite3.Connection, fn: Callable[..., Any], *args: Any) -> int:
    count = 0

    def tick() -> int:
        nonlocal count
        count += 1
        return 0

    db.set_progress_handler(tick, 10)
    try:
        fn(db, *args)
    finally:
        db.set_progress_handler(None, 0)
    return count * 10


BOARDS = [
    (chat, period) for chat in ("*", "c:1") for period in ("day", "week", "all")
]


def since_of(db: sqlite3.Connection, period: str) -> str | None:
    until: str = db.execute("SELECT until FROM week_window").fetchone()[0]
    return {"day": until, "week": (date.fromisoformat(until) - timedelta(days=6)).isoformat(),
            "all": None}[period]


@pytest.fixture(scope="module")
def sized(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    import asyncio

    paths = {}
    for people in (1_000, 10_000):
        path = tmp_path_factory.mktemp("boards") / f"{people}.db"
        asyncio.run(_create(path))
        fill(path, people, answers_each=6)
        asyncio.run(_create(path))  # opening applies every answer to the aggregates
        paths[people] = path
    return paths


async def _create(path: Path) -> None:
    async with SqliteStorage(path):
        pass


@pytest.mark.parametrize(("chat", "period"), BOARDS)
def test_the_top_of_a_board_costs_the_same_on_a_board_ten_times_larger(
    sized: dict[int, Path], chat: str, period: str
) -> None:
    cost: dict[object, int] = {}  # by people, and by (what, people)
    for people, path in sized.items():
        with sqlite3.connect(path) as db:
            since = since_of(db, period)
            board = boards.leaderboard(db, chat, since, 10, None, may_roll=False)
            assert not isinstance(board, boards.Roll)
            assert len(board[0]) == 10
            cost[people] = vm_steps(db, boards.leaderboard, chat, since, 10, None, False)
            keys = [r.person_key for r in board[0]]
            cost[("streaks", people)] = vm_steps(db, boards.daily_days_for, keys)
            # my rank just below the top: found by key, the rows above counted in the index
            top_eleven = boards.leaderboard(db, chat, since, 11, None, False)
            assert not isinstance(top_eleven, boards.Roll)
            eleventh = top_eleven[0][-1]
            cost[("me", people)] = vm_steps(
                db, boards.leaderboard, chat, since, 10, eleventh.person_key, False
            )
    for what in (10_000, "streaks", "me"):  # ten times the people, the same cost
        big = cost[what] if what == 10_000 else cost[(what, 10_000)]
        small = cost[1_000] if what == 10_000 else cost[(what, 1_000)]
        assert big < 1.5 * small + 200, (what, cost)


@pytest.mark.parametrize(("chat", "period"), BOARDS)
def test_board_queries_search_indexes_and_never_sort(
    sized: dict[int, Path], chat: str, period: str
) -> None:
    path = sized[1_000]
    with sqlite3.connect(path) as db:
        since = since_of(db, period)
        mid = db.execute("SELECT key FROM persons ORDER BY key LIMIT 1 OFFSET 500").fetchone()[0]
        plans: list[str] = []

        def explain(sql: str, params: Any = ()) -> Any:
            if sql.lstrip().upper().startswith(("SELECT", "WITH")):
                plans.extend(r[3] for r in real.execute("EXPLAIN QUERY PLAN " + sql, params))
            return real.execute(sql, params)

        real = db

        class Explaining:
            execute = staticmethod(explain)

        boards.leaderboard(Explaining, chat, since, 10, mid, False)  # type: ignore[arg-type]
        boards.daily_days_for(Explaining, [mid, "p:1"])  # type: ignore[arg-type]
    assert plans
    for step in plans:
        assert not step.startswith("SCAN") or step.startswith(("SCAN CONSTANT", "SCAN b")) \
            or "json_each" in step, (period, step)
        assert "TEMP B-TREE" not in step, (period, step)


def tie_group(path: Path, level: int, others: int) -> list[str]:
    """A board (all time, chat 'c:1') where `level` people have the same number of correct
    answers, their times the sums of ten answers of up to a minute (as a real tie group's
    are), among `others` people with other numbers; rank_counts counted from it. The tie
    group's people in board order."""
    rng = random.Random(level)
    rows = [(f"p:{i}", 5, sum(rng.randrange(60_000) for _ in range(10))) for i in range(level)]
    rows += [(f"q:{i}", rng.choice((2, 3, 4, 6, 7, 8)), rng.randrange(600_000))
             for i in range(others)]
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("BEGIN")
        db.executemany("INSERT INTO totals(chat_key, person_key, correct, answered, time_ms)"
                       " VALUES ('c:1', ?, ?, 10, ?)", rows)
        recount_ranks(db, ["all"])
        db.execute("COMMIT")
        db.execute("ANALYZE")
    return [key for key, _, _ in sorted(rows[:level], key=lambda r: (r[2], r[0]))]


async def test_my_rank_walks_a_tenth_of_my_tie_group_at_most(tmp_path: Path) -> None:
    """Level with 20,000 people (their biggest time bucket holds about an eighth of them), my
    rank costs under a tenth of the SQLite VM instructions of counting my tie group in the
    rank index (what it cost before time buckets), wherever I am in the group: the faster
    buckets come from rank_counts, and only my own bucket, from its nearer end, is counted in
    the index (about 1,200 entries at most here, 3 instructions each). And it is right."""
    path = tmp_path / "ties.db"
    async with SqliteStorage(path):
        pass
    group = tie_group(path, 20_000, 5_000)
    with sqlite3.connect(path) as db:
        walk_all = vm_steps(db, lambda d: d.execute(
            "SELECT COUNT(*) FROM totals INDEXED BY totals_rank WHERE chat_key='c:1'"
            " AND correct = 5").fetchone())
        above = db.execute("SELECT COUNT(*) FROM totals WHERE chat_key='c:1' AND correct > 5"
                           ).fetchone()[0]
        biggest = db.execute("SELECT MAX(people) FROM rank_counts WHERE board='all'"
                             " AND chat_key='c:1' AND correct = 5").fetchone()[0]
        assert biggest * 5 <= len(group), biggest  # a bucket holds an eighth at most
        for place in (0, 1, 2_000, 7_000, 9_999, 10_000, 10_001, 13_000, 19_998, 19_999):
            key = group[place]
            board = boards.leaderboard(db, "c:1", None, 10, key, False)
            assert not isinstance(board, boards.Roll)
            me = board[1]
            assert me is not None and me.rank == above + place + 1, (place, me)
            steps = vm_steps(db, boards.leaderboard, "c:1", None, 10, key, False)
            assert steps * 10 < walk_all, (place, steps, walk_all)
