"""Commands and button presses that Telegram delivers twice are handled once.

Telegram sends again whatever was not confirmed when the bot died (polling.py confirms a
batch only after handling it), and may deliver a press twice. Answers are made final by the
database; this keeps a command or a press from running twice within one process. After a
crash the memory is gone: a press is answered again (Telegram refuses a second answer, which
is logged at INFO) and a command in the unconfirmed batch runs again.
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
