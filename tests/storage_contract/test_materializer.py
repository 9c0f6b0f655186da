"""The materializer on both backends: boards' aggregates applied from the answers in batches,
off the answer's path. Whatever happens (chunks, two processes, kill -9 in the middle of a
burst), the aggregates equal a recount from the raw answers, and rank_counts and the
dashboard's figures a count of the aggregates."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg

from bot.core.ports import AnswerRecord
from bot.storage import SqliteStorage
from bot.storage.postgres.materializer import apply as pg_apply
from bot.storage.postgres.storage import PostgresStorage
from bot.storage.sqlite.materializer import apply as sqlite_apply
from tests.storage_contract.backends import Backend, Store

ROOT = Path(__file__).resolve().parent.parent.parent
NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


async def random_answers(
    store: Store, rng: random.Random, posts: int = 12, per_post: int = 40
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


async def test_aggregates_equal_a_recount_in_small_chunks(backend: Backend) -> None:
    materializer = backend.materializer(chunk=7, interval=3600, idle_check=3600)
    async with backend.opened(materializer=materializer) as store:
        await random_answers(store, random.Random(1))
        assert await backend.unapplied() > 0  # nothing applied them yet: an hour's interval
        await store.materialize()
        assert await backend.unapplied() == 0
        assert await backend.stored() == await backend.recount()
        await backend.check_rank_counts()
        await backend.check_figures()
        await store.materialize()  # nothing left: no second application
        assert await backend.stored() == await backend.recount()
        await backend.check_rank_counts()
        await backend.check_figures()


async def test_applying_again_from_the_stored_position_adds_nothing(backend: Backend) -> None:
    async with backend.opened() as store:
        await random_answers(store, random.Random(2))
        await store.materialize()
    if backend.name == "sqlite":
        import sqlite3

        with sqlite3.connect(backend.database, isolation_level=None) as db:
            db.execute("BEGIN IMMEDIATE")
            assert sqlite_apply(db)[0] == 0
            db.execute("COMMIT")
    else:
        db = await asyncpg.connect(backend.database)
        try:
            async with db.transaction():
                assert (await pg_apply(db))[0] == 0
        finally:
            await db.close()
    assert await backend.stored() == await backend.recount()
    await backend.check_rank_counts()
    await backend.check_figures()


async def test_two_processes_never_apply_an_answer_twice(backend: Backend) -> None:
    one = backend.store(materializer=backend.materializer(chunk=5, interval=0))
    two = backend.store(materializer=backend.materializer(chunk=3, interval=0))
    async with one, two:
        await asyncio.gather(
            random_answers(one, random.Random(3)), random_answers(two, random.Random(4)),
        )
        await asyncio.gather(one.materialize(), two.materialize())
    assert await backend.unapplied() == 0
    assert await backend.stored() == await backend.recount()
    await backend.check_rank_counts()
    await backend.check_figures()


async def test_answers_are_applied_without_being_asked(backend: Backend) -> None:
    async with backend.opened(materializer=backend.materializer(interval=0.01)) as store:
        await random_answers(store, random.Random(5), posts=3)
        for _ in range(2000):  # polled, not timed: it happens within the interval
            if await backend.unapplied() == 0:
                break
            await asyncio.sleep(0.005)
        assert await backend.unapplied() == 0
        assert isinstance(store, SqliteStorage | PostgresStorage)
        assert store.materializer.applied > 0
    assert await backend.stored() == await backend.recount()
    await backend.check_rank_counts()
    await backend.check_figures()


async def test_answers_another_process_left_are_applied(backend: Backend) -> None:
    """A process committed answers and died before applying them: another one notices."""
    idle = backend.materializer(interval=0.01, idle_check=0.01)
    async with backend.opened(materializer=idle) as watcher:
        crashed = backend.store(materializer=backend.materializer(interval=3600,
                                                                  idle_check=3600))
        await crashed.open()
        await random_answers(crashed, random.Random(11), posts=3)
        for _ in range(2000):
            if await backend.unapplied() == 0:
                break
            await asyncio.sleep(0.005)
        assert await backend.unapplied() == 0
        assert isinstance(watcher, SqliteStorage | PostgresStorage)
        assert watcher.materializer.applied > 0
        await crashed.close()
    assert await backend.stored() == await backend.recount()
    await backend.check_rank_counts()
    await backend.check_figures()


async def test_close_applies_what_is_left(backend: Backend) -> None:
    slow = backend.materializer(interval=3600, idle_check=3600)
    async with backend.opened(materializer=slow) as store:
        await random_answers(store, random.Random(6), posts=4)
        assert await backend.unapplied() > 0
    assert await backend.unapplied() == 0
    assert await backend.stored() == await backend.recount()
    await backend.check_rank_counts()
    await backend.check_figures()


async def test_a_chat_moved_with_answers_pending_keeps_its_board(backend: Backend) -> None:
    slow = backend.materializer(interval=3600, idle_check=3600)
    async with backend.opened(materializer=slow) as store:
        await random_answers(store, random.Random(7), posts=6)
        await store.materialize()
        await random_answers(store, random.Random(8), posts=6)  # pending while it moves
        assert await store.migrate_chat("tg:-1", "tg:-100")
        await store.materialize()
        board, _ = await store.leaderboard("tg:-100", None, 100, None)
        assert board and await store.leaderboard("tg:-1", None, 10, None) == ([], None)
    assert await backend.stored() == await backend.recount()
    await backend.check_rank_counts()
    await backend.check_figures()


async def test_a_chat_moved_while_another_process_applies_keeps_its_board(
    backend: Backend,
) -> None:
    busy = backend.materializer(interval=0, chunk=3)
    async with backend.opened() as store, backend.opened(materializer=busy) as other:
        await random_answers(store, random.Random(12), posts=6)
        applying = asyncio.ensure_future(random_answers(other, random.Random(13), posts=6))
        assert await store.migrate_chat("tg:-1", "tg:-100")
        await applying
        await asyncio.gather(store.materialize(), other.materialize())
    # nothing applied under the old key after the move, nothing lost or counted twice
    assert await backend.stored() == await backend.recount()
    await backend.check_rank_counts()
    await backend.check_figures()
    await backend.check_item_figures()


CHILD = textwrap.dedent("""
    import asyncio, random, sys
    from datetime import UTC, datetime, timedelta
    from bot.core.ports import AnswerRecord
    from bot.storage import storage_for
    from bot.storage.sqlite.materializer import Materializer as SqliteMaterializer
    from bot.storage.postgres.materializer import Materializer as PgMaterializer

    async def main(database, seed):
        rng = random.Random(seed)
        now = datetime(2026, 3, 1, 12, tzinfo=UTC)
        store = storage_for(database)
        # tiny, frequent applications: the kill lands inside one sooner or later
        kind = PgMaterializer if database.startswith("postgresql") else SqliteMaterializer
        store.materializer = kind(interval=0.001, chunk=37)
        async with store:
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


async def answers_in(backend: Backend) -> int:
    try:
        return await backend.count("answers")
    except Exception:  # not created yet
        return 0


async def test_kill_9_in_the_middle_of_a_burst_never_double_applies(backend: Backend) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    total = 0
    for round_ in range(4):
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c", CHILD, backend.database, str(round_),
            stdout=asyncio.subprocess.PIPE, env=env,
        )
        assert child.stdout is not None
        assert (await child.stdout.readline()).strip() == b"ready"
        target = total + 400 + 350 * round_  # a different moment in each round
        for _ in range(20_000):  # polled: no timing is asserted
            if await answers_in(backend) >= target:
                break
            await asyncio.sleep(0.002)
        child.send_signal(signal.SIGKILL)
        await child.wait()
        total = await answers_in(backend)
        assert total >= target
        async with backend.opened() as store:  # opening applies what the crash left
            assert await backend.unapplied() == 0
            recount = await backend.recount()
            assert await backend.stored() == recount, f"round {round_}"
            await backend.check_rank_counts()
            await backend.check_figures()
            board, _ = await store.leaderboard(None, None, 5, None)
            expected = sorted(
                (t for t in recount["totals"] if t[0] == "*"),
                key=lambda t: (-t[2], t[4], t[1]),
            )[:5]
            assert [(r.person_key, r.correct) for r in board] == [
                (t[1], t[2]) for t in expected
            ]


async def test_a_lost_materializer_connection_is_replaced(backend: Backend) -> None:
    if backend.name != "postgres":
        return  # SQLite's materializer runs on the writer's file
    fast = backend.materializer(interval=0.01, idle_check=0.01)
    async with backend.opened(materializer=fast) as store:
        await random_answers(store, random.Random(21), posts=2)
        await store.materialize()
        assert isinstance(store, PostgresStorage)
        connection = store.materializer._db
        assert connection is not None
        await backend.fetch("SELECT pg_terminate_backend($1)", connection.get_server_pid())
        await random_answers(store, random.Random(22), posts=2)
        for _ in range(2000):  # polled: the next application reconnects
            if await backend.unapplied() == 0:
                break
            await asyncio.sleep(0.005)
        await store.materialize()
        assert await backend.unapplied() == 0
    assert await backend.stored() == await backend.recount()
    await backend.check_rank_counts()
    await backend.check_figures()


async def test_a_transaction_in_another_database_does_not_stall_the_boards(
    backend: Backend,
) -> None:
    """The boards wait for older transactions of this database only: another database's on
    the same server (another app, a test holding a lock) is none of theirs, while one of
    this database (which may be writing answers) is still waited for."""
    if backend.name != "postgres":
        return  # SQLite has one writer per file
    server = backend.database.rsplit("/", 1)[0] + "/postgres"
    quick = backend.materializer(wait_limit=0.3)
    async with backend.opened(materializer=quick) as store:
        for database, stalls in ((server, False), (backend.database, True)):
            held = await asyncpg.connect(database)
            try:
                hold = held.transaction()
                await hold.start()
                await held.fetchval("SELECT pg_current_xact_id()")  # it holds an xid
                await random_answers(store, random.Random(31), posts=1)
                await store.materialize()
                assert (await backend.unapplied() > 0) is stalls
                await hold.rollback()
            finally:
                await held.close()
        await store.materialize()
        assert await backend.unapplied() == 0
    assert await backend.stored() == await backend.recount()
