"""Commands and button presses that Telegram delivers twice are handled once (in one process).

Telegram sends again whatever was not confirmed when the bot died (polling.py confirms a
batch only after handling it; a webhook answers only after handling), and may deliver a press
twice. Answers are made final by the database, and a command or press that changes state by
its update id stored with its effect (core/ports/ CommandKey), in every process. This only
saves a repeat within one process its trip to the database. It is only memory, so it never
has the last word: a command or press that failed, or asked to come again later, is
forgotten (handlers.py), so Telegram's next delivery of it runs again instead of being
skipped as a repeat; after a crash, or behind a load balancer, the repeat reaches the
database, which finds its key (a command changing nothing, such as /leaderboard, simply
answers again)."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Hashable


class RecentKeys:
    """Remembers the last `size` keys; add() is False for a key seen before."""

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._keys: OrderedDict[Hashable, None] = OrderedDict()

    def add(self, key: Hashable) -> bool:
        if key in self._keys:
            return False
        self._keys[key] = None
        if len(self._keys) > self._size:
            self._keys.popitem(last=False)
        return True

    def discard(self, key: Hashable) -> None:
        self._keys.pop(key, None)


class FirstSeen:
    """When each of the last `size` keys was first seen; within() is True for `seconds`
    after that."""

    def __init__(self, seconds: float, size: int = 4096) -> None:
        self.seconds = seconds
        self._size = size
        self._first: OrderedDict[Hashable, float] = OrderedDict()

    def within(self, key: Hashable) -> bool:
        now = time.monotonic()
        first = self._first.setdefault(key, now)
        if len(self._first) > self._size:
            self._first.popitem(last=False)
        return now - first < self.seconds
