"""A bounded mapping that forgets the least recently used entry: every cache in storage is one."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Lru(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        if len(self._items) > self.size:
            self._items.popitem(last=False)

    def pop(self, key: K) -> None:
        self._items.pop(key, None)

    def clear(self) -> None:
        self._items.clear()


class Expiring(Generic[K, V]):
    """An Lru whose entries also expire `ttl` seconds after they were stored: what they hold
    may be changed by another process on the same file. `get` returns a 1-tuple, so a stored
    None is told apart from a miss."""

    def __init__(self, size: int, ttl: float) -> None:
        self.ttl = ttl
        self._lru: Lru[K, tuple[V, float]] = Lru(size)

    def get(self, key: K) -> tuple[V] | None:
        entry = self._lru.get(key)
        if entry is None:
            return None
        if entry[1] < time.monotonic():
            self._lru.pop(key)
            return None
        return (entry[0],)

    def put(self, key: K, value: V) -> None:
        self._lru.put(key, (value, time.monotonic() + self.ttl))

    def pop(self, key: K) -> None:
        self._lru.pop(key)

    def clear(self) -> None:
        self._lru.clear()

    def __len__(self) -> int:
        return len(self._lru)
