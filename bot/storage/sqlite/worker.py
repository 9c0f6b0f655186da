"""A thread that owns one sqlite3 connection and runs calls queued from the event loop.

The event loop queues `(fn, args)` and gets an asyncio future; the thread takes everything
queued at once (a batch), runs it, and resolves the whole batch's futures with ONE
`loop.call_soon_threadsafe`. Calls are plain functions taking the connection: they run entirely
in the thread, so a call of several statements costs one hop, not one per statement.

Subclasses decide what a batch is (the writer wraps it in one transaction) and what the thread
does while idle.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

Call = tuple[Callable[..., Any], tuple[Any, ...], "asyncio.Future[Any]"]
# (future, ok, value): value is the result, or the exception when not ok
Outcome = tuple["asyncio.Future[Any]", bool, Any]


class NotOpen(RuntimeError):
    def __init__(self) -> None:
        super().__init__("storage is not open")


class Worker:
    role = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cond = threading.Condition(threading.Lock())
        self._queue: list[Call] = []
        self._accepting = False
        self._closing = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._started: asyncio.Future[None] | None = None
        self._stopped: asyncio.Future[None] | None = None
        self._thread: threading.Thread | None = None

    # in the thread: what subclasses provide --------------------------------------------------
    def connect(self) -> sqlite3.Connection:
        raise NotImplementedError

    def run_batch(self, db: sqlite3.Connection, batch: list[Call]) -> list[Outcome]:
        raise NotImplementedError

    def idle_timeout(self) -> float | None:
        """How long the thread may sleep with nothing queued (None: until woken)."""
        return None

    def housekeeping(self, db: sqlite3.Connection, idle: bool) -> None:
        """Called after each batch and after each wake-up with nothing queued; `idle`: no
        calls are waiting."""

    def before_close(self, db: sqlite3.Connection) -> None:
        """Called once the queue is drained at close, before the connection closes."""

    # the event loop's side ------------------------------------------------------------------
    async def start(self) -> None:
        """Start the thread and wait until its connection is ready; re-raise its failure
        (the thread has ended by then)."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._started = loop.create_future()
        self._stopped = loop.create_future()
        self._thread = threading.Thread(
            target=self._main, name=f"quizbot-{self.role}", daemon=True
        )
        self._thread.start()
        try:
            await self._started
        except BaseException:
            # Its connection failed (the thread is returning), or this start was cancelled
            # (the thread may be serving): either way tell it to stop before joining, or the
            # join would wait for ever with the event loop blocked.
            with self._cond:
                self._accepting = False
                self._closing = True
                self._cond.notify()
            self._thread.join()
            self._thread = None
            raise
        with self._cond:
            self._accepting = True

    def submit(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Queue `fn(connection, *args)`; the future resolves once the thread ran it (for the
        writer: once its transaction committed)."""
        loop = self._loop
        if loop is None:
            raise NotOpen()
        future: asyncio.Future[T] = loop.create_future()
        with self._cond:
            if not self._accepting:
                raise NotOpen()
            self._queue.append((fn, args, future))
            if len(self._queue) == 1:
                self._cond.notify()
        return future

    def wake(self) -> None:
        """Make the thread look at its housekeeping now."""
        with self._cond:
            self._cond.notify()

    async def close(self) -> None:
        """Stop taking calls, let the thread run what is queued, then end it."""
        with self._cond:
            self._accepting = False
            self._closing = True
            self._cond.notify()
        if self._thread is not None and self._stopped is not None:
            await self._stopped
            self._thread.join()
            self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # the thread -----------------------------------------------------------------------------
    def _post(self, fn: Callable[..., Any], *args: Any) -> None:
        assert self._loop is not None
        try:
            self._loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            log.debug("%s: event loop closed, result dropped", self.role)

    def _main(self) -> None:
        assert self._started is not None and self._stopped is not None
        try:
            db = self.connect()
        except BaseException as exc:
            self._post(_settle, [(self._started, False, exc)])
            return
        self._post(_settle, [(self._started, True, None)])
        try:
            self._serve(db)
        except BaseException:
            log.exception("%s thread failed", self.role)
            raise
        finally:
            with self._cond:
                self._accepting = False
                left, self._queue = self._queue, []
            if left:  # only after a crash of the loop above: never leave a caller waiting
                self._post(_settle, [(f, False, NotOpen()) for _, _, f in left])
            try:
                db.close()
            finally:
                self._post(_settle, [(self._stopped, True, None)])

    def _serve(self, db: sqlite3.Connection) -> None:
        cond = self._cond
        while True:
            with cond:
                if not self._queue and not self._closing:
                    cond.wait(self.idle_timeout())
                batch, self._queue = self._queue, []
                closing = self._closing
            if batch:
                self._post(_settle, self.run_batch(db, batch))
                self.housekeeping(db, idle=not self._queue)  # more writes waiting: busy
            elif closing:
                self.before_close(db)
                return
            else:
                self.housekeeping(db, idle=True)


def _settle(outcomes: list[Outcome]) -> None:
    """On the event loop: resolve a whole batch (a caller may have given up: skip it)."""
    for future, ok, value in outcomes:
        if future.done():
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
