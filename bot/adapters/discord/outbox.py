"""The order of the bot's REST calls in a click storm: commands, clicks' responses, the rest.

An interaction's first response (the answer, or a deferral) must reach Discord within 3 s of
the click; a click's follow-up has 15 minutes, and a question's live answer count no deadline
at all. In a click storm every REST call shares one event loop and one connection pool
(client.py), so the sends that can wait go through the `Outbox`:

- each first waits, up to PATIENCE, while an interaction of this process still has no first
  response (`Unanswered`): acknowledgements go first;
- then at most LANES of them are in flight at once, so the pool always has connections for
  first responses and commands however many follow-ups a storm leaves behind it;
- among those waiting for a lane, follow-ups (a person is waiting) go before count edits.

A click's first response yields to nothing, but takes one of CLICK_RESPONSES lanes: a storm's
thousands of responses would otherwise queue for the pool's connections ahead of a command's.
A command's response and follow-up are sent at once: one person waits for each, and a storm
queued ahead of a /stats is what made it take 15 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import weakref
from collections.abc import Awaitable, Callable
from enum import IntEnum
from typing import TypeVar

T = TypeVar("T")

# in flight at once, of client.REST_CONNECTIONS; what is left over is for commands
LANES = 8  # follow-ups of clicks and count edits
CLICK_RESPONSES = 40  # first responses to clicks (the answer, or a deferral)
PATIENCE = 10.0  # seconds a send yields to interactions without their first response


class Kind(IntEnum):
    """What waits for a lane, most urgent first."""

    FOLLOW_UP = 0  # the answer to a deferred click
    EDIT = 1  # a question's live answer count


class Unanswered:
    """How many interactions of this loop have no first response yet."""

    def __init__(self) -> None:
        self.count = 0
        self.none = asyncio.Event()
        self.none.set()

    def add(self) -> None:
        self.count += 1
        self.none.clear()

    def remove(self) -> None:
        self.count -= 1
        if self.count <= 0:
            self.count = 0
            self.none.set()


class Outbox:
    def __init__(self, lanes: int) -> None:
        self.lanes = max(1, lanes)
        self.unanswered = Unanswered()
        self.click_responses = asyncio.Semaphore(CLICK_RESPONSES)
        self.busy = 0  # lanes taken
        self.queued = 0  # sends waiting for a lane
        self._waiting: list[tuple[Kind, int, asyncio.Future[None]]] = []  # a heap
        self._order = itertools.count()  # first come, first served within a kind

    async def send(self, kind: Kind, call: Callable[[], Awaitable[T]]) -> T:
        """`await call()` once no first response is pending (or PATIENCE has passed) and a
        lane is free."""
        if self.unanswered.count:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.unanswered.none.wait(), PATIENCE)
        await self._take(kind)
        try:
            return await call()
        finally:
            self._release()

    async def _take(self, kind: Kind) -> None:
        if self.busy < self.lanes and not self.queued:
            self.busy += 1
            return
        lane = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (kind, next(self._order), lane))
        self.queued += 1
        try:
            await lane
        except asyncio.CancelledError:
            if lane.cancelled():  # still waiting: its entry is skipped when reached
                self.queued -= 1
            else:  # handed a lane, then cancelled
                self._release()
            raise

    def _release(self) -> None:
        """Hand the lane to the most urgent send still waiting, or free it."""
        while self._waiting:
            *_, lane = heapq.heappop(self._waiting)
            if not lane.done():
                self.queued -= 1
                lane.set_result(None)
                return
        self.busy -= 1


_outboxes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Outbox] = \
    weakref.WeakKeyDictionary()


def outbox() -> Outbox:
    """The outbox of the running loop, shared by every bot of the process (they share the
    loop, and with it the CPU their sends compete for)."""
    loop = asyncio.get_running_loop()
    found = _outboxes.get(loop)
    if found is None:
        found = _outboxes[loop] = Outbox(LANES)
    return found
