"""Log lines for events a stranger can cause as often as they like (a refused dashboard
request, a connection over the cap): the first one is logged as it happens, the rest as one
count per interval, so 67k unauthenticated requests write a handful of lines, not 67k.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

INTERVAL = 60.0  # seconds between two count lines for one kind of event


class CountedLog:
    """`event(kind, ...)` logs `message % args` for the first `kind` of an interval and
    counts the others; the next event after the interval logs their count. Thread-safe."""

    def __init__(self, logger: logging.Logger, level: int = logging.INFO,
                 interval: float = INTERVAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.logger = logger
        self.level = level
        self.interval = interval
        self.clock = clock
        self._lock = threading.Lock()
        self._since: dict[str, float] = {}  # kind -> when its interval began
        self._counted: dict[str, int] = {}  # kind -> events not logged in that interval

    def event(self, kind: str, message: str, *args: object) -> None:
        now = self.clock()
        with self._lock:
            since = self._since.get(kind)
            if since is not None and now - since < self.interval:
                self._counted[kind] = self._counted.get(kind, 0) + 1
                return
            counted = self._counted.pop(kind, 0)
            self._since[kind] = now
        if counted:
            self.logger.log(self.level, "%s: %d more in the last %.0f s", kind, counted,
                            now - since if since is not None else 0.0)
        self.logger.log(self.level, message, *args)
