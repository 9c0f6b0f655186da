"""A bot token's send budget: how many requests a second the platform allows the token, handed
out as send slots (issue 36). Telegram's pacer (telegram/rate.py: 30 messages a second) and
Discord's (discord/rate.py: 50 requests a second) take their slots here: `LocalBudget` is
one process's own; `SharedBudget` leases slices of one budget shared by every process on the
token through their database (bot/storage/token_budget.py), since the platform's limit is
the token's, not a process's.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol

from bot.counted_log import CountedLog

log = logging.getLogger(__name__)

LEASE_MOST = 30  # slots a process leases at once from a shared budget: about a second's
# A slot this late is still used (a busy process catching up: a burst of at most rate/2
# above the rate, within the platforms' tolerance); later, a new one is taken.
LATE = 0.5

Clock = Callable[[], float]


class TokenBudget(Protocol):
    async def take(self, not_before: float) -> float:
        """A send time at or after `not_before` (the clock's seconds), taken for good."""
        ...

    async def hold(self, until: float) -> None:
        """Nothing is sent before `until` (Telegram said to wait)."""
        ...


class LocalBudget:
    """One process's budget: a request every 1/rate seconds, no burst (a burst would take
    the platform's own tolerance, which jitter on the wire may need)."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self._next = -math.inf

    async def take(self, not_before: float) -> float:
        at = max(not_before, self._next)
        self._next = at + self.interval
        return at

    async def hold(self, until: float) -> None:
        self._next = max(self._next, until)


Lease = Callable[[float, int, float], Awaitable[float]]


class SharedBudget:
    """The token's budget shared by every process on it: each leases a slice of send slots
    (as many as its sends waiting, up to LEASE_MOST) from one row of the database they
    share (bot/storage/token_budget.py), whose next free slot moves on by the slice, so two
    processes never hold the same slot and together send at most `rate` a second. A slot
    leased and not used within LATE is lost (a slice is at most one second's).

    `lease(now, count, interval)` returns the first slot of `count` slots `interval` apart,
    none before `now`; the clock is the wall clock, shared by the processes of one host."""

    def __init__(self, lease: Lease, rate: float, clock: Clock = time.time) -> None:
        self.interval = 1.0 / rate
        self._lease = lease
        self._clock = clock
        self._slots: deque[float] = deque()
        self._waiting = 0
        self._leasing = asyncio.Lock()
        self._alone = LocalBudget(rate)  # while the database cannot be reached
        self._unshared = CountedLog(log, logging.WARNING)

    async def take(self, not_before: float) -> float:
        self._waiting += 1
        try:
            async with self._leasing:
                while self._slots and self._slots[0] < max(not_before, self._clock()) - LATE:
                    self._slots.popleft()  # passed unused
                if not self._slots:
                    count = min(self._waiting, LEASE_MOST)
                    start = max(not_before, self._clock())
                    try:
                        first = await self._lease(start, count, self.interval)
                    except Exception as exc:  # the database is out: pace alone meanwhile
                        self._unshared.event("lease", "the shared send budget cannot be "
                                             "leased (%s); pacing this process alone", exc)
                        return await self._alone.take(start)
                    self._slots.extend(first + i * self.interval for i in range(count))
                return max(self._slots.popleft(), not_before)  # a little late, maybe
        finally:
            self._waiting -= 1

    async def hold(self, until: float) -> None:
        async with self._leasing:
            self._slots.clear()
            await self._alone.hold(until)
            try:
                await self._lease(until, 0, self.interval)  # the row's next slot moves past it
            except Exception as exc:
                self._unshared.event("lease", "the shared send budget cannot be held (%s)",
                                     exc)


async def wait_for_slot(budget: TokenBudget, clock: Clock = time.time,
                        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
    """Until the budget's next slot (from now). A wait that ended more than LATE after its
    slot (the process was busy: every request due meanwhile would go at once, a burst the
    platform refuses) takes a new slot instead."""
    while True:
        at = await budget.take(clock())
        if (delay := at - clock()) > 0:
            await sleep(delay)
        if clock() - at <= LATE:
            return
