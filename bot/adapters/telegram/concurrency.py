"""Per-chat serialisation and redelivery guards for concurrently handled updates."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Hashable
from weakref import WeakValueDictionary


class KeyedLocks:
    """One asyncio.Lock per key, dropped once nobody holds or waits for it."""

    def __init__(self) -> None:
        self._locks: WeakValueDictionary[Hashable, asyncio.Lock] = WeakValueDictionary()

    def __call__(self, key: Hashable) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[key] = lock
        return lock


class RecentKeys:
    """Remembers the last `size` keys; add() is False for a key seen before.

    Telegram redelivers updates that were fetched but not confirmed (a crash, a restart);
    answers are protected by the database, this keeps a command from running twice.
    """

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
