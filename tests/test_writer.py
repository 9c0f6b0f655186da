"""The writer thread: group commit, a savepoint per write, acknowledged only after COMMIT;
the reader thread: one hop per read. No timing is asserted: a gate op holds the writer so
the test decides what one batch holds."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from bot.core.models import Chat, Person
from bot.core.service import QuizService
from bot.storage import SqliteStorage
from bot.storage.reader import Reader
from bot.storage.writer import Writer

Db = sqlite3.Connection


def create_table(db: Db) -> None:
    db.execute("CREATE TABLE IF NOT EXISTS t (n INTEGER PRIMARY KEY)")


def insert(db: Db, n: int) -> int:
    db.execute("INSERT INTO t(n) VALUES (?)", (n,))
    return n


def insert_then_fail(db: Db, n: int) -> None:
    db.execute("INSERT INTO t(n) VALUES (?)", (n,))
    raise ValueError(f"op {n} fails after writing")


def committed(path: Path) -> list[int]:
    """What another connection (another process) sees."""
    with sqlite3.connect(path) as other:
        return [r[0] for r in other.execute("SELECT n FROM t ORDER BY n")]


class Gate:
    """An op that holds the writer thread until the test opens it."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, db: Db) -> str:
        self.entered.set()
        assert self.release.wait(timeout=30), "gate never opened"
        return "gate"

    async def wait_entered(self) -> None:
        for _ in range(30_000):  # polled: a helper thread would outlive the test's checks
            if self.entered.is_set():
                return
            await asyncio.sleep(0.001)
        raise AssertionError("the writer never reached the gate")


@pytest.fixture
async def writer(tmp_path: Path) -> AsyncIterator[Writer]:
    w = Writer(tmp_path / "w.db")
    await w.start()
    await w.submit(create_table)
    yield w
    await w.close()


def count_hops(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    loop = asyncio.get_running_loop()
    calls: list[Any] = []
    original = loop.call_soon_threadsafe

    def counting(callback: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        calls.append(callback)
        return original(callback, *args, **kw)

    monkeypatch.setattr(loop, "call_soon_threadsafe", counting)
    return calls


async def test_a_batch_commits_once_and_resolves_with_one_hop(
    writer: Writer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate()
    held = writer.submit(gate)
    await gate.wait_entered()
    batches = writer.batches
    hops = count_hops(monkeypatch)
    futures = [writer.submit(insert, n) for n in range(100)]  # queued while the gate holds
    gate.release.set()
    assert await held == "gate"
    assert await asyncio.gather(*futures) == list(range(100))
    assert writer.batches == batches + 2  # the gate's transaction, then all hundred in one
    assert len(hops) == 2  # and each batch resolved with a single call_soon_threadsafe
    assert committed(tmp_path / "w.db") == list(range(100))


async def test_nothing_is_acknowledged_before_commit(writer: Writer, tmp_path: Path) -> None:
    first_gate, second_gate = Gate(), Gate()
    held = writer.submit(first_gate)
    await first_gate.wait_entered()
    written = writer.submit(insert, 1)
    behind = writer.submit(second_gate)  # same batch: it holds the transaction open
    first_gate.release.set()
    await second_gate.wait_entered()  # insert(1) has run in the thread, not committed yet
    await asyncio.sleep(0.01)
    assert not written.done()
    assert committed(tmp_path / "w.db") == []
    second_gate.release.set()
    await asyncio.gather(held, written, behind)
    assert committed(tmp_path / "w.db") == [1]


async def test_a_failing_op_is_undone_alone(writer: Writer, tmp_path: Path) -> None:
    gate = Gate()
    held = writer.submit(gate)
    await gate.wait_entered()
    batches = writer.batches
    ops = [writer.submit(insert, 1), writer.submit(insert_then_fail, 2),
           writer.submit(insert, 3), writer.submit(insert, 3)]  # a duplicate key fails too
    gate.release.set()
    await held
    results = await asyncio.gather(*ops, return_exceptions=True)
    assert results[0] == 1 and results[2] == 3
    assert isinstance(results[1], ValueError)
    assert isinstance(results[3], sqlite3.IntegrityError)
    assert writer.batches == batches + 2  # they shared one transaction
    assert committed(tmp_path / "w.db") == [1, 3]


def deferred_tables(db: Db) -> None:
    db.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
    db.execute(
        "CREATE TABLE child (p INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)"
    )


def orphan(db: Db) -> None:
    db.execute("INSERT INTO child(p) VALUES (42)")  # only COMMIT can notice


async def test_a_failed_commit_fails_every_op_of_its_batch(
    writer: Writer, tmp_path: Path
) -> None:
    await writer.submit(deferred_tables)
    gate = Gate()
    held = writer.submit(gate)
    await gate.wait_entered()
    ops = [writer.submit(insert, 1), writer.submit(orphan), writer.submit(insert, 2)]
    gate.release.set()
    await held
    results = await asyncio.gather(*ops, return_exceptions=True)
    assert all(isinstance(r, sqlite3.IntegrityError) for r in results), results
    assert committed(tmp_path / "w.db") == []
    assert await writer.submit(insert, 5) == 5  # the writer goes on
    assert committed(tmp_path / "w.db") == [5]


async def test_close_drains_what_is_queued(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    w = Writer(tmp_path / "w.db")
    await w.start()
    await w.submit(create_table)
    gate = Gate()
    held = w.submit(gate)
    await gate.wait_entered()
    queued = [w.submit(insert, n) for n in range(50)]
    closing = asyncio.ensure_future(w.close())
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="not open"):
        w.submit(insert, 99)  # closing: nothing new is taken
    gate.release.set()
    await closing
    assert await held == "gate"
    assert await asyncio.gather(*queued) == list(range(50))
    assert committed(tmp_path / "w.db") == list(range(50))
    assert set(threading.enumerate()) <= before  # the thread has ended


async def test_a_caller_that_gave_up_does_not_break_the_batch(
    writer: Writer, tmp_path: Path
) -> None:
    gate = Gate()
    held = writer.submit(gate)
    await gate.wait_entered()
    abandoned = writer.submit(insert, 1)
    kept = writer.submit(insert, 2)
    abandoned.cancel()
    gate.release.set()
    await held
    assert await kept == 2
    assert committed(tmp_path / "w.db") == [1, 2]  # it was written; nobody was told


async def test_a_write_waits_for_another_process_holding_the_lock(
    writer: Writer, tmp_path: Path
) -> None:
    other = sqlite3.connect(tmp_path / "w.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO t(n) VALUES (7)")
    pending = writer.submit(insert, 8)
    for _ in range(20):
        await asyncio.sleep(0.001)
    assert not pending.done()  # busy_timeout: it waits rather than failing
    other.execute("COMMIT")
    other.close()
    assert await pending == 8
    assert committed(tmp_path / "w.db") == [7, 8]


async def test_reads_queued_together_resolve_with_one_hop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with SqliteStorage(tmp_path / "r.db") as store:
        reader = store._reader
        assert isinstance(reader, Reader)
        gate = Gate()
        held = reader.submit(gate)
        await gate.wait_entered()
        hops = count_hops(monkeypatch)
        reads = [store.get_post(n) for n in range(1, 51)]
        tasks = [asyncio.ensure_future(r) for r in reads]
        await asyncio.sleep(0)  # every read is queued behind the gate
        gate.release.set()
        await held
        assert await asyncio.gather(*tasks) == [None] * 50
        assert len(hops) == 2


async def test_storage_close_leaves_no_thread(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    store = SqliteStorage(tmp_path / "c.db")
    await store.open()
    assert len(set(threading.enumerate()) - before) == 2  # the writer and the reader
    await store.close()
    assert set(threading.enumerate()) <= before
    with pytest.raises(RuntimeError, match="not open"):
        await store.get_post(1)


async def test_an_accepted_answer_is_one_write_and_no_read(
    service: QuizService, storage: SqliteStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = Chat("tg:-5", "group")
    shown = await service.questions.post(group, "sample", "s-one", "en")
    ada, bob = Person("tg:1", "Ada"), Person("tg:2", "Bob")
    assert (await service.answer(shown.post_id, ada, 0)).accepted  # caches warm up
    calls: list[str] = []
    for name in ("_writer", "_reader"):
        worker = getattr(storage, name)
        original = worker.submit

        def counted(fn: Any, *args: Any, _name: str = name, _original: Any = original) -> Any:
            calls.append(f"{_name[1:]}:{fn.__name__}")
            return _original(fn, *args)

        monkeypatch.setattr(worker, "submit", counted)
    result = await service.answer(shown.post_id, bob, 1)  # a new person, a known post
    assert result.accepted
    assert calls == ["writer:record_answer"]  # the person is stored by the same write
    assert await storage.person_name("tg:2") == "Bob"
