"""One asyncio.Lock per key (a chat), dropped once nobody holds or waits for it."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from weakref import WeakValueDictionary


class KeyedLocks:
    def __init__(self) -> None:
        self._locks: WeakValueDictionary[Hashable, asyncio.Lock] = WeakValueDictionary()

    def __call__(self, key: Hashable) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[key] = lock
        return lock
