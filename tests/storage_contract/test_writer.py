"""The writers of both backends: group commit, a savepoint per write, acknowledged only after
COMMIT, a failing write undone alone, close drains the queue. No timing is asserted: a gate
op holds the writer so the test decides what one batch holds. (The SQLite writer thread's own
details, one hop per batch, are in tests/test_writer.py.)"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from bot.core.models import Chat, Person
from bot.core.service import QuizService
from bot.storage.postgres.writer import MAX_BATCH
from bot.storage.postgres.writer import Writer as PgWriter
from bot.storage.sqlite.writer import Writer as SqliteWriter
from tests.storage_contract.backends import Backend, SqliteBackend, Store


class Gate:
    """An op that holds the writer until the test opens it."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    async def wait_entered(self) -> None:
        for _ in range(30_000):  # polled: a helper thread would outlive the test's checks
            if self.entered.is_set():
                return
            await asyncio.sleep(0.001)
        raise AssertionError("the writer never reached the gate")


class Harness:
    """One backend's writer with a table `t(n)` and ops written for it."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.writer: SqliteWriter | PgWriter
        if isinstance(backend, SqliteBackend):
            self.writer = SqliteWriter(backend.path)
        else:
            url = backend.database
            self.writer = PgWriter(lambda: asyncpg.connect(url))
        self.gates: list[Gate] = []

    async def start(self) -> None:
        await self.writer.start()
        await self.submit("create")

    def submit(self, what: str, n: int = 0) -> asyncio.Future[Any]:
        return self.writer.submit(self._ops()[what], *([] if what == "create" else [n]))

    def submit_gate(self, gate: Gate) -> asyncio.Future[Any]:
        self.gates.append(gate)
        return self.writer.submit(self._ops()["gate"], gate)

    def _ops(self) -> dict[str, Any]:
        if self.backend.name == "sqlite":
            def create(db: sqlite3.Connection) -> None:
                db.execute("CREATE TABLE IF NOT EXISTS t (n INTEGER PRIMARY KEY)")
                db.execute("CREATE TABLE IF NOT EXISTS parent (id INTEGER PRIMARY KEY)")
                db.execute("CREATE TABLE IF NOT EXISTS child (p INTEGER REFERENCES"
                           " parent(id) DEFERRABLE INITIALLY DEFERRED)")

            def insert(db: sqlite3.Connection, n: int) -> int:
                db.execute("INSERT INTO t(n) VALUES (?)", (n,))
                return n

            def insert_then_fail(db: sqlite3.Connection, n: int) -> None:
                db.execute("INSERT INTO t(n) VALUES (?)", (n,))
                raise ValueError(f"op {n} fails after writing")

            def orphan(db: sqlite3.Connection, n: int) -> None:
                db.execute("INSERT INTO child(p) VALUES (?)", (n,))  # only COMMIT notices

            def gate(db: sqlite3.Connection, gate: Gate) -> str:
                gate.entered.set()
                assert gate.release.wait(timeout=30), "gate never opened"
                return "gate"

            return {"create": create, "insert": insert, "fail": insert_then_fail,
                    "orphan": orphan, "gate": gate}

        async def pg_create(db: Any) -> None:
            await db.execute(
                "CREATE TABLE IF NOT EXISTS t (n integer PRIMARY KEY);"
                " CREATE TABLE IF NOT EXISTS parent (id integer PRIMARY KEY);"
                " CREATE TABLE IF NOT EXISTS child (p integer REFERENCES parent(id)"
                " DEFERRABLE INITIALLY DEFERRED)"
            )

        async def pg_insert(db: Any, n: int) -> int:
            await db.execute("INSERT INTO t(n) VALUES ($1)", n)
            return n

        async def pg_insert_then_fail(db: Any, n: int) -> None:
            await db.execute("INSERT INTO t(n) VALUES ($1)", n)
            raise ValueError(f"op {n} fails after writing")

        async def pg_orphan(db: Any, n: int) -> None:
            await db.execute("INSERT INTO child(p) VALUES ($1)", n)

        async def pg_gate(db: Any, gate: Gate) -> str:
            gate.entered.set()
            for _ in range(30_000):
                if gate.release.is_set():
                    return "gate"
                await asyncio.sleep(0.001)
            raise AssertionError("gate never opened")

        return {"create": pg_create, "insert": pg_insert, "fail": pg_insert_then_fail,
                "orphan": pg_orphan, "gate": pg_gate}

    async def hold(self, gate: Gate) -> asyncio.Future[Any]:
        """Hold the writer inside a batch of its own; returns the gate's future."""
        held = self.submit_gate(gate)
        await gate.wait_entered()
        return held

    async def committed(self) -> list[int]:
        """What another connection (another process) sees."""
        return [r[0] for r in await self.backend.fetch("SELECT n FROM t ORDER BY n")]

    @property
    def violation(self) -> type[Exception]:
        return sqlite3.IntegrityError if self.backend.name == "sqlite" else \
            asyncpg.IntegrityConstraintViolationError


@pytest.fixture
async def w(backend: Backend) -> AsyncIterator[Harness]:
    harness = Harness(backend)
    await harness.start()
    yield harness
    for gate in harness.gates:
        gate.release.set()
    await harness.writer.close()


async def test_a_batch_commits_once(w: Harness) -> None:
    gate = Gate()
    held = await w.hold(gate)
    batches = w.writer.batches
    count = 60 if w.backend.name == "postgres" else 100  # a PostgreSQL batch holds 64
    futures = [w.submit("insert", n) for n in range(count)]  # queued while the gate holds
    gate.release.set()
    assert await held == "gate"
    assert await asyncio.gather(*futures) == list(range(count))
    assert w.writer.batches == batches + 2  # the gate's transaction, then all in one
    assert await w.committed() == list(range(count))


async def test_a_postgres_batch_holds_at_most_64_writes(backend: Backend) -> None:
    if backend.name != "postgres":
        return  # SQLite has no such limit (test_a_batch_commits_once takes 100 at once)
    harness = Harness(backend)
    await harness.start()
    try:
        gate = Gate()
        held = await harness.hold(gate)
        batches = harness.writer.batches
        futures = [harness.submit("insert", n) for n in range(MAX_BATCH * 2 + 1)]
        gate.release.set()
        await held
        await asyncio.gather(*futures)
        assert harness.writer.batches == batches + 1 + 3
    finally:
        await harness.writer.close()


async def test_nothing_is_acknowledged_before_commit(w: Harness) -> None:
    first, second = Gate(), Gate()
    held = await w.hold(first)
    written = w.submit("insert", 1)
    behind = w.submit_gate(second)  # same batch: it holds the transaction open
    first.release.set()
    await second.wait_entered()  # insert(1) has run, not committed yet
    await asyncio.sleep(0.01)
    assert not written.done()
    assert await w.committed() == []
    second.release.set()
    await asyncio.gather(held, written, behind)
    assert await w.committed() == [1]


async def test_a_failing_op_is_undone_alone(w: Harness) -> None:
    gate = Gate()
    held = await w.hold(gate)
    batches = w.writer.batches
    ops = [w.submit("insert", 1), w.submit("fail", 2), w.submit("insert", 3),
           w.submit("insert", 3)]  # a duplicate key fails too
    gate.release.set()
    await held
    results = await asyncio.gather(*ops, return_exceptions=True)
    assert results[0] == 1 and results[2] == 3
    assert isinstance(results[1], ValueError)
    assert isinstance(results[3], w.violation)
    assert w.writer.batches == batches + 2  # they shared one transaction
    assert await w.committed() == [1, 3]


async def test_a_failed_commit_fails_every_op_of_its_batch(w: Harness) -> None:
    gate = Gate()
    held = await w.hold(gate)
    ops = [w.submit("insert", 1), w.submit("orphan", 42), w.submit("insert", 2)]
    gate.release.set()
    await held
    results = await asyncio.gather(*ops, return_exceptions=True)
    assert all(isinstance(r, w.violation) for r in results), results
    assert await w.committed() == []
    assert await w.submit("insert", 5) == 5  # the writer goes on
    assert await w.committed() == [5]


async def test_close_drains_what_is_queued(backend: Backend) -> None:
    harness = Harness(backend)
    await harness.start()
    gate = Gate()
    held = await harness.hold(gate)
    queued = [harness.submit("insert", n) for n in range(50)]
    closing = asyncio.ensure_future(harness.writer.close())
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="not open"):
        harness.submit("insert", 99)  # closing: nothing new is taken
    gate.release.set()
    await closing
    assert await held == "gate"
    assert await asyncio.gather(*queued) == list(range(50))
    assert await harness.committed() == list(range(50))


async def test_a_caller_that_gave_up_does_not_break_the_batch(w: Harness) -> None:
    gate = Gate()
    held = await w.hold(gate)
    abandoned = w.submit("insert", 1)
    kept = w.submit("insert", 2)
    abandoned.cancel()
    gate.release.set()
    await held
    assert await kept == 2
    assert await w.committed() == [1, 2]  # it was written; nobody was told


async def test_a_write_waits_for_another_process_holding_the_lock(w: Harness) -> None:
    if w.backend.name == "sqlite":
        other: Any = sqlite3.connect(w.backend.database, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO t(n) VALUES (7)")
    else:
        other = await asyncpg.connect(w.backend.database)
        await other.execute("BEGIN")
        await other.execute("INSERT INTO t(n) VALUES (7)")
        await other.execute("LOCK TABLE t IN EXCLUSIVE MODE")
    pending = w.submit("insert", 8)
    for _ in range(20):
        await asyncio.sleep(0.001)
    assert not pending.done()  # it waits rather than failing
    if w.backend.name == "sqlite":
        other.execute("COMMIT")
        other.close()
    else:
        await other.execute("COMMIT")
        await other.close()
    assert await pending == 8
    assert await w.committed() == [7, 8]


def connection(writer: PgWriter) -> Any:
    """The PostgreSQL writer's connection (an asyncpg.Connection), there once it ran a batch."""
    assert writer._db is not None
    return writer._db


async def test_a_lost_connection_fails_its_batch_and_the_next_one_reconnects(
    backend: Backend,
) -> None:
    if backend.name != "postgres":
        return  # a SQLite file has no connection to lose
    harness = Harness(backend)
    await harness.start()
    try:
        writer = harness.writer
        assert isinstance(writer, PgWriter)
        assert await harness.submit("insert", 1) == 1
        first, second = Gate(), Gate()
        held = await harness.hold(first)
        lost = [harness.submit("insert", 2), harness.submit_gate(second)]  # one batch
        first.release.set()
        await held
        await second.wait_entered()  # insert(2) has run; the transaction is open
        await backend.fetch("SELECT pg_terminate_backend($1)", connection(writer).get_server_pid())
        second.release.set()
        results = await asyncio.gather(*lost, return_exceptions=True)
        assert all(isinstance(r, Exception) for r in results), results  # not acknowledged
        assert await harness.submit("insert", 3) == 3  # a new connection
        assert await harness.committed() == [1, 3]
        # a connection the server ended between batches is replaced before the next one
        await backend.fetch("SELECT pg_terminate_backend($1)", connection(writer).get_server_pid())
        for _ in range(1000):
            if connection(writer).is_closed():
                break
            await asyncio.sleep(0.005)
        assert await harness.submit("insert", 4) == 4
        assert await harness.committed() == [1, 3, 4]
    finally:
        await harness.writer.close()


async def test_an_accepted_answer_is_one_write_and_no_read(
    backend: Backend, sample_catalog: Any, clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with backend.opened() as storage:
        service = QuizService(sample_catalog, storage, clock)
        group = Chat("tg:-5", "group")
        shown = await service.questions.post(group, "sample", "s-one", "en")
        ada, bob = Person("tg:1", "Ada"), Person("tg:2", "Bob")
        assert (await service.answer(shown.post_id, ada, 0)).accepted  # caches warm up
        calls = count_calls(storage, monkeypatch)
        result = await service.answer(shown.post_id, bob, 1)  # a new person, a known post
        assert result.accepted
        assert calls == ["write:record_answer"]  # the person is stored by the same write
        assert await storage.person_name("tg:2") == "Bob"


def count_calls(storage: Store, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    if backend_name(storage) == "sqlite":
        for name in ("_writer", "_reader"):
            worker = getattr(storage, name)
            original = worker.submit

            def counted(fn: Any, *args: Any, _name: str = name, _original: Any = original) -> Any:
                calls.append(f"{'write' if _name == '_writer' else 'read'}:{fn.__name__}")
                return _original(fn, *args)

            monkeypatch.setattr(worker, "submit", counted)
    else:
        for name in ("_write", "_read"):
            original = getattr(storage, name)

            def counted(fn: Any, *args: Any, _name: str = name, _original: Any = original) -> Any:
                calls.append(f"{_name[1:]}:{fn.__name__}")
                return _original(fn, *args)

            monkeypatch.setattr(storage, name, counted)
    return calls


def backend_name(storage: Store) -> str:
    return "sqlite" if type(storage).__name__ == "SqliteStorage" else "postgres"
