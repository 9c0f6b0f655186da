"""Fetching updates from Telegram ourselves, so that an update is confirmed only once handled.

`getUpdates` with `offset=N` confirms every update below N, and Telegram never sends a
confirmed update again. PTB's Updater asks for the next batch (confirming the previous one)
while that batch's handlers may still be running, so a crash at that moment loses them for
good. Here:

1. getUpdates returns a batch as raw JSON; each update is parsed on its own, so one that the
   library cannot read (a poison update) is skipped once, logged at WARNING with its id and
   kind, and confirmed with the rest instead of being fetched again forever.
2. The batch is handled concurrently (`Application.process_update`, error handlers
   included), so its answers share the database's group commits.
3. Only then is getUpdates called again, with offset = the last id + 1.

An update whose handling met a storage that cannot be used now (updates.Outcome.UNSTORED: a
connection lost, a full disk, a read-only file system) is not confirmed: the offset stays at
the first such update, so Telegram keeps it and what came after it, and the loop asks for
them again after a pause that grows with the outage (StorageBackoff; one WARNING when an
outage starts, one INFO when it ends). Those held back are handled again; those handled
beside them are skipped as handled. Any other failure is confirmed (logged at ERROR and
apologised for): holding it back would hold back every later update with it.

A handler that is slow (a flood wait in one chat) does not stop the other chats: after
SLOW_BATCH seconds the loop fetches again with the offset of the oldest update still being
handled, so nothing unhandled is confirmed; the updates Telegram sends again that are already
running or done are skipped, and new ones are handled. Handlers are idempotent anyway (answers
are final in the database, commands and presses are remembered), so an update handled again
after a crash changes nothing.

Several processes on one database (compose.yaml) elect one poller through a lease
(core/leadership.py): the others wait, and one takes over once the leader stops renewing it (a
kill -9: within LEASE + RETRY, 9 s). A getUpdates is started only if it ends, on Telegram's
side, LEAD_MARGIN before the lease could run out, so two of them never overlap; a leader that
lost its lease (the storage was away) stops fetching, lets its handlers finish and confirms
nothing more (the new leader does).

A failed getUpdates (the network, a flood wait, Telegram's 5xx) is retried with backoff. A
409 Conflict is another getUpdates, or a webhook, with the same token: explained when this
process no longer leads (it waits again); otherwise it is a program the election does not
know, and the loop ends at once with `failed` naming the cause (`quizbot run` exits 5), rather
than the two of them taking turns for ever. A token Telegram rejects (revoked) ends the loop
too. Stopping stops fetching, lets the handlers in progress finish (within STOP_WITHIN),
confirms what they handled, hands the lease over, and returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Sequence
from typing import Any

from telegram import Update
from telegram.error import (
    Conflict,
    EndPointNotFound,
    InvalidToken,
    RetryAfter,
    TelegramError,
    TimedOut,
)

from bot.adapters import ConnectionLost
from bot.adapters.telegram import updates
from bot.adapters.telegram.context import TelegramApp
from bot.adapters.telegram.updates import update_kind
from bot.core.leadership import RETRY, Leadership

log = logging.getLogger(__name__)

LONG_POLL = 10  # seconds Telegram holds getUpdates open when there is nothing to send
READ_SLACK = 5.0  # seconds on top of the long poll before the request counts as timed out
LIMIT = 100  # updates per getUpdates, Telegram's maximum
SLOW_BATCH = 0.5  # seconds; after this, fetch new updates beside the slow ones
STOP_WITHIN = 6.0  # seconds the handlers in progress get to finish (within app.STOP_BUDGET)
FIRST_BACKOFF = 1.0  # seconds before the first retry of a failed getUpdates
MAX_BACKOFF = 30.0  # seconds between getUpdates attempts while Telegram cannot be reached
STORAGE_FIRST_BACKOFF = 0.5  # seconds before updates the storage failed are asked for again
STORAGE_MAX_BACKOFF = 30.0  # seconds between those attempts in a long outage
LEAD_MARGIN = 1.5  # seconds a getUpdates must end before this process's lease may run out
LEASE_NAME = "telegram-polling"


def conflict_line(exc: Conflict) -> str:
    return (f"Telegram answered getUpdates with 409 Conflict ({exc.message}): another program "
            "polls Telegram with this TELEGRAM_BOT_TOKEN (or set a webhook for it) outside "
            "this database's processes; stop it or give this bot its own token")


class StorageBackoff:
    """The pause before updates held back by a storage failure are tried again: doubling
    from `first` up to `most`, back to `first` once they were stored."""

    def __init__(self, first: float = STORAGE_FIRST_BACKOFF,
                 most: float = STORAGE_MAX_BACKOFF) -> None:
        self.first = first
        self.most = most
        self.attempts = 0  # pauses in the current outage

    def next(self) -> float:
        delay = min(self.most, self.first * 2.0 ** self.attempts)
        self.attempts += 1
        return delay

    def reset(self) -> None:
        self.attempts = 0


class Poller:
    """The getUpdates loop of one Application (which has no Updater)."""

    def __init__(
        self, app: TelegramApp, allowed_updates: Sequence[str], *, long_poll: int = LONG_POLL,
        leader: Leadership | None = None,
    ) -> None:
        self.app = app
        self.leader = leader  # None: poll without asking (a single process)
        self._conflict = False  # a foreign poller: confirm nothing more
        self.allowed_updates = list(allowed_updates)
        self.long_poll = long_poll
        self._next = 0  # the id after the last update seen; 0: none seen yet
        self._confirmed = 0  # the offset Telegram was last sent
        self._running: dict[int, asyncio.Task[None]] = {}  # update id -> its handling
        self._held: set[int] = set()  # ids not stored for a storage failure: asked for again
        self.storage_backoff = StorageBackoff()
        self._outage_since: float | None = None  # loop time the current outage was noticed
        self._outage: set[int] = set()  # ids it held back
        self._unstored: set[int] = set()  # of those, the ones not handled since
        self._stopping = asyncio.Event()
        self._fetch: asyncio.Task[list[Any] | None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self.poison = 0  # updates skipped because they could not be read
        # set once polling can never work again (the token was rejected): why
        self.failed: asyncio.Future[BaseException] = asyncio.get_running_loop().create_future()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        self._stopping.clear()
        self._task = asyncio.create_task(self._loop(), name="telegram-polling")

    async def stop(self) -> None:
        """Stop fetching, let the handlers in progress finish, confirm what was handled."""
        if self._task is None:
            return
        self._stopping.set()
        if self._fetch is not None:
            self._fetch.cancel()  # a long poll: what it would bring is not confirmed
        try:
            await self._task
        finally:
            self._task = None
            if self.leader is not None:
                await self.leader.release()

    async def idle(self) -> None:
        """Until no update is being handled (for tests: everything fetched was handled)."""
        await self._idle.wait()

    # the loop ----------------------------------------------------------------------------
    async def _loop(self) -> None:
        failures = 0
        while not self._stopping.is_set():
            wait = self.long_poll
            if self.leader is not None:
                window = await self._leading()
                if window is None:
                    break
                wait = min(wait, int(window))
            # nothing at or above the oldest update still being handled, or held back, is
            # confirmed
            offset = self._floor()
            busy = bool(self._running or self._held)
            self._fetch = asyncio.create_task(self._get_updates(offset, 0 if busy else wait))
            fetch = self._fetch
            try:
                await asyncio.wait([fetch])
            except asyncio.CancelledError:  # the loop itself was cancelled
                fetch.cancel()
                raise
            finally:
                self._fetch = None
            if fetch.cancelled():
                break
            if (error := fetch.exception()) is not None:
                if isinstance(error, (InvalidToken, EndPointNotFound)):
                    # 401/404 for getUpdates itself: the token was revoked
                    log.info("Telegram rejected the bot token (revoked?); polling stopped")
                    if not self.failed.done():
                        self.failed.set_result(error)
                    break
                if isinstance(error, Conflict):
                    if not await self._claim(check=True):
                        log.info("another process took over polling Telegram: %s",
                                 error.message)
                        continue
                    self._conflict = True
                    if not self.failed.done():
                        self.failed.set_result(ConnectionLost(conflict_line(error)))
                    break
                failures += 1
                await self._pause(self._backoff(error, failures))
                continue
            failures = 0
            self._confirmed = max(self._confirmed, offset)
            batch = fetch.result() or []
            self._forget_gone(batch)
            self._handle(batch)
            if self._running:
                # the batch finishes first; a slow handler only delays the next fetch a bit
                await asyncio.wait(list(self._running.values()), timeout=SLOW_BATCH)
            if self._held:
                await self._pause(self.storage_backoff.next())
        await self._finish()

    async def _leading(self) -> float | None:
        """Once this process leads: the seconds a getUpdates may last on Telegram's side before
        the lease could run out. None: stopping first."""
        while not self._stopping.is_set():
            if await self._claim():
                window = self._left() - LEAD_MARGIN
                if window >= 0:
                    return window
            await self._pause(RETRY)
        return None

    async def _claim(self, *, check: bool = False) -> bool:
        if self.leader is None:
            return True
        try:
            return await self.leader.claim(check=check)
        except Exception:  # a bug must not end polling for good: the next try may work
            log.exception("asking the database who polls Telegram failed")
            return self.leader.leading

    def _left(self) -> float:
        return float("inf") if self.leader is None else self.leader.left()

    def _floor(self) -> int:
        """The offset to send: the oldest update being handled or held back, else the next."""
        pending = self._running.keys() | self._held
        return min(pending) if pending else self._next

    def _forget_gone(self, batch: list[Any]) -> None:
        """Held-back updates that Telegram no longer sends (it keeps them for a day) are
        given up, so the offset can move on."""
        if not self._held:
            return
        ids = [u.get("update_id") for u in batch if isinstance(u, dict)]
        first = min((i for i in ids if isinstance(i, int)), default=self._next)
        gone = {i for i in self._held if i < first}
        if gone:
            log.warning("%d update(s) held back for the storage are no longer at Telegram; "
                        "given up", len(gone))
            self._held -= gone
            self._unstored -= gone
            self._outage_over()

    async def _get_updates(self, offset: int, wait: int) -> list[Any] | None:
        """One getUpdates: confirms every update below `offset`, holds the request open up
        to `wait` seconds when there is nothing new."""
        api_kwargs: dict[str, Any] = {
            "timeout": wait, "limit": LIMIT, "allowed_updates": self.allowed_updates,
        }
        if offset:
            api_kwargs["offset"] = offset
        # not Bot.get_updates: it parses the whole batch at once, so one unreadable update
        # would fail all of them, again and again (see app.quiet_library_deprecations)
        result = await self.app.bot.do_api_request(
            "getUpdates", api_kwargs=api_kwargs, read_timeout=wait + READ_SLACK
        )
        return result if isinstance(result, list) else None

    def _backoff(self, exc: BaseException | None, failures: int) -> float:
        if isinstance(exc, RetryAfter):
            wait = exc.retry_after
            seconds = wait.total_seconds() if hasattr(wait, "total_seconds") else float(wait)
            log.warning("Telegram asks to wait %.0f s before polling again", seconds)
            return seconds + 0.5
        if isinstance(exc, TimedOut) and failures == 1:
            log.debug("getUpdates timed out; asking again")
            return 0.0
        delay = min(MAX_BACKOFF, FIRST_BACKOFF * 1.5 ** (failures - 1))
        if isinstance(exc, TelegramError):
            log.warning("polling Telegram for updates failed: %s; again in %.1f s", exc, delay)
        else:
            log.error("polling Telegram for updates failed; again in %.1f s", delay,
                      exc_info=exc)
        return delay

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)

    def _handle(self, batch: list[Any]) -> None:
        """Start handling every update of the batch not seen before."""
        for raw in batch:
            update_id = raw.get("update_id") if isinstance(raw, dict) else None
            if not isinstance(update_id, int):
                log.warning("skipped an update with no id (%s)", update_kind(raw))
                continue
            if update_id < self._next and update_id not in self._held:
                continue  # being handled, or handled: sent again while a slow one runs
            self._held.discard(update_id)  # handled again: running keeps the offset below it
            self._next = max(self._next, update_id + 1)
            update = updates.read(raw, self.app.bot)
            if update is None:
                self.poison += 1
                continue
            task = asyncio.create_task(self._process(update), name=f"telegram-update-{update_id}")
            self._running[update_id] = task
            self._idle.clear()
            task.add_done_callback(functools.partial(self._done, update_id))

    async def _process(self, update: Update) -> None:
        # error handlers included. A failed update is confirmed too (handled, and told so);
        # one the storage could not take is held back
        outcome = await updates.handle(self.app, update)
        if outcome in updates.POLLING_CONFIRMS:
            if update.update_id in self._unstored:
                self._unstored.discard(update.update_id)
                self._outage_over()
            return
        self._held.add(update.update_id)
        self._unstored.add(update.update_id)
        self._outage.add(update.update_id)
        if self._outage_since is None:
            self._outage_since = asyncio.get_running_loop().time()
            log.warning("the storage cannot be used now; updates from %d on stay with "
                        "Telegram and are asked for again until they are stored",
                        update.update_id)

    def _outage_over(self) -> None:
        """Once every update the outage held back was handled: one line, and the next
        outage starts its backoff afresh."""
        if self._outage_since is None or self._unstored:
            return
        seconds = asyncio.get_running_loop().time() - self._outage_since
        log.info("the storage is back: %d update(s) held back for %.1f s were handled "
                 "again", len(self._outage), seconds)
        self._outage_since = None
        self._outage.clear()
        self.storage_backoff.reset()

    def _done(self, update_id: int, _task: asyncio.Task[None]) -> None:
        self._running.pop(update_id, None)
        if not self._running:
            self._idle.set()

    async def _finish(self) -> None:
        if self._running:
            pending = list(self._running.values())
            _done, late = await asyncio.wait(pending, timeout=STOP_WITHIN)
            if late:
                log.warning("%d update(s) still being handled after %.0f s; Telegram sends "
                            "them again at the next start", len(late), STOP_WITHIN)
                # cancelled, not left running: past this the library shuts down, and a
                # handler still running would fail on it (they are not confirmed, so they
                # come again; a cancelled write either committed or did not, and the
                # exactly-once keys make the second delivery find it)
                for task in late:
                    task.cancel()
                await asyncio.wait(late, timeout=1.0)
                return
        if self._conflict or self._left() <= LEAD_MARGIN:
            return  # the next leader confirms them (a getUpdates now would overlap with it)
        if self._floor() > self._confirmed:
            # confirm what was handled, as PTB's Updater does when it stops (never what is
            # held back: it comes again at the next start)
            try:
                await self._get_updates_once(self._floor())
            except Exception as exc:  # sent again at the next start, and handled again
                log.info("could not confirm the last updates: %s", exc)

    async def _get_updates_once(self, offset: int) -> None:
        await self.app.bot.do_api_request(
            "getUpdates", api_kwargs={"offset": offset, "limit": 1, "timeout": 0},
            read_timeout=READ_SLACK,
        )
        self._confirmed = offset
