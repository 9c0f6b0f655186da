"""The election of the one process that long-polls Telegram (core/leadership.py), over the
lease port: processes sharing one database (LoopStorage on one LoopDatabase, and a SQLite
file) and a clock the test moves."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.core.leadership import LEASE, RENEW_AFTER, Leadership
from bot.core.ports import StorageError
from bot.storage import SqliteStorage
from tests.clock import FakeClock
from tests.sqlite_in_loop import LoopDatabase, LoopStorage

NAME = "telegram-polling"


@pytest.fixture(params=["memory", "sqlite"])
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[list[Any]]:
    """Three processes' storages on one database."""
    opened: list[Any]
    if request.param == "memory":
        database = LoopDatabase()
        opened = [LoopStorage(database) for _ in range(3)]
    else:
        opened = [SqliteStorage(tmp_path / "quiz.db") for _ in range(3)]
    for store in opened:
        await store.open()
    yield opened
    for store in opened:
        await store.close()


def processes(stores: list[Any], clock: FakeClock) -> list[Leadership]:
    return [Leadership(store, clock, NAME, f"bot-{i}") for i, store in enumerate(stores)]


async def leaders(group: list[Leadership]) -> list[str]:
    return [p.holder for p in group if await p.claim()]


async def test_one_process_leads_and_the_others_wait(stores):
    clock = FakeClock()
    group = processes(stores, clock)
    assert await leaders(group) == ["bot-0"]
    assert group[0].left() == LEASE.total_seconds()
    assert not group[1].leading and group[1].left() == 0


async def test_the_leader_keeps_its_lease_by_renewing_it(stores):
    clock = FakeClock()
    group = processes(stores, clock)
    await leaders(group)
    for _ in range(20):  # far longer than one lease, renewed as it goes
        clock.advance(RENEW_AFTER.total_seconds() + 0.5)
        assert await leaders(group) == ["bot-0"]
        assert group[0].left() == LEASE.total_seconds()


async def test_a_fresh_lease_is_not_written_again(stores):
    clock = FakeClock()
    leader = processes(stores, clock)[0]
    calls = 0
    take: Callable[..., Any] = leader.leases.take_lease

    async def counted(*args: Any) -> bool:
        nonlocal calls
        calls += 1
        return bool(await take(*args))

    leader.leases = type("Counted", (), {"take_lease": staticmethod(counted)})()
    assert await leader.claim()
    clock.advance(1)
    assert await leader.claim()
    assert calls == 1
    assert await leader.claim(check=True)
    assert calls == 2


async def test_another_takes_over_once_the_leader_stopped_renewing(stores):
    clock = FakeClock()
    group = processes(stores, clock)
    await leaders(group)
    dead, *alive = group  # killed: it claims nothing any more
    clock.advance(LEASE.total_seconds() - 0.5)
    assert [p.holder for p in alive if await p.claim()] == []
    clock.advance(1)
    assert dead.left() == 0
    assert [p.holder for p in alive if await p.claim()] == ["bot-1"]
    assert [p.holder for p in alive if await p.claim()] == ["bot-1"]


async def test_a_released_lease_is_taken_at_once(stores):
    clock = FakeClock()
    group = processes(stores, clock)
    await leaders(group)
    await group[0].release()
    assert not group[0].leading
    assert await leaders(group[1:]) == ["bot-1"]
    assert not await group[0].claim()


async def test_a_restarted_instance_resumes_its_own_lease(stores):
    clock = FakeClock()
    first = processes(stores, clock)
    await leaders(first)
    again = Leadership(stores[0], clock, NAME, "bot-0")  # the same QUIZBOT_INSTANCE
    assert await again.claim()


async def test_a_storage_failure_keeps_the_lease_until_it_runs_out(stores):
    clock = FakeClock()
    leader = processes(stores, clock)[0]
    assert await leader.claim()

    async def down(*_args: Any) -> bool:
        raise StorageError("connection lost")

    leader.leases = type("Down", (), {"take_lease": staticmethod(down)})()
    clock.advance(RENEW_AFTER.total_seconds() + 1)
    assert await leader.claim()  # not renewed, still its own
    assert leader.left() == pytest.approx((LEASE - RENEW_AFTER).total_seconds() - 1)
    clock.advance(LEASE.total_seconds())
    assert not await leader.claim()


def test_a_lease_renewed_only_after_it_ran_out_is_refused():
    with pytest.raises(ValueError):
        Leadership(LoopStorage(), FakeClock(), NAME, "x", lease=timedelta(seconds=2),
                   renew_after=timedelta(seconds=2))
