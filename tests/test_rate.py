"""Issue 36: the send schedule the Telegram pacer computes (rate.py), read with a fake clock,
and replayed against the limiting fake's rules (tests/fakes/telegram_limits.py): 500 chats
due at once go within 1.15 x 500/30 s with no 429; a chat's and a group's limits hold; a
429 holds the chat and the token."""

from __future__ import annotations

import asyncio

import pytest

from bot.adapters.telegram.rate import TOKEN_RATE, LocalBudget, Pacer, SharedBudget
from tests.fakes.telegram_limits import FloodLimits


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def replay(schedule: list[tuple[float, int]]) -> FloodLimits:
    """The fake's limits, shown the sends at their times (no slack: the schedule is exact)."""
    clock = Clock()
    limits = FloodLimits(clock=clock, slack=0.0)
    for at, chat_id in sorted(schedule):
        clock.now = at
        limits.check("sendPoll", {"chat_id": chat_id})
    return limits


async def reserve_all(pacer: Pacer, chats: list[int]) -> list[tuple[float, int]]:
    times = await asyncio.gather(*(pacer.reserve(c) for c in chats))
    return list(zip(times, chats, strict=True))


async def test_500_chats_due_at_once_go_within_the_bound_with_no_429() -> None:
    clock = Clock()
    pacer = Pacer(LocalBudget(TOKEN_RATE), clock=clock)
    chats = [-1_001_000_000_000 - i for i in range(500)]
    schedule = await reserve_all(pacer, chats)

    last = max(at for at, _ in schedule) - clock.now
    assert last <= 1.15 * 500 / TOKEN_RATE
    assert last >= 499 / TOKEN_RATE - 1e-9  # no faster than the token allows
    limits = replay(schedule)
    assert limits.refused == 0 and len(limits.accepted) == 500


async def test_a_chat_gets_a_burst_then_one_a_second() -> None:
    clock = Clock()
    pacer = Pacer(LocalBudget(TOKEN_RATE), clock=clock)
    times = [await pacer.reserve(42) for _ in range(6)]
    offsets = [round(t - clock.now, 3) for t in times]
    assert offsets[:3] == pytest.approx([0, 1 / 30, 2 / 30], abs=1e-3)
    assert offsets[3:] == pytest.approx([1, 2, 3], abs=1e-3)
    assert replay([(t, 42) for t in times]).refused == 0


async def test_a_group_gets_at_most_20_in_a_minute() -> None:
    clock = Clock()
    pacer = Pacer(LocalBudget(TOKEN_RATE), clock=clock)
    times = [await pacer.reserve(-100) for _ in range(25)]
    assert times[20] - times[0] >= 60.0
    assert replay([(t, -100) for t in times]).refused == 0


async def test_the_replay_does_refuse_a_sender_past_the_limits() -> None:
    """The check above can fail: 60 a second (two processes pacing on their own) meets 429s."""
    schedule = [(1000.0 + i / 60, -i - 1) for i in range(120)]
    assert replay(schedule).refused > 0


async def test_a_429_holds_the_chat_and_the_token() -> None:
    clock = Clock()
    pacer = Pacer(LocalBudget(TOKEN_RATE), clock=clock)
    await pacer.reserve(7)
    await pacer.hold(7, 5.0)
    assert await pacer.reserve(7) >= clock.now + 5.0
    assert await pacer.reserve(8) >= clock.now + 5.0


async def test_waiting_sleeps_until_the_reserved_time() -> None:
    clock = Clock()
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.now += seconds

    pacer = Pacer(LocalBudget(TOKEN_RATE), clock=clock, sleep=sleep)
    for _ in range(4):
        await pacer.wait(1)  # a private chat: three at once, then a second later
    assert slept == pytest.approx([1 / 30, 1 / 30, 1 - 2 / 30])


class Row:
    """One budget row as the database holds it (bot/storage/token_budget.py's lease)."""

    def __init__(self) -> None:
        self.next_at = 0.0
        self.leases = 0

    async def lease(self, now: float, count: int, interval: float) -> float:
        await asyncio.sleep(0)  # a round trip: others run meanwhile
        first = max(self.next_at, now)
        self.next_at = first + count * interval
        self.leases += 1
        return first


async def test_two_processes_on_one_shared_budget_send_30_a_second_together() -> None:
    clock, row = Clock(), Row()
    pacers = [Pacer(SharedBudget(row.lease, TOKEN_RATE, clock=clock), clock=clock)
              for _ in range(2)]
    chats = [[-(p * 1000 + i) - 1 for i in range(300)] for p in range(2)]
    both = await asyncio.gather(*(reserve_all(p, c) for p, c in zip(pacers, chats, strict=True)))
    schedule = both[0] + both[1]

    times = sorted(at for at, _ in schedule)
    assert len(set(times)) == 600  # no slot taken twice
    assert times[-1] - clock.now <= 1.15 * 600 / TOKEN_RATE
    assert replay(schedule).refused == 0
    assert row.leases < 600 / 5  # slices, not a round trip per message


async def test_a_wait_that_ended_late_takes_a_new_time_instead_of_bursting() -> None:
    clock = Clock()
    slept: list[float] = []

    async def sleep(seconds: float) -> None:  # the process was busy: it wakes 2 s late
        slept.append(seconds)
        clock.now += seconds + 2.0

    pacer = Pacer(LocalBudget(TOKEN_RATE), clock=clock, sleep=sleep)
    await pacer.reserve(5)
    await pacer.wait(6)  # its time passed 2 s ago: it takes the token's next one, now
    assert slept == pytest.approx([1 / 30])
    # the late send took a slot of its own: the next one is after it, not at once beside it
    assert await pacer.reserve(7) == pytest.approx(clock.now + 1 / 30)
