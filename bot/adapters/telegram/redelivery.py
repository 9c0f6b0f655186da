"""Commands and button presses that Telegram delivers twice are handled once.

Updates are confirmed when fetched, not when handled, so a crash or a restart delivers some
again. Answers are made final by the database; this keeps a command from running twice.
"""

from __future__ import annotations

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
