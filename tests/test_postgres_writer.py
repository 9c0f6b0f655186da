"""PostgreSQL's writer and materializer, asserted by structure, never by time: a batch of
answers is one statement (counted with asyncpg's query logger on the writer's connection), a
statement that fails as a whole is written again answer by answer, a connection terminated
under a batch fails that batch and confirms none of it, no triggers anywhere, and rank_counts
equal to a recount after concurrent bursts with duplicates and closed posts mixed in.

Each test runs on a fresh database of QUIZBOT_TEST_POSTGRES_URL's server (skipped with one
visible line without it)."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from bot.core.ports import AnswerRecord, RecordOutcome
from bot.core.storage_faults import storage_unavailable
from bot.storage.postgres import ops
from bot.storage.postgres.materializer import Materializer
from bot.storage.postgres.schema import MIGRATIONS, migrate
from bot.storage.postgres.storage import PostgresStorage
from bot.storage.postgres.writer import Writer
from tests.storage_contract.backends import PostgresBackend
from tests.storage_contract.pg import fresh_database
from tests.storage_contract.test_boards import assert_rank_counts

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
Result = tuple[RecordOutcome, AnswerRecord | None] | BaseException


@asynccontextmanager
async def database() -> AsyncIterator[PostgresBackend]:
    async with fresh_database("pgw") as url:
        yield PostgresBackend(url)


def quiet(chunk: int = 5000) -> Materializer:
    """A materializer that applies only when asked (materialize(), close)."""
    return Materializer(interval=3600, idle_check=3600, chunk=chunk)


def writer_of(store: PostgresStorage) -> Writer:
    assert store._writer is not None
    return store._writer


class Held:
    """The writer held inside a transaction of its own until released: what is submitted
    meanwhile is the next batch."""

    def __init__(self, store: PostgresStorage) -> None:
        self.store = store
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.done: asyncio.Future[Any] | None = None

    async def __aenter__(self) -> Held:
        async def gate(db: Any) -> None:
            self.entered.set()
            await self.release.wait()

        self.done = writer_of(self.store).submit(gate)
        await self.entered.wait()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release.set()
        assert self.done is not None
        await self.done

    async def queued(self, count: int) -> None:
        """Wait until `count` writes are queued behind the gate."""
        writer = writer_of(self.store)
        for _ in range(10_000):
            if len(writer._queue) >= count:
                return
            await asyncio.sleep(0)
        raise AssertionError(f"only {len(writer._queue)} writes queued, not {count}")


def logged_queries(db: Any) -> list[str]:
    """Every statement the connection runs from now on (asyncpg's query logger)."""
    queries: list[str] = []
    db.add_query_logger(lambda record: queries.append(record.query))
    return queries


async def settle() -> None:
    """Let the query logger's callbacks (call_soon) run."""
    for _ in range(3):
        await asyncio.sleep(0)


def answers(post: int, people: range, option: int = 1) -> list[AnswerRecord]:
    return [AnswerRecord(post, f"tg:{n}", option, option == 0, NOW, 100 + n, name=f"p{n}")
            for n in people]


async def test_a_batch_of_answers_is_one_statement_and_no_transaction() -> None:
    async with database() as backend, PostgresStorage(backend.url, quiet()) as store:
        post = (await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)).id
        await store.record_answer(answers(post, range(1))[0])  # the statement is prepared
        writer = writer_of(store)
        assert writer._db is not None
        queries = logged_queries(writer._db)
        statements = writer.statements
        async with Held(store) as held:
            tasks = [asyncio.ensure_future(store.record_answer(a))
                     for a in answers(post, range(1, 41))]
            await held.queued(40)
            await settle()
            queries.clear()  # the gate's BEGIN
        results = await asyncio.gather(*tasks)
        await settle()
        assert [r[0] for r in results] == ["inserted"] * 40
        # the gate's COMMIT, then the forty answers and their people in one statement,
        # which is its own transaction: no BEGIN, SAVEPOINT or COMMIT around it
        assert queries == ["COMMIT", ops.RECORD_ANSWERS]
        assert writer.statements == statements + 1
        assert await backend.count("answers") == 41
        assert await backend.count("persons") == 41


def probes(plan: dict[str, Any]) -> dict[str, int]:
    """How many times each table was scanned (its rows read, by index or not) in an EXPLAIN
    ANALYZE plan: a node that never ran counts 0."""
    counted: dict[str, int] = {}
    if plan["Node Type"] != "ModifyTable" and "Relation Name" in plan:
        name = plan["Relation Name"]
        counted[name] = counted.get(name, 0) + plan["Actual Loops"]
    for child in plan.get("Plans", []):
        for name, loops in probes(child).items():
            counted[name] = counted.get(name, 0) + loops
    return counted


@pytest.mark.parametrize("plan_kind", ["custom", "generic"])
async def test_an_answer_the_post_takes_reads_its_person_and_post_once_and_no_answer(
    plan_kind: str,
) -> None:
    """The batch statement's cost per answer, from its plan: one probe of the person, one of
    the post (and of its daily claim); the earlier answer is read only for the answers not
    inserted (here the two given before), never for the ones the post takes. Also with the
    generic plan the writer runs it with (one plan for every batch, whatever its size)."""
    async with database() as backend, PostgresStorage(backend.url, quiet()) as store:
        post = (await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)).id
        for earlier in answers(post, range(2)):
            await store.record_answer(earlier)
        calls = [(a, True) for a in answers(post, range(12))]
        db = await asyncpg.connect(backend.url)
        try:
            transaction = db.transaction()
            await transaction.start()
            await db.execute(f"SET LOCAL plan_cache_mode = force_{plan_kind}_plan")
            await db.execute(f"PREPARE answers_statement AS {ops.RECORD_ANSWERS}")
            # EXECUTE takes no parameters: the arguments as literals, quoted by the server
            kinds = ["bigint", "text", "smallint", "bool", "timestamptz", "bigint", "text",
                     "bool", "text", "smallint"]
            literals = await db.fetchrow("SELECT " + ", ".join(
                f"quote_literal(${i + 1}::{kind}[]::text) || '::{kind}[]'"
                for i, kind in enumerate(kinds)), *ops.record_arguments(calls))
            plan = json.loads(await db.fetchval(
                "EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE answers_statement("
                + ", ".join(literals) + ")"))[0]["Plan"]
            await transaction.rollback()
        finally:
            await db.close()
        assert probes(plan) == {"persons": 12, "posts": 12, "daily_posts": 12, "answers": 2}


async def test_the_answers_statement_is_planned_once_not_at_each_batch() -> None:
    """The writer's connection keeps one generic plan per prepared statement: batches of 1,
    7 and 40 answers run the answers' statement without planning it again (a custom plan of
    that CTE is most of a small batch's server CPU)."""
    async with database() as backend, PostgresStorage(backend.url, quiet()) as store:
        post = (await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)).id
        people = iter(range(10_000))
        for size in (1, 7, 40, 1, 1, 1):
            async with Held(store) as held:
                tasks = [asyncio.ensure_future(store.record_answer(answers(
                    post, range(n, n + 1))[0])) for n in [next(people) for _ in range(size)]]
                await held.queued(size)
            assert all(r[0] == "inserted" for r in await asyncio.gather(*tasks))

        async def plans(db: Any) -> Any:
            return await db.fetchrow(
                "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
                " WHERE statement = $1", ops.RECORD_ANSWERS)

        generic, custom = await writer_of(store).submit(plans)
        assert (generic, custom) == (6, 0)
        assert await backend.count("answers") == 51


async def test_a_batch_that_fails_as_a_whole_is_written_answer_by_answer() -> None:
    async with database() as backend, PostgresStorage(backend.url, quiet()) as store:
        post = (await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)).id
        await store.record_answer(answers(post, range(10, 11))[0])  # the statement is prepared
        batch = answers(post, range(10))
        batch[4] = AnswerRecord(post, "tg:4", 70_000, False, NOW, 1, name="p4")  # not a smallint
        writer = writer_of(store)
        async with Held(store) as held:
            tasks = [asyncio.ensure_future(store.record_answer(a)) for a in batch]
            await held.queued(10)
            assert writer._db is not None
            queries = logged_queries(writer._db)
        results = await asyncio.gather(*tasks, return_exceptions=True)
        await settle()
        assert isinstance(results[4], asyncpg.DataError)
        assert [r[0] for i, r in enumerate(results) if i != 4] == ["inserted"] * 9  # type: ignore[index]
        # the gate's COMMIT, the batch, then each answer alone (each its own transaction)
        assert queries == ["COMMIT"] + [ops.RECORD_ANSWERS] * 11
        stored = await backend.fetch("SELECT person_key FROM answers ORDER BY person_key")
        assert [r[0] for r in stored] == sorted(f"tg:{n}" for n in range(11) if n != 4)
        assert await store.person_name("tg:4") is None  # its failure left no person


async def test_a_connection_lost_under_a_batch_confirms_none_of_it() -> None:
    """The batch's statement waits for another transaction's row (the same answer) when its
    connection is terminated: none of its answers is acknowledged, none is stored, every
    failure is one the core treats as the storage being away (the update comes again), and
    the same answers sent again are each stored once."""
    async with database() as backend, PostgresStorage(backend.url, quiet()) as store:
        post = (await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)).id
        await store.record_answer(answers(post, range(1))[0])
        other = await asyncpg.connect(backend.url)
        try:
            await other.execute("BEGIN")
            await other.execute("INSERT INTO persons(key) VALUES ('tg:5')")
            await other.execute(
                "INSERT INTO answers(post_id, person_key, option, correct, answered_at,"
                " elapsed_ms, chat_key, quiz_id, question_id)"
                " VALUES ($1, 'tg:5', 2, false, $2, 1, 'tg:-1', 'sample', 's-one')", post, NOW)
            writer = writer_of(store)
            assert writer._db is not None
            pid = writer._db.get_server_pid()
            batch = answers(post, range(1, 11))
            tasks = [asyncio.ensure_future(store.record_answer(a)) for a in batch]
            for _ in range(5000):  # polled: the statement waits on tg:5's row
                waiting = await backend.scalar(
                    "SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1", pid)
                if waiting == "Lock":
                    break
                await asyncio.sleep(0.002)
            assert waiting == "Lock"
            assert not any(t.done() for t in tasks)  # nothing acknowledged before COMMIT
            await backend.fetch("SELECT pg_terminate_backend($1)", pid)
            results = await asyncio.gather(*tasks, return_exceptions=True)
            await other.execute("ROLLBACK")
        finally:
            await other.close()
        assert all(isinstance(r, Exception) and storage_unavailable(r) for r in results), \
            results
        assert await backend.count("answers") == 1  # none of the batch
        again = await asyncio.gather(*(store.record_answer(a) for a in batch))  # redelivered
        assert [r[0] for r in again] == ["inserted"] * 10
        assert await backend.count("answers") == 11


async def test_connections_terminated_mid_burst_lose_nothing_acknowledged() -> None:
    async with database() as backend, PostgresStorage(backend.url, quiet()) as store:
        posts = [(await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en",
                                          NOW)).id for _ in range(4)]
        rng = random.Random(3)
        calls = [AnswerRecord(post, f"tg:{rng.randrange(60)}", rng.randrange(3), False, NOW, 5)
                 for post in posts for _ in range(150)]
        writer = writer_of(store)
        burst = [asyncio.ensure_future(store.record_answer(a)) for a in calls]
        terminated = 0
        while not all(t.done() for t in burst) and terminated < 5:
            if writer._db is not None and not writer._db.is_closed():
                await backend.fetch("SELECT pg_terminate_backend($1)",
                                    writer._db.get_server_pid())
                terminated += 1
            await asyncio.sleep(0.001)
        results: list[Result] = await asyncio.gather(*burst, return_exceptions=True)
        acknowledged = {(a.post_id, a.person_key): a.option for a, r in zip(calls, results,
                        strict=True) if not isinstance(r, BaseException) and r[0] == "inserted"}
        failed = [r for r in results if isinstance(r, BaseException)]
        assert all(storage_unavailable(r) for r in failed), failed
        stored = {(r[0], r[1]): r[2] for r in await backend.fetch(
            "SELECT post_id, person_key, option FROM answers")}
        assert len(stored) == await backend.count("answers")  # each (post, person) once
        for key, option in acknowledged.items():
            assert stored[key] == option  # every acknowledged answer stored, as answered


async def test_no_triggers_and_rank_counts_equal_a_recount_after_bursts_from_two_processes(
) -> None:
    """Two processes answer the same posts at once, with duplicates (the same person twice,
    through both) and posts closing mid-burst; then a person is deleted."""
    async with database() as backend:
        stores = [PostgresStorage(backend.url, quiet(chunk=40)) for _ in range(2)]
        await asyncio.gather(*(s.open() for s in stores))
        try:
            assert await backend.scalar(
                "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal") == 0
            rng = random.Random(8)
            calls: list[tuple[int, AnswerRecord]] = []
            closing: list[int] = []
            for n in range(8):
                chat = f"tg:-{n % 2}"
                when = NOW + timedelta(days=n % 3)
                post = (await stores[0].create_post(chat, "sample", "s-one", (0, 1, 2), "en",
                                                    when)).id
                if n % 3 == 2:
                    closing.append(post)
                for _ in range(60):
                    option = rng.randrange(3)
                    calls.append((rng.randrange(2), AnswerRecord(
                        post, f"tg:{rng.randrange(25)}", option, option == 0,
                        when + timedelta(seconds=rng.randrange(60)), rng.randrange(1, 9000),
                        name=f"p{rng.randrange(3)}")))
            rng.shuffle(calls)
            third = len(calls) // 3
            results: list[Any] = []
            for part in range(3):  # the posts close in the middle third, among its answers
                work: list[Coroutine[Any, Any, Any]] = [
                    stores[i].record_answer(a) for i, a in calls[part * third:][:third]]
                if part == 1:
                    work[len(work) // 2:len(work) // 2] = [
                        stores[1].close_post(p, NOW + timedelta(days=9)) for p in closing]
                results += await asyncio.gather(*work)
                await asyncio.gather(*(s.materialize() for s in stores))  # rows change later
            outcomes = [r[0] for r in results if isinstance(r, tuple)]
            assert {"inserted", "duplicate", "closed"} <= set(outcomes)
            assert outcomes.count("inserted") == await backend.count("answers")
            await asyncio.gather(*(s.materialize() for s in stores))
            await backend.check_aggregates()
            await assert_rank_counts(backend)
            assert await stores[0].delete_person("tg:3")
            await backend.check_aggregates()
            await assert_rank_counts(backend)
        finally:
            await asyncio.gather(*(s.close() for s in stores))


async def test_the_migration_drops_the_triggers_and_counts_again() -> None:
    async with database() as backend:
        db = await asyncpg.connect(backend.url)
        try:
            dropping = next(i for i, script in enumerate(MIGRATIONS)
                            if "DROP FUNCTION IF EXISTS quizbot_count_ranks" in script)
            await migrate(db, backend.url, upto=dropping)
            assert await db.fetchval(
                "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal") == 9
            await db.execute(
                "INSERT INTO totals(chat_key, person_key, correct, answered, time_ms)"
                " VALUES ('*', 'tg:1', 3, 4, 100), ('*', 'tg:2', 3, 3, 90),"
                " ('tg:-1', 'tg:1', 1, 1, 5)")
            await db.execute("UPDATE rank_counts SET people = people + 5")  # wrong counts
            await migrate(db, backend.url)
            assert await db.fetchval(
                "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal") == 0
            assert await db.fetchval(
                "SELECT count(*) FROM pg_proc WHERE proname = 'quizbot_count_ranks'") == 0
        finally:
            await db.close()
        await assert_rank_counts(backend)
        await backend.check_figures()  # the later dashboard migration counted them


@pytest.fixture(autouse=True)
def _postgres() -> None:
    """Skip (one visible line) without a server."""
    from tests.storage_contract.pg import require

    require()
