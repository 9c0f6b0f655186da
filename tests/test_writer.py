"""The SQLite writer and reader threads: a batch resolves with one hop to the event loop, reads
queued together too, and no thread outlives the storage; a batch of answers is one statement
(counted with sqlite3's trace callback), refused answers in it get their own outcomes, and a
failing statement falls back to one savepoint per answer. No timing is asserted: a gate op
holds the writer so the test decides what one batch holds. What both backends' writers do
(group commit, a savepoint per write, acknowledged only after COMMIT) is in
tests/storage_contract/test_writer.py."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.core.ports import AnswerRecord
from bot.storage import SqliteStorage
from bot.storage.sqlite.materializer import Materializer
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




# answers in batches ---------------------------------------------------------------------------
NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def answer(post: int, person: int, correct: bool = True, name: str = "") -> AnswerRecord:
    return AnswerRecord(post, f"tg:{person}", 0, correct, NOW, 1000, name=name or f"p{person}")


async def traced(store: SqliteStorage) -> list[str]:
    """Every statement the writer's connection runs from now on (run in its own thread)."""
    statements: list[str] = []
    assert store._writer is not None
    await store._writer.submit(lambda db: db.set_trace_callback(statements.append))
    statements.clear()
    return statements


def transactions(statements: list[str]) -> list[list[str]]:
    """The statements grouped by transaction, each from BEGIN to COMMIT, keywords only."""
    found: list[list[str]] = []
    for sql in statements:
        words = " ".join(sql.split()[:3])
        if sql.startswith("BEGIN"):
            found.append([])
        if found:
            found[-1].append(words)
    return found


async def queued_behind_a_gate(
    store: SqliteStorage, answers: list[AnswerRecord]
) -> list[Any]:
    """Record `answers` as ONE batch of the writer: queued while a gate holds it."""
    assert store._writer is not None
    gate = Gate()
    held = store._writer.submit(gate)
    await gate.wait_entered()
    pending = [asyncio.ensure_future(store.record_answer(a)) for a in answers]
    await asyncio.sleep(0)  # every write is queued behind the gate
    gate.release.set()
    await held
    return list(await asyncio.gather(*pending, return_exceptions=True))


@pytest.fixture
async def quiet_store(tmp_path: Path) -> AsyncIterator[SqliteStorage]:
    """A storage whose materializer never runs on its own: the writer's statements are the
    answers' alone."""
    async with SqliteStorage(tmp_path / "a.db", Materializer(interval=3600, idle_check=3600)) \
            as store:
        yield store


async def test_a_batch_of_answers_by_known_people_is_one_statement(
    quiet_store: SqliteStorage,
) -> None:
    store = quiet_store
    first = await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)
    post = await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)
    for p in range(50):  # known to this process from now on, their language cached
        await store.record_answer(answer(first.id, p))
    statements = await traced(store)
    results = await queued_behind_a_gate(store, [answer(post.id, p) for p in range(50)])
    assert [r[0] for r in results] == ["inserted"] * 50
    batch = [t for t in transactions(statements) if "INSERT INTO answers(post_id," in t]
    assert batch == [["BEGIN IMMEDIATE", "INSERT INTO answers(post_id,", "COMMIT"]]


async def test_a_batch_of_new_people_is_one_upsert_and_one_insert(
    quiet_store: SqliteStorage,
) -> None:
    store = quiet_store
    post = await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)
    statements = await traced(store)
    results = await queued_behind_a_gate(store, [answer(post.id, p) for p in range(50)])
    assert [r[0] for r in results] == ["inserted"] * 50
    batch = [t for t in transactions(statements) if "INSERT INTO answers(post_id," in t]
    assert batch == [["BEGIN IMMEDIATE", "SAVEPOINT answers", "INSERT INTO persons(key,",
                      "INSERT INTO answers(post_id,", "RELEASE answers", "COMMIT"]]
    # the people's languages came back with the upsert: nothing left to read for them
    assert all(store._person_locales.get(f"tg:{p}") == (None,) for p in range(50))
    assert await store.person_name("tg:7") == "p7"


async def test_refused_answers_in_a_batch_get_their_own_outcomes(
    quiet_store: SqliteStorage, tmp_path: Path,
) -> None:
    store = quiet_store
    post = await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)
    closed = await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)
    await store.record_answer(answer(post.id, 1))
    assert await store.close_post(closed.id, NOW)
    statements = await traced(store)
    results = await queued_behind_a_gate(store, [
        answer(post.id, 2),
        answer(post.id, 1, correct=False),  # answered before: the first answer is final
        answer(closed.id, 3),  # closed: refused, and person 3 is not created
        answer(post.id, 4),
        answer(post.id, 4, correct=False),  # twice in one batch: the first one counts
        answer(9999, 5),  # no such post: fails alone
        answer(post.id, 6),
    ])
    outcomes = [r if isinstance(r, Exception) else r[0] for r in results]
    assert outcomes[:5] == ["inserted", "duplicate", "closed", "inserted", "duplicate"]
    assert isinstance(outcomes[5], LookupError) and outcomes[6] == "inserted"
    assert results[1][1].correct and results[4][1].correct  # the earlier answers
    inserts = [s for t in transactions(statements) for s in t if s.startswith("INSERT")]
    assert inserts == ["INSERT INTO persons(key,", "INSERT INTO answers(post_id,"]  # no fallback
    with sqlite3.connect(tmp_path / "a.db") as db:
        stored = db.execute("SELECT person_key, correct FROM answers WHERE post_id=?"
                            " ORDER BY id", (post.id,)).fetchall()
        people = {k for (k,) in db.execute("SELECT key FROM persons")}
    assert stored == [("tg:1", 1), ("tg:2", 1), ("tg:4", 1), ("tg:6", 1)]
    assert "tg:3" not in people and "tg:5" not in people


async def test_a_failing_batch_statement_falls_back_to_one_savepoint_each(
    quiet_store: SqliteStorage, tmp_path: Path,
) -> None:
    """A person this process knows (no upsert), deleted meanwhile through another connection:
    the batch's insert fails on the foreign key; each answer is then written alone, and that
    one brings the person back."""
    store = quiet_store
    post = await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)
    for p in (1, 2):
        await store.upsert_person(f"tg:{p}", f"p{p}")
        await store.person_locale(f"tg:{p}")
    with sqlite3.connect(tmp_path / "a.db") as other:
        other.execute("DELETE FROM persons WHERE key='tg:2'")
    statements = await traced(store)
    results = await queued_behind_a_gate(store, [answer(post.id, 1), answer(post.id, 2)])
    assert [r[0] for r in results] == ["inserted", "inserted"]
    batch = [t for t in transactions(statements) if "INSERT INTO answers(post_id," in t]
    assert batch[0].count("SAVEPOINT op") == 2  # the fallback ran, one savepoint per answer
    with sqlite3.connect(tmp_path / "a.db") as db:
        assert db.execute("SELECT count(*) FROM answers").fetchone()[0] == 2
        assert db.execute("SELECT count(*) FROM persons").fetchone()[0] == 2
    # a name the batch's JSON cannot carry (a NUL ends SQLite's JSON text) is bound one by one
    odd = await queued_behind_a_gate(store, [answer(post.id, 3, name="a\x00b"),
                                             answer(post.id, 4)])
    assert [r[0] for r in odd] == ["inserted", "inserted"]
    assert await store.person_name("tg:3") == "a\x00b"


class FailingHousekeeper:
    """Housekeeping that always fails as a machine out of file descriptors does, and is
    always due."""

    def __init__(self) -> None:
        self.runs = 0

    def start(self, db: Db) -> None:
        pass

    def batch_took(self, seconds: float) -> None:
        pass

    def due_in(self) -> float | None:
        return 0.0

    def run(self, db: Db, idle: bool) -> None:
        self.runs += 1
        raise sqlite3.OperationalError("out of system resource")

    def finish(self, db: Db) -> None:
        pass


async def test_failing_housekeeping_backs_off_instead_of_spinning(tmp_path: Path) -> None:
    from bot.storage.sqlite.writer import RETRY_CEILING, retry_delay

    keeper = FailingHousekeeper()
    w = Writer(tmp_path / "h.db", keeper)
    await w.start()
    try:
        await w.submit(create_table)
        for n in range(50):  # fifty batches, each followed by housekeeping
            assert await w.submit(insert, n) == n
        assert 1 <= keeper.runs <= 4  # the first failure, then retries 0.5, 1, 2 s later
        assert w.housekeeping_failures == keeper.runs
        timeout = w.idle_timeout()
        assert timeout is not None and timeout > 0  # the thread sleeps meanwhile
        assert committed(tmp_path / "h.db") == list(range(50))  # the writes are unhurt
    finally:
        await w.close()
    assert [retry_delay(n) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]
    assert retry_delay(10) == retry_delay(10_000) == RETRY_CEILING
