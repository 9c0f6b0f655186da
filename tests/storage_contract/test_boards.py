"""Boards on both backends: every board (all time, a day, the rolling week, a window that must
roll, a period only a sum can answer, a chat moved) equals a recount from the raw answers, my
rank included; and on PostgreSQL the board queries walk the rank indexes (LIMIT first, names
joined after) instead of reading or sorting a whole board."""

from __future__ import annotations

import json
import random
from datetime import UTC, date, datetime, timedelta
from typing import Any

import asyncpg

from bot.core.ports import AnswerRecord, ScoreRow
from bot.storage import rank_buckets
from tests.storage_contract.backends import Backend, PostgresBackend, Store
from tests.storage_contract.pg import fresh_database

DAY0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
Row = tuple[str, int, int, int, int]


async def expected_board(
    backend: Backend, chat: str | None, since: date | None
) -> list[Row]:
    """(person, correct, answered, time_ms, rank) for everyone, from the answers alone."""
    sums: dict[str, list[int]] = {}
    for chat_key, person, correct, elapsed, day in await backend.answers_in_order():
        if chat is not None and chat_key != chat:
            continue
        if since is not None and day < since.isoformat():
            continue
        acc = sums.setdefault(person, [0, 0, 0])
        acc[0] += int(correct)
        acc[1] += 1
        acc[2] += elapsed
    ordered = sorted(sums.items(), key=lambda kv: (-kv[1][0], kv[1][2], kv[0]))
    return [(p, v[0], v[1], v[2], i) for i, (p, v) in enumerate(ordered, start=1)]


def as_tuples(rows: list[ScoreRow]) -> list[Row]:
    return [(r.person_key, r.correct, r.answered, r.time_ms, r.rank) for r in rows]


async def answer_on(store: Store, rng: random.Random, chat: str, when: datetime,
                    people: int) -> None:
    for _ in range(2):
        post = await store.create_post(chat, "sample", "s-one", (0, 1, 2), "en", when)
        for p in rng.sample(range(people), people // 2):
            await store.record_answer(AnswerRecord(
                post.id, f"tg:{p}", 0, rng.random() < 0.5, when, rng.randrange(20_000),
                name=f"person {p}",
            ))


async def check_every_board(store: Store, backend: Backend, today: date, people: int) -> None:
    for chat_key in (None, "tg:-1", "tg:-2"):
        for since in (None, today, today - timedelta(days=6), today - timedelta(days=3)):
            at = None if since is None else datetime.combine(since, datetime.min.time(), UTC)
            expected = await expected_board(backend, chat_key, since)
            top, me = await store.leaderboard(chat_key, at, 5, None)
            assert as_tuples(top) == expected[:5], (chat_key, since)
            for row in expected[::5]:  # my rank, for people all along the board
                _, me = await store.leaderboard(chat_key, at, 5, row[0])
                assert me is not None and as_tuples([me]) == [row], (chat_key, since, row)
            _, nobody = await store.leaderboard(chat_key, at, 5, f"tg:{people + 1}")
            assert nobody is None


async def assert_rank_counts(backend: Backend) -> None:
    await backend.check_rank_counts()


async def test_every_board_equals_a_recount_as_days_go_by(backend: Backend) -> None:
    """Twelve days of answers in two chats; the week window rolls by answers arriving, by a
    board asked for on a day without answers, and once across a gap of more than a week."""
    rng = random.Random(11)
    materializer = backend.materializer(interval=3600, idle_check=3600)
    async with backend.opened(materializer=materializer) as store:
        for n in [*range(12), 25, 26]:
            day = DAY0 + timedelta(days=n)
            if n % 4 != 3:  # some days nobody answers: the board rolls the week itself
                for chat in ("tg:-1", "tg:-2"):
                    await answer_on(store, rng, chat, day, people=24)
            await store.materialize()
            await check_every_board(store, backend, day.date(), people=24)
            await assert_rank_counts(backend)
        assert await store.migrate_chat("tg:-2", "tg:-1")  # two boards become one
        await check_every_board(store, backend, (DAY0 + timedelta(days=26)).date(), 24)
        await assert_rank_counts(backend)
    await backend.check_aggregates()


async def test_a_clock_behind_the_newest_answers_still_gets_the_right_board(
    backend: Backend,
) -> None:
    rng = random.Random(12)
    async with backend.opened() as store:
        for n in range(5):
            await answer_on(store, rng, "tg:-1", DAY0 + timedelta(days=n), people=20)
        await store.materialize()
        # another process's clock is two days behind: "today" is not the newest day
        today = (DAY0 + timedelta(days=2)).date()
        for since in (today, today - timedelta(days=6), today - timedelta(days=1)):
            at = datetime.combine(since, datetime.min.time(), UTC)
            top, _ = await store.leaderboard("tg:-1", at, 10, None)
            assert as_tuples(top) == (await expected_board(backend, "tg:-1", since))[:10]


# PostgreSQL: the plans -----------------------------------------------------------------------
async def fill_aggregates(url: str, people: int) -> None:
    """A large board straight into the aggregate tables, then ANALYZE (as autovacuum would)."""
    db = await asyncpg.connect(url)
    try:
        rng = random.Random(3)
        day = DAY0.date()
        await db.copy_records_to_table("persons", columns=["key", "name"], records=[
            (f"tg:{i}", f"person {i}") for i in range(people)])
        totals, scores = [], []
        for chat in ("*", "tg:-1"):
            for i in range(people):
                correct = rng.randrange(60)
                totals.append((chat, f"tg:{i}", correct, correct + 5, rng.randrange(10**6)))
                scores.append((chat, day, f"tg:{i}", correct % 7, 7, rng.randrange(10**5)))
        await db.copy_records_to_table("totals", records=totals, columns=[
            "chat_key", "person_key", "correct", "answered", "time_ms"])
        await db.copy_records_to_table("week_scores", records=totals, columns=[
            "chat_key", "person_key", "correct", "answered", "time_ms"])
        await db.copy_records_to_table("scores", records=scores, columns=[
            "chat_key", "day", "person_key", "correct", "answered", "time_ms"])
        await db.execute("UPDATE week_window SET until = $1", day)
        await db.execute("VACUUM ANALYZE")
    finally:
        await db.close()


def nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    found = [plan]
    for child in plan.get("Plans", []):
        found += nodes(child)
    return found


async def test_postgres_boards_walk_the_rank_indexes() -> None:
    from bot.storage.postgres import boards

    async with fresh_database() as url:
        pg = PostgresBackend(url)
        async with pg.opened():
            pass
        await fill_aggregates(url, 20_000)
        db = await asyncpg.connect(url)
        try:
            for table, where, params, counts in (
                ("totals", "chat_key = $1", ("*",), ("all", date.min)),
                ("week_scores", "chat_key = $1", ("tg:-1",), ("week", date.min)),
                ("scores", "chat_key = $1 AND day = $2", ("*", DAY0.date()),
                 ("day", DAY0.date())),
            ):
                sql = boards.ranked_sql(table, where, len(params))
                for me in (None, "tg:12345"):
                    text = await db.fetchval(f"EXPLAIN (FORMAT JSON) {sql}",
                                             *params, 10, me, *counts)
                    plan = json.loads(text)[0]["Plan"]
                    kinds = [n["Node Type"] for n in nodes(plan)]
                    scans = [(n["Node Type"], n.get("Index Name"), n.get("Relation Name"))
                             for n in nodes(plan) if "Scan" in n["Node Type"]]
                    # no board is read whole (rank_counts is a few rows per board: any plan)
                    assert not [s for s in scans if s[0] == "Seq Scan"
                                and s[2] != "rank_counts"], (table, scans)
                    ranked = [s for s in scans if (s[1] and s[1].endswith("_rank"))
                              or s[1] == f"{table}_pkey"]
                    assert ranked, (table, scans)
                    # a sort, if any, is of the N rows read (no sort below the LIMIT)
                    limit = next(n for n in nodes(plan) if n["Node Type"] == "Limit")
                    assert all(n["Node Type"] != "Sort" for n in nodes(limit)), (table, kinds)
        finally:
            await db.close()


# my rank from time buckets ---------------------------------------------------------------------
ELAPSED = (0, 1, 15, 16, 31, 32, 33, 63, 64, 1000, 1023, 1024, 1055, 1056, 1088, 19_999, 65_535,
           65_536)  # about bucket bounds (rank_buckets.py), and anything below 70 s


async def answer_in_clones(store: Store, rng: random.Random, chat: str, when: datetime,
                           clones: list[list[int]]) -> None:
    """One post answered by some of the groups of `clones`; the people of a group answer
    alike (the same correctness and time), so they stay level in correct answers and time
    and only their keys tell them apart."""
    post = await store.create_post(chat, "sample", "s-one", (0, 1, 2), "en", when)
    for group in clones:
        if rng.random() < 0.3:
            continue
        right = rng.random() < 0.5
        elapsed = rng.choice(ELAPSED) if rng.random() < 0.4 else rng.randrange(70_000)
        for p in group:
            await store.record_answer(AnswerRecord(post.id, f"tg:{p}", 0, right, when, elapsed,
                                                   name=f"person {p}"))


async def check_every_rank(store: Store, backend: Backend, today: date) -> None:
    """Everyone's rank on every board equals their place in a brute-force sort of the
    answers."""
    for chat_key in (None, "tg:-1"):
        for since in (None, today, today - timedelta(days=6)):
            at = None if since is None else datetime.combine(since, datetime.min.time(), UTC)
            for row in await expected_board(backend, chat_key, since):
                _, me = await store.leaderboard(chat_key, at, 3, row[0])
                assert me is not None and as_tuples([me]) == [row], (chat_key, since, row)


async def test_every_rank_equals_a_brute_force_rank_with_ties_rolls_and_a_forget(
    backend: Backend,
) -> None:
    """Random boards full of ties (in correct answers, in time, whole groups level in both),
    times about the bucket bounds: every person's rank on every board equals a brute-force
    rank as days go by (the week window rolls, and across a gap), after a person is forgotten
    and after a chat's move; rank_counts equals a count of the board rows."""
    rng = random.Random(21)
    people = list(range(60))
    rng.shuffle(people)
    clones, i = [], 0
    while i < len(people):  # groups of 1 to 5 people who answer alike
        size = rng.randint(1, 5)
        clones.append(people[i:i + size])
        i += size
    materializer = backend.materializer(interval=3600, idle_check=3600)
    async with backend.opened(materializer=materializer) as store:
        for n in [0, 1, 2, 4, 6, 8, 9, 17]:
            day = DAY0 + timedelta(days=n)
            for chat in ("tg:-1", "tg:-2"):
                for _ in range(2):
                    await answer_in_clones(store, rng, chat, day, clones)
            await store.materialize()
            if n in (2, 8, 9, 17):
                await check_every_rank(store, backend, day.date())
            await backend.check_rank_counts()
        await store.delete_person(f"tg:{clones[0][0]}")  # forgotten: everyone below moves up
        await store.delete_person(f"tg:{people[-1]}")
        await store.materialize()
        await check_every_rank(store, backend, (DAY0 + timedelta(days=17)).date())
        await backend.check_rank_counts()
        assert await store.migrate_chat("tg:-2", "tg:-1")
        await check_every_rank(store, backend, (DAY0 + timedelta(days=17)).date())
    await backend.check_aggregates()


async def test_the_sql_time_bucket_is_the_python_one(backend: Backend) -> None:
    """rank_buckets.sql (recounts, migrations, PostgreSQL's application) gives the bucket
    rank_buckets.bucket gives (the materializers' Python), at every bound and between."""
    rng = random.Random(5)
    times = sorted({*range(-3, 70), *(b + d for k in range(63) for d in (-1, 0, 1)
                                      if 0 <= (b := 1 << k) + d < 1 << 63),
                    *(rank_buckets.low(n) for n in range(1, 960)),
                    *(rng.randrange(1 << rng.randrange(1, 63)) for _ in range(2000))})
    async with backend.opened():
        pass
    if backend.name == "postgres":
        rows = await backend.fetch(f"SELECT t, {rank_buckets.sql('t', postgres=True)}"
                                   " FROM unnest($1::bigint[]) AS t", times)
    else:
        rows = await backend.fetch(f"SELECT value, {rank_buckets.sql('value')}"
                                   " FROM json_each($1)", json.dumps(times))
    assert [(int(t), int(b)) for t, b in rows] == [(t, rank_buckets.bucket(t)) for t in times]
    buckets = [rank_buckets.bucket(t) for t in times]
    assert buckets == sorted(buckets)  # monotonic: a faster time never has a later bucket
    last = rank_buckets.bucket((1 << 63) - 1)  # ends at the greatest bigint
    for t in times:
        number, low, high = rank_buckets.bounds(t)
        assert low <= t < high and (rank_buckets.bucket(high) == number + 1 or number == last)


async def test_postgres_my_rank_reads_a_tenth_of_my_tie_group_at_most() -> None:
    """Level with 20,000 people on PostgreSQL, my rank reads under a tenth of them from the
    rank index (the rows its index scans return, from EXPLAIN ANALYZE), wherever I am in the
    group, and is right: as on SQLite (tests/test_boards_perf.py), the faster time buckets
    come from rank_counts."""
    from bot.storage.postgres import boards, rank_counts

    rng = random.Random(20_000)
    level = [(f"p:{i}", 5, sum(rng.randrange(60_000) for _ in range(10))) for i in range(20_000)]
    others = [(f"q:{i}", rng.choice((2, 3, 4, 6, 7, 8)), rng.randrange(600_000))
              for i in range(5_000)]
    async with fresh_database() as url:
        async with PostgresBackend(url).opened():
            pass
        db = await asyncpg.connect(url)
        try:
            await db.copy_records_to_table(
                "totals", columns=["chat_key", "person_key", "correct", "answered", "time_ms"],
                records=[("c:1", key, correct, 10, ms) for key, correct, ms in level + others])
            await rank_counts.recount(db, ["all"])
            await db.execute("VACUUM ANALYZE")
            group = [key for key, _, _ in sorted(level, key=lambda r: (r[2], r[0]))]
            above = sum(1 for _, correct, _ in others if correct > 5)
            sql = boards.ranked_sql("totals", "chat_key = $1", 1)
            for place in (0, 2_000, 9_999, 10_000, 13_000, 19_999):
                args = ("c:1", 10, group[place], "all", date.min)
                mine = [r for r in await db.fetch(sql, *args) if r[5] is not None]
                assert [int(r[5]) + 1 for r in mine] == [above + place + 1], place
                text = await db.fetchval(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", *args)
                plan = nodes(json.loads(text)[0]["Plan"])
                read = sum(n["Actual Rows"] * n["Actual Loops"] for n in plan
                           if n.get("Relation Name") == "totals")
                assert read * 10 < len(group), (place, read)
                # my bucket's bounds are read from one row, not inlined into every count as
                # copies of the bucket's expression (each a cost to plan, on every call)
                assert any(n.get("CTE Name") == "placed" for n in plan), place
        finally:
            await db.close()
