"""The SQLite writer and reader threads: a batch resolves with one hop to the event loop, reads
queued together too, and no thread outlives the storage. No timing is asserted: a gate op
holds the writer so the test decides what one batch holds. What both backends' writers do
(group commit, a savepoint per write, acknowledged only after COMMIT) is in
tests/storage_contract/test_writer.py."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from bot.storage import SqliteStorage
from bot.storage.sqlite.reader import Reader
from bot.storage.sqlite.writer import Writer

Db = sqlite3.Connection


def create_table(db: Db) -> None:
    db.execute("CREATE TABLE IF NOT EXISTS t (n INTEGER PRIMARY KEY)")


def insert(db: Db, n: int) -> int:
    db.execute("INSERT INTO t(n) VALUES (?)", (n,))
    return n


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


