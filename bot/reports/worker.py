"""Drawing in a process of its own, so what drawing loads does not stay in the bot's, and a
drawing that runs too long cannot hold the bot up.

A question card imports Pillow, ziamath (with latex2mathml and cairosvg) and Pygments and
loads fonts: about 45 MB that a process keeps for good once it drew one card. `DrawingProcess` runs
a drawing function in one child process (spawned: it inherits neither the bot's threads nor
its memory), started at the first drawing and ended once IDLE seconds pass without one, which
gives that memory back. The bot keeps only the bytes of the PNG.

Each drawing has LIMIT seconds: past them the child is killed and the caller gets
`DrawingTimedOut` (the next drawing starts another child); one that `close()` interrupts gets
`DrawingStopped`. Both are TimeoutErrors: the drawing ran out of time, nothing is broken.
The limit counts from the child's receipt of the job, once what it needs is imported (a new
child's start, about a second, has STARTUP seconds of its own), and is below the 6 s a
stopping bot gives its handlers in flight (telegram/polling.py's STOP_WITHIN): a handler
waiting for a drawing still sends its question, without the picture, before the bot exits.

The child ends with the bot: it watches a pipe whose other end only the bot holds, so when
the bot exits, however it ends (SIGTERM, SIGKILL, a crash), the pipe closes and the child
exits at once, also in the middle of a drawing; `close()` kills it without waiting for a
drawing to finish.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # imported by the first drawing (a bot that draws nothing never does)
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

T = TypeVar("T")

IDLE = 60.0  # seconds without a drawing before the child process ends
LIMIT = 5.0  # seconds a drawing may take (a card takes tens of milliseconds)
STARTUP = 30.0  # seconds for a child to start and import what a drawing needs


class DrawingStopped(TimeoutError):
    """A drawing stopped before it finished: the bot is stopping (close())."""


class DrawingTimedOut(DrawingStopped):
    """A drawing ran past its time limit; its child process was killed."""


def _watch_parent(alive: Connection) -> None:
    """Exit as soon as the bot's end of `alive` closes (the bot is gone)."""
    try:
        alive.recv()
    except (EOFError, OSError):
        pass
    os._exit(1)


def _child(jobs: Connection, alive: Connection) -> None:
    """The child's loop: run each (fn, args) received, send back (ok, result or error)."""
    # the child ends with the bot (the watch above), not on the terminal's Ctrl-C that
    # reaches the whole process group
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(alive,), daemon=True).start()
    while True:
        try:
            job = jobs.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        fn, args = job  # unpickled: the drawing's modules are imported
        jobs.send((True, _STARTED))
        try:
            reply: tuple[bool, Any] = (True, fn(*args))
        except BaseException as exc:  # sent to the caller, who raises it
            reply = (False, exc)
        try:
            jobs.send(reply)
        except Exception as exc:  # an unpicklable result or error
            jobs.send((False, RuntimeError(f"drawing result not sendable: {exc!r}")))


_STARTED = "started"  # the child's receipt of a job, before it runs it


class _Child:
    """One spawned child process and the bot's ends of its two pipes."""

    def __init__(self) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self.jobs, child_jobs = context.Pipe()
        child_alive, self.alive = context.Pipe(duplex=False)
        self.process: BaseProcess = context.Process(
            target=_child, args=(child_jobs, child_alive), name="quizbot-drawing", daemon=True)
        self.process.start()
        self.closed = False  # by close(): a drawing it interrupts is stopped, not broken
        # only the child holds these ends now: its death closes `jobs`, ours closes `alive`
        child_jobs.close()
        child_alive.close()

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def kill(self, *, drawing: bool = False) -> None:
        """Kill the child now. `drawing`: another thread waits on `jobs` (the child's death
        wakes it, and it closes them)."""
        self.alive.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        if not drawing:
            self.jobs.close()


class DrawingProcess:
    """Runs `fn(*args)` in the child process, blocking the calling thread (the core draws in
    worker threads, never on the event loop) for `limit` seconds at most. Thread-safe; one
    drawing at a time."""

    def __init__(self, idle: float = IDLE, limit: float = LIMIT) -> None:
        self.idle = idle
        self.limit = limit
        self.started = 0  # child processes started so far
        self.timed_out = 0  # drawings stopped at the limit
        self._run_lock = threading.Lock()  # one drawing at a time
        self._lock = threading.Lock()  # the child and the timer
        self._child: _Child | None = None
        self._timer: threading.Timer | None = None

    def run(self, fn: Callable[..., T], *args: object) -> T:
        with self._run_lock:
            with self._lock:
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None
                if self._child is None:
                    self._child = _Child()
                    self.started += 1
                child = self._child
            try:
                return self._run_in(child, fn, args)
            finally:
                with self._lock:
                    if self._child is child:
                        self._timer = threading.Timer(self.idle, self._end_if_idle, (child,))
                        self._timer.daemon = True
                        self._timer.start()

    def _run_in(self, child: _Child, fn: Callable[..., T], args: tuple[object, ...]) -> T:
        try:
            child.jobs.send((fn, args))
            started = child.jobs.recv() if child.jobs.poll(STARTUP) else None
            ready = started is not None and child.jobs.poll(self.limit)
            reply = child.jobs.recv() if ready else None
        except (EOFError, OSError):
            # the child died (killed, out of memory, closed): the next drawing starts another
            self._forget(child)
            if child.closed:
                raise DrawingStopped("the drawing process was closed during a drawing") from None
            raise BrokenProcessPool("the drawing process ended during a drawing") from None
        if reply is None:
            self.timed_out += 1
            self._forget(child)
            raise DrawingTimedOut(
                f"{getattr(fn, '__name__', 'a drawing')} ran over {self.limit:g} s; stopped")
        ok, value = reply
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    def _forget(self, child: _Child) -> None:
        with self._lock:
            if self._child is child:
                self._child = None
        child.kill()

    def _end_if_idle(self, child: _Child) -> None:
        if not self._run_lock.acquire(blocking=False):
            return  # a drawing started meanwhile; it sets the next timer
        try:
            with self._lock:
                if self._child is not child:
                    return
                self._child = None
                self._timer = None
            child.kill()
        finally:
            self._run_lock.release()

    @property
    def running(self) -> bool:
        with self._lock:
            return self._child is not None

    @property
    def pid(self) -> int | None:
        """The child's process id, None when there is none."""
        with self._lock:
            return None if self._child is None else self._child.pid

    def close(self) -> None:
        """End the child process now, also in the middle of a drawing (which then raises
        DrawingStopped); a later drawing starts another."""
        with self._lock:
            child, self._child = self._child, None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if child is None:
            return
        child.closed = True
        idle = self._run_lock.acquire(blocking=False)
        try:
            child.kill(drawing=not idle)
        finally:
            if idle:
                self._run_lock.release()
