"""Drawing in a process of its own, so what drawing loads does not stay in the bot's.

A question card imports Pillow, ziamath (with latex2mathml and cairosvg) and Pygments and
loads fonts: about 45 MB that a process keeps for good once it drew one card. `DrawingProcess` runs
a drawing function in one child process (spawned: it inherits neither the bot's threads nor
its memory), started at the first drawing and ended once IDLE seconds pass without one, which
gives that memory back. The bot keeps only the bytes of the PNG.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # imported by the first drawing (a bot that draws nothing never does)
    from concurrent.futures import ProcessPoolExecutor

T = TypeVar("T")

IDLE = 60.0  # seconds without a drawing before the child process ends


def _ignore_interrupt() -> None:
    """The child ends with the bot (the pool joins it at exit), not on the terminal's Ctrl-C
    that reaches the whole process group."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class DrawingProcess:
    """Runs `fn(*args)` in the child process, blocking the calling thread (the core draws in
    worker threads, never on the event loop). Thread-safe; one drawing at a time."""

    def __init__(self, idle: float = IDLE) -> None:
        self.idle = idle
        self.started = 0  # child processes started so far
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self._busy = 0
        self._timer: threading.Timer | None = None

    def run(self, fn: Callable[..., T], *args: object) -> T:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    1, mp_context=multiprocessing.get_context("spawn"),
                    initializer=_ignore_interrupt)
                self.started += 1
            pool = self._pool
            self._busy += 1
        try:
            return pool.submit(fn, *args).result()
        except BrokenProcessPool:
            # the child died (killed, out of memory): the next drawing starts another
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            raise
        finally:
            with self._lock:
                self._busy -= 1
                if self._busy == 0 and self._pool is pool:
                    self._timer = threading.Timer(self.idle, self._end_if_idle, (pool,))
                    self._timer.daemon = True
                    self._timer.start()

    def _end_if_idle(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._busy or self._pool is not pool:
                return
            self._pool = None
            self._timer = None
        pool.shutdown(wait=True)

    @property
    def running(self) -> bool:
        with self._lock:
            return self._pool is not None

    def close(self) -> None:
        """End the child process now (a later drawing starts another)."""
        with self._lock:
            pool, self._pool = self._pool, None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if pool is not None:
            pool.shutdown(wait=True)
